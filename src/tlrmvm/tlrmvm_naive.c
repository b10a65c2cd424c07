/* The TLR products recomputed the plain way, for the run's check: tile by
 * tile, y_i = sum_j U_ij (W_ij^H x_j) and x_j = sum_i W_ij (U_ij^H v_i), in
 * double, with naive loops over the stored bases. It shares no code with
 * tl_matrix_apply: no stacked segments, no reshuffle, no BLAS, no
 * gathers; only the bases as stored (tl_matrix.h: U_i by rows, W_j
 * column-major, tiles in order inside each stack) and one sum over the
 * ranks. Alongside, the same sums of absolute values give the componentwise
 * scale the single-precision product's round-off is bounded by. And the
 * survey's dense operator against the Green's function's definition. */
#include <complex.h>
#include <math.h>

#include "wf_workload.h"
#include <stdlib.h>

#include "tlrmvm_parts.h"
#include "wf_signal.h"

/* Tile (i, j)'s place in its stacks: its first column in U_i (of width
 * R_i) and in W_j, both counted from the local tiles' ranks. */
typedef struct tile_at {
  size_t u_col, u_width, w_col;
} tile_at;

static tile_at tile_at_of(const tl_matrix *a, int i, int j) {
  const tl_layout *l = a->l;
  tile_at t = {0, 0, 0};
  for (int jj = l->j0; jj < l->j1; jj++) {
    int k = a->rank[i * l->nt + jj];
    if (jj < j) t.u_col += (size_t)k;
    t.u_width += (size_t)k;
  }
  for (int ii = l->i0; ii < i; ii++) t.w_col += (size_t)a->rank[ii * l->nt + j];
  return t;
}

/* U_ij[r][c] and W_ij[r][c]. */
static float complex U_at(const tl_matrix *a, int i, tile_at t, int r, int c) {
  return a->U[a->u_at[i - a->l->i0] + (size_t)r * t.u_width + t.u_col + (size_t)c];
}
static float complex W_at(const tl_matrix *a, int j, tile_at t, int r, int c) {
  size_t n = (size_t)tl_tile_cols(a->l, j);
  return a->W[a->w_at[j - a->l->j0] + (t.w_col + (size_t)c) * n + (size_t)r];
}

/* One tile's contribution: out += B (C^H in), |out| bound += |B| (|C|^T |in|),
 * B (rows x k) and C (cols x k) given as U and W (forward) or W and U
 * (adjoint). */
static void tile_product(const tl_matrix *a, int i, int j, bool adjoint, const float complex *in,
                         double complex *out, double *scale, double complex *z, double *za) {
  const tl_layout *l = a->l;
  int k = a->rank[i * l->nt + j];
  tile_at t = tile_at_of(a, i, j);
  int mi = tl_tile_rows(l, i), nj = tl_tile_cols(l, j);
  int in0 = adjoint ? i * l->nb : j * l->nb, out0 = adjoint ? j * l->nb : i * l->nb;
  int in_len = adjoint ? mi : nj, out_len = adjoint ? nj : mi;
  for (int c = 0; c < k; c++) {
    z[c] = 0, za[c] = 0;
    for (int r = 0; r < in_len; r++) {
      double complex e = adjoint ? U_at(a, i, t, r, c) : W_at(a, j, t, r, c);
      z[c] += conj(e) * in[in0 + r];
      za[c] += cabs(e) * cabs(in[in0 + r]);
    }
  }
  for (int r = 0; r < out_len; r++)
    for (int c = 0; c < k; c++) {
      double complex e = adjoint ? W_at(a, j, t, r, c) : U_at(a, i, t, r, c);
      out[out0 + r] += e * z[c];
      scale[out0 + r] += cabs(e) * za[c];
    }
}

/* Single-precision round-off of a product, as a multiple of each entry's
 * scale (Higham 2002, (3.5) and Lemma 3.5): phase 1 is a complex inner
 * product of at most nb terms, phase 3 one of at most R terms (the widest
 * tile row or column of ranks), each within sqrt(2) gamma_{len+1} of |a|^T |b|;
 * the reshuffle is exact; the partial sums of the P ranks add gamma_P.
 * The double recomputation adds gamma_K of double. */
double tlrmvm_naive_bound(const tl_matrix *a) {
  const tl_layout *l = a->l;
  long widest = 0;
  for (int i = 0; i < l->mt; i++) {
    long r = 0;
    for (int j = 0; j < l->nt; j++) r += a->rank[i * l->nt + j];
    if (r > widest) widest = r;
  }
  for (int j = 0; j < l->nt; j++) {
    long r = 0;
    for (int i = 0; i < l->mt; i++) r += a->rank[i * l->nt + j];
    if (r > widest) widest = r;
  }
  int ranks;
  MPI_Comm_size(l->comm, &ranks);
  double us = 0x1p-24, ud = 0x1p-53, K = (double)l->nb + (double)widest + ranks + 4;
  return sqrt(2.0) * wf_gamma(K, us) + K * ud;
}

int tlrmvm_naive_product(const tl_matrix *a, bool adjoint, const float complex *in,
                         const float complex *out, tlrmvm_naive *res, wf_status *st) {
  const tl_layout *l = a->l;
  int len = adjoint ? l->n : l->m;
  double complex *ref = calloc((size_t)len + (size_t)l->nb, sizeof *ref);
  double *scale = calloc((size_t)len, sizeof *scale), *za = malloc((size_t)l->nb * sizeof *za);
  double complex *z = malloc((size_t)l->nb * sizeof *z);
  int failed = !ref || !scale || !za || !z;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, l->comm);
  if (failed) {
    free(ref), free(scale), free(za), free(z);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the TLR product's recomputation");
  }
  for (int i = l->i0; i < l->i1; i++)
    for (int j = l->j0; j < l->j1; j++) tile_product(a, i, j, adjoint, in, ref, scale, z, za);
  MPI_Allreduce(MPI_IN_PLACE, ref, 2 * len, MPI_DOUBLE, MPI_SUM, l->comm);
  MPI_Allreduce(MPI_IN_PLACE, scale, len, MPI_DOUBLE, MPI_SUM, l->comm);
  double worst = 0, diff2 = 0, ref2 = 0;
  for (int r = 0; r < len; r++) {
    double d = cabs((double complex)out[r] - ref[r]);
    diff2 += d * d, ref2 += creal(ref[r]) * creal(ref[r]) + cimag(ref[r]) * cimag(ref[r]);
    /* 0 / 0: an exact zero both ways */
    double q = scale[r] > 0 ? d / scale[r] : (d > 0 ? INFINITY : 0);
    worst = wf_worse(worst, q);
  }
  res->worst = worst / tlrmvm_naive_bound(a);
  res->rel = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
  free(ref), free(scale), free(za), free(z);
  return WF_OK;
}

/* Each entry of the block against exp(-i k d) / (4 pi d) written as cos
 * and sin of the phase (no cexp): the float entry rounds its real and
 * imaginary parts once (sqrt(2) u of |G|); the two double phases k d may
 * differ by a few units of k d's rounding. */
double tlrmvm_green_check(const tlrmvm_setup *s, const tl_dense *d, int slot, double hz) {
  const double pi = 3.14159265358979323846, k = 2 * pi * hz / s->survey.velocity;
  const float complex *a = d->block[slot];
  double worst = 0;
  for (int c = 0; c < d->cols && !wf_signal_stop(); c++) { /* partial on a signal: unused */
    const double *ps = s->survey.src_xyz + 3 * (size_t)(d->c0 + c);
    for (int r = 0; r < d->rows; r++) {
      const double *pr = s->survey.rec_xyz + 3 * (size_t)(d->r0 + r);
      double dist = hypot(hypot(pr[0] - ps[0], pr[1] - ps[1]), pr[2] - ps[2]);
      double g = 1 / (4 * pi * dist), re = g * cos(k * dist), im = -g * sin(k * dist);
      float complex e = a[(size_t)c * d->rows + (size_t)r];
      double diff = hypot(crealf(e) - re, cimagf(e) - im);
      double allowed = g * (sqrt(2.0) * 0x1p-24 + 16 * 0x1p-53 * (1 + k * dist));
      worst = wf_worse(worst, diff / allowed);
    }
  }
  return worst;
}

/* ||A - A_tlr||_F^2 of this rank's tiles, entry by entry in double: the
 * dense block minus sum_l U_ij[r][l] conj(W_ij[c][l]) from the stored
 * bases. No singular value enters, so it checks the compression's own
 * figure, the dropped singular values: for an exact SVD the Frobenius
 * norm's unitary invariance makes ||A_t - U_k S_k V_k^H||_F^2 their sum of
 * squares, so the two differ only by the SVD's round-off
 * (tlrmvm_dropped_bound). */
double tlrmvm_naive_residual2(const tl_matrix *a, const tl_dense *d, int slot) {
  const tl_layout *l = a->l;
  const float complex *block = d->block[slot];
  double sum = 0;
  for (int i = l->i0; i < l->i1 && !wf_signal_stop(); i++) /* partial on a signal: unused */
    for (int j = l->j0; j < l->j1; j++) {
      int k = a->rank[i * l->nt + j], mi = tl_tile_rows(l, i), nj = tl_tile_cols(l, j);
      tile_at t = tile_at_of(a, i, j);
      for (int c = 0; c < nj; c++)
        for (int r = 0; r < mi; r++) {
          size_t at = (size_t)(j * l->nb + c - d->c0) * (size_t)d->rows + (size_t)(i * l->nb + r - d->r0);
          double complex e = block[at];
          for (int q = 0; q < k; q++) e -= (double complex)U_at(a, i, t, r, q) * conj(W_at(a, j, t, c, q));
          sum += creal(e) * creal(e) + cimag(e) * cimag(e);
        }
    }
  return sum;
}

/* How far that recomputation may lie from the dropped singular values'
 * sqrt(sum s_l^2), as a multiple of ||A||_F. cgesdd's U S V^H is the exact
 * SVD of A_t + D with ||D||_2 <= p u ||A_t||_2, and its U, V lie within
 * p u of unitary ones (LAPACK Users' Guide, 4.9: p a modest function of
 * the tile's size; taken here as 2 nb, for complex arithmetic); in the
 * Frobenius norm that is sqrt(nb) p u ||A_t||_F. W = S V^H rounds once more
 * (u). So per tile the two figures differ by at most
 * (3 sqrt(nb) p + 1) u ||A_t||_F, and over the tiles (a sum of squares both
 * ways) by as much of ||A||_F. When little is dropped the difference is the
 * reconstruction's round-off itself: measured 11.7 u at nb = 3, 0.37 of this. */
double tlrmvm_dropped_bound(const tl_layout *l) {
  double p = 2.0 * l->nb;
  return (3.0 * sqrt((double)l->nb) * p + 1.0) * 0x1p-24;
}
