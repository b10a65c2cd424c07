/* `wafer cfd` with problem = convection: Rayleigh-Benard convection
 * (cf_rb.h) run for a number of steps or up to a time, its Nusselt numbers
 * and kinetic energy sampled as it goes, checked against linear stability
 * theory (the perturbation's growth rate while it is small, against the
 * normal mode's at this Ra and this box's wavenumber: cf_rb_linear.h) and
 * by the divergence each projection leaves. This file: the setup, the
 * steps, the PETSc comparison, the model and the run's sequence; its files
 * and its checks and report: cfd_convection_parts.h. */
#include "cfd_convection.h"
#include "cfd_convection_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_checkpoint.h"
#include "cf_rb_checkpoint.h"
#include "ff_model.h"
#include "st_model.h"
#include "st_petsc.h"
#include "wf_fault.h"
#include "wf_io.h"
#include "wf_progress.h"
#include "wf_reference.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_timing.h"
#include "wf_wafer.h"

static int read_setup(const wf_deck *d, conv_setup *s, wf_status *st) {
  *s =
      (conv_setup){.nx = (int)wf_deck_int(d, "cfd", "nx"),
                   .ny = (int)wf_deck_int(d, "cfd", "ny"),
                   .nz = (int)wf_deck_int(d, "cfd", "nz"),
                   .steps = (int)wf_deck_int(d, "cfd", "steps"),
                   .every = (int)wf_deck_int(d, "cfd", "energy_every"),
                   .ra = wf_deck_real(d, "cfd", "ra"),
                   .pr = wf_deck_real(d, "cfd", "pr"),
                   .t_end = wf_deck_real(d, "cfd", "t_end"),
                   .cfl = wf_deck_real(d, "cfd", "cfl"),
                   .dt = wf_deck_real(d, "cfd", "dt"),
                   .amplitude = wf_deck_real(d, "cfd", "perturbation"),
                   .side_walls = strcmp(wf_deck_str(d, "cfd", "walls_x"), "adiabatic") == 0,
                   .solver = strcmp(wf_deck_str(d, "cfd", "poisson"), "fft") == 0 ? CF_POISSON_FFT
                                                                                  : CF_POISSON_PCG};
  s->poisson = (st_opts){.rtol = wf_deck_real(d, "cfd", "poisson_rtol"),
                         .atol = 0,
                         .dtol = 1e10,
                         .max_its = (int)wf_deck_int(d, "cfd", "poisson_max_its"),
                         .precision = ST_DOUBLE,
                         .nonzero_guess = true,   /* the last stage's phi */
                         .ignore_signals = true}; /* the step loop stops, between steps */
  s->wafer_prec = strcmp(wf_deck_str(d, "cfd", "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  const char *init = wf_deck_str(d, "cfd", "init");
  if (strcmp(init, "auto") != 0 && strcmp(init, "mode") != 0)
    return wf_deck_fail(d, "cfd", "init", st,
                        "convection starts from the conduction state plus the onset mode "
                        "(init = mode or auto), not from '%s'",
                        init);
  if (s->nz < 2)
    return wf_deck_fail(d, "cfd", "nz", st, "%d cells across the layer: convection needs 2 or more",
                        s->nz);
  /* The PETSc comparison is asked for by name (no auto): absent, bad input. */
  if (strcmp(wf_deck_str(d, "cfd", "petsc"), "none") != 0 && wf_ref_petsc_absent())
    return wf_deck_fail(d, "cfd", "petsc", st, "PETSc is not available: %s (or set cfd.petsc = none)",
                        wf_ref_petsc_absent());
  return WF_OK;
}

/* Where the run keeps its checkpoints, and the last one written. */
typedef struct checkpoints {
  const char *path; /* '' = none */
  int every;        /* steps between them (0: only at the end) */
  int last_step;    /* -1: none written yet */
} checkpoints;

static int write_checkpoint(wf_run *run, cf_rb *rb, checkpoints *ck, const history *h,
                            const series *sr, int n, double t, wf_status *st) {
  /* A row a longer run would not measure stays out: the restart goes on
   * with the rows the uninterrupted run has. */
  unsigned long long rows = (unsigned long long)(h->n - h->last_off_cadence) * H_COLS,
                     snaps = 2 * (unsigned long long)sr->n;
  bool root = run->rank == 0;
  double none = 0;
  const wf_ckpt_var kept[2] = {
      {"history", WF_F64, h->rows, rows, 0, root ? rows : 0},
      {"snapshots", WF_F64, snaps ? sr->rows : &none, snaps, 0, root ? snaps : 0}};
  if (cf_rb_checkpoint_write(rb, run->comm, ck->path, run->state, n, t, kept, 2, st) != WF_OK)
    return st->code;
  ck->last_step = n;
  return WF_OK;
}

static int run_steps(wf_run *run, const conv_setup *s, cf_rb *rb, checkpoints *ck, series *sr,
                     history *h, conv_result *r, wf_status *st) {
  bool to_time = s->t_end > 0;
  int n = r->first_step;
  double t = r->t0, seconds = 0;
  long total = to_time ? 1000 : s->steps - r->first_step;
  wf_progress prog;
  wf_progress_start(&prog, "cfd", total, run->verbose, stdout);
  if (to_time) prog.unit = " thousandths of t_end"; /* not steps: dt adapts */
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  wf_fabric_main_begin(&run->wafer->fab);
  int rc = WF_OK;
  char where[200];
  cf_rb_stats stats = cf_rb_measure(rb);
  /* The start's row and snapshot; a restart's were taken by the run it continues. */
  if (!r->restarted && !conv_history_add(h, t, &stats))
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the history");
  if (rc == WF_OK && !r->restarted && sr->every > 0) rc = conv_snapshot(run, rb, sr, n, t, st);
  while (rc == WF_OK && (to_time ? t < s->t_end * (1 - 1e-12) : n < s->steps)) {
    int sig = wf_signal_poll_next(&poll);
    if (sig) {
      /* The state after step n is whole: keep it if the run keeps any. */
      if (ck->path[0] && (rc = write_checkpoint(run, rb, ck, h, sr, n, t, st)) != WF_OK) break;
      cf_ckpt_last_good(ck->path, ck->last_step, where, sizeof where);
      char at[260];
      snprintf(at, sizeof at, "at step %d (%s)", n, where);
      rc = wf_signal_fail(st, sig, at);
      break;
    }
    double limit = cf_rb_dt_limit(rb), dt = s->dt > 0 ? s->dt : s->cfl * limit;
    if (dt > limit) {
      rc = wf_fail(st, WF_ERR_RUNTIME,
                   "at step %d (t = %.6g) the fixed step %g exceeds the stable limit %.6g of the "
                   "flow as it now is: use a smaller dt, or dt = 0 for the adaptive step",
                   n, t, dt, limit);
      break;
    }
    if (to_time) dt = fmin(dt, s->t_end - t);
    double t0 = MPI_Wtime();
    if ((rc = cf_rb_step(rb, dt, st)) != WF_OK) break;
    seconds += MPI_Wtime() - t0;
    t += dt, n++;
    if (n == 10 && wf_fault("cfd_nan", run->comm)) /* the tests' blow-up */
      rb->f[CF_T][st_idx(rb->m, 0, 0, 0)] = NAN;
    bool last = to_time ? t >= s->t_end * (1 - 1e-12) : n == s->steps;
    bool at_checkpoint = ck->path[0] && ((ck->every > 0 && n % ck->every == 0) || last);
    if (n % s->every == 0 || last || at_checkpoint) {
      stats = cf_rb_measure(rb);
      if (!stats.finite) {
        cf_ckpt_last_good(ck->path, ck->last_step, where, sizeof where);
        rc = wf_fail(st, WF_ERR_RUNTIME,
                     "the flow is no longer finite after step %d (t = %.6g; %s)", n, t, where);
        break;
      }
      if ((n % s->every == 0 || last) && !conv_history_add(h, t, &stats)) {
        rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the history");
        break;
      }
      h->last_off_cadence = last && n % s->every != 0;
    }
    /* The snapshot first: the checkpoint lists it, and its restart does not take it again. */
    if (sr->every > 0 && n % sr->every == 0 && (rc = conv_snapshot(run, rb, sr, n, t, st)) != WF_OK)
      break;
    if (at_checkpoint && (rc = write_checkpoint(run, rb, ck, h, sr, n, t, st)) != WF_OK) break;
    r->dt_last = dt;
    wf_progress_tick(&prog, to_time ? (long)(1000 * t / s->t_end) : n - r->first_step);
  }
  wf_fabric_main_end(&run->wafer->fab, n - r->first_step);
  wf_signal_poll_end(&poll);
  r->steps = n - r->first_step, r->t = t, r->last = stats;
  r->seconds = wf_slowest(run->comm, seconds);
  return rc;
}

/* ---- the pressure solve against PETSc ---- */

typedef struct petsc_cmp {
  bool done;
  const char *pc;      /* "jacobi" or "gamg" */
  double ours, theirs; /* seconds a solve: medians of 3 */
  int our_its, their_its;
  double rel_diff; /* ||phi_ours - phi_petsc|| / ||phi_petsc|| */
  char reason[64];
} petsc_cmp;

/* The system a step solves, from the run's last state: ours (the run's
 * solver, PCG from zero) and PETSc's KSPCG with Jacobi or GAMG on the same
 * matrix (AIJ, the constants as its null space), to the same rtol; setup
 * (GAMG's coarsening) outside the timing, as a run would amortise it. */
static int compare_petsc(wf_run *run, cf_rb *rb, const conv_setup *s, double dt, petsc_cmp *pc,
                         wf_status *st) {
  const st_mesh *m = rb->m;
  double *b = st_field_alloc(m), *phi = st_field_alloc(m);
  int failed = !b || !phi;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  st_op own = {0};
  const st_op *op = &rb->poisson;
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory for the PETSc comparison") : WF_OK;
  if (rc == WF_OK && rb->solver == CF_POISSON_FFT) { /* PETSc needs the matrix */
    const bool periodic[3] = {true, true, false};
    const st_coef_spec laplacian = {
        .kind = "smooth", .contrast = 1, .neumann = {false, false, true}};
    rc = st_op_create(&own, m, &run->wafer->fab, periodic, &laplacian, st);
    op = &own;
  }
  if (rc == WF_OK) {
    cf_rb_sample_rhs(rb, dt, b);
    double t[3];
    for (int r = 0; r < 3 && rc == WF_OK; r++) {
      MPI_Barrier(run->comm);
      double t0 = MPI_Wtime();
      rc = cf_rb_poisson_solve(rb, b, phi, &pc->our_its, st);
      t[r] = wf_slowest(run->comm, MPI_Wtime() - t0);
    }
    pc->ours = wf_median(t, 3);
    /* The solution is defined up to a constant (the null space): PETSc's
     * has mean zero; Jacobi-PCG's drifts by one. Compare the mean-free. */
    double sum = 0;
    for (int j = 0; j < m->lny; j++)
      for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++) sum += phi[c];
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, run->comm);
    for (int j = 0; j < m->lny; j++)
      for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++)
        phi[c] -= sum / (double)m->n_global;
  }
  char options[128];
  snprintf(options, sizeof options, "-ksp_constant_null_space%s",
           strcmp(pc->pc, "gamg") == 0 ? " -pc_type gamg" : "");
  const st_opts o = {.rtol = s->poisson.rtol,
                     .atol = 0,
                     .dtol = 1e10,
                     .max_its = s->poisson.max_its,
                     .precision = ST_DOUBLE};
  double t[3];
  for (int r = 0; r < 3 && rc == WF_OK; r++) {
    st_petsc_result pr;
    rc = st_petsc_check(op, ST_PCG, b, phi, &o, options, &pr, st);
    t[r] = wf_slowest(run->comm, pr.seconds);
    pc->their_its = pr.its, pc->rel_diff = pr.rel_diff;
    snprintf(pc->reason, sizeof pc->reason, "%s", pr.reason);
  }
  if (rc == WF_OK) pc->theirs = wf_median(t, 3), pc->done = true;
  if (op == &own) st_op_free(&own);
  free(b), free(phi);
  return rc;
}

static void report_petsc(wf_run *run, const petsc_cmp *pc) {
  wf_report rep;
  wf_report_open(&rep, run, "cfd");
  wf_report_begin(&rep, "petsc");
  wf_report_line(&rep, "a Poisson solve");
  wf_report_num(&rep, "our_seconds_per_solve", pc->ours, "ours %.4g s");
  wf_report_int(&rep, "our_iterations", pc->our_its, "%d iterations");
  wf_report_str(&rep, "pc", pc->pc, "PETSc KSPCG + %s");
  wf_report_num(&rep, "seconds_per_solve", pc->theirs, "%.4g s");
  wf_report_int(&rep, "iterations", pc->their_its, "%d iterations");
  wf_report_str(&rep, "reason", pc->reason, "%s");
  wf_report_num(&rep, "ratio", pc->ours / pc->theirs, "ratio %.3f");
  wf_report_num(&rep, "solution_rel_diff", pc->rel_diff, "solutions %.2e apart");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

/* ---- the wafer model ---- */

/* One step on the wafer, per PE: three stages, each the right-hand sides
 * (per cell about 70 additions and 50 multiplies or FMACs over the four
 * fields and their neighbours, operands from SRAM), the divergence and the
 * correction (about 12 operations), the Poisson solve (PCG: its measured
 * iterations, each as the stencil solvers' PCG iteration on a stored
 * 7-point operator; FFT: a forward and a backward pencil FFT of the
 * even-extended box, as ff_model projects the FFT workload's), and five
 * halo exchanges (the four fields and phi). */
static void project_model(wf_run *run, const st_mesh *m, const conv_setup *s, const cf_rb *rb) {
  const wf_hw *hw = run->wafer->fab.hw;
  const wf_grid *g = run->wafer->fab.grid;
  double cells = (double)m->brick_x * m->brick_y * m->nz;
  wf_range add = wf_model_vec(hw, WF_OP_ADD, s->wafer_prec, 82 * cells, 2, 1);
  wf_range mul = wf_model_vec(hw, WF_OP_FMAC, s->wafer_prec, 50 * cells, 2, 1);
  st_model it =
      st_model_iteration(hw, g, m->brick_x, m->brick_y, m->nz, ST_PCG, true, s->wafer_prec);
  double its = rb->solves ? (double)rb->poisson_its / rb->solves : 0;
  wf_range solve = {its * it.cycles.lo, its * it.cycles.hi};
  double solve_flops = its * it.flops_per_cell * (double)m->n_global;
  int arrays = it.arrays;
  if (rb->solver == CF_POISSON_FFT) { /* forward and backward, nx x ny x 2 nz complex */
    const int n[3] = {m->nx, m->ny, 2 * m->nz};
    ff_model fm =
        ff_model_transform(hw, g, run->wafer->dc.pe_nx, run->wafer->dc.pe_ny, n, 3, s->wafer_prec);
    solve = (wf_range){2 * fm.cycles.lo, 2 * fm.cycles.hi};
    solve_flops = 2 * fm.flops;
    arrays = 4; /* the doubled complex column, and the transposes' buffer */
  }
  wf_range halo = wf_range_scale(st_op_halo_cycles(m, hw, g), 5);
  wf_range stage = wf_range_add(wf_range_add(add, mul), wf_range_add(solve, halo));
  wf_range cycles = {3 * stage.lo, 3 * stage.hi};
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(hw, cycles),
                               .flops = 3 * (132 * (double)m->n_global + solve_flops),
                               .bytes_per_pe = (14 + arrays) * cells * wf_prec_bytes(s->wafer_prec),
                               .sram_for_data = wf_model_sram_for_data(hw),
                               .pes_needed = (double)run->wafer->dc.pe_nx * run->wafer->dc.pe_ny,
                               .pes_offered = (double)hw->pe_nx * hw->pe_ny};
}

/* ---- the run ---- */

/* The state to start from: the checkpoint's (and its history) on a
 * restart, else conduction plus the onset mode, whose fixed step must be
 * stable. */
static int start(wf_run *run, const conv_setup *s, cf_rb *rb, history *h, conv_result *r,
                 wf_status *st) {
  const wf_deck *d = run->deck;
  const char *restart = wf_deck_str(d, "cfd", "restart");
  if (!restart[0]) {
    cf_rb_init(rb, s->amplitude);
    double limit = cf_rb_dt_limit(rb); /* at rest: diffusion's */
    if (s->dt > limit)
      return wf_deck_fail(d, "cfd", "dt", st,
                          "%g violates the stability limit of the explicit scheme (SSP-RK3, "
                          "diffusion at Pr = %g): dt <= %.6g thermal times at nz = %d, less as "
                          "the flow speeds up",
                          s->dt, s->pr, limit, s->nz);
    return WF_OK;
  }
  long long step = 0;
  int rc = cf_rb_checkpoint_read(rb, run->comm, restart, &step, &r->t0, st);
  if (rc == WF_OK) rc = conv_history_read(run->comm, restart, step, h, st);
  r->restarted = true;
  r->first_step = (int)step;
  if (rc != WF_OK && st->code == WF_ERR_INPUT) return wf_deck_blame(d, "cfd", "restart", st);
  if (rc == WF_OK && (s->t_end > 0 ? r->t0 >= s->t_end : step >= s->steps))
    return wf_deck_fail(d, "cfd", "restart", st,
                        "the checkpoint is at step %lld, t = %.6g: nothing to run (cfd.steps or "
                        "cfd.t_end is where the whole run ends)",
                        step, r->t0);
  return rc;
}

/* The time series beside output.file, and a restart's snapshots so far. */
static int open_series(wf_run *run, series *sr, const conv_result *r, wf_status *st) {
  const wf_deck *d = run->deck;
  const char *out = wf_deck_str(d, "output", "file"), *restart = wf_deck_str(d, "cfd", "restart");
  sr->every = (int)wf_deck_int(d, "cfd", "snapshot_every");
  if (sr->every <= 0) return WF_OK;
  if (!out[0])
    return wf_deck_fail(d, "cfd", "snapshot_every", st,
                        "a time series needs output.file: its snapshots go beside it");
  conv_series_base(out, sr->base, sizeof sr->base);
  if (restart[0] && conv_read_series(run, restart, sr, r->first_step, st) != WF_OK)
    return wf_deck_blame(d, "cfd", "restart", st);
  return WF_OK;
}

/* The checks, the PETSc comparison's, the model, the report, the files. */
static int conclude(wf_run *run, const conv_setup *s, cf_rb *rb, const history *h,
                    const conv_result *r, const petsc_cmp *pc, wf_status *st) {
  conv_findings f;
  f.heat_budget = cf_rb_heat_budget(rb);
  if (cf_rb_check_truncation(rb, &f.truncation, st) != WF_OK) return st->code;
  conv_check(run, s, rb, h, &f);
  if (pc->done) {
    char what[200];
    snprintf(what, sizeof what,
             "the pressure's Poisson solve against PETSc's (KSPCG, %s): %.2e relative (allowed "
             "1e-6)",
             pc->pc, pc->rel_diff);
    wf_run_check(run, pc->rel_diff <= 1e-6, what);
  }
  project_model(run, rb->m, s, rb);
  conv_report(run, s, rb, r, &f, h);
  if (pc->done) report_petsc(run, pc);
  run->seconds = r->seconds;
  run->wafer_seconds = wf_range_scale(run->model.seconds, r->steps);
  const char *out = wf_deck_str(run->deck, "output", "file");
  const char *png = wf_deck_str(run->deck, "cfd", "plot");
  if (out[0] && conv_write_output(run, rb, h, r, out, st) != WF_OK) return st->code;
  if (png[0] && conv_plot(run, rb, h, png, st) != WF_OK) return st->code;
  return WF_OK;
}

int cfd_convection_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  conv_setup s;
  if (read_setup(d, &s, st) != WF_OK) return st->code;
  st_mesh m;
  if (st_mesh_create(&m, run->wafer, s.nx, s.ny, s.nz, st) != WF_OK)
    return wf_deck_blame(d, "cfd", "nx", st);
  cf_rb rb;
  const cf_rb_params params = {
      .ra = s.ra, .pr = s.pr, .side_walls = s.side_walls, .solver = s.solver, .pcg = s.poisson};
  int rc = cf_rb_create(&rb, &m, &run->wafer->fab, &params, st);
  if (rc != WF_OK && st->code == WF_ERR_INPUT)
    rc = wf_deck_blame(d, "cfd", s.solver == CF_POISSON_FFT && s.side_walls ? "poisson" : "nx", st);
  history h = {0};
  conv_result r = {0};
  series sr = {0};
  checkpoints ck = {wf_deck_str(d, "cfd", "checkpoint"),
                    (int)wf_deck_int(d, "cfd", "checkpoint_every"), -1};
  petsc_cmp pc = {.pc = wf_deck_str(d, "cfd", "petsc")};
  if (rc == WF_OK) rc = start(run, &s, &rb, &h, &r, st);
  if (rc == WF_OK) rc = open_series(run, &sr, &r, st);
  if (rc == WF_OK) rc = run_steps(run, &s, &rb, &ck, &sr, &h, &r, st);
  wf_status_agree(run->comm, st);
  rc = st->code;
  if (rc == WF_OK && strcmp(pc.pc, "none") != 0)
    rc = compare_petsc(run, &rb, &s, r.dt_last > 0 ? r.dt_last : cf_rb_dt_limit(&rb), &pc, st);
  if (rc == WF_OK) rc = conclude(run, &s, &rb, &h, &r, &pc, st);
  free(h.rows), free(sr.rows);
  cf_rb_free(&rb);
  return rc;
}
