#include <CUnit/CUnit.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wf_json.h"
#include "wf_report.h"

static void test_build(void) {
  wf_json j;
  wf_json_init(&j);
  wf_json_str(&j, "name", "a\"b\\c\n");
  wf_json_int(&j, "n", -3);
  long long v[2] = {4, 5};
  wf_json_ints(&j, "grid", v, 2);
  wf_json_begin(&j, "inner");
  wf_json_num(&j, "x", 0.5);
  wf_json_num(&j, "bad", NAN);
  wf_json_end(&j);
  wf_json_bool(&j, "ok", true);
  CU_ASSERT_STRING_EQUAL(wf_json_finish(&j),
                         "{\"name\":\"a\\\"b\\\\c\\n\",\"n\":-3,\"grid\":[4,5],"
                         "\"inner\":{\"x\":0.5,\"bad\":null},\"ok\":true}");
  wf_json_free(&j);
}

/* A report: each quantity once, written to the JSON and to the text line
 * by its template; scaled text, JSON-only and text-only items, "%%". */
static void test_report(void) {
  wf_json j;
  wf_json_init(&j);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  wf_report r;
  wf_report_open_on(&r, &j, out, "cfd");
  wf_report_begin(&r, "cfd");
  wf_report_line(&r, "heat");
  long long cells[3] = {64, 32, 8};
  wf_report_ints(&r, "cells", cells, 3, "%d cells");
  wf_report_int(&r, "steps", 100, "%5d steps");
  wf_report_num(&r, "dt", 0.25, NULL);
  wf_report_scaled(&r, "rate", 2.5e6, 1e-6, "%.1f Mcell/s");
  wf_report_note(&r, "box %d x %d", 2, 1);
  wf_report_line(&r, NULL);
  wf_report_num(&r, "share", 12.5, "%.0f%% of it");
  wf_report_int(&r, NULL, 7, "100%% of %d");
  wf_report_str(&r, "poisson", "fft", "Poisson by %s");
  wf_report_bool(&r, "linear", true, "linear: %s");
  double nu[2] = {1.5, 2.25};
  wf_report_nums(&r, "nu", nu, 2, "Nu %.2f");
  wf_report_range(&r, "span", 1e-6, 2e-6, 1e6, "%.1f us");
  wf_report_end(&r);
  /* the model's line: seconds in us below 1 ms, what fits */
  r.machine = "CS-2";
  wf_projection p = {.valid = true, .unit = "step", .seconds = {2e-6, 4.5e-6}, .flops = 0,
                     .bytes_per_pe = 50000, .sram_for_data = 45056, .pes_needed = 16,
                     .pes_offered = 100};
  wf_report_model(&r, &p);
  wf_report_int(&r, "cycles", 7, "%d cycles");
  wf_report_end(&r);
  wf_report_close(&r);
  /* a model with no projection still has its own line (text only here);
   * integers beyond a double's 53 bits shown exactly */
  wf_report_open_on(&r, NULL, out, "cfd");
  r.machine = "CS-2";
  wf_report_model(&r, &(wf_projection){.valid = false});
  wf_report_int(&r, NULL, (1LL << 60) + 1, "%d words");
  wf_report_end(&r);
  wf_report_close(&r);
  fclose(out);
  CU_ASSERT_STRING_EQUAL(text,
                         "cfd: heat: 64x32x8 cells,   100 steps, 2.5 Mcell/s, box 2 x 1\n"
                         "cfd: 12% of it, 100% of 7, Poisson by fft, linear: yes, Nu 1.50, 2.25, "
                         "[1.0, 2.0] us\n"
                         "cfd: wafer model (CS-2): [2, 4.5] us/step, 16 of 100 PEs (fits), "
                         "50000 B/PE of 45056 (does NOT fit), 7 cycles\n"
                         "cfd: wafer model (CS-2): no projection, 1152921504606846977 words\n");
  CU_ASSERT_STRING_EQUAL(wf_json_finish(&j),
                         "{\"cfd\":{\"cells\":[64,32,8],\"steps\":100,\"dt\":0.25,"
                         "\"rate\":2500000,\"share\":12.5,\"poisson\":\"fft\","
                         "\"linear\":true,\"nu\":[1.5,2.25],\"span\":[1e-06,2e-06]},"
                         "\"model\":{\"unit\":\"step\",\"seconds_per_unit\":[2e-06,4.5e-06],"
                         "\"bytes_per_pe\":50000,\"sram_for_data\":45056,\"fits_sram\":false,"
                         "\"pes_needed\":16,\"pes_offered\":100,\"fits_pes\":true,\"cycles\":7}}");
  free(text);
  wf_json_free(&j);
}

/* A template that cannot show its value (an int's shown by %g, two
 * conversions) stops the run with it named, text or not. */
static void test_report_bad_template(void) {
  const char *bad[] = {"%g steps", "%d of %d", "no conversion"};
  for (int k = 0; k < 3; k++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stderr)) _exit(1);
      wf_report r;
      wf_report_open_on(&r, NULL, NULL, "t");
      wf_report_int(&r, "steps", 3, bad[k]);
      _exit(0);
    }
    int status = 0;
    CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  }
}

void add_json_tests(void) {
  CU_pSuite s = CU_add_suite("json", NULL, NULL);
  CU_add_test(s, "summary builder", test_build);
  CU_add_test(s, "report: text and JSON from one declaration", test_report);
  CU_add_test(s, "report: a template that does not fit", test_report_bad_template);
}
