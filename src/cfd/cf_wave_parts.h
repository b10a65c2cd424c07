/* The wave stencil's inner kernels (private to cf_wave*.c): the update of
 * one pencil of cells, in one variant per instruction set. cf_wave.c walks
 * the mesh in bands, strips, pairs of rows and pencils and hands each pencil
 * to the variant cf_wave_create picked (cf_wave_use_kernel). Every variant
 * makes the same operations in the same order on every cell, so all give
 * the same bits in one build. */
#ifndef CF_WAVE_PARTS_H
#define CF_WAVE_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "cf_wave.h"

/* A pencil: CF_LANES cells along z of one column, or of a pair of rows'
 * columns, swept along x. Columns are padded so that whole pencils fit
 * (st_mesh_pad_columns). */
enum { CF_LANES = 8 };
typedef long long cf_lanes __attribute__((vector_size(CF_LANES * sizeof(long long))));

/* How an update meets the sponge: not at all, its taper g on u^{n+1}, or
 * on u^{n-1} as well where the last step left that owed (cf_wave.lagged). */
enum { TAPER_NONE, TAPER_NEW, TAPER_BOTH };

/* Where a pencil sits and what its sponge is. */
typedef struct cf_pencil {
  const double *u; /* cur at its first column, row j, cell k */
  double *out;     /* prev there: u^{n-1} in, u^{n+1} out */
  ptrdiff_t sx, sy;
  /* the update's weights: 2 + a c0, then a c1 .. a c4, a = (v dt / h)^2 */
  double b[CF_RADIUS + 1];
  int columns;      /* along x */
  int lanes;        /* of the CF_LANES cells, those below nz */
  int mode;         /* TAPER_... */
  const double *gx; /* the x taper from the first column */
  double gy[2];     /* the y taper of rows j and j + 1 */
  const double *gz; /* the z taper from cell k */
  ptrdiff_t next;   /* from cell k to what the next pencil reads first (z_ends) */
  int k, nz;        /* the pencil's first cell and the column's length */
  /* Where `ends` (z_ends): a row's z neighbours lo (cells k - 4 .. k + 3)
   * and hi (k + 4 .. k + 11) are picked from L, which is the load at k - 4
   * if zload[0] and else the centre C (cells k .. k + 7), and C (for lo) or
   * H, the load at k + 4 if zload[1] and else C (for hi): lane l of lo
   * (h = 0) or hi (1) is lane zsrc[h][l] of the two, negated where bit l of
   * zneg[h] is set. */
  bool zload[2];
  unsigned zneg[2];
  cf_lanes zsrc[2];
} cf_pencil;

/* One pencil's update, `rows` (1 or 2) rows from p->u; `ends`: it reaches
 * past an end of the column (z_ends filled its picks).
 * - avx512: 8 cells a 512-bit vector, a pair of rows at once, each row's 9
 *   x neighbours in registers, the z neighbours by lane shifts (valignq);
 * - avx2: 4 cells a 256-bit vector, a row and half a pencil at a time,
 *   its 9 x neighbours in registers, the z neighbours by lane shifts of 3
 *   loads, the y neighbours loaded (13 of the 16 registers);
 * - generic: avx2's code for any CPU (the compiler's vectors). */
typedef void cf_sweep_fn(int rows, bool ends, const cf_pencil *p);
cf_sweep_fn cf_sweep_avx512, cf_sweep_avx2, cf_sweep_generic;

/* Each variant's update of a vector of cells is g (b0 u - gp o + sum_d b_d
 * s_d) (gp = g for TAPER_BOTH, else 1; no g for TAPER_NONE; s[d - 1] the
 * sum (x + y) + z of the 6 neighbours d cells away, each axis's pair added
 * first), as unfused multiplies and adds (-ffp-contract=off for these
 * files: Clang fuses by default), a reflected cell as 0 - x: the same bits
 * from every variant in every build. */

#endif
