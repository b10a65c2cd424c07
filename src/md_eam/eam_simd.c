/* The force loops' variants (eam_simd.h): a scalar compaction, and on x86-64
 * table terms of 4 lanes (AVX2) and of 8 (AVX-512, with its compaction). Each
 * lane does the scalar code's operations in its order (no fused multiply-add:
 * -ffp-contract=off), so all give the same bits. */
#include "eam_simd.h"

#include <stdbool.h>
#include <string.h>

static int compact_scalar(const md_vec *restrict x, const double xi[3], const int *restrict list,
                          int k0, int k1, double cutsq, int *restrict cj, double *restrict crsq,
                          int n) {
  for (int k = k0; k < k1; k++) { /* branch-free: every entry written, n counts those inside */
    const int j = list[k];
    const double dx = xi[0] - x[j][0], dy = xi[1] - x[j][1], dz = xi[2] - x[j][2];
    const double rsq = dx * dx + dy * dy + dz * dz;
    cj[n] = j;
    crsq[n] = rsq;
    n += rsq < cutsq;
  }
  return n;
}

/* No scalar terms: eam_force.c's fused loops look the tables up pair by
 * pair, which hides the loads' latency that separate passes would expose. */
static const eam_simd_kernel scalar = {"scalar", compact_scalar, NULL, NULL};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define EAM_AVX2 __attribute__((target("avx2")))
#define EAM_AVX512 __attribute__((target("avx512f,avx512vl,avx2")))

/* The first n of 8 lanes (none for n <= 0, all for n >= 8). */
static inline __mmask8 lanes(int n) {
  return n <= 0 ? 0 : n >= 8 ? 0xff : (__mmask8)((1u << n) - 1);
}

/* The spline rows of 4 or 8 pairs, transposed: col[c] holds coefficient c
 * of every lane's row. Each row is read as 8 doubles (its 7 and the next
 * row's first: a table has n + 1 rows and m < n). Gathers read the same,
 * but with them the loops ran slower than the scalar ones on the Zen 4 here. */
EAM_AVX2 static inline void transpose4(__m256d a, __m256d b, __m256d c, __m256d d, __m256d *col) {
  const __m256d ab0 = _mm256_unpacklo_pd(a, b), ab1 = _mm256_unpackhi_pd(a, b);
  const __m256d cd0 = _mm256_unpacklo_pd(c, d), cd1 = _mm256_unpackhi_pd(c, d);
  col[0] = _mm256_permute2f128_pd(ab0, cd0, 0x20), col[1] = _mm256_permute2f128_pd(ab1, cd1, 0x20);
  col[2] = _mm256_permute2f128_pd(ab0, cd0, 0x31), col[3] = _mm256_permute2f128_pd(ab1, cd1, 0x31);
}

EAM_AVX2 static inline void columns4(const double (*tab)[7], const int m[4], __m256d col[8]) {
  const double *r0 = tab[m[0]], *r1 = tab[m[1]], *r2 = tab[m[2]], *r3 = tab[m[3]];
  transpose4(_mm256_loadu_pd(r0), _mm256_loadu_pd(r1), _mm256_loadu_pd(r2), _mm256_loadu_pd(r3),
             col);
  transpose4(_mm256_loadu_pd(r0 + 4), _mm256_loadu_pd(r1 + 4), _mm256_loadu_pd(r2 + 4),
             _mm256_loadu_pd(r3 + 4), col + 4);
}

EAM_AVX512 static inline void columns8(const double (*tab)[7], const int m[8], __m512d col[8]) {
  __m512d row[8], t[8], u[8];
  for (int l = 0; l < 8; l++) row[l] = _mm512_loadu_pd(tab[m[l]]);
  for (int l = 0; l < 8; l += 2) { /* t[l]: even coefficients of rows l, l+1; t[l+1]: odd */
    t[l] = _mm512_unpacklo_pd(row[l], row[l + 1]);
    t[l + 1] = _mm512_unpackhi_pd(row[l], row[l + 1]);
  }
  for (int l = 0; l < 8; l += 4) /* u[l + c]: coefficients c and c + 4 of rows l..l+3 */
    for (int c = 0; c < 2; c++) {
      u[l + c] = _mm512_shuffle_f64x2(t[l + c], t[l + 2 + c], 0x88);
      u[l + 2 + c] = _mm512_shuffle_f64x2(t[l + c], t[l + 2 + c], 0xdd);
    }
  for (int c = 0; c < 4; c++) {
    col[c] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0x88);
    col[c + 4] = _mm512_shuffle_f64x2(u[c], u[4 + c], 0xdd);
  }
}

/* eam_node on 4 lanes: the nodes in m, and p. */
EAM_AVX2 static inline __m256d node4(const eam_simd_tables *t, __m256d r, int m[4]) {
  const __m256d q = r * _mm256_set1_pd(t->inv_delta) + _mm256_set1_pd(1.0);
  const __m128i mv = _mm_min_epi32(_mm256_cvttpd_epi32(q), _mm_set1_epi32(t->n - 1));
  _mm_storeu_si128((__m128i *)m, mv);
  return _mm256_min_pd(q - _mm256_cvtepi32_pd(mv), _mm256_set1_pd(1.0));
}

EAM_AVX2 static void density_avx2(const eam_simd_tables *t, double *r, int count, double *v) {
  for (int k = 0; k < count; k += 4) {
    int m[4];
    __m256d c[8];
    const __m256d rk = _mm256_sqrt_pd(_mm256_loadu_pd(r + k));
    const __m256i mine = /* lanes below count */
        _mm256_cmpgt_epi64(_mm256_set1_epi64x(count - k), _mm256_setr_epi64x(0, 1, 2, 3));
    _mm256_maskstore_pd(r + k, mine, rk); /* r^2 becomes r: only this block's */
    const __m256d p = node4(t, rk, m);
    columns4(t->rho, m, c);
    _mm256_storeu_pd(v + k, ((c[3] * p + c[4]) * p + c[5]) * p + c[6]);
  }
}

EAM_AVX2 static void force_avx2(const eam_simd_tables *t, const double *r, int count,
                                double *recip, double *phi, double *phip, double *rhop,
                                double *rr) {
  for (int k = 0; k < count; k += 4) {
    int m[4];
    __m256d z[8], d[8];
    const __m256d rk = _mm256_loadu_pd(r + k);
    const __m256d inv_r = _mm256_set1_pd(1.0) / rk, p = node4(t, rk, m);
    columns4(t->z2r, m, z);
    columns4(t->rho, m, d);
    const __m256d value = ((z[3] * p + z[4]) * p + z[5]) * p + z[6];
    const __m256d slope = (z[0] * p + z[1]) * p + z[2], ph = value * inv_r;
    _mm256_storeu_pd(recip + k, inv_r);
    _mm256_storeu_pd(phi + k, ph);
    _mm256_storeu_pd(phip + k, slope * inv_r - ph * inv_r);
    _mm256_storeu_pd(rhop + k, (d[0] * p + d[1]) * p + d[2]);
    _mm256_storeu_pd(rr + k, rk * rk);
  }
}

/* eam_node on 8 lanes. */
EAM_AVX512 static inline __m512d node8(const eam_simd_tables *t, __m512d r, int m[8]) {
  const __m512d q = r * _mm512_set1_pd(t->inv_delta) + _mm512_set1_pd(1.0);
  const __m256i mv = _mm256_min_epi32(_mm512_cvttpd_epi32(q), _mm256_set1_epi32(t->n - 1));
  _mm256_storeu_si256((__m256i *)m, mv);
  return _mm512_min_pd(q - _mm512_cvtepi32_pd(mv), _mm512_set1_pd(1.0));
}

EAM_AVX512 static void density_avx512(const eam_simd_tables *t, double *r, int count, double *v) {
  for (int k = 0; k < count; k += 8) {
    int m[8];
    __m512d c[8];
    const __m512d rk = _mm512_sqrt_pd(_mm512_loadu_pd(r + k));
    _mm512_mask_storeu_pd(r + k, lanes(count - k), rk); /* r^2 becomes r: only this block's */
    const __m512d p = node8(t, rk, m);
    columns8(t->rho, m, c);
    _mm512_storeu_pd(v + k, ((c[3] * p + c[4]) * p + c[5]) * p + c[6]);
  }
}

EAM_AVX512 static void force_avx512(const eam_simd_tables *t, const double *r, int count,
                                    double *recip, double *phi, double *phip, double *rhop,
                                    double *rr) {
  for (int k = 0; k < count; k += 8) {
    int m[8];
    __m512d z[8], d[8];
    const __m512d rk = _mm512_loadu_pd(r + k);
    const __m512d inv_r = _mm512_set1_pd(1.0) / rk, p = node8(t, rk, m);
    columns8(t->z2r, m, z);
    columns8(t->rho, m, d);
    const __m512d value = ((z[3] * p + z[4]) * p + z[5]) * p + z[6];
    const __m512d slope = (z[0] * p + z[1]) * p + z[2], ph = value * inv_r;
    _mm512_storeu_pd(recip + k, inv_r);
    _mm512_storeu_pd(phi + k, ph);
    _mm512_storeu_pd(phip + k, slope * inv_r - ph * inv_r);
    _mm512_storeu_pd(rhop + k, (d[0] * p + d[1]) * p + d[2]);
    _mm512_storeu_pd(rr + k, rk * rk);
  }
}

/* compact_scalar on 8 entries at a time: the positions transposed as the
 * spline rows are (each read as its 3 doubles, masked), the entries inside
 * packed by a compress into a register (Zen 4 compresses to memory slowly). */
EAM_AVX512 static int compact_avx512(const md_vec *restrict x, const double xi[3],
                                     const int *restrict list, int k0, int k1, double cutsq,
                                     int *restrict cj, double *restrict crsq, int n) {
  const __m512d x0 = _mm512_set1_pd(xi[0]), y0 = _mm512_set1_pd(xi[1]);
  const __m512d z0 = _mm512_set1_pd(xi[2]), cut = _mm512_set1_pd(cutsq);
  for (int k = k0; k < k1; k += 8) {
    const __mmask8 live = lanes(k1 - k);
    const __m256i jv = _mm256_maskz_loadu_epi32(live, list + k);
    int j[8];
    _mm256_storeu_si256((__m256i *)j, jv);
    __m512d row[8], t[8], u[6];
    for (int l = 0; l < 8; l++) row[l] = _mm512_maskz_loadu_pd(0x07, x[j[l]]);
    for (int l = 0; l < 8; l += 2) {
      t[l] = _mm512_unpacklo_pd(row[l], row[l + 1]);     /* x, z of rows l, l+1 */
      t[l + 1] = _mm512_unpackhi_pd(row[l], row[l + 1]); /* y */
    }
    for (int h = 0; h < 2; h++) { /* rows 4h..4h+3: u[3h] x, u[3h+1] y, u[3h+2] z */
      u[3 * h] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0x88);
      u[3 * h + 1] = _mm512_shuffle_f64x2(t[4 * h + 1], t[4 * h + 3], 0x88);
      u[3 * h + 2] = _mm512_shuffle_f64x2(t[4 * h], t[4 * h + 2], 0xdd);
    }
    const __m512d dx = x0 - _mm512_shuffle_f64x2(u[0], u[3], 0x88);
    const __m512d dy = y0 - _mm512_shuffle_f64x2(u[1], u[4], 0x88);
    const __m512d dz = z0 - _mm512_shuffle_f64x2(u[2], u[5], 0x88);
    const __m512d rsq = dx * dx + dy * dy + dz * dz;
    const __mmask8 inside = _mm512_cmp_pd_mask(rsq, cut, _CMP_LT_OQ) & live;
    _mm256_storeu_si256((__m256i *)(cj + n), _mm256_maskz_compress_epi32(inside, jv));
    _mm512_storeu_pd(crsq + n, _mm512_maskz_compress_pd(inside, rsq));
    n += __builtin_popcount(inside);
  }
  return n;
}

static const eam_simd_kernel avx2 = {"avx2", compact_scalar, density_avx2, force_avx2};
static const eam_simd_kernel avx512 = {"avx512", compact_avx512, density_avx512, force_avx512};

static bool cpu_runs(const eam_simd_kernel *k) {
  __builtin_cpu_init();
  if (k == &avx512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx2");
  if (k == &avx2) return __builtin_cpu_supports("avx2");
  return true;
}

static const eam_simd_kernel *const variants[] = {&avx512, &avx2, &scalar};
#else
static bool cpu_runs(const eam_simd_kernel *k) { return k == &scalar; }
static const eam_simd_kernel *const variants[] = {&scalar};
#endif

const eam_simd_kernel *eam_simd_pick(const char *want) {
  const bool any = !want || strcmp(want, "auto") == 0;
  for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
    if (any && !cpu_runs(variants[v])) continue;
    if (!any && strcmp(want, variants[v]->name) != 0) continue;
    return cpu_runs(variants[v]) ? variants[v] : NULL;
  }
  return NULL;
}
