/* The wafer model of one step of the wave stencil (docs/model.md, "Wave
 * stencil (SC22)"), on one PE. Two kernels:
 *
 *  - this code's: the PE's brick of bx x by columns of nz cells, every
 *    operand from SRAM, then the 4-column halo across each face;
 *  - SC22's (model_counts = sc22): one column a PE, instruction by
 *    instruction as the kernel Cerebras published with its SDK runs it
 *    (csl-examples, benchmarks/25-pt-stencil: 60 floating-point operations
 *    a cell, the paper's 57 and its own value three times more). Its
 *    phases follow each other:
 *    the neighbours' columns stream in, scaled as they arrive; the received
 *    products are summed; then the z neighbours and the update. */
#ifndef CF_MODEL_H
#define CF_MODEL_H

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_model.h"

typedef struct cf_model {
  /* cycles a step, and its parts */
  wf_range exchange; /* SC22's: the x and y neighbours in, scaled on arrival */
  wf_range reduce;   /* SC22's: what came in, summed */
  wf_range update;   /* the z neighbours and the update (ours: the whole stencil) */
  wf_range halo;     /* ours: the halo, after the update */
  wf_range cycles;   /* the step */
  int chunks, chunk; /* SC22's: the column goes out in `chunks` of `chunk` cells */
  double flops_per_cell; /* the floating-point operations the kernel executes, counted
                            from the instructions the model charges */
} cf_model;

/* SC22's kernel on a column of nz fp32 cells. */
cf_model cf_model_sc22_step(const wf_hw *hw, int nz);

/* This code's kernel on a bx x by x nz brick, values in precision p, on grid g. */
cf_model cf_model_wave_step(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz, wf_prec p);

#endif
