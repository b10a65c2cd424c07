#include <CUnit/CUnit.h>
#include <math.h>

#include "wf_json.h"

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

void add_json_tests(void) {
  CU_pSuite s = CU_add_suite("json", NULL, NULL);
  CU_add_test(s, "summary builder", test_build);
}
