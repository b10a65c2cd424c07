/* The wafer model of one stencil-solver iteration (st_model.h): the SpMVs with their input
 * overlapped, the dot products and vector updates, and the allreduces of each method. */
#include "st_model.h"

/* One SpMV per cell. Each of the 7 terms reads its coefficient (stored
 * operator) and the running sum from SRAM and writes the sum back; the z
 * neighbours and the centre come from SRAM, the lateral neighbours from SRAM
 * inside the brick and from the fabric on its faces (a fraction `f` of them:
 * 1 for a single column). `sram` gets the terms on SRAM operands, `fabric`
 * those that take a neighbour's value as it arrives. */
static void spmv_cell(const wf_hw *hw, wf_prec p, bool stored, double f, wf_range *sram,
                      wf_range *fabric) {
  wf_op mul = stored ? WF_OP_FMAC : WF_OP_ADD; /* matrix-free: add the neighbours */
  int c = stored ? 1 : 0;                      /* a coefficient read per term */
  wf_range r = wf_model_vec(hw, WF_OP_MUL, p, 1, 1 + c, 1);       /* centre: a_c x */
  r = wf_range_add(r, wf_model_vec(hw, mul, p, 2, 2 + c, 1));     /* z - 1, z + 1 */
  *sram = wf_range_add(r, wf_model_vec(hw, mul, p, 4 * (1 - f), 2 + c, 1));
  *fabric = wf_model_vec(hw, mul, p, 4 * f, 1 + c, 1);
}

/* `reads`: vector operands read per element of a dot product (r.r reads one). */
static wf_range dot_cell(const wf_hw *hw, int reads) {
  return wf_model_vec(hw, WF_OP_FMAC, WF_FP32, 1, reads, 0); /* fp32 accumulation */
}

static wf_range axpy_cell(const wf_hw *hw, wf_prec p) {
  return wf_model_vec(hw, WF_OP_FMAC, p, 1, 2, 1);
}

st_model st_model_iteration(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz,
                            st_method method, bool stored, wf_prec prec) {
  st_model m = {0};
  double cells = (double)bx * by * nz;
  double f = (2.0 * bx + 2.0 * by) / (4.0 * bx * by);
  double spmv_flops = stored ? 13 : 7;
  int vectors = 4, reads_rr = 1, extra_flops = 0;
  int ks[3] = {1, 1, 0}; /* values of each allreduce */
  wf_range vec = wf_range_of(0);
  switch (method) {
  case ST_BICGSTAB: /* v = A p, t = A s; r0.v | t.s, t.t | r0.r, r.r; 6 updates */
    m.spmvs = 2, m.dots = 5, m.updates = 6, vectors = 7;
    ks[0] = 1, ks[1] = 2, ks[2] = 2;
    vec = wf_range_add(wf_range_scale(dot_cell(hw, 2), 3), wf_range_scale(dot_cell(hw, 1), 2));
    break;
  case ST_POWER: /* y = A x; y.y; x = y / |y| */
    m.spmvs = 1, m.dots = 1, m.updates = 0, vectors = 2;
    ks[1] = 0;
    vec = wf_range_add(dot_cell(hw, 1), wf_model_vec(hw, WF_OP_MUL, prec, 1, 1, 1));
    extra_flops = 1;
    break;
  case ST_PCG: /* CG with z = D^-1 r and r.z */
    reads_rr = 2, vectors = 5, extra_flops = 1;
    vec = wf_model_vec(hw, WF_OP_MUL, prec, 1, stored ? 2 : 1, 1);
    /* fall through */
  default: /* q = A p; p.q | r.r; x, r, p updated */
    m.spmvs = 1, m.dots = 2, m.updates = 3;
    vec = wf_range_add(vec, wf_range_add(dot_cell(hw, 2), dot_cell(hw, reads_rr)));
  }
  vec = wf_range_add(vec, wf_range_scale(axpy_cell(hw, prec), m.updates));
  m.vector = wf_range_scale(vec, cells);

  /* Faces in through the ramp, the rim's columns out: one value per 32-bit
   * wavelet. The SpMV's phase overlaps them as docs/model.md's convention
   * says (wf_model_phase). */
  double word = wf_model_words(hw, (size_t)wf_prec_bytes(prec));
  m.input_words = (2.0 * bx + 2.0 * by) * nz * word;
  m.output_words = wf_model_rim_columns(bx, by, 1) * nz * word;
  double latency = 2 * hw->ramp_cycles + g->max_link_hops * hw->hop_cycles;
  wf_range sram, fabric;
  spmv_cell(hw, prec, stored, f, &sram, &fabric);
  wf_range one = wf_model_phase(hw, wf_range_scale(sram, cells), wf_range_scale(fabric, cells),
                                m.input_words, m.output_words);
  m.spmv = wf_range_scale(wf_range_plus(one, latency), m.spmvs);
  for (int i = 0; i < 3; i++)
    if (ks[i]) m.reduce += wf_model_reduce_cycles(hw, g, ks[i], true), m.allreduces++;

  m.cycles = wf_range_plus(wf_range_add(m.spmv, m.vector), m.reduce);
  m.seconds = wf_model_seconds(hw, m.cycles);
  m.flops_per_cell = m.spmvs * spmv_flops + 2.0 * m.dots + 2.0 * m.updates + extra_flops;
  int coef = stored ? 7 + (method == ST_PCG ? 1 : 0) : 0;
  m.arrays = vectors + coef;
  m.bytes_per_pe = cells * wf_prec_bytes(prec) * m.arrays;
  return m;
}
