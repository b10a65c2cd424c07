/* Checkpoints of a convection run (cf_rb_checkpoint.h): the state and each
 * stage's last pressure correction (the next solves start from it, so a
 * restart continues bit for bit), the time, and the ranks' blocks. */
#include "cf_rb_checkpoint.h"

#include <stdlib.h>

#include "cf_checkpoint.h"
#include "wf_checkpoint.h"

enum { NPACKED = CF_NFIELDS + 3 }; /* u, v, w, T, phi of each stage */

static const char *const names[NPACKED] = {"u", "v", "w", "T", "phi0", "phi1", "phi2"};

static double *field_of(cf_rb *rb, int a) {
  return a < CF_NFIELDS ? rb->f[a] : rb->phi[a - CF_NFIELDS];
}

/* The variables: the packed fields (each rank's block after the lower
 * ranks'), the time (on rank 0), each rank's block. */
typedef struct vars {
  wf_ckpt_var v[NPACKED + 2];
  double *packed;
  double block[4];
} vars;

static int vars_make(vars *s, const cf_rb *rb, MPI_Comm comm, double *t, wf_status *st) {
  const st_mesh *m = rb->m;
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned long long first = cf_ckpt_first_cell(m, comm);
  s->packed = malloc((size_t)NPACKED * (m->n_owned ? m->n_owned : 1) * sizeof *s->packed);
  int failed = !s->packed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    free(s->packed);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the checkpoint");
  }
  for (int a = 0; a < NPACKED; a++)
    s->v[a] = cf_ckpt_field_var(m, names[a], s->packed + (size_t)a * m->n_owned, first);
  s->v[NPACKED] = (wf_ckpt_var){"time", WF_F64, t, 1, 0, rank == 0 ? 1 : 0};
  s->v[NPACKED + 1] = cf_ckpt_blocks_var(m, comm, s->block);
  return WF_OK;
}

int cf_rb_checkpoint_write(cf_rb *rb, MPI_Comm comm, const char *path, const char *state,
                           long long step, double t, const wf_ckpt_var *extra, int nextra,
                           wf_status *st) {
  vars s;
  if (vars_make(&s, rb, comm, &t, st) != WF_OK) return st->code;
  for (int a = 0; a < NPACKED; a++) cf_ckpt_pack(rb->m, field_of(rb, a), s.v[a].data);
  int rc = wf_checkpoint_write_more(comm, path, step, state, s.v, NPACKED + 2, extra, nextra, st);
  free(s.packed);
  return rc;
}

int cf_rb_checkpoint_read(cf_rb *rb, MPI_Comm comm, const char *path, long long *step, double *t,
                          wf_status *st) {
  /* The rank count first: other blocks make every dataset's slices wrong. */
  if (cf_ckpt_check_ranks(comm, path, st) != WF_OK) return st->code;
  vars s;
  if (vars_make(&s, rb, comm, t, st) != WF_OK) return st->code;
  double mine[4] = {s.block[0], s.block[1], s.block[2], s.block[3]};
  int rc = wf_checkpoint_read(comm, path, step, s.v, NPACKED + 2, st);
  if (rc == WF_OK) rc = cf_ckpt_check_blocks(comm, path, mine, s.block, st);
  if (rc == WF_OK) {
    for (int a = 0; a < NPACKED; a++) cf_ckpt_unpack(rb->m, s.v[a].data, field_of(rb, a));
    MPI_Bcast(t, 1, MPI_DOUBLE, 0, comm);
  }
  free(s.packed);
  return rc;
}
