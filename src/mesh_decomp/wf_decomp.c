/* The ranks' blocks of PEs (wf_decomp.h): block arithmetic, the automatic rank grid, the
 * Cartesian communicator, and which rank owns a PE or neighbours this one. */
#include "wf_decomp.h"

#include <limits.h>

const int wf_dir_dx[WF_NDIRS] = {+1, -1, 0, 0, +1, -1, +1, -1};
const int wf_dir_dy[WF_NDIRS] = {0, 0, +1, -1, +1, +1, -1, -1};

int wf_dir_opposite(int dir) {
  static const int opp[WF_NDIRS] = {WF_W, WF_E, WF_S, WF_N, WF_SW, WF_SE, WF_NW, WF_NE};
  return opp[dir];
}

void wf_block_range(int n, int parts, int idx, int *lo, int *count) {
  int base = n / parts, rem = n % parts;
  *lo = idx * base + (idx < rem ? idx : rem);
  *count = base + (idx < rem ? 1 : 0);
}

int wf_block_owner(int n, int parts, int i) {
  int base = n / parts, rem = n % parts;
  int split = rem * (base + 1); /* PEs held by the larger blocks */
  return i < split ? i / (base + 1) : rem + (i - split) / base;
}

/* Whether wf_block_owner inverts wf_block_range: every index's owner holds
 * it. The halo exchange reads the ranges, the fabric's collectives and the
 * atoms' migration the owners; a split the two see differently would send
 * data to a rank that does not hold it. Checked at every decomposition. */
static bool owners_hold(int n, int parts) {
  for (int i = 0; i < n; i++) {
    int lo, count, o = wf_block_owner(n, parts, i);
    if (o < 0 || o >= parts) return false;
    wf_block_range(n, parts, o, &lo, &count);
    if (i < lo || i >= lo + count) return false;
  }
  return true;
}

int wf_rank_grid_auto(int nranks, int nx, int ny, int *px, int *py) {
  double best = -1;
  for (int a = 1; a <= nranks; a++) {
    if (nranks % a) continue;
    int b = nranks / a;
    if (a > nx || b > ny) continue;
    /* Perimeter of the largest block; prefer more ranks on the longer axis. */
    double perim = (double)((nx + a - 1) / a) + (double)((ny + b - 1) / b);
    bool better = best < 0 || perim < best ||
                  (perim == best && ((nx >= ny && a > *px) || (nx < ny && b > *py)));
    if (better) {
      best = perim;
      *px = a;
      *py = b;
    }
  }
  return best < 0 ? -1 : 0;
}

int wf_decomp_create(wf_decomp *dc, MPI_Comm comm, int pe_nx, int pe_ny, int px, int py,
                     wf_status *st) {
  int nranks, rank;
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  dc->comm = MPI_COMM_NULL;
  if ((long long)pe_nx * pe_ny < nranks)
    return wf_fail(st, WF_ERR_INPUT,
                   "the PE grid %dx%d has %lld PEs, fewer than the %d MPI ranks: every rank needs "
                   "at least one PE",
                   pe_nx, pe_ny, (long long)pe_nx * pe_ny, nranks);
  if (px == 0 && py == 0) {
    if (wf_rank_grid_auto(nranks, pe_nx, pe_ny, &px, &py) != 0)
      return wf_fail(st, WF_ERR_INPUT,
                     "%d ranks cannot be laid out as a rank grid on the %dx%d PE grid (no "
                     "px x py = %d with px <= %d and py <= %d)",
                     nranks, pe_nx, pe_ny, nranks, pe_nx, pe_ny);
  } else if (px * py != nranks) {
    return wf_fail(st, WF_ERR_INPUT, "rank grid %dx%d has %d ranks, but the run has %d", px, py,
                   px * py, nranks);
  } else if (px > pe_nx || py > pe_ny) {
    return wf_fail(st, WF_ERR_INPUT, "rank grid %dx%d is larger than the PE grid %dx%d", px, py,
                   pe_nx, pe_ny);
  }
  if (!owners_hold(pe_nx, px) || !owners_hold(pe_ny, py))
    return wf_fail(st, WF_ERR_RUNTIME,
                   "internal error: the block split of the %dx%d PE grid over %dx%d ranks gives "
                   "some PE an owner whose block does not hold it",
                   pe_nx, pe_ny, px, py);
  int dims[2] = {px, py}, periods[2] = {1, 1}, coords[2];
  MPI_Cart_create(comm, 2, dims, periods, 0, &dc->comm);
  MPI_Comm_rank(dc->comm, &dc->rank);
  MPI_Cart_coords(dc->comm, dc->rank, 2, coords);
  dc->nranks = nranks;
  dc->px = px;
  dc->py = py;
  dc->cx = coords[0];
  dc->cy = coords[1];
  dc->pe_nx = pe_nx;
  dc->pe_ny = pe_ny;
  wf_block_range(pe_nx, px, dc->cx, &dc->x0, &dc->nx);
  wf_block_range(pe_ny, py, dc->cy, &dc->y0, &dc->ny);
  return WF_OK;
}

void wf_decomp_free(wf_decomp *dc) {
  if (dc->comm != MPI_COMM_NULL) MPI_Comm_free(&dc->comm);
}

int wf_decomp_rank_of(const wf_decomp *dc, int cx, int cy) { return cx * dc->py + cy; }

int wf_decomp_owner(const wf_decomp *dc, int i, int j) {
  return wf_decomp_rank_of(dc, wf_block_owner(dc->pe_nx, dc->px, i),
                           wf_block_owner(dc->pe_ny, dc->py, j));
}

int wf_decomp_neighbor(const wf_decomp *dc, int dir, bool periodic_x, bool periodic_y) {
  int cx = dc->cx + wf_dir_dx[dir], cy = dc->cy + wf_dir_dy[dir];
  if (cx < 0 || cx >= dc->px) {
    if (!periodic_x) return MPI_PROC_NULL;
    cx = (cx + dc->px) % dc->px;
  }
  if (cy < 0 || cy >= dc->py) {
    if (!periodic_y) return MPI_PROC_NULL;
    cy = (cy + dc->py) % dc->py;
  }
  return wf_decomp_rank_of(dc, cx, cy);
}
