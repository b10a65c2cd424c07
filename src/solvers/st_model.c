/* The wafer model of one stencil-solver iteration (st_model.h), after the SDK's published
 * 7-point SpMV and solvers: the SpMVs, the dot products and vector updates, and the
 * allreduces of each method. */
#include "st_model.h"

/* The per-cell vector work and allreduces of an iteration, as the SDK's
 * published solvers run it (csl-examples benchmarks/SdkRuntime: bicgstab,
 * conjugateGradient and powerMethod, kernel.csl): a dot product is an
 * `@map` of a multiply-add over two vectors (blas.csl `dot`), accumulated in
 * fp32; an update an FMAC; every allreduce one value. */
static wf_range dot_cell(const wf_hw *hw, int reads) {
  return wf_model_vec(hw, WF_OP_FMAC, WF_FP32, 1, reads, 0);
}

static wf_range axpy_cell(const wf_hw *hw, wf_prec p) {
  return wf_model_vec(hw, WF_OP_FMAC, p, 1, 2, 1);
}

/* One SpMV as the SDK's published 7-point kernel runs it (csl-examples
 * benchmark-libs/stencil_3d_7pts/wse2/pe.csl): the sum zeroed; the brick's
 * face values sent to each neighbour (a send a direction, no multicast)
 * while the neighbours' faces are moved from the fabric into buffers, one
 * phase of wf_model_phase; then the 7 terms, each an FMAC over SRAM
 * operands (the buffers, x, the sum and, for a stored operator, the
 * coefficient; otherwise a scalar coefficient), the 4 lateral after the
 * receives. One value a 32-bit wavelet. */
static wf_range spmv_cycles(const wf_hw *hw, const wf_grid *g, double cells, double face_words,
                            bool stored, wf_prec p) {
  wf_range zero = wf_model_vec(hw, WF_OP_MOV, p, cells, 0, 1);
  wf_range receive = wf_model_receive(hw, face_words);
  wf_range exchange = wf_model_phase(hw, zero, receive, face_words, face_words);
  wf_range terms = wf_model_vec(hw, WF_OP_FMAC, p, 7 * cells, stored ? 3 : 2, 1);
  return wf_range_plus(wf_range_add(exchange, terms), wf_model_latency(hw, g->max_link_hops));
}

st_model st_model_iteration(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz,
                            st_method method, bool stored, wf_prec prec) {
  st_model m = {0};
  double cells = (double)bx * by * nz;
  int vectors = 4, extra_flops = 0;
  wf_range vec = wf_range_of(0);
  switch (method) {
  case ST_BICGSTAB: /* v = A p, t = A s; r0.v, t.s, t.t, r0.r, r.r; 6 updates */
    m.spmvs = 2, m.dots = 5, m.updates = 6, m.allreduces = 5, vectors = 7;
    vec = wf_range_scale(dot_cell(hw, 2), m.dots);
    break;
  case ST_POWER: /* y = A x; |y| in two passes (the largest |y_i|, then the scaled
                    squares), an allreduce each; x = y / |y| element by element */
    m.spmvs = 1, m.dots = 2, m.updates = 0, m.allreduces = 2, vectors = 2;
    vec = wf_range_scale(dot_cell(hw, 1), m.dots);
    vec = wf_range_add(vec, wf_model_scalar(hw, 1, 0, 0));
    extra_flops = 1;
    break;
  case ST_PCG: /* CG with z = D^-1 r (an SDK solver does not precondition) */
    vectors = 5, extra_flops = 1;
    vec = wf_model_vec(hw, WF_OP_MUL, prec, 1, stored ? 2 : 1, 1);
    /* fall through */
  default: /* w = A p; w.p, r.r; p, x, r updated */
    m.spmvs = 1, m.dots = 2, m.updates = 3, m.allreduces = 2;
    vec = wf_range_add(vec, wf_range_scale(dot_cell(hw, 2), m.dots));
  }
  vec = wf_range_add(vec, wf_range_scale(axpy_cell(hw, prec), m.updates));
  m.vector = wf_range_scale(vec, cells);

  /* Each face's values go to its neighbour and theirs come in. */
  double word = wf_model_words(hw, (size_t)wf_prec_bytes(prec));
  m.input_words = (2.0 * bx + 2.0 * by) * nz * word;
  m.output_words = m.input_words;
  m.spmv = wf_range_scale(spmv_cycles(hw, g, cells, m.input_words, stored, prec), m.spmvs);
  m.reduce = m.allreduces * wf_model_reduce_cycles(hw, g, 1, true);

  m.cycles = wf_range_plus(wf_range_add(m.spmv, m.vector), m.reduce);
  m.seconds = wf_model_seconds(hw, m.cycles);
  m.flops_per_cell = m.spmvs * 14.0 + 2.0 * m.dots + 2.0 * m.updates + extra_flops;
  int coef = stored ? 7 + (method == ST_PCG ? 1 : 0) : 0;
  m.arrays = vectors + coef;
  m.bytes_per_pe = cells * wf_prec_bytes(prec) * m.arrays;
  return m;
}
