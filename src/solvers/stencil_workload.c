/* `wafer stencil`: the SC20 wafer-scale stencil workload as an MPI code.
 *
 * Builds the 7-point operator on an nx x ny x nz mesh laid on the PE grid,
 * solves A x = b with CG, Jacobi-PCG or BiCGStab (or finds the largest
 * eigenvalue with the power method), checks the answer (PETSc on the same
 * matrix, or the analytic eigenvalue), and reports time per iteration, the
 * memory bandwidth it reaches against this machine's STREAM triad, and the
 * modelled wafer time per iteration. */
#include "stencil_workload.h"
#include "stencil_parts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_krylov.h"
#include "st_petsc.h"
#include "st_problem.h"
#include "wf_reference.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "st_model.h"
#include "wf_model.h"
#include "wf_random.h"
#include "wf_report.h"
#include "wf_wafer.h"

/* A tolerance of 1 or more asks nothing of the solve (PETSc refuses it). */
static int below_one(const char *v, char *why, size_t len) {
  if (strtod(v, NULL) < 1) return 0;
  snprintf(why, len, "a relative tolerance is below 1");
  return -1;
}

static const wf_key stencil_keys[] = {
    {"nx", WF_KEY_INT, "64", 1, 1e6, NULL, "mesh cells in x (over the PE grid)", NULL},
    {"ny", WF_KEY_INT, "64", 1, 1e6, NULL, "mesh cells in y (over the PE grid)", NULL},
    {"nz", WF_KEY_INT, "64", 1, 1e6, NULL, "mesh cells in z (in PE memory)", NULL},
    {"operator", WF_KEY_CHOICE, "laplacian", 0, 0, "laplacian|variable",
     "laplacian: matrix-free 7-point; variable: 7 coefficients per cell from a diffusion "
     "coefficient (as MFIX stores its systems)",
     NULL},
    {"coefficient", WF_KEY_CHOICE, "smooth", 0, 0, "smooth|random",
     "variable operator: the diffusion coefficient field (random: per cell, seeded)", NULL},
    {"contrast", WF_KEY_REAL, "10", 1, 1e8, NULL,
     "variable operator: largest / smallest diffusion coefficient", NULL},
    {"convection", WF_KEY_REAL, "0", 0, 1e6, NULL,
     "variable operator: upwind convection in x; > 0 makes it non-symmetric (use bicgstab)", NULL},
    {"bc_x", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|periodic", "boundary in x", NULL},
    {"bc_y", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|periodic", "boundary in y", NULL},
    {"bc_z", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|periodic", "boundary in z", NULL},
    {"rhs", WF_KEY_CHOICE, "ones", 0, 0, "ones|random|manufactured",
     "right-hand side (random: uniform in [-1, 1), seeded; manufactured: a sine solution)", NULL},
    {"seed", WF_KEY_INT, "1", 0, 2147483647, NULL, "seed of the random right-hand side", NULL},
    {"solver", WF_KEY_CHOICE, "cg", 0, 0, "cg|pcg|bicgstab|power",
     "Krylov solver (pcg: Jacobi-preconditioned CG), or the power method", NULL},
    {"rtol", WF_KEY_REAL, "1e-8", 0, 1, NULL,
     "relative tolerance on ||r|| / ||b|| (power method: on the eigenvalue's change; 0: run "
     "max_iterations)",
     below_one},
    {"atol", WF_KEY_REAL, "1e-50", 0, 1e300, NULL, "absolute tolerance on ||r||", NULL},
    {"dtol", WF_KEY_REAL, "1e5", 1, 1e300, NULL,
     "divergence: stop when ||r|| > dtol ||b|| (PETSc's default)", NULL},
    {"max_iterations", WF_KEY_INT, "10000", 1, 1e9, NULL, "iteration limit", NULL},
    {"precision", WF_KEY_CHOICE, "double", 0, 0, "double|single|mixed",
     "vectors and sums: double; single (float); mixed (float vectors, double dot products). "
     "single and mixed: CG/PCG on the Laplacian",
     NULL},
    {"crosscheck", WF_KEY_CHOICE, "auto", 0, 0, "auto|none|petsc",
     "solve the same system with PETSc (same matrix, KSP, PC, tolerances) and compare; auto: "
     "when this wafer was built with PETSc, else the run says the check is unavailable",
     NULL},
    {"petsc_options", WF_KEY_STRING, "", 0, 0, NULL,
     "extra PETSc options for the cross-check, e.g. '-ksp_monitor -log_view'", NULL},
    {"wafer_precision", WF_KEY_CHOICE, "fp32", 0, 0, "fp32|fp16",
     "precision of the vectors and the stencil in the wafer model (fp16: dot products still "
     "accumulated and reduced in fp32, as SC20 runs); the wafer has no fp64",
     NULL},
    {"model_only", WF_KEY_BOOL, "false", 0, 0, NULL,
     "only project this mesh onto the wafer (no allocation, no solve): for meshes too big here",
     NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG file for the convergence plot ('' = none; needs python3-matplotlib)", NULL},
    {"stream", WF_KEY_BOOL, "true", 0, 0, NULL,
     "measure STREAM triad on this machine to report the fraction of it reached", NULL},
};
static const wf_section stencil_section = {
    "stencil", "7-point stencil solvers on the PE grid (z in PE memory), checked against PETSc.",
    stencil_keys, (int)(sizeof stencil_keys / sizeof stencil_keys[0]), NULL, NULL};
static const wf_section *const stencil_sections[] = {&stencil_section};


static st_method method_of(const char *name) {
  return strcmp(name, "pcg") == 0        ? ST_PCG
         : strcmp(name, "bicgstab") == 0 ? ST_BICGSTAB
         : strcmp(name, "power") == 0    ? ST_POWER
                                         : ST_CG;
}

/* The wafer projection of one iteration (st_model.h), into run->model. */
static st_model project(wf_run *run, const st_mesh *m, const setup *s) {
  const wf_wafer *w = run->wafer;
  st_model t = st_model_iteration(&w->hw, &w->grid, m->brick_x, m->brick_y, m->nz, s->method,
                                  s->variable, s->wafer_prec);
  run->model = (wf_projection){.valid = true,
                               .unit = "iteration",
                               .seconds = t.seconds,
                               .flops = t.flops_per_cell * (double)m->n_global,
                               .bytes_per_pe = t.bytes_per_pe,
                               .sram_for_data = wf_model_sram_for_data(&w->hw),
                               .pes_needed = (double)w->dc.pe_nx * w->dc.pe_ny,
                               .pes_offered = (double)w->hw.pe_nx * w->hw.pe_ny};
  return t;
}

/* The model's JSON object and line: the projection, then its parts. */
static void report_model(wf_report *rep, const wf_run *run, const st_model *t, const setup *s) {
  const wf_hw *hw = &run->wafer->hw;
  const wf_projection *p = &run->model;
  wf_range spmv = wf_model_seconds(hw, t->spmv), vec = wf_model_seconds(hw, t->vector);
  wf_range red = wf_model_seconds(hw, wf_range_of(t->reduce));
  wf_report_model(rep, p);
  wf_report_note(rep, "%s, %s operator", s->wafer_prec == WF_FP16 ? "fp16" : "fp32",
                 s->variable ? "stored" : "matrix-free");
  wf_report_range(rep, "wafer_seconds_per_iteration", p->seconds.lo, p->seconds.hi, 1, NULL);
  wf_report_range(rep, "spmv_seconds", spmv.lo, spmv.hi, 1e6, "SpMV %.2f us");
  wf_report_range(rep, "vector_seconds", vec.lo, vec.hi, 1e6, "vectors %.2f us");
  wf_report_int(rep, "allreduces", t->allreduces, "%d allreduces");
  wf_report_range(rep, "allreduce_seconds", red.lo, red.hi, 1e6, "%.2f us");
  wf_report_num(rep, "flops_per_cell", t->flops_per_cell, "%.0f flops/cell");
  wf_report_range(rep, NULL, p->flops / p->seconds.hi, p->flops / p->seconds.lo, 1e-15,
                  "%.3g PFLOP/s");
  wf_report_note(rep, "%d arrays of %d cells", t->arrays,
                 (int)(t->bytes_per_pe / t->arrays / wf_prec_bytes(s->wafer_prec)));
  if (p->bytes_per_pe > p->sram_for_data)
    wf_report_note(rep, "the wafer's PEs would need %.0f B more",
                   p->bytes_per_pe - p->sram_for_data);
  wf_report_end(rep);
}

/* model_only: the projection alone, for meshes far too big for this machine. */
static int project_only(wf_run *run, const st_mesh *m, const setup *s) {
  st_model t = project(run, m, s);
  wf_report rep;
  wf_report_open(&rep, run, "stencil");
  report_model(&rep, run, &t, s);
  wf_report_close(&rep);
  run->wafer_seconds = run->model.seconds;
  snprintf(run->headline, sizeof run->headline, "model only: %.2f-%.2f us/iteration on %s",
           run->model.seconds.lo * 1e6, run->model.seconds.hi * 1e6, run->wafer->hw.name);
  return WF_OK;
}

/* Solution, residual b - A x (or A v - lambda v), the error against the
 * manufactured solution, and the residual history. */
static int write_output(wf_run *run, st_op *op, const char *path, const double *b, double *x,
                        const double *exact, bool manufactured, const st_result *res,
                        wf_status *st) {
  const st_mesh *m = op->m;
  double *ax = st_field_alloc(m), *err = st_field_alloc(m);
  if (!ax || !err) {
    free(ax), free(err);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the output fields");
  }
  st_op_apply(op, x, ax);
  for (size_t c = 0; c < m->n_stored; c++) {
    ax[c] = b ? b[c] - ax[c] : ax[c] - res->lambda * x[c];
    err[c] = x[c] - exact[c];
  }
  wf_h5file f;
  int rc = wf_run_h5_create(run, path, &f, st);
  /* solution, residual, error (manufactured), the history */
  double bytes = 8.0 * (double)m->n_global * (manufactured ? 3 : 2) + 8.0 * res->history_len;
  if (rc == WF_OK) {
    unsigned long long n = (unsigned long long)res->history_len, zero = 0;
    unsigned long long cnt = run->rank == 0 ? n : 0;
    wf_h5_block h = {.ndim = 1, .global = &n, .offset = &zero, .count = &cnt};
    if (wf_h5_reserve(&f, bytes, st) != WF_OK ||
        st_mesh_write_field(&f, m, "solution", x, st) != WF_OK ||
        st_mesh_write_field(&f, m, "residual", ax, st) != WF_OK ||
        (manufactured && st_mesh_write_field(&f, m, "error", err, st) != WF_OK) ||
        wf_h5_write(&f, b ? "residual_history" : "eigenvalue_history", WF_F64, &h, res->history,
                    false, st) != WF_OK ||
        wf_h5_attr_int(&f, "iterations", res->its, st) != WF_OK)
      rc = st->code;
    rc = wf_h5_finish(&f, rc, st);
  }
  free(ax), free(err);
  return rc;
}

/* The residual history, one value a line (scripts/plot_history.py). */
static void write_history(FILE *f, const void *data) {
  const st_result *res = data;
  for (int i = 0; i < res->history_len; i++) fprintf(f, "%.17g\n", res->history[i]);
}

static int read_setup(const wf_deck *d, setup *s, wf_status *st) {
  s->nx = (int)wf_deck_int(d, "stencil", "nx");
  s->ny = (int)wf_deck_int(d, "stencil", "ny");
  s->nz = (int)wf_deck_int(d, "stencil", "nz");
  const char *bc[3] = {"bc_x", "bc_y", "bc_z"};
  for (int a = 0; a < 3; a++)
    s->periodic[a] = strcmp(wf_deck_str(d, "stencil", bc[a]), "periodic") == 0;
  s->rhs = wf_deck_str(d, "stencil", "rhs");
  s->variable = strcmp(wf_deck_str(d, "stencil", "operator"), "variable") == 0;
  s->coef = (st_coef_spec){.kind = wf_deck_str(d, "stencil", "coefficient"),
                           .contrast = wf_deck_real(d, "stencil", "contrast"),
                           .convection = wf_deck_real(d, "stencil", "convection"),
                           .seed = wf_deck_int(d, "stencil", "seed")};
  s->method = method_of(wf_deck_str(d, "stencil", "solver"));
  s->opts = (st_opts){.rtol = wf_deck_real(d, "stencil", "rtol"),
                      .atol = wf_deck_real(d, "stencil", "atol"),
                      .dtol = wf_deck_real(d, "stencil", "dtol"),
                      .max_its = (int)wf_deck_int(d, "stencil", "max_iterations"),
                      .precision = ST_DOUBLE};
  const char *prec = wf_deck_str(d, "stencil", "precision");
  s->opts.precision = strcmp(prec, "single") == 0  ? ST_SINGLE
                      : strcmp(prec, "mixed") == 0 ? ST_MIXED
                                                   : ST_DOUBLE;
  if (s->opts.precision != ST_DOUBLE &&
      (s->variable || (s->method != ST_CG && s->method != ST_PCG))) {
    return wf_deck_fail(d, "stencil", "precision", st,
                        "single and mixed precision are implemented for solver = cg or pcg on "
                        "operator = laplacian");
  }
  s->wafer_prec = strcmp(wf_deck_str(d, "stencil", "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  wf_ref_use petsc;
  if (wf_ref_choose(d, "stencil", "crosscheck", "petsc", wf_ref_petsc_absent(), &petsc, st) != WF_OK)
    return st->code;
  s->petsc = petsc == WF_REF_USE && s->method != ST_POWER;
  s->petsc_unavailable = petsc == WF_REF_UNAVAILABLE && s->method != ST_POWER;
  bool symmetric = !s->variable || s->coef.convection == 0;
  if ((s->method == ST_CG || s->method == ST_PCG) && !symmetric) {
    return wf_deck_fail(d, "stencil", "convection", st,
                        "convection makes the operator non-symmetric, and CG needs a symmetric "
                        "positive definite one: use solver = bicgstab");
  }
  if (s->method == ST_POWER && s->variable) {
    return wf_deck_fail(d, "stencil", "operator", st,
                        "the power method is checked against the Laplacian's analytic eigenvalue; "
                        "use operator = laplacian");
  }
  if (strcmp(s->rhs, "manufactured") == 0 && s->variable) {
    return wf_deck_fail(d, "stencil", "rhs", st,
                        "the manufactured solution is for the Laplacian; use operator = laplacian");
  }
  if (s->method != ST_POWER && s->periodic[0] && s->periodic[1] && s->periodic[2] &&
      s->coef.convection == 0) {
    return wf_deck_fail(d, "stencil", "bc_z", st,
                        "with every axis periodic the operator is singular (constants are in its "
                        "null space); make one axis dirichlet");
  }
  return WF_OK;
}


static const char *const method_names[] = {"cg", "pcg", "bicgstab", "power"};

/* Solve (or find the largest eigenvalue), then cross-check with PETSc and
 * measure STREAM triad as the deck asks. */
static int solve(wf_run *run, const setup *s, const st_mesh *m, st_op *op, double *b, double *x,
                 double *exact, report *rep, wf_status *st) {
  const wf_deck *d = run->deck;
  int rc;
  if (s->method == ST_POWER) {
    st_problem_rhs(m, s->periodic, "random", wf_deck_int(d, "stencil", "seed"), x, exact);
    wf_fabric_main_begin(&run->wafer->fab);
    rc = st_power(op, x, &s->opts, &rep->res, st);
  } else {
    st_problem_rhs(m, s->periodic, s->rhs, wf_deck_int(d, "stencil", "seed"), b, exact);
    wf_fabric_main_begin(&run->wafer->fab);
    rc = st_solve(op, s->method, b, x, &s->opts, &rep->res, st);
  }
  wf_fabric_main_end(&run->wafer->fab, rep->res.its);
  if (rc == WF_OK && rep->res.reason == ST_INTERRUPTED) {
    char where[128];
    snprintf(where, sizeof where, "at iteration %d (a solve keeps no checkpoint: nothing written)",
             rep->res.its);
    return wf_signal_fail(st, rep->res.signal, where);
  }
  if (rc == WF_OK && s->petsc)
    rc = st_petsc_check(op, s->method, b, x, &s->opts, wf_deck_str(d, "stencil", "petsc_options"),
                        &rep->pr, st);
  if (rc == WF_OK && rep->pr.signal)
    return wf_signal_fail(st, rep->pr.signal, "in PETSc's cross-check solve (nothing written)");
  if (rc == WF_OK && wf_deck_bool(d, "stencil", "stream")) {
    rep->triad = wf_stream_triad(run->comm, m->n_owned, st);
    rc = st->code;
  }
  return rc;
}

/* The solve's JSON objects and lines (and PETSc's, when it ran). */
static void report_solve(wf_report *out, const wf_run *run, const setup *s, const report *rep,
                         double per_it, double gbs) {
  const st_result *r = &rep->res;
  wf_report_begin(out, "stencil");
  wf_report_line(out, NULL);
  long long mesh[3] = {s->nx, s->ny, s->nz};
  wf_report_ints(out, "mesh", mesh, 3, "%d mesh");
  wf_report_str(out, "solver", method_names[s->method], "%s");
  wf_report_str(out, "precision", wf_deck_str(run->deck, "stencil", "precision"), "%s");
  wf_report_str(out, "rhs", s->rhs, "rhs %s");
  wf_report_str(out, "reason", st_reason_name(r->reason), "%s");
  wf_report_int(out, "iterations", r->its, "after %d iterations");
  wf_report_num(out, "rnorm", r->rnorm, "||r|| %.3e");
  wf_report_num(out, "rnorm0", r->rnorm0, "of %.3e");
  wf_report_scaled(out, "seconds_per_iteration", per_it, 1e3, "%.3f ms/iteration");
  wf_report_num(out, "GBps", gbs, "%.1f GB/s");
  wf_report_num(out, "bytes_per_cell_iteration", r->bytes_per_cell_it, "%.0f B/cell/iteration");
  if (rep->triad > 0) {
    wf_report_num(out, "stream_triad_GBps", rep->triad / 1e9, "STREAM triad %.1f GB/s");
    wf_report_scaled(out, "fraction_of_triad", gbs * 1e9 / rep->triad, 100, "%.0f%% of it");
  }
  if (s->method == ST_POWER) {
    wf_report_line(out, "largest eigenvalue");
    wf_report_num(out, "lambda", r->lambda, "%.12f");
    wf_report_num(out, "lambda_exact", rep->lambda_exact, "analytic %.12f");
  }
  if (strcmp(s->rhs, "manufactured") == 0) {
    wf_report_line(out, NULL);
    wf_report_num(out, "error_max", rep->err_max, "max error vs the manufactured solution %.3e");
  }
  wf_report_end(out);
  if (s->petsc) {
    double theirs = rep->pr.its ? rep->pr.seconds / rep->pr.its : 0.0;
    wf_report_begin(out, "petsc");
    wf_report_line(out, s->method == ST_BICGSTAB ? "PETSc KSPBCGS" : "PETSc KSPCG");
    wf_report_int(out, "iterations", rep->pr.its, "%d iterations");
    wf_report_str(out, "reason", rep->pr.reason, "%s");
    wf_report_scaled(out, "seconds_per_iteration", theirs, 1e3, "%.3f ms/iteration");
    wf_report_num(out, "ratio", rep->pr.its ? per_it / theirs : 0.0, "ratio wafer/PETSc %.2f");
    wf_report_num(out, "solution_rel_diff", rep->pr.rel_diff, "solutions differ by %.2e");
    wf_report_end(out);
  }
  if (!s->petsc && !s->petsc_unavailable && s->method != ST_POWER) {
    wf_report_line(out, "unchecked");
    wf_report_note(out, "no reference (stencil.crosscheck = none)");
  }
}

/* Checks, report lines, JSON and the projection of a finished solve. */
static void conclude(wf_run *run, const setup *s, const st_mesh *m, const double *x,
                     const double *exact, report *rep) {
  const st_result *r = &rep->res;
  int its = r->its > 0 ? r->its : 1;
  double per_it = r->seconds / its;
  double gbs = r->bytes_per_cell_it * (double)m->n_global / per_it / 1e9;
  stencil_check(run, s, m, x, exact, rep);
  st_model t = project(run, m, s);
  wf_report out;
  wf_report_open(&out, run, "stencil");
  report_solve(&out, run, s, rep, per_it, gbs);
  report_model(&out, run, &t, s);
  wf_report_close(&out);
  run->seconds = r->seconds;
  run->wafer_seconds = wf_range_scale(run->model.seconds, its);
  snprintf(run->headline, sizeof run->headline, "%s %d its, %.2f ms/it, %.1f GB/s%s",
           method_names[s->method], r->its, per_it * 1e3, gbs,
           s->petsc ? (run->checks_failed ? ", PETSc differs" : ", = PETSc") : "");
}

static int stencil_run(wf_run *run, wf_status *st) {
  wf_wafer *w = run->wafer;
  const wf_deck *d = run->deck;
  setup s;
  if (read_setup(d, &s, st) != WF_OK) return st->code;
  st_mesh m;
  if (st_mesh_create(&m, w, s.nx, s.ny, s.nz, st) != WF_OK) {
    return wf_deck_blame(d, "stencil", "nx", st);
  }
  if (wf_deck_bool(d, "stencil", "model_only")) return project_only(run, &m, &s);
  if (s.petsc_unavailable) wf_run_unavailable(run, "PETSc cross-check", wf_ref_petsc_absent());
  st_op op;
  if (st_op_create(&op, &m, &w->fab, s.periodic, s.variable ? &s.coef : NULL, st) != WF_OK)
    return st->code;
  double *b = st_field_alloc(&m), *x = st_field_alloc(&m), *exact = st_field_alloc(&m);
  if (!b || !x || !exact) {
    free(b), free(x), free(exact);
    st_op_free(&op);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %lld cells", m.n_global);
  }
  if (run->verbose)
    printf("stencil: %dx%dx%d mesh (bricks of up to %dx%d columns per PE), %s operator, %s, rhs "
           "%s, bc %s/%s/%s\n",
           s.nx, s.ny, s.nz, m.brick_x, m.brick_y, s.variable ? "variable" : "laplacian",
           method_names[s.method], s.rhs, s.periodic[0] ? "periodic" : "dirichlet",
           s.periodic[1] ? "periodic" : "dirichlet", s.periodic[2] ? "periodic" : "dirichlet");

  report rep = {0};
  int rc = solve(run, &s, &m, &op, b, x, exact, &rep, st);
  if (rc == WF_OK) conclude(run, &s, &m, x, exact, &rep);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0])
    rc = write_output(run, &op, out, s.method == ST_POWER ? NULL : b, x, exact,
                      strcmp(s.rhs, "manufactured") == 0, &rep.res, st);
  const char *png = wf_deck_str(d, "stencil", "plot");
  if (rc == WF_OK && png[0]) {
    char title[200];
    snprintf(title, sizeof title, "wafer stencil: %s, %dx%dx%d, %d ranks", method_names[s.method],
             s.nx, s.ny, s.nz, run->nranks);
    rc = wf_run_plot(run, "plot_history.py", png, title, write_history,
                     &rep.res, st);
  }
  if (rc == WF_OK) rc = stencil_require_convergence(&s, &rep.res, st);
  st_result_free(&rep.res);
  free(b), free(x), free(exact);
  st_op_free(&op);
  return rc;
}

const wf_workload wf_stencil_workload = {
    .name = "stencil",
    .help = "7-point CG/PCG/BiCGStab/power method on the PE grid, checked against PETSc",
    .sections = stencil_sections,
    .nsections = 1,
    .run = stencil_run,
    .finalize = st_petsc_finalize,
};
