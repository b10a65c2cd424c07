/* The GPT's AdamW against its formula by hand, the learning-rate schedule,
 * and the shapes the model refuses. Its gradients are checked against
 * finite differences in test_gpt_gradients.c (the same code in double) and
 * against PyTorch in tests/weight_stream. */
#include <CUnit/CUnit.h>
#include <cblas.h>
#include <math.h>

#include "ws_gpt.h"

static const ws_config tiny = {.vocab = 11, .seq = 6, .layers = 2, .heads = 2, .channels = 8};

/* Two AdamW steps on a model whose gradients are set by hand. */
static void test_adamw(void) {
  ws_gpt m;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(ws_gpt_create(&m, &tiny, 1, 2, &st), WF_OK);
  ws_gpt_init(&m, 3);
  const ws_adamw o = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                      .clip = 0};
  double p = m.p.mem[5], mm = 0, vv = 0;
  for (int step = 1; step <= 2; step++) {
    for (size_t i = 0; i < m.g.count; i++) m.g.mem[i] = 0;
    double g = step == 1 ? 0.5 : -0.25;
    m.g.mem[5] = (float)g;
    ws_gpt_update(&m, &o, &st);
    mm = 0.9 * mm + 0.1 * g;
    vv = 0.95 * vv + 0.05 * g * g;
    double mhat = mm / (1 - pow(0.9, step)), vhat = vv / (1 - pow(0.95, step));
    p -= 0.1 * (mhat / (sqrt(vhat) + 1e-8) + 0.1 * p);
    CU_ASSERT_DOUBLE_EQUAL(m.p.mem[5], p, 1e-6);
  }
  /* Clipping: a gradient of norm 10 clipped to 1 moves m by a tenth. */
  for (size_t i = 0; i < m.g.count; i++) m.g.mem[i] = 0;
  m.g.mem[7] = 10;
  ws_adamw c = o;
  c.clip = 1;
  float keep = m.m[7];
  CU_ASSERT_DOUBLE_EQUAL(ws_gpt_update(&m, &c, &st), 10, 1e-5);
  CU_ASSERT_DOUBLE_EQUAL(m.m[7], 0.9 * keep + 0.1 * 1.0, 1e-6);
  ws_gpt_free(&m);
}

static void test_schedule(void) {
  CU_ASSERT_DOUBLE_EQUAL(ws_lr_schedule(0, 10, 100, 1e-3f, 1e-4f), 1e-4, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(ws_lr_schedule(9, 10, 100, 1e-3f, 1e-4f), 1e-3, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(ws_lr_schedule(55, 10, 100, 1e-3f, 1e-4f), 5.5e-4, 1e-8); /* halfway */
  CU_ASSERT_DOUBLE_EQUAL(ws_lr_schedule(100, 10, 100, 1e-3f, 1e-4f), 1e-4, 1e-9);
}

static void test_shapes(void) {
  wf_status st;
  ws_config c = tiny;
  c.heads = 0;
  CU_ASSERT_EQUAL(ws_config_check(&c, &st), WF_ERR_INPUT);
  c.heads = 3; /* 8 channels */
  CU_ASSERT_EQUAL(ws_config_check(&c, &st), WF_ERR_INPUT);
  c = tiny;
  ws_gpt m;
  CU_ASSERT_EQUAL(ws_gpt_create(&m, &c, 1, 7, &st), WF_ERR_INPUT); /* longer than seq */
  /* The table carves exactly the parameter count of the formula. */
  CU_ASSERT_EQUAL_FATAL(ws_gpt_create(&m, &c, 1, 6, &st), WF_OK);
  size_t V = 11, T = 6, L = 2, C = 8;
  CU_ASSERT_EQUAL(m.p.count, V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C);
  ws_gpt_free(&m);
}

void add_gpt_tests(void) {
  CU_pSuite s = CU_add_suite("gpt", NULL, NULL);
  CU_add_test(s, "adamw by hand", test_adamw);
  CU_add_test(s, "lr schedule", test_schedule);
  CU_add_test(s, "shapes", test_shapes);
}
