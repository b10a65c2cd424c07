/* The dense operators, for reference: each rank keeps the dense block of
 * its tiles (rows [i0 nb, ...) x columns [j0 nb, ...), column-major) of
 * every frequency, and multiplies with it as the TLR matrix does, partial
 * products summed over the ranks. */
#ifndef TL_DENSE_H
#define TL_DENSE_H

#include <complex.h>
#include <stdbool.h>

#include "tl_matrix.h"
#include "wf_error.h"

typedef struct tl_dense {
  const tl_layout *l;
  int nfreq;
  int r0, rows, c0, cols; /* this rank's block */
  float complex **block;  /* per frequency, rows x cols, ld = rows */
  float complex *part;    /* scratch: a whole partial product */
} tl_dense;

/* Room for the blocks of the frequencies `used` marks (NULL: all; the
 * others' blocks stay NULL), uninitialised. Collective. */
int tl_dense_create(tl_dense *d, const tl_layout *l, int nfreq, const bool *used, wf_status *st);
void tl_dense_free(tl_dense *d);
/* out = A_f in, or A_f^H in: whole vectors on every rank. Collective. */
void tl_dense_apply(tl_dense *d, int f, bool adjoint, const float complex *in, float complex *out);

#endif
