/* The GPT's gradients against central finite differences of its loss,
 * every parameter tensor, on a tiny model. Built from the same source as
 * the model in double precision (-DWS_DOUBLE), where a difference step of
 * 1e-6 leaves errors near 1e-9: float could not resolve the small
 * gradients. A CUnit program of its own. */
#include <CUnit/Basic.h>
#include "wf_cblas.h"
#include <math.h>
#include <stdio.h>

#include "ws_gpt.h"

static const ws_config tiny = {.vocab = 11, .seq = 6, .layers = 2, .heads = 2, .channels = 8};

static double finite_difference(ws_gpt *m, ws_real *p, const int *tok, const int *tgt) {
  const ws_real keep = *p, h = 1e-6;
  *p = keep + h;
  double up = ws_gpt_forward(m, tok, tgt);
  *p = keep - h;
  double down = ws_gpt_forward(m, tok, tgt);
  *p = keep;
  return (up - down) / (2 * h);
}

/* Every entry of the small tensors; of the large ones, a diagonal walk
 * through each layer's matrix (row t mod rows, column t mod cols, for t up to
 * the larger of the two), so that every row and every column is checked: a
 * fixed stride aliased with the widths (fcw's 32 x 8 saw only column 0). */
static void check_gradients(const ws_config *c) {
  wf_blas_single_thread();
  ws_gpt m;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(ws_gpt_create(&m, c, 2, 5, &st), WF_OK);
  ws_gpt_init(&m, 7);
  int tok[10], tgt[10];
  for (int i = 0; i < 10; i++) tok[i] = (i * 7 + 3) % 11, tgt[i] = (i * 5 + 1) % 11;
  ws_gpt_forward(&m, tok, tgt);
  ws_gpt_backward(&m, tok, tgt);
  for (int k = 0; k < WS_NPARAMS; k++) {
    int rows, cols;
    ws_param_shape(c, k, &rows, &cols);
    size_t n = m.p.size[k], matrix = (size_t)rows * cols, walk = rows > cols ? rows : cols;
    size_t samples = n <= 64 ? n : n / matrix * walk;
    double worst = 0, largest = 0;
    for (size_t i = 0; i < samples; i++) {
      size_t e = n <= 64 ? i : i / walk * matrix + (i % walk % rows) * cols + i % walk % cols;
      double fd = finite_difference(&m, &m.p.t[k][e], tok, tgt), g = m.g.t[k][e];
      worst = fmax(worst, fabs(fd - g));
      largest = fmax(largest, fabs(g));
    }
    if (worst > 1e-6 * largest + 1e-9) {
      fprintf(stderr, "%s: gradient off by %.3g (largest %.3g)\n", ws_param_names[k], worst,
              largest);
      CU_FAIL("gradient differs from the finite difference");
    }
    CU_ASSERT(largest > 0); /* every tensor takes part in the loss */
  }
  ws_gpt_free(&m);
}

static void test_gradients(void) { check_gradients(&tiny); }

/* The ReLU MLP: its kink is met with probability zero at a random point. */
static void test_gradients_relu(void) {
  ws_config c = tiny;
  c.relu = 1;
  check_gradients(&c);
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  CU_pSuite s = CU_add_suite("gpt gradients (double)", NULL, NULL);
  CU_add_test(s, "every tensor vs finite differences", test_gradients);
  CU_add_test(s, "every tensor vs finite differences, ReLU MLP", test_gradients_relu);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  CU_cleanup_registry();
  return failures ? 1 : 0;
}
