/* LSQR for complex least squares (tl_lsqr.h): Paige and Saunders' iteration, with optional
 * damping, on an operator given by its products; every rank runs it on whole vectors. */
#include "tl_lsqr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_signal.h"

static double vnorm(const float complex *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += (double)crealf(v[i]) * crealf(v[i]) + (double)cimagf(v[i]) * cimagf(v[i]);
  return sqrt(s);
}

static void scale(float complex *v, int n, double s) {
  for (int i = 0; i < n; i++) v[i] *= (float)s;
}

/* v = A(v_in) - c v, into v (tmp holds the product). */
static void step(tl_operator_fn op, void *ctx, bool adjoint, const float complex *in,
                 float complex *v, float complex *tmp, int len, double c) {
  op(ctx, adjoint, in, tmp);
  for (int i = 0; i < len; i++) v[i] = tmp[i] - (float)c * v[i];
}

int tl_lsqr(tl_operator_fn op, void *ctx, int m, int n, const float complex *b,
            const tl_lsqr_opts *o, float complex *x, double *history, tl_lsqr_result *r,
            wf_status *st) {
  int big = m > n ? m : n;
  float complex *u = malloc((size_t)m * sizeof *u), *v = malloc((size_t)n * sizeof *v);
  float complex *w = malloc((size_t)n * sizeof *w), *tmp = malloc((size_t)big * sizeof *tmp);
  if (!u || !v || !w || !tmp) {
    free(u), free(v), free(w), free(tmp);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for LSQR's vectors");
  }
  memset(x, 0, (size_t)n * sizeof *x);
  memcpy(u, b, (size_t)m * sizeof *u);
  double beta = vnorm(u, m), bnorm = beta;
  *r = (tl_lsqr_result){0, bnorm > 0 ? 1.0 : 0.0};
  if (history) history[0] = r->residual;
  double alpha = 0;
  if (beta > 0) {
    scale(u, m, 1 / beta);
    op(ctx, true, u, v);
    alpha = vnorm(v, n);
  }
  if (alpha > 0) scale(v, n, 1 / alpha);
  memcpy(w, v, (size_t)n * sizeof *w);
  double phibar = beta, rhobar = alpha, anorm2 = 0, res2 = 0;
  wf_signal_poll poll = {.req = MPI_REQUEST_NULL};
  if (o->poll) wf_signal_poll_start(&poll, *o->poll);
  int rc = WF_OK;
  for (int it = 0; it < o->iterations && alpha > 0 && beta > 0; it++) {
    int sig = o->poll && it > 0 ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      rc = wf_signal_fail(st, sig, "during LSQR's iterations");
      break;
    }
    /* Bidiagonalisation: beta u = A v - alpha u, alpha v = A^H u - beta v. */
    step(op, ctx, false, v, u, tmp, m, alpha);
    beta = vnorm(u, m);
    if (beta > 0) scale(u, m, 1 / beta);
    anorm2 += alpha * alpha + beta * beta + o->damp * o->damp;
    step(op, ctx, true, u, v, tmp, n, beta);
    alpha = vnorm(v, n);
    if (alpha > 0) scale(v, n, 1 / alpha);
    /* Damping: a plane rotation eliminates damp from the bidiagonal. */
    double rhobar1 = sqrt(rhobar * rhobar + o->damp * o->damp);
    double cs1 = rhobar1 > 0 ? rhobar / rhobar1 : 1, sn1 = rhobar1 > 0 ? o->damp / rhobar1 : 0;
    double psi = sn1 * phibar;
    phibar *= cs1;
    res2 += psi * psi;
    /* Then the rotation that eliminates beta. */
    double rho = sqrt(rhobar1 * rhobar1 + beta * beta);
    double c = rhobar1 / rho, s = beta / rho, theta = s * alpha;
    rhobar = -c * alpha;
    double phi = c * phibar;
    phibar *= s;
    for (int i = 0; i < n; i++) {
      x[i] += (float)(phi / rho) * w[i];
      w[i] = v[i] - (float)(theta / rho) * w[i];
    }
    r->iterations = it + 1;
    /* ||b - A x||: the damped objective less damp^2 ||x||^2. */
    double xx = o->damp > 0 ? vnorm(x, n) : 0;
    double r1 = phibar * phibar + res2 - o->damp * o->damp * xx * xx;
    r->residual = sqrt(r1 > 0 ? r1 : 0) / bnorm;
    if (history) history[it + 1] = r->residual;
    /* ||A^H r - damp^2 x|| = phibar alpha |c|: stop when the normal
     * equations hold to atol relative to ||A|| ||r||. */
    double rnorm = sqrt(phibar * phibar + res2);
    if (o->atol > 0 && fabs(phibar) * alpha * fabs(c) <= o->atol * sqrt(anorm2) * rnorm) break;
  }
  if (o->poll) wf_signal_poll_end(&poll);
  free(u), free(v), free(w), free(tmp);
  return rc;
}
