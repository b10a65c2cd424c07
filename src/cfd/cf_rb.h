/* Rayleigh-Benard convection, Boussinesq, on a staggered (MAC) grid laid on
 * the mesh as st_mesh lays it (x, y over the PEs, z in PE memory, a halo of
 * one column with corners).
 *
 * Units: the layer's depth (z from 0 to 1: h = 1 / nz, cubic cells), the
 * thermal diffusion time, the temperature difference (T = 1 at the bottom
 * wall, 0 at the top):
 *   u_t + (u . grad) u = -grad p + Pr lap(u) + Ra Pr T e_z,   div u = 0,
 *   T_t + u . grad T = lap(T).
 * x and y are periodic; the walls at z = 0 and 1 are no-slip and isothermal.
 * Or, with side walls, x is bounded by no-slip adiabatic walls (the square
 * cavity of the published 2D benchmarks). 2D is ny = 1 (on one PE row):
 * every y difference vanishes.
 *
 * Staggering: u at the cell's low x face, v at its low y face, w at its low
 * z face (w = 0 at k = 0, the bottom wall; the top wall's face is not
 * stored and is 0); T and p at the centre. Second-order central
 * differences, advection in divergence form. Time: SSP-RK3 (Shu-Osher),
 * each stage projected: solve lap(phi) = div(u*) with zero flux through the
 * walls, then u = u* - grad(phi). The solve: Jacobi-PCG (st_krylov), or
 * exactly by FFT (ff_pencil): the zero-flux walls in z are the even
 * extension of the column to 2 nz cells, periodic, where the 7-point
 * operator is diagonal (a cosine transform in z, in place of a tridiagonal
 * solve: the same discrete system; x and y must then be periodic). */
#ifndef CF_RB_H
#define CF_RB_H

#include <stdbool.h>

#include "ff_pencil.h"
#include "st_krylov.h"
#include "st_mesh.h"
#include "wf_error.h"
#include "wf_halo.h"

enum { CF_U, CF_V, CF_W, CF_T, CF_NFIELDS };

typedef enum { CF_POISSON_PCG, CF_POISSON_FFT } cf_poisson;

typedef struct cf_rb_params {
  double ra, pr;
  bool side_walls;   /* x bounded by no-slip adiabatic walls (else periodic) */
  cf_poisson solver; /* FFT: x periodic only */
  st_opts pcg;       /* the PCG solves' tolerance and limits */
} cf_rb_params;

typedef struct cf_rb {
  const st_mesh *m;
  double ra, pr, h;
  int dims;        /* 2 (ny = 1) or 3 */
  bool side_walls; /* x bounded by no-slip adiabatic walls (else periodic) */
  bool west, east; /* this rank holds the x = 0 or the x = Lx wall */
  wf_halo halo;    /* one column, corners, periodic in x and y */
  cf_poisson solver;
  st_op poisson;          /* PCG: -h^2 lap, no flux through the walls */
  st_opts opts;           /* PCG: the solves' tolerance */
  ff_plan fft;            /* FFT: nx x ny x 2 nz, periodic */
  double *f[CF_NFIELDS];  /* the state: u, v, w, T */
  double *f0[CF_NFIELDS]; /* the state at the start of the step */
  double *rhs[CF_NFIELDS];
  double *phi[3]; /* each RK stage's last pressure correction: the solves' start */
  double *b;
  /* The projections so far: */
  long long poisson_its;
  int solves;
  double poisson_seconds;
  double div_ratio; /* largest ||div u|| after / before a projection */
  bool solve_failed;
  char solve_reason[64];
} cf_rb;

/* Errors: out of memory; the halo against the rank blocks, the FFT with
 * side walls (input). */
int cf_rb_create(cf_rb *rb, const st_mesh *m, wf_fabric *fab, const cf_rb_params *p, wf_status *st);
void cf_rb_free(cf_rb *rb);

/* The conduction state T = 1 - z at rest, plus `amplitude` times the onset
 * mode's shape: cos(2 pi x / Lx) sin(pi z), a pair of rolls across the
 * periodic box; between side walls cos(pi x / Lx) sin(pi z), one roll. */
void cf_rb_init(cf_rb *rb, double amplitude);

/* The largest stable step of the explicit scheme for the current velocity
 * (collective): SSP-RK3's reach on the imaginary axis (sqrt 3) over the
 * advection's, and on the real axis (2.51) over the diffusion's. */
double cf_rb_dt_limit(cf_rb *rb);

/* One step of dt (collective). Fails when a Poisson solve does not
 * converge (its reason in rb->solve_reason). */
int cf_rb_step(cf_rb *rb, double dt, wf_status *st);

/* The Poisson system a step of dt would solve first (collective): its
 * right-hand side -h^2 div(u*) into b, the state left as it was. */
void cf_rb_sample_rhs(cf_rb *rb, double dt, double *b);
/* Solve -h^2 lap(phi) = b with the run's solver, PCG from zero (collective);
 * the iterations in *its (0 for the FFT). */
int cf_rb_poisson_solve(cf_rb *rb, const double *b, double *phi, int *its, wf_status *st);

/* The right-hand sides of the current state into rb->rhs (u, v, w, T; the
 * pressure gradient is the projection's), halos exchanged first, as a step
 * computes them. Collective. */
void cf_rb_rhs(cf_rb *rb);
/* The right-hand sides against the equations' own on a smooth manufactured
 * state that meets the walls' conditions (cf_rb_verify.c): the worst
 * |discrete - exact| over the owned points and equations, relative to
 * what second-order truncation allows there (Taylor remainders, doubled).
 * The state is restored (the right-hand sides are scratch). Out of memory
 * is the only error. Collective. */
typedef struct cf_rb_truncation {
  double worst;   /* max over the equations of error / allowed */
  int equation;   /* CF_U .. CF_T, the worst's */
  double error, allowed; /* the worst equation's */
} cf_rb_truncation;
int cf_rb_check_truncation(cf_rb *rb, cf_rb_truncation *out, wf_status *st);
/* The heat budget of the temperature's right-hand side at the current
 * state, as a step computes it: the fluxes between cells cancel (each face's
 * flux leaves one cell and enters its neighbour; the side walls and the
 * velocity's walls carry none), so its sum over the cells is what the walls
 * held at 1 and 0, half a cell beyond the end centres, conduct in:
 * 2 (1 - T_bottom) / h^2 - 2 T_top / h^2 per column. Returns |difference| /
 * allowed (<= 1 agrees): each cell's terms rounded within gamma_16 of their
 * magnitudes, the sums within N u. A stale halo breaks the cancellation.
 * Collective. */
double cf_rb_heat_budget(cf_rb *rb);

/* Diagnostics (collective). */
typedef struct cf_rb_stats {
  double nu_bottom, nu_top; /* -dT/dz at the walls, averaged over the wall */
  double nu_volume;         /* 1 + <w T> over the layer */
  double kinetic;           /* <u^2 + v^2 + w^2> / 2 */
  double max_div;           /* max |div u| over the cells */
  double max_speed;         /* max |u| + |v| + |w| */
  bool finite;
} cf_rb_stats;
cf_rb_stats cf_rb_measure(cf_rb *rb);

/* The velocity at the cell centres (the mean of the two faces), for output. */
void cf_rb_centred(cf_rb *rb, int component, double *out);

#endif
