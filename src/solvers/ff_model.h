/* The wafer model of one pencil FFT (docs/model.md, "FFT"), as ICS23's
 * wsFFT runs it: each PE transforms its pencils with radix-2 butterflies at
 * its SIMD rate, and the two transposes are all-to-alls within PE rows,
 * then within PE columns (wf_model_alltoall_cycles), both as the SDK's
 * published FFT kernel does them. Stages do not overlap. */
#ifndef FF_MODEL_H
#define FF_MODEL_H

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_model.h"

typedef struct ff_model {
  wf_range fft[3];     /* cycles of the local transforms along z, x, y */
  wf_range transpose[2]; /* cycles of the row and column all-to-alls */
  wf_range cycles, seconds;
  double flops;                /* 5 N log2 N over the transformed axes */
  double bytes_per_pe;         /* pencils, a receive buffer and the twiddles */
  double row_words, col_words; /* words one PE sends each PE of its line */
} ff_model;

/* Cycles of one complex radix-2 FFT of length n in precision p, as the SDK's
 * published kernel runs it: ceil(log2 n) passes, each n MUL, n FMAC (by
 * scalar twiddle factors) and 2n ADD over reals, and 3n moves on all but
 * the last: 5 n flops a pass, 5 n log2 n in all. */
wf_range ff_model_line(const wf_hw *hw, wf_prec p, int n);

/* An nx x ny x nz complex transform along `dims` axes (1: z; 2: z, x; 3:
 * all) on the grid's pe_nx x pe_ny PEs, values in precision p. */
ff_model ff_model_transform(const wf_hw *hw, const wf_grid *g, int pe_nx, int pe_ny, const int n[3],
                            int dims, wf_prec p);

#endif
