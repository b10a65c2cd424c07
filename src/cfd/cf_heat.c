/* The explicit heat equation (cf_heat.h): a forward Euler step of the 7-point Laplacian, the
 * ghost cells each axis's boundary needs, and the slowest mode a check compares with. */
#include "cf_heat.h"

#include <math.h>
#include <stddef.h>

int cf_heat_create(cf_heat *h, const st_mesh *m, wf_fabric *fab, const cf_bc bc[3], wf_status *st) {
  *h = (cf_heat){.m = m, .bc = {bc[0], bc[1], bc[2]}};
  if (m->halo < 1) return wf_fail(st, WF_ERR_RUNTIME, "the heat stencil needs a halo");
  if (st_mesh_halo_create(&h->halo, fab, m, sizeof(double), 1, false, bc[0] == CF_PERIODIC,
                          bc[1] == CF_PERIODIC, st) != WF_OK)
    return st->code;
  h->edge[0] = m->x0 == 0, h->edge[1] = m->x0 + m->lnx == m->nx;
  h->edge[2] = m->y0 == 0, h->edge[3] = m->y0 + m->lny == m->ny;
  return WF_OK;
}

void cf_heat_free(cf_heat *h) { wf_halo_free(&h->halo); }

/* The ghost's sign at an axis's low (high = 0) or high face: -1 reflects
 * oddly (Dirichlet), +1 evenly (Neumann). */
static double sign(cf_bc bc, bool high) {
  return bc == CF_NEUMANN || (bc == CF_MIXED && high) ? 1.0 : -1.0;
}

static void reflect(double *out, const double *in, int nz, double s) {
  for (int k = 0; k < nz; k++) out[k] = s * in[k];
}

/* The ghost columns at the mesh's x and y faces this rank holds. */
static void ghost_faces(const cf_heat *h, double *x) {
  const st_mesh *m = h->m;
  for (int j = 0; j < m->lny && h->bc[0] != CF_PERIODIC; j++) {
    if (h->edge[0])
      reflect(x + st_idx(m, -1, j, 0), x + st_idx(m, 0, j, 0), m->nz, sign(h->bc[0], false));
    if (h->edge[1])
      reflect(x + st_idx(m, m->lnx, j, 0), x + st_idx(m, m->lnx - 1, j, 0), m->nz,
              sign(h->bc[0], true));
  }
  for (int i = 0; i < m->lnx && h->bc[1] != CF_PERIODIC; i++) {
    if (h->edge[2])
      reflect(x + st_idx(m, i, -1, 0), x + st_idx(m, i, 0, 0), m->nz, sign(h->bc[1], false));
    if (h->edge[3])
      reflect(x + st_idx(m, i, m->lny, 0), x + st_idx(m, i, m->lny - 1, 0), m->nz,
              sign(h->bc[1], true));
  }
}

static void column_step(const cf_heat *h, const double *x, int i, int j, double r,
                        double *restrict out) {
  const st_mesh *m = h->m;
  int nz = m->nz;
  const ptrdiff_t sx = (ptrdiff_t)m->zs, sy = (ptrdiff_t)(m->ld * m->zs);
  const double *u = x + st_idx(m, i, j, 0);
#pragma omp simd
  for (int k = 1; k < nz - 1; k++)
    out[k] =
        u[k] + r * (u[k - sx] + u[k + sx] + u[k - sy] + u[k + sy] + u[k - 1] + u[k + 1] - 6 * u[k]);
  /* The ends of the column: z's ghosts by the boundary. */
  bool periodic = h->bc[2] == CF_PERIODIC;
  double below = periodic ? u[nz - 1] : sign(h->bc[2], false) * u[0];
  double above = periodic ? u[0] : sign(h->bc[2], true) * u[nz - 1];
  int ends[2] = {0, nz - 1};
  for (int e = 0; e < (nz > 1 ? 2 : 1); e++) {
    int k = ends[e];
    double down = k > 0 ? u[k - 1] : below, up = k < nz - 1 ? u[k + 1] : above;
    out[k] = u[k] + r * (u[k - sx] + u[k + sx] + u[k - sy] + u[k + sy] + down + up - 6 * u[k]);
  }
}

void cf_heat_step(cf_heat *h, double *cur, double *next, double r) {
  const st_mesh *m = h->m;
  wf_halo_exchange(&h->halo, cur);
  ghost_faces(h, cur);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) column_step(h, cur, i, j, r, next + st_idx(m, i, j, 0));
}

double cf_heat_theta(cf_bc bc, int n) {
  const double pi = 3.14159265358979323846;
  switch (bc) {
    case CF_PERIODIC:
      return 2 * pi / n;
    case CF_MIXED:
      return pi / (2.0 * n);
    default:
      return pi / n;
  }
}

double cf_heat_mode(cf_bc bc, int g, int n) {
  double t = cf_heat_theta(bc, n) * (g + 0.5);
  return bc == CF_DIRICHLET || bc == CF_MIXED ? sin(t) : cos(t);
}
