#include "wf_fabric.h"

#include <stdlib.h>
#include <string.h>

#include "wf_model.h"

void wf_fabric_create(wf_fabric *f, const wf_decomp *dc, const wf_grid *grid, const wf_hw *hw) {
  memset(f, 0, sizeof *f);
  f->dc = dc;
  f->grid = grid;
  f->hw = hw;
  int keep_x[2] = {1, 0}, keep_y[2] = {0, 1};
  MPI_Cart_sub(dc->comm, keep_x, &f->row_comm);
  MPI_Cart_sub(dc->comm, keep_y, &f->col_comm);
}

void wf_fabric_free(wf_fabric *f) {
  if (f->row_comm != MPI_COMM_NULL) MPI_Comm_free(&f->row_comm);
  if (f->col_comm != MPI_COMM_NULL) MPI_Comm_free(&f->col_comm);
}

static void reduce_common(wf_fabric *f, double *vals, int n, wf_reduce_op op, int all) {
  double t0 = MPI_Wtime();
  MPI_Op mop = op == WF_SUM ? MPI_SUM : MPI_MAX;
  if (all) {
    MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, mop, f->dc->comm);
  } else {
    int root = wf_decomp_owner(f->dc, 0, 0);
    MPI_Reduce(f->dc->rank == root ? MPI_IN_PLACE : vals, vals, n, MPI_DOUBLE, mop, root,
               f->dc->comm);
  }
  f->c.ops++;
  /* Words crossing links inside the block during the chain reduction:
   * every PE but one per block forwards its partial once. */
  double words = n * wf_model_words(f->hw, sizeof(double));
  long long pes = (long long)f->dc->nx * f->dc->ny;
  f->c.words_intra += (long long)(words * (double)(pes - 1) * (all ? 2 : 1));
  f->c.words_inter += f->dc->rank == 0 ? 0 : (long long)words * (all ? 2 : 1);
  f->c.mpi_bytes += f->dc->rank == 0 ? 0 : (long long)(n * sizeof(double));
  f->c.model_cycles += wf_model_reduce_cycles(f->hw, f->grid, n, all);
  f->c.seconds += MPI_Wtime() - t0;
}

void wf_fabric_allreduce(wf_fabric *f, double *vals, int n, wf_reduce_op op) {
  reduce_common(f, vals, n, op, 1);
}

void wf_fabric_reduce(wf_fabric *f, double *vals, int n, wf_reduce_op op) {
  reduce_common(f, vals, n, op, 0);
}

/* Broadcast along one axis. `along_x`: rows (root column root_pos);
 * otherwise columns (root row root_pos). */
static void bcast_axis(wf_fabric *f, char *block, size_t esz, int root_pos, int along_x) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  int n_along = along_x ? dc->pe_nx : dc->pe_ny;
  int parts = along_x ? dc->px : dc->py;
  int lo = along_x ? dc->x0 : dc->y0;
  int me = along_x ? dc->cx : dc->cy;
  int lines = along_x ? dc->ny : dc->nx; /* rows (or columns) in this block */
  int root = wf_block_owner(n_along, parts, root_pos);
  MPI_Comm comm = along_x ? f->row_comm : f->col_comm;

  char *line = malloc((size_t)lines * esz);
  if (!line) abort();
  size_t ld = (size_t)dc->nx;
  if (me == root) {
    int k = root_pos - lo;
    for (int l = 0; l < lines; l++) {
      size_t idx = along_x ? (size_t)l * ld + (size_t)k : (size_t)k * ld + (size_t)l;
      memcpy(line + (size_t)l * esz, block + idx * esz, esz);
    }
  }
  MPI_Bcast(line, (int)((size_t)lines * esz), MPI_BYTE, root, comm);
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx; i++)
      memcpy(block + ((size_t)j * ld + (size_t)i) * esz, line + (size_t)(along_x ? j : i) * esz,
             esz);
  free(line);

  double words = wf_model_words(f->hw, esz);
  long long pes = (long long)dc->nx * dc->ny;
  f->c.ops++;
  f->c.words_intra += (long long)(words * (double)(pes - (me == root ? lines : 0)));
  if (me != root) {
    f->c.words_inter += (long long)(words * lines);
    f->c.mpi_bytes += (long long)((size_t)lines * esz);
  }
  f->c.model_cycles += wf_model_bcast_cycles(f->hw, f->grid, esz, n_along, root_pos);
  f->c.seconds += MPI_Wtime() - t0;
}

void wf_fabric_bcast_row(wf_fabric *f, void *block, size_t elem_bytes, int root_x) {
  bcast_axis(f, block, elem_bytes, root_x, 1);
}

void wf_fabric_bcast_col(wf_fabric *f, void *block, size_t elem_bytes, int root_y) {
  bcast_axis(f, block, elem_bytes, root_y, 0);
}

wf_fabric_counters wf_fabric_totals(const wf_fabric *f) {
  long long in[4] = {f->c.ops, f->c.words_intra, f->c.words_inter, f->c.mpi_bytes};
  long long out[4];
  MPI_Allreduce(in, out, 4, MPI_LONG_LONG, MPI_SUM, f->dc->comm);
  double t[2] = {f->c.model_cycles, f->c.seconds}, tmax[2];
  MPI_Allreduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, f->dc->comm);
  wf_fabric_counters c = {.ops = f->c.ops, .words_intra = out[1], .words_inter = out[2],
                          .mpi_bytes = out[3], .model_cycles = tmax[0], .seconds = tmax[1]};
  return c;
}
