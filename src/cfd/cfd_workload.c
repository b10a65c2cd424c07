/* `wafer cfd` (cfd_workload.h): stencil CFD on the PE grid. The [cfd]
 * section's keys, the dispatch to its three problems (the SC22 wave stencil:
 * cfd_wave_run.c; Rayleigh-Benard convection: cfd_convection.c) and the
 * explicit heat equation, checked against its analytic decay rate. */
#include "cfd_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_heat.h"
#include "cf_wave.h"
#include "cfd_convection.h"
#include "cfd_parts.h"
#include "st_mesh.h"
#include "st_petsc.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_timing.h"

static const wf_key cfd_keys[] = {
    {"problem", WF_KEY_CHOICE, "wave", 0, 0, "wave|heat|convection",
     "wave: the SC22 acoustic wave stencil; heat: the explicit heat equation; convection: "
     "Rayleigh-Benard convection (Boussinesq, MAC grid, projection)",
     NULL},
    {"nx", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in x (over the PE grid)", NULL},
    {"ny", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in y (over the PE grid)", NULL},
    {"nz", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in z (in PE memory)", NULL},
    {"h", WF_KEY_REAL, "10", 1e-9, 1e9, NULL, "cell size, m", NULL},
    {"velocity", WF_KEY_REAL, "2000", 1e-9, 1e9, NULL, "sound speed, m/s", NULL},
    {"steps", WF_KEY_INT, "300", 1, 1e9, NULL, "time steps", NULL},
    {"cfl", WF_KEY_REAL, "0.5", 1e-6, 1, NULL,
     "time step as a fraction of the largest stable one (when dt = 0)", NULL},
    {"dt", WF_KEY_REAL, "0", 0, 1e9, NULL,
     "fixed time step, s (0: cfl x the stable limit); above the limit is an error", NULL},
    {"bc", WF_KEY_CHOICE, "absorbing", 0, 0, "absorbing|free",
     "faces: free (pressure release, energy conserving) or absorbing (free behind a sponge)", NULL},
    {"sponge", WF_KEY_INT, "16", 1, 1e6, NULL, "absorbing: cells of the damping layer (the wave's; heat and convection ignore it)", NULL},
    {"init", WF_KEY_CHOICE, "auto", 0, 0, "auto|source|mode|gaussian",
     "source (wave): a Ricker wavelet and a line of receivers; mode: the slowest mode (wave: its "
     "measured eigenvalue; heat: its decay); gaussian: a bump at rest (wave: its energy); auto: "
     "source for wave, mode for heat",
     NULL},
    {"f0", WF_KEY_REAL, "12", 1e-9, 1e9, NULL, "source: Ricker peak frequency, Hz (the wave's; heat and convection ignore it)", NULL},
    {"source_x", WF_KEY_INT, "-1", -1, 1e6, NULL, "source cell in x (-1: the middle)", NULL},
    {"source_y", WF_KEY_INT, "-1", -1, 1e6, NULL, "source cell in y (-1: the middle)", NULL},
    {"source_z", WF_KEY_INT, "-1", -1, 1e6, NULL, "source cell in z (-1: a quarter down)", NULL},
    {"receiver_z", WF_KEY_INT, "-1", -1, 1e6, NULL,
     "depth of the receivers, a line along x through the source's y (-1: the source's z)", NULL},
    {"energy_every", WF_KEY_INT, "10", 1, 1e9, NULL,
     "steps between energy (wave) or Nusselt and kinetic energy (convection) measurements", NULL},
    {"gather_plot", WF_KEY_OUTPUT, "", 0, 0, NULL, "source: PNG of the shot gather ('' = none)",
     NULL},
    {"stream", WF_KEY_BOOL, "true", 0, 0, NULL,
     "measure STREAM triad, to report the fraction of it the stencil reaches", NULL},
    {"kernel", WF_KEY_CHOICE, "auto", 0, 0, "auto|avx512|avx2|generic",
     "wave: the update's variant (auto: the best this CPU runs; all give the same bits)", NULL},
    {"wafer_precision", WF_KEY_CHOICE, "fp32", 0, 0, "fp16|fp32",
     "precision of the wavefield in the wafer model (SC22: fp32)", NULL},
    {"kappa", WF_KEY_REAL, "1e-4", 1e-300, 1e300, NULL, "heat: diffusivity, m^2/s", NULL},
    {"bc_x", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|neumann|periodic|mixed",
     "heat: boundary in x (mixed: Dirichlet at the low face, Neumann at the high)", NULL},
    {"bc_y", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|neumann|periodic|mixed",
     "heat: boundary in y", NULL},
    {"bc_z", WF_KEY_CHOICE, "dirichlet", 0, 0, "dirichlet|neumann|periodic|mixed",
     "heat: boundary in z", NULL},
    {"ra", WF_KEY_REAL, "1e4", 0, 1e12, NULL, "convection: Rayleigh number", NULL},
    {"pr", WF_KEY_REAL, "0.71", 1e-6, 1e6, NULL, "convection: Prandtl number", NULL},
    {"t_end", WF_KEY_REAL, "0", 0, 1e9, NULL,
     "convection: run up to this time, in thermal diffusion times (0: `steps` steps)", NULL},
    {"perturbation", WF_KEY_REAL, "1e-3", 0, 1, NULL,
     "convection: amplitude of the initial temperature perturbation, cos(2 pi x / Lx) sin(pi z) "
     "(between side walls cos(pi x / Lx) sin(pi z): one roll)",
     NULL},
    {"walls_x", WF_KEY_CHOICE, "periodic", 0, 0, "periodic|adiabatic",
     "convection: x periodic, or bounded by no-slip adiabatic walls (the square cavity of the "
     "published 2D benchmarks)",
     NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "convection: PNG of the temperature in the x-z plane through the middle of y, and of the "
     "Nusselt numbers in time ('' = none)",
     NULL},
    {"snapshot_every", WF_KEY_INT, "0", 0, 1e9, NULL,
     "convection: steps between snapshots of the fields, a time series beside output.file "
     "(out_NNNNNN.h5, and out_series.xmf for ParaView; 0: none)",
     NULL},
    {"checkpoint", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "convection and wave: HDF5 checkpoint, rewritten every checkpoint_every steps, at the end "
     "and on SIGTERM or SIGINT ('' = none)",
     wf_key_hdf5},
    {"checkpoint_every", WF_KEY_INT, "0", 0, 1e9, NULL,
     "convection and wave: steps between checkpoints (0: only at the end)", NULL},
    {"restart", WF_KEY_INPUT, "", 0, 0, NULL,
     "convection and wave: continue from this checkpoint (same deck, ranks and grids; steps or "
     "t_end stays where the whole run ends)",
     wf_key_hdf5},
    {"poisson", WF_KEY_CHOICE, "pcg", 0, 0, "pcg|fft",
     "convection: the pressure's solve, Jacobi-PCG (the stencil solvers') or exact by FFT (the "
     "pencil FFT; the walls in z by even extension; x periodic)",
     NULL},
    {"petsc", WF_KEY_CHOICE, "none", 0, 0, "none|jacobi|gamg",
     "convection: after the run, solve its Poisson system with PETSc's KSPCG too (Jacobi or "
     "GAMG) and compare solution and time",
     NULL},
    {"poisson_rtol", WF_KEY_REAL, "1e-10", 1e-15, 0.1, NULL,
     "convection: relative tolerance of the pressure's PCG solve", NULL},
    {"poisson_max_its", WF_KEY_INT, "20000", 1, 1e9, NULL,
     "convection: iteration limit of the pressure's PCG solve", NULL},
    {"model_counts", WF_KEY_CHOICE, "ours", 0, 0, "ours|sc22",
     "kernel in the wafer model: this code's stencil on each PE's brick, or SC22's kernel as "
     "Cerebras published it (one column a PE; docs/model.md)",
     NULL},
    {"model_only", WF_KEY_BOOL, "false", 0, 0, NULL,
     "only project the steps onto the wafer (no fields): for meshes too big here", NULL},
};
static const wf_section cfd_section = {
    "cfd",
    "Stencil CFD on the PE grid: the SC22 acoustic wave stencil, the heat equation, "
    "Rayleigh-Benard convection.",
    cfd_keys, (int)(sizeof cfd_keys / sizeof cfd_keys[0]),
    "restart",
    "steps stream kernel wafer_precision snapshot_every checkpoint_every petsc model_counts model_only"};
static const wf_section *const cfd_sections[] = {&cfd_section};

static int read_setup(const wf_deck *d, cfd_setup *s, wf_status *st) {
  s->nx = (int)wf_deck_int(d, "cfd", "nx");
  s->ny = (int)wf_deck_int(d, "cfd", "ny");
  s->nz = (int)wf_deck_int(d, "cfd", "nz");
  s->h = wf_deck_real(d, "cfd", "h");
  s->v = wf_deck_real(d, "cfd", "velocity");
  s->steps = (int)wf_deck_int(d, "cfd", "steps");
  s->cfl = wf_deck_real(d, "cfd", "cfl");
  s->dt = wf_deck_real(d, "cfd", "dt");
  s->free_faces = strcmp(wf_deck_str(d, "cfd", "bc"), "free") == 0;
  s->sponge = s->free_faces ? 0 : (int)wf_deck_int(d, "cfd", "sponge");
  const char *init = wf_deck_str(d, "cfd", "init");
  bool heat = strcmp(wf_deck_str(d, "cfd", "problem"), "heat") == 0;
  s->init = strcmp(init, "mode") == 0 || (heat && strcmp(init, "auto") == 0) ? CFD_INIT_MODE
            : strcmp(init, "gaussian") == 0                                  ? CFD_INIT_GAUSSIAN
                                                                             : CFD_INIT_SOURCE;
  s->f0 = wf_deck_real(d, "cfd", "f0");
  const char *keys[3] = {"source_x", "source_y", "source_z"};
  int n[3] = {s->nx, s->ny, s->nz}, def[3] = {s->nx / 2, s->ny / 2, s->nz / 4};
  for (int a = 0; a < 3; a++) {
    long long v = wf_deck_int(d, "cfd", keys[a]);
    s->src[a] = v < 0 ? def[a] : (int)v;
    if (s->src[a] >= n[a])
      return wf_deck_fail(d, "cfd", keys[a], st, "cell %d is outside the mesh (0 .. %d)", s->src[a],
                          n[a] - 1);
  }
  long long rz = wf_deck_int(d, "cfd", "receiver_z");
  s->receiver_z = rz < 0 ? s->src[2] : (int)rz;
  if (s->receiver_z >= s->nz)
    return wf_deck_fail(d, "cfd", "receiver_z", st, "cell %d is outside the mesh (0 .. %d)",
                        s->receiver_z, s->nz - 1);
  s->energy_every = (int)wf_deck_int(d, "cfd", "energy_every");
  s->wafer_prec = strcmp(wf_deck_str(d, "cfd", "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  s->sc22_kernel = strcmp(wf_deck_str(d, "cfd", "model_counts"), "sc22") == 0;
  s->kernel = wf_deck_str(d, "cfd", "kernel");
  if (heat) return WF_OK; /* its time step: heat_run */
  double limit = cf_dt_max(s->h, s->v);
  if (s->dt > limit)
    return wf_deck_fail(d, "cfd", "dt", st,
                        "%g s violates the CFL condition: the 25-point leapfrog scheme is stable "
                        "up to %.6g s for h = %g m and v = %g m/s",
                        s->dt, limit, s->h, s->v);
  if (s->dt == 0) s->dt = s->cfl * limit;
  return WF_OK;
}

/* A signal caught before step n: the run stops there (collective). */
static int signalled(wf_signal_poll *poll, int n, int steps, const char *problem, wf_status *st) {
  int sig = wf_signal_poll_next(poll);
  if (!sig) return WF_OK;
  char where[96];
  snprintf(where, sizeof where, "at step %d of %d (no checkpoint: the %s run keeps none)", n, steps,
           problem);
  return wf_signal_fail(st, sig, where);
}

/* ---- the heat equation ---- */

static cf_bc read_bc(const wf_deck *d, const char *key) {
  const char *v = wf_deck_str(d, "cfd", key);
  return strcmp(v, "neumann") == 0    ? CF_NEUMANN
         : strcmp(v, "periodic") == 0 ? CF_PERIODIC
         : strcmp(v, "mixed") == 0    ? CF_MIXED
                                      : CF_DIRICHLET;
}

typedef struct heat_result {
  int steps;
  double seconds, dt, r;
  double amplitude, expected;  /* mode: <u^N, phi> / <phi, phi>, and (1 - r s)^N */
  double rate, rate_continuum; /* mode: measured and analytic decay rates, 1/s */
} heat_result;

/* One step on the wafer per PE: the brick's cells, 6 neighbour adds and an
 * FMAC each (operands from SRAM), then a 1-column halo. */
static void project_heat(wf_run *run, const st_mesh *m, const cfd_setup *s) {
  const wf_hw *hw = run->wafer->fab.hw;
  double cells = (double)m->brick_x * m->brick_y * m->nz;
  wf_range add = wf_model_vec(hw, WF_OP_ADD, s->wafer_prec, 6 * cells, 2, 1);
  wf_range fmac = wf_model_vec(hw, WF_OP_FMAC, s->wafer_prec, cells, 2, 1);
  wf_range halo = wf_model_brick_halo_cycles(hw, &run->wafer->grid, m->brick_x, m->brick_y,
                                             m->nz, 1, (size_t)wf_prec_bytes(s->wafer_prec));
  wf_range cycles = wf_range_add(wf_range_add(add, fmac), halo);
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(hw, cycles),
                               .flops = 8.0 * m->n_global,
                               .bytes_per_pe = 2 * cells * wf_prec_bytes(s->wafer_prec),
                               .sram_for_data = wf_model_sram_for_data(hw),
                               .pes_needed = (double)run->wafer->dc.pe_nx * run->wafer->dc.pe_ny,
                               .pes_offered = (double)hw->pe_nx * hw->pe_ny};
}

static int heat_steps(wf_run *run, const cfd_setup *s, const st_mesh *m, cf_heat *h, double **cur,
                      double **next, heat_result *r, wf_status *st) {
  wf_progress prog;
  wf_progress_start(&prog, "cfd", s->steps, run->verbose, stdout);
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  wf_fabric_main_begin(&run->wafer->fab);
  int rc = WF_OK;
  double seconds = 0;
  long done = 0;
  for (int n = 0; n < s->steps && rc == WF_OK; n++) {
    if ((rc = signalled(&poll, n, s->steps, "heat", st)) != WF_OK) break;
    double t0 = MPI_Wtime();
    cf_heat_step(h, *cur, *next, r->r);
    seconds += MPI_Wtime() - t0;
    done++;
    double *t = *cur;
    *cur = *next, *next = t;
    if ((n + 1) % 50 == 0 || n + 1 == s->steps) {
      if (!cfd_all_finite(m, &run->wafer->fab, *cur)) {
        rc = wf_fail(st, WF_ERR_RUNTIME, "the temperature is no longer finite after step %d of %d",
                     n + 1, s->steps);
        break;
      }
    }
    wf_progress_tick(&prog, n + 1);
  }
  wf_fabric_main_end(&run->wafer->fab, done);
  wf_signal_poll_end(&poll);
  r->seconds = wf_slowest(run->comm, seconds);
  r->steps = s->steps;
  return rc;
}

/* The slowest mode's amplitude after the run against the scheme's closed
 * form, (1 - r s)^N, and its decay rate against the continuum's (phi: the
 * initial field, that mode). */
static void check_mode(wf_run *run, const cfd_setup *s, const st_mesh *m, const cf_bc bc[3],
                       double kappa, const double *u, const double *phi, heat_result *r) {
  const int n[3] = {m->nx, m->ny, m->nz};
  r->amplitude = cfd_mesh_dot(m, &run->wafer->fab, u, phi) / cfd_mesh_dot(m, &run->wafer->fab, phi, phi);
  double sym = 0, k2 = 0;
  for (int a = 0; a < 3; a++) {
    double th = cf_heat_theta(bc[a], n[a]);
    sym += 2 - 2 * cos(th), k2 += th * th;
  }
  r->expected = pow(1 - r->r * sym, r->steps);
  r->rate = -log(r->amplitude) / (r->steps * r->dt);
  r->rate_continuum = kappa * k2 / (s->h * s->h);
  double rel = fabs(r->amplitude - r->expected) / r->expected;
  char what[200];
  snprintf(what, sizeof what,
           "the slowest mode's amplitude after %d steps against the scheme's closed form: "
           "%.2e relative (allowed 1e-10)",
           r->steps, rel);
  wf_run_check(run, rel <= 1e-10, what);
}

/* The run's lines, its JSON summary and headline. */
static void report_heat(wf_run *run, const cfd_setup *s, const st_mesh *m, const heat_result *r) {
  double updates = (double)m->n_global * r->steps / r->seconds;
  wf_report rep;
  wf_report_open(&rep, run, "cfd");
  wf_report_begin(&rep, "cfd");
  wf_report_line(&rep, NULL);
  wf_report_str(&rep, "problem", "heat", "%s");
  long long cells[3] = {s->nx, s->ny, s->nz};
  wf_report_ints(&rep, "cells", cells, 3, "%d cells");
  wf_report_num(&rep, NULL, r->r, "kappa dt / h^2 = %.4f");
  wf_report_int(&rep, "steps", r->steps, "%d steps");
  wf_report_num(&rep, "dt", r->dt, "dt %.4g");
  wf_report_num(&rep, "seconds_per_step", r->seconds / r->steps, "%.3g s/step");
  wf_report_scaled(&rep, "cell_updates_per_s", updates, 1e-6, "%.1f Mcell/s");
  if (s->init == CFD_INIT_MODE) {
    wf_report_line(&rep, "slowest mode");
    wf_report_num(&rep, "amplitude", r->amplitude, "amplitude %.12g");
    wf_report_num(&rep, "amplitude_expected", r->expected, "the scheme's %.12g");
    wf_report_num(&rep, "decay_rate", r->rate, "decay rate %.6g 1/s");
    wf_report_num(&rep, "decay_rate_continuum", r->rate_continuum, "the continuum's %.6g");
    wf_report_num(&rep, "decay_rate_error",
                  fabs(r->rate - r->rate_continuum) / r->rate_continuum,
                  "relative error %.3e");
  }
  wf_report_end(&rep);
  wf_report_model(&rep, &run->model);
  wf_report_end(&rep);
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "heat %dx%dx%d, %d steps, %.1f Mcell/s", s->nx,
           s->ny, s->nz, r->steps, updates / 1e6);
}

/* The final temperature to [output] file, if one is named (collective). */
static int write_heat(wf_run *run, const st_mesh *m, const double *u, double dt, wf_status *st) {
  const char *out = wf_deck_str(run->deck, "output", "file");
  if (!out[0]) return WF_OK;
  wf_h5file f;
  int rc = wf_run_h5_create(run, out, &f, st);
  if (rc != WF_OK) return rc;
  if (wf_h5_reserve(&f, 8.0 * (double)m->n_global, st) != WF_OK ||
      st_mesh_write_field(&f, m, "u", u, st) != WF_OK || wf_h5_attr_num(&f, "dt", dt, st) != WF_OK)
    rc = st->code;
  return wf_h5_finish(&f, rc, st);
}

static int heat_run(wf_run *run, const cfd_setup *s, wf_status *st) {
  const wf_deck *d = run->deck;
  cf_bc bc[3] = {read_bc(d, "bc_x"), read_bc(d, "bc_y"), read_bc(d, "bc_z")};
  double kappa = wf_deck_real(d, "cfd", "kappa");
  if (s->init == CFD_INIT_SOURCE)
    return wf_deck_fail(d, "cfd", "init", st,
                        "the heat problem has no source: init = mode (the slowest mode, checked "
                        "against its decay) or gaussian");
  double limit = s->h * s->h / (6 * kappa); /* r = kappa dt / h^2 <= 1/6 */
  double dt = wf_deck_real(d, "cfd", "dt");
  if (dt > limit)
    return wf_deck_fail(d, "cfd", "dt", st,
                        "%g s violates the stability limit of the explicit heat scheme: kappa dt / "
                        "h^2 <= 1/6, dt <= %.6g s for h = %g m and kappa = %g m^2/s",
                        dt, limit, s->h, kappa);
  heat_result r = {.dt = dt > 0 ? dt : s->cfl * limit};
  r.r = kappa * r.dt / (s->h * s->h);
  st_mesh m;
  if (st_mesh_create(&m, run->wafer, s->nx, s->ny, s->nz, st) != WF_OK)
    return wf_deck_blame(d, "cfd", "nx", st);
  if (wf_deck_bool(d, "cfd", "model_only")) {
    project_heat(run, &m, s);
    run->wafer_seconds = run->model.seconds;
    return WF_OK;
  }
  cf_heat h;
  double *cur = st_field_alloc(&m), *next = st_field_alloc(&m), *phi = st_field_alloc(&m);
  int failed = !cur || !next || !phi;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory for the temperature") : WF_OK;
  if (rc == WF_OK && cf_heat_create(&h, &m, &run->wafer->fab, bc, st) != WF_OK)
    rc = wf_deck_blame(d, "cfd", "nx", st);
  if (rc == WF_OK) {
    cfd_initial_field(&m, s, bc, cur);
    memcpy(phi, cur, m.n_stored * sizeof *phi);
    rc = heat_steps(run, s, &m, &h, &cur, &next, &r, st);
    if (rc == WF_OK && s->init == CFD_INIT_MODE) check_mode(run, s, &m, bc, kappa, cur, phi, &r);
  }
  wf_status_agree(run->comm, st);
  rc = st->code;
  if (rc == WF_OK) {
    project_heat(run, &m, s);
    run->seconds = r.seconds;
    run->wafer_seconds = wf_range_scale(run->model.seconds, r.steps);
    report_heat(run, s, &m, &r);
    rc = write_heat(run, &m, cur, r.dt, st);
  }
  if (!failed) cf_heat_free(&h);
  free(cur), free(next), free(phi);
  return rc;
}

/* Whether a key applies to `problem`, by the prefix its help gives ("heat:",
 * "convection:", "convection and wave:"; none: every problem). */
static bool applies(const wf_key *k, const char *problem) {
  if (strncmp(k->help, "heat:", 5) == 0) return strcmp(problem, "heat") == 0;
  if (strncmp(k->help, "convection:", 11) == 0) return strcmp(problem, "convection") == 0;
  if (strncmp(k->help, "convection and wave:", 20) == 0) return strcmp(problem, "heat") != 0;
  return true;
}

/* A key given (in the deck or by --set) that the chosen problem does not
 * read would be ignored in silence (a heat run asked for a checkpoint, a
 * restart or a plot): bad input. */
static int check_problem_keys(const wf_deck *d, wf_status *st) {
  const char *problem = wf_deck_str(d, "cfd", "problem");
  for (int i = 0; i < cfd_section.nkeys; i++) {
    const wf_key *k = &cfd_keys[i];
    if (strcmp(wf_deck_entry(d, "cfd", k->name)->source, "default") != 0 && !applies(k, problem))
      return wf_deck_fail(d, "cfd", k->name, st,
                          "the %s problem does not use this key (%.*s), and would ignore it",
                          problem, (int)(strchr(k->help, ':') - k->help), k->help);
  }
  return WF_OK;
}

static int cfd_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  if (check_problem_keys(d, st) != WF_OK) return st->code;
  if (strcmp(wf_deck_str(d, "cfd", "problem"), "convection") == 0)
    return cfd_convection_run(run, st);
  cfd_setup s;
  if (read_setup(d, &s, st) != WF_OK) return st->code;
  if (strcmp(wf_deck_str(d, "cfd", "problem"), "heat") == 0) return heat_run(run, &s, st);
  /* the wave's kernel, on every rank's CPU (a mixed allocation may lack
   * it on some), before any work */
  if (!cf_wave_kernel_runs(s.kernel))
    wf_deck_fail(d, "cfd", "kernel", st,
                 "this CPU (or build) does not run the %s kernel (auto picks the best that does)",
                 s.kernel);
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  return cfd_wave_run(run, &s, st);
}

/* `wafer demo`'s second cfd run: 2D convection at Ra = 10^4 from the onset
 * mode, a few hundred steps (its projections' divergence checked). */
static const char *const convection_demo[] = {"cfd.problem=convection",
                                              "wafer.pe_grid=8x1",
                                              "cfd.nx=32",
                                              "cfd.ny=1",
                                              "cfd.nz=16",
                                              "cfd.ra=1e4",
                                              "cfd.steps=300",
                                              "cfd.poisson=fft",
                                              NULL};

const wf_workload wf_cfd_workload = {
    .name = "cfd",
    .help =
        "stencil CFD on the PE grid: the SC22 acoustic wave stencil, the heat equation, "
        "Rayleigh-Benard convection",
    .sections = cfd_sections,
    .nsections = 1,
    .run = cfd_run,
    .claim_files = cfd_convection_claim_files,
    .finalize = st_petsc_finalize, /* convection's petsc comparison */
    .demo_variant = convection_demo,
};
