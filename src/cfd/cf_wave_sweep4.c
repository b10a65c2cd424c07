/* The wave stencil's pencil update with 4 cells a vector (cf_wave_parts.h),
 * for AVX2 and for any CPU. AVX2 has 16 registers of 4 doubles, so the
 * avx512 variant's blocking (two rows' 9-wide x windows, 36 such
 * registers) would spill. Here a pencil goes a row and half a pencil (4
 * cells) at a time, along x, holding that half's 9 x neighbours in
 * registers (one load a column: the window's new end), its z neighbours
 * from 3 loads by lane shifts, and its 8 y neighbours as loads: 12 loads
 * a vector where loading every neighbour takes 26, and 13 registers. */
#include "cf_wave_parts.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__AVX2__) && defined(__FMA__)
#define CF_AVX2
#else
#define CF_AVX2 __attribute__((target("avx2,fma")))
#endif
#else
#define CF_AVX2
#endif
#define CF_INLINE static inline __attribute__((always_inline))

enum { CF_HALF = 4, CF_WINDOW = 2 * CF_RADIUS + 1 };
typedef double v4 __attribute__((vector_size(CF_HALF * sizeof(double))));
typedef long long l4 __attribute__((vector_size(CF_HALF * sizeof(long long))));

CF_INLINE v4 load4(const double *p) {
  v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

CF_INLINE void store4(double *p, v4 v) { memcpy(p, &v, sizeof v); }

CF_INLINE v4 splat4(double x) { return (v4){x, x, x, x}; }

/* Lanes e .. e + 3 of lo:hi (e a literal, 1 to 3): the cells e further
 * along z. */
#if defined(__clang__) || __GNUC__ >= 12
#define ZSHIFT4(lo, hi, e) __builtin_shufflevector(lo, hi, e, e + 1, e + 2, e + 3)
#else
#define ZSHIFT4(lo, hi, e) __builtin_shuffle(lo, hi, (l4){e, e + 1, e + 2, e + 3})
#endif

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

/* What a half-pencil's sweep needs, read once from the pencil: the
 * compiler cannot keep fields of *p in registers across the stores. */
typedef struct half {
  const double *u;
  double *out;
  ptrdiff_t sx, sy, next;
  int columns;
  int k, nz; /* the pencil's first cell and the column's length */
  bool mask;  /* some of its cells lie past nz */
  l4 keep;    /* which do not */
  double b[CF_RADIUS + 1];
  const double *gx;
  double gy;
  v4 gz;
} half;

/* The update of the half-pencil from cell h (0 or CF_HALF) of one row
 * along x (`ends`, `mode` and h constants where it is called: each use
 * compiles to its own loop). The operations and their order are the avx512
 * variant's, lane for lane. */
CF_INLINE void sweep_half(bool ends, int mode, int h, const half *q) {
  const double *restrict u = q->u + h;
  double *restrict out = q->out + h;
  const ptrdiff_t sx = q->sx, sy = q->sy;
  const v4 b0 = splat4(q->b[0]), b1 = splat4(q->b[1]), b2 = splat4(q->b[2]),
           b3 = splat4(q->b[3]), b4 = splat4(q->b[4]);
  v4 w[CF_WINDOW]; /* the x neighbours: columns i - 4 .. i + 4 */
  for (int s = 0; s < CF_WINDOW - 1; s++) w[s] = load4(u + (s - CF_RADIUS) * sx);
  double zl[2 * CF_LANES];
  for (int i = 0; i < q->columns; i++) {
    const double *c = u + i * sx;
    double *o = out + i * sx;
    if (h == 0) {
      /* The line two pencils on, of this column and of the row 4 ahead:
       * one pencil on (the avx512 variant's) ran 0.77x at 256^3 on the
       * AMD EPYC (Zen 4), three on 0.95x. */
      __builtin_prefetch(c + 4 * sy + q->next + CF_LANES, 0, 1);
      __builtin_prefetch(o + q->next + CF_LANES, 0, 1);
    }
    w[CF_WINDOW - 1] = load4(c + CF_RADIUS * sx);
    const v4 C = w[CF_RADIUS];
    v4 zlo, zmid = C, zhi; /* its z neighbours: cells -4 .. -1, 0 .. 3, 4 .. 7 from c */
    if (ends) {
      z_line(zl, c - h, q->k, q->nz);
      zlo = load4(zl + h), zmid = load4(zl + CF_RADIUS + h), zhi = load4(zl + 2 * CF_RADIUS + h);
    } else {
      zlo = load4(c - CF_RADIUS), zhi = load4(c + CF_RADIUS);
    }
    v4 s1 = (w[3] + w[5] + (load4(c - sy) + load4(c + sy))) +
            (ZSHIFT4(zlo, zmid, 3) + ZSHIFT4(zmid, zhi, 1));
    v4 s2 = (w[2] + w[6] + (load4(c - 2 * sy) + load4(c + 2 * sy))) +
            (ZSHIFT4(zlo, zmid, 2) + ZSHIFT4(zmid, zhi, 2));
    v4 s3 = (w[1] + w[7] + (load4(c - 3 * sy) + load4(c + 3 * sy))) +
            (ZSHIFT4(zlo, zmid, 1) + ZSHIFT4(zmid, zhi, 3));
    v4 s4 = (w[0] + w[8] + (load4(c - 4 * sy) + load4(c + 4 * sy))) + (zlo + zhi);
    const v4 old = load4(o);
    v4 g = {0};
    if (mode != TAPER_NONE) g = q->gz * (q->gx[i] * q->gy);
    v4 t = b0 * C + -(mode == TAPER_BOTH ? g * old : old);
    t = b1 * s1 + t;
    t = b2 * s2 + t;
    t = b3 * s3 + t;
    t = b4 * s4 + t;
    v4 next = mode == TAPER_NONE ? t : g * t;
    if (q->mask) next = (v4)(((l4)next & q->keep) | ((l4)old & ~q->keep));
    store4(o, next);
    for (int s = 0; s < CF_WINDOW - 1; s++) w[s] = w[s + 1];
  }
}

/* The update of a pencil: each row, each half. */
CF_INLINE void sweep4(int rows, bool ends, int mode, const cf_pencil *p) {
  /* The next pencil's line of the 4 columns either side of the strip: no
   * earlier pair of rows read them, so they come from memory. */
  for (int q = 0; q < CF_RADIUS; q++)
    for (int r = 0; r < rows; r++) {
      __builtin_prefetch(p->u + r * p->sy + p->next + (q - CF_RADIUS) * p->sx, 0, 1);
      __builtin_prefetch(p->u + r * p->sy + p->next + (p->columns + q) * p->sx, 0, 1);
    }
  for (int r = 0; r < rows; r++)
    for (int h = 0; h < CF_LANES; h += CF_HALF) {
      const half q = {.u = p->u + r * p->sy,
                      .out = p->out + r * p->sy,
                      .sx = p->sx,
                      .sy = p->sy,
                      .next = p->next,
                      .columns = p->columns,
                      .k = p->k,
                      .nz = p->nz,
                      .mask = p->lanes < h + CF_HALF,
                      .keep = (l4){h, h + 1, h + 2, h + 3} < p->lanes,
                      .b = {p->b[0], p->b[1], p->b[2], p->b[3], p->b[4]},
                      .gx = p->gx,
                      .gy = mode == TAPER_NONE ? 1 : p->gy[r],
                      .gz = mode == TAPER_NONE ? splat4(1) : load4(p->gz + h)};
      if (h == 0)
        sweep_half(ends, mode, 0, &q);
      else
        sweep_half(ends, mode, CF_HALF, &q);
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
