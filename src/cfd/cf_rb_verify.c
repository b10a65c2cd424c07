/* The convection operator against the equations it discretises (cf_rb.h):
 * a method of manufactured solutions. A smooth state that meets the walls'
 * conditions exactly is put on the run's own mesh (its ranks, halos and
 * walls), the right-hand sides are computed as a step computes them, and
 * each is compared with the equation's right-hand side differentiated by
 * hand at the same point. Second-order central differences leave at most
 * the Taylor remainders bounded below; a first-order slip (a value taken
 * half a cell off, an average left out) leaves O(h) and fails.
 *
 * Why here and not only in the growth rate: the layer is up-down symmetric,
 * and an error that is odd about the mid-plane (buoyancy taken from the cell
 * above the face instead of the two around it) changes the growth rate and
 * the Nusselt numbers at second order only (docs/cfd.md gives the figures). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cf_rb.h"
#include "wf_mpi.h"

/* A function of one variable at a point: value, first and second derivative. */
typedef struct factor {
  double v, d, dd;
} factor;

static factor sin_of(double k, double arg) { return (factor){sin(arg), k * cos(arg), -k * k * sin(arg)}; }
static factor cos_of(double k, double arg) { return (factor){cos(arg), -k * sin(arg), -k * k * cos(arg)}; }

/* A field at a point: value, gradient, Laplacian. */
typedef struct jet {
  double f, fx, fy, fz, lap;
} jet;

static jet product(double a, factor x, factor y, factor z) {
  return (jet){a * x.v * y.v * z.v, a * x.d * y.v * z.v, a * x.v * y.d * z.v, a * x.v * y.v * z.d,
               a * (x.dd * y.v * z.v + x.v * y.dd * z.v + x.v * y.v * z.dd)};
}

/* The manufactured state: wavenumbers k[3], phases (x's is 0 between side
 * walls, where u, v, w must vanish and T be even), amplitudes of u, v, w
 * and of T's part beside the conduction profile 1 - z.
 *   u = au sin(kx x + px) cos(ky y + py) sin(kz z)
 *   v = av sin(kx x + px) sin(ky y + py) sin(kz z)     (0 in 2D)
 *   w = aw sin(kx x + px) cos(ky y + py) sin(kz z)
 *   T = 1 - z + aT cos(kx x + px) cos(ky y + py) sin(kz z)
 * With kz = pi and kx a multiple of pi / Lx, every wall condition the
 * ghosts impose holds exactly (u, v, w odd about the walls, T - (1 - z) odd
 * about the top and bottom and even about side walls). */
typedef struct manufactured {
  double k[3], px, py, amp[CF_NFIELDS];
} manufactured;

static jet field(const manufactured *q, int which, double x, double y, double z) {
  double ax = q->k[0] * x + q->px, ay = q->k[1] * y + q->py;
  factor sz = sin_of(q->k[2], q->k[2] * z);
  switch (which) {
  case CF_U: return product(q->amp[CF_U], sin_of(q->k[0], ax), cos_of(q->k[1], ay), sz);
  case CF_V: return product(q->amp[CF_V], sin_of(q->k[0], ax), sin_of(q->k[1], ay), sz);
  case CF_W: return product(q->amp[CF_W], sin_of(q->k[0], ax), cos_of(q->k[1], ay), sz);
  default: {
    jet t = product(q->amp[CF_T], cos_of(q->k[0], ax), cos_of(q->k[1], ay), sz);
    t.f += 1 - z, t.fz -= 1;
    return t;
  }
  }
}

/* The equations' right-hand sides (advection in divergence form), exact. */
static double exact_rhs(const manufactured *q, double ra, double pr, int eq, double x, double y,
                        double z) {
  jet u = field(q, CF_U, x, y, z), v = field(q, CF_V, x, y, z), w = field(q, CF_W, x, y, z);
  jet t = field(q, CF_T, x, y, z);
  double div = u.fx + v.fy + w.fz; /* not 0: the operator is checked, not the flow */
  switch (eq) {
  case CF_U: return pr * u.lap - (u.f * div + u.f * u.fx + v.f * u.fy + w.f * u.fz);
  case CF_V: return pr * v.lap - (v.f * div + u.f * v.fx + v.f * v.fy + w.f * v.fz);
  case CF_W: return pr * w.lap - (w.f * div + u.f * w.fx + v.f * w.fy + w.f * w.fz) + ra * pr * t.f;
  default: return t.lap - (t.f * div + u.f * t.fx + v.f * t.fy + w.f * t.fz);
  }
}

/* Where each equation lives on the staggered grid, in units of h: u at the
 * low x face, v at the low y face, w at the low z face, T at the centre. */
static void point_of(int eq, int gi, int gj, int k, double h, double p[3]) {
  p[0] = (gi + (eq == CF_U ? 0 : 0.5)) * h;
  p[1] = (gj + (eq == CF_V ? 0 : 0.5)) * h;
  p[2] = (k + (eq == CF_W ? 0 : 0.5)) * h;
}

/* What second-order truncation and round-off leave, each term bounded by its Taylor
 * remainder, with every derivative of order n of a field of amplitude a
 * bounded by a K^n (K an axis's wavenumber; T's bound 1 + aT covers its
 * profile, whose slope 1 is below K_z = pi):
 *   a second difference along an axis: h^2 / 12 a K^4;
 *   d/dx of a product of two-point means, ((P Q)_+ - (P Q)_-) / h:
 *   h^2 aP aQ Kx (Kx^2 / 3 + Kmax^2 / 2) (the difference's h^2/24 times the
 *   product's third derivative, the two means' h^2 / 8 each, differenced);
 *   the buoyancy's mean of T over the face's two cells: Ra Pr h^2 / 8 aT Kz^2.
 * Allowed: twice the sum (leading terms), plus the round-off of the sums
 * both sides make: 32 eps times the magnitude of their terms (a second
 * difference's 12 a / h^2, a flux difference's 4 aP aQ / h, Ra Pr T): at
 * Ra 1e12 one ulp of the buoyancy outweighs the truncation. */
static double allowed_of(const manufactured *q, double ra, double pr, int dims, int eq, double h) {
  double kmax = fmax(q->k[0], fmax(q->k[1], q->k[2])), h2 = h * h;
  double a_t = 1 + q->amp[CF_T], a_eq = eq == CF_T ? a_t : q->amp[eq];
  double lap = 0, adv = 0, magnitude = 0;
  for (int axis = 0; axis < 3; axis++) {
    if (axis == 1 && dims == 2) continue;
    double k = q->k[axis];
    lap += h2 / 12 * q->amp[eq] * k * k * k * k; /* T's profile has no 4th derivative */
    double carrier = q->amp[axis == 0 ? CF_U : axis == 1 ? CF_V : CF_W];
    adv += h2 * carrier * a_eq * k * (k * k / 3 + kmax * kmax / 2);
    magnitude += 4 * carrier * a_eq / h;
  }
  double nu = eq == CF_T ? 1 : pr;
  double buoyancy = eq == CF_W ? ra * pr * h2 / 8 * q->amp[CF_T] * q->k[2] * q->k[2] : 0;
  magnitude += nu * 12 * a_eq / h2 + (eq == CF_W ? ra * pr * a_t : 0);
  return 2 * (nu * lap + adv + buoyancy) + 32 * DBL_EPSILON * magnitude;
}

/* Put the manufactured state on the mesh. */
static void manufacture(cf_rb *rb, const manufactured *q) {
  const st_mesh *m = rb->m;
  for (int a = 0; a < CF_NFIELDS; a++) memset(rb->f[a], 0, m->n_stored * sizeof(double));
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++)
        for (int a = 0; a < CF_NFIELDS; a++) {
          if (a == CF_V && rb->dims == 2) continue;
          double p[3];
          point_of(a, m->x0 + i, m->y0 + j, k, rb->h, p);
          rb->f[a][st_idx(m, i, j, k)] = field(q, a, p[0], p[1], p[2]).f;
        }
}

/* The worst |discrete - exact| of each equation over the owned points (the
 * faces on a wall, which the step holds at 0, left out), over all ranks. */
static void compare(cf_rb *rb, const manufactured *q, double error[CF_NFIELDS]) {
  const st_mesh *m = rb->m;
  for (int a = 0; a < CF_NFIELDS; a++) error[a] = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++)
        for (int a = 0; a < CF_NFIELDS; a++) {
          if ((a == CF_V && rb->dims == 2) || (a == CF_W && k == 0) ||
              (a == CF_U && rb->side_walls && m->x0 + i == 0))
            continue;
          double p[3];
          point_of(a, m->x0 + i, m->y0 + j, k, rb->h, p);
          double d = rb->rhs[a][st_idx(m, i, j, k)] - exact_rhs(q, rb->ra, rb->pr, a, p[0], p[1], p[2]);
          error[a] = fmax(error[a], isfinite(d) ? fabs(d) : INFINITY);
        }
  wf_allreduce_inplace(error, CF_NFIELDS, MPI_DOUBLE, MPI_MAX, rb->halo.fab->dc->comm);
}

int cf_rb_check_truncation(cf_rb *rb, cf_rb_truncation *out, wf_status *st) {
  const st_mesh *m = rb->m;
  double *saved = malloc(CF_NFIELDS * m->n_stored * sizeof *saved + 1);
  int ok = saved != NULL;
  wf_allreduce_inplace(&ok, 1, MPI_INT, MPI_MIN, rb->halo.fab->dc->comm);
  if (!ok) {
    free(saved);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory checking the convection operator");
  }
  for (int a = 0; a < CF_NFIELDS; a++) memcpy(saved + a * m->n_stored, rb->f[a], m->n_stored * sizeof *saved);
  double lx = m->nx * rb->h, ly = m->ny * rb->h;
  manufactured q = {.k = {(rb->side_walls ? 1 : 2) * ST_PI / lx, rb->dims == 3 ? 2 * ST_PI / ly : 0, ST_PI},
                    .px = rb->side_walls ? 0 : 0.7,
                    .py = 0.4,
                    .amp = {1, rb->dims == 3 ? 0.8 : 0, 0.9, 0.5}};
  *out = (cf_rb_truncation){.worst = 0};
  /* twice: with T's own part (the buoyancy's mean checked) and without it
   * (T linear: the mean is exact, and the w equation's allowance is the
   * advection's and the viscosity's alone) */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) q.amp[CF_T] = 0;
    manufacture(rb, &q);
    cf_rb_rhs(rb);
    double error[CF_NFIELDS];
    compare(rb, &q, error);
    for (int a = 0; a < CF_NFIELDS; a++) {
      if (a == CF_V && rb->dims == 2) continue;
      double allowed = allowed_of(&q, rb->ra, rb->pr, rb->dims, a, rb->h);
      double ratio = error[a] / allowed;
      if (!(ratio <= out->worst)) { /* NaN included */
        out->worst = ratio;
        out->equation = a;
        out->error = error[a];
        out->allowed = allowed;
      }
    }
  }
  for (int a = 0; a < CF_NFIELDS; a++) memcpy(rb->f[a], saved + a * m->n_stored, m->n_stored * sizeof *saved);
  free(saved);
  return WF_OK;
}
