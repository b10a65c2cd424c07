/* Krylov solvers on the stencil operator (st_krylov.h): CG and Jacobi-PCG (fused to two
 * sweeps on the Laplacian, in three precisions), BiCGStab and the power method, with PETSc's
 * convergence test, the residual history and the signal poll. */
#include "st_krylov.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "wf_fabric.h"
#include "wf_config.h" /* WF_HOT */
#include "wf_signal.h"

const char *st_reason_name(st_reason r) {
  static const char *names[] = {"converged_rtol",     "converged_atol",      "diverged_max_its",
                                "diverged_dtol",      "diverged_breakdown",  "diverged_indefinite",
                                "diverged_nonfinite", "interrupted"};
  return names[r];
}

bool st_reason_converged(st_reason r) {
  return r == ST_CONVERGED_RTOL || r == ST_CONVERGED_ATOL;
}

void st_result_free(st_result *res) {
  free(res->history);
  res->history = NULL;
  res->history_len = res->history_cap = 0;
}

/* Record entry `i` of the history, growing it as the iterations go (the
 * iteration limit may be far larger than what a solve takes). Out of
 * memory, the history stops growing; the solve does not. */
static void history_set(st_result *res, int i, double v) {
  if (i >= res->history_cap) {
    int cap = res->history_cap ? 2 * res->history_cap : 1024;
    double *h = realloc(res->history, (size_t)cap * sizeof *h);
    if (!h) return;
    res->history = h;
    res->history_cap = cap;
  }
  if (i == res->history_len) res->history_len = i + 1;
  res->history[i] = v;
}

/* ---- vector kernels over owned cells (rows are contiguous runs) ---------- */

double st_dot_local(const st_mesh *m, const double *a, const double *b) {
  double sum = 0;
  const size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    const double *restrict x = a + st_row(m, j), *restrict y = b + st_row(m, j);
#pragma omp simd reduction(+ : sum)
    for (size_t k = 0; k < len; k++) sum += x[k] * y[k];
  }
  return sum;
}

static double allreduce1(wf_fabric *fab, double v) {
  wf_fabric_allreduce(fab, &v, 1, WF_SUM);
  return v;
}

static void allreduce2(wf_fabric *fab, double *a, double *b) {
  double v[2] = {*a, *b};
  wf_fabric_allreduce(fab, v, 2, WF_SUM);
  *a = v[0];
  *b = v[1];
}

/* ---- bookkeeping shared by the solvers ------------------------------------ */

typedef struct monitor {
  const st_opts *o;
  st_result *res;
  double ttol, divtol;
  wf_signal_poll sig;
} monitor;

/* Collective (it starts the signal poll on the fabric's communicator,
 * unless the caller polls between solves): every monitor_start has its
 * monitor_end. */
static void monitor_start_ref(monitor *mo, wf_fabric *fab, const st_opts *o, st_result *res,
                              double rnorm0, double bnorm) {
  memset(res, 0, sizeof *res);
  mo->sig = (wf_signal_poll){.req = MPI_REQUEST_NULL};
  if (!o->ignore_signals) wf_signal_poll_start(&mo->sig, fab->dc->comm);
  mo->o = o;
  mo->res = res;
  mo->ttol = fmax(o->rtol * bnorm, o->atol);
  mo->divtol = o->dtol * bnorm;
  res->rnorm0 = res->rnorm = rnorm0;
  history_set(res, 0, rnorm0);
}

/* rtol and dtol relative to the initial residual: ||b||, x starting at 0. */
static void monitor_start(monitor *mo, wf_fabric *fab, const st_opts *o, st_result *res,
                          double rnorm0) {
  monitor_start_ref(mo, fab, o, res, rnorm0, rnorm0);
}

/* Record iteration `its` with residual norm `rnorm`; true when finished. */
static bool monitor_step(monitor *mo, int its, double rnorm) {
  st_result *res = mo->res;
  res->its = its;
  res->rnorm = rnorm;
  history_set(res, its, rnorm);
  if (!isfinite(rnorm)) {
    res->reason = ST_DIVERGED_NONFINITE;
    return true;
  }
  if (rnorm <= mo->ttol) {
    res->reason = rnorm <= mo->o->atol ? ST_CONVERGED_ATOL : ST_CONVERGED_RTOL;
    return true;
  }
  if (rnorm > mo->divtol) {
    res->reason = ST_DIVERGED_DTOL;
    return true;
  }
  if (its >= mo->o->max_its) {
    res->reason = ST_DIVERGED_MAX_ITS;
    return true;
  }
  res->signal = mo->o->ignore_signals ? 0 : wf_signal_poll_next(&mo->sig);
  if (res->signal) {
    res->reason = ST_INTERRUPTED;
    return true;
  }
  return false;
}

static void monitor_end(monitor *mo) { wf_signal_poll_end(&mo->sig); }

/* ---- CG and Jacobi-PCG, fused --------------------------------------------
 *
 * Textbook CG moves about 12 values per cell and iteration (q = Ap, two dots,
 * three vector updates). Here each iteration is two sweeps:
 *   A: p = s r + beta p, and p'Ap, with Ap computed on the fly one row behind
 *      the update of p (reads r, p; writes p: 3 values);
 *   B: Ap recomputed from p, x += alpha p, r -= alpha Ap, r'r
 *      (reads p, x, r; writes x, r: 5 values).
 * Ap is never stored. The halo of p is not exchanged: each rank updates p on
 * its halo ring too, from r's halo (exchanged once per iteration, the only
 * exchange) and the p halo it computed the iteration before: the same
 * operations on the same values as the owner, so bit for bit the same.
 * With a constant diagonal, Jacobi is the scaling s = 1/6 (PCG); the
 * preconditioned residual norm is then s ||r||, as PETSc reports it. */

/* The fused CG in three precisions, from one template (st_cg_fused.h):
 * double; single (float storage and sums); mixed (float storage, double sums). */
#define CG_REAL double
#define CG_ACC double
#define CG_NAME(f) f##_double
#include "st_cg_fused.h"
#define CG_REAL float
#define CG_ACC float
#define CG_NAME(f) f##_single
#include "st_cg_fused.h"
#define CG_REAL float
#define CG_ACC double
#define CG_NAME(f) f##_mixed
#include "st_cg_fused.h"

static int cg(st_op *op, bool jacobi, const double *b, double *x, const st_opts *o,
              st_result *res, wf_status *st) {
  switch (o->precision) {
  case ST_SINGLE: return cg_single(op, jacobi, b, x, o, res, st);
  case ST_MIXED: return cg_mixed(op, jacobi, b, x, o, res, st);
  case ST_DOUBLE: break;
  }
  return cg_double(op, jacobi, b, x, o, res, st);
}

static void axpbypcz(const st_mesh *m, double *restrict z, double a, const double *restrict x,
                     double b, const double *restrict y, double c);

/* ---- CG and Jacobi-PCG for the general operator, as PETSc's KSPCG -------
 * With coefficients in memory the fused sweeps would read them twice per
 * iteration; here q = Ap is stored once instead. */

static void jacobi(const st_op *op, const double *restrict r, double *restrict z) {
  const st_mesh *m = op->m;
  const double *restrict d = op->coef[ST_P];
  const size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    const size_t o = st_row(m, j);
#pragma omp simd
    for (size_t k = o; k < o + len; k++) z[k] = r[k] / d[k];
  }
}

static int cg_general(st_op *op, bool pcg, const double *b, double *x, const st_opts *o,
                      st_result *res, wf_status *st) {
  const st_mesh *m = op->m;
  wf_fabric *fab = op->halo.fab;
  double *r = st_field_alloc(m), *p = st_field_alloc(m), *q = st_field_alloc(m);
  double *z = pcg ? st_field_alloc(m) : r;
  if (!r || !p || !q || !z) {
    free(r), free(p), free(q);
    if (pcg) free(z);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for CG vectors");
  }
  memcpy(r, b, m->n_stored * sizeof(double));
  if (pcg) jacobi(op, r, z);
  double bnorm = sqrt(allreduce1(fab, st_dot_local(m, z, z))); /* rtol's reference */
  if (o->nonzero_guess) {
    st_op_apply(op, x, q);
    axpbypcz(m, r, -1.0, q, 0.0, q, 1.0); /* r = b - A x */
    if (pcg) jacobi(op, r, z);
  } else {
    memset(x, 0, m->n_stored * sizeof(double));
  }
  double zz = st_dot_local(m, z, z), beta = st_dot_local(m, z, r);
  allreduce2(fab, &zz, &beta);
  monitor mo;
  monitor_start_ref(&mo, fab, o, res, sqrt(zz), bnorm);
  /* A p (coefficients 7, p, q), p'q (2), x and r updates (6), z (3), norms (2),
   * p update (3). */
  res->bytes_per_cell_it = (pcg ? 23 : 20) * sizeof(double);
  double t0 = MPI_Wtime(), betaold = 1;
  bool done = monitor_step(&mo, 0, sqrt(zz));
  for (int its = 1; !done; its++) {
    axpbypcz(m, p, 1.0, z, 0.0, z, its == 1 ? 0.0 : beta / betaold); /* p = z + b p */
    st_op_apply(op, p, q);
    double pq = allreduce1(fab, st_dot_local(m, p, q));
    if (!(pq > 0)) {
      res->reason = isfinite(pq) ? ST_DIVERGED_INDEFINITE : ST_DIVERGED_NONFINITE;
      break;
    }
    double a = beta / pq;
    axpbypcz(m, x, a, p, 0.0, p, 1.0);  /* x += a p */
    axpbypcz(m, r, -a, q, 0.0, q, 1.0); /* r -= a q */
    if (pcg) jacobi(op, r, z);
    zz = st_dot_local(m, z, z);
    double zr = st_dot_local(m, z, r);
    allreduce2(fab, &zz, &zr);
    done = monitor_step(&mo, its, sqrt(zz));
    betaold = beta;
    beta = zr;
  }
  res->seconds = MPI_Wtime() - t0;
  monitor_end(&mo);
  free(r), free(p), free(q);
  if (pcg) free(z);
  return WF_OK;
}

/* ---- BiCGStab (van der Vorst), as PETSc's KSPBCGS orders it, unpreconditioned. */

static void axpbypcz(const st_mesh *m, double *restrict z, double a, const double *restrict x,
                     double b, const double *restrict y, double c) {
  const size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    const size_t o = st_row(m, j);
#pragma omp simd
    for (size_t k = o; k < o + len; k++) z[k] = a * x[k] + b * y[k] + c * z[k];
  }
}

static void waxpy(const st_mesh *m, double *restrict w, double a, const double *restrict x,
                  const double *restrict y) {
  const size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    const size_t o = st_row(m, j);
#pragma omp simd
    for (size_t k = o; k < o + len; k++) w[k] = a * x[k] + y[k];
  }
}

static int bicgstab(st_op *op, const double *b, double *x, const st_opts *o, st_result *res,
                    wf_status *st) {
  const st_mesh *m = op->m;
  wf_fabric *fab = op->halo.fab;
  enum { R, RP, V, T, S, P, NV };
  double *v[NV];
  for (int i = 0; i < NV; i++) v[i] = st_field_alloc(m);
  for (int i = 0; i < NV; i++)
    if (!v[i]) {
      for (int k = 0; k < NV; k++) free(v[k]);
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for BiCGStab vectors");
    }
  memset(x, 0, m->n_stored * sizeof(double));
  memcpy(v[R], b, m->n_stored * sizeof(double));
  memcpy(v[RP], b, m->n_stored * sizeof(double));
  double dp = sqrt(allreduce1(fab, st_dot_local(m, v[R], v[R])));
  monitor mo;
  monitor_start(&mo, fab, o, res, dp);
  /* Per iteration: 2 operator applications (2 values each), 5 dots-and-norms
   * (6 values), 3 three-term updates (about 11 values). */
  res->bytes_per_cell_it = 21 * sizeof(double);
  double t0 = MPI_Wtime();
  bool done = monitor_step(&mo, 0, dp);
  double rhoold = 1, alpha = 1, omegaold = 1;
  for (int its = 1; !done; its++) {
    double rho = allreduce1(fab, st_dot_local(m, v[R], v[RP]));
    double beta = (rho / rhoold) * (alpha / omegaold);
    axpbypcz(m, v[P], 1.0, v[R], -omegaold * beta, v[V], beta); /* p = r + beta (p - w v) */
    st_op_apply(op, v[P], v[V]);
    double d1 = allreduce1(fab, st_dot_local(m, v[V], v[RP]));
    if (d1 == 0.0 || !isfinite(d1)) {
      res->reason = isfinite(d1) ? ST_DIVERGED_BREAKDOWN : ST_DIVERGED_NONFINITE;
      break;
    }
    alpha = rho / d1;
    waxpy(m, v[S], -alpha, v[V], v[R]); /* s = r - alpha v */
    st_op_apply(op, v[S], v[T]);
    double ts = st_dot_local(m, v[T], v[S]), tt = st_dot_local(m, v[T], v[T]);
    allreduce2(fab, &ts, &tt);
    if (tt == 0.0) { /* t = 0: s = 0 means alpha p solves it */
      axpbypcz(m, x, alpha, v[P], 0.0, v[S], 1.0);
      res->its = its;
      res->reason = ST_CONVERGED_RTOL;
      res->rnorm = 0;
      break;
    }
    double omega = ts / tt;
    axpbypcz(m, x, alpha, v[P], omega, v[S], 1.0); /* x += alpha p + omega s */
    waxpy(m, v[R], -omega, v[T], v[S]);           /* r = s - omega t */
    dp = sqrt(allreduce1(fab, st_dot_local(m, v[R], v[R])));
    rhoold = rho;
    omegaold = omega;
    done = monitor_step(&mo, its, dp);
    if (!done && rho == 0.0) {
      res->reason = ST_DIVERGED_BREAKDOWN;
      break;
    }
  }
  res->seconds = MPI_Wtime() - t0;
  monitor_end(&mo);
  for (int i = 0; i < NV; i++) free(v[i]);
  return WF_OK;
}

int st_solve(st_op *op, st_method method, const double *b, double *x, const st_opts *o,
             st_result *res, wf_status *st) {
  if (o->nonzero_guess && (!op->coef[ST_P] || (method != ST_CG && method != ST_PCG)))
    return wf_fail(st, WF_ERR_INPUT,
                   "a nonzero initial guess is implemented for CG and PCG on a stored operator");
  if (o->precision != ST_DOUBLE && (op->coef[ST_P] || (method != ST_CG && method != ST_PCG)))
    return wf_fail(st, WF_ERR_INPUT,
                   "single and mixed precision are implemented for CG and PCG on the Laplacian");
  switch (method) {
  case ST_CG: return op->coef[ST_P] ? cg_general(op, false, b, x, o, res, st)
                                    : cg(op, false, b, x, o, res, st);
  case ST_PCG: return op->coef[ST_P] ? cg_general(op, true, b, x, o, res, st)
                                     : cg(op, true, b, x, o, res, st);
  case ST_BICGSTAB: return bicgstab(op, b, x, o, res, st);
  case ST_POWER: break;
  }
  return wf_fail(st, WF_ERR_RUNTIME, "st_solve: the power method is st_power");
}

/* ---- power method ----------------------------------------------------------
 * v <- A v / ||A v||; the estimate is the Rayleigh quotient v'Av (v unit).
 * Stops when successive estimates agree to rtol (relative). */
int st_power(st_op *op, double *v, const st_opts *o, st_result *res, wf_status *st) {
  const st_mesh *m = op->m;
  wf_fabric *fab = op->halo.fab;
  double *w = st_field_alloc(m);
  if (!w) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the power method");
  double nv = sqrt(allreduce1(fab, st_dot_local(m, v, v)));
  if (!(nv > 0)) {
    free(w);
    return wf_fail(st, WF_ERR_INPUT, "power method: the start vector is zero or not finite");
  }
  memset(res, 0, sizeof *res);
  history_set(res, 0, 0);
  res->bytes_per_cell_it = 5 * sizeof(double);
  for (int j = 0; j < m->lny; j++)
    for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++) v[k] /= nv;
  double t0 = MPI_Wtime(), lambda = 0;
  res->reason = ST_DIVERGED_MAX_ITS;
  wf_signal_poll sig;
  wf_signal_poll_start(&sig, fab->dc->comm);
  for (int its = 1; its <= o->max_its; its++) {
    st_op_apply(op, v, w);
    double vw = st_dot_local(m, v, w), ww = st_dot_local(m, w, w);
    allreduce2(fab, &vw, &ww);
    double prev = lambda, nw = sqrt(ww);
    lambda = vw;
    res->its = its;
    history_set(res, its, lambda);
    if (!isfinite(lambda) || !(nw > 0)) {
      res->reason = ST_DIVERGED_NONFINITE;
      break;
    }
    for (int j = 0; j < m->lny; j++)
      for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++) v[k] = w[k] / nw;
    res->rnorm = fabs(lambda - prev) / fabs(lambda);
    if (its > 1 && res->rnorm <= o->rtol) {
      res->reason = ST_CONVERGED_RTOL;
      break;
    }
    res->signal = wf_signal_poll_next(&sig);
    if (res->signal) {
      res->reason = ST_INTERRUPTED;
      break;
    }
  }
  wf_signal_poll_end(&sig);
  res->lambda = lambda;
  res->seconds = MPI_Wtime() - t0;
  free(w);
  return WF_OK;
}
