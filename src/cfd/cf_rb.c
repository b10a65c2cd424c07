/* Rayleigh-Benard convection (cf_rb.h): the staggered fields, SSP-RK3 steps each projected to
 * zero divergence by a PCG or FFT Poisson solve, the side walls' ghosts, and the diagnostics
 * (Nusselt numbers, kinetic energy, heat budget). */
#include "cf_rb.h"

#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_workload.h"

/* Neighbour strides in a field: x, y (a stored row of columns). */
typedef struct strides {
  ptrdiff_t x, y;
} strides;

static strides strides_of(const st_mesh *m) { return (strides){m->nz, (ptrdiff_t)m->ld * m->nz}; }

/* ---- the FFT solve ---- */

/* The plan of the even-extended box, nx x ny x 2 nz; its first stage must
 * be laid out as the mesh (both are the union of the rank's PE bricks). */
static int fft_create(cf_rb *rb, wf_fabric *fab, wf_status *st) {
  const st_mesh *m = rb->m;
  const int n[3] = {m->nx, m->ny, 2 * m->nz};
  const ff_opts o = {
      .prec = FF_DOUBLE, .dims = 3, .fftw_flags = FFTW_MEASURE, .wafer_prec = WF_FP32};
  if (ff_plan_create(&rb->fft, fab, n, &o, st) != WF_OK) return st->code;
  const ff_box *b = ff_in_box(&rb->fft);
  int same = b->x0 == m->x0 && b->nx == m->lnx && b->y0 == m->y0 && b->ny == m->lny;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, fab->dc->comm);
  if (!same)
    return wf_fail(st, WF_ERR_RUNTIME, "the FFT's rank boxes are not the mesh's rank blocks");
  return WF_OK;
}

/* The 7-point operator's eigenvalue (times h^2) for wavenumber k of n cells. */
static double symbol(int k, int n) { return 2 - 2 * cos(2 * ST_PI * k / n); }

/* -h^2 lap(phi) = b exactly: b's column even-extended to 2 nz cells,
 * transformed, divided by the operator's eigenvalues (the constant mode,
 * the null space, set to 0), transformed back; phi the first nz cells. */
static int fft_solve(cf_rb *rb, const double *b, double *phi, wf_status *st) {
  const st_mesh *m = rb->m;
  ff_plan *p = &rb->fft;
  const int nz = m->nz, n2 = 2 * nz;
  double(*in)[2] = ff_in(p);
  const ff_box *bi = ff_in_box(p);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const double *col = b + st_idx(m, i, j, 0);
      double(*c)[2] = in + ff_index(bi, i, j, 0);
      for (int k = 0; k < nz; k++) {
        c[k][0] = c[n2 - 1 - k][0] = col[k];
        c[k][1] = c[n2 - 1 - k][1] = 0;
      }
    }
  if (ff_execute(p, -1, st) != WF_OK) return st->code;
  double(*out)[2] = ff_out(p);
  const ff_box *bo = ff_out_box(p);
  const double cells = (double)m->nx * m->ny * n2;
  for (int y = 0; y < bo->ny; y++) /* the box's storage order, [y][x][z] */
    for (int x = 0; x < bo->nx; x++)
      for (int z = 0; z < bo->nz; z++) {
        double lam = symbol(bo->x0 + x, m->nx) + symbol(bo->y0 + y, m->ny) + symbol(bo->z0 + z, n2);
        double scale = lam > 1e-300 ? 1 / (lam * cells) : 0;
        double *v = out[ff_index(bo, x, y, z)];
        v[0] *= scale, v[1] *= scale;
      }
  if (ff_execute(p, +1, st) != WF_OK) return st->code;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      double *col = phi + st_idx(m, i, j, 0);
      const double(*c)[2] = in + ff_index(bi, i, j, 0);
      for (int k = 0; k < nz; k++) col[k] = c[k][0];
    }
  return WF_OK;
}

int cf_rb_create(cf_rb *rb, const st_mesh *m, wf_fabric *fab, const cf_rb_params *p,
                 wf_status *st) {
  *rb = (cf_rb){.m = m,
                .ra = p->ra,
                .pr = p->pr,
                .h = 1.0 / m->nz,
                .dims = m->ny > 1 ? 3 : 2,
                .side_walls = p->side_walls,
                .west = p->side_walls && m->x0 == 0,
                .east = p->side_walls && m->x0 + m->lnx == m->nx,
                .solver = p->solver,
                .opts = p->pcg};
  if (p->solver == CF_POISSON_FFT && p->side_walls)
    return wf_fail(st, WF_ERR_INPUT,
                   "the FFT pressure solve needs x periodic: between side walls use PCG");
  if (st_mesh_halo_create(&rb->halo, fab, m, sizeof(double), 1, true, !p->side_walls, true, st) !=
      WF_OK)
    return st->code;
  const bool periodic[3] = {!p->side_walls, true, false};
  const st_coef_spec laplacian = {
      .kind = "smooth", .contrast = 1, .neumann = {p->side_walls, false, true}};
  if (p->solver == CF_POISSON_PCG &&
      st_op_create(&rb->poisson, m, fab, periodic, &laplacian, st) != WF_OK)
    return st->code;
  if (p->solver == CF_POISSON_FFT && fft_create(rb, fab, st) != WF_OK) return st->code;
  bool ok = true;
  for (int a = 0; a < CF_NFIELDS; a++) {
    ok &= (rb->f[a] = st_field_alloc(m)) != NULL;
    ok &= (rb->f0[a] = st_field_alloc(m)) != NULL;
    ok &= (rb->rhs[a] = st_field_alloc(m)) != NULL;
  }
  for (int k = 0; k < 3; k++) ok &= (rb->phi[k] = st_field_alloc(m)) != NULL;
  ok &= (rb->b = st_field_alloc(m)) != NULL;
  if (!ok) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the convection fields");
  return WF_OK;
}

void cf_rb_free(cf_rb *rb) {
  wf_halo_free(&rb->halo);
  if (rb->solver == CF_POISSON_PCG)
    st_op_free(&rb->poisson);
  else
    ff_plan_free(&rb->fft);
  for (int a = 0; a < CF_NFIELDS; a++) free(rb->f[a]), free(rb->f0[a]), free(rb->rhs[a]);
  for (int k = 0; k < 3; k++) free(rb->phi[k]);
  free(rb->b);
}

void cf_rb_init(cf_rb *rb, double amplitude) {
  const st_mesh *m = rb->m;
  for (int a = 0; a < CF_NFIELDS; a++) memset(rb->f[a], 0, m->n_stored * sizeof(double));
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      double x = (rb->side_walls ? 1 : 2) * ST_PI * (m->x0 + i + 0.5) / m->nx;
      double *t = rb->f[CF_T] + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) {
        double z = (k + 0.5) * rb->h;
        t[k] = 1 - z + amplitude * cos(x) * sin(ST_PI * z);
      }
    }
}

/* ---- halos and walls ---- */

/* What a side wall does to a field's ghost column: the wall's own face
 * (u: 0), odd reflection (no slip: v, w), even reflection (no flux: T, phi). */
typedef enum { GHOST_WALL_FACE, GHOST_ODD, GHOST_EVEN } ghost_kind;

static ghost_kind ghost_of(int field) {
  return field == CF_U ? GHOST_WALL_FACE : field == CF_T ? GHOST_EVEN : GHOST_ODD;
}

/* Exchange a field's halo, then fill the ghost columns beyond the side
 * walls this rank holds (every row, the corners' too). */
static void exchange(cf_rb *rb, double *f, ghost_kind kind) {
  const st_mesh *m = rb->m;
  wf_halo_exchange(&rb->halo, f);
  for (int side = 0; side < 2; side++) {
    if (!(side ? rb->east : rb->west)) continue;
    int ghost = side ? m->lnx : -1, inner = side ? m->lnx - 1 : 0;
    for (int j = -1; j <= m->lny; j++) {
      double *g = f + st_idx(m, ghost, j, 0);
      const double *in = f + st_idx(m, inner, j, 0);
      for (int k = 0; k < m->nz; k++)
        g[k] = kind == GHOST_WALL_FACE ? 0 : kind == GHOST_ODD ? -in[k] : in[k];
    }
  }
}

static void exchange_field(cf_rb *rb, int field) { exchange(rb, rb->f[field], ghost_of(field)); }

/* Whether owned column i's low x face is the west wall (u = 0 there). */
static bool on_west_wall(const cf_rb *rb, int i) { return rb->west && i == 0; }

/* ---- the right-hand sides ---- */

/* Horizontal momentum at a cell's low face along its own axis, one column:
 * the x equation for u (own = u, other = v, `along` the x stride, `across`
 * the y stride) and, mirrored, the y equation for v. */
static void rhs_horizontal(const cf_rb *rb, size_t c, int own, int other, ptrdiff_t along,
                           ptrdiff_t across, double *restrict out) {
  const double *A = rb->f[own] + c, *B = rb->f[other] + c, *W = rb->f[CF_W] + c;
  const double ih = 1 / rb->h, ih2 = ih * ih, pr = rb->pr;
  const int nz = rb->m->nz;
  for (int k = 0; k < nz; k++) {
    double ahi = A[k] + A[k + along], alo = A[k - along] + A[k];
    double bhi = (B[k + across] + B[k + across - along]) * (A[k] + A[k + across]);
    double blo = (B[k] + B[k - along]) * (A[k - across] + A[k]);
    double wt = k + 1 < nz ? (W[k + 1] + W[k + 1 - along]) * (A[k] + A[k + 1]) : 0;
    double wb = k > 0 ? (W[k] + W[k - along]) * (A[k - 1] + A[k]) : 0;
    double adv = 0.25 * (ahi * ahi - alo * alo + bhi - blo + wt - wb) * ih;
    double up = k + 1 < nz ? A[k + 1] : -A[k], down = k > 0 ? A[k - 1] : -A[k]; /* no slip */
    double lap =
        (A[k + along] + A[k - along] + A[k + across] + A[k - across] + up + down - 6 * A[k]) * ih2;
    out[k] = pr * lap - adv;
  }
}

/* Momentum in z at the low z face; the bottom wall's face (k = 0) stays 0. */
static void rhs_w(const cf_rb *rb, size_t c, double *restrict out) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  const double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c,
               *T = rb->f[CF_T] + c;
  const double ih = 1 / rb->h, ih2 = ih * ih, pr = rb->pr, buoyancy = rb->ra * rb->pr;
  const int nz = m->nz;
  out[0] = 0;
  for (int k = 1; k < nz; k++) {
    double above = k + 1 < nz ? W[k + 1] : 0; /* the top wall's face */
    double wt = W[k] + above, wb = W[k - 1] + W[k];
    double ue = (U[k + s.x] + U[k + s.x - 1]) * (W[k] + W[k + s.x]);
    double uw = (U[k] + U[k - 1]) * (W[k - s.x] + W[k]);
    double vn = (V[k + s.y] + V[k + s.y - 1]) * (W[k] + W[k + s.y]);
    double vs = (V[k] + V[k - 1]) * (W[k - s.y] + W[k]);
    double adv = 0.25 * (wt * wt - wb * wb + ue - uw + vn - vs) * ih;
    double lap =
        (W[k + s.x] + W[k - s.x] + W[k + s.y] + W[k - s.y] + above + W[k - 1] - 6 * W[k]) * ih2;
    out[k] = pr * lap - adv + buoyancy * 0.5 * (T[k] + T[k - 1]);
  }
}

/* Temperature at the centre: fluxes through the six faces; the walls are
 * held at 1 (bottom) and 0 (top) half a cell beyond the last centre. */
static void rhs_t(const cf_rb *rb, size_t c, double *restrict out) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  const double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c,
               *T = rb->f[CF_T] + c;
  const double ih = 1 / rb->h, ih2 = ih * ih;
  const int nz = m->nz;
  for (int k = 0; k < nz; k++) {
    double fe = U[k + s.x] * (T[k] + T[k + s.x]), fw = U[k] * (T[k - s.x] + T[k]);
    double fn = V[k + s.y] * (T[k] + T[k + s.y]), fs = V[k] * (T[k - s.y] + T[k]);
    double ft = k + 1 < nz ? W[k + 1] * (T[k] + T[k + 1]) : 0;
    double fb = k > 0 ? W[k] * (T[k - 1] + T[k]) : 0;
    double up = k + 1 < nz ? T[k + 1] : -T[k], down = k > 0 ? T[k - 1] : 2 - T[k];
    double lap = (T[k + s.x] + T[k - s.x] + T[k + s.y] + T[k - s.y] + up + down - 6 * T[k]) * ih2;
    out[k] = lap - 0.5 * (fe - fw + fn - fs + ft - fb) * ih;
  }
}

static void exchange_state(cf_rb *rb) {
  for (int a = 0; a < CF_NFIELDS; a++) exchange_field(rb, a);
}

void cf_rb_rhs(cf_rb *rb) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  exchange_state(rb);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      if (on_west_wall(rb, i))
        memset(rb->rhs[CF_U] + c, 0, (size_t)m->nz * sizeof(double));
      else
        rhs_horizontal(rb, c, CF_U, CF_V, s.x, s.y, rb->rhs[CF_U] + c);
      if (rb->dims == 3) rhs_horizontal(rb, c, CF_V, CF_U, s.y, s.x, rb->rhs[CF_V] + c);
      rhs_w(rb, c, rb->rhs[CF_W] + c);
      rhs_t(rb, c, rb->rhs[CF_T] + c);
    }
}

/* ---- the projection ---- */

/* div u of the owned cells into out (u's halo current). */
static void divergence(const cf_rb *rb, double *out) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  const double ih = 1 / rb->h;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      const double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c;
      double *d = out + c;
      for (int k = 0; k < m->nz; k++) {
        double above = k + 1 < m->nz ? W[k + 1] : 0;
        d[k] = (U[k + s.x] - U[k] + V[k + s.y] - V[k] + above - W[k]) * ih;
      }
    }
}

static double norm2(const cf_rb *rb, const double *x) {
  double sum = st_dot_local(rb->m, x, x);
  wf_fabric_allreduce(rb->halo.fab, &sum, 1, WF_SUM);
  return sqrt(sum);
}

/* The projection's right-hand side, -h^2 div u, into b (u's halo exchanged
 * first). */
static void poisson_rhs(cf_rb *rb, double *b) {
  const st_mesh *m = rb->m;
  exchange_field(rb, CF_U);
  exchange_field(rb, CF_V);
  divergence(rb, b);
  const double h2 = rb->h * rb->h;
  for (int j = 0; j < m->lny; j++)
    for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++) b[c] *= -h2;
}

/* Make the velocity divergence-free: -h^2 lap(phi) = -h^2 div u, then
 * u -= grad(phi). Each stage keeps its phi: the next step's solve starts
 * from it (a stage's phi is its own fraction of dt times the pressure).
 * The walls' faces carry no correction, as the operator's zero flux there
 * says. */
static int project(cf_rb *rb, int stage, wf_status *st) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  poisson_rhs(rb, rb->b);
  const double ih = 1 / rb->h;
  double before = norm2(rb, rb->b) * ih * ih; /* ||div u|| */
  st_result res = {0};
  double *phi = rb->phi[stage];
  int rc;
  if (rb->solver == CF_POISSON_FFT) {
    double t0 = MPI_Wtime();
    rc = fft_solve(rb, rb->b, phi, st);
    res.reason = ST_CONVERGED_RTOL; /* exact */
    res.seconds = MPI_Wtime() - t0;
  } else {
    rc = st_solve(&rb->poisson, ST_PCG, rb->b, phi, &rb->opts, &res, st);
  }
  rb->solves++;
  rb->poisson_its += res.its;
  rb->poisson_seconds += res.seconds;
  if (rc == WF_OK && !st_reason_converged(res.reason)) {
    rb->solve_failed = true;
    snprintf(rb->solve_reason, sizeof rb->solve_reason, "%s after %d iterations",
             st_reason_name(res.reason), res.its);
    rc = wf_fail(st, WF_ERR_RUNTIME, "the pressure's Poisson solve did not converge: %s",
                 rb->solve_reason);
  }
  st_result_free(&res);
  if (rc != WF_OK) return rc;
  exchange(rb, phi, GHOST_EVEN);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      const double *p = phi + c;
      double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c;
      bool wall = on_west_wall(rb, i);
      for (int k = 0; k < m->nz; k++) {
        if (!wall) U[k] -= (p[k] - p[k - s.x]) * ih;
        if (rb->dims == 3) V[k] -= (p[k] - p[k - s.y]) * ih;
        if (k > 0) W[k] -= (p[k] - p[k - 1]) * ih;
      }
    }
  exchange_field(rb, CF_U);
  exchange_field(rb, CF_V);
  divergence(rb, rb->b);
  double after = norm2(rb, rb->b);
  if (before > 0) rb->div_ratio = fmax(rb->div_ratio, after / before);
  return WF_OK;
}

/* ---- the step ---- */

/* f = a f0 + b (f + dt rhs) on the owned cells, every field. */
static void combine(cf_rb *rb, double a, double b, double dt) {
  const st_mesh *m = rb->m;
  for (int f = 0; f < CF_NFIELDS; f++) {
    if (f == CF_V && rb->dims == 2) continue;
    double *restrict x = rb->f[f];
    const double *restrict x0 = rb->f0[f], *restrict r = rb->rhs[f];
    for (int j = 0; j < m->lny; j++)
      for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++)
        x[c] = a * x0[c] + b * (x[c] + dt * r[c]);
  }
}

int cf_rb_step(cf_rb *rb, double dt, wf_status *st) {
  for (int f = 0; f < CF_NFIELDS; f++)
    memcpy(rb->f0[f], rb->f[f], rb->m->n_stored * sizeof(double));
  /* SSP-RK3: q1 = q + dt L(q); q2 = 3/4 q + 1/4 (q1 + dt L(q1));
   * q3 = 1/3 q + 2/3 (q2 + dt L(q2)); each stage projected. */
  static const double stage[3][2] = {{0, 1}, {0.75, 0.25}, {1.0 / 3, 2.0 / 3}};
  for (int s = 0; s < 3; s++) {
    cf_rb_rhs(rb);
    combine(rb, stage[s][0], stage[s][1], dt);
    if (project(rb, s, st) != WF_OK) return st->code;
  }
  return WF_OK;
}

void cf_rb_sample_rhs(cf_rb *rb, double dt, double *b) {
  const st_mesh *m = rb->m;
  for (int f = 0; f < CF_NFIELDS; f++) memcpy(rb->f0[f], rb->f[f], m->n_stored * sizeof(double));
  cf_rb_rhs(rb);
  combine(rb, 0, 1, dt);
  poisson_rhs(rb, b);
  for (int f = 0; f < CF_NFIELDS; f++) memcpy(rb->f[f], rb->f0[f], m->n_stored * sizeof(double));
}

int cf_rb_poisson_solve(cf_rb *rb, const double *b, double *phi, int *its, wf_status *st) {
  *its = 0;
  if (rb->solver == CF_POISSON_FFT) return fft_solve(rb, b, phi, st);
  st_opts cold = rb->opts;
  cold.nonzero_guess = false;
  st_result res = {0};
  int rc = st_solve(&rb->poisson, ST_PCG, b, phi, &cold, &res, st);
  *its = res.its;
  if (rc == WF_OK && !st_reason_converged(res.reason))
    rc = wf_fail(st, WF_ERR_RUNTIME, "the Poisson solve did not converge: %s",
                 st_reason_name(res.reason));
  st_result_free(&res);
  return rc;
}

double cf_rb_heat_budget(cf_rb *rb) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  const double ih = 1 / rb->h, ih2 = ih * ih, u = 0x1p-53;
  const int nz = m->nz;
  cf_rb_rhs(rb); /* as a step computes it, halos and all */
  double sum[4] = {0, 0, 0, 0}; /* sum rhs_T, the walls' flux, sum |rhs_T|, rounding scale */
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      const double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c,
                   *T = rb->f[CF_T] + c, *R = rb->rhs[CF_T] + c;
      /* walls at 1 (bottom) and 0 (top), half a cell beyond the end centres */
      sum[1] += 2 * (1 - T[0]) * ih2 + 2 * (0 - T[nz - 1]) * ih2;
      for (int k = 0; k < nz; k++) {
        sum[0] += R[k], sum[2] += fabs(R[k]);
        double up = k + 1 < nz ? T[k + 1] : T[k], down = k > 0 ? T[k - 1] : 2 + fabs(T[k]);
        double lap = fabs(T[k + s.x]) + fabs(T[k - s.x]) + fabs(T[k + s.y]) + fabs(T[k - s.y]) +
                     fabs(up) + fabs(down) + 6 * fabs(T[k]);
        double adv = fabs(U[k + s.x]) * (fabs(T[k]) + fabs(T[k + s.x])) +
                     fabs(U[k]) * (fabs(T[k - s.x]) + fabs(T[k])) +
                     fabs(V[k + s.y]) * (fabs(T[k]) + fabs(T[k + s.y])) +
                     fabs(V[k]) * (fabs(T[k - s.y]) + fabs(T[k])) +
                     (k + 1 < nz ? fabs(W[k + 1]) * (fabs(T[k]) + fabs(T[k + 1])) : 0) +
                     (k > 0 ? fabs(W[k]) * (fabs(T[k - 1]) + fabs(T[k])) : 0);
        sum[3] += lap * ih2 + 0.5 * adv * ih;
      }
    }
  MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, rb->halo.fab->dc->comm);
  double cells = (double)m->nx * m->ny * nz, g = wf_gamma(16, u);
  double allowed = g * sum[3] + cells * u * (sum[2] + fabs(sum[1])) + 1e-300;
  return fabs(sum[0] - sum[1]) / allowed;
}

/* max |u| + |v| + |w| over this rank's faces. */
static double local_max_speed(const cf_rb *rb) {
  const st_mesh *m = rb->m;
  double most = 0;
  for (int j = 0; j < m->lny; j++)
    for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++)
      most = fmax(most, fabs(rb->f[CF_U][c]) + fabs(rb->f[CF_V][c]) + fabs(rb->f[CF_W][c]));
  return most;
}

double cf_rb_dt_limit(cf_rb *rb) {
  double speed = local_max_speed(rb);
  wf_fabric_allreduce(rb->halo.fab, &speed, 1, WF_MAX);
  double diff = 2.51 * rb->h * rb->h / (4 * rb->dims * fmax(rb->pr, 1.0));
  double adv = speed > 0 ? sqrt(3.0) * rb->h / speed : INFINITY;
  return 1 / (1 / diff + 1 / adv);
}

/* ---- diagnostics ---- */

cf_rb_stats cf_rb_measure(cf_rb *rb) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  exchange_field(rb, CF_U);
  exchange_field(rb, CF_V);
  const int nz = m->nz;
  const double ih = 1 / rb->h;
  /* sums: bottom gradient, top gradient, w T, kinetic, non-finite; maxima: div, speed */
  double sum[5] = {0}, most[2] = {0};
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      const double *U = rb->f[CF_U] + c, *V = rb->f[CF_V] + c, *W = rb->f[CF_W] + c,
                   *T = rb->f[CF_T] + c;
      /* -dT/dz at the walls, one-sided through the wall and two centres
       * (second order): (8 T_wall - 9 T_0 + T_1) / 3h at the bottom. */
      double t1 = nz > 1 ? T[1] : 2 - T[0], tn = nz > 1 ? T[nz - 2] : -T[0];
      sum[0] += (8 - 9 * T[0] + t1) / 3 * ih;
      sum[1] += (9 * T[nz - 1] - tn) / 3 * ih;
      for (int k = 0; k < nz; k++) {
        if (k > 0) sum[2] += W[k] * 0.5 * (T[k] + T[k - 1]);
        double uc = 0.5 * (U[k] + U[k + s.x]), vc = 0.5 * (V[k] + V[k + s.y]);
        double wc = 0.5 * (W[k] + (k + 1 < nz ? W[k + 1] : 0));
        sum[3] += 0.5 * (uc * uc + vc * vc + wc * wc);
        double div = (U[k + s.x] - U[k] + V[k + s.y] - V[k] + (k + 1 < nz ? W[k + 1] : 0) - W[k]);
        most[0] = fmax(most[0], fabs(div) * ih);
        sum[4] += !isfinite(U[k] + V[k] + W[k] + T[k]);
      }
    }
  most[1] = local_max_speed(rb);
  wf_fabric_allreduce(rb->halo.fab, sum, 5, WF_SUM);
  wf_fabric_allreduce(rb->halo.fab, most, 2, WF_MAX);
  double columns = (double)m->nx * m->ny, cells = columns * nz;
  return (cf_rb_stats){.nu_bottom = sum[0] / columns,
                       .nu_top = sum[1] / columns,
                       .nu_volume = 1 + sum[2] / cells,
                       .kinetic = sum[3] / cells,
                       .max_div = most[0],
                       .max_speed = most[1],
                       .finite = sum[4] == 0};
}

void cf_rb_centred(cf_rb *rb, int component, double *out) {
  const st_mesh *m = rb->m;
  const strides s = strides_of(m);
  const double *f = rb->f[component];
  exchange_field(rb, component);
  ptrdiff_t next = component == CF_U ? s.x : component == CF_V ? s.y : 1;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      size_t c = st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) {
        double hi = component == CF_W && k + 1 == m->nz ? 0 : f[c + k + next];
        out[c + k] = 0.5 * (f[c + k] + hi);
      }
    }
}
