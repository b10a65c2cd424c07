#include "cf_wave.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

/* Rows of columns updated together: a y neighbour loaded once serves up to
 * CF_ROWS cells. */
enum { CF_ROWS = 4 };

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
  if (m->halo < CF_RADIUS || m->zh < CF_RADIUS || m->zs < m->zh + (size_t)m->nz + CF_RADIUS)
    return wf_fail(st, WF_ERR_RUNTIME,
                   "the wave stencil needs a mesh with a %d-column halo and %d ghost cells past "
                   "either end of a column (st_mesh_pad_columns)",
                   CF_RADIUS, CF_RADIUS);
  if (m->nz < CF_RADIUS || m->min_lnx < CF_RADIUS || m->min_lny < CF_RADIUS)
    return wf_fail(st, WF_ERR_INPUT,
                   "the 25-point stencil reaches %d cells each way: every rank needs at least %d "
                   "columns in x and y (the thinnest has %d x %d) and nz at least %d (it is %d): "
                   "a larger mesh or fewer ranks",
                   CF_RADIUS, CF_RADIUS, m->min_lnx, m->min_lny, CF_RADIUS, m->nz);
  if (st_mesh_halo_create(&w->halo, fab, m, sizeof(double), CF_RADIUS, false, false, false, st) !=
      WF_OK)
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

/* The 25-point Laplacian (times h^2) of cell k of the column at u within
 * CF_RADIUS cells of an end, where the z neighbours past the end are minus
 * their mirror images. Sums in the order lap_row does. */
static double lap_near_end(const double *u, int k, int nz, ptrdiff_t sx, ptrdiff_t sy) {
  double s = 3 * cf_c8[0] * u[k];
  for (int d = 1; d <= CF_RADIUS; d++)
    s += cf_c8[d] * (u[k - d * sx] + u[k + d * sx] + u[k - d * sy] + u[k + d * sy] +
                     zval(u, k - d, nz) + zval(u, k + d, nz));
  return s;
}

/* The 25-point Laplacian (times h^2), straight in z, of cell k of the
 * column `r` rows along y from the column at u (sx, sy: the x and y
 * strides). Its y neighbours are written u[k + (r + d) sy], so that the
 * columns of a block of rows share them: one load serves every row that
 * reads it. Needs c0..c4 in scope. */
#define CF_U(dy, dx, dz) u[k + (r + (dy)) * sy + (dx)*sx + (dz)]
#define CF_TERM(c, d)                                                                    \
  c *(CF_U(0, -d, 0) + CF_U(0, d, 0) + CF_U(-d, 0, 0) + CF_U(d, 0, 0) + CF_U(0, 0, -d) + \
      CF_U(0, 0, d))
#define CF_LAP \
  (c0 * CF_U(0, 0, 0) + CF_TERM(c1, 1) + CF_TERM(c2, 2) + CF_TERM(c3, 3) + CF_TERM(c4, 4))
#define CF_COEFFS \
  const double c0 = 3 * cf_c8[0], c1 = cf_c8[1], c2 = cf_c8[2], c3 = cf_c8[3], c4 = cf_c8[4]

/* How a block's update meets the sponge: not at all, its taper g on
 * u^{n+1}, or on u^{n-1} as well where the last step left that owed
 * (cf_wave.lagged). */
enum { TAPER_NONE, TAPER_NEW, TAPER_BOTH };

typedef struct taper_of {
  const double *gz;    /* the taper per cell along z (NULL: no sponge) */
  double gxy[CF_ROWS]; /* and per column of the block */
  int mode;            /* TAPER_... */
} taper_of;

static inline double lap_row(const double *u, int k, ptrdiff_t sx, ptrdiff_t sy, int r) {
  CF_COEFFS;
  return CF_LAP;
}

/* One cell's update with its taper g: g (2 u - gp o + a lap), gp = g for
 * TAPER_BOTH, else 1 (and g = 1 for TAPER_NONE: both fold away). */
static inline double leap(double u, double o, double lap, double a, double g, int mode) {
  return g * (2 * u - (mode == TAPER_BOTH ? g * o : o) + a * lap);
}

/* Rows [0, rows) of a block (rows 1 or CF_ROWS), cells [k0, k1). `rows` and `mode` are constants
 * where it is called, so each use compiles to its own loop, vectorised along z; the rows are
 * written out, not looped, so that the compiler vectorises z and not them,
 * and loads each shared y neighbour once. */
static inline __attribute__((always_inline)) void block_middle(int rows, int mode,
                                                               const double *restrict u,
                                                               double *restrict out, ptrdiff_t sx,
                                                               ptrdiff_t sy, int k0, int k1,
                                                               double a, const taper_of *t) {
  const double *restrict gz = t->gz;
  const double g0 = t->gxy[0], g1 = t->gxy[1], g2 = t->gxy[2], g3 = t->gxy[3];
  double *o0 = out, *o1 = out + sy, *o2 = out + 2 * sy, *o3 = out + 3 * sy;
#pragma omp simd
  for (int k = k0; k < k1; k++) {
    double z = mode == TAPER_NONE ? 1 : gz[k];
    double l0 = lap_row(u, k, sx, sy, 0);
    if (rows == 1) {
      o0[k] = leap(u[k], o0[k], l0, a, mode == TAPER_NONE ? 1 : g0 * z, mode);
      continue;
    }
    double l1 = lap_row(u, k, sx, sy, 1), l2 = lap_row(u, k, sx, sy, 2),
           l3 = lap_row(u, k, sx, sy, 3);
    o0[k] = leap(u[k], o0[k], l0, a, mode == TAPER_NONE ? 1 : g0 * z, mode);
    o1[k] = leap(u[k + sy], o1[k], l1, a, mode == TAPER_NONE ? 1 : g1 * z, mode);
    o2[k] = leap(u[k + 2 * sy], o2[k], l2, a, mode == TAPER_NONE ? 1 : g2 * z, mode);
    o3[k] = leap(u[k + 3 * sy], o3[k], l3, a, mode == TAPER_NONE ? 1 : g3 * z, mode);
  }
}

/* block_middle with `rows` and `mode` made constants. */
static void middle(int rows, const double *u, double *out, ptrdiff_t sx, ptrdiff_t sy, int k0,
                   int k1, double a, const taper_of *t) {
  switch ((rows == CF_ROWS) * 3 + t->mode) {
    case TAPER_NONE:
      block_middle(1, TAPER_NONE, u, out, sx, sy, k0, k1, a, t);
      break;
    case TAPER_NEW:
      block_middle(1, TAPER_NEW, u, out, sx, sy, k0, k1, a, t);
      break;
    case TAPER_BOTH:
      block_middle(1, TAPER_BOTH, u, out, sx, sy, k0, k1, a, t);
      break;
    case 3 + TAPER_NONE:
      block_middle(CF_ROWS, TAPER_NONE, u, out, sx, sy, k0, k1, a, t);
      break;
    case 3 + TAPER_NEW:
      block_middle(CF_ROWS, TAPER_NEW, u, out, sx, sy, k0, k1, a, t);
      break;
    default:
      block_middle(CF_ROWS, TAPER_BOTH, u, out, sx, sy, k0, k1, a, t);
      break;
  }
}

/* Odd reflection past either end of the column at u: its ghost cell q + 1
 * outside is minus its cell q inside, what the update reads as its z
 * neighbours past the ends. */
static void fill_z_ghosts(double *u, int nz) {
  for (int q = 0; q < CF_RADIUS; q++) u[-1 - q] = -u[q], u[nz + q] = -u[nz - 1 - q];
}

/* The block of columns (i, j .. j + rows - 1), rows <= CF_ROWS: their z
 * ghosts, then every cell. */
static void block_step(const cf_wave *w, double *cur, double *prev, int i, int j, int rows,
                       double a) {
  const st_mesh *m = w->m;
  const ptrdiff_t sx = (ptrdiff_t)m->zs, sy = (ptrdiff_t)(m->ld * m->zs);
  double *u = cur + st_idx(m, i, j, 0), *out = prev + st_idx(m, i, j, 0);
  taper_of t = {.gz = w->damp_z,
                .mode = !w->damp_z  ? TAPER_NONE
                        : w->lagged ? TAPER_BOTH
                                    : TAPER_NEW};
  for (int r = 0; t.gz && r < rows; r++) t.gxy[r] = w->damp_x[i] * w->damp_y[j + r];
  for (int r = 0; r < rows; r++) fill_z_ghosts(u + r * sy, m->nz);
  if (rows == CF_ROWS) {
    middle(CF_ROWS, u, out, sx, sy, 0, m->nz, a, &t);
    return;
  }
  for (int r = 0; r < rows; r++) {
    taper_of tr = {.gz = t.gz, .gxy = {t.gxy[r]}, .mode = t.mode};
    middle(1, u + r * sy, out + r * sy, sx, sy, 0, m->nz, a, &tr);
  }
}

/* Sum over the column of y[k] lap(x)[k]. */
static double column_dot_lap(const st_mesh *m, const double *x, int i, int j,
                             const double *restrict y) {
  int nz = m->nz;
  const ptrdiff_t sx = (ptrdiff_t)m->zs, sy = (ptrdiff_t)(m->ld * m->zs);
  const double *u = x + st_idx(m, i, j, 0);
  double sum = 0;
  for (int k = 0; k < nz; k++) {
    bool end = k < CF_RADIUS || k >= nz - CF_RADIUS;
    sum += y[k] * (end ? lap_near_end(u, k, nz, sx, sy) : lap_row(u, k, sx, sy, 0));
  }
  return sum;
}

/* Columns [i0, i1) x [j0, j1) in strips of STRIP columns along x, each
 * strip swept along y a block of CF_ROWS rows at a time: the rows a block
 * reads (its own and 4 each way in y) stay in the second-level cache from
 * one row of blocks to the next. (Chunks along z, to keep a block's x
 * neighbours in the first-level cache too, were slower: short runs.) */
enum { STRIP = 64 };

static void step_columns(const cf_wave *w, double *cur, double *prev, double a, int i0, int i1,
                         int j0, int j1) {
  for (int s0 = i0; s0 < i1; s0 += STRIP) {
    int s1 = s0 + STRIP < i1 ? s0 + STRIP : i1;
    for (int j = j0; j < j1; j += CF_ROWS) {
      int rows = j1 - j < CF_ROWS ? j1 - j : CF_ROWS;
      for (int i = s0; i < s1; i++) block_step(w, cur, prev, i, j, rows, a);
    }
  }
}

void cf_wave_settle(cf_wave *w, double *x) {
  const st_mesh *m = w->m;
  if (!w->lagged) return;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      double gxy = w->damp_x[i] * w->damp_y[j], *u = x + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) u[k] *= gxy * w->damp_z[k];
    }
  w->lagged = false;
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
  w->lagged = w->damp_z != NULL; /* cur's taper: when it is next read as prev */
}

double cf_wave_dot_lap(const cf_wave *w, const double *x, const double *y) {
  const st_mesh *m = w->m;
  double sum = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) sum += column_dot_lap(m, x, i, j, y + st_idx(m, i, j, 0));
  return sum;
}
