/* The wave stencil's independent check (cf_wave_probe.h): reference coefficients from
 * Fornberg's closed form, and one step of the run's stencil on a standing mode against them. */
#include "cf_wave_probe.h"

#include <math.h>

#include "wf_workload.h"

#include "cf_wave.h"

static const double PI = 3.14159265358979323846;

static double factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; i++) f *= i;
  return f;
}

double cf_reference_coeff(int r, int k) {
  if (k == 0) {
    double sum = 0;
    for (int j = 1; j <= r; j++) sum += cf_reference_coeff(r, j);
    return -2 * sum;
  }
  double sign = k % 2 ? 1 : -1;
  return 2 * sign * factorial(r) * factorial(r) /
         ((double)k * k * factorial(r - k) * factorial(r + k));
}

double cf_reference_symbol(int r, double theta) {
  double s = -cf_reference_coeff(r, 0);
  for (int k = 1; k <= r; k++) s -= 2 * cf_reference_coeff(r, k) * cos(k * theta);
  return s;
}

/* Mode numbers 1, 2, 3 along x, y, z (distinct, so that a swapped axis
 * shows), at most the cells along each. */
static double theta_of(int axis, int n) {
  int mode = axis + 1 < n ? axis + 1 : n;
  return PI * mode / n;
}

int cf_wave_probe(const st_mesh *m, wf_fabric *fab, double a, double *cur, double *prev,
                  double *worst, wf_status *st) {
  const int r = CF_RADIUS;
  cf_wave w;
  wf_fabric_counters counted = fab->c;
  if (cf_wave_create(&w, m, fab, 0, st) != WF_OK) return st->code;
  double th[3] = {theta_of(0, m->nx), theta_of(1, m->ny), theta_of(2, m->nz)};
  double lambda = 0, sum_abs = 0; /* lambda h^2 and sum |c_k| over k = 1..r */
  for (int d = 0; d < 3; d++) lambda += cf_reference_symbol(r, th[d]);
  for (int k = 1; k <= r; k++) sum_abs += fabs(cf_reference_coeff(r, k));
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        size_t c = st_idx(m, i, j, k);
        cur[c] = prev[c] = sin(th[0] * (m->x0 + i + 0.5)) * sin(th[1] * (m->y0 + j + 0.5)) *
                           sin(th[2] * (k + 0.5));
      }
  cf_wave_step(&w, cur, prev, a); /* prev <- 2 cur - prev + a lap(cur) = cur + a lap(cur) */
  double err = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        size_t c = st_idx(m, i, j, k);
        err = wf_worse(err, fabs(prev[c] - (1 - a * lambda) * cur[c]));
      }
  if (err != err) err = INFINITY; /* MPI_MAX may drop a NaN */
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, fab->dc->comm);
  cf_wave_free(&w);
  fab->c = counted;
  /* |mode| <= 1. The step's sum: 2 u - u and 3 r pair sums of 6 neighbours
   * (at most 3 + a (3 |c_0| + 6 sum |c_k|) in size), within gamma_{2r+4} of
   * its terms; the mode's cells within 4 u each (three sines and their
   * product), the reference's (1 - a lambda) u within 4 u. */
  double u = 0x1p-53, size = 3 + a * (3 * fabs(cf_reference_coeff(r, 0)) + 6 * sum_abs);
  double allowed = (2 * r + 4) * u * size + 8 * u * size;
  *worst = err / allowed;
  return WF_OK;
}
