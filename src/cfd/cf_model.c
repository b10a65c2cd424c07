/* The wafer model of one wave stencil step on a PE (cf_model.h): SC22's published kernel,
 * counted phase by phase, and this code's brick kernel followed by its halo. */
#include "cf_model.h"

#include "cf_wave.h"

/* SC22's kernel, a time step on one PE (csl-examples 25-pt-stencil: task.csl,
 * oned_exch.csl, util.csl):
 *
 *  1. the accumulator is zeroed (a move over the column);
 *  2. the column goes out in chunks of at most 400 cells (what its SRAM
 *     holds); per chunk, each PE sends its chunk east, west, north and south
 *     and takes in, each way, the chunks of the 5 senders of its pattern,
 *     its own among them (the pattern's first PE routes to its own ramp
 *     too: routes.csl, `tx = .{ dir, RAMP }`): 20 words a cell, one sender
 *     at a time per direction. Each word is multiplied by its coefficient
 *     as it arrives (an FMUL from the fabric into a buffer of 4 x 5 slots a
 *     cell, oned_exch.csl `recvMode`; 3 of the PE's own 4 by 0), and the
 *     PE's chunk goes out 4 times (one send a direction) with 2 control
 *     wavelets a direction that advance the switches:
 *     a phase of wf_model_phase (the fast end sends beside the receives,
 *     the slow end gives every sent word a cycle of the datapath), plus
 *     each turn's first word crossing 4 hops and both ramps;
 *  3. once all four directions are in, the 4 x 5 slots are added into the
 *     accumulator, before the next chunk is received;
 *  4. after the last chunk: 8 FMACs for the z neighbours, the velocity's
 *     multiply, an FMAC of 2u and the subtraction of u^{n-1}.
 *
 * 20 + 20 + 2 x 8 + 1 + 2 + 1 = 60 floating-point operations a cell
 * executed (the paper counts 57, sec. VI: its own value once). Every
 * operand not from the fabric comes from SRAM, the coefficients of the
 * multiplies on arrival too (an array). */
cf_model cf_model_sc22_step(const wf_hw *hw, int nz) {
  const int pattern = CF_RADIUS + 1, slots = 4 * pattern; /* 4 directions of 5 senders */
  const int most = 400; /* cells a chunk: util.csl's computeChunks */
  cf_model m = {0};
  m.chunks = 1 + nz / (most + 1);
  m.chunk = nz % m.chunks == 0 ? nz / m.chunks : 1 + nz / m.chunks;
  double cells = (double)m.chunks * m.chunk; /* the last chunk is padded */
  double turn_latency = wf_model_latency(hw, CF_RADIUS);
  wf_range on_arrival = wf_model_vec(hw, WF_OP_MUL, WF_FP32, slots * cells, 1, 1);
  double control = 2.0 * 4 * m.chunks; /* 2 control wavelets a direction a chunk */
  m.exchange = wf_model_phase(hw, wf_range_of(0), on_arrival, slots * cells, 4 * cells + control);
  m.exchange = wf_range_plus(m.exchange, m.chunks * pattern * turn_latency);
  m.reduce = wf_model_vec(hw, WF_OP_ADD, WF_FP32, slots * cells, 2, 1);
  double fmacs = 2 * CF_RADIUS + 1; /* the z neighbours, 2u */
  m.update = wf_model_vec(hw, WF_OP_MOV, WF_FP32, nz, 0, 1);
  m.update = wf_range_add(m.update, wf_model_vec(hw, WF_OP_FMAC, WF_FP32, fmacs * nz, 2, 1));
  m.update = wf_range_add(m.update, wf_model_vec(hw, WF_OP_MUL, WF_FP32, nz, 2, 1));
  m.update = wf_range_add(m.update, wf_model_vec(hw, WF_OP_ADD, WF_FP32, nz, 2, 1));
  m.cycles = wf_range_add(wf_range_add(m.exchange, m.reduce), m.update);
  /* the multiplies on arrival, the slots' adds, the FMACs (2 each), the
   * velocity's multiply and subtraction: 20 + 20 + 2 x 9 + 1 + 1 = 60 */
  m.flops_per_cell = slots + slots + 2 * fmacs + 1 + 1;
  return m;
}

/* This code's kernel: each cell 12 neighbour pairs added, 12 FMACs and the
 * centre's multiply, and the update (an add and an FMAC), every operand
 * from SRAM; then the halo: 4 columns of nz values across each face of the
 * brick, plus its latency. */
cf_model cf_model_wave_step(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz, wf_prec p) {
  cf_model m = {0};
  double cells = (double)bx * by * nz;
  m.update = wf_model_vec(hw, WF_OP_FMAC, p, 13 * cells, 2, 1);
  m.update = wf_range_add(m.update, wf_model_vec(hw, WF_OP_ADD, p, 13 * cells, 2, 1));
  m.update = wf_range_add(m.update, wf_model_vec(hw, WF_OP_MUL, p, cells, 1, 1));
  m.flops_per_cell = 13 * 2 + 13 + 1; /* the FMACs, the adds, the centre's multiply: 40 */
  m.halo = wf_model_brick_halo_cycles(hw, g, bx, by, nz, CF_RADIUS, (size_t)wf_prec_bytes(p));
  m.cycles = wf_range_add(m.update, m.halo);
  return m;
}
