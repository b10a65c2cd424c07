/* Dense matrices of the SDK's GEMM and GEMV examples (sdk_dense.h). */
#include "sdk_dense.h"

#include <math.h>

#include "wf_signal.h"
#include "wf_workload.h"

bool sdk_dense_fill(double *a, long long ld, uint64_t seed, sdk_matrix_id id, long long r0,
                    long long rows, long long c0, long long ncols, long long cols) {
  for (long long r = 0; r < rows; r++) {
    if (wf_signal_stop()) return false;
    for (long long c = 0; c < ncols; c++) a[r * ld + c] = sdk_entry(seed, id, r0 + r, c0 + c, cols);
  }
  return true;
}

double sdk_dense_worst(const double *got, const double *want, const double *bound, long long n) {
  double worst = 0;
  for (long long k = 0; k < n; k++) {
    double e = fabs(got[k] - want[k]);
    worst = wf_worse(worst, bound[k] > 0 ? e / bound[k] : (e == 0 ? 0 : INFINITY));
  }
  return worst;
}
