/* What the cfd checkpoints share (cf_checkpoint.h): mesh fields packed column by column, each
 * rank's slice of them, and every rank's block recorded, then checked on restart. */
#include "cf_checkpoint.h"

#include <stdio.h>
#include <string.h>

#include "wf_h5.h"

void cf_ckpt_pack(const st_mesh *m, const double *f, double *out) {
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++, out += m->nz)
      memcpy(out, f + st_idx(m, i, j, 0), (size_t)m->nz * sizeof *out);
}

void cf_ckpt_unpack(const st_mesh *m, const double *in, double *f) {
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++, in += m->nz)
      memcpy(f + st_idx(m, i, j, 0), in, (size_t)m->nz * sizeof *in);
}

unsigned long long cf_ckpt_first_cell(const st_mesh *m, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned long long mine = m->n_owned, first = 0;
  MPI_Exscan(&mine, &first, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  return rank == 0 ? 0 : first;
}

wf_ckpt_var cf_ckpt_field_var(const st_mesh *m, const char *name, double *packed,
                              unsigned long long first) {
  return (wf_ckpt_var){.name = name,
                       .type = WF_F64,
                       .data = packed,
                       .global_n = (unsigned long long)m->n_global,
                       .offset = first,
                       .count = m->n_owned};
}

wf_ckpt_var cf_ckpt_blocks_var(const st_mesh *m, MPI_Comm comm, double block[4]) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  block[0] = m->x0, block[1] = m->lnx, block[2] = m->y0, block[3] = m->lny;
  return (wf_ckpt_var){.name = "blocks",
                       .type = WF_F64,
                       .data = block,
                       .global_n = 4ull * (unsigned long long)nranks,
                       .offset = 4ull * (unsigned long long)rank,
                       .count = 4};
}

int cf_ckpt_check_ranks(MPI_Comm comm, const char *path, wf_status *st) {
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
  return WF_OK;
}

int cf_ckpt_check_blocks(MPI_Comm comm, const char *path, const double mine[4],
                         const double read[4], wf_status *st) {
  int moved = memcmp(mine, read, 4 * sizeof *mine) != 0;
  MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_MAX, comm);
  if (moved)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' was written with other rank blocks: restart with the same "
                   "ranks, rank grid and PE grid",
                   path);
  return WF_OK;
}

void cf_ckpt_last_good(const char *path, int last_step, char *out, size_t len) {
  if (!path[0])
    snprintf(out, len, "no checkpoint: set cfd.checkpoint and cfd.checkpoint_every to keep one");
  else if (last_step < 0)
    snprintf(out, len, "no checkpoint written yet to %s", path);
  else
    snprintf(out, len, "last good checkpoint: %s, step %d (continue with --set cfd.restart=%s)",
             path, last_step, path);
}
