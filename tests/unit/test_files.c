/* The file registry (wf_files) and the deck's inline comments: what a run
 * refuses before any work, checked in a scratch folder. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wf_deck.h"
#include "wf_files.h"

static char dir[64];

static int setup(void) {
  snprintf(dir, sizeof dir, "/tmp/wafer-files-XXXXXX");
  if (!mkdtemp(dir) || chdir(dir) != 0) return -1;
  FILE *f = fopen("in.h5", "w");
  if (!f) return -1;
  fclose(f);
  return mkfifo("pipe", 0600);
}

static int teardown(void) {
  remove("in.h5"), remove("pipe");
  return chdir("/") == 0 && rmdir(dir) == 0 ? 0 : -1;
}

/* Check claims; expect `want` ("" = success) in the message. */
static void expect(const wf_file_claim *c, int n, const char *want) {
  wf_files files = {0};
  wf_status st;
  wf_status_clear(&st);
  for (int i = 0; i < n; i++) CU_ASSERT_EQUAL_FATAL(wf_files_add_claim(&files, &c[i], &st), WF_OK);
  int rc = wf_files_check(&files, &st);
  wf_files_free(&files);
  if (!want[0]) {
    CU_ASSERT_EQUAL(rc, WF_OK);
    if (rc) fprintf(stderr, "\n  unexpected: %s\n", st.msg);
    return;
  }
  CU_ASSERT_EQUAL(rc, WF_ERR_INPUT);
  if (!strstr(st.msg, want)) {
    fprintf(stderr, "\n  message: %s\n  wanted:  %s\n", st.msg, want);
    CU_FAIL("message lacks the expected text");
  }
}

#define CLAIM(who, path, use) {who, who, path, use, false, false, 0, false}

static void test_collisions(void) {
  wf_file_claim ok[] = {CLAIM("[a] in", "in.h5", WF_FILE_READ), CLAIM("[a] out", "out.h5", WF_FILE_WRITE)};
  expect(ok, 2, "");
  wf_file_claim two_reads[] = {CLAIM("[a] in", "in.h5", WF_FILE_READ), CLAIM("[b] in", "./in.h5", WF_FILE_READ)};
  expect(two_reads, 2, ""); /* reading one file twice loses nothing */
  wf_file_claim over_input[] = {CLAIM("[a] in", "in.h5", WF_FILE_READ),
                                CLAIM("[a] out", "./in.h5", WF_FILE_WRITE)};
  expect(over_input, 2, "[a] out: the same file as [a] in, which the run reads");
  wf_file_claim two_outputs[] = {CLAIM("[a] out", "x.h5", WF_FILE_WRITE), CLAIM("--json", "", WF_FILE_WRITE)};
  snprintf(two_outputs[1].path, sizeof two_outputs[1].path, "%s/x.h5", dir); /* absolute */
  expect(two_outputs, 2, "which the run writes too");
  wf_file_claim cache[] = {CLAIM("[fft] wisdom", "in.h5", WF_FILE_UPDATE), CLAIM("[a] in", "in.h5", WF_FILE_READ)};
  expect(cache, 2, "[fft] wisdom: the same file as [a] in");
}

static void test_derived(void) {
  wf_file_claim sidecar[] = {CLAIM("[a] in", "out.xmf", WF_FILE_READ), CLAIM("[a] out", "out.h5", WF_FILE_WRITE)};
  expect(sidecar, 2, "(its XDMF sidecar out.xmf): the same file as [a] in");
  wf_file_claim part[] = {CLAIM("[a] in", "out.h5.part.x1Y2z3", WF_FILE_READ), CLAIM("[a] out", "out.h5", WF_FILE_WRITE)};
  expect(part, 2, "(its temporary files out.h5.part.*)");
  /* NAME.part itself is never opened (wf_temp_create): reading it is no collision. */
  wf_file_claim old_part[] = {CLAIM("[a] in", "out.h5.part", WF_FILE_READ), CLAIM("[a] out", "out.h5", WF_FILE_WRITE)};
  expect(old_part, 2, "");
  wf_file_claim series[] = {{"snapshots", "snapshots", "run_[0-9][0-9].*", WF_FILE_WRITE, true, false, 0, false},
                            CLAIM("[a] restart", "run_07.h5", WF_FILE_READ)};
  expect(series, 2, "snapshots: the same file as [a] restart");
  wf_file_claim not_series[] = {{"snapshots", "snapshots", "run_[0-9][0-9].*", WF_FILE_WRITE, true, false, 0, false},
                                CLAIM("[a] restart", "run_final.h5", WF_FILE_READ)};
  expect(not_series, 2, "");
}

static void test_kinds(void) {
  wf_file_claim pipe_in[] = {CLAIM("[a] in", "pipe", WF_FILE_READ)};
  expect(pipe_in, 1, "named pipe or a device");
  wf_file_claim dev_out[] = {CLAIM("[a] out", "/dev/null", WF_FILE_WRITE)};
  expect(dev_out, 1, "device or pipe, which the finished file would replace");
  wf_file_claim json_dev[] = {{"--json", "--json", "/dev/null", WF_FILE_WRITE, false, true, 0, false}};
  expect(json_dev, 1, ""); /* --json /dev/stdout is written in place */
  wf_file_claim dir_out[] = {CLAIM("[a] out", ".", WF_FILE_WRITE)};
  expect(dir_out, 1, "it is a directory");
  wf_file_claim missing[] = {CLAIM("[a] out", "nowhere/x.h5", WF_FILE_WRITE)};
  expect(missing, 1, "its directory nowhere does not exist");
  wf_file_claim missing_in[] = {CLAIM("[a] in", "nowhere/x.h5", WF_FILE_READ)};
  expect(missing_in, 1, ""); /* reported by whoever opens it */
}

static const wf_key keys[] = {{"file", WF_KEY_OUTPUT, "", 0, 0, NULL, "output", NULL},
                              {"n", WF_KEY_INT, "1", 0, 9, NULL, "a number", NULL}};
static const wf_section out = {"out", "output", keys, 2, NULL, NULL};
static const wf_section *const sections[] = {&out};

static void test_inline_comments(void) {
  wf_deck d;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(wf_deck_create(&d, sections, 1, &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_parse_text(&d, "[out]\nfile = out.h5   # my output\nn = 3\t; three\n", "d.ini", &st), WF_OK);
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "out", "file"), "out.h5");
  CU_ASSERT_EQUAL(wf_deck_int(&d, "out", "n"), 3);
  CU_ASSERT_EQUAL(wf_deck_parse_text(&d, "[out]\nfile = a#b.h5\n", "e.ini", &st), WF_OK);
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "out", "file"), "a#b.h5"); /* no blank before '#' */
  wf_deck_free(&d);
}

void add_files_tests(void) {
  CU_pSuite s = CU_add_suite("files", setup, teardown);
  CU_add_test(s, "collisions between claims", test_collisions);
  CU_add_test(s, "temporary files, sidecars, series", test_derived);
  CU_add_test(s, "pipes, devices, directories", test_kinds);
  CU_add_test(s, "inline comments in decks", test_inline_comments);
}
