/* Tile low-rank compression (tl_compress.h): each tile's truncated SVD to the smallest rank
 * within the accuracy, and the compression of this rank's tiles of a whole matrix. */
#include "tl_compress.h"

#include "wf_lapacke.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_progress.h"
#include "wf_signal.h"

int tl_compress_tile(int m, int n, float complex *a, double tol, int round, int *k,
                     float complex **U, float complex **W, double *dropped2, wf_status *st) {
  int p = m < n ? m : n;
  float *s = malloc((size_t)p * sizeof *s);
  float complex *u = malloc((size_t)m * p * sizeof *u), *vt = malloc((size_t)p * n * sizeof *vt);
  *U = *W = NULL;
  *k = 0;
  int rc = WF_OK;
  if (!s || !u || !vt) {
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory compressing a %d x %d tile", m, n);
  } else {
    lapack_int info = LAPACKE_cgesdd(LAPACK_COL_MAJOR, 'S', m, n, a, m, s, u, m, vt, p);
    if (info != 0)
      rc = wf_fail(st, WF_ERR_RUNTIME, "LAPACKE_cgesdd failed on a %d x %d tile (info %d)", m, n,
                   (int)info);
  }
  if (rc == WF_OK) {
    /* The smallest k whose tail sum_{l >= k} s_l^2 is within tol^2. */
    double tail = 0, tol2 = tol * tol;
    int r = p;
    while (r > 0 && tail + (double)s[r - 1] * s[r - 1] <= tol2) {
      r--;
      tail += (double)s[r] * s[r];
    }
    if (round > 1 && r % round) r += round - r % round;
    if (r > p) r = p;
    *dropped2 = 0;
    for (int l = r; l < p; l++) *dropped2 += (double)s[l] * s[l];
    *k = r;
    if (r > 0) {
      *U = malloc((size_t)m * r * sizeof **U);
      *W = malloc((size_t)n * r * sizeof **W);
      if (!*U || !*W) {
        free(*U), free(*W);
        *U = *W = NULL;
        rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for a tile's bases");
      } else {
        memcpy(*U, u, (size_t)m * r * sizeof **U);
        /* W = V Sigma: column l is s_l times the conjugate of row l of V^H. */
        for (int l = 0; l < r; l++)
          for (int c = 0; c < n; c++) (*W)[(size_t)l * n + c] = s[l] * conjf(vt[l + (size_t)c * p]);
      }
    }
  }
  free(s), free(u), free(vt);
  return rc;
}

typedef struct tile_bases {
  float complex *U, *W;
} tile_bases;

/* ||A||_F^2 of this rank's tiles; stops early (the sum then unused) on a
 * signal here or at any rank (wf_signal_stop, polled a tile at a time). */
static double local_norm2(const tl_layout *l, tl_fill_fn fill, void *ctx, float complex *tile,
                          double *tile_norm2) {
  double sum = 0;
  for (int i = l->i0; i < l->i1 && !wf_signal_stop(); i++)
    for (int j = l->j0; j < l->j1; j++) {
      int m = tl_tile_rows(l, i), n = tl_tile_cols(l, j);
      fill(ctx, i * l->nb, m, j * l->nb, n, tile, m);
      double t = 0;
      for (size_t e = 0; e < (size_t)m * n; e++)
        t += (double)crealf(tile[e]) * crealf(tile[e]) + (double)cimagf(tile[e]) * cimagf(tile[e]);
      tile_norm2[(size_t)(i - l->i0) * (l->j1 - l->j0) + (j - l->j0)] = t;
      sum += t;
    }
  return sum;
}

int tl_compress(tl_matrix *a, const tl_layout *l, tl_fill_fn fill, void *ctx,
                const tl_compress_opts *o, bool progress, double *norm, wf_status *st) {
  size_t tiles = (size_t)l->mt * l->nt, local = (size_t)(l->i1 - l->i0) * (l->j1 - l->j0);
  int *rank = calloc(tiles, sizeof *rank);
  tile_bases *b = calloc(local + 1, sizeof *b);
  double *tile_norm2 = malloc((local + 1) * sizeof *tile_norm2);
  float complex *tile = malloc((size_t)l->nb * l->nb * sizeof *tile);
  int failed = !rank || !b || !tile_norm2 || !tile;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, l->comm);
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory compressing the matrix") : WF_OK;
  double dropped2 = 0;
  if (rc == WF_OK) {
    double n2 = local_norm2(l, fill, ctx, tile, tile_norm2);
    MPI_Allreduce(MPI_IN_PLACE, &n2, 1, MPI_DOUBLE, MPI_SUM, l->comm);
    *norm = sqrt(n2);
    wf_progress prog;
    wf_progress_start(&prog, "compress", (long)local, progress, stdout);
    size_t t = 0;
    for (int i = l->i0; i < l->i1 && rc == WF_OK; i++)
      for (int j = l->j0; j < l->j1 && rc == WF_OK; j++, t++) {
        /* A tile's SVD takes milliseconds: a signal stops the loop within one. */
        int sig = wf_signal_stop();
        if (sig) {
          rc = wf_signal_fail(st, sig, "while compressing the operator's tiles");
          break;
        }
        int m = tl_tile_rows(l, i), n = tl_tile_cols(l, j);
        double tol = o->acc * (o->global_norm ? *norm : sqrt(tile_norm2[t])), d2 = 0;
        fill(ctx, i * l->nb, m, j * l->nb, n, tile, m);
        rc = tl_compress_tile(m, n, tile, tol, o->round, &rank[i * l->nt + j], &b[t].U, &b[t].W,
                              &d2, st);
        dropped2 += d2;
        wf_progress_tick(&prog, (long)t + 1);
      }
  }
  /* Every rank learns every tile's rank (each tile has one owner), and
   * every rank the first failing rank's status (a signal's included; a
   * rank done first passes its own on while it waits). */
  wf_signal_barrier(l->comm);
  if (rc == WF_OK) wf_status_clear(st);
  wf_status_agree(l->comm, st);
  rc = st->code;
  if (rc == WF_OK) {
    MPI_Allreduce(MPI_IN_PLACE, rank, (int)tiles, MPI_INT, MPI_SUM, l->comm);
    rc = tl_matrix_alloc(a, l, rank, st);
  }
  if (rc == WF_OK) {
    a->dropped2 = dropped2;
    size_t t = 0;
    for (int i = l->i0; i < l->i1; i++)
      for (int j = l->j0; j < l->j1; j++, t++) {
        size_t k = (size_t)rank[i * l->nt + j];
        if (k == 0) continue;
        tl_tile_set_U(a, i, j, b[t].U);
        memcpy(tl_tile_W(a, i, j), b[t].W, (size_t)tl_tile_cols(l, j) * k * sizeof *a->W);
      }
  }
  for (size_t t = 0; b && t < local; t++) free(b[t].U), free(b[t].W);
  free(rank), free(b), free(tile_norm2), free(tile);
  return rc;
}
