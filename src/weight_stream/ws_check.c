/* `wafer train`'s in-run checks of its first and last steps (ws_check.h): the
 * gradient against slopes of the loss, the LayerNorm statistics and the MLP
 * activation against their definitions, AdamW and the learning-rate
 * schedule against theirs. */
#include "ws_check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_signal.h"
#include "wf_workload.h"
#include "ws_grid.h"

/* The replicas' mean loss at the current parameters. */
static double mean_loss(ws_gpt *m, const int *tok, const int *tgt, MPI_Comm replicas) {
  double l = ws_gpt_forward(m, tok, tgt);
  int n;
  MPI_Comm_size(replicas, &n);
  MPI_Allreduce(MPI_IN_PLACE, &l, 1, MPI_DOUBLE, MPI_SUM, replicas);
  return l / n;
}

/* The pieces of the parameters the check moves one at a time: each tensor,
 * per layer where it has one slice per layer, and the attention's q, k and
 * v rows apart (at initialisation q's and k's gradients are tiny beside
 * v's: a bug in them would hide in the whole tensor's slope). The k bias
 * is left out: a shift of every key adds the same q.b to a row's scores,
 * which softmax ignores, so its exact gradient is 0 and the computed one
 * only rounding, no direction to move along. */
typedef struct piece {
  int k, layer, part; /* tensor, layer (-1: whole tensor), q/k/v (-1: all) */
  size_t at, n;       /* numbers into the tensor */
} piece;

/* The pieces, each as this rank holds it: on a wafer of several ranks a
 * piece of a weight matrix is this rank's tile's share of it (the q, k or
 * v rows among the tile's), possibly none. */
static int pieces(const ws_gpt *m, bool split, piece *out) {
  int n = 0, L = m->c.layers;
  for (int k = 0; k < WS_NPARAMS; k++) {
    bool per_layer = split && ws_param_per_layer(k);
    int parts = split && (k == WS_QKVW || k == WS_QKVB) ? 3 : 1;
    ws_tile tl = ws_gpt_tile(m, k);
    size_t layer_n = m->p.size[k] / (size_t)(per_layer ? L : 1);
    for (int l = 0; l < (per_layer ? L : 1); l++)
      for (int p = 0; p < parts; p++) {
        if (k == WS_QKVB && p == 1) continue;
        /* One token a sequence: each softmax is over one score, exactly 1
         * whatever q and k are, so their exact gradients are 0 too. */
        if (m->T == 1 && parts > 1 && p < 2) continue;
        size_t at = (size_t)l * layer_n, len = layer_n;
        if (parts > 1 && tl.full_rows == 1) { /* a vector: q, k, v by columns */
          len = layer_n / (size_t)parts, at += (size_t)p * len;
        } else if (parts > 1) { /* a matrix: q, k, v rows among the tile's */
          int third = tl.full_rows / parts, lo = p * third, hi = lo + third;
          lo = lo > tl.row0 ? lo : tl.row0;
          hi = hi < tl.row0 + tl.rows ? hi : tl.row0 + tl.rows;
          len = hi > lo ? (size_t)(hi - lo) * (size_t)tl.cols : 0;
          at += hi > lo ? (size_t)(lo - tl.row0) * (size_t)tl.cols : 0;
        }
        out[n++] = (piece){k, per_layer ? l : -1, parts > 1 ? p : -1, at, len};
      }
  }
  return n;
}

static void piece_name(const piece *pc, char *buf, size_t size) {
  char layer[24] = "", part[4] = "";
  if (pc->layer >= 0) snprintf(layer, sizeof layer, "[%d]", pc->layer);
  if (pc->part >= 0) snprintf(part, sizeof part, ".%c", "qkv"[pc->part]);
  snprintf(buf, size, "%s%s%s", ws_param_names[pc->k], layer, part);
}

/* The loss at theta + s d on piece pc, from the saved piece. */
static double loss_at(ws_gpt *m, const piece *pc, const ws_real *saved, const double *d, double s,
                      const int *tok, const int *tgt, MPI_Comm replicas) {
  ws_real *p = m->p.t[pc->k] + pc->at;
  for (size_t i = 0; i < pc->n; i++) p[i] = (ws_real)(saved[i] + s * d[i]);
  return mean_loss(m, tok, tgt, replicas);
}

int ws_check_gradient(ws_gpt *m, const int *tok, const int *tgt, MPI_Comm replicas, bool split,
                      ws_grad_check *out, wf_status *st) {
  size_t most = 0;
  for (int k = 0; k < WS_NPARAMS; k++)
    if (m->p.size[k] > most) most = m->p.size[k];
  int npieces = WS_NPARAMS * 3 * m->c.layers;
  piece *pcs = malloc((size_t)npieces * sizeof *pcs);
  ws_real *saved = malloc(most * sizeof *saved + 1);
  double *d = malloc(most * sizeof *d + 1);
  int failed = !saved || !d || !pcs;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, replicas);
  if (failed) {
    free(saved), free(d), free(pcs);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the gradient check");
  }
  npieces = pieces(m, split, pcs);
  *out = (ws_grad_check){.worst = 0};
  /* A float forward pass's loss, relative: its per-token terms each within
   * a few tens of units of round-off, their mean no worse (measured about
   * 0.2 u here; docs/train.md). */
  const double eps_loss = 64 * 0x1p-24;
  /* ReLU's loss has a kink wherever an input to it is 0: a shorter step
   * crosses fewer of them (its rounding allowance is the larger). */
  const double move = m->c.relu ? 1e-4 : 1e-3;
  bool counting = m->counting; /* the check's passes are not training's */
  m->counting = false;
  double base = mean_loss(m, tok, tgt, replicas);
  out->base = base;
  for (int j = 0; j < npieces; j++) {
    /* A signal stops the check (about 4 forward passes a piece: seconds
     * under a sanitizer) so that the run ends within its 2 s; the step
     * goes on and the training loop's own poll ends the run. */
    wf_status poll;
    if (wf_signal_check(replicas, "", &poll) != WF_OK) break;
    const piece *pc = &pcs[j];
    const ws_real *g = m->g.t[pc->k] + pc->at;
    ws_real *p = m->p.t[pc->k] + pc->at;
    double norm = 0;
    for (size_t i = 0; i < pc->n; i++) norm += (double)g[i] * g[i];
    if (m->grid && ws_param_tiled(pc->k)) /* the piece's share on each rank */
      MPI_Allreduce(MPI_IN_PLACE, &norm, 1, MPI_DOUBLE, MPI_SUM, m->grid->wafer);
    norm = sqrt(norm);
    /* A zero gradient has no direction to move along; but at a random
     * initialisation every piece's exact gradient is nonzero (the k bias,
     * whose is zero, is not a piece): a backward pass that never wrote one
     * fails. A NaN norm goes on, and fails. */
    double q = INFINITY;
    if (norm != 0) {
      memcpy(saved, p, pc->n * sizeof *saved);
      for (size_t i = 0; i < pc->n; i++) d[i] = g[i] / norm;
      /* a step that moves the loss by `move` of itself: far above its rounding */
      double h = move * base / norm;
      double dh = (loss_at(m, pc, saved, d, h, tok, tgt, replicas) -
                   loss_at(m, pc, saved, d, -h, tok, tgt, replicas)) / (2 * h);
      double d2h = (loss_at(m, pc, saved, d, 2 * h, tok, tgt, replicas) -
                    loss_at(m, pc, saved, d, -2 * h, tok, tgt, replicas)) / (4 * h);
      memcpy(p, saved, pc->n * sizeof *saved);
      /* Richardson's (4 D(h) - D(2h)) / 3 leaves an O(h^4) error; D(h) - D(2h)
       * is three times D(h)'s own h^2 error, so it bounds what is left with
       * room. Rounding: each loss within EPS_LOSS of its value moves the
       * estimate by at most (4/3 + 1/6) EPS_LOSS / h. */
      double rich = (4 * dh - d2h) / 3;
      double allowed = fabs(dh - d2h) + 1.5 * eps_loss * base / h;
      q = fabs(rich - norm) / allowed;
    }
    if (!(q <= out->worst) || out->pieces == 0) {
      out->worst = q;
      piece_name(pc, out->worst_piece, sizeof out->worst_piece);
    }
    out->pieces++;
  }
  m->counting = counting;
  free(saved), free(d), free(pcs);
  return WF_OK;
}

void ws_adamw_probe_take(ws_adamw_probe *pr, const ws_gpt *m) {
  int n = 0;
  for (int k = 0; k < WS_NPARAMS; k++) {
    size_t size = m->p.size[k], start = (size_t)(m->p.t[k] - m->p.mem), big = 0;
    for (size_t i = 1; i < size; i++)
      if (fabs(m->g.t[k][i]) > fabs(m->g.t[k][big])) big = i;
    const size_t pick[4] = {0, size / 2, size - 1, big};
    for (int j = 0; j < 4; j++) pr->at[n++] = start + pick[j];
  }
  for (int i = 0; i < WS_PROBES; i++) {
    size_t a = pr->at[i];
    pr->p[i] = m->p.mem[a], pr->m[i] = m->m[a], pr->v[i] = m->v[a], pr->g[i] = m->g.mem[a];
  }
  /* The whole gradient: on a wafer of several ranks, the weight matrices'
   * tiles summed over its ranks and the other tensors (whole on each) once. */
  double tiles = 0, rest = 0;
  for (int k = 0; k < WS_NPARAMS; k++)
    for (size_t i = 0; i < m->g.size[k]; i++) {
      double x = (double)m->g.t[k][i] * m->g.t[k][i];
      if (m->grid && ws_param_tiled(k))
        tiles += x;
      else
        rest += x;
    }
  if (m->grid) MPI_Allreduce(MPI_IN_PLACE, &tiles, 1, MPI_DOUBLE, MPI_SUM, m->grid->wafer);
  pr->norm = sqrt(tiles + rest);
}

double ws_adamw_probe_compare(const ws_adamw_probe *pr, const ws_gpt *m, const ws_adamw *o,
                              double lr, int t) {
  /* torch.nn.utils.clip_grad_norm_: scale by clip / (norm + 1e-6) when below 1 */
  double scale = o->clip > 0 ? fmin(1, o->clip / (pr->norm + 1e-6)) : 1;
  double b1 = o->beta1, b2 = o->beta2, worst = 0;
  for (int i = 0; i < WS_PROBES; i++) {
    double g = pr->g[i] * scale, p = pr->p[i];
    double m1 = b1 * pr->m[i] + (1 - b1) * g, v1 = b2 * pr->v[i] + (1 - b2) * g * g;
    double mhat = m1 / (1 - pow(b1, t)), vhat = v1 / (1 - pow(b2, t));
    double step = mhat / (sqrt(vhat) + o->eps);
    double want = p * (1 - lr * o->weight_decay) - lr * step; /* decoupled decay */
    /* float arithmetic: some ten operations on each term, the learning rate
     * and clipping factor each rounded once */
    double allowed = 32 * 0x1p-24 * (fabs(p) + lr * fabs(step) + lr * o->weight_decay * fabs(p)) +
                     1e-300;
    worst = wf_worse(worst, fabs(m->p.mem[pr->at[i]] - want) / allowed);
  }
  return worst;
}

double ws_lr_reference(int step, int warmup, int total, double lr, double min_lr) {
  const double pi = 3.14159265358979323846;
  if (step < warmup) return lr * (step + 1) / warmup;
  if (total <= warmup) return lr;
  double progress = fmin(1, (double)(step - warmup) / (total - warmup));
  return min_lr + (lr - min_lr) * (1 + cos(pi * progress)) / 2;
}

double ws_lr_schedule_check(int warmup, int total, float lr, float min_lr) {
  double worst = 0;
  for (int step = 0; step < total; step++) {
    double want = ws_lr_reference(step, warmup, total, lr, min_lr);
    /* float: a few operations, and cos of an argument below pi */
    double allowed = 16 * 0x1p-24 * fmax(lr, min_lr) + 1e-300;
    worst = wf_worse(worst, fabs(ws_lr_schedule(step, warmup, total, lr, min_lr) - want) / allowed);
  }
  return worst;
}

/* ---- the forward's LayerNorm statistics and the MLP's activation ---- */

static double gamma_n(double n) { return wf_gamma(n, 0x1p-24); } /* float */

/* Each row's mean and 1/sqrt(biased variance + 1e-5) (torch's LayerNorm)
 * from the row in double. The float mean is within gamma_{C+1} mean|x| of
 * the true one; the variance sums squares of x - mean, each within gamma_3,
 * in C - 1 additions and a division, and the mean's error adds its square;
 * the square root and the reciprocal round once each. */
static double layernorm_rows(const ws_real *in, const ws_real *mean, const ws_real *rstd, int N,
                             int C) {
  const double u = 0x1p-24, eps = 1e-5;
  double worst = 0;
  for (int i = 0; i < N; i++) {
    const ws_real *x = in + (size_t)i * C;
    double mu = 0, absum = 0, var = 0;
    for (int c = 0; c < C; c++) mu += x[c], absum += fabs(x[c]);
    mu /= C;
    for (int c = 0; c < C; c++) var += (x[c] - mu) * (x[c] - mu);
    var /= C;
    double e_mu = gamma_n(C + 1) * absum / C;
    worst = wf_worse(worst, fabs(mean[i] - mu) / (e_mu + 1e-300));
    double s = 1 / sqrt(var + eps);
    double e_sum = gamma_n(C + 3) * (var + eps) + 1.01 * e_mu * e_mu + 2 * u * eps;
    double e_s = s * (e_sum / (2 * (var + eps)) + gamma_n(3));
    worst = wf_worse(worst, fabs(rstd[i] - s) / e_s);
  }
  return worst;
}

/* GELU's tanh form from its definition, in double; for v < 0, 1 + tanh(v)
 * written as 2 e^{2v} / (1 + e^{2v}) (the sum cancels in double from v =
 * -13 on: an input of -6.5 would be wrong by 26 times the allowance). */
static double gelu_definition(double x) {
  const double pi = 3.14159265358979323846;
  double v = sqrt(2 / pi) * (x + 0.044715 * x * x * x);
  return v >= 0 ? 0.5 * x * (1 + tanh(v)) : x * exp(2 * v) / (1 + exp(2 * v));
}

/* Its slope by central differences, Richardson-extrapolated; *err bounds
 * what is left (the difference of the two estimates, and rounding). */
static double gelu_slope(double x, double *err) {
  double h = 1e-3 * fmax(1, fabs(x));
  double d1 = (gelu_definition(x + h) - gelu_definition(x - h)) / (2 * h);
  double d2 = (gelu_definition(x + 2 * h) - gelu_definition(x - 2 * h)) / (4 * h);
  *err = fabs(d1 - d2) + 4 * 0x1p-52 * (1 + fabs(x)) / h;
  return (4 * d1 - d2) / 3;
}

/* The float GELU (x sigmoid(2 v), v = sqrt(2/pi) (x + 0.044715 x^3)) and its
 * slope against the definition. v is within gamma_6 of its terms' sizes;
 * the exponential within 4 u (the kernel's own, 1 ulp of expf's); the
 * sigmoid takes v's error times sig (1 - sig) 2; sech^2 = 4 sig (1 - sig)
 * four times sig's, and 1 - sig rounds once more. */
static void gelu_elements(const ws_real *x, const ws_real *out, const ws_real *dout,
                          const ws_real *din, size_t n, double *fwd, double *bwd) {
  const double u = 0x1p-24, gs = 0.7978845608028654;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], ax = fabs(xi);
    double dv = gamma_n(6) * gs * (ax + 0.044715 * ax * ax * ax);
    double want = gelu_definition(xi);
    double sig = 1 / (1 + exp(-2 * gs * (xi + 0.044715 * xi * xi * xi)));
    double dsig = 6 * u * sig + 2 * sig * (1 - sig) * dv;
    double floor = 0x1p-120 * (1 + ax); /* the exponential's clamp, far out */
    *fwd = wf_worse(*fwd, fabs(out[i] - want) / (ax * (dsig + 2 * u * sig) + floor));
    double ferr, slope = gelu_slope(xi, &ferr);
    double sech2 = 4 * sig * (1 - sig), dsech2 = 4 * (dsig + 3 * u * sig * (1 - sig));
    double chain = 0.5 * ax * gs * (1 + 0.135 * ax * ax);
    double e_grad = dsig + chain * (dsech2 + 8 * u * sech2) + 2 * u * (sig + chain * sech2);
    double d = dout[i];
    *bwd = wf_worse(*bwd, fabs(din[i] - d * slope) / (fabs(d) * (e_grad + ferr) + floor));
  }
}

/* ReLU is exact both ways. */
static void relu_elements(const ws_real *x, const ws_real *out, const ws_real *dout,
                          const ws_real *din, size_t n, double *fwd, double *bwd) {
  for (size_t i = 0; i < n; i++) {
    bool on = x[i] > 0;
    if (out[i] != (on ? x[i] : 0)) *fwd = INFINITY;
    if (din[i] != (on ? dout[i] : 0)) *bwd = INFINITY;
  }
}

/* LayerNorm's gain and bias gradients, sum over the rows of xhat dout and
 * of dout, xhat = (x - mean) rstd from the stored (checked) statistics, in
 * double: each float sum of N terms within gamma_{N+3} of the sum of their
 * sizes (xhat itself two roundings off). */
static double layernorm_params(const ws_real *in, const ws_real *mean, const ws_real *rstd,
                               const ws_real *dout, const ws_real *dw, const ws_real *db, int N,
                               int C) {
  double worst = 0;
  for (int c = 0; c < C; c++) {
    double w = 0, wa = 0, b = 0, ba = 0;
    for (int i = 0; i < N; i++) {
      double xhat = ((double)in[(size_t)i * C + c] - mean[i]) * rstd[i];
      double d = dout[(size_t)i * C + c];
      w += xhat * d, wa += fabs(xhat * d), b += d, ba += fabs(d);
    }
    worst = wf_worse(worst, fabs(dw[c] - w) / (gamma_n(N + 3) * wa + 1e-300));
    worst = wf_worse(worst, fabs(db[c] - b) / (gamma_n(N) * ba + 1e-300));
  }
  return worst;
}

ws_kernel_check ws_check_kernels(const ws_gpt *m) {
  int L = m->c.layers, C = m->c.channels, N = m->B * m->T;
  size_t NC = (size_t)N * C;
  ws_kernel_check k = {0};
  for (int l = 0; l < L; l++) {
    const ws_real *in = l > 0 ? m->a.t[WS_RES3] + (size_t)(l - 1) * NC : m->a.t[WS_ENCODED];
    k.layernorm = wf_worse(k.layernorm, layernorm_rows(in, m->a.t[WS_LN1MEAN] + (size_t)l * N,
                                                       m->a.t[WS_LN1RSTD] + (size_t)l * N, N, C));
    k.layernorm = wf_worse(
        k.layernorm, layernorm_rows(m->a.t[WS_RES2] + (size_t)l * NC, m->a.t[WS_LN2MEAN] + (size_t)l * N,
                                    m->a.t[WS_LN2RSTD] + (size_t)l * N, N, C));
    size_t at = (size_t)l * 4 * NC;
    const ws_real *x = m->a.t[WS_FCH] + at, *out = m->a.t[WS_FCHGELU] + at;
    const ws_real *dout = m->da.t[WS_FCHGELU] + at, *din = m->da.t[WS_FCH] + at;
    if (m->c.relu) {
      relu_elements(x, out, dout, din, 4 * NC, &k.activation, &k.activation_slope);
      k.elements += 4 * NC;
    } else { /* a wafer's rank computes GELU on its next product's columns only */
      int lo, n;
      ws_gpt_activation_columns(m, &lo, &n);
      for (size_t i = 0, row = 4 * (size_t)C; i < (size_t)N; i++) {
        size_t j = i * row + (size_t)lo;
        gelu_elements(x + j, out + j, dout + j, din + j, (size_t)n, &k.activation,
                      &k.activation_slope);
      }
      k.elements += (size_t)N * (size_t)n;
    }
  }
  k.layernorm = wf_worse(k.layernorm, layernorm_rows(m->a.t[WS_RES3] + (size_t)(L - 1) * NC,
                                                     m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD], N, C));
  k.layernorm_grads = -1; /* streaming: the gradients are MemoryX's */
  for (int l = 0; l < L && m->g.mem; l++) {
    const ws_real *in = l > 0 ? m->a.t[WS_RES3] + (size_t)(l - 1) * NC : m->a.t[WS_ENCODED];
    size_t at = (size_t)l * C;
    double w1 = layernorm_params(in, m->a.t[WS_LN1MEAN] + (size_t)l * N,
                                 m->a.t[WS_LN1RSTD] + (size_t)l * N, m->da.t[WS_LN1] + (size_t)l * NC,
                                 m->g.t[WS_LN1W] + at, m->g.t[WS_LN1B] + at, N, C);
    double w2 = layernorm_params(m->a.t[WS_RES2] + (size_t)l * NC, m->a.t[WS_LN2MEAN] + (size_t)l * N,
                                 m->a.t[WS_LN2RSTD] + (size_t)l * N, m->da.t[WS_LN2] + (size_t)l * NC,
                                 m->g.t[WS_LN2W] + at, m->g.t[WS_LN2B] + at, N, C);
    k.layernorm_grads = wf_worse(wf_worse(k.layernorm_grads, w1), w2);
  }
  if (m->g.mem)
    k.layernorm_grads = wf_worse(
        k.layernorm_grads,
        layernorm_params(m->a.t[WS_RES3] + (size_t)(L - 1) * NC, m->a.t[WS_LNFMEAN],
                         m->a.t[WS_LNFRSTD], m->da.t[WS_LNF], m->g.t[WS_LNFW], m->g.t[WS_LNFB], N, C));
  k.rows = (2 * L + 1) * N;
  return k;
}

double ws_checksum(const ws_real *g, size_t n, int block, double *magnitude) {
  double sum = 0, mag = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t z = ((uint64_t)block << 40 ^ i) + 0x9E3779B97F4A7C15ull; /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    sum += z >> 63 ? g[i] : -(double)g[i];
    mag += fabs(g[i]);
  }
  *magnitude = mag;
  return sum;
}
