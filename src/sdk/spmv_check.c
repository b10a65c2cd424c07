/* The SpMV example's check (spmv.h): a rank's rows of y against the plain
 * product, accumulated entry by entry as the matrix's entries come (no CSR,
 * no PE grid, no exchange), sharing only the matrix's reader and x's
 * definition with the kernel. */
#include <math.h>
#include <stdlib.h>

#include "spmv.h"
#include "wf_workload.h"

typedef struct ref_ctx {
  const sp_case *c;
  long long r0, r1;
  double *y, *abs_y; /* sum a_ij x_j, sum |a_ij x_j| */
  long long *k;      /* entries a row */
} ref_ctx;

static void add_entry(void *ctx, long long row, long long col, double v) {
  ref_ctx *r = ctx;
  if (row < r->r0 || row >= r->r1) return;
  double t = v * sp_x(r->c, col);
  r->y[row - r->r0] += t;
  r->abs_y[row - r->r0] += fabs(t);
  r->k[row - r->r0]++;
}

int sp_check_rows(const sp_case *c, long long r0, long long r1, const double *y, int extra,
                  double *worst, wf_status *st) {
  size_t n = (size_t)(r1 - r0) + 1;
  ref_ctx ref = {c, r0, r1, calloc(n, sizeof(double)), calloc(n, sizeof(double)),
                 calloc(n, sizeof(long long))};
  *worst = 0;
  if (!ref.y || !ref.abs_y || !ref.k)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the check's rows");
  else if (sp_matrix_each(c, add_entry, &ref, st) == WF_OK)
    for (long long i = 0; i < r1 - r0; i++) {
      double err = fabs(y[i] - ref.y[i]);
      /* plus, below the normal range, each multiply's absolute 2^-1074 */
      double bound = 2 * wf_gamma((double)(ref.k[i] + extra), 0x1p-53) * ref.abs_y[i] +
                     2 * (double)(ref.k[i] + extra) * 0x1p-1074;
      if (err != err) *worst = err;
      else if (err > 0 && *worst == *worst) *worst = fmax(*worst, bound > 0 ? err / bound : INFINITY);
    }
  free(ref.y), free(ref.abs_y), free(ref.k);
  return st->code;
}
