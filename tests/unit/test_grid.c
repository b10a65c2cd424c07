#include <CUnit/CUnit.h>
#include <string.h>

#include "wf_grid.h"
#include "wf_parse.h"

static void test_parse_size(void) {
  int nx, ny;
  CU_ASSERT_EQUAL(wf_grid_parse_size("750x994", &nx, &ny), 0);
  CU_ASSERT(nx == 750 && ny == 994);
  CU_ASSERT_EQUAL(wf_grid_parse_size(" 3 X 4 ", &nx, &ny), 0);
  CU_ASSERT(nx == 3 && ny == 4);
  CU_ASSERT_EQUAL(wf_grid_parse_size("3x", &nx, &ny), -1);
  CU_ASSERT_EQUAL(wf_grid_parse_size("0x4", &nx, &ny), -1);
  CU_ASSERT_EQUAL(wf_grid_parse_size("3y4", &nx, &ny), -1);
  CU_ASSERT_EQUAL(wf_grid_parse_size("3x4x5", &nx, &ny), -1);
  /* no wrapping: 2^32 + 16 is not 16; the largest side is accepted, one more not */
  CU_ASSERT_EQUAL(wf_grid_parse_size("4294967312x16", &nx, &ny), -1);
  CU_ASSERT_EQUAL(wf_grid_parse_size("1048576x1", &nx, &ny), 0);
  CU_ASSERT_EQUAL(wf_grid_parse_size("1048577x1", &nx, &ny), -1);
  CU_ASSERT_EQUAL(wf_grid_parse_size("-3x4", &nx, &ny), -1);
}

static void test_parse_numbers(void) {
  long long v[3];
  const char *p = " 42 rest";
  CU_ASSERT_EQUAL(wf_parse_int(&p, 0, 100, &v[0]), WF_PARSE_OK);
  CU_ASSERT_EQUAL(v[0], 42);
  CU_ASSERT_STRING_EQUAL(p, " rest");
  p = "99999999999999999999"; /* beyond long long: out of range, not wrapped */
  CU_ASSERT_EQUAL(wf_parse_int(&p, 0, 100, &v[0]), WF_PARSE_RANGE);
  p = "x1";
  CU_ASSERT_EQUAL(wf_parse_int(&p, 0, 100, &v[0]), WF_PARSE_SYNTAX);
  CU_ASSERT_EQUAL(wf_parse_dims("8x8x8", 3, 1, 10, v), WF_PARSE_OK);
  CU_ASSERT(v[0] == 8 && v[1] == 8 && v[2] == 8);
  CU_ASSERT_EQUAL(wf_parse_dims("4294967300x4x4", 3, 1, 100000, v), WF_PARSE_RANGE);
  CU_ASSERT_EQUAL(wf_parse_dims("4294967300x4", 3, 1, 100000, v), WF_PARSE_SYNTAX);
  CU_ASSERT_EQUAL(wf_parse_dims("8x8x8x", 3, 1, 10, v), WF_PARSE_SYNTAX);
  CU_ASSERT_EQUAL(wf_parse_dims("8 x 8 x 8 ", 3, 1, 10, v), WF_PARSE_OK);
}

static void test_no_defects(void) {
  wf_grid g;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(wf_grid_create(&g, 5, 4, 0, NULL, "none", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_grid_phys_x(&g, 3, 2), 3);
  CU_ASSERT_EQUAL(wf_grid_link_hops(&g, 3, 2, 1), 1);
  CU_ASSERT_EQUAL(wf_grid_link_hops(&g, 3, 2, 0), 1);
  CU_ASSERT_EQUAL(g.max_link_hops, 1);
  CU_ASSERT_EQUAL(g.extra_hops, 0);
  wf_grid_free(&g);
}

/* 4x3 logical grid, 2 spare columns, dead PEs (1,0) and (2,0), (0,2). */
static void test_mapping(void) {
  wf_grid g;
  wf_status st;
  const char *map = "# dead PEs\n1 0\n\n2 0   # two in row 0\n0 2\n";
  CU_ASSERT_EQUAL_FATAL(wf_grid_create(&g, 4, 3, 2, map, "map.txt", &st), WF_OK);
  CU_ASSERT_EQUAL(g.ndead, 3);
  int row0[4] = {0, 3, 4, 5}, row1[4] = {0, 1, 2, 3}, row2[4] = {1, 2, 3, 4};
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(wf_grid_phys_x(&g, i, 0), row0[i]);
    CU_ASSERT_EQUAL(wf_grid_phys_x(&g, i, 1), row1[i]);
    CU_ASSERT_EQUAL(wf_grid_phys_x(&g, i, 2), row2[i]);
  }
  CU_ASSERT_EQUAL(wf_grid_link_hops(&g, 0, 0, 1), 3);  /* 0 -> 3 along row 0 */
  CU_ASSERT_EQUAL(wf_grid_link_hops(&g, 1, 0, 0), 3);  /* (3,0) -> (1,1): 1 + 2 */
  CU_ASSERT_EQUAL(wf_grid_link_hops(&g, 0, 1, 0), 2);  /* (0,1) -> (1,2): 1 + 1 */
  CU_ASSERT_EQUAL(g.max_link_hops, 3);
  /* Extra hops: east links: row 0 has +2; vertical 0->1: |0-0|,|3-1|,|4-2|,|5-3| = 6;
   * vertical 1->2: 1+1+1+1 = 4. Total 12. */
  CU_ASSERT_EQUAL(g.extra_hops, 12);
  wf_grid_free(&g);
}

static void expect_error(const char *map, int spare, const char *want) {
  wf_grid g;
  wf_status st;
  CU_ASSERT_EQUAL(wf_grid_create(&g, 4, 3, spare, map, "map.txt", &st), WF_ERR_INPUT);
  if (!strstr(st.msg, want)) {
    fprintf(stderr, "\n  message: %s\n  wanted:  %s\n", st.msg, want);
    CU_FAIL("defect map error message");
  }
}

static void test_bad_maps(void) {
  expect_error("1 0\n7 0\n", 2, "map.txt:2: dead PE (7, 0) is outside the physical grid 6x3");
  expect_error("1 0\n1 0\n", 2, "map.txt:2: dead PE (1, 0) listed twice");
  expect_error("1 zero\n", 2, "map.txt:1: expected 'x y'");
  expect_error("1 2 3\n", 2, "map.txt:1: expected 'x y'");
  expect_error("0 1\n1 1\n", 1, "map.txt:2: physical row 1 has more dead PEs than the 1 spare");
}

void add_grid_tests(void) {
  CU_pSuite s = CU_add_suite("grid and defect map", NULL, NULL);
  CU_add_test(s, "NXxNY parsing", test_parse_size);
  CU_add_test(s, "strict numbers", test_parse_numbers);
  CU_add_test(s, "no defects", test_no_defects);
  CU_add_test(s, "logical rows skip dead PEs", test_mapping);
  CU_add_test(s, "bad defect maps", test_bad_maps);
}
