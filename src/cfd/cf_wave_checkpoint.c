/* Checkpoints of a wave run (cf_wave_checkpoint.h). Rank 0 writes the
 * series every rank holds alike (energies, amplitudes); each rank its slice
 * of the fields and of the receivers' traces. */
#include "cf_wave_checkpoint.h"

#include <stdlib.h>

#include "cf_checkpoint.h"
#include "wf_checkpoint.h"

enum { MAXVARS = 7 };

typedef struct vars {
  wf_ckpt_var v[MAXVARS];
  int n;
  double *packed; /* cur, then prev */
  double block[4];
  double nenergy; /* on rank 0 */
} vars;

/* A series rank 0 holds for every rank: the whole of it on rank 0. */
static wf_ckpt_var series_var(const char *name, double *data, unsigned long long n, int rank) {
  return (wf_ckpt_var){.name = name,
                       .type = WF_F64,
                       .data = data,
                       .global_n = n,
                       .offset = 0,
                       .count = rank == 0 ? n : 0};
}

/* The variables of the state after `step` steps and `nenergy` energies;
 * `header` alone: the blocks and the energies' count (what a restart reads
 * first). */
static int vars_make(vars *s, const cf_wave_state *w, MPI_Comm comm, int step, int nenergy,
                     bool header, wf_status *st) {
  const st_mesh *m = w->m;
  int rank;
  MPI_Comm_rank(comm, &rank);
  *s = (vars){.nenergy = nenergy};
  s->v[s->n++] = cf_ckpt_blocks_var(m, comm, s->block);
  s->v[s->n++] = series_var("energies", &s->nenergy, 1, rank);
  if (header) return WF_OK;
  unsigned long long first = cf_ckpt_first_cell(m, comm);
  s->packed = malloc(2 * (m->n_owned ? m->n_owned : 1) * sizeof *s->packed);
  int failed = !s->packed;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    free(s->packed);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the checkpoint");
  }
  s->v[s->n++] = cf_ckpt_field_var(m, "u", s->packed, first);
  s->v[s->n++] = cf_ckpt_field_var(m, "u_prev", s->packed + m->n_owned, first);
  if (nenergy > 0) s->v[s->n++] = series_var("energy", w->energy, 2ull * nenergy, rank);
  if (w->amplitude) s->v[s->n++] = series_var("amplitude", w->amplitude, step + 1ull, rank);
  unsigned long long mine = w->trace ? (unsigned long long)step * w->trace_cols : 0, all = 0,
                     before = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  MPI_Exscan(&mine, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  if (all > 0)
    s->v[s->n++] = (wf_ckpt_var){.name = "traces",
                                 .type = WF_F64,
                                 .data = w->trace,
                                 .global_n = all,
                                 .offset = rank == 0 ? 0 : before,
                                 .count = mine};
  return WF_OK;
}

int cf_wave_checkpoint_write(const cf_wave_state *w, MPI_Comm comm, const char *path,
                             const char *state, int step, wf_status *st) {
  vars s;
  if (vars_make(&s, w, comm, step, w->nenergy, false, st) != WF_OK) return st->code;
  cf_ckpt_pack(w->m, w->cur, s.packed);
  cf_ckpt_pack(w->m, w->prev, s.packed + w->m->n_owned);
  int rc = wf_checkpoint_write(comm, path, step, state, s.v, s.n, st);
  free(s.packed);
  return rc;
}

/* The step and the energies' count from the checkpoint's header, checked
 * against the room the run has. Collective. */
static int read_header(cf_wave_state *w, MPI_Comm comm, const char *path, int *step,
                       wf_status *st) {
  vars s;
  vars_make(&s, w, comm, 0, 0, true, st);
  double mine[4] = {s.block[0], s.block[1], s.block[2], s.block[3]};
  long long n = 0;
  if (wf_checkpoint_read(comm, path, &n, s.v, s.n, st) != WF_OK ||
      cf_ckpt_check_blocks(comm, path, mine, s.block, st) != WF_OK)
    return st->code;
  MPI_Bcast(&s.nenergy, 1, MPI_DOUBLE, 0, comm);
  if (n < 0 || n > w->max_steps)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is at step %lld: more than this run's %d steps", path, n,
                   w->max_steps);
  /* The energies of steps 0, every, ... before step n: what the rest of
   * the run appends then fits the room it has. */
  long long expected = n == 0 ? 0 : (n - 1) / w->energy_every + 1;
  if (s.nenergy != (double)expected || expected > w->max_energy)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' holds %.0f energies, not the %lld of its %lld steps (one every "
                   "%d): a damaged file",
                   path, s.nenergy, expected, n, w->energy_every);
  *step = (int)n;
  w->nenergy = (int)s.nenergy;
  return WF_OK;
}

int cf_wave_checkpoint_read(cf_wave_state *w, MPI_Comm comm, const char *path, int *step,
                            wf_status *st) {
  /* The rank count first: other blocks make every dataset's slices wrong. */
  if (cf_ckpt_check_ranks(comm, path, st) != WF_OK || read_header(w, comm, path, step, st) != WF_OK)
    return st->code;
  vars s;
  if (vars_make(&s, w, comm, *step, w->nenergy, false, st) != WF_OK) return st->code;
  long long n;
  int rc = wf_checkpoint_read(comm, path, &n, s.v, s.n, st);
  if (rc == WF_OK) {
    cf_ckpt_unpack(w->m, s.packed, w->cur);
    cf_ckpt_unpack(w->m, s.packed + w->m->n_owned, w->prev);
    MPI_Bcast(w->energy, 2 * w->nenergy, MPI_DOUBLE, 0, comm);
    if (w->amplitude) MPI_Bcast(w->amplitude, *step + 1, MPI_DOUBLE, 0, comm);
  }
  free(s.packed);
  return rc;
}
