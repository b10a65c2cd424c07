/* The stencil workload's test problems (st_problem.h): the right-hand
 * sides (ones, random, a manufactured solution's) and the exact answers
 * the checks compare with. */
#include "st_problem.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "wf_random.h"

/* The manufactured solution u = prod_d g_d(x_d) on the unit cube, with
 * g(x) = e^x sin(pi x) on a Dirichlet axis (nodes x = (i+1) h, h = 1/(n+1))
 * and g(x) = e^{sin 2 pi x} on a periodic one (x = i h, h = 1/n): smooth, and
 * not an eigenvector of the discrete operator. The unit-stencil operator
 * approximates h_d^2 (-d^2/dx_d^2) along each axis, so
 * b = sum_d h_d^2 (-g_d'') prod_{e != d} g_e, and the error is O(h^2). */
static void axis_factor(bool periodic, double x, double *g, double *g2) {
  if (periodic) {
    double s = sin(2 * ST_PI * x), c = cos(2 * ST_PI * x);
    *g = exp(s);
    *g2 = (4 * ST_PI * ST_PI * c * c - 4 * ST_PI * ST_PI * s) * *g;
  } else {
    double s = sin(ST_PI * x), c = cos(ST_PI * x), e = exp(x);
    *g = e * s;
    *g2 = e * ((1 - ST_PI * ST_PI) * s + 2 * ST_PI * c);
  }
}

static double manufactured(const int n[3], const bool periodic[3], const int g[3], double *b) {
  double f[3], f2[3], h[3];
  for (int d = 0; d < 3; d++) {
    h[d] = periodic[d] ? 1.0 / n[d] : 1.0 / (n[d] + 1);
    axis_factor(periodic[d], periodic[d] ? g[d] * h[d] : (g[d] + 1) * h[d], &f[d], &f2[d]);
  }
  *b = -(h[0] * h[0] * f2[0] * f[1] * f[2] + h[1] * h[1] * f[0] * f2[1] * f[2] +
         h[2] * h[2] * f[0] * f[1] * f2[2]);
  return f[0] * f[1] * f[2];
}

void st_problem_rhs(const st_mesh *m, const bool periodic[3], const char *rhs, long seed, double *b,
                    double *exact) {
  const int n[3] = {m->nx, m->ny, m->nz};
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        int g[3] = {m->x0 + i, m->y0 + j, k};
        size_t c = st_idx(m, i, j, k);
        long long cell = ((long long)g[1] * m->nx + g[0]) * m->nz + g[2];
        if (strcmp(rhs, "random") == 0) {
          b[c] = 2 * wf_uniform((uint64_t)seed, (uint64_t)cell) - 1; /* in [-1, 1) */
        } else if (strcmp(rhs, "manufactured") == 0) {
          exact[c] = manufactured(n, periodic, g, &b[c]);
        } else {
          b[c] = 1.0;
        }
      }
}

/* Per axis the Fourier modes' 2 - 2 cos(theta); the largest sums each
 * axis's largest, the next steps down one axis, the one with the smallest
 * gap. */
void st_problem_lambda(const int n[3], const bool periodic[3], double *first, double *second) {
  double lam = 0, gap = INFINITY;
  for (int d = 0; d < 3; d++) {
    double top = 0, next = -1;
    for (int k = 1; k <= n[d]; k++) {
      double theta = periodic[d] ? 2 * ST_PI * (k - 1) / n[d] : ST_PI * k / (n[d] + 1.0);
      double e = 2 - 2 * cos(theta);
      if (e > top + 1e-12)
        next = top, top = e;
      else if (e < top - 1e-12 && e > next)
        next = e;
    }
    lam += top;
    if (next >= 0) gap = fmin(gap, top - next);
  }
  *first = lam, *second = lam - gap;
}

