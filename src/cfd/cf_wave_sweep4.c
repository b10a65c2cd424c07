/* The wave stencil's pencil update with 4 cells a vector (cf_wave_parts.h),
 * for AVX2 and for any CPU. AVX2 has 16 registers of 4 doubles: the
 * avx512 variant's two rows of 9-wide x windows (36 such registers) would
 * spill on every column. Here each row of the pencil goes alone, half a
 * pencil (4 cells) at a time, and every neighbour is a load: the columns a
 * strip sweeps stay in the first- and second-level caches (cf_wave.c), and
 * the loads, two a cycle, keep up with what memory delivers. */
#include "cf_wave_parts.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX2__)
#define CF_AVX2 __attribute__((target("avx2,fma")))
#else
#define CF_AVX2
#endif
#define CF_INLINE static inline __attribute__((always_inline))

enum { CF_HALF = 4 };
typedef double v4 __attribute__((vector_size(CF_HALF * sizeof(double))));
typedef long long l4 __attribute__((vector_size(CF_HALF * sizeof(long long))));

CF_INLINE v4 load4(const double *p) {
  v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

CF_INLINE void store4(double *p, v4 v) { memcpy(p, &v, sizeof v); }

CF_INLINE v4 splat4(double x) { return (v4){x, x, x, x}; }

/* Cells k - 4 .. k + 11 of the column whose cell k is at c, reflected (odd)
 * past either end as the mesh's free faces are: where the pencil reaches
 * past an end, its z neighbours come from here. Cells past nz + 4 are read
 * by no cell the pencil updates: zero. Negated as 0 - x, as avx512's masked
 * subtraction does (+0 for +0, where -x would give -0). */
CF_INLINE void z_line(double zl[2 * CF_LANES], const double *c, int k, int nz) {
  for (int l = 0; l < 2 * CF_LANES; l++) {
    int g = k - CF_RADIUS + l;
    zl[l] = g < 0                ? 0 - c[-1 - g - k]
            : g < nz             ? c[g - k]
            : g < nz + CF_RADIUS ? 0 - c[2 * nz - 1 - g - k]
                                 : 0;
  }
}

/* The update of one pencil, row by row (`ends` and `mode` constants where
 * it is called: each use compiles to its own loop). The operations and
 * their order are the avx512 variant's, lane for lane. */
CF_INLINE void sweep4(int rows, bool ends, int mode, const cf_pencil *p) {
  const ptrdiff_t sx = p->sx, sy = p->sy;
  const double b[CF_RADIUS + 1] = {p->b[0], p->b[1], p->b[2], p->b[3], p->b[4]};
  double zl[2 * CF_LANES];
  for (int r = 0; r < rows; r++) {
    const double *u = p->u + r * sy;
    double *out = p->out + r * sy;
    for (int i = 0; i < p->columns; i++) {
      const double *c = u + i * sx, *zc = c;
      double *o = out + i * sx;
      /* the next pencil's line of this column and of the row 4 ahead */
      __builtin_prefetch(c + 4 * sy + p->next, 0, 1);
      __builtin_prefetch(o + p->next, 0, 1);
      if (ends) z_line(zl, c, p->k, p->nz), zc = zl + CF_RADIUS;
      const double gxy = mode == TAPER_NONE ? 0 : p->gx[i] * p->gy[r];
      for (int h = 0; h < CF_LANES; h += CF_HALF) {
        v4 s[CF_RADIUS];
        for (int d = 1; d <= CF_RADIUS; d++) {
          v4 x = load4(c + h - d * sx) + load4(c + h + d * sx);
          v4 y = load4(c + h - d * sy) + load4(c + h + d * sy);
          v4 z = load4(zc + h - d) + load4(zc + h + d);
          s[d - 1] = x + y + z;
        }
        const v4 old = load4(o + h);
        const v4 g = mode == TAPER_NONE ? splat4(0) : load4(p->gz + h) * gxy;
        v4 t = splat4(b[0]) * load4(c + h) + -(mode == TAPER_BOTH ? g * old : old);
        for (int d = 1; d <= CF_RADIUS; d++) t = splat4(b[d]) * s[d - 1] + t;
        v4 next = mode == TAPER_NONE ? t : g * t;
        if (p->lanes < h + CF_HALF) { /* cells past nz keep what they hold */
          const l4 keep = (l4){h, h + 1, h + 2, h + 3} < p->lanes;
          next = (v4)(((l4)next & keep) | ((l4)old & ~keep));
        }
        store4(o + h, next);
      }
    }
  }
}

/* sweep4 with `ends` and `mode` made constants. */
#define CF_SWEEP4(ends, mode)                  \
  case (ends) * 3 + (mode):                    \
    sweep4(rows, ends, mode, p);               \
    break
#define CF_SWEEP4_ALL                          \
  switch (ends * 3 + p->mode) {                \
    CF_SWEEP4(false, TAPER_NONE);              \
    CF_SWEEP4(false, TAPER_NEW);               \
    CF_SWEEP4(false, TAPER_BOTH);              \
    CF_SWEEP4(true, TAPER_NONE);               \
    CF_SWEEP4(true, TAPER_NEW);                \
    CF_SWEEP4(true, TAPER_BOTH);               \
  }

CF_AVX2 void cf_sweep_avx2(int rows, bool ends, const cf_pencil *p) { CF_SWEEP4_ALL }

void cf_sweep_generic(int rows, bool ends, const cf_pencil *p) { CF_SWEEP4_ALL }
