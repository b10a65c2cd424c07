/* Dense matrices of the SDK's GEMM and GEMV examples (src/sdk/gemm.c,
 * gemv.c): entries drawn from a counter-based generator, so any rank makes
 * any block of the same matrix, and the check's reference (the whole rows
 * a rank owns, multiplied by the BLAS in one call) shares nothing with the
 * PE tiles but the matrix's definition. */
#ifndef SDK_DENSE_H
#define SDK_DENSE_H

#include <stdbool.h>
#include <stdint.h>

#include "wf_random.h"

/* Which matrix of a problem: its stream of the seed. */
typedef enum { SDK_A = 1, SDK_B = 2, SDK_X = 3, SDK_Y = 4 } sdk_matrix_id;

/* Entry (r, c) of matrix `id` of a problem whose matrices have `cols`
 * columns: uniform in [-1, 1). */
static inline double sdk_entry(uint64_t seed, sdk_matrix_id id, long long r, long long c,
                               long long cols) {
  return 2.0 * wf_uniform(seed * 8 + (uint64_t)id, (uint64_t)(r * cols + c)) - 1.0;
}

/* Rows [r0, r0 + rows) and columns [c0, c0 + ncols) of matrix `id` into
 * a (row-major, leading dimension ld). Stops early, returning false, when
 * wf_signal_stop() (polled a row at a time) asks it to. */
bool sdk_dense_fill(double *a, long long ld, uint64_t seed, sdk_matrix_id id, long long r0,
                    long long rows, long long c0, long long ncols, long long cols);

/* The worst of |got - want| / bound over n entries (0 when all are within;
 * above 1 fails; NaN stays NaN). */
double sdk_dense_worst(const double *got, const double *want, const double *bound, long long n);

#endif
