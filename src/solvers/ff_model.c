/* The wafer model of one pencil FFT (ff_model.h): radix-2 butterflies at the PE's SIMD rate
 * along each axis, the two all-to-all transposes, the flops and the bytes a PE holds. */
#include "ff_model.h"

#include <math.h>

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

wf_range ff_model_line(const wf_hw *hw, wf_prec p, int n) {
  if (n < 2) return wf_range_of(0);
  double passes = ceil(log2((double)n));
  /* Per pass over the n complex values (2n reals), as the SDK's published
   * kernel runs it (csl-examples benchmarks/FFT/fft.csl, `fft`): the
   * twiddle product of the odd half, a multiply and two FMACs by scalar
   * factors (n reals each); the even half's sum and difference (2n); every
   * operand from SRAM, every result to it. All passes but the last then
   * move the odd half back and reorder both halves (3n moves). */
  wf_range pass = wf_range_add(wf_model_vec(hw, WF_OP_MUL, p, n, 1, 1),
                               wf_model_vec(hw, WF_OP_FMAC, p, n, 2, 1));
  pass = wf_range_add(pass, wf_model_vec(hw, WF_OP_ADD, p, 2.0 * n, 2, 1));
  wf_range moves = wf_model_vec(hw, WF_OP_MOV, p, 3.0 * n, 1, 1);
  return wf_range_add(wf_range_scale(pass, passes), wf_range_scale(moves, passes - 1));
}

ff_model ff_model_transform(const wf_hw *hw, const wf_grid *g, int pe_nx, int pe_ny, const int n[3],
                            int dims, wf_prec p) {
  ff_model m = {0};
  /* A PE's share in each stage: stage A its brick of bx by z-pencils;
   * stage B by bz x-lines; stage C cx bz y-lines. */
  int bx = ceil_div(n[0], pe_nx), by = ceil_div(n[1], pe_ny), bz = ceil_div(n[2], pe_nx);
  int cx = ceil_div(n[0], pe_ny);
  double lines[3] = {(double)bx * by, (double)by * bz, (double)cx * bz};
  int len[3] = {n[2], n[0], n[1]};
  double words = wf_model_words(hw, 2 * (size_t)wf_prec_bytes(p)); /* one complex value */
  m.row_words = (double)bx * by * bz * words;
  m.col_words = (double)cx * by * bz * words;
  double cells = 0, transformed = 1;
  for (int s = 0; s < dims; s++) {
    m.fft[s] = wf_range_scale(ff_model_line(hw, p, len[s]), lines[s]);
    m.cycles = wf_range_add(m.cycles, m.fft[s]);
    cells = fmax(cells, lines[s] * len[s]);
    transformed *= len[s];
  }
  if (dims >= 2) m.transpose[0] = wf_model_alltoall_cycles(hw, g, pe_nx, m.row_words);
  if (dims >= 3) m.transpose[1] = wf_model_alltoall_cycles(hw, g, pe_ny, m.col_words);
  m.cycles = wf_range_add(m.cycles, wf_range_add(m.transpose[0], m.transpose[1]));
  m.seconds = wf_model_seconds(hw, m.cycles);
  double total = (double)n[0] * n[1] * n[2];
  m.flops = transformed > 1 ? 5.0 * total * log2(transformed) : 0;
  /* The pencils and a receive buffer for the transposes, and the twiddles
   * of the longest axis (n/2 complex values). */
  int longest = len[0];
  for (int s = 1; s < dims; s++) longest = len[s] > longest ? len[s] : longest;
  double value = 2 * wf_prec_bytes(p);
  m.bytes_per_pe = (2 * cells + longest / 2.0) * value;
  return m;
}
