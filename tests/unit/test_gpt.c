/* The GPT's AdamW against its formula by hand, the learning-rate schedule,
 * and the shapes the model refuses. Its gradients are checked against
 * finite differences in test_gpt_gradients.c (the same code in double) and
 * against PyTorch in tests/weight_stream. */
#include <CUnit/CUnit.h>
#include "wf_cblas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_grid.h"
#include "wf_hw.h"
#include "ws_gpt.h"
#include "ws_memory.h"
#include "ws_model.h"
#include "ws_relay.h"

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

/* Blocks: their sizes add up to the parameter count; packing a block and
 * running a pass on packed copies gives bitwise the resident pass's loss and
 * gradients (what weight streaming relies on). */
static void test_blocks(void) {
  wf_status st;
  ws_gpt m, w;
  CU_ASSERT_EQUAL_FATAL(ws_gpt_create(&m, &tiny, 2, 5, &st), WF_OK);
  CU_ASSERT_EQUAL_FATAL(ws_gpt_create_activations_on(&w, &tiny, 2, 5, NULL, &st), WF_OK);
  CU_ASSERT_PTR_NULL(w.p.mem);
  ws_gpt_init(&m, 5);
  int L = tiny.layers, tok[10], tgt[10];
  for (int i = 0; i < 10; i++) tok[i] = (3 * i + 1) % 11, tgt[i] = (5 * i + 2) % 11;
  size_t total = 0;
  for (int b = 0; b <= L; b++) total += ws_block_size(&tiny, b);
  CU_ASSERT_EQUAL(total, m.p.count);
  CU_ASSERT_EQUAL(ws_block_size(&tiny, 0), 12 * 8 * 8 + 13 * 8);
  float loss = ws_gpt_forward(&m, tok, tgt);
  ws_gpt_backward(&m, tok, tgt);

  /* The streamed way: each block packed (a 1 x 1 grid's one place holds it
   * whole), gradients into packed blocks. */
  const ws_place whole_block = {1, 1, 0};
  float *pk[3], *gk[3];
  ws_block pb[3], gb[3];
  for (int b = 0; b <= L; b++) {
    size_t n = ws_block_size(&tiny, b);
    pk[b] = malloc(n * sizeof(float)), gk[b] = calloc(n, sizeof(float));
    CU_ASSERT_EQUAL(ws_block_tiles_size(&tiny, b, whole_block), n);
    pb[b] = ws_block_tiles(pk[b], &tiny, b, whole_block);
    gb[b] = ws_block_tiles(gk[b], &tiny, b, whole_block);
    ws_block whole = ws_block_of(m.p.mem, &tiny, b);
    ws_block_tiles_copy(&whole, &pb[b], &tiny, whole_block, true, true);
  }
  ws_forward_embed(&w, &pb[L], tok);
  for (int l = 0; l < L; l++) ws_forward_layer(&w, l, &pb[l]);
  CU_ASSERT_EQUAL(ws_forward_head(&w, &pb[L], tgt), loss);
  ws_backward_head(&w, &pb[L], &gb[L], tgt);
  for (int l = L - 1; l >= 0; l--) ws_backward_layer(&w, l, &pb[l], &gb[l]);
  ws_backward_embed(&w, &gb[L], tok);
  for (int b = 0; b <= L; b++) {
    size_t n = ws_block_size(&tiny, b);
    ws_block g = ws_block_of(m.g.mem, &tiny, b);
    CU_ASSERT_EQUAL(ws_block_sumsq(&g, &tiny), ws_block_sumsq(&gb[b], &tiny));
    CU_ASSERT(ws_block_sumsq(&g, &tiny) > 0);
    float *resident = malloc(n * sizeof(float)); /* the resident gradients, packed */
    ws_block r = ws_block_tiles(resident, &tiny, b, whole_block);
    ws_block_tiles_copy(&g, &r, &tiny, whole_block, true, true);
    CU_ASSERT_EQUAL(memcmp(resident, gk[b], n * sizeof(float)), 0);
    free(resident), free(pk[b]), free(gk[b]);
  }
  ws_gpt_free(&m);
  ws_gpt_free(&w);
}

/* The weight-stationary product on a 4 x 2 grid, fp32, by hand: 3 vectors,
 * in 8, out 6: tiles of 2 x 3, 6 FMACs a vector (1-wide; the ports allow
 * it). The column multicast from the middle, PE 0 of 2: 1 word + 2 ramps + 1
 * hop = 6. Forward, the partial sums into PE 1 of 4 (2 hops, both sides):
 *   as a chain, 2 cores on the way (2 ramps + add + hop: 6 each) and both
 *   sides' 3 words in: 18; the middle takes in 2 + 2 x 3 = 8 words a vector;
 *   as a tree, 2 levels of 6 words in + 5, + 2 hops: 24; the middle takes in
 *   2 + 2 x 2 x 3 = 14 words a vector.
 * The FMACs take each input value as it arrives (the phase's fabric part),
 * so both readings of "What overlaps what" agree. The first vector: the
 * multicast, its tile with its input segment (max(6, 2) = 6) and the
 * reduction; then 2 vectors an interval (chain: max(6, 8) = 8; tree: 14).
 * Chain: 6 + 6 + 18 + 16 = 46; tree: 64; the chain is faster. Links: 3 x (8 x 1 + 6 x 3).
 * Input gradient (the grid turned, 2 x 4, in 6, out 8: tiles 3 x 2): the
 * multicast from PE 1 of 4 (1 + 4 + 2 = 7); the reduction into PE 0 of 2,
 * one side only (chain: 6 + 2 = 8; tree: 2 + 5 + 1 = 8); the middle takes
 * in 3 + 2 = 5 words a vector: 7 + 6 + 8 + 2 x 6 = 33.
 * Weight gradient: 2 + 3 = 5 words in, max(6, 5) = 6 a vector, after the
 * longer multicast (PE 1 of 4: 7): 25. */
static void test_gemm_model(void) {
  wf_grid g;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(wf_grid_create(&g, 4, 2, 0, NULL, "test", &st), 0);
  const wf_hw *hw = wf_hw_preset("wse2");
  ws_gemm_cost f = ws_model_gemm(hw, &g, WF_FP32, WS_GEMM_FORWARD, 3, 8, 6);
  ws_gemm_cost di = ws_model_gemm(hw, &g, WF_FP32, WS_GEMM_INPUT_GRAD, 3, 8, 6);
  ws_gemm_cost dw = ws_model_gemm(hw, &g, WF_FP32, WS_GEMM_WEIGHT_GRAD, 3, 8, 6);
  CU_ASSERT_DOUBLE_EQUAL(f.cycles.lo, 46, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(f.cycles.hi, 46, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(f.link_words, 78, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(di.cycles.lo, 33, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(dw.cycles.lo, 25, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(dw.cycles.hi, 25, 1e-12);
  /* fp16 a 4-wide FMAC (6 elements, 1.5 cycles): the ramp binds, 2 words
   * for the first vector, the chain's 8 for the others: 6 + 2 + 18 + 16;
   * the weight gradient's 5 words: 7 + 3 x 5. */
  ws_gemm_cost h = ws_model_gemm(hw, &g, WF_FP16, WS_GEMM_FORWARD, 3, 8, 6);
  CU_ASSERT_DOUBLE_EQUAL(h.cycles.lo, 42, 1e-12);
  ws_gemm_cost hw16 = ws_model_gemm(hw, &g, WF_FP16, WS_GEMM_WEIGHT_GRAD, 3, 8, 6);
  CU_ASSERT_DOUBLE_EQUAL(hw16.cycles.lo, 22, 1e-12);
  wf_grid_free(&g);
}

/* The busiest PE's share of a block, counted by hand: 5 channels, a
 * vocabulary of 10, 3 positions on a 2 x 3 grid (columns over 2, rows over
 * 3). A layer: qkvw 15 x 5 -> 5 x 3, attprojw 5 x 5 -> 2 x 3, fcw 20 x 5 ->
 * 7 x 3, fcprojw 5 x 20 -> 2 x 10: 15 + 6 + 21 + 20 = 62, and 65 vector
 * numbers over 6 places -> 11: 73. The head: wte 10 x 5 -> 4 x 3 = 12, and
 * wpe, lnf (15 + 5 + 5) over 6 -> 5: 17. Even splits give block / places. */
static void test_block_share(void) {
  ws_config c = {.vocab = 10, .seq = 3, .layers = 2, .heads = 1, .channels = 5};
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&c, 0, 2, 3), 73, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&c, 1, 2, 3), 73, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&c, 2, 2, 3), 17, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&c, 0, 1, 1), (double)ws_block_size(&c, 0), 0);
  ws_config d = {.vocab = 256, .seq = 64, .layers = 2, .heads = 4, .channels = 64};
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&d, 0, 64, 64), 12 + 1, 0); /* 49,152 + 832 over 4,096 */
  CU_ASSERT_DOUBLE_EQUAL(ws_block_share(&d, 2, 64, 64), 4 + 2, 0);  /* 16,384 + 4,224 over 4,096 */
}

/* SwarmX trees drawn by hand: nodes [MemoryX, SwarmX 1..S, workers]; each
 * SwarmX rank takes F children in all, workers dealt deepest SwarmX first. */
static void expect_tree(int F, int S, int W, const int *want) {
  int parent[16];
  CU_ASSERT_FATAL(1 + S + W <= 16 && ws_relay_tree(F, S, W, parent));
  CU_ASSERT(memcmp(parent, want, (size_t)(1 + S + W) * sizeof *parent) == 0);
}

static void test_relay_tree(void) {
  /* SwarmX 1 feeds SwarmX 3 and a worker (mixed children); 2 and 3 a worker each. */
  expect_tree(2, 3, 3, (int[]){-1, 0, 0, 1, 3, 2, 1});
  /* A second round: SwarmX 3 and 2 have room left, 1 none. */
  expect_tree(2, 3, 4, (int[]){-1, 0, 0, 1, 3, 2, 1, 3});
  expect_tree(3, 2, 4, (int[]){-1, 0, 0, 2, 1, 2, 1});
  /* Two workers for three SwarmX ranks: the first stays out (-2). */
  expect_tree(4, 3, 2, (int[]){-1, -2, 0, 0, 3, 2});
  /* A chain (fan-out 1): the worker under the deepest. */
  expect_tree(1, 3, 1, (int[]){-1, 0, 1, 2, 3});
  /* No SwarmX: MemoryX feeds every worker, whatever the fan-out. */
  expect_tree(2, 0, 7, (int[]){-1, 0, 0, 0, 0, 0, 0, 0});
  /* Children counted from those trees: SwarmX 1 and 3 have 2 (the first
   * of them reported), MemoryX 2; with an idle SwarmX 1, SwarmX 2 and 3 one. */
  int busiest = -1;
  CU_ASSERT(ws_relay_most_children(2, 3, 4, &busiest) == 2 && busiest == 0);
  CU_ASSERT(ws_relay_root_children(2, 3, 4) == 2);
  CU_ASSERT(ws_relay_most_children(4, 3, 2, &busiest) == 1 && busiest == 1);
  CU_ASSERT(ws_relay_most_children(2, 0, 7, &busiest) == 0);
  CU_ASSERT(ws_relay_root_children(2, 0, 7) == 7);
  /* Fan-out 2 through 3 SwarmX ranks: 3 x 2 places less 1 for SwarmX 3 = 5 workers. */
  wf_status st = {0};
  CU_ASSERT(ws_relay_fits(2, 3, 5, &st));
  CU_ASSERT(!ws_relay_fits(2, 3, 6, &st) && strstr(st.msg, "swarmx_fanout >= 3") != NULL);
  CU_ASSERT(ws_relay_fits(2, 0, 100, &st));
}

/* MemoryX (and SwarmX) budgets by hand on `tiny`: a layer block 12 x 8^2 + 13 x 8 = 872
 * numbers, the head 11 x 8 + 6 x 8 + 2 x 8 = 152, the model 1,896. Of two
 * MemoryX ranks, rank 1 owns layer 1 (872 numbers x 4: weights, gradients,
 * moments) and builds the whole model (x 2; x 4 with a restart's moments);
 * 3 children add room for 2 sums of 2 blocks of 872; rank 0 owns 1,024 and
 * keeps the whole model with moments. Bytes: 4 a number. */
static void test_memoryx_budget(void) {
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_memoryx(&tiny, 2, 1, 1, false, 1, 1), (3488 + 3792) * 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_memoryx(&tiny, 2, 1, 1, true, 1, 1), (3488 + 7584) * 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_memoryx(&tiny, 2, 1, 3, false, 1, 1),
                         (3488 + 3792 + 3488) * 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_memoryx(&tiny, 2, 0, 1, false, 1, 1), (4096 + 7584) * 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_streamed(&tiny, 1, 1, 1), (2 * 152 + 4 * 872) * 4, 0);
  /* A SwarmX rank, prefetch 1: the head and 2 layers on their way down; 2
   * sums of 3 children's layers (an idle rank: room for one child). */
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_swarmx(&tiny, 1, 3, 1, 1), (152 + 2 * 872 + 2 * 3 * 872) * 4,
                         0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_swarmx(&tiny, 1, 0, 1, 1), (152 + 2 * 872 + 2 * 1 * 872) * 4,
                         0);
  /* Wafers of 2 x 1 ranks: a place holds half the columns of each weight
   * matrix (qkvw 24 x 4, attprojw 8 x 4, fcw 32 x 4, fcprojw 8 x 16: 384)
   * and the 13 x 8 = 104 vectors: 488 a layer; of the head, wte 11 x 4 and
   * wpe and lnf whole: 44 + 48 + 16 = 108. MemoryX and SwarmX keep both
   * places': 976 a layer, 216 the head. */
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_streamed(&tiny, 1, 2, 1), (2 * 108 + 4 * 488) * 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_memoryx(&tiny, 2, 1, 1, false, 2, 1), (4 * 976 + 3792) * 4,
                         0);
  CU_ASSERT_DOUBLE_EQUAL(ws_memory_swarmx(&tiny, 1, 3, 2, 1), (216 + 2 * 976 + 2 * 3 * 976) * 4,
                         0);
  ws_place second = {2, 1, 1};
  CU_ASSERT_EQUAL(ws_block_tiles_size(&tiny, 0, second), 488);
  ws_tile fcproj = ws_tile_at(&tiny, WS_FCPROJW, second);
  CU_ASSERT(fcproj.row0 == 0 && fcproj.rows == 8 && fcproj.col0 == 16 && fcproj.cols == 16);
}

void add_gpt_tests(void) {
  CU_pSuite s = CU_add_suite("gpt", NULL, NULL);
  CU_add_test(s, "adamw by hand", test_adamw);
  CU_add_test(s, "lr schedule", test_schedule);
  CU_add_test(s, "shapes", test_shapes);
  CU_add_test(s, "blocks, packed and resident", test_blocks);
  CU_add_test(s, "weight-stationary product on the PE grid", test_gemm_model);
  CU_add_test(s, "a PE's share of a block", test_block_share);
  CU_add_test(s, "SwarmX trees by hand", test_relay_tree);
  CU_add_test(s, "MemoryX and SwarmX budgets by hand", test_memoryx_budget);
}
