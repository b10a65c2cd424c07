/* The cost model against hand-computed values of its documented formulas
 * (docs/model.md). */
#include <CUnit/CUnit.h>

#include "wf_model.h"

static void test_halo(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_grid g;
  wf_status st;
  CU_ASSERT_PTR_NOT_NULL_FATAL(hw);
  wf_grid_create(&g, 64, 64, 0, NULL, "", &st);
  /* 8 B = 2 words. Corners, w=1: x = 1*2 + 1, y = 3*1*2 + 1, sum 10. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &g, 8, 1, true), 10, 1e-12);
  /* Faces only: max(3, 3). */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &g, 8, 1, false), 3, 1e-12);
  /* w=3, 5 B (2 words): x = 6 + 3, y = 7*3*2 + 3 = 45, sum 54. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &g, 5, 3, true), 54, 1e-12);
  /* Busiest link: the y links with corners carry (2w+1) w elements. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_link_words(hw, 8, 1, true), 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_link_words(hw, 8, 2, false), 4, 1e-12);
  /* Detours: with a 3-hop link the latency terms triple. */
  g.max_link_hops = 3;
  CU_ASSERT_DOUBLE_EQUAL(wf_model_halo_cycles(hw, &g, 8, 1, false), 5, 1e-12);
  wf_grid_free(&g);
}

static void test_collectives(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  wf_grid g;
  wf_status st;
  wf_grid_create(&g, 64, 64, 0, NULL, "", &st);
  /* 1 double = 2 words; 126 hops; reduce 2 + 126*2; allreduce adds 2 + 126. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &g, 1, false), 254, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_reduce_cycles(hw, &g, 1, true), 382, 1e-12);
  /* Row of 64 from position 10: farthest PE 53 hops; 4 B = 1 word. */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_bcast_cycles(hw, &g, 4, 64, 10), 54, 1e-12);
  wf_grid_free(&g);
}

static void test_compute_and_memory(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  CU_ASSERT_DOUBLE_EQUAL(wf_model_compute_cycles(hw, 100, 240), 50, 1e-12);  /* flop bound */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_compute_cycles(hw, 10, 240), 10, 1e-12);   /* memory bound */
  CU_ASSERT_DOUBLE_EQUAL(wf_model_seconds(hw, 1e9), 1.0, 1e-12);
  CU_ASSERT_TRUE(wf_model_fits(hw, 48 * 1024));
  CU_ASSERT_FALSE(wf_model_fits(hw, 48 * 1024 + 1));
  CU_ASSERT_DOUBLE_EQUAL(wf_model_words(hw, 1), 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(wf_model_words(hw, 9), 3, 0);
  const wf_hw *w3 = wf_hw_preset("wse3");
  CU_ASSERT_PTR_NOT_NULL_FATAL(w3);
  CU_ASSERT_EQUAL(w3->pe_nx * w3->pe_ny, 762 * 1176);
  CU_ASSERT_PTR_NULL(wf_hw_preset("wse9"));
}

void add_model_tests(void) {
  CU_pSuite s = CU_add_suite("cost model", NULL, NULL);
  CU_add_test(s, "halo exchange", test_halo);
  CU_add_test(s, "collectives", test_collectives);
  CU_add_test(s, "compute, clock, memory", test_compute_and_memory);
}
