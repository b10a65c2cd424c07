/* The point source's balance (cf_wave_balance.h): the sum of the
 * wavefield in the wave run's first steps against the wavelet it was
 * given. */
#include "cf_wave_balance.h"

#include <math.h>
#include <stdlib.h>

#include "wf_workload.h"

int cf_balance_steps(const int n[3], const int src[3], int sponge) {
  int steps = 1 << 20, keep = sponge > 4 ? sponge : 4;
  for (int a = 0; a < 3; a++) {
    int room = (src[a] < n[a] - 1 - src[a] ? src[a] : n[a] - 1 - src[a]) - keep;
    int s = room < 0 ? 1 : 1 + room / 4; /* 4 (s - 1) <= room */
    if (s < steps) steps = s;
  }
  return steps;
}

int cf_balance_create(cf_balance *b, int steps, wf_status *st) {
  b->steps = steps;
  b->sum = calloc((size_t)steps + 1, sizeof *b->sum);
  b->abs = calloc((size_t)steps + 1, sizeof *b->abs);
  if (!b->sum || !b->abs) {
    cf_balance_free(b);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the source's balance");
  }
  return WF_OK;
}

void cf_balance_free(cf_balance *b) {
  free(b->sum), free(b->abs);
  b->sum = b->abs = NULL;
}

void cf_balance_record(cf_balance *b, int n, const st_mesh *m, wf_fabric *fab, const double *u) {
  double s[2] = {0, 0};
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const double *c = u + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) s[0] += c[k], s[1] += fabs(c[k]);
    }
  wf_fabric_allreduce(fab, s, 2, WF_SUM);
  b->sum[n] = s[0], b->abs[n] = s[1];
}

/* The Ricker wavelet, (1 - 2 x^2) exp(-x^2), x = pi f0 (t - 1.2 / f0). */
static double wavelet(double t, double f0) {
  const double pi = 3.14159265358979323846;
  double x = pi * f0 * t - 1.2 * pi;
  return (1 - 2 * x * x) / exp(x * x);
}

/* Rounding: each cell's update 2 u - u_prev + a sum_k c_k u_k (25 terms)
 * is within gamma_30 of 2 |u| + |u_prev| + a sum_k |c_k| |u_k|, which sums
 * over the cells to (2 + a C) A_n + A_{n-1}, C = sum |c_k| of the 3D
 * stencil = 3 (205/72 + 2 (8/5 + 1/5 + 8/315 + 1/560)) = 19.505; adding the
 * source rounds once more. An error made in step j's sum reaches S_{n} as
 * (n - j) times itself (the recurrence's own response), and the double sum
 * of S_n adds cells u of A_n. */
double cf_balance_check(const cf_balance *b, double dt, double v, double h, double f0, double a,
                        double cells) {
  const double u = 0x1p-53, g30 = wf_gamma(30, u), C = 19.51;
  double worst = 0;
  for (int n = 1; n <= b->steps; n++) {
    double want = 0, allowed = cells * u * b->abs[n] + 1e-300;
    for (int j = 0; j < n; j++) {
      double q = dt * dt * v * v * wavelet(j * dt, f0) / (h * h * h);
      want += (n - j) * q;
      double before = j > 0 ? b->abs[j - 1] : 0;
      allowed += (n - j) * (g30 * ((2 + a * C) * b->abs[j] + before) + u * fabs(q));
    }
    worst = wf_worse(worst, fabs(b->sum[n] - want) / allowed);
  }
  return worst;
}
