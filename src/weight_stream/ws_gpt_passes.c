/* The GPT's forward and backward passes (ws_gpt.h): its kernels (embedding, LayerNorm,
 * matrix products, attention, GELU or ReLU, softmax and cross-entropy), a layer at a time on a
 * block's weights, on one rank or over a wafer's grid (ws_grid.h). */
#include "ws_gpt.h"

#include "wf_cblas.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_config.h" /* WF_HOT */
#ifndef WS_DOUBLE /* the gradient test's double build runs on one rank */
#include "ws_grid.h"
#endif

/* ---- layers, forward ---- */

static void encoder_forward(ws_real *out, const int *tok, const ws_real *wte, const ws_real *wpe,
                            int B, int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      ws_real *o = out + ((size_t)b * T + t) * C;
      const ws_real *te = wte + (size_t)tok[b * T + t] * C, *pe = wpe + (size_t)t * C;
      for (int c = 0; c < C; c++) o[c] = te[c] + pe[c];
    }
}

WF_HOT static void layernorm_forward(ws_real *out, ws_real *mean, ws_real *rstd, const ws_real *in,
                              const ws_real *w, const ws_real *bias, int N, int C) {
  for (int i = 0; i < N; i++) {
    const ws_real *x = in + (size_t)i * C;
    ws_real mu = 0, var = 0;
    for (int c = 0; c < C; c++) mu += x[c];
    mu /= C;
    for (int c = 0; c < C; c++) var += (x[c] - mu) * (x[c] - mu);
    var /= C;
    ws_real s = 1.0f / WS_SQRT(var + 1e-5f);
    ws_real *o = out + (size_t)i * C;
    for (int c = 0; c < C; c++) o[c] = (x[c] - mu) * s * w[c] + bias[c];
    mean[i] = mu, rstd[i] = s;
  }
}

/* out[N][OC] = in[N][IC] w^T (w: OC x IC, or m's tile of it) + bias. */
static void matmul_forward(const ws_gpt *m, ws_real *out, const ws_real *in, const ws_real *w,
                           const ws_real *bias, int N, int IC, int OC) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_matmul_forward(m->grid, out, in, w, bias, N, IC, OC);
    return;
  }
#else
  (void)m;
#endif
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, in, IC, w, IC, 0.0f, out, OC);
  if (bias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) out[(size_t)i * OC + o] += bias[o];
}

/* a . b over n numbers in WS_LANES partial sums (lane j takes i = j mod
 * WS_LANES), then added in lane order: vectorised, yet the same bits in
 * every clone of a WF_HOT kernel (an `omp simd reduction` sums in as many
 * lanes as the clone's registers hold, so AVX2 and AVX-512 machines, ranks
 * of one wafer among them, would differ in the last bits). */
#define WS_LANES 8
static inline ws_real dot_lanes(const ws_real *a, const ws_real *b, int n) {
  ws_real acc[WS_LANES] = {0}, sum = 0;
  int i = 0;
  for (; i + WS_LANES <= n; i += WS_LANES)
    for (int j = 0; j < WS_LANES; j++) acc[j] += a[i + j] * b[i + j];
  for (int j = 0; j < WS_LANES; j++) sum += acc[j];
  for (; i < n; i++) sum += a[i] * b[i];
  return sum;
}

/* Causal multi-head attention over qkv [B][T][3C] (q, k, v each C, heads
 * of C / NH); pre and att [B][NH][T][T]; heads [h0, h0 + nh) only (a
 * wafer's ranks split them: attention_heads). The loops over a head's
 * channels are explicit SIMD loops (sums in fixed lanes: dot_lanes), which
 * the compiler would not vectorise otherwise. */
WF_HOT static void attention_forward(ws_real *out, ws_real *pre, ws_real *att, const ws_real *qkv,
                                     int B, int T, int C, int NH, int h0, int nh) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = h0; h < h0 + nh; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *p = pre + (((size_t)b * NH + h) * T + t) * T;
        ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real most = -INFINITY;
        for (int u = 0; u <= t; u++) {
          const ws_real *k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          p[u] = dot_lanes(q, k, hs) * scale;
          if (p[u] > most) most = p[u];
        }
        ws_real sum = 0;
        for (int u = 0; u <= t; u++) sum += a[u] = WS_EXP(p[u] - most);
        for (int u = 0; u < T; u++) a[u] = u <= t ? a[u] / sum : 0.0f;
        ws_real *restrict o = out + ((size_t)b * T + t) * C + h * hs;
        for (int i = 0; i < hs; i++) o[i] = 0;
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real w = a[u];
#pragma omp simd
          for (int i = 0; i < hs; i++) o[i] += w * v[i];
        }
      }
}

static const ws_real GELU_SCALE = 0.7978845608028654f; /* sqrt(2 / pi) */

/* exp(x) in a form the compiler vectorises (glibc's vector expf and tanhf
 * are offered only under -ffast-math): Cephes's range reduction and
 * polynomial, within 1 ulp of expf on [-87, 88] (measured every 0.001),
 * the argument clamped there. Rounding by adding 1.5 x 2^23, which leaves
 * n in the low bits, and the clamps as separate selects: GCC 12 vectorises
 * this form and not one with floorf or a float-to-int conversion. In
 * double (the gradient test's build) the library's exp. */
#ifdef WS_DOUBLE
static inline double simd_exp(double x) { return exp(x); }
#else
static inline float simd_exp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  union {
    float f;
    int32_t i;
  } big = {.f = 1.44269504088896341f * x + 12582912.0f}; /* n = round(x / ln 2) */
  float n = big.f - 12582912.0f;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f; /* x - n ln 2, in two parts */
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  union {
    int32_t i;
    float f;
  } scale = {.i = (big.i - 0x4B400000 + 127) << 23}; /* 2^n */
  return p * scale.f;
}
#endif

/* GELU's tanh form, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715
 * x^3), written as x sigmoid(2u): one exponential, vectorised. */
WF_HOT static void gelu_forward(ws_real *out, const ws_real *in, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i], u = GELU_SCALE * (x + 0.044715f * x * x * x);
    out[i] = x / (1.0f + simd_exp(-2.0f * u));
  }
}

/* ReLU; returns how many outputs are zero (the multiplications a dataflow
 * machine skips in the next matrix product). */
static size_t relu_forward(ws_real *out, const ws_real *in, size_t n) {
  size_t zeros = 0;
#pragma omp simd reduction(+ : zeros)
  for (size_t i = 0; i < n; i++) {
    out[i] = in[i] > 0 ? in[i] : 0.0f;
    zeros += in[i] <= 0;
  }
  return zeros;
}

static void add(ws_real *out, const ws_real *a, const ws_real *b, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

static void softmax_forward(ws_real *probs, const ws_real *logits, int N, int V) {
  for (int i = 0; i < N; i++) {
    const ws_real *l = logits + (size_t)i * V;
    ws_real *p = probs + (size_t)i * V, most = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) most = l[v] > most ? l[v] : most;
    for (int v = 0; v < V; v++) sum += p[v] = WS_EXP(l[v] - most);
    for (int v = 0; v < V; v++) p[v] /= sum;
  }
}

/* Layer l's slice of an activation of `size` numbers for all layers. */
static ws_real *slice(ws_real *t, size_t size, int layers, int l) {
  return t + size / (size_t)layers * (size_t)l;
}
#define A(k, l) slice(m->a.t[k], m->a.size[k], m->c.layers, l)
#define DA(k, l) slice(m->da.t[k], m->da.size[k], m->c.layers, l)

/* The heads this rank computes, [*h0, *h0 + *nh): on a wafer of ranks its
 * share (each head on one rank, its columns then shared), else all. */
static void attention_heads(const ws_gpt *m, int *h0, int *nh) {
  *h0 = 0, *nh = m->c.heads;
#ifndef WS_DOUBLE
  if (m->grid) ws_grid_heads(m->grid, m->c.heads, h0, nh);
#endif
}

/* Every rank's heads' columns of `x` (N rows of `sections` x C) to every
 * rank of the wafer. */
static void share_heads(const ws_gpt *m, ws_real *x, int sections) {
#ifndef WS_DOUBLE
  if (m->grid)
    ws_grid_share_heads(m->grid, x, m->B * m->T, sections, m->c.heads,
                        m->c.channels / m->c.heads);
#else
  (void)m, (void)x, (void)sections;
#endif
}

static void poll(const ws_gpt *m) {
  if (m->poll) m->poll(m->poll_ctx);
}

/* The residual stream into layer l. */
static ws_real *layer_input(ws_gpt *m, int l) {
  return l > 0 ? A(WS_RES3, l - 1) : m->a.t[WS_ENCODED];
}
static ws_real *layer_dinput(ws_gpt *m, int l) {
  return l > 0 ? DA(WS_RES3, l - 1) : m->da.t[WS_ENCODED];
}

void ws_forward_embed(ws_gpt *m, const ws_block *head, const int *tokens) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_embed_forward(m->grid, m->a.t[WS_ENCODED], tokens, head->t[WS_WTE], head->t[WS_WPE],
                          m->B * m->T, m->T, m->c.channels, m->c.vocab);
    return;
  }
#endif
  encoder_forward(m->a.t[WS_ENCODED], tokens, head->t[WS_WTE], head->t[WS_WPE], m->B, m->T,
                  m->c.channels);
}

void ws_forward_layer(ws_gpt *m, int l, const ws_block *w) {
  int B = m->B, T = m->T, C = m->c.channels, NH = m->c.heads, N = B * T;
  size_t NC = (size_t)N * C;
  const ws_real *residual = layer_input(m, l);
  layernorm_forward(A(WS_LN1, l), A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), residual, w->t[WS_LN1W],
                    w->t[WS_LN1B], N, C);
  matmul_forward(m, A(WS_QKV, l), A(WS_LN1, l), w->t[WS_QKVW], w->t[WS_QKVB], N, C, 3 * C);
  poll(m);
  int h0, nh;
  attention_heads(m, &h0, &nh);
  attention_forward(A(WS_ATTY, l), A(WS_PREATT, l), A(WS_ATT, l), A(WS_QKV, l), B, T, C, NH, h0,
                    nh);
  share_heads(m, A(WS_ATTY, l), 1);
  poll(m);
  matmul_forward(m, A(WS_ATTPROJ, l), A(WS_ATTY, l), w->t[WS_ATTPROJW], w->t[WS_ATTPROJB], N, C, C);
  add(A(WS_RES2, l), residual, A(WS_ATTPROJ, l), NC);
  layernorm_forward(A(WS_LN2, l), A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), A(WS_RES2, l), w->t[WS_LN2W],
                    w->t[WS_LN2B], N, C);
  poll(m);
  matmul_forward(m, A(WS_FCH, l), A(WS_LN2, l), w->t[WS_FCW], w->t[WS_FCB], N, C, 4 * C);
  poll(m);
  if (m->c.relu) {
    size_t zeros = relu_forward(A(WS_FCHGELU, l), A(WS_FCH, l), 4 * NC);
    if (m->counting) m->zeros[l] += (double)zeros, m->seen[l] += 4.0 * (double)NC;
  } else { /* only the columns this rank's next product reads */
    int lo, n;
    ws_gpt_activation_columns(m, &lo, &n);
    size_t row = 4 * (size_t)C, at = (size_t)lo;
    for (int i = 0; i < N; i++, at += row)
      gelu_forward(A(WS_FCHGELU, l) + at, A(WS_FCH, l) + at, (size_t)n);
  }
  matmul_forward(m, A(WS_FCPROJ, l), A(WS_FCHGELU, l), w->t[WS_FCPROJW], w->t[WS_FCPROJB], N, 4 * C,
                 C);
  add(A(WS_RES3, l), A(WS_RES2, l), A(WS_FCPROJ, l), NC);
  poll(m);
}

ws_real ws_forward_head(ws_gpt *m, const ws_block *head, const int *targets) {
  int C = m->c.channels, V = m->c.vocab, N = m->B * m->T;
  layernorm_forward(m->a.t[WS_LNF], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD],
                    layer_input(m, m->c.layers), head->t[WS_LNFW], head->t[WS_LNFB], N, C);
  matmul_forward(m, m->a.t[WS_LOGITS], m->a.t[WS_LNF], head->t[WS_WTE], NULL, N, C, V);
  softmax_forward(m->a.t[WS_PROBS], m->a.t[WS_LOGITS], N, V);
  if (!targets) return 0;
  double loss = 0;
  for (int i = 0; i < N; i++) {
    ws_real l = -WS_LOG(m->a.t[WS_PROBS][(size_t)i * V + targets[i]]);
    m->a.t[WS_LOSSES][i] = l;
    loss += l;
  }
  return (ws_real)(loss / N);
}

ws_real ws_gpt_forward(ws_gpt *m, const int *tokens, const int *targets) {
  ws_block head = ws_gpt_block(m, m->p.mem, m->c.layers);
  ws_forward_embed(m, &head, tokens);
  for (int l = 0; l < m->c.layers; l++) {
    ws_block w = ws_gpt_block(m, m->p.mem, l);
    ws_forward_layer(m, l, &w);
  }
  return ws_forward_head(m, &head, targets);
}

/* ---- layers, backward (gradients accumulate: +=) ---- */

static void encoder_backward(ws_real *dwte, ws_real *dwpe, const ws_real *dout, const int *tok,
                             int B, int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const ws_real *d = dout + ((size_t)b * T + t) * C;
      ws_real *te = dwte + (size_t)tok[b * T + t] * C, *pe = dwpe + (size_t)t * C;
      for (int c = 0; c < C; c++) te[c] += d[c], pe[c] += d[c];
    }
}

WF_HOT static void layernorm_backward(ws_real *din, ws_real *dw, ws_real *db, const ws_real *dout,
                               const ws_real *in, const ws_real *w, const ws_real *mean,
                               const ws_real *rstd, int N, int C) {
  for (int i = 0; i < N; i++) {
    const ws_real *d = dout + (size_t)i * C, *x = in + (size_t)i * C;
    ws_real mu = mean[i], s = rstd[i], dmean = 0, dnorm_norm = 0;
    for (int c = 0; c < C; c++) {
      ws_real norm = (x[c] - mu) * s, dnorm = w[c] * d[c];
      dmean += dnorm;
      dnorm_norm += dnorm * norm;
    }
    dmean /= C;
    dnorm_norm /= C;
    ws_real *dx = din + (size_t)i * C;
    for (int c = 0; c < C; c++) {
      ws_real norm = (x[c] - mu) * s, dnorm = w[c] * d[c];
      db[c] += d[c];
      dw[c] += norm * d[c];
      dx[c] += (dnorm - dmean - norm * dnorm_norm) * s;
    }
  }
}

/* For out = in w^T + bias: din += dout w, dw += dout^T in, dbias += sum dout. */
static void matmul_backward(const ws_gpt *m, ws_real *din, ws_real *dw, ws_real *dbias,
                            const ws_real *dout, const ws_real *in, const ws_real *w, int N, int IC,
                            int OC) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_matmul_backward(m->grid, din, dw, dbias, dout, in, w, N, IC, OC);
    return;
  }
#else
  (void)m;
#endif
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f, din,
          IC);
  WS_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, in, IC, 1.0f, dw, IC);
  if (dbias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) dbias[o] += dout[(size_t)i * OC + o];
}

WF_HOT static void attention_backward(ws_real *dqkv, ws_real *dpre, ws_real *datt,
                                      const ws_real *dout, const ws_real *qkv, const ws_real *att,
                                      int B, int T, int C, int NH, int h0, int nh) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = h0; h < h0 + nh; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real *da = datt + (((size_t)b * NH + h) * T + t) * T;
        ws_real *dp = dpre + (((size_t)b * NH + h) * T + t) * T;
        const ws_real *restrict d = dout + ((size_t)b * T + t) * C + h * hs;
        const ws_real *restrict q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *restrict dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
        /* out = sum_u a[u] v_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real *restrict dv = dqkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real au = a[u];
          da[u] += dot_lanes(v, d, hs);
#pragma omp simd
          for (int i = 0; i < hs; i++) dv[i] += au * d[i];
        }
        /* Softmax: dp[u] = a[u] (da[u] - sum_w a[w] da[w]). */
        ws_real dot = 0;
        for (int u = 0; u <= t; u++) dot += a[u] * da[u];
        for (int u = 0; u <= t; u++) dp[u] += a[u] * (da[u] - dot);
        /* p[u] = scale q . k_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real *restrict dk = dqkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real g = dp[u] * scale;
#pragma omp simd
          for (int i = 0; i < hs; i++) {
            dq[i] += k[i] * g;
            dk[i] += q[i] * g;
          }
        }
      }
}

WF_HOT static void gelu_backward(ws_real *din, const ws_real *in, const ws_real *dout, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i], u = GELU_SCALE * (x + 0.044715f * x * x * x);
    ws_real sig = 1.0f / (1.0f + simd_exp(-2.0f * u)); /* (1 + tanh u) / 2 */
    ws_real sech2 = 4.0f * sig * (1.0f - sig);         /* 1 - tanh^2 u */
    ws_real grad = sig + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
    din[i] += grad * dout[i];
  }
}

static void relu_backward(ws_real *din, const ws_real *in, const ws_real *dout, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) din[i] += in[i] > 0 ? dout[i] : 0.0f;
}

static void accumulate(ws_real *out, const ws_real *in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] += in[i];
}

void ws_backward_head(ws_gpt *m, const ws_block *head, const ws_block *dhead, const int *targets) {
  int C = m->c.channels, V = m->c.vocab, L = m->c.layers, N = m->B * m->T;
  memset(m->da.mem, 0, m->da.count * sizeof *m->da.mem);
  /* The mean loss: d/dlogits of softmax + cross-entropy, (p - onehot) / N. */
  ws_real *dlogits = m->da.t[WS_LOGITS];
  for (int i = 0; i < N; i++) {
    const ws_real *p = m->a.t[WS_PROBS] + (size_t)i * V;
    ws_real *dl = dlogits + (size_t)i * V;
    for (int v = 0; v < V; v++) dl[v] = (p[v] - (v == targets[i] ? 1.0f : 0.0f)) / N;
  }
  matmul_backward(m, m->da.t[WS_LNF], dhead->t[WS_WTE], NULL, dlogits, m->a.t[WS_LNF], head->t[WS_WTE],
                  N, C, V);
  layernorm_backward(layer_dinput(m, L), dhead->t[WS_LNFW], dhead->t[WS_LNFB], m->da.t[WS_LNF],
                     layer_input(m, L), head->t[WS_LNFW], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD], N,
                     C);
}

void ws_backward_layer(ws_gpt *m, int l, const ws_block *w, const ws_block *dw) {
  int B = m->B, T = m->T, C = m->c.channels, NH = m->c.heads, N = B * T;
  size_t NC = (size_t)N * C;
  ws_real *residual = layer_input(m, l), *dresidual = layer_dinput(m, l);
  /* res3 = res2 + fcproj */
  accumulate(DA(WS_RES2, l), DA(WS_RES3, l), NC);
  accumulate(DA(WS_FCPROJ, l), DA(WS_RES3, l), NC);
  matmul_backward(m, DA(WS_FCHGELU, l), dw->t[WS_FCPROJW], dw->t[WS_FCPROJB], DA(WS_FCPROJ, l),
                  A(WS_FCHGELU, l), w->t[WS_FCPROJW], N, 4 * C, C);
  poll(m);
  if (m->c.relu)
    relu_backward(DA(WS_FCH, l), A(WS_FCH, l), DA(WS_FCHGELU, l), 4 * NC);
  else
    gelu_backward(DA(WS_FCH, l), A(WS_FCH, l), DA(WS_FCHGELU, l), 4 * NC);
  matmul_backward(m, DA(WS_LN2, l), dw->t[WS_FCW], dw->t[WS_FCB], DA(WS_FCH, l), A(WS_LN2, l),
                  w->t[WS_FCW], N, C, 4 * C);
  poll(m);
  layernorm_backward(DA(WS_RES2, l), dw->t[WS_LN2W], dw->t[WS_LN2B], DA(WS_LN2, l), A(WS_RES2, l),
                     w->t[WS_LN2W], A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), N, C);
  /* res2 = residual + attproj */
  accumulate(dresidual, DA(WS_RES2, l), NC);
  accumulate(DA(WS_ATTPROJ, l), DA(WS_RES2, l), NC);
  matmul_backward(m, DA(WS_ATTY, l), dw->t[WS_ATTPROJW], dw->t[WS_ATTPROJB], DA(WS_ATTPROJ, l),
                  A(WS_ATTY, l), w->t[WS_ATTPROJW], N, C, C);
  poll(m);
  int h0, nh;
  attention_heads(m, &h0, &nh);
  attention_backward(DA(WS_QKV, l), DA(WS_PREATT, l), DA(WS_ATT, l), DA(WS_ATTY, l), A(WS_QKV, l),
                     A(WS_ATT, l), B, T, C, NH, h0, nh);
  share_heads(m, DA(WS_QKV, l), 3); /* q, k and v: three sections of C */
  poll(m);
  matmul_backward(m, DA(WS_LN1, l), dw->t[WS_QKVW], dw->t[WS_QKVB], DA(WS_QKV, l), A(WS_LN1, l),
                  w->t[WS_QKVW], N, C, 3 * C);
  layernorm_backward(dresidual, dw->t[WS_LN1W], dw->t[WS_LN1B], DA(WS_LN1, l), residual,
                     w->t[WS_LN1W], A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), N, C);
  poll(m);
}

void ws_backward_embed(ws_gpt *m, const ws_block *dhead, const int *tokens) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_embed_backward(m->grid, dhead->t[WS_WTE], dhead->t[WS_WPE], m->da.t[WS_ENCODED],
                           tokens, m->B * m->T, m->T, m->c.channels, m->c.vocab);
    return;
  }
#endif
  encoder_backward(dhead->t[WS_WTE], dhead->t[WS_WPE], m->da.t[WS_ENCODED], tokens, m->B, m->T,
                   m->c.channels);
}

void ws_gpt_backward(ws_gpt *m, const int *tokens, const int *targets) {
  int L = m->c.layers;
  memset(m->g.mem, 0, m->g.count * sizeof *m->g.mem);
  ws_block head = ws_gpt_block(m, m->p.mem, L), dhead = ws_gpt_block(m, m->g.mem, L);
  ws_backward_head(m, &head, &dhead, targets);
  for (int l = L - 1; l >= 0; l--) {
    ws_block w = ws_gpt_block(m, m->p.mem, l), dw = ws_gpt_block(m, m->g.mem, l);
    ws_backward_layer(m, l, &w, &dw);
  }
  ws_backward_embed(m, &dhead, tokens);
}
