/* Compressed operators in HDF5 (tl_io.h): every tile's rank and the stacked U and W bases,
 * written and read as ranges of rows and checked against this run's tiling, so that a
 * compression is done once and reused. */
#include "tl_io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The row ranges (in complex values) of this rank's stacked U (rows of
 * tiles) or W (columns of tiles) in the file's order. `first`, `count`:
 * one per local tile row (U) or column (W). Returns the total. */
static unsigned long long ranges(const tl_matrix *a, bool u, unsigned long long *first,
                                 unsigned long long *count) {
  const tl_layout *l = a->l;
  int outer = u ? l->mt : l->nt, inner = u ? l->nt : l->mt;
  int o0 = u ? l->i0 : l->j0, o1 = u ? l->i1 : l->j1, n0 = u ? l->j0 : l->i0,
      n1 = u ? l->j1 : l->i1;
  unsigned long long at = 0;
  for (int o = 0; o < outer; o++) {
    unsigned long long len = (unsigned long long)(u ? tl_tile_rows(l, o) : tl_tile_cols(l, o));
    for (int in = 0; in < inner; in++) {
      int k = u ? a->rank[o * l->nt + in] : a->rank[in * l->nt + o];
      bool mine = o >= o0 && o < o1 && in >= n0 && in < n1;
      if (mine && in == n0) first[o - o0] = at, count[o - o0] = 0;
      if (mine) count[o - o0] += len * (unsigned long long)k;
      at += len * (unsigned long long)k;
    }
  }
  return at;
}

enum { RANKS, U, W, NORM, M, N, NB, NNAMES };

static void names(const char *tag, char (*n)[64]) {
  static const char *const what[NNAMES] = {"ranks", "U", "W", "norm", "m", "n", "nb"};
  for (int k = 0; k < NNAMES; k++) snprintf(n[k], 64, "%s_%s", what[k], tag);
}

/* The matrix and tile sizes the file was made for must be this run's. */
static int check_tiling(MPI_Comm comm, const char *path, char (*n)[64], const tl_layout *l,
                        wf_status *st) {
  double m, nn, nb;
  if (wf_h5_input_attr_num(comm, path, n[M], &m, st) != WF_OK ||
      wf_h5_input_attr_num(comm, path, n[N], &nn, st) != WF_OK ||
      wf_h5_input_attr_num(comm, path, n[NB], &nb, st) != WF_OK)
    return st->code;
  if (m != l->m || nn != l->n || nb != l->nb)
    return wf_fail(st, WF_ERR_INPUT,
                   "'%s' holds a %g x %g matrix in tiles of %g; this run has %d x %d in tiles of "
                   "%d",
                   path, m, nn, nb, l->m, l->n, l->nb);
  return WF_OK;
}

/* Both stacks' ranges; NULL (and an error) when out of memory. */
static unsigned long long *ranges_alloc(const tl_matrix *a, wf_h5_rows *ru, wf_h5_rows *rw) {
  const tl_layout *l = a->l;
  int li = l->i1 - l->i0, lj = l->j1 - l->j0;
  unsigned long long *r = calloc(2 * (size_t)(li + lj) + 1, sizeof *r);
  if (!r) return NULL;
  *ru = (wf_h5_rows){.cols = 2, .nranges = li, .first = r, .count = r + li};
  *rw = (wf_h5_rows){.cols = 2, .nranges = lj, .first = r + 2 * li, .count = r + 2 * li + lj};
  ru->rows = ranges(a, true, r, r + li);
  rw->rows = ranges(a, false, r + 2 * li, r + 2 * li + lj);
  return r;
}

int tl_io_write(wf_h5file *f, const char *tag, tl_matrix *a, double norm, wf_status *st) {
  const tl_layout *l = a->l;
  char n[NNAMES][64];
  names(tag, n);
  size_t tiles = (size_t)l->mt * l->nt;
  int64_t *rank = malloc(tiles * sizeof *rank);
  wf_h5_rows ru, rw;
  unsigned long long *r = ranges_alloc(a, &ru, &rw);
  /* U in the files' order for the write, and back after it */
  bool reordered = rank && r && tl_matrix_order_U(a, false, st) == WF_OK;
  int failed = !reordered;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, f->comm);
  if (failed) {
    free(rank), free(r);
    if (reordered && tl_matrix_order_U(a, true, st) != WF_OK) return st->code;
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory writing the compressed operator");
  }
  for (size_t t = 0; t < tiles; t++) rank[t] = a->rank[t];
  /* The rank table: every rank has it, rank 0 writes it. */
  int me;
  MPI_Comm_rank(f->comm, &me);
  unsigned long long zero = 0, all = (unsigned long long)l->mt;
  wf_h5_rows rr = {.rows = (unsigned long long)l->mt,
                   .cols = (unsigned long long)l->nt,
                   .nranges = me == 0,
                   .first = &zero,
                   .count = &all};
  int rc = WF_OK;
  if (wf_h5_write_rows(f, n[RANKS], WF_I64, &rr, rank, st) != WF_OK ||
      wf_h5_write_rows(f, n[U], WF_F32, &ru, a->U, st) != WF_OK ||
      wf_h5_write_rows(f, n[W], WF_F32, &rw, a->W, st) != WF_OK ||
      wf_h5_attr_num(f, n[NORM], norm, st) != WF_OK || wf_h5_attr_int(f, n[M], l->m, st) != WF_OK ||
      wf_h5_attr_int(f, n[N], l->n, st) != WF_OK || wf_h5_attr_int(f, n[NB], l->nb, st) != WF_OK)
    rc = st->code;
  free(rank), free(r);
  wf_status back;
  if (tl_matrix_order_U(a, true, &back) != WF_OK && rc == WF_OK) *st = back, rc = st->code;
  return rc;
}

/* A base that is not a number would spread through every product. */
static int check_magnitude(MPI_Comm comm, const char *path, const tl_matrix *a, wf_status *st) {
  const tl_layout *l = a->l;
  size_t nu = a->u_at[l->i1 - l->i0], nw = a->w_at[l->j1 - l->j0];
  double limit = tl_value_limit(l), most = 0;
  for (size_t e = 0; e < nu; e++) most = fmax(most, fmax(fabsf(crealf(a->U[e])), fabsf(cimagf(a->U[e]))));
  for (size_t e = 0; e < nw; e++) most = fmax(most, fmax(fabsf(crealf(a->W[e])), fabsf(cimagf(a->W[e]))));
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (!(most <= limit)) /* NaN too */
    return wf_fail(st, WF_ERR_INPUT,
                   "'%s': the bases hold a value of magnitude %g, beyond the %.3g that single "
                   "precision can multiply and sum at this size: a damaged file",
                   path, most, limit);
  return WF_OK;
}

int tl_io_read(MPI_Comm comm, const char *path, const char *tag, const tl_layout *l, tl_matrix *a,
               double *norm, wf_status *st) {
  char n[NNAMES][64];
  names(tag, n);
  size_t tiles = (size_t)l->mt * l->nt;
  int64_t *rank64 = malloc(tiles * sizeof *rank64);
  int *rank = malloc(tiles * sizeof *rank);
  int failed = !rank64 || !rank;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory reading '%s'", path) : WF_OK;
  unsigned long long zero = 0, all = (unsigned long long)l->mt;
  wf_h5_rows rr = {.rows = (unsigned long long)l->mt,
                   .cols = (unsigned long long)l->nt,
                   .nranges = 1,
                   .first = &zero,
                   .count = &all};
  if (rc == WF_OK) rc = check_tiling(comm, path, n, l, st);
  if (rc == WF_OK) rc = wf_h5_input_rows(comm, path, n[RANKS], WF_I64, &rr, rank64, st);
  if (rc == WF_OK) rc = wf_h5_input_attr_num(comm, path, n[NORM], norm, st);
  for (size_t t = 0; rc == WF_OK && t < tiles; t++) {
    int i = (int)(t / l->nt), j = (int)(t % l->nt);
    int most = tl_tile_rows(l, i) < tl_tile_cols(l, j) ? tl_tile_rows(l, i) : tl_tile_cols(l, j);
    if (rank64[t] < 0 || rank64[t] > most)
      rc = wf_fail(st, WF_ERR_INPUT, "'%s': %s: tile (%d, %d) has rank %lld, outside 0 .. %d", path,
                   n[RANKS], i, j, (long long)rank64[t], most);
    else
      rank[t] = (int)rank64[t];
  }
  if (rc == WF_OK && !(*norm > 0 && isfinite(*norm)))
    rc = wf_fail(st, WF_ERR_INPUT, "'%s': %s = %g is not a positive norm", path, n[NORM], *norm);
  /* The same file on every rank: a failure is everybody's. */
  if (rc == WF_OK) rc = tl_matrix_alloc(a, l, rank, st);
  if (rc == WF_OK) {
    wf_h5_rows ru, rw;
    unsigned long long *r = ranges_alloc(a, &ru, &rw);
    failed = !r;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
    if (failed)
      rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory reading '%s'", path);
    else if (wf_h5_input_rows(comm, path, n[U], WF_F32, &ru, a->U, st) != WF_OK ||
             wf_h5_input_rows(comm, path, n[W], WF_F32, &rw, a->W, st) != WF_OK)
      rc = st->code;
    else
      rc = check_magnitude(comm, path, a, st);
    if (rc == WF_OK) { /* the products' order */
      failed = tl_matrix_order_U(a, true, st) != WF_OK;
      MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
      if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory reading '%s'", path);
    }
    free(r);
    if (rc != WF_OK) tl_matrix_free(a);
  }
  free(rank64), free(rank);
  return rc;
}
