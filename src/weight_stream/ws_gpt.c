#include "ws_gpt.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_memory.h"
#include "wf_random.h"

const char *const ws_param_names[WS_NPARAMS] = {
    "wte", "wpe",  "ln1w", "ln1b", "qkvw",    "qkvb",    "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw",  "fcb",  "fcprojw", "fcprojb", "lnfw",     "lnfb"};

int ws_param_per_layer(int k) { return k != WS_WTE && k != WS_WPE && k != WS_LNFW && k != WS_LNFB; }

int ws_config_check(const ws_config *c, wf_status *st) {
  if (c->vocab < 2 || c->seq < 1 || c->layers < 1 || c->channels < 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "a model needs a vocabulary of 2 or more, and at least one position, layer "
                   "and channel (vocab %d, seq %d, layers %d, channels %d)",
                   c->vocab, c->seq, c->layers, c->channels);
  if (c->heads < 1 || c->channels % c->heads != 0)
    return wf_fail(st, WF_ERR_INPUT, "%d channels do not split into %d heads", c->channels,
                   c->heads);
  return WF_OK;
}

static void param_sizes(const ws_config *c, size_t *s) {
  size_t V = (size_t)c->vocab, T = (size_t)c->seq, L = (size_t)c->layers, C = (size_t)c->channels;
  const size_t sizes[WS_NPARAMS] = {V * C,         T * C,     L * C,         L * C,
                                    L * 3 * C * C, L * 3 * C, L * C * C,     L * C,
                                    L * C,         L * C,     L * 4 * C * C, L * 4 * C,
                                    L * C * 4 * C, L * C,     C,             C};
  memcpy(s, sizes, sizeof sizes);
}

static void act_sizes(const ws_config *c, int B, int T, size_t *s) {
  size_t b = (size_t)B, t = (size_t)T, L = (size_t)c->layers, C = (size_t)c->channels,
         NH = (size_t)c->heads, V = (size_t)c->vocab;
  const size_t sizes[WS_NACTS] = {
      b * t * C,      L * b * t * C,      L * b * t,     L * b * t,     L * b * t * 3 * C,
      L * b * t * C,  L * b * NH * t * t, L * b * NH * t * t, L * b * t * C, L * b * t * C,
      L * b * t * C,  L * b * t,          L * b * t,     L * b * t * 4 * C, L * b * t * 4 * C,
      L * b * t * C,  L * b * t * C,      b * t * C,     b * t,         b * t,
      b * t * V,      b * t * V,          b * t};
  memcpy(s, sizes, sizeof sizes);
}

/* Carve `n` tensors of sizes `size` out of one buffer. */
static ws_real *carve(ws_real **t, const size_t *size, int n, size_t *count) {
  *count = 0;
  for (int k = 0; k < n; k++) *count += size[k];
  ws_real *mem = wf_alloc_large(*count * sizeof *mem);
  if (!mem) return NULL;
  memset(mem, 0, *count * sizeof *mem);
  ws_real *at = mem;
  for (int k = 0; k < n; k++) t[k] = at, at += size[k];
  return mem;
}

int ws_gpt_create(ws_gpt *m, const ws_config *c, int B, int T, wf_status *st) {
  *m = (ws_gpt){.c = *c, .B = B, .T = T};
  if (ws_config_check(c, st) != WF_OK) return st->code;
  if (B < 1 || T < 1 || T > c->seq)
    return wf_fail(st, WF_ERR_INPUT, "a batch of %d sequences of %d tokens (at most %d)", B, T,
                   c->seq);
  param_sizes(c, m->p.size);
  memcpy(m->g.size, m->p.size, sizeof m->p.size);
  act_sizes(c, B, T, m->a.size);
  memcpy(m->da.size, m->a.size, sizeof m->a.size);
  m->p.mem = carve(m->p.t, m->p.size, WS_NPARAMS, &m->p.count);
  m->g.mem = carve(m->g.t, m->g.size, WS_NPARAMS, &m->g.count);
  m->a.mem = carve(m->a.t, m->a.size, WS_NACTS, &m->a.count);
  m->da.mem = carve(m->da.t, m->da.size, WS_NACTS, &m->da.count);
  if (!m->p.mem || !m->g.mem || !m->a.mem || !m->da.mem) {
    ws_gpt_free(m);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the model");
  }
  return WF_OK;
}

void ws_gpt_free(ws_gpt *m) {
  free(m->p.mem), free(m->g.mem), free(m->a.mem), free(m->da.mem), free(m->m), free(m->v);
  m->p.mem = m->g.mem = m->a.mem = m->da.mem = m->m = m->v = NULL;
}

/* Normal(0, 1) from two uniform numbers of stream `seed` (Box-Muller). */
static ws_real normal(uint64_t seed, uint64_t i) {
  double u1 = wf_uniform(seed, 2 * i), u2 = wf_uniform(seed, 2 * i + 1);
  return (ws_real)(sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2));
}

void ws_gpt_init(ws_gpt *m, unsigned long long seed) {
  const ws_real std = 0.02f, resid = std / WS_SQRT(2.0f * m->c.layers);
  uint64_t i = 0;
  for (int k = 0; k < WS_NPARAMS; k++) {
    ws_real *t = m->p.t[k];
    size_t n = m->p.size[k];
    bool gain = k == WS_LN1W || k == WS_LN2W || k == WS_LNFW;
    bool bias = k == WS_LN1B || k == WS_LN2B || k == WS_LNFB || k == WS_QKVB ||
                k == WS_ATTPROJB || k == WS_FCB || k == WS_FCPROJB;
    ws_real s = k == WS_ATTPROJW || k == WS_FCPROJW ? resid : std;
    for (size_t e = 0; e < n; e++, i++) t[e] = gain ? 1.0f : bias ? 0.0f : s * normal(seed, i);
  }
}

/* ---- layers, forward ---- */

static void encoder_forward(ws_real *out, const int *tok, const ws_real *wte, const ws_real *wpe, int B,
                            int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      ws_real *o = out + ((size_t)b * T + t) * C;
      const ws_real *te = wte + (size_t)tok[b * T + t] * C, *pe = wpe + (size_t)t * C;
      for (int c = 0; c < C; c++) o[c] = te[c] + pe[c];
    }
}

static void layernorm_forward(ws_real *out, ws_real *mean, ws_real *rstd, const ws_real *in,
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

/* out[N][OC] = in[N][IC] w^T (w: OC x IC) + bias. */
static void matmul_forward(ws_real *out, const ws_real *in, const ws_real *w, const ws_real *bias, int N,
                           int IC, int OC) {
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, in, IC, w, IC, 0.0f, out,
              OC);
  if (bias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) out[(size_t)i * OC + o] += bias[o];
}

/* Causal multi-head attention over qkv [B][T][3C] (q, k, v each C, heads
 * of C / NH); pre and att [B][NH][T][T]. */
static void attention_forward(ws_real *out, ws_real *pre, ws_real *att, const ws_real *qkv, int B, int T,
                              int C, int NH) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < NH; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *p = pre + (((size_t)b * NH + h) * T + t) * T;
        ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real most = -INFINITY;
        for (int u = 0; u <= t; u++) {
          const ws_real *k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real d = 0;
          for (int i = 0; i < hs; i++) d += q[i] * k[i];
          p[u] = d * scale;
          if (p[u] > most) most = p[u];
        }
        ws_real sum = 0;
        for (int u = 0; u <= t; u++) sum += a[u] = WS_EXP(p[u] - most);
        for (int u = 0; u < T; u++) a[u] = u <= t ? a[u] / sum : 0.0f;
        ws_real *o = out + ((size_t)b * T + t) * C + h * hs;
        for (int i = 0; i < hs; i++) o[i] = 0;
        for (int u = 0; u <= t; u++) {
          const ws_real *v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          for (int i = 0; i < hs; i++) o[i] += a[u] * v[i];
        }
      }
}

static const ws_real GELU_SCALE = 0.7978845608028654f; /* sqrt(2 / pi) */

static void gelu_forward(ws_real *out, const ws_real *in, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i];
    out[i] = 0.5f * x * (1.0f + WS_TANH(GELU_SCALE * (x + 0.044715f * x * x * x)));
  }
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

/* Layer l's slice of a per-layer tensor of `size` floats in all. */
static ws_real *slice(ws_real *t, size_t size, int layers, int l) {
  return t + size / (size_t)layers * (size_t)l;
}
#define P(k, l) slice(m->p.t[k], m->p.size[k], L, l)
#define A(k, l) slice(m->a.t[k], m->a.size[k], L, l)
#define G(k, l) slice(m->g.t[k], m->g.size[k], L, l)
#define DA(k, l) slice(m->da.t[k], m->da.size[k], L, l)

ws_real ws_gpt_forward(ws_gpt *m, const int *tokens, const int *targets) {
  int B = m->B, T = m->T, C = m->c.channels, L = m->c.layers, NH = m->c.heads, V = m->c.vocab;
  int N = B * T;
  size_t NC = (size_t)N * C;
  encoder_forward(m->a.t[WS_ENCODED], tokens, m->p.t[WS_WTE], m->p.t[WS_WPE], B, T, C);
  const ws_real *residual = m->a.t[WS_ENCODED];
  for (int l = 0; l < L; l++) {
    layernorm_forward(A(WS_LN1, l), A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), residual, P(WS_LN1W, l),
                      P(WS_LN1B, l), N, C);
    matmul_forward(A(WS_QKV, l), A(WS_LN1, l), P(WS_QKVW, l), P(WS_QKVB, l), N, C, 3 * C);
    attention_forward(A(WS_ATTY, l), A(WS_PREATT, l), A(WS_ATT, l), A(WS_QKV, l), B, T, C, NH);
    matmul_forward(A(WS_ATTPROJ, l), A(WS_ATTY, l), P(WS_ATTPROJW, l), P(WS_ATTPROJB, l), N, C, C);
    add(A(WS_RES2, l), residual, A(WS_ATTPROJ, l), NC);
    layernorm_forward(A(WS_LN2, l), A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), A(WS_RES2, l),
                      P(WS_LN2W, l), P(WS_LN2B, l), N, C);
    matmul_forward(A(WS_FCH, l), A(WS_LN2, l), P(WS_FCW, l), P(WS_FCB, l), N, C, 4 * C);
    gelu_forward(A(WS_FCHGELU, l), A(WS_FCH, l), 4 * NC);
    matmul_forward(A(WS_FCPROJ, l), A(WS_FCHGELU, l), P(WS_FCPROJW, l), P(WS_FCPROJB, l), N,
                   4 * C, C);
    add(A(WS_RES3, l), A(WS_RES2, l), A(WS_FCPROJ, l), NC);
    residual = A(WS_RES3, l);
  }
  layernorm_forward(m->a.t[WS_LNF], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD], residual,
                    m->p.t[WS_LNFW], m->p.t[WS_LNFB], N, C);
  matmul_forward(m->a.t[WS_LOGITS], m->a.t[WS_LNF], m->p.t[WS_WTE], NULL, N, C, V);
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

/* ---- layers, backward (gradients accumulate: +=) ---- */

static void encoder_backward(ws_real *dwte, ws_real *dwpe, const ws_real *dout, const int *tok, int B,
                             int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const ws_real *d = dout + ((size_t)b * T + t) * C;
      ws_real *te = dwte + (size_t)tok[b * T + t] * C, *pe = dwpe + (size_t)t * C;
      for (int c = 0; c < C; c++) te[c] += d[c], pe[c] += d[c];
    }
}

static void layernorm_backward(ws_real *din, ws_real *dw, ws_real *db, const ws_real *dout,
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
static void matmul_backward(ws_real *din, ws_real *dw, ws_real *dbias, const ws_real *dout,
                            const ws_real *in, const ws_real *w, int N, int IC, int OC) {
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f,
              din, IC);
  WS_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, in, IC, 1.0f, dw,
              IC);
  if (dbias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) dbias[o] += dout[(size_t)i * OC + o];
}

static void attention_backward(ws_real *dqkv, ws_real *dpre, ws_real *datt, const ws_real *dout,
                               const ws_real *qkv, const ws_real *att, int B, int T, int C, int NH) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < NH; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real *da = datt + (((size_t)b * NH + h) * T + t) * T;
        ws_real *dp = dpre + (((size_t)b * NH + h) * T + t) * T;
        const ws_real *d = dout + ((size_t)b * T + t) * C + h * hs;
        const ws_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
        /* out = sum_u a[u] v_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real *dv = dqkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          for (int i = 0; i < hs; i++) {
            da[u] += v[i] * d[i];
            dv[i] += a[u] * d[i];
          }
        }
        /* Softmax: dp[u] = a[u] (da[u] - sum_w a[w] da[w]). */
        ws_real dot = 0;
        for (int u = 0; u <= t; u++) dot += a[u] * da[u];
        for (int u = 0; u <= t; u++) dp[u] += a[u] * (da[u] - dot);
        /* p[u] = scale q . k_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real *dk = dqkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          for (int i = 0; i < hs; i++) {
            dq[i] += k[i] * dp[u] * scale;
            dk[i] += q[i] * dp[u] * scale;
          }
        }
      }
}

static void gelu_backward(ws_real *din, const ws_real *in, const ws_real *dout, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i], cube = 0.044715f * x * x * x;
    ws_real u = GELU_SCALE * (x + cube), th = WS_TANH(u), sech2 = 1.0f - th * th;
    ws_real grad = 0.5f * (1.0f + th) + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
    din[i] += grad * dout[i];
  }
}

static void accumulate(ws_real *out, const ws_real *in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] += in[i];
}

void ws_gpt_backward(ws_gpt *m, const int *tokens, const int *targets) {
  int B = m->B, T = m->T, C = m->c.channels, L = m->c.layers, NH = m->c.heads, V = m->c.vocab;
  int N = B * T;
  size_t NC = (size_t)N * C;
  memset(m->g.mem, 0, m->g.count * sizeof *m->g.mem);
  memset(m->da.mem, 0, m->da.count * sizeof *m->da.mem);
  /* The mean loss: d/dlogits of softmax + cross-entropy, (p - onehot) / N. */
  ws_real *dlogits = m->da.t[WS_LOGITS];
  for (int i = 0; i < N; i++) {
    const ws_real *p = m->a.t[WS_PROBS] + (size_t)i * V;
    ws_real *dl = dlogits + (size_t)i * V;
    for (int v = 0; v < V; v++) dl[v] = (p[v] - (v == targets[i] ? 1.0f : 0.0f)) / N;
  }
  matmul_backward(m->da.t[WS_LNF], m->g.t[WS_WTE], NULL, dlogits, m->a.t[WS_LNF], m->p.t[WS_WTE],
                  N, C, V);
  ws_real *residual = L > 0 ? A(WS_RES3, L - 1) : m->a.t[WS_ENCODED];
  ws_real *dresidual = L > 0 ? DA(WS_RES3, L - 1) : m->da.t[WS_ENCODED];
  layernorm_backward(dresidual, m->g.t[WS_LNFW], m->g.t[WS_LNFB], m->da.t[WS_LNF], residual,
                     m->p.t[WS_LNFW], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD], N, C);
  for (int l = L - 1; l >= 0; l--) {
    residual = l > 0 ? A(WS_RES3, l - 1) : m->a.t[WS_ENCODED];
    dresidual = l > 0 ? DA(WS_RES3, l - 1) : m->da.t[WS_ENCODED];
    /* res3 = res2 + fcproj */
    accumulate(DA(WS_RES2, l), DA(WS_RES3, l), NC);
    accumulate(DA(WS_FCPROJ, l), DA(WS_RES3, l), NC);
    matmul_backward(DA(WS_FCHGELU, l), G(WS_FCPROJW, l), G(WS_FCPROJB, l), DA(WS_FCPROJ, l),
                    A(WS_FCHGELU, l), P(WS_FCPROJW, l), N, 4 * C, C);
    gelu_backward(DA(WS_FCH, l), A(WS_FCH, l), DA(WS_FCHGELU, l), 4 * NC);
    matmul_backward(DA(WS_LN2, l), G(WS_FCW, l), G(WS_FCB, l), DA(WS_FCH, l), A(WS_LN2, l),
                    P(WS_FCW, l), N, C, 4 * C);
    layernorm_backward(DA(WS_RES2, l), G(WS_LN2W, l), G(WS_LN2B, l), DA(WS_LN2, l), A(WS_RES2, l),
                       P(WS_LN2W, l), A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), N, C);
    /* res2 = residual + attproj */
    accumulate(dresidual, DA(WS_RES2, l), NC);
    accumulate(DA(WS_ATTPROJ, l), DA(WS_RES2, l), NC);
    matmul_backward(DA(WS_ATTY, l), G(WS_ATTPROJW, l), G(WS_ATTPROJB, l), DA(WS_ATTPROJ, l),
                    A(WS_ATTY, l), P(WS_ATTPROJW, l), N, C, C);
    attention_backward(DA(WS_QKV, l), DA(WS_PREATT, l), DA(WS_ATT, l), DA(WS_ATTY, l),
                       A(WS_QKV, l), A(WS_ATT, l), B, T, C, NH);
    matmul_backward(DA(WS_LN1, l), G(WS_QKVW, l), G(WS_QKVB, l), DA(WS_QKV, l), A(WS_LN1, l),
                    P(WS_QKVW, l), N, C, 3 * C);
    layernorm_backward(dresidual, G(WS_LN1W, l), G(WS_LN1B, l), DA(WS_LN1, l), residual,
                       P(WS_LN1W, l), A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), N, C);
  }
  encoder_backward(m->g.t[WS_WTE], m->g.t[WS_WPE], m->da.t[WS_ENCODED], tokens, B, T, C);
}

/* ---- optimiser ---- */

int ws_gpt_moments(ws_gpt *m, wf_status *st) {
  if (m->m) return WF_OK;
  m->m = calloc(m->p.count, sizeof *m->m);
  m->v = calloc(m->p.count, sizeof *m->v);
  if (!m->m || !m->v) {
    free(m->m), free(m->v);
    m->m = m->v = NULL;
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for AdamW's moments");
  }
  return WF_OK;
}

ws_real ws_gpt_update(ws_gpt *m, const ws_adamw *o, wf_status *st) {
  size_t n = m->p.count;
  if (ws_gpt_moments(m, st) != WF_OK) return -1;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += (double)m->g.mem[i] * m->g.mem[i];
  ws_real norm = (ws_real)sqrt(sum);
  /* As torch.nn.utils.clip_grad_norm_ scales. */
  ws_real scale = o->clip > 0 && norm > o->clip ? o->clip / (norm + 1e-6f) : 1.0f;
  m->steps++;
  ws_real c1 = 1.0f - WS_POW(o->beta1, (ws_real)m->steps), c2 = 1.0f - WS_POW(o->beta2, (ws_real)m->steps);
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real g = m->g.mem[i] * scale;
    m->m[i] = o->beta1 * m->m[i] + (1.0f - o->beta1) * g;
    m->v[i] = o->beta2 * m->v[i] + (1.0f - o->beta2) * g * g;
    ws_real mhat = m->m[i] / c1, vhat = m->v[i] / c2;
    m->p.mem[i] -= o->lr * (mhat / (WS_SQRT(vhat) + o->eps) + o->weight_decay * m->p.mem[i]);
  }
  return norm;
}

ws_real ws_lr_schedule(int step, int warmup, int total, ws_real lr, ws_real min_lr) {
  if (step < warmup) return lr * (ws_real)(step + 1) / (ws_real)warmup;
  if (total <= warmup) return lr;
  ws_real progress = (ws_real)(step - warmup) / (ws_real)(total - warmup);
  if (progress > 1) progress = 1;
  return min_lr + 0.5f * (lr - min_lr) * (1.0f + WS_COS(3.14159265358979f * progress));
}
