/* The SC22 acoustic wave stencil (cf_wave.h): the 8th-order leapfrog step on vectors of cells
 * along z, the odd reflections at the free faces, and the optional absorbing sponge. */
#include "cf_wave.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cf_wave_parts.h"

/* Vectors of 8 cells along z for the energy's sums (column_dot_lap). */
typedef double cf_vec __attribute__((vector_size(CF_LANES * sizeof(double))));

static inline cf_vec vload(const double *p) {
  cf_vec v;
  memcpy(&v, p, sizeof v);
  return v;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

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
    t[i] = g < n ? taper(d, sponge) : 1;
  }
  return t;
}

int cf_wave_create(cf_wave *w, const st_mesh *m, wf_fabric *fab, int sponge, wf_status *st) {
  *w = (cf_wave){.m = m};
  cf_wave_use_kernel(w, "auto", st); /* cannot fail: generic runs anywhere */
  if (m->halo < CF_RADIUS || m->zh < CF_RADIUS ||
      m->zs < m->zh + round_up((size_t)m->nz, CF_LANES) + CF_RADIUS)
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
    /* Whole vectors: the cells past nz, which the update leaves alone, get 1. */
    w->damp_z = tapers(m->nz, 0, (int)round_up((size_t)m->nz, CF_LANES), sponge);
    if (!w->damp_x || !w->damp_y || !w->damp_z) {
      cf_wave_free(w);
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the sponge");
    }
  }
  return WF_OK;
}

/* Whether this CPU runs the variant `kernel` (cf_wave_parts.h). The x86
 * variants check each extension their target attribute names. */
static bool cpu_runs(const char *kernel) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (strcmp(kernel, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  if (strcmp(kernel, "avx2") == 0)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return strcmp(kernel, "generic") == 0;
}

bool cf_wave_kernel_runs(const char *kernel) {
  return strcmp(kernel, "auto") == 0 || cpu_runs(kernel);
}

int cf_wave_use_kernel(cf_wave *w, const char *kernel, wf_status *st) {
  static const struct {
    const char *name;
    cf_sweep_fn *fn;
  } variants[] = {
      {"avx512", cf_sweep_avx512}, {"avx2", cf_sweep_avx2}, {"generic", cf_sweep_generic}};
  bool any = strcmp(kernel, "auto") == 0;
  for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
    if (!any && strcmp(kernel, variants[v].name) != 0) continue;
    if (!cpu_runs(variants[v].name)) {
      if (any) continue;
      return wf_fail(st, WF_ERR_INPUT,
                     "the wave stencil's %s kernel does not run on this CPU or build (auto picks "
                     "the best that does)",
                     kernel);
    }
    w->sweep = variants[v].fn, w->kernel = variants[v].name;
    return WF_OK;
  }
  return wf_fail(st, WF_ERR_INPUT, "no wave stencil kernel '%s' (auto, avx512, avx2, generic)",
                 kernel);
}

void cf_wave_free(cf_wave *w) {
  wf_halo_free(&w->halo);
  free(w->damp_x), free(w->damp_y), free(w->damp_z);
  w->damp_x = w->damp_y = w->damp_z = NULL;
}

/* Odd reflection across the mesh's faces this rank holds: the ghost column
 * q + 1 outside is minus the column q inside. The update reflects each face
 * just before it reads the ghosts (reflect_row_x, reflect_rows_y), while they
 * are in cache; reflect_faces does all of them at once. */
static void negate_column(const st_mesh *m, double *x, int i_in, int j_in, int i_out, int j_out) {
  const double *in = x + st_idx(m, i_in, j_in, 0);
  double *out = x + st_idx(m, i_out, j_out, 0);
  for (int k = 0; k < m->nz; k++) out[k] = -in[k];
}

/* Row j's ghost columns past the mesh's -x face (if `lo`) and +x face (if
 * `hi`), where this rank holds them. */
static void reflect_row_x(const cf_wave *w, double *x, int j, bool lo, bool hi) {
  const st_mesh *m = w->m;
  for (int q = 0; q < CF_RADIUS; q++) {
    if (lo && w->edge[0]) negate_column(m, x, q, j, -1 - q, j);
    if (hi && w->edge[1]) negate_column(m, x, m->lnx - 1 - q, j, m->lnx + q, j);
  }
}

/* The ghost rows of columns [i0, i1) past the mesh's -y face (`face` 2) or
 * +y face (3), where this rank holds it. */
static void reflect_rows_y(const cf_wave *w, double *x, int i0, int i1, int face) {
  const st_mesh *m = w->m;
  if (!w->edge[face]) return;
  for (int q = 0; q < CF_RADIUS; q++) {
    int in = face == 2 ? q : m->lny - 1 - q, out = face == 2 ? -1 - q : m->lny + q;
    for (int i = i0; i < i1; i++) negate_column(m, x, i, in, i, out);
  }
}

static void reflect_faces(const cf_wave *w, double *x) {
  for (int j = 0; j < w->m->lny; j++) reflect_row_x(w, x, j, true, true);
  reflect_rows_y(w, x, 0, w->m->lnx, 2);
  reflect_rows_y(w, x, 0, w->m->lnx, 3);
}

/* A column's value k cells along z, reflected (odd) past either end. */
static inline double zval(const double *u, int k, int nz) {
  if (k < 0) return -u[-1 - k];
  if (k >= nz) return -u[2 * nz - 1 - k];
  return u[k];
}

/* The 25-point Laplacian (times h^2) of cell (or vector of cells) u from its
 * neighbours summed in pairs: x[d - 1] holds the two x neighbours d cells
 * away, y and z likewise. One sum tree for every cell, scalar or vector, so
 * that each gets the same rounding (the energy's: the step folds the
 * weights into its update, leap). Needs c0..c4 in scope. */
#define CF_LAP(u, x, y, z)                                                                        \
  (c0 * (u) + c1 * (x[0] + y[0] + z[0]) + c2 * (x[1] + y[1] + z[1]) + c3 * (x[2] + y[2] + z[2]) + \
   c4 * (x[3] + y[3] + z[3]))
#define CF_COEFFS \
  const double c0 = 3 * cf_c8[0], c1 = cf_c8[1], c2 = cf_c8[2], c3 = cf_c8[3], c4 = cf_c8[4]

/* Cell k of the column at u (sx, sy: the x and y strides), its z
 * neighbours past the ends reflected (odd). */
static double lap_cell(const double *u, int k, int nz, ptrdiff_t sx, ptrdiff_t sy) {
  CF_COEFFS;
  double x[CF_RADIUS], y[CF_RADIUS], z[CF_RADIUS];
  for (int d = 1; d <= CF_RADIUS; d++) {
    x[d - 1] = u[k - d * sx] + u[k + d * sx];
    y[d - 1] = u[k - d * sy] + u[k + d * sy];
    z[d - 1] = zval(u, k - d, nz) + zval(u, k + d, nz);
  }
  return CF_LAP(u[k], x, y, z);
}

/* The pencil at cell k of the pair of rows from j, of a strip's rows
 * [j0, j1), columns nz long. Where it reaches past either end of the
 * column (returned), its z neighbours there are the odd reflections of
 * cells inside, which it builds from cells it holds (pencil.zload, zneg,
 * zsrc): it reads no line past the ends, which nothing else would read, so
 * they would come from memory at each step. What it prefetches for the
 * next pencil (pencil.next) is the next pencil's line, or from the last
 * pencil the next pair's first when that is a whole pair (whose rows lie
 * inside the field's halo); else nothing new. */
static bool z_ends(cf_pencil *p, int k, int nz, int j, int j1) {
  p->k = k, p->nz = nz;
  p->next = k + CF_LANES < nz ? CF_LANES : j + 4 <= j1 ? 2 * p->sy - k : 0;
  if (k >= CF_RADIUS && k + CF_LANES + CF_RADIUS <= nz) return false; /* the middle */
  p->zload[0] = k > 0, p->zload[1] = k + CF_LANES < nz;
  const int lstart = p->zload[0] ? k - CF_RADIUS : k;
  for (int h = 0; h < 2; h++) {
    const int second = h == 0 || !p->zload[1] ? k : k + CF_RADIUS; /* C or H */
    p->zneg[h] = 0;
    for (int l = 0; l < CF_LANES; l++) {
      int g = k - CF_RADIUS + h * CF_LANES + l, src = g; /* the cell lane l holds */
      if (g < 0 || (g >= nz && g < nz + CF_RADIUS))
        src = g < 0 ? -1 - g : 2 * nz - 1 - g, p->zneg[h] |= 1u << l;
      else if (g >= nz)
        src = lstart; /* past what any cell reads: anything will do */
      p->zsrc[h][l] = src - lstart < CF_LANES ? src - lstart : CF_LANES + src - second;
    }
  }
  return true;
}


/* Whether the taper t is 1 at all n cells: there the sponge is exactly
 * nothing, and the update leaves it out. */
static bool untapered(const double *t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i] != 1) return false;
  return true;
}

/* Columns [i0, i1) x [j0, j1) in bands of rows along y, each band in
 * strips of STRIP columns along x, each strip a pair of rows at a time,
 * each pair a pencil of CF_LANES cells along z at a time.
 * - The rows a strip's pair reads (4 each way in y) stay in the
 *   second-level cache for the pairs after it (16 columns: the fastest of 8
 *   to 256 on an AMD EPYC).
 * - A strip reads the 4 columns either side of it, the next strips' own: in
 *   a band, the next strip reads them while they are still in the
 *   last-level cache (a band of a strip moves about BAND_BYTES). A band
 *   reads the 4 rows either side of it again. At 256^3 on the AMD EPYC
 *   (bands of 92 rows) 1.02x on one rank, 1.08x on two, which share that
 *   cache (bands of 32 to 128 rows: 0.93-1.04x and 1.03-1.15x).
 * - The ghosts past the mesh's own faces are reflected just before the
 *   first pair that reads them, in cache (a pass of their own over the
 *   faces cost 3-6% of a step at 256^3); past the columns' ends, in
 *   registers (z_ends). */
enum { STRIP = 16 };
static const size_t BAND_BYTES = (size_t)8 << 20;

/* The rows of a band: an even number, at least the stencil's reach. */
static int band_rows(const st_mesh *m) {
  /* a strip's row moves its columns of cur, with the 4 either side, and of prev */
  size_t row = (size_t)(2 * STRIP + 2 * CF_RADIUS) * m->zs * sizeof(double);
  size_t rows = BAND_BYTES / row / 2 * 2;
  return rows < 2 * CF_RADIUS ? 2 * CF_RADIUS : rows > (size_t)m->lny ? m->lny : (int)rows;
}

/* Columns [s0, s1) x [j0, j1): a strip of a band (step_columns). */
static void step_strip(const cf_wave *w, double *cur, double *prev, double a, int s0, int s1,
                       int j0, int j1) {
  const st_mesh *m = w->m;
  const int nz = m->nz;
  const int mode = !w->damp_z ? TAPER_NONE : w->lagged ? TAPER_BOTH : TAPER_NEW;
  /* Reflected wherever a pair reads them, in whichever call: on a rank
   * less than 8 cells across, the ring's pairs read past both faces. */
  if (j0 < CF_RADIUS) reflect_rows_y(w, cur, s0, s1, 2);
  bool y_hi = true; /* the +y ghosts still to reflect */
  for (int j = j0; j < j1; j += 2) {
    int rows = j1 - j < 2 ? 1 : 2;
    if (y_hi && j + rows - 1 + CF_RADIUS >= m->lny) {
      reflect_rows_y(w, cur, s0, s1, 3);
      y_hi = false;
    }
    for (int r = 0; r < rows; r++)
      reflect_row_x(w, cur, j + r, s0 < CF_RADIUS, s1 + CF_RADIUS > m->lnx);
    cf_pencil p = {.sx = (ptrdiff_t)m->zs,
                .sy = (ptrdiff_t)(m->ld * m->zs),
                .columns = s1 - s0,
                .b = {2 + a * 3 * cf_c8[0], a * cf_c8[1], a * cf_c8[2], a * cf_c8[3], a * cf_c8[4]},
                .gx = mode == TAPER_NONE ? NULL : w->damp_x + s0};
    for (int r = 0; mode != TAPER_NONE && r < rows; r++) p.gy[r] = w->damp_y[j + r];
    bool xy_one =
        mode == TAPER_NONE || (untapered(p.gx, s1 - s0) && untapered(w->damp_y + j, rows));
    for (int k = 0; k < nz; k += CF_LANES) {
      p.u = cur + st_idx(m, s0, j, k);
      p.out = prev + st_idx(m, s0, j, k);
      p.lanes = nz - k < CF_LANES ? nz - k : CF_LANES;
      p.gz = mode == TAPER_NONE ? NULL : w->damp_z + k;
      p.mode = xy_one && (mode == TAPER_NONE || untapered(p.gz, CF_LANES)) ? TAPER_NONE : mode;
      w->sweep(rows, z_ends(&p, k, nz, j, j1), &p);
    }
  }
}

static void step_columns(const cf_wave *w, double *cur, double *prev, double a, int i0, int i1,
                         int j0, int j1) {
  const int band = band_rows(w->m);
  for (int b0 = j0; b0 < j1; b0 += band) {
    int b1 = b0 + band < j1 ? b0 + band : j1;
    for (int s0 = i0; s0 < i1; s0 += STRIP)
      step_strip(w, cur, prev, a, s0, s0 + STRIP < i1 ? s0 + STRIP : i1, b0, b1);
  }
}

/* Sum over the column of y[k] lap(x)[k]: the cells whose z neighbours are
 * all inside the column a vector of them at a time, the ends cell by cell.
 * (At 256^3 on the AMD EPYC an energy, which also settles the taper and
 * sums the kinetic part, went from 0.135 to 0.069 s: about three steps.) */
static double column_dot_lap(const st_mesh *m, const double *x, int i, int j,
                             const double *restrict y) {
  CF_COEFFS;
  const ptrdiff_t sx = (ptrdiff_t)m->zs, sy = (ptrdiff_t)(m->ld * m->zs);
  const double *u = x + st_idx(m, i, j, 0);
  const int nz = m->nz;
  cf_vec acc = {0};
  int k = CF_RADIUS;
  for (; k + CF_LANES + CF_RADIUS <= nz; k += CF_LANES) {
    cf_vec xs[CF_RADIUS], ys[CF_RADIUS], zs[CF_RADIUS];
    for (int d = 1; d <= CF_RADIUS; d++) {
      xs[d - 1] = vload(u + k - d * sx) + vload(u + k + d * sx);
      ys[d - 1] = vload(u + k - d * sy) + vload(u + k + d * sy);
      zs[d - 1] = vload(u + k - d) + vload(u + k + d);
    }
    acc += vload(y + k) * CF_LAP(vload(u + k), xs, ys, zs);
  }
  double sum = 0;
  for (int l = 0; l < CF_LANES; l++) sum += acc[l];
  for (int c = 0; c < CF_RADIUS && c < nz; c++) sum += y[c] * lap_cell(u, c, nz, sx, sy);
  for (; k < nz; k++) sum += y[k] * lap_cell(u, k, nz, sx, sy);
  return sum;
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
  /* The halo and the reflected columns held x untapered: what reads x's
   * neighbours next (cf_wave_dot_lap) needs them tapered too. */
  wf_halo_exchange(&w->halo, x);
  reflect_faces(w, x);
}

void cf_wave_step(cf_wave *w, double *cur, double *prev, double a) {
  const st_mesh *m = w->m;
  const int r = CF_RADIUS, nx = m->lnx, ny = m->lny;
  /* The columns that read no halo, all but the r nearest a face that is
   * not the mesh's (the halo is not periodic: such a face has a
   * neighbour), go while the halo is on its way (on one rank, all of
   * them); the ring of the others after it. The mesh's own faces reflect
   * in step_columns: they read only this rank's columns. */
  const int x0 = w->edge[0] ? 0 : r, x1 = w->edge[1] ? nx : nx - r;
  const int y0 = w->edge[2] ? 0 : r, y1 = w->edge[3] ? ny : ny - r;
  const bool inner = x0 < x1 && y0 < y1;
  wf_halo_begin(&w->halo, cur);
  if (inner) step_columns(w, cur, prev, a, x0, x1, y0, y1);
  wf_halo_end(&w->halo, cur);
  if (inner) { /* the ring */
    step_columns(w, cur, prev, a, 0, nx, 0, y0);
    step_columns(w, cur, prev, a, 0, nx, y1, ny);
    step_columns(w, cur, prev, a, 0, x0, y0, y1);
    step_columns(w, cur, prev, a, x1, nx, y0, y1);
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
