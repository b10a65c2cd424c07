/* The wafer model of one stencil-solver iteration (docs/model.md, "Stencil
 * solvers"), after the kernels Cerebras publishes with its SDK (the 7-point
 * SpMV, BiCGSTAB, CG, the power method): each PE works on its brick of bx x
 * by columns of nz cells; the operator is stored (7 coefficient arrays, as
 * SC20 and MFIX hold their systems) or has a coefficient per direction (the
 * constant Laplacian); vectors in fp16 or fp32, dot products accumulated
 * and reduced in fp32.
 *
 * An SpMV exchanges the brick's faces with its 4 neighbours (one phase of
 * docs/model.md's "What overlaps what": the received values moved into
 * buffers, each face sent to its neighbour), then runs its 7 terms on SRAM
 * operands. The allreduces (one value each) are not overlapped. */
#ifndef ST_MODEL_H
#define ST_MODEL_H

#include <stdbool.h>

#include "st_krylov.h"
#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_model.h"

typedef struct st_model {
  wf_range spmv;      /* cycles of the SpMVs (wf_model_phase) */
  wf_range vector;    /* cycles of the dot products and vector updates */
  double reduce;      /* cycles of the allreduces */
  wf_range cycles;    /* per iteration */
  wf_range seconds;   /* per iteration */
  double input_words; /* words a PE takes in per SpMV */
  double output_words; /* words it sends per SpMV */
  int spmvs, dots, updates, allreduces;
  double flops_per_cell; /* per iteration */
  double bytes_per_pe;   /* vectors and stored coefficients */
  int arrays;            /* of nz * bx * by values each */
} st_model;

/* The operator is stored when `stored`; `prec` is the vectors' precision. */
st_model st_model_iteration(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz,
                            st_method method, bool stored, wf_prec prec);

#endif
