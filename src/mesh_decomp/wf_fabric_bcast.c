/* The fabric's multicasts (wf_fabric.h): along whole rows or columns of PEs
 * (one element a PE, or one a line: SUMMA's tiles), and within parts of
 * lines (the triangle of PEs of a Cholesky factorisation). */
#include <limits.h>
#include <string.h>

#include "wf_fabric.h"
#include "wf_fabric_parts.h"
#include "wf_model.h"

/* The multicast itself: `line` holds one element a line of this block (its
 * PE rows along rows, its columns along columns), the root's rank's filled
 * with the root PEs' elements; on return every rank's holds them. Counted
 * as the wafer does it: every PE of a line takes the element in. */
static void multicast(wf_fabric *f, void *line, size_t esz, int root_pos, wf_axis axis, double t0) {
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  int n_along = along_x ? dc->pe_nx : dc->pe_ny, parts = along_x ? dc->px : dc->py;
  int me = along_x ? dc->cx : dc->cy, lines = along_x ? dc->ny : dc->nx;
  int root = wf_block_owner(n_along, parts, root_pos);
  size_t bytes = (size_t)lines * esz;
  if (parts > 1) /* with one rank along the line the data is where it goes */
    MPI_Bcast(line, (int)bytes, MPI_BYTE, root, along_x ? f->row_comm : f->col_comm);
  double words = wf_model_words(f->hw, esz);
  long long pes = (long long)dc->nx * dc->ny;
  wf_fabric_count_op(f, KIND_LINE, 0, t0,
                     wf_model_bcast_cycles(f->hw, f->grid, esz, n_along, root_pos),
                     (long long)(words * (double)(pes - (me == root ? lines : 0))),
                     me == root ? 0 : (long long)bytes);
}

/* Along rows (root column root_pos) or along columns (root row root_pos). */
static int bcast_axis(wf_fabric *f, char *block, size_t esz, int root_pos, wf_axis axis,
                      wf_status *st) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  int lo = along_x ? dc->x0 : dc->y0, me = along_x ? dc->cx : dc->cy;
  int lines = along_x ? dc->ny : dc->nx; /* rows (or columns) in this block */
  int root = wf_block_owner(along_x ? dc->pe_nx : dc->pe_ny, along_x ? dc->px : dc->py, root_pos);
  wf_status_clear(st);
  size_t most = (size_t)wf_fabric_most_lines(dc, along_x) * esz;
  if (wf_fabric_reserve(f, (size_t)lines * esz, most, false, "a multicast", st) != WF_OK)
    return st->code;
  char *line = f->send.data;
  if (me == root)
    for (int l = 0; l < lines; l++)
      memcpy(line + (size_t)l * esz,
             block + wf_fabric_block_pe(dc, along_x, l, root_pos - lo) * esz, esz);
  multicast(f, line, esz, root_pos, axis, t0);
  for (int l = 0; l < lines; l++)
    for (int p = 0; p < (along_x ? dc->nx : dc->ny); p++)
      memcpy(block + wf_fabric_block_pe(dc, along_x, l, p) * esz, line + (size_t)l * esz, esz);
  return WF_OK;
}

bool wf_fabric_lines_fit(const wf_fabric *f, wf_axis axis, double elem_bytes) {
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  /* The most lines any rank has: the same answer on every rank. */
  double most = (double)wf_fabric_most_lines(dc, along_x) * elem_bytes;
  return (along_x ? dc->px : dc->py) == 1 || most <= INT_MAX;
}

int wf_fabric_bcast_lines(wf_fabric *f, wf_axis axis, void *lines, size_t elem_bytes, int root,
                          wf_status *st) {
  double t0 = MPI_Wtime();
  wf_status_clear(st);
  if (!wf_fabric_lines_fit(f, axis, (double)elem_bytes))
    return wf_fail(st, WF_ERR_RUNTIME, "a multicast of %zu bytes a line: over MPI's int count",
                   elem_bytes);
  multicast(f, lines, elem_bytes, root, axis, t0);
  return WF_OK;
}

int wf_fabric_bcast_row(wf_fabric *f, void *block, size_t elem_bytes, int root_x, wf_status *st) {
  return bcast_axis(f, block, elem_bytes, root_x, WF_ALONG_ROWS, st);
}

int wf_fabric_bcast_col(wf_fabric *f, void *block, size_t elem_bytes, int root_y, wf_status *st) {
  return bcast_axis(f, block, elem_bytes, root_y, WF_ALONG_COLUMNS, st);
}

/* The lines [l, *end) after l whose roots sit on the same rank as l's and
 * that carry something: one message. */
static int span_group(int n_along, int parts, int nlines, const int *root, const int *last,
                      int l) {
  int owner = wf_block_owner(n_along, parts, root[l]), e = l + 1;
  while (e < nlines && last[e] > root[e] && wf_block_owner(n_along, parts, root[e]) == owner) e++;
  return e;
}

int wf_fabric_bcast_spans(wf_fabric *f, wf_axis axis, void *lines, size_t elem_bytes,
                          const int *root, const int *last, wf_status *st) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  int n_along = along_x ? dc->pe_nx : dc->pe_ny, parts = along_x ? dc->px : dc->py;
  int me = along_x ? dc->cx : dc->cy, nlines = along_x ? dc->ny : dc->nx;
  int lo = along_x ? dc->x0 : dc->y0, hi = lo + (along_x ? dc->nx : dc->ny);
  wf_status_clear(st);
  if (!wf_fabric_lines_fit(f, axis, (double)elem_bytes))
    return wf_fail(st, WF_ERR_RUNTIME, "a multicast of %zu bytes a line: over MPI's int count",
                   elem_bytes);
  long long inter = 0, words = 0, calls = 0;
  double cycles = 0, word = wf_model_words(f->hw, elem_bytes);
  for (int l = 0; l < nlines;) {
    if (last[l] <= root[l]) {
      l++;
      continue;
    }
    int e = span_group(n_along, parts, nlines, root, last, l);
    int owner = wf_block_owner(n_along, parts, root[l]);
    size_t bytes = (size_t)(e - l) * elem_bytes;
    if (parts > 1) { /* with one rank along the line the data is where it goes */
      MPI_Bcast((char *)lines + (size_t)l * elem_bytes, (int)bytes, MPI_BYTE, owner,
                along_x ? f->row_comm : f->col_comm);
      calls++;
      if (me != owner) inter += (long long)bytes;
    }
    for (; l < e; l++) { /* the PEs of this block the span reaches take the element in */
      int from = root[l] + 1 > lo ? root[l] + 1 : lo, to = last[l] + 1 < hi ? last[l] + 1 : hi;
      if (to > from) words += (long long)(word * (to - from));
      double c = wf_model_bcast_cycles(f->hw, f->grid, elem_bytes, last[l] - root[l] + 1, 0);
      if (c > cycles) cycles = c;
    }
  }
  /* one operation, of as many line collectives as it made calls */
  wf_fabric_counters d = {.ops = 1, .line_collectives = calls, .model_cycles = cycles,
                          .words_intra = words, .mpi_bytes = inter, .seconds = MPI_Wtime() - t0};
  wf_fabric_count(f, &d);
  return WF_OK;
}
