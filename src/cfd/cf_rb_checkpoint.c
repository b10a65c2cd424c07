/* Checkpoints of a convection run (cf_rb_checkpoint.h): the state and each
 * stage's last pressure correction (the next solves start from it, so a
 * restart continues bit for bit), the time, and the ranks' blocks. */
#include "cf_rb_checkpoint.h"

#include <stdlib.h>
#include <string.h>

#include "wf_checkpoint.h"
#include "wf_h5.h"
#include "wf_io.h"

enum { NPACKED = CF_NFIELDS + 3 }; /* u, v, w, T, phi of each stage */

static const char *const names[NPACKED] = {"u", "v", "w", "T", "phi0", "phi1", "phi2"};

static double *field_of(cf_rb *rb, int a) {
  return a < CF_NFIELDS ? rb->f[a] : rb->phi[a - CF_NFIELDS];
}

/* Owned cells of a field in, or out of, a packed buffer (row by row). */
static void pack(const st_mesh *m, const double *f, double *out) {
  for (int j = 0; j < m->lny; j++)
    memcpy(out + (size_t)j * st_row_len(m), f + st_row(m, j), st_row_len(m) * sizeof *out);
}
static void unpack(const st_mesh *m, const double *in, double *f) {
  for (int j = 0; j < m->lny; j++)
    memcpy(f + st_row(m, j), in + (size_t)j * st_row_len(m), st_row_len(m) * sizeof *in);
}

/* The variables: the packed fields (each rank's block after the lower
 * ranks'), the time (on rank 0), each rank's block (x0, lnx, y0, lny). */
typedef struct vars {
  wf_ckpt_var v[NPACKED + 2];
  double *packed;
  double block[4]; /* x0, lnx, y0, lny: doubles, so that wf_h5_input can size the dataset */
} vars;

static int vars_make(vars *s, const cf_rb *rb, MPI_Comm comm, double *t, wf_status *st) {
  const st_mesh *m = rb->m;
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  unsigned long long mine = m->n_owned, first = 0;
  MPI_Exscan(&mine, &first, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  if (rank == 0) first = 0;
  s->packed = malloc((size_t)NPACKED * (mine ? mine : 1) * sizeof *s->packed);
  int failed = !s->packed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    free(s->packed);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the checkpoint");
  }
  for (int a = 0; a < NPACKED; a++)
    s->v[a] = (wf_ckpt_var){
        names[a], WF_F64, s->packed + (size_t)a * mine, (unsigned long long)m->n_global,
        first,    mine};
  s->v[NPACKED] = (wf_ckpt_var){"time", WF_F64, t, 1, 0, rank == 0 ? 1 : 0};
  s->block[0] = m->x0, s->block[1] = m->lnx, s->block[2] = m->y0, s->block[3] = m->lny;
  s->v[NPACKED + 1] = (wf_ckpt_var){"blocks",
                                    WF_F64,
                                    s->block,
                                    4ull * (unsigned long long)nranks,
                                    4ull * (unsigned long long)rank,
                                    4};
  return WF_OK;
}

int cf_rb_checkpoint_write(cf_rb *rb, MPI_Comm comm, const char *path, long long step, double t,
                           wf_status *st) {
  vars s;
  if (vars_make(&s, rb, comm, &t, st) != WF_OK) return st->code;
  for (int a = 0; a < NPACKED; a++) pack(rb->m, field_of(rb, a), s.v[a].data);
  int rc = wf_checkpoint_write(comm, path, step, s.v, NPACKED + 2, st);
  free(s.packed);
  return rc;
}

int cf_rb_checkpoint_read(cf_rb *rb, MPI_Comm comm, const char *path, long long *step, double *t,
                          wf_status *st) {
  /* The rank count first: other blocks make every dataset's slices wrong. */
  wf_h5_input in;
  int nranks;
  MPI_Comm_size(comm, &nranks);
  if (wf_h5_input_open(comm, path, "blocks", &in, st) != WF_OK)
    return wf_wrap(st, "checkpoint '%s'", path);
  if (in.ndim != 1 || in.dims[0] != 4ull * (unsigned long long)nranks)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' was written by %llu ranks, not %d: restart with the same "
                   "ranks, rank grid and PE grid",
                   path, in.dims[0] / 4, nranks);
  vars s;
  if (vars_make(&s, rb, comm, t, st) != WF_OK) return st->code;
  double mine[4] = {s.block[0], s.block[1], s.block[2], s.block[3]};
  int rc = wf_checkpoint_read(comm, path, step, s.v, NPACKED + 2, st);
  if (rc == WF_OK) {
    int moved = memcmp(mine, s.block, sizeof mine) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_MAX, comm);
    if (moved)
      rc = wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' was written with other rank blocks: restart with the same "
                   "ranks, rank grid and PE grid",
                   path);
  }
  if (rc == WF_OK) {
    for (int a = 0; a < NPACKED; a++) unpack(rb->m, s.v[a].data, field_of(rb, a));
    MPI_Bcast(t, 1, MPI_DOUBLE, 0, comm);
  }
  free(s.packed);
  return rc;
}
