/* The wave stencil's pencil update for AVX-512 (cf_wave_parts.h): 8 cells
 * a vector, a pair of rows at once. In a portable x86-64 build this file's
 * functions carry AVX-512's target attribute and run only where cf_wave.c
 * found AVX-512 (cf_wave_use_kernel); elsewhere (not x86-64) the same
 * source is plain vector code. */
#include "cf_wave_parts.h"

#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* CF_AVX512: the target of everything below. Built for AVX-512 as a whole
 * (-march with AVX-512), nothing to add; in a portable x86-64 build,
 * AVX-512's own attribute (these functions are called only on such CPUs);
 * on other machines, no intrinsics (CF_X86_512 0). */
#if defined(__AVX512F__)
#define CF_AVX512
#define CF_X86_512 1
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CF_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,bmi,bmi2")))
#define CF_X86_512 1
#else
#define CF_AVX512
#define CF_X86_512 0
#endif
#define CF_INLINE static inline __attribute__((always_inline)) CF_AVX512

typedef double cf_vec __attribute__((vector_size(CF_LANES * sizeof(double))));

CF_INLINE cf_vec vload(const double *p) {
  cf_vec v;
  memcpy(&v, p, sizeof v);
  return v;
}

CF_INLINE void vstore(double *p, cf_vec v) { memcpy(p, &v, sizeof v); }

/* The z neighbours of a vector of cells k .. k + 7: with lo the cells
 * k - 4 .. k + 3 and hi k + 4 .. k + 11, ZSHIFT(lo, hi, e) (e a literal, 1
 * to 7) is cells k + e - 4 .. k + e + 3. Two loads and six lane shifts
 * instead of eight loads: the loads are what limits the loop (on the AMD
 * EPYC VM, in the second-level cache, it ran 1.8x faster with no z loads at
 * all, 1.4x with these shifts). With AVX-512 a shift is one valignq, which
 * neither GCC nor Clang picks for the portable shuffle (a two-source
 * permute, slower). */
#if CF_X86_512
#define ZSHIFT(lo, hi, e) \
  _mm512_castsi512_pd(    \
      _mm512_alignr_epi64(_mm512_castpd_si512(hi), _mm512_castpd_si512(lo), (e)))
#else
#define ZSHIFT(lo, hi, e) \
  __builtin_shufflevector(lo, hi, e, e + 1, e + 2, e + 3, e + 4, e + 5, e + 6, e + 7)
#endif

CF_INLINE cf_vec splat(double x) { return (cf_vec){x, x, x, x, x, x, x, x}; }

/* a b + c, not fused: every variant and every build rounds alike
 * (cf_wave_parts.h). */
CF_INLINE cf_vec vfma(cf_vec a, cf_vec b, cf_vec c) { return a * b + c; }

/* One update with its taper g: g (2 u - gp o + a lap), gp = g for
 * TAPER_BOTH, else 1 (and no g at all for TAPER_NONE), with a folded into
 * the weights (b, pencil.b) and s[d - 1] the sum of the 6 neighbours d
 * cells away: 5 FMAs where a separate sum and update take 13 operations
 * (the last bits differ from lap's). */
CF_INLINE cf_vec leap(int mode, cf_vec u, cf_vec o, const cf_vec s[CF_RADIUS],
                          const double b[CF_RADIUS + 1], cf_vec g) {
  cf_vec t = vfma(splat(b[0]), u, -(mode == TAPER_BOTH ? g * o : o));
  for (int d = 1; d <= CF_RADIUS; d++) t = vfma(splat(b[d]), s[d - 1], t);
  return mode == TAPER_NONE ? t : g * t;
}

/* The lanes of a:b that src names, negated where neg's bits are set. */
CF_INLINE cf_vec zpick(cf_vec a, cf_vec b, cf_lanes src, unsigned neg) {
#if CF_X86_512
  __m512d v = _mm512_permutex2var_pd((__m512d)a, (__m512i)src, (__m512d)b);
  return (cf_vec)_mm512_mask_sub_pd(v, (__mmask8)neg, _mm512_setzero_pd(), v);
#else
  double ab[2 * CF_LANES], r[CF_LANES];
  vstore(ab, a), vstore(ab + CF_LANES, b);
  for (int l = 0; l < CF_LANES; l++) r[l] = neg >> l & 1 ? 0 - ab[src[l]] : ab[src[l]];
  return vload(r);
#endif
}

/* The update of one pencil: CF_LANES cells from k of the columns along x
 * in row j and, when `rows` is 2, row j + 1. It sweeps along x holding each
 * row's 9 x neighbours in registers (a column is loaded once, where 9
 * cells read it), loads the y neighbours (the two rows share 6 of their 8),
 * and the z neighbours from the centre column, reflected past its ends
 * where `ends`. `rows`, `ends` and `mode` are constants where it is called:
 * each use compiles to its own loop. */
CF_INLINE void sweep_pencil(int rows, bool ends, int mode, const cf_pencil *p) {
  const double *restrict u = p->u;
  double *restrict out = p->out;
  const ptrdiff_t sx = p->sx, sy = p->sy;
  const int columns = p->columns, lanes = p->lanes;
  const double *restrict gx = p->gx, gy[2] = {p->gy[0], p->gy[1]};
  const double b[CF_RADIUS + 1] = {p->b[0], p->b[1], p->b[2], p->b[3], p->b[4]};
  _Static_assert(CF_LANES == 8 && CF_RADIUS == 4, "the lane numbers below");
  const cf_lanes keep = (cf_lanes){0, 1, 2, 3, 4, 5, 6, 7} < lanes;
  const cf_vec gz = mode == TAPER_NONE ? (cf_vec){0} : vload(p->gz);
  const ptrdiff_t next = p->next;
  const bool zload[2] = {p->zload[0], p->zload[1]};
  const unsigned zneg[2] = {p->zneg[0], p->zneg[1]};
  const cf_lanes zsrc[2] = {p->zsrc[0], p->zsrc[1]};
  cf_vec w0[2 * CF_RADIUS + 1], w1[2 * CF_RADIUS + 1]; /* the x windows of rows j, j + 1 */
  for (int q = 0; q < 2 * CF_RADIUS; q++) {
    w0[q] = vload(u + (q - CF_RADIUS) * sx);
    if (rows == 2) w1[q] = vload(u + sy + (q - CF_RADIUS) * sx);
  }
  /* The next pencil's line of the 4 columns either side of the strip: no
   * earlier pair of rows read them, so they come from memory. */
  for (int q = 0; q < CF_RADIUS; q++)
    for (int r = 0; r < rows; r++) {
      __builtin_prefetch(u + r * sy + next + (q - CF_RADIUS) * sx, 0, 1);
      __builtin_prefetch(u + r * sy + next + (columns + q) * sx, 0, 1);
    }
  for (int i = 0; i < columns; i++) {
    const double *c = u + i * sx; /* the centre column of row j */
    double *o = out + i * sx;
    /* The lines the next pencil along z first reads from memory, all as
     * reads with the T2 hint, u^{n-1}'s too though the pencil writes them:
     * on the AMD EPYC prefetchw for those ran 0.91x, prefetchnta 0.94x,
     * and T0 for all 0.83x (T1 the same as T2). */
    __builtin_prefetch(c + 4 * sy + next, 0, 1);
    __builtin_prefetch(o + next, 0, 1);
    if (rows == 2) {
      __builtin_prefetch(c + 5 * sy + next, 0, 1);
      __builtin_prefetch(o + sy + next, 0, 1);
    }
    w0[2 * CF_RADIUS] = vload(c + CF_RADIUS * sx);
    if (rows == 2) w1[2 * CF_RADIUS] = vload(c + sy + CF_RADIUS * sx);
    cf_vec ym[CF_RADIUS], yp[CF_RADIUS + 1]; /* rows j - d and j + d */
    for (int d = 1; d <= CF_RADIUS; d++) ym[d - 1] = vload(c - d * sy);
    yp[0] = rows == 2 ? w1[CF_RADIUS] : vload(c + sy);
    for (int d = 2; d <= CF_RADIUS + rows - 1; d++) yp[d - 1] = vload(c + d * sy);
    for (int r = 0; r < rows; r++) {
      const cf_vec *win = r == 0 ? w0 : w1;
      const double *cr = c + r * sy;
      cf_vec x[CF_RADIUS], y[CF_RADIUS], z[CF_RADIUS];
      for (int d = 1; d <= CF_RADIUS; d++) {
        x[d - 1] = win[CF_RADIUS - d] + win[CF_RADIUS + d];
        /* row j + 1's neighbours d below are row j's d - 1 below */
        cf_vec below = r == 0 ? ym[d - 1] : d == 1 ? w0[CF_RADIUS] : ym[d - 2];
        y[d - 1] = below + yp[r + d - 1];
      }
      cf_vec lo, hi;
      if (ends) {
        const cf_vec C = win[CF_RADIUS], L = zload[0] ? vload(cr - CF_RADIUS) : C,
                     H = zload[1] ? vload(cr + CF_RADIUS) : C;
        lo = zpick(L, C, zsrc[0], zneg[0]), hi = zpick(L, H, zsrc[1], zneg[1]);
      } else {
        lo = vload(cr - CF_RADIUS), hi = vload(cr + CF_RADIUS);
      }
      z[0] = ZSHIFT(lo, hi, 3) + ZSHIFT(lo, hi, 5);
      z[1] = ZSHIFT(lo, hi, 2) + ZSHIFT(lo, hi, 6);
      z[2] = ZSHIFT(lo, hi, 1) + ZSHIFT(lo, hi, 7);
      z[3] = lo + hi;
      cf_vec g = {0};
      if (mode != TAPER_NONE) g = gz * (gx[i] * gy[r]);
      double *orow = o + r * sy;
      cf_vec old = vload(orow);
      cf_vec sum[CF_RADIUS];
      for (int d = 0; d < CF_RADIUS; d++) sum[d] = x[d] + y[d] + z[d];
      cf_vec next = leap(mode, win[CF_RADIUS], old, sum, b, g);
      if (lanes < CF_LANES) /* cells past nz keep what they hold */
        next = (cf_vec)(((cf_lanes)next & keep) | ((cf_lanes)old & ~keep));
      vstore(orow, next);
    }
    for (int q = 0; q < 2 * CF_RADIUS; q++) {
      w0[q] = w0[q + 1];
      if (rows == 2) w1[q] = w1[q + 1];
    }
  }
}

/* sweep_pencil with `rows`, `ends` and `mode` made constants. */
#define CF_SWEEP(rows, ends, mode)               \
  case ((rows) - 1) * 6 + (ends) * 3 + (mode): \
    sweep_pencil(rows, ends, mode, p);         \
    break
CF_AVX512 void cf_sweep_avx512(int rows, bool ends, const cf_pencil *p) {
  switch ((rows - 1) * 6 + ends * 3 + p->mode) {
    CF_SWEEP(1, false, TAPER_NONE);
    CF_SWEEP(1, false, TAPER_NEW);
    CF_SWEEP(1, false, TAPER_BOTH);
    CF_SWEEP(1, true, TAPER_NONE);
    CF_SWEEP(1, true, TAPER_NEW);
    CF_SWEEP(1, true, TAPER_BOTH);
    CF_SWEEP(2, false, TAPER_NONE);
    CF_SWEEP(2, false, TAPER_NEW);
    CF_SWEEP(2, false, TAPER_BOTH);
    CF_SWEEP(2, true, TAPER_NONE);
    CF_SWEEP(2, true, TAPER_NEW);
    CF_SWEEP(2, true, TAPER_BOTH);
  }
}
#undef CF_SWEEP
