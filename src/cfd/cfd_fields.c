/* The fields' helpers the wave and heat runs share (cfd_parts.h): the
 * initial field, a dot product over the owned cells, and a finiteness
 * check. Their own file, so that neither run's file depends on the other's. */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>

#include "cfd_parts.h"

/* The initial field: the slowest mode of each axis's boundary (cf_heat_mode:
 * the wave's free faces are Dirichlet ones), or a Gaussian bump of 3 cells
 * at the middle, or nothing (a source run). */
void cfd_initial_field(const st_mesh *m, const cfd_setup *s, const cf_bc bc[3], double *u) {
  int n[3] = {m->nx, m->ny, m->nz};
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        int g[3] = {m->x0 + i, m->y0 + j, k};
        double v = 0;
        if (s->init == CFD_INIT_MODE) {
          v = 1;
          for (int a = 0; a < 3; a++) v *= cf_heat_mode(bc[a], g[a], n[a]);
        } else if (s->init == CFD_INIT_GAUSSIAN) {
          double r2 = 0, sigma = 3;
          for (int a = 0; a < 3; a++) r2 += pow(g[a] - 0.5 * (n[a] - 1), 2);
          v = exp(-r2 / (2 * sigma * sigma));
        }
        u[st_idx(m, i, j, k)] = v;
      }
}

/* Sum of x y over the owned cells (collective). */
double cfd_mesh_dot(const st_mesh *m, wf_fabric *fab, const double *x, const double *y) {
  double sum = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const double *a = x + st_idx(m, i, j, 0), *b = y + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) sum += a[k] * b[k];
    }
  wf_fabric_allreduce(fab, &sum, 1, WF_SUM);
  return sum;
}

/* Whether every owned cell of u is finite, on every rank (collective). */
bool cfd_all_finite(const st_mesh *m, wf_fabric *fab, const double *u) {
  double bad = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const double *c = u + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) bad = isfinite(c[k]) ? bad : 1;
    }
  wf_fabric_allreduce(fab, &bad, 1, WF_MAX);
  return bad == 0;
}
