#include "ws_check.h"

#include <math.h>

#include "wf_workload.h"
#include <stdlib.h>
#include <string.h>

/* The replicas' mean loss at the current parameters. */
static double mean_loss(ws_gpt *m, const int *tok, const int *tgt, MPI_Comm replicas) {
  double l = ws_gpt_forward(m, tok, tgt);
  int n;
  MPI_Comm_size(replicas, &n);
  MPI_Allreduce(MPI_IN_PLACE, &l, 1, MPI_DOUBLE, MPI_SUM, replicas);
  return l / n;
}

/* The loss at theta_k + s d for the saved theta_k. */
static double loss_at(ws_gpt *m, int k, const ws_real *saved, const double *d, double s,
                      const int *tok, const int *tgt, MPI_Comm replicas) {
  for (size_t i = 0; i < m->p.size[k]; i++) m->p.t[k][i] = (ws_real)(saved[i] + s * d[i]);
  return mean_loss(m, tok, tgt, replicas);
}

int ws_check_gradient(ws_gpt *m, const int *tok, const int *tgt, MPI_Comm replicas,
                      ws_grad_check *out, wf_status *st) {
  size_t most = 0;
  for (int k = 0; k < WS_NPARAMS; k++)
    if (m->p.size[k] > most) most = m->p.size[k];
  ws_real *saved = malloc(most * sizeof *saved + 1);
  double *d = malloc(most * sizeof *d + 1);
  int failed = !saved || !d;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, replicas);
  if (failed) {
    free(saved), free(d);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the gradient check");
  }
  *out = (ws_grad_check){0, -1, 0};
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
  for (int k = 0; k < WS_NPARAMS; k++) {
    size_t n = m->p.size[k];
    double norm = 0;
    for (size_t i = 0; i < n; i++) norm += (double)m->g.t[k][i] * m->g.t[k][i];
    norm = sqrt(norm);
    if (norm == 0) continue; /* no direction; a NaN norm goes on, and fails */
    memcpy(saved, m->p.t[k], n * sizeof *saved);
    for (size_t i = 0; i < n; i++) d[i] = m->g.t[k][i] / norm;
    /* a step that moves the loss by `move` of itself: far above its rounding */
    double h = move * base / norm;
    double dh = (loss_at(m, k, saved, d, h, tok, tgt, replicas) -
                 loss_at(m, k, saved, d, -h, tok, tgt, replicas)) / (2 * h);
    double d2h = (loss_at(m, k, saved, d, 2 * h, tok, tgt, replicas) -
                  loss_at(m, k, saved, d, -2 * h, tok, tgt, replicas)) / (4 * h);
    memcpy(m->p.t[k], saved, n * sizeof *saved);
    /* Richardson's (4 D(h) - D(2h)) / 3 leaves an O(h^4) error; D(h) - D(2h)
     * is three times D(h)'s own h^2 error, so it bounds what is left with
     * room. Rounding: each loss within EPS_LOSS of its value moves the
     * estimate by at most (4/3 + 1/6) EPS_LOSS / h. */
    double rich = (4 * dh - d2h) / 3;
    double allowed = fabs(dh - d2h) + 1.5 * eps_loss * base / h;
    double q = fabs(rich - norm) / allowed;
    if (!(q <= out->worst) || out->worst_tensor < 0) out->worst = q, out->worst_tensor = k;
    out->tensors++;
  }
  m->counting = counting;
  free(saved), free(d);
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
  double sum = 0;
  for (size_t i = 0; i < m->g.count; i++) sum += (double)m->g.mem[i] * m->g.mem[i];
  pr->norm = sqrt(sum);
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
