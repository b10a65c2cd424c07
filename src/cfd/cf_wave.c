#include "cf_wave.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

const double cf_c8[CF_RADIUS + 1] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};

double cf_symbol(double theta) {
  double s = -cf_c8[0];
  for (int r = 1; r <= CF_RADIUS; r++) s -= 2 * cf_c8[r] * cos(r * theta);
  return s;
}

double cf_dt_max(double h, double v) { return h / v * 2 / sqrt(3 * cf_symbol(ST_PI)); }

/* Sponge taper of a cell `d` cells from the nearest face: Cerjan's
 * exp(-(0.015 (20 - d))^2), its width scaled to the layer's. */
static double taper(int d, int sponge) {
  if (d >= sponge) return 1;
  double x = 0.3 / sponge * (sponge - d);
  return exp(-x * x);
}

static double *tapers(int n, int lo, int count, int sponge) {
  double *t = malloc((size_t)count * sizeof *t);
  if (!t) return NULL;
  for (int i = 0; i < count; i++) {
    int g = lo + i, d = g < n - 1 - g ? g : n - 1 - g;
    t[i] = taper(d, sponge);
  }
  return t;
}

int cf_wave_create(cf_wave *w, const st_mesh *m, wf_fabric *fab, int sponge, wf_status *st) {
  *w = (cf_wave){.m = m};
  if (m->halo < CF_RADIUS)
    return wf_fail(st, WF_ERR_RUNTIME, "the wave stencil needs a mesh with a %d-column halo",
                   CF_RADIUS);
  if (m->nz < CF_RADIUS || m->min_lnx < CF_RADIUS || m->min_lny < CF_RADIUS)
    return wf_fail(st, WF_ERR_INPUT,
                   "the 25-point stencil reaches %d cells each way: every rank needs at least %d "
                   "columns in x and y (the thinnest has %d x %d) and nz at least %d (it is %d): "
                   "a larger mesh or fewer ranks",
                   CF_RADIUS, CF_RADIUS, m->min_lnx, m->min_lny, CF_RADIUS, m->nz);
  wf_halo_shape cols = {m->lnx, m->lny, m->min_lnx, m->min_lny, "columns"};
  if (wf_halo_create_shape(&w->halo, fab, &cols, (size_t)m->nz * sizeof(double), CF_RADIUS, false,
                           false, false, st) != WF_OK)
    return st->code;
  w->edge[0] = m->x0 == 0, w->edge[1] = m->x0 + m->lnx == m->nx;
  w->edge[2] = m->y0 == 0, w->edge[3] = m->y0 + m->lny == m->ny;
  if (sponge > 0) {
    w->damp_x = tapers(m->nx, m->x0, m->lnx, sponge);
    w->damp_y = tapers(m->ny, m->y0, m->lny, sponge);
    w->damp_z = tapers(m->nz, 0, m->nz, sponge);
    if (!w->damp_x || !w->damp_y || !w->damp_z) {
      cf_wave_free(w);
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the sponge");
    }
  }
  return WF_OK;
}

void cf_wave_free(cf_wave *w) {
  wf_halo_free(&w->halo);
  free(w->damp_x), free(w->damp_y), free(w->damp_z);
  w->damp_x = w->damp_y = w->damp_z = NULL;
}

/* Odd reflection across the mesh's x and y faces this rank holds: the ghost
 * column q + 1 outside is minus the column q inside. */
static void reflect_faces(const cf_wave *w, double *x) {
  const st_mesh *m = w->m;
  int nz = m->nz;
  for (int q = 0; q < CF_RADIUS; q++) {
    for (int j = 0; j < m->lny; j++) {
      if (w->edge[0]) {
        const double *in = x + st_idx(m, q, j, 0);
        double *out = x + st_idx(m, -1 - q, j, 0);
        for (int k = 0; k < nz; k++) out[k] = -in[k];
      }
      if (w->edge[1]) {
        const double *in = x + st_idx(m, m->lnx - 1 - q, j, 0);
        double *out = x + st_idx(m, m->lnx + q, j, 0);
        for (int k = 0; k < nz; k++) out[k] = -in[k];
      }
    }
    for (int i = 0; i < m->lnx; i++) {
      if (w->edge[2]) {
        const double *in = x + st_idx(m, i, q, 0);
        double *out = x + st_idx(m, i, -1 - q, 0);
        for (int k = 0; k < nz; k++) out[k] = -in[k];
      }
      if (w->edge[3]) {
        const double *in = x + st_idx(m, i, m->lny - 1 - q, 0);
        double *out = x + st_idx(m, i, m->lny + q, 0);
        for (int k = 0; k < nz; k++) out[k] = -in[k];
      }
    }
  }
}

/* A column's value k cells along z, reflected (odd) past either end. */
static inline double zval(const double *u, int k, int nz) {
  if (k < 0) return -u[-1 - k];
  if (k >= nz) return -u[2 * nz - 1 - k];
  return u[k];
}

/* What reflection changes in the Laplacian of cell k near an end of a
 * column: the z neighbours past the end are minus their mirror images, where
 * the straight formula read the next column's cells in memory (harmless: a
 * column's neighbours in memory are columns of the same field, halo or
 * owned). */
static double end_correction(const double *u, int k, int nz) {
  double c = 0;
  for (int r = 1; r <= CF_RADIUS; r++) {
    if (k - r < 0) c += cf_c8[r] * (zval(u, k - r, nz) - u[k - r]);
    if (k + r >= nz) c += cf_c8[r] * (zval(u, k + r, nz) - u[k + r]);
  }
  return c;
}

/* The column's 25-point Laplacian (times h^2), straight in z, cell k. */
#define LAP(u, k, sx, sy)                                                                       \
  (c0 * u[k] + c1 * (u[k - sx] + u[k + sx] + u[k - sy] + u[k + sy] + u[k - 1] + u[k + 1]) +     \
   c2 * (u[k - 2 * sx] + u[k + 2 * sx] + u[k - 2 * sy] + u[k + 2 * sy] + u[k - 2] + u[k + 2]) + \
   c3 * (u[k - 3 * sx] + u[k + 3 * sx] + u[k - 3 * sy] + u[k + 3 * sy] + u[k - 3] + u[k + 3]) + \
   c4 * (u[k - 4 * sx] + u[k + 4 * sx] + u[k - 4 * sy] + u[k + 4 * sy] + u[k - 4] + u[k + 4]))

/* One column's update, out[k] = 2 u[k] - out[k] + a lap(u)[k]: every cell
 * in one vectorised loop, then the 4 cells at each end corrected for the
 * reflection. */
static void column_step(const st_mesh *m, const double *x, int i, int j, double a,
                        double *restrict out) {
  int nz = m->nz;
  const ptrdiff_t sx = nz, sy = (ptrdiff_t)m->ld * nz;
  const double *u = x + st_idx(m, i, j, 0);
  const double c0 = 3 * cf_c8[0], c1 = cf_c8[1], c2 = cf_c8[2], c3 = cf_c8[3], c4 = cf_c8[4];
#pragma omp simd
  for (int k = 0; k < nz; k++) out[k] = 2 * u[k] - out[k] + a * LAP(u, k, sx, sy);
  for (int k = 0; k < nz; k++) {
    if (k >= CF_RADIUS && k < nz - CF_RADIUS) continue; /* the middle is right */
    out[k] += a * end_correction(u, k, nz);
  }
}

/* Sum over the column of y[k] lap(x)[k]. */
static double column_dot_lap(const st_mesh *m, const double *x, int i, int j,
                             const double *restrict y) {
  int nz = m->nz;
  const ptrdiff_t sx = nz, sy = (ptrdiff_t)m->ld * nz;
  const double *u = x + st_idx(m, i, j, 0);
  const double c0 = 3 * cf_c8[0], c1 = cf_c8[1], c2 = cf_c8[2], c3 = cf_c8[3], c4 = cf_c8[4];
  double sum = 0;
  for (int k = 0; k < nz; k++) sum += y[k] * (LAP(u, k, sx, sy) + end_correction(u, k, nz));
  return sum;
}

/* Columns [i0, i1) x [j0, j1) in strips of STRIP columns along x, each
 * strip swept along y: the 9 rows of a strip a stencil reads (its own and 4
 * each way in y) stay in the second-level cache from one row to the next.
 * (Chunks along z, to keep them in the first, were slower: short runs.) */
enum { STRIP = 32 };

static void step_columns(const cf_wave *w, const double *cur, double *prev, double a, int i0,
                         int i1, int j0, int j1) {
  const st_mesh *m = w->m;
  for (int s0 = i0; s0 < i1; s0 += STRIP) {
    int s1 = s0 + STRIP < i1 ? s0 + STRIP : i1;
    for (int j = j0; j < j1; j++)
      for (int i = s0; i < s1; i++) column_step(m, cur, i, j, a, prev + st_idx(m, i, j, 0));
  }
}

/* Cerjan's damping of both time levels in the sponge: whole columns near an
 * x or y face, the ends of the others. */
static void damp_range(const cf_wave *w, double *cur, double *next, int i, int j, int k0, int k1) {
  const st_mesh *m = w->m;
  double gxy = w->damp_x[i] * w->damp_y[j];
  double *u = cur + st_idx(m, i, j, 0), *n = next + st_idx(m, i, j, 0);
  for (int k = k0; k < k1; k++) {
    double g = gxy * w->damp_z[k];
    u[k] *= g, n[k] *= g;
  }
}

static void damp(const cf_wave *w, double *cur, double *next) {
  const st_mesh *m = w->m;
  if (!w->damp_x) return;
  int nz = m->nz, edge = 0; /* cells from either z end with a taper below 1 */
  while (edge < nz && w->damp_z[edge] < 1) edge++;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      if (w->damp_x[i] < 1 || w->damp_y[j] < 1) {
        damp_range(w, cur, next, i, j, 0, nz);
      } else {
        damp_range(w, cur, next, i, j, 0, edge < nz ? edge : nz);
        damp_range(w, cur, next, i, j, nz - edge > edge ? nz - edge : edge, nz);
      }
    }
}

void cf_wave_step(cf_wave *w, double *cur, double *prev, double a) {
  const st_mesh *m = w->m;
  int r = CF_RADIUS, nx = m->lnx, ny = m->lny;
  wf_halo_begin(&w->halo, cur);
  /* Columns at least r from the rank's edge need no halo. */
  bool inner = nx > 2 * r && ny > 2 * r;
  if (inner) step_columns(w, cur, prev, a, r, nx - r, r, ny - r);
  wf_halo_end(&w->halo, cur);
  reflect_faces(w, cur);
  if (inner) { /* the ring */
    step_columns(w, cur, prev, a, 0, nx, 0, r);
    step_columns(w, cur, prev, a, 0, nx, ny - r, ny);
    step_columns(w, cur, prev, a, 0, r, r, ny - r);
    step_columns(w, cur, prev, a, nx - r, nx, r, ny - r);
  } else {
    step_columns(w, cur, prev, a, 0, nx, 0, ny);
  }
  damp(w, cur, prev);
}

double cf_wave_dot_lap(const cf_wave *w, const double *x, const double *y) {
  const st_mesh *m = w->m;
  double sum = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) sum += column_dot_lap(m, x, i, j, y + st_idx(m, i, j, 0));
  return sum;
}
