#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "wf_deck.h"

static int check_even(const char *v, char *why, size_t len) {
  if (strlen(v) % 2 == 0) return 0;
  snprintf(why, len, "odd length");
  return -1;
}

static const wf_key sim_keys[] = {
    {"steps", WF_KEY_INT, "10", 1, 1000, NULL, "number of steps", NULL},
    {"dt", WF_KEY_REAL, "0.5", 0.001, 10, NULL, "time step", NULL},
    {"verbose", WF_KEY_BOOL, "false", 0, 0, NULL, "talk more", NULL},
    {"name", WF_KEY_STRING, "ab", 0, 0, NULL, "an even-length name", check_even},
    {"mode", WF_KEY_CHOICE, "fast", 0, 0, "fast|exact", "how", NULL},
};
static const wf_section sim = {"sim", "a test section", sim_keys, 5, NULL, "steps verbose"};
static const wf_key out_keys[] = {{"file", WF_KEY_STRING, "", 0, 0, NULL, "output", NULL}};
static const wf_section out = {"out", "output", out_keys, 1, NULL, NULL};
static const wf_section *const sections[] = {&sim, &out};

static void make(wf_deck *d) {
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(wf_deck_create(d, sections, 2, &st), WF_OK);
}

/* Parse `text` as "deck.ini", expect failure with code 2 and `want` in the message. */
static void expect_error(const char *text, const char *want) {
  wf_deck d;
  wf_status st;
  make(&d);
  int rc = wf_deck_parse_text(&d, text, "deck.ini", &st);
  CU_ASSERT_EQUAL(rc, WF_ERR_INPUT);
  if (!strstr(st.msg, want)) {
    fprintf(stderr, "\n  message: %s\n  wanted:  %s\n", st.msg, want);
    CU_FAIL("error message lacks the expected text");
  }
  wf_deck_free(&d);
}

static void test_defaults(void) {
  wf_deck d;
  make(&d);
  CU_ASSERT_EQUAL(wf_deck_int(&d, "sim", "steps"), 10);
  CU_ASSERT_DOUBLE_EQUAL(wf_deck_real(&d, "sim", "dt"), 0.5, 0);
  CU_ASSERT_FALSE(wf_deck_bool(&d, "sim", "verbose"));
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "sim", "mode"), "fast");
  CU_ASSERT_STRING_EQUAL(wf_deck_entry(&d, "sim", "steps")->source, "default");
  wf_deck_free(&d);
}

static void test_good_file(void) {
  wf_deck d;
  wf_status st;
  make(&d);
  const char *text = "; a comment\n[sim]\n  steps = 42   ; inline comment\n"
                     "dt=2.5e-1\nverbose = YES\n\n# another comment\nmode = exact\n"
                     "[out]\nfile = run.h5\n";
  CU_ASSERT_EQUAL_FATAL(wf_deck_parse_text(&d, text, "deck.ini", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_int(&d, "sim", "steps"), 42);
  CU_ASSERT_DOUBLE_EQUAL(wf_deck_real(&d, "sim", "dt"), 0.25, 0);
  CU_ASSERT_TRUE(wf_deck_bool(&d, "sim", "verbose"));
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "sim", "mode"), "exact");
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "out", "file"), "run.h5");
  CU_ASSERT_STRING_EQUAL(wf_deck_entry(&d, "sim", "steps")->source, "deck.ini:3");
  CU_ASSERT_STRING_EQUAL(wf_deck_entry(&d, "out", "file")->source, "deck.ini:10");
  /* --set overrides the file and says so. */
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.steps=7", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_int(&d, "sim", "steps"), 7);
  CU_ASSERT_STRING_EQUAL(wf_deck_entry(&d, "sim", "steps")->source, "--set");
  wf_deck_free(&d);
}

static void test_bad_files(void) {
  expect_error("[sim]\nsteps = 3\n[nope]\nx = 1\n", "deck.ini:3: unknown section [nope]");
  expect_error("[sim]\nsteps = 3\nstpes = 4\n", "deck.ini:3: [sim] unknown key 'stpes'");
  expect_error("[sim]\nsteps = abc\n", "deck.ini:2: [sim] steps = abc: not an integer");
  expect_error("[sim]\nsteps = 2.5\n", "not an integer");
  expect_error("[sim]\nsteps = 0\n", "deck.ini:2: [sim] steps = 0: out of range [1, 1000]");
  expect_error("[sim]\ndt = 100\n", "out of range [0.001, 10]");
  expect_error("[sim]\ndt = nan\n", "not a finite real number");
  expect_error("[sim]\ndt = 1e400\n", "not a finite real number");
  expect_error("[sim]\nverbose = maybe\n", "not a bool");
  expect_error("[sim]\nmode = slow\n", "not one of fast|exact");
  expect_error("[sim]\nname = abc\n", "deck.ini:2: [sim] name = abc: odd length");
  expect_error("[sim]\nsteps = 3\n\nsteps = 4\n", "deck.ini:4: [sim] steps set twice (first at line 2)");
  expect_error("steps = 3\n", "deck.ini:1: key 'steps' outside any [section]");
  expect_error("[sim]\nsteps = 3\nthis line has no equals sign\n", "deck.ini:3: syntax error");
  expect_error("[sim\nsteps = 3\n", "deck.ini:1: syntax error");
}

static void test_bad_sets(void) {
  wf_deck d;
  wf_status st;
  make(&d);
  CU_ASSERT_EQUAL(wf_deck_set(&d, "steps=3", &st), WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "expected section.key=value"));
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.steps", &st), WF_ERR_INPUT);
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.nope=1", &st), WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "--set: [sim] unknown key 'nope' (known: steps, dt"));
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.steps=-1", &st), WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "--set: [sim] steps = -1: out of range"));
  /* A failed set leaves the old value. */
  CU_ASSERT_EQUAL(wf_deck_int(&d, "sim", "steps"), 10);
  /* Values may contain '=' and '.'. */
  CU_ASSERT_EQUAL(wf_deck_set(&d, "out.file=a=b.h5", &st), WF_OK);
  CU_ASSERT_STRING_EQUAL(wf_deck_str(&d, "out", "file"), "a=b.h5");
  wf_deck_free(&d);
}

static void test_bad_default(void) {
  static const wf_key bad[] = {{"n", WF_KEY_INT, "0", 1, 5, NULL, "n", NULL}};
  static const wf_section s = {"bad", "", bad, 1, NULL, NULL};
  const wf_section *const secs[] = {&s};
  wf_deck d;
  wf_status st;
  CU_ASSERT_EQUAL(wf_deck_create(&d, secs, 1, &st), WF_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "built-in default [bad] n = 0"));
}

/* What a checkpoint records of a deck, and a restart's deck against it:
 * free keys may change, others keep their value (compared as values), a
 * key the record lacks is compared with its default. */
static void test_restart_state(void) {
  wf_deck d;
  wf_status st;
  make(&d);
  const char *const only[] = {"sim"};
  char *saved = wf_deck_state(&d, only, 1);
  CU_ASSERT_STRING_EQUAL(saved, "sim.dt = 0.5\nsim.name = ab\nsim.mode = fast\n");
  CU_ASSERT_EQUAL(wf_deck_set(&d, "out.file=ck.h5", &st), WF_OK); /* the checkpoint's key */
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.steps=20", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.dt=5e-1", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_check_state(&d, only, 1, saved, "out", "file", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.dt=0.25", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_check_state(&d, only, 1, saved, "out", "file", &st), WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "[sim] dt = 0.25: checkpoint 'ck.h5' was written by a run with dt = 0.5"));
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.dt=0.5", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.mode=exact", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_check_state(&d, only, 1, "sim.dt = 0.5\n", "out", "file", &st),
                  WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "mode = fast"));
  /* A record of none of these keys: another workload's checkpoint, said so. */
  CU_ASSERT_EQUAL(wf_deck_check_state(&d, only, 1, "other.x = 1\n", "out", "file", &st),
                  WF_ERR_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "[out] file = ck.h5: the checkpoint records none"));
  /* A value with a line break would break the record's lines: refused. */
  CU_ASSERT_EQUAL(wf_deck_set(&d, "sim.name=a\nsim.dt = 9", &st), WF_ERR_INPUT);
  free(saved);
  wf_deck_free(&d);
  /* A restart list naming a key the section lacks is a bug in the table. */
  static const wf_section typo = {"typo", "", sim_keys, 5, "restart", "steps"};
  const wf_section *const secs[] = {&typo};
  CU_ASSERT_EQUAL(wf_deck_create(&d, secs, 1, &st), WF_ERR_RUNTIME);
  CU_ASSERT_PTR_NOT_NULL(strstr(st.msg, "'restart', not a key of it"));
}

static void test_roundtrip(void) {
  wf_deck a, b;
  wf_status st;
  make(&a);
  make(&b);
  CU_ASSERT_EQUAL(wf_deck_set(&a, "sim.dt=0.125", &st), WF_OK);
  CU_ASSERT_EQUAL(wf_deck_set(&a, "sim.mode=exact", &st), WF_OK);
  char *ini = wf_deck_to_ini(&a);
  CU_ASSERT_EQUAL(wf_deck_parse_text(&b, ini, "resolved", &st), WF_OK);
  for (int e = 0; e < a.nentries; e++)
    CU_ASSERT_STRING_EQUAL(a.entries[e].value, b.entries[e].value);
  free(ini);
  wf_deck_free(&a);
  wf_deck_free(&b);
}

/* A message longer than wf_status holds ends in " [...]"; one that fits is whole. */
static void test_message_cut(void) {
  wf_status st;
  char long_text[2000];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  wf_fail(&st, WF_ERR_INPUT, "%s", long_text);
  size_t n = strlen(st.msg);
  CU_ASSERT_EQUAL(n, sizeof st.msg - 1);
  CU_ASSERT_STRING_EQUAL(st.msg + n - 6, " [...]");
  wf_fail(&st, WF_ERR_INPUT, "short");
  wf_wrap(&st, "%s", long_text);
  CU_ASSERT_STRING_EQUAL(st.msg + strlen(st.msg) - 6, " [...]");
  wf_fail(&st, WF_ERR_INPUT, "short");
  wf_wrap(&st, "context");
  CU_ASSERT_STRING_EQUAL(st.msg, "context: short");
}

void add_deck_tests(void) {
  CU_pSuite s = CU_add_suite("deck", NULL, NULL);
  CU_add_test(s, "a message cut to fit says so", test_message_cut);
  CU_add_test(s, "defaults", test_defaults);
  CU_add_test(s, "good file, sources, --set", test_good_file);
  CU_add_test(s, "bad files name file:line and key", test_bad_files);
  CU_add_test(s, "bad --set", test_bad_sets);
  CU_add_test(s, "invalid built-in default", test_bad_default);
  CU_add_test(s, "resolved deck round trip", test_roundtrip);
  CU_add_test(s, "a restart's deck against its checkpoint's", test_restart_state);
}
