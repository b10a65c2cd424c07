#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "wf_progress.h"

/* Progress lines: printed after the interval, with done/total, percent and an ETA. */

static void test_progress(void) {
  FILE *f = tmpfile();
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  wf_progress p;
  wf_progress_start(&p, "cg", 10, true, f);
  p.interval = 0;
  wf_progress_tick(&p, 3);
  wf_progress_tick(&p, 10); /* the last step prints nothing: the run reports itself */
  wf_progress q;
  wf_progress_start(&q, "off", 10, false, f);
  q.interval = 0;
  wf_progress_tick(&q, 5);
  rewind(f);
  char line[256] = "", extra[256] = "";
  CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
  CU_ASSERT_PTR_NULL(fgets(extra, sizeof extra, f));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "cg: 3/10 (30%)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "ETA"));
  fclose(f);
}

/* A run to a time, not a step count, says what its counts are. */
static void test_progress_unit(void) {
  FILE *f = tmpfile();
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  wf_progress p;
  wf_progress_start(&p, "cfd", 1000, true, f);
  p.unit = " thousandths of t_end";
  p.interval = 0;
  wf_progress_tick(&p, 250);
  rewind(f);
  char line[256] = "";
  CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, f));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "cfd: 250/1000 thousandths of t_end (25%)"));
  fclose(f);
}

void add_progress_tests(void) {
  CU_pSuite s = CU_add_suite("progress", NULL, NULL);
  CU_add_test(s, "progress line with ETA", test_progress);
  CU_add_test(s, "progress in a unit other than steps", test_progress_unit);
}
