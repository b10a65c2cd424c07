/* The cost model against hand computations of its documented formulas
 * (docs/model.md), and the EAM reach against a brute-force enumeration of
 * the crystal's pairs and the known neighbour shells of fcc and bcc. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "cf_model.h"
#include "ff_model.h"
#include "md_fold.h"
#include "md_model.h"
#include "st_model.h"
#include "wf_model.h"

static wf_grid grid(int nx, int ny) {
  wf_grid g;
  wf_status st;
  wf_grid_create(&g, nx, ny, 0, NULL, "", &st);
  return g;
}

static void test_presets(void) {
  const wf_hw *w1 = wf_hw_preset("wse1"), *w2 = wf_hw_preset("wse2"), *w3 = wf_hw_preset("wse3");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w3);
  CU_ASSERT_PTR_NULL(wf_hw_preset("wse9"));
  CU_ASSERT_EQUAL(w1->pe_nx * w1->pe_ny, 600 * 595);
  CU_ASSERT_EQUAL(w2->pe_nx * w2->pe_ny, 750 * 994);
  /* WSE-3: the fabric less the WSE-2's runtime margins (7 columns, 2 rows) */
  CU_ASSERT_EQUAL(w3->pe_nx * w3->pe_ny, (762 - 7) * (1172 - 2));
  /* 21 PB/s over 900,000 cores at a clock within the range: 24 B a cycle */
  CU_ASSERT(fabs(21e15 / (9e5 * (w3->read_bytes + w3->write_bytes)) / 1e9 - 0.97) < 0.01);
  /* WSE-2 clock: 0.85 GHz (SDK examples) to 1.1 GHz (WaferLLM) */
  CU_ASSERT_DOUBLE_EQUAL(w2->clock_hz.lo, 0.85e9, 1);
  CU_ASSERT_DOUBLE_EQUAL(w2->clock_hz.hi, 1.1e9, 1);
  /* SDK SIMD widths; WSE-3 doubles every one */
  CU_ASSERT_EQUAL(w2->simd[WF_FP16][WF_OP_FMAC], 4);
  CU_ASSERT_EQUAL(w2->simd[WF_FP32][WF_OP_ADD], 2);
  CU_ASSERT_EQUAL(w2->simd[WF_FP32][WF_OP_FMAC], 1);
  for (int p = 0; p < WF_NPREC; p++)
    for (int o = 0; o < WF_NOPS; o++) {
      CU_ASSERT_EQUAL(w3->simd[p][o], 2 * w2->simd[p][o]);
      CU_ASSERT_EQUAL(w1->simd[p][o], w2->simd[p][o]); /* derived from SC20: 4-wide fp16 FMAC */
    }
  /* The ports: what a 4-wide fp16 FMAC or a 2-wide fp32 add needs with two
   * operands read and one written, the 16 B + 8 B SC22 states; the WSE-3's
   * the same, from its published memory bandwidth (above), so its doubled
   * widths are port-bound on SRAM operands. */
  CU_ASSERT_DOUBLE_EQUAL(w1->read_bytes, 16, 0);
  CU_ASSERT_DOUBLE_EQUAL(w1->write_bytes, 8, 0);
  CU_ASSERT_DOUBLE_EQUAL(w2->read_bytes, 16, 0);
  CU_ASSERT_DOUBLE_EQUAL(w2->write_bytes, 8, 0);
  CU_ASSERT_DOUBLE_EQUAL(w3->read_bytes, 16, 0);
  CU_ASSERT_DOUBLE_EQUAL(w3->write_bytes, 8, 0);
}

static void test_vector_ops(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  /* fp16 FMAC, 4 elements, 3 reads + 1 write each (16 B, 8 B ports):
   * max(1/4, 6/16, 2/8) = 0.375 an element, the same at both ends. */
  wf_range r = wf_model_vec(hw, WF_OP_FMAC, WF_FP16, 4, 3, 1);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 1.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 1.5, 1e-12);
  /* fp32 add, 2 elements, 2 reads + 1 write: max(1/2, 8/16, 4/8) = 0.5. */
  r = wf_model_vec(hw, WF_OP_ADD, WF_FP32, 2, 2, 1);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 1.0, 1e-12);
  /* WSE-3, fp16 FMAC 8-wide, 2 reads + 1 write (16 B, 8 B ports):
   * max(1/8, 4/16, 2/8) = 0.25, the ports bind; with 3 reads 6/16 = 0.375;
   * from registers only, the width: 0.125. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_vec(wf_hw_preset("wse3"), WF_OP_FMAC, WF_FP16, 8, 2, 1).lo, 2, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_vec(wf_hw_preset("wse3"), WF_OP_FMAC, WF_FP16, 16, 3, 1).hi, 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_vec(wf_hw_preset("wse3"), WF_OP_FMAC, WF_FP16, 8, 0, 0).hi, 1, 1e-12);
  /* fp32 FMAC from registers only: the SIMD width alone, 1 a cycle */
  r = wf_model_vec(hw, WF_OP_FMAC, WF_FP32, 7, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 7, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 7, 1e-12);
}

static void test_halo(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_grid g = grid(64, 64);
  /* 8 B = 2 words. Corners, w=1: links x 2 + y 3*2 = 8; ramp in 8*2 = 16,
   * moved into SRAM 2 a cycle (8); out, a send a direction, the PE's own 2
   * words east and west and its row of 3 north and south, 4 + 12 = 16: fast
   * max(8, 16, 16), slow max(8, 16) + 16; latency 2 ramps (4) + 2 hops: 22
   * and 38. */
  wf_range h = wf_model_halo_cycles(hw, &g, 8, 1, true);
  CU_ASSERT_DOUBLE_EQUAL(h.lo, 22, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h.hi, 38, 1e-12);
  /* Faces only: links max(2, 2), ramp in 4*2 = 8 (moved: 4), 4*2 out;
   * latency 4 + 1: 13, 21. */
  h = wf_model_halo_cycles(hw, &g, 8, 1, false);
  CU_ASSERT_DOUBLE_EQUAL(h.lo, 13, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h.hi, 21, 1e-12);
  /* w=3, 5 B (2 words), corners: links 6 + 7*3*2 = 48, ramp 48*2 = 96
   * (moved: 48), out 4 + 2*7*2 = 32; latency 4 + 6: 106, 138. */
  h = wf_model_halo_cycles(hw, &g, 5, 3, true);
  CU_ASSERT_DOUBLE_EQUAL(h.lo, 106, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h.hi, 138, 1e-12);
  /* Busiest link: the y links with corners carry (2w+1) w elements. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_link_words(hw, 8, 1, true), 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_link_words(hw, 8, 2, false), 4, 1e-12);
  /* Intake: a 5 x 5 neighbourhood less the PE itself, 24 elements of 2 words;
   * faces only, 2 per side and axis: 8 elements. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_intake_words(hw, 8, 2, true), 48, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_intake_words(hw, 8, 2, false), 16, 1e-12);
  /* Faces on a non-square grid (the figures depend on the PE's
   * neighbourhood, not the grid's shape): the same 13 and 21. */
  wf_grid wide = grid(64, 16);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &wide, 8, 1, false).lo, 13, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &wide, 8, 1, false).hi, 21, 1e-12);
  wf_grid_free(&wide);
  /* Detours: with a 3-hop link the hop latency triples: 8 + 4 + 3. */
  g.max_link_hops = 3;
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &g, 8, 1, false).lo, 15, 1e-12);
  wf_grid_free(&g);
}

/* Seconds re-expressed at one clock, scalar work, a stated clock's range. */
static void test_clock_and_scalar(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  /* 1100 and 1700 cycles: [1e-6, 2e-6] s over 0.85 - 1.1 GHz; at 1.0 GHz
   * the same cycles are [1.1e-6, 1.7e-6] s. */
  wf_range s = wf_model_seconds(hw, (wf_range){1100, 1700});
  wf_range at = wf_model_at_clock(hw, s, 1.0e9);
  CU_ASSERT_DOUBLE_EQUAL(at.lo, 1.1e-6, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(at.hi, 1.7e-6, 1e-18);
  /* 10 instructions, 2 square roots (1 - 11), 3 divisions (1 - 8). */
  wf_range c = wf_model_scalar(hw, 10, 2, 3);
  CU_ASSERT_DOUBLE_EQUAL(c.lo, 15, 0);
  CU_ASSERT_DOUBLE_EQUAL(c.hi, 10 + 22 + 24, 0);
  CU_ASSERT_TRUE(wf_model_clock_in_range(hw, 0.85e9) && wf_model_clock_in_range(hw, 1.1e9));
  CU_ASSERT_FALSE(wf_model_clock_in_range(hw, 0.84e9) || wf_model_clock_in_range(hw, 11e9));
}

static void test_phase(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  /* 100 cycles of SRAM work [lo 100, hi 150], fabric instructions [20, 30]
   * taking 60 words, 10 words sent. Fast: max(120, 60, 10) = 120; slow:
   * 150 + max(30, 60) + 10 = 220. */
  wf_range r = wf_model_phase(hw, (wf_range){100, 150}, (wf_range){20, 30}, 60, 10);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 120, 0);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 220, 0);
  /* Ramp-bound: 500 words in. Fast 500; slow 150 + 500 + 10 = 660. */
  r = wf_model_phase(hw, (wf_range){100, 150}, (wf_range){20, 30}, 500, 10);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 500, 0);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 660, 0);
  /* Send-bound: 700 words out. Fast 700; slow 150 + 60 + 700 = 910. */
  r = wf_model_phase(hw, (wf_range){100, 150}, (wf_range){20, 30}, 60, 700);
  CU_ASSERT_DOUBLE_EQUAL(r.lo, 700, 0);
  CU_ASSERT_DOUBLE_EQUAL(r.hi, 910, 0);
}

static void test_collectives(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_grid g = grid(64, 64);
  /* Per phase, a tree into PE 31 of 64: 32 hops, ceil(log2 33) = 6 levels,
   * each taking in a value from both sides (2 words; the sum leaves as the
   * add's result) + 2 ramps (4) + 1 add: 6 x 7 + 32 = 74, one figure (both
   * readings agree). Reduce (k=1): two phases; allreduce adds the multicast
   * of 1 word: 1 + 4 + 64 hops. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &g, 1, false), 148, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &g, 1, true), 217, 1e-12);
  /* k = 3 values: a level 6 + 5 = 11; the multicast of 3 words. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &g, 3, true), 2 * (66 + 32) + 71, 1e-12);
  /* A non-square grid, 64 x 16, so that an x/y swap shows: rows into PE 31
   * (74 as above), then the column of 16 into PE 7: 8 hops, ceil(log2 9) = 4
   * levels of 7: 36; the multicast of 1 word: 1 + 4 + (32 + 8) hops. */
  wf_grid wide = grid(64, 16);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &wide, 1, false), 74 + 36, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &wide, 1, true), 74 + 36 + 45, 1e-12);
  wf_grid_free(&wide);
  /* One PE: nothing to reduce. */
  wf_grid one = grid(1, 1);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &one, 1, false), 0, 0);
  wf_grid_free(&one);
  /* Row of 64 from position 10: farthest PE 53 hops; 4 B = 1 word; 2 ramps. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_bcast_cycles(hw, &g, 4, 64, 10), 58, 1e-12);
  /* Segment of 8 words reduced into PE 10 of 64: 53 hops, ceil(log2 54) = 6
   * levels of both sides' segments in (16) + 2 ramps + 1 add. Into PE 0: 63
   * hops, 6 levels of one segment in (8). */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_segment_reduce_cycles(hw, &g, 64, 10, 8), 6 * 21 + 53, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_segment_reduce_cycles(hw, &g, 64, 0, 8), 6 * 13 + 63, 1e-12);
  /* As a chain: 53 cores on the way (2 ramps, an add, a hop: 6 each) and
   * both sides' 8 words into the root. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_chain_reduce_cycles(hw, &g, 64, 10, 8), 53 * 6 + 16, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_tree_levels(53), 6, 0);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_tree_levels(0), 0, 0);
  /* All-to-all in a row of 5, 3 words a chunk, senders in turn: 4 turns a
   * direction, each 4 chunks of 3 words, 2 control words, 2 ramps and a
   * hop (19): 76; a core's 12 words in and 24 out are fewer. In a row of
   * 2 with chunks of 40 words (each end PE sends one way): 1 turn of 47
   * against 40 in (moved: 20) and 40 out: 47 at the fast end, max(20, 40)
   * + 40 = 80 at the slow. */
  wf_range a2a = wf_model_alltoall_cycles(hw, &g, 5, 3);
  CU_ASSERT_DOUBLE_EQUAL(a2a.lo, 4 * 19, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(a2a.hi, 4 * 19, 1e-12);
  a2a = wf_model_alltoall_cycles(hw, &g, 2, 40);
  CU_ASSERT_DOUBLE_EQUAL(a2a.lo, 47, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(a2a.hi, 80, 1e-12);
  /* 100 words over a face of 8 PEs: 13 a link, 2 ramps, a hop. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_exchange_cycles(hw, &g, 100, 8), 13 + 4 + 1, 1e-12);
  wf_grid_free(&g);

  /* SC20's allreduce of a scalar over 600 x 595 PEs: quoted (second-hand)
   * at about 10% more cycles than the grid's diameter (599 + 594 hops), 1312.
   * The model, from the hardware's own figures: rows 300 hops + 9 levels of
   * 7, columns 297 + 9 x 7, the multicast 1 + 4 + 597: 1325, 1.01 of it. */
  wf_grid sc20 = grid(600, 595);
  double c = wf_model_reduce_cycles(wf_hw_preset("wse1"), &sc20, 1, true);
  CU_ASSERT_DOUBLE_EQUAL(c, 1325, 1e-12);
  CU_ASSERT_TRUE(fabs(c / (1.1 * (599 + 594)) - 1) <= 0.05);
  wf_grid_free(&sc20);
}

static void test_time_and_memory(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_range s = wf_model_seconds(hw, (wf_range){1.1e9, 0.85e9});
  CU_ASSERT_DOUBLE_EQUAL(s.lo, 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(s.hi, 1.0, 1e-12);
  CU_ASSERT_TRUE(wf_model_fits(hw, 44 * 1024));
  CU_ASSERT_FALSE(wf_model_fits(hw, 44 * 1024 + 1));
  CU_ASSERT_DOUBLE_EQUAL(wf_model_words(hw, 1), 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_words(hw, 9), 3, 0);
}

/* CG, matrix-free Laplacian, fp32, one column of 10 cells per PE, WSE-2.
 * Per cell, on SRAM operands: centre mul 1, two z adds 1 (2-wide); from the
 * fabric: four adds 2. The column: SRAM 20, fabric 20, 40 words in, its 10
 * values sent. Fast: max(20 + 20, 40, 10) = 40; slow: 20 + max(20, 40) +
 * 10 = 70; + latency 5. Dots 1 + 1, three FMAC updates 3: 50. Two
 * allreduces on 64 x 64: 217 each. */
static void test_stencil(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_grid g = grid(64, 64);
  /* CG, one column of 10 fp32 cells, a coefficient per direction, as the
   * SDK's 7-point kernel runs it. The exchange: the sum zeroed (10 moves,
   * 2-wide: 5), the 4 neighbours' 10 values moved in from the fabric (40
   * moves: 20) and the column sent each way (40 words): fast max(25, 40,
   * 40), slow 5 + max(20, 40) + 40. Then 70 FMACs (1-wide: 70) and the
   * latency (2 ramps of 2 and a hop). */
  st_model m = st_model_iteration(hw, &g, 1, 1, 10, ST_CG, false, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(m.input_words, 40, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.output_words, 40, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.spmv.lo, 40 + 70 + 5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.spmv.hi, 85 + 70 + 5, 1e-12);
  /* A 4 x 4 brick sends each face to its neighbour: 16 columns of 10. */
  CU_ASSERT_DOUBLE_EQUAL(st_model_iteration(hw, &g, 4, 4, 10, ST_CG, false, WF_FP32).output_words,
                         160, 1e-12);
  /* 2 dots (fp32 FMACs, 1 each) and 3 updates (1 each) a cell; 2
   * allreduces of one value (217 each, "Fabric"). */
  CU_ASSERT_DOUBLE_EQUAL(m.vector.lo, 50, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.vector.hi, 50, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.reduce, 434, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.lo, 115 + 50 + 434, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.hi, 160 + 50 + 434, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.flops_per_cell, 14 + 4 + 6, 0);
  CU_ASSERT_DOUBLE_EQUAL(m.bytes_per_pe, 4 * 10 * 4, 0);
  /* BiCGStab on a stored operator, as the SDK's runs it: 2 SpMVs of 7
   * FMACs, 5 dots, 6 updates; 5 allreduces of one value; 7 vectors + 7
   * coefficients. */
  m = st_model_iteration(hw, &g, 1, 1, 10, ST_BICGSTAB, true, WF_FP16);
  CU_ASSERT_DOUBLE_EQUAL(m.flops_per_cell, 28 + 10 + 12, 0);
  CU_ASSERT_EQUAL(m.allreduces, 5);
  CU_ASSERT_DOUBLE_EQUAL(m.reduce, 5 * 217, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.bytes_per_pe, 14 * 10 * 2, 0);
  wf_grid_free(&g);
}

/* The reach from the model's shortcut (offsets from one cell column) against
 * every pair of the whole crystal, with minimum-image distances. */
static void brute_reach(const char *kind, const int cells[3], double a, double rl, int *hx,
                        int *hy) {
  const double(*basis)[3];
  int nb = md_lattice_basis(kind, &basis);
  md_fold f = md_fold_make(kind, cells);
  int n = nb * cells[0] * cells[1] * cells[2];
  double (*x)[3] = malloc(sizeof *x * (size_t)n);
  for (int id = 1; id <= n; id++) {
    int s = id - 1, b = s % nb, i = (s / nb) % cells[0], j = (s / nb / cells[0]) % cells[1],
        k = s / nb / cells[0] / cells[1];
    int c[3] = {i, j, k};
    for (int d = 0; d < 3; d++) x[id - 1][d] = (c[d] + basis[b][d]) * a;
  }
  *hx = *hy = 0;
  for (int p = 0; p < n; p++)
    for (int q = 0; q < n; q++) {
      double r2 = 0;
      for (int d = 0; d < 3; d++) {
        double L = cells[d] * a, dd = x[p][d] - x[q][d];
        dd -= L * round(dd / L);
        r2 += dd * dd;
      }
      if (p == q || r2 >= rl * rl) continue;
      int x0, y0, x1, y1;
      md_fold_pe(&f, p + 1, &x0, &y0);
      md_fold_pe(&f, q + 1, &x1, &y1);
      int dx = abs(x0 - x1), dy = abs(y0 - y1);
      dx = dx < f.pe_x - dx ? dx : f.pe_x - dx;
      dy = dy < f.pe_y - dy ? dy : f.pe_y - dy;
      *hx = dx > *hx ? dx : *hx;
      *hy = dy > *hy ? dy : *hy;
    }
  free(x);
}

static void test_eam_reach(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  eam_potential pot = {.nelements = 1, .nr = 100, .nrho = 100};
  md_lattice l = {.kind = "fcc", .a = 3.615, .cells = {5, 5, 4}};
  md_model_result m;
  /* fcc shells at a/sqrt2, a, a sqrt(3/2), a sqrt2, a sqrt(5/2): 12, 6, 24,
   * 12, 24 sites. Cutoff 4.95 A holds three shells, 5.95 A five. */
  pot.cut = 4.95;
  md_model_lattice(&m, &l, &pot, 1.0, hw, 1);
  CU_ASSERT_DOUBLE_EQUAL(m.n_cut, 42, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.n_list, 78, 1e-12);
  int hx, hy;
  brute_reach("fcc", l.cells, l.a, 5.95, &hx, &hy);
  CU_ASSERT_EQUAL(m.hx, hx);
  CU_ASSERT_EQUAL(m.hy, hy);
  double candidates = (2.0 * hx + 1) * (2.0 * hy + 1) - 1; /* from the brute force's reach */
  CU_ASSERT_DOUBLE_EQUAL(m.candidates, candidates, 0);
  CU_ASSERT_DOUBLE_EQUAL(m.words_in, 4 * candidates, 0);
  /* 7 tables rows of 101 points: F, rho, z2 */
  CU_ASSERT_DOUBLE_EQUAL(m.table_bytes, 7 * 4.0 * 3 * 101, 0);
  /* bcc shells (W, a = 3.1652): 8, 6, 12, 24, 8 within 5.6 A */
  md_lattice w = {.kind = "bcc", .a = 3.1652, .cells = {4, 4, 6}};
  pot.cut = 4.6;
  md_model_lattice(&m, &w, &pot, 1.0, hw, 1);
  CU_ASSERT_DOUBLE_EQUAL(m.n_list, 58, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(m.n_cut, 26, 1e-12);
  brute_reach("bcc", w.cells, w.a, 5.6, &hx, &hy);
  CU_ASSERT_EQUAL(m.hx, hx);
  CU_ASSERT_EQUAL(m.hy, hy);
  /* The step: each phase its work and its words in, overlapped at the fast
   * end and one after the other at the slow end (3 words sent too), at
   * least what the busiest link carries, plus latency; the work of pass 1
   * is 7 per listed and 10 and a square root per neighbour (58 and 26 from
   * the bcc shells above; the root 1 cycle at the fast end, 11 at the slow),
   * the words the brute force's reach. */
  double in1 = 3 * ((2.0 * hx + 1) * (2.0 * hy + 1) - 1);
  double fast1 = 7 * 58 + (10 + 1) * 26, slow1 = 7 * 58 + (10 + 11) * 26;
  double links1 = 3.0 * hx + 3 * (2.0 * hx + 1) * hy;
  double lat = 4 + hx + hy;
  /* The words in are moved into SRAM (2 a cycle); a send a direction: its
   * own 3 words east and west, its row's 2 hx + 1 north and south. */
  double out1 = 2 * 3 + 2 * (2.0 * hx + 1) * 3;
  CU_ASSERT_DOUBLE_EQUAL(m.phase_positions.lo,
                         fmax(fmax(fmax(in1, fast1 + in1 / 2), out1), links1) + lat, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.phase_positions.hi, fmax(slow1 + in1 + out1, links1) + lat, 1e-9);
  /* The forces' phase: 25 and a division (1 or 8 cycles) per neighbour. */
  double in2 = in1 / 3, links2 = links1 / 3, out2 = out1 / 3;
  CU_ASSERT_DOUBLE_EQUAL(m.phase_forces.lo,
                         fmax(fmax(fmax(in2, 26.0 * 26 + in2 / 2), out2), links2) + lat, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.phase_forces.hi, fmax(33.0 * 26 + in2 + out2, links2) + lat, 1e-9);
  /* A logical link two physical hops long (dead PEs) doubles the hops. */
  md_model_result d;
  md_model_lattice(&d, &w, &pot, 1.0, hw, 2);
  CU_ASSERT_DOUBLE_EQUAL(d.phase_positions.lo - m.phase_positions.lo, hx + hy, 1e-9);
}

static void test_fft(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  /* A 512-point fp32 FFT as the SDK's kernel runs it: 9 passes of 512 MUL
   * (1-wide: 512 cycles), 512 FMAC (1-wide, 8 B read at 16 B/cycle: 512)
   * and 1024 ADD (2-wide, 16 B read and 8 B written: 512), and on 8 of
   * them 1536 moves (2-wide: 768). */
  wf_range line = ff_model_line(hw, WF_FP32, 512);
  CU_ASSERT_DOUBLE_EQUAL(line.lo, 9 * 1536 + 8 * 768, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(line.hi, 9 * 1536 + 8 * 768, 1e-9);
  /* Non-powers of two: ceil(log2 n) passes; length 1 costs nothing. */
  CU_ASSERT_DOUBLE_EQUAL(ff_model_line(hw, WF_FP32, 5).hi, 3 * 15 + 2 * 7.5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(ff_model_line(hw, WF_FP32, 1).hi, 0, 0);

  /* ICS23: 512^3 on 512 x 512 PEs, one pencil a PE, chunks of one complex
   * fp32 value (2 words). Each transpose, senders in turn: 511 turns of
   * 511 chunks (1022 words), 2 control words, 2 ramps and a hop. Three
   * stages of one 512-point FFT: 3 x 19968 + 2 x 525819 cycles. */
  wf_grid g = grid(512, 512);
  ff_model m = ff_model_transform(hw, &g, 512, 512, (int[3]){512, 512, 512}, 3, WF_FP32);
  double tr = 511.0 * (1022 + 2 + 4 + 1);
  CU_ASSERT_DOUBLE_EQUAL(m.row_words, 2, 0);
  CU_ASSERT_DOUBLE_EQUAL(m.transpose[0].lo, tr, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.transpose[1].lo, tr, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.transpose[0].hi, tr, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.lo, 3 * 19968 + 2 * tr, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.hi, 3 * 19968 + 2 * tr, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(m.seconds.lo, (3 * 19968 + 2 * tr) / 1.1e9, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(m.flops, 5.0 * 512 * 512 * 512 * 27, 1);
  /* Memory: the pencil twice and 256 twiddles, 8 B each. */
  CU_ASSERT_DOUBLE_EQUAL(m.bytes_per_pe, (2 * 512 + 256) * 8, 1e-9);
  wf_grid_free(&g);

  /* Bricks: 10 x 9 x 7 on 4 x 3 PEs: bx 3, by 3, bz 2; rows carry 3*3*2
   * values a chunk, columns ceil(10/3) = 4 * 3 * 2. dims 1: no transposes. */
  wf_grid h = grid(4, 3);
  ff_model b = ff_model_transform(hw, &h, 4, 3, (int[3]){10, 9, 7}, 3, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(b.row_words, 18 * 2, 0);
  CU_ASSERT_DOUBLE_EQUAL(b.col_words, 24 * 2, 0);
  ff_model z = ff_model_transform(hw, &h, 4, 3, (int[3]){10, 9, 7}, 1, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(z.transpose[0].hi + z.transpose[1].hi, 0, 0);
  /* a PE's 3 x 3 z lines of 7 points: ceil(log2 7) = 3 passes of 7 MUL
   * and 7 FMAC (1 each) and 14 ADD (0.5 each), 21 moves (0.5) on 2 */
  CU_ASSERT_DOUBLE_EQUAL(z.cycles.hi, 9 * (3 * (7 + 7 + 7) + 2 * 10.5), 1e-9);
  wf_grid_free(&h);
}

static void test_wave(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  /* SC22's case, a column of 1000 fp32 cells: 3 chunks of 334 (1002 cells
   * exchanged and summed). Exchange: 20 words a cell through the ramp (5
   * senders a direction, the PE itself among them; the multiplies on
   * arrival, 1-wide, one 4 B read and write: 1 a cycle too), plus 3 chunks
   * x 5 turns x (4 hops + 2 ramps of 2); at the slow end the 4 sends of the
   * PE's chunk and 2 control words a direction a chunk hold the datapath
   * too (4 x 1002 + 24 cycles).
   * Sum: 20 adds a cell, 2-wide (0.5). Update: the zeroing move (0.5), 8 +
   * 1 FMACs and a multiply (1 each), the subtraction (0.5). */
  cf_model m = cf_model_sc22_step(hw, 1000);
  CU_ASSERT_EQUAL(m.chunks, 3);
  CU_ASSERT_EQUAL(m.chunk, 334);
  CU_ASSERT_DOUBLE_EQUAL(m.exchange.lo, 20 * 1002 + 3 * 5 * (4 + 4), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.exchange.hi, 20160 + 4008 + 24, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.reduce.lo, 10 * 1002, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.reduce.hi, 10 * 1002, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.update.lo, 500 + 9000 + 1000 + 500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.update.hi, 500 + 9000 + 1000 + 500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.lo, 20160 + 10020 + 11000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.hi, 20160 + 4032 + 10020 + 11000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.flops_per_cell, 60, 0);
  /* Chunks of at most 400 cells: 400 is one, 401 two of 201. */
  CU_ASSERT_EQUAL(cf_model_sc22_step(hw, 400).chunks, 1);
  m = cf_model_sc22_step(hw, 401);
  CU_ASSERT_EQUAL(m.chunks, 2);
  CU_ASSERT_EQUAL(m.chunk, 201);

  /* This code's kernel, a 2 x 3 x 10 fp32 brick (60 cells): 13 FMACs (1
   * each) and 13 adds (0.5) a cell and the centre's multiply (1); the
   * halo: the longer face's 4 x 3 x 10 = 120 words cross its link, the core
   * moves the 4 faces' 2 x 4 x (2 + 3) x 10 = 400 words in (200 cycles) and
   * sends each side the columns next to it, a brick narrower than 4 all it
   * has: 2 x (2 x 3 + 3 x 2) x 10 = 240 words; fast max(200, 400, 240),
   * slow max(200, 400) + 240; plus 2 ramps and 4 x the grid's longest path
   * in hops (1 cycle each). */
  wf_grid g = grid(8, 8);
  m = cf_model_wave_step(hw, &g, 2, 3, 10, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(m.halo.lo, 408, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.halo.hi, 648, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.lo, 60 * (13 + 6.5 + 1) + 408, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.cycles.hi, 60 * (13 + 6.5 + 1) + 648, 1e-9);
  /* A wider brick, 10 x 8 and 1 deep, sends 2 x (8 + 10) columns. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_brick_halo_cycles(hw, &g, 10, 8, 1, 1, 4).hi, 36 + 36 + 4 + 1,
                         1e-9);
  CU_ASSERT_DOUBLE_EQUAL(m.flops_per_cell, 40, 0);
  wf_grid_free(&g);
}

void add_model_tests(void) {
  CU_pSuite s = CU_add_suite("cost model", NULL, NULL);
  CU_add_test(s, "hardware presets", test_presets);
  CU_add_test(s, "vector instructions against the ports", test_vector_ops);
  CU_add_test(s, "halo exchange", test_halo);
  CU_add_test(s, "what overlaps what: a phase", test_phase);
  CU_add_test(s, "collectives, SC20's allreduce", test_collectives);
  CU_add_test(s, "time and memory", test_time_and_memory);
  CU_add_test(s, "stencil iteration", test_stencil);
  CU_add_test(s, "a stated clock, scalar work", test_clock_and_scalar);
  CU_add_test(s, "EAM reach and step", test_eam_reach);
  CU_add_test(s, "FFT: butterflies, ICS23's transposes", test_fft);
  CU_add_test(s, "wave stencil: SC22's kernel, this code's", test_wave);
}
