/* TLR-MVM's pure parts: the Hilbert curve against its defining properties,
 * a tile's compression against the dense tile it came from, the tile-to-PE
 * map, and the wafer model and KAUST's byte count against hand computations. */
#include <CUnit/CUnit.h>
#include <complex.h>
#include "wf_lapacke.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tl_compress.h"
#include "tl_lsqr.h"
#include "tl_matrix.h"
#include "tl_model.h"
#include "tl_survey.h"

/* Along the curve every cell is visited once and each step moves to a
 * neighbouring cell: the curve's defining properties. */
static void test_hilbert_curve(void) {
  for (uint32_t n = 2; n <= 64; n *= 2) {
    int *at = malloc(n * n * sizeof *at);
    for (uint32_t i = 0; i < n * n; i++) at[i] = -1;
    for (uint32_t y = 0; y < n; y++)
      for (uint32_t x = 0; x < n; x++) {
        uint64_t d = tl_hilbert_index(n, x, y);
        CU_ASSERT_FATAL(d < (uint64_t)n * n);
        CU_ASSERT_EQUAL(at[d], -1);
        at[d] = (int)(y * n + x);
      }
    for (uint32_t d = 1; d < n * n; d++) {
      int dx = abs(at[d] % (int)n - at[d - 1] % (int)n),
          dy = abs(at[d] / (int)n - at[d - 1] / (int)n);
      CU_ASSERT_EQUAL(dx + dy, 1);
    }
    /* It starts at the origin and ends at the other bottom corner. */
    CU_ASSERT_EQUAL(at[0], 0);
    CU_ASSERT_EQUAL(at[n * n - 1], (int)(n - 1));
    free(at);
  }
}

/* On a grid that is not a power of two the order is a permutation. */
static void test_hilbert_order(void) {
  int nx = 7, ny = 5, order[35], seen[35] = {0};
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(tl_hilbert_order(nx, ny, order, &st), WF_OK);
  for (int i = 0; i < nx * ny; i++) {
    CU_ASSERT_FATAL(order[i] >= 0 && order[i] < nx * ny);
    seen[order[i]]++;
  }
  for (int i = 0; i < nx * ny; i++) CU_ASSERT_EQUAL(seen[i], 1);
}

/* A = sum_l sigma_l a_l b_l^H + tiny noise, with known sigma: the
 * compression keeps the ranks above the tolerance, and U W^H is within
 * the tolerance of A (measured on the dense matrix). */
static void test_compress_tile(void) {
  enum { M = 12, N = 9 };
  const double sigma[3] = {10, 1, 0.1};
  float complex a[M * N], copy[M * N];
  for (int c = 0; c < N; c++)
    for (int r = 0; r < M; r++) {
      double complex v = 1e-6 * sin(3.1 * r + 7.7 * c);
      for (int l = 0; l < 3; l++)
        v += sigma[l] * cexp(I * (0.3 + l) * r) * cexp(-I * (1.1 + 0.7 * l) * c) / sqrt(M * N);
      a[c * M + r] = (float complex)v;
    }
  memcpy(copy, a, sizeof a);
  const double tols[3] = {0.5, 0.05, 1e-4};
  const int want[3] = {2, 3, 3};
  for (int t = 0; t < 3; t++) {
    float complex work[M * N], *U, *W;
    memcpy(work, copy, sizeof work);
    int k;
    double dropped2;
    wf_status st;
    CU_ASSERT_EQUAL_FATAL(tl_compress_tile(M, N, work, tols[t], 1, &k, &U, &W, &dropped2, &st),
                          WF_OK);
    CU_ASSERT_EQUAL(k, want[t]);
    double err2 = 0;
    for (int c = 0; c < N; c++)
      for (int r = 0; r < M; r++) {
        double complex v = 0;
        for (int l = 0; l < k; l++) v += (double complex)U[l * M + r] * conj(W[l * N + c]);
        err2 += pow(cabs(v - copy[c * M + r]), 2);
      }
    CU_ASSERT(sqrt(err2) <= tols[t] + 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(sqrt(err2), sqrt(dropped2), 1e-4);
    free(U), free(W);
  }
  /* Rounded up to a multiple of 4, capped at min(M, N). */
  float complex work[M * N], *U, *W;
  int k;
  double dropped2;
  wf_status st;
  memcpy(work, copy, sizeof work);
  tl_compress_tile(M, N, work, 0.5, 4, &k, &U, &W, &dropped2, &st);
  CU_ASSERT_EQUAL(k, 4);
  free(U), free(W);
  memcpy(work, copy, sizeof work);
  tl_compress_tile(M, N, work, 1e-9, 8, &k, &U, &W, &dropped2, &st);
  CU_ASSERT_EQUAL(k, N);
  free(U), free(W);
  /* Everything under the tolerance: rank 0, no bases. */
  memcpy(work, copy, sizeof work);
  tl_compress_tile(M, N, work, 100, 1, &k, &U, &W, &dropped2, &st);
  CU_ASSERT_EQUAL(k, 0);
  CU_ASSERT_PTR_NULL(U);
}

/* Tiles follow the PE grid; every tile has one owner whatever the counts. */
static void test_tiles_of_pes(void) {
  int t0, t1;
  tl_tiles_of_pes(7, 16, 0, 4, &t0, &t1); /* PEs of tiles: 0 2 4 6 9 11 13 */
  CU_ASSERT(t0 == 0 && t1 == 2);
  tl_tiles_of_pes(7, 16, 12, 16, &t0, &t1);
  CU_ASSERT(t0 == 6 && t1 == 7);
  tl_tiles_of_pes(2, 16, 4, 8, &t0, &t1); /* tiles on PEs 0 and 8: none here */
  CU_ASSERT_EQUAL(t1 - t0, 0);
  for (int ntiles = 1; ntiles < 30; ntiles++)
    for (int npe = 1; npe < 12; npe++) {
      int covered = 0, prev = 0;
      for (int p = 0; p < npe; p += 3) {
        tl_tiles_of_pes(ntiles, npe, p, p + 3 < npe ? p + 3 : npe, &t0, &t1);
        CU_ASSERT_EQUAL(t0, prev);
        covered += t1 - t0;
        prev = t1;
      }
      CU_ASSERT_EQUAL(covered, ntiles);
    }
}

static void test_kaust_bytes(void) {
  /* The case: 10,000 x 10,000, nb 256, R = 15,772. */
  CU_ASSERT_DOUBLE_EQUAL(tl_kaust_bytes(15772, 256, 10000, 10000),
                         8.0 * (2.0 * 15772 * 256 + 20000 + 4 * 15772), 1e-3);
}

/* One 4 x 4 tile of rank 2 on one WSE-2 PE: 16 complex base elements, 4
 * real multiply-adds each at fp32's 1 a cycle = 64 cycles (the ports allow
 * one FMAC a cycle); x: 4 complex = 8 words + 2 ramps of 2;
 * y: on one PE nothing to reduce. */
static void test_model_hand(void) {
  wf_grid g;
  wf_status st;
  wf_grid_create(&g, 1, 1, 0, NULL, "", &st);
  const wf_hw *hw = wf_hw_preset("wse2");
  int rank = 2;
  tl_model_case c = {.m = 4, .n = 4, .nb = 4, .rank = &rank, .frequencies = 1, .systems = 1};
  tl_model t = tl_model_mvm(hw, &g, 1, 1, &c, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(t.pe_elements, 16, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(t.bcast_cycles, 12, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(t.reduce_cycles, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(t.seconds.lo, (64 + 12) / 1.1e9, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(t.seconds.hi, (64 + 12) / 0.85e9, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(t.flops, 8.0 * 16, 1e-12);
  CU_ASSERT_EQUAL(t.total_rank, 2);
  /* Four frequencies on two systems: two products each, twice the time;
   * the bytes count all four. */
  c.frequencies = 4, c.systems = 2;
  tl_model t4 = tl_model_mvm(hw, &g, 1, 1, &c, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(t4.seconds.lo, 2 * t.seconds.lo, 1e-18);
  CU_ASSERT_DOUBLE_EQUAL(t4.kaust_bytes, 4 * t.kaust_bytes, 1e-9);
  wf_grid_free(&g);

  /* 3 x 3 tiles of 4, rank 2, on 3 x 3 PEs: a tile a PE, 16 complex base
   * elements (64 cycles). x from the middle of each PE column: 8 words + 2
   * ramps + 1 hop = 13; y into the middle of each PE row: 1 hop, 1 level of
   * both sides' 8 words + 2 ramps + an add = 22. */
  wf_grid_create(&g, 3, 3, 0, NULL, "", &st);
  tl_model_case u = {.m = 12, .n = 12, .nb = 4, .uniform_rank = 2, .frequencies = 1, .systems = 1};
  tl_model t9 = tl_model_mvm(hw, &g, 3, 3, &u, WF_FP32);
  CU_ASSERT_DOUBLE_EQUAL(t9.pe_elements, 16, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(t9.bcast_cycles, 13, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(t9.reduce_cycles, 22, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(t9.seconds.lo, (64 + 13 + 22) / 1.1e9, 1e-18);
  wf_grid_free(&g);
}

/* One rank for every tile (the closed form of a model-only run) against the
 * same ranks given tile by tile (the loop), on grids where tiles are fewer,
 * as many as and more than the PEs along each axis. */
static void test_model_uniform(void) {
  const wf_hw *hw = wf_hw_preset("wse2");
  const int cases[][5] = {{4, 4, 4, 1, 1}, {123, 77, 19, 13, 9}, {100, 300, 37, 30, 20},
                          {64, 64, 8, 8, 8}, {50, 10, 7, 3, 40}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int *c = cases[k];
    wf_grid g;
    wf_status st;
    wf_grid_create(&g, c[3], c[4], 0, NULL, "", &st);
    int mt = (c[0] + c[2] - 1) / c[2], nt = (c[1] + c[2] - 1) / c[2];
    int *ranks = malloc((size_t)mt * nt * sizeof *ranks);
    for (int t = 0; t < mt * nt; t++) ranks[t] = 3;
    tl_model_case each = {.m = c[0], .n = c[1], .nb = c[2], .rank = ranks, .frequencies = 2,
                          .systems = 1};
    tl_model_case one = each;
    one.rank = NULL, one.uniform_rank = 3;
    tl_model a = tl_model_mvm(hw, &g, c[3], c[4], &each, WF_FP32);
    tl_model b = tl_model_mvm(hw, &g, c[3], c[4], &one, WF_FP32);
    CU_ASSERT_DOUBLE_EQUAL(b.pe_elements, a.pe_elements, 1e-9 * a.pe_elements);
    CU_ASSERT_DOUBLE_EQUAL(b.bytes_per_pe, a.bytes_per_pe, 1e-9 * a.bytes_per_pe);
    CU_ASSERT_DOUBLE_EQUAL(b.flops, a.flops, 1e-12 * a.flops);
    CU_ASSERT_DOUBLE_EQUAL(b.seconds.hi, a.seconds.hi, 1e-9 * a.seconds.hi);
    CU_ASSERT_EQUAL(b.total_rank, a.total_rank);
    CU_ASSERT_EQUAL(b.bcast_cycles, a.bcast_cycles);
    CU_ASSERT_EQUAL(b.reduce_cycles, a.reduce_cycles);
    free(ranks);
    wf_grid_free(&g);
  }
}

/* LSQR against LAPACK's least-squares solution (zgels, double) of a
 * well-conditioned complex system, plain and damped (the augmented
 * system [A; damp I] x = [b; 0]). */
enum { LM = 14, LN = 6 };
static double complex lsq_a[LM * LN];

static void dense_op(void *ctx, bool adjoint, const float complex *in, float complex *out) {
  (void)ctx;
  int rows = adjoint ? LN : LM, cols = adjoint ? LM : LN;
  for (int i = 0; i < rows; i++) {
    double complex s = 0;
    for (int j = 0; j < cols; j++)
      s += (adjoint ? conj(lsq_a[j * LN + i]) : lsq_a[i * LN + j]) * (double complex)in[j];
    out[i] = (float complex)s;
  }
}

static void test_lsqr(void) {
  float complex b[LM], x[LN];
  for (int i = 0; i < LM; i++) {
    for (int j = 0; j < LN; j++)
      lsq_a[i * LN + j] =
          (i == j ? 3.0 : 0.0) + sin(1.7 * i + 0.3 * j) + I * cos(0.9 * i * j + 0.1);
    b[i] = (float complex)(cos(0.5 * i) + I * sin(2.1 * i));
  }
  for (int damped = 0; damped < 2; damped++) {
    double damp = damped ? 0.7 : 0;
    /* Reference: zgels on [A; damp I] (row-major). */
    lapack_complex_double aug[(LM + LN) * LN], rhs[LM + LN];
    for (int i = 0; i < LM + LN; i++) {
      for (int j = 0; j < LN; j++)
        aug[i * LN + j] = i < LM ? lsq_a[i * LN + j] : (i - LM == j ? damp : 0);
      rhs[i] = i < LM ? (double complex)b[i] : 0;
    }
    CU_ASSERT_EQUAL_FATAL(LAPACKE_zgels(LAPACK_ROW_MAJOR, 'N', LM + LN, LN, 1, aug, LN, rhs, 1), 0);
    tl_lsqr_opts o = {.iterations = 50, .damp = damp, .atol = 1e-6};
    tl_lsqr_result r;
    double hist[51];
    wf_status st;
    CU_ASSERT_EQUAL_FATAL(tl_lsqr(dense_op, NULL, LM, LN, b, &o, x, hist, &r, &st), WF_OK);
    double err = 0, ref = 0;
    for (int j = 0; j < LN; j++) err += pow(cabs(x[j] - rhs[j]), 2), ref += pow(cabs(rhs[j]), 2);
    CU_ASSERT(sqrt(err / ref) < 1e-5);
    CU_ASSERT(r.iterations <= 2 * LN);
    /* The recurrences' residual is the true one. */
    float complex ax[LM];
    dense_op(NULL, false, x, ax);
    double res = 0, bn = 0;
    for (int i = 0; i < LM; i++) res += pow(cabs(ax[i] - b[i]), 2), bn += pow(cabs(b[i]), 2);
    CU_ASSERT_DOUBLE_EQUAL(r.residual, sqrt(res / bn), 1e-4);
    /* Without damping LSQR's residual never grows. */
    for (int k = 1; !damped && k <= r.iterations; k++) CU_ASSERT(hist[k] <= hist[k - 1] + 1e-6);
  }
}

void add_tlrmvm_tests(void) {
  CU_pSuite s = CU_add_suite("tlrmvm", NULL, NULL);
  CU_add_test(s, "hilbert curve", test_hilbert_curve);
  CU_add_test(s, "hilbert order", test_hilbert_order);
  CU_add_test(s, "compress tile", test_compress_tile);
  CU_add_test(s, "tiles of PEs", test_tiles_of_pes);
  CU_add_test(s, "kaust bytes", test_kaust_bytes);
  CU_add_test(s, "model by hand", test_model_hand);
  CU_add_test(s, "model: one rank for all tiles = tile by tile", test_model_uniform);
  CU_add_test(s, "lsqr against zgels", test_lsqr);
}
