/* The Cholesky example's checks (cholesky.h).
 *
 * L against LAPACK: each rank factors the leading rows of A down to its
 * block's last with LAPACKE_dpotrf (the rows of L above a row depend on
 * nothing below it) and compares its block. Both factors satisfy
 * L L' = A + dA with |dA| <= gamma_(n+1) |L| |L'| (Higham, Accuracy and
 * Stability of Numerical Algorithms, Thm 10.3), so ||dA||_F <=
 * gamma_(n+1) trace(A) and eps = ||dA||_F / ||A||_2 <= gamma_(n+1)
 * trace(A) / max_i a_ii; by Sun's perturbation bound (Higham Thm 10.8)
 * each differs from the exact factor by at most 2^(-1/2) kappa eps /
 * (1 - kappa eps) ||L||_2 in the Frobenius norm, with ||L||_2^2 = ||A||_2
 * <= ||A||_1, and kappa_2 <= kappa_1 <= 10 / rcond (LAPACKE_dpocon's
 * estimate, a lower bound of ||A^-1||_1 rarely off by more than 3: a
 * factor 10 of margin). The two factors are within twice that.
 *
 * L L' = A: the panels' products replayed over the factor (the same
 * multicasts as the factorisation, with nothing solved), every entry of
 * the lower triangle within 2 gamma_(n+2) (|L| |L'|): the backward error
 * of the factorisation and the rounding of the product, each bounded by
 * gamma_(n+1) |L| |L'|. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cholesky.h"
#include "sdk_dense.h"
#include "wf_io.h"
#include "wf_lapacke.h"
#include "wf_memory.h"
#include "wf_signal.h"
#include "wf_wafer.h"

/* The worst over the ranks of `mine` (a NaN counts as the worst). */
static double worst_of(wf_run *run, double mine) {
  if (mine != mine) mine = INFINITY; /* MPI_MAX may drop a NaN */
  wf_fabric_allreduce(&run->wafer->fab, &mine, 1, WF_MAX);
  return mine;
}

/* sum over s of alpha L(y, s) L(x, s)' into out, for the block's tiles. */
static int replay(wf_run *run, const ch_case *c, ch_rank *r, double *out, wf_status *st) {
  for (int s = 0; s < c->P; s++) {
    if (ch_panels(run, c, r, s, s, st) != WF_OK) return st->code;
    if (!wf_signal_stop()) ch_panel_update(&run->wafer->dc, c, r, s, s, 1.0, out);
  }
  return WF_OK;
}

int ch_check_residual(wf_run *run, const ch_case *c, ch_rank *r, double *worst, wf_status *st) {
  const ch_block *b = &r->b;
  size_t n = (size_t)(b->nr * b->nc);
  if (wf_memory_fits(run->comm, 24.0 * (double)n, "the check's products",
                     "cholesky.check = false, or more nodes", st) != WF_OK)
    return st->code;
  double *prod = calloc(n + 1, sizeof *prod), *bound = calloc(n + 1, sizeof *bound);
  double *abs_l = malloc((n + 1) * sizeof *abs_l);
  wf_status_clear(st);
  if (!prod || !bound || !abs_l) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the check");
  wf_status_agree(run->comm, st);
  int rc = st->code;
  if (rc == WF_OK) rc = replay(run, c, r, prod, st);
  if (rc == WF_OK) { /* the bound's product: the same over |L| */
    double *factor = r->b.a;
    for (size_t e = 0; e < n; e++) abs_l[e] = fabs(factor[e]);
    r->b.a = abs_l;
    rc = replay(run, c, r, bound, st);
    r->b.a = factor;
  }
  double mine = 0, scale = 2 * wf_gamma((double)c->n + 2, 0x1p-53);
  if (rc == WF_OK) {
    for (size_t e = 0; e < n; e++) bound[e] *= scale;
    for (long long i = b->rows.lo; i < b->rows.hi; i++) { /* the lower triangle's entries */
      long long j1 = i + 1 < b->cols.hi ? i + 1 : b->cols.hi;
      if (j1 <= b->cols.lo) continue;
      size_t at = (size_t)((i - b->rows.lo) * b->nc);
      mine = wf_worse(mine, sdk_dense_worst(prod + at, r->a0 + at, bound + at, j1 - b->cols.lo));
    }
  }
  free(prod), free(bound), free(abs_l);
  if (rc == WF_OK) rc = wf_signal_check(run->comm, "while checking the factor", st);
  if (rc == WF_OK) *worst = worst_of(run, mine);
  return rc;
}

/* The factor of A's leading r1 rows compared with this rank's block: the
 * Frobenius norm of the difference over its bound (see the top), or a
 * negative value when kappa eps is too large for the bound. */
static double compare_leading(const ch_rank *r, double *ref, long long r1) {
  const ch_block *b = &r->b;
  double anorm = 0, maxdiag = 0, trace = 0;
  double *colsum = calloc((size_t)r1 + 1, sizeof *colsum);
  if (!colsum) return NAN;
  for (long long i = 0; i < r1; i++)
    for (long long j = 0; j <= i; j++) {
      double v = fabs(ref[i * r1 + j]);
      colsum[j] += v;
      if (j != i) colsum[i] += v;
    }
  for (long long i = 0; i < r1; i++) {
    anorm = fmax(anorm, colsum[i]);
    maxdiag = fmax(maxdiag, ref[i * r1 + i]);
    trace += ref[i * r1 + i];
  }
  free(colsum);
  double rcond = 0;
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)r1, ref, (lapack_int)r1) != 0 ||
      LAPACKE_dpocon(LAPACK_ROW_MAJOR, 'L', (lapack_int)r1, ref, (lapack_int)r1, anorm, &rcond) != 0)
    return INFINITY; /* LAPACK refuses a matrix ours factored */
  double ke = 10 / rcond * wf_gamma((double)r1 + 1, 0x1p-53) * trace / maxdiag;
  if (!(ke < 0.5)) return -1;
  double bound = sqrt(2.0) * ke / (1 - ke) * sqrt(anorm), sum = 0;
  for (long long i = b->rows.lo; i < b->rows.hi; i++)
    for (long long j = b->cols.lo; j < b->cols.hi && j <= i; j++) {
      double e = b->a[(i - b->rows.lo) * b->nc + (j - b->cols.lo)] - ref[i * r1 + j];
      sum += e * e;
    }
  return sqrt(sum) / bound;
}

int ch_check_lapack(wf_run *run, ch_case *c, const ch_rank *r, double *worst, bool *applicable,
                    wf_status *st) {
  const ch_block *b = &r->b;
  /* A rank whose block is above the diagonal has nothing to compare. */
  long long r1 = b->cols.lo < b->rows.hi ? b->rows.hi : 0;
  if (wf_memory_fits(run->comm, 8.0 * (double)r1 * (double)r1, "the LAPACK reference's rows",
                     "cholesky.check = false, or more nodes", st) != WF_OK)
    return st->code;
  ch_block ref = {.rows = {0, r1}, .cols = {0, r1}, .nr = r1, .nc = r1};
  ref.a = malloc((size_t)(r1 * r1 + 1) * sizeof *ref.a);
  wf_status_clear(st);
  if (!ref.a) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the LAPACK reference");
  wf_status_agree(run->comm, st);
  if (st->code == WF_OK && ch_matrix_fill(run, c, &ref, st) == WF_OK) {
    double mine = r1 > 0 ? compare_leading(r, ref.a, r1) : 0;
    double flags[2] = {mine < 0 ? 0 : (mine != mine ? INFINITY : mine), mine < 0 ? 1 : 0};
    wf_fabric_allreduce(&run->wafer->fab, flags, 2, WF_MAX);
    *worst = flags[0], *applicable = flags[1] == 0;
  }
  free(ref.a);
  return st->code;
}
