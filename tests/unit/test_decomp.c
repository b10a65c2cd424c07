#include <CUnit/CUnit.h>

#include "wf_decomp.h"

/* Blocks tile [0, n) in order, differ by at most one, and owner() agrees. */
static void test_block_ranges(void) {
  for (int n = 1; n <= 60; n++)
    for (int parts = 1; parts <= n && parts <= 13; parts++) {
      int next = 0, lo, cnt, smallest = n, largest = 0;
      for (int p = 0; p < parts; p++) {
        wf_block_range(n, parts, p, &lo, &cnt);
        CU_ASSERT_EQUAL(lo, next);
        CU_ASSERT(cnt >= 1);
        for (int i = lo; i < lo + cnt; i++) CU_ASSERT_EQUAL(wf_block_owner(n, parts, i), p);
        next = lo + cnt;
        if (cnt < smallest) smallest = cnt;
        if (cnt > largest) largest = cnt;
      }
      CU_ASSERT_EQUAL(next, n);
      CU_ASSERT(largest - smallest <= 1);
    }
}

static void test_rank_grid(void) {
  int px = 0, py = 0;
  CU_ASSERT_EQUAL(wf_rank_grid_auto(4, 64, 64, &px, &py), 0);
  CU_ASSERT(px == 2 && py == 2);
  CU_ASSERT_EQUAL(wf_rank_grid_auto(2, 64, 64, &px, &py), 0);
  CU_ASSERT(px == 2 && py == 1);
  CU_ASSERT_EQUAL(wf_rank_grid_auto(2, 10, 40, &px, &py), 0);
  CU_ASSERT(px == 1 && py == 2);
  /* 750x994 on 6 ranks: perimeters 916 (1x6), 707 (2x3), 747 (3x2), 1119 (6x1). */
  CU_ASSERT_EQUAL(wf_rank_grid_auto(6, 750, 994, &px, &py), 0);
  CU_ASSERT(px == 2 && py == 3);
  /* 7 ranks on a 3x2 grid: no layout. */
  CU_ASSERT_EQUAL(wf_rank_grid_auto(7, 3, 2, &px, &py), -1);
  for (int r = 1; r <= 64; r++) {
    for (int nx = 1; nx <= 20; nx += 3) {
      int ny = 17;
      if (wf_rank_grid_auto(r, nx, ny, &px, &py) == 0) {
        CU_ASSERT_EQUAL(px * py, r);
        CU_ASSERT(px <= nx && py <= ny);
      } else {
        /* no factor pair fits */
        for (int a = 1; a <= r; a++)
          if (r % a == 0) CU_ASSERT(a > nx || r / a > ny);
      }
    }
  }
}

static void test_directions(void) {
  for (int d = 0; d < WF_NDIRS; d++) {
    int o = wf_dir_opposite(d);
    CU_ASSERT_EQUAL(wf_dir_dx[o], -wf_dir_dx[d]);
    CU_ASSERT_EQUAL(wf_dir_dy[o], -wf_dir_dy[d]);
  }
}

void add_decomp_tests(void) {
  CU_pSuite s = CU_add_suite("decomp", NULL, NULL);
  CU_add_test(s, "block ranges and owners", test_block_ranges);
  CU_add_test(s, "automatic rank grid", test_rank_grid);
  CU_add_test(s, "directions", test_directions);
}
