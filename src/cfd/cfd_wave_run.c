/* `wafer cfd`'s wave problem (cfd_parts.h): the SC22 acoustic wave stencil
 * (cf_wave.h) from a Ricker source with a line of receivers (a shot gather,
 * HDF5 and PNG), a standing mode whose measured eigenvalue shows the
 * stencil's order, or a Gaussian bump whose energy leapfrog conserves; each
 * checked against its analytic answer (cfd_wave_check.c, with the report).
 * This file: the run's state and steps, checkpoints and restarts, the wafer
 * model (this code's counts or SC22's), the output, the run's sequence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_checkpoint.h"
#include "cf_model.h"
#include "cf_wave_probe.h"
#include "cf_wave_checkpoint.h"
#include "cfd_parts.h"
#include "cfd_wave_parts.h"
#include "wf_fault.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_timing.h"

/* Ricker wavelet of peak frequency f0, delayed by 1.2 / f0 (its peak). */
static double ricker(double t, double f0) {
  double x = ST_PI * f0 * (t - 1.2 / f0);
  return (1 - 2 * x * x) * exp(-x * x);
}

static void wave_free(wave *p) {
  cf_wave_free(&p->w);
  free(p->cur), free(p->prev), free(p->trace), free(p->energy), free(p->amplitude), free(p->phi);
  cf_balance_free(&p->balance);
}

/* Leapfrog's conserved energy at step n + 1/2 (times h^2 v^2 dt^2 / h^2 =
 * its natural scale): sum (u^{n+1} - u^n)^2 - a sum u^{n+1} lap(u^n).
 * `cur` is u^n with a current halo, `next` u^{n+1}. Collective. */
static double energy(wave *p, wf_fabric *fab, const double *cur, const double *next) {
  const st_mesh *m = &p->m;
  double kin = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const double *u = cur + st_idx(m, i, j, 0), *n = next + st_idx(m, i, j, 0);
      for (int k = 0; k < m->nz; k++) kin += (n[k] - u[k]) * (n[k] - u[k]);
    }
  double e[2] = {kin, cf_wave_dot_lap(&p->w, cur, next)};
  wf_fabric_allreduce(fab, e, 2, WF_SUM);
  return e[0] - p->a * e[1];
}

static int wave_create(wave *p, wf_run *run, const cfd_setup *s, double *probe,
                       wf_status *st) {
  *p = (wave){.s = s};
  if (st_mesh_create_halo(&p->m, run->wafer, s->nx, s->ny, s->nz, CF_RADIUS, st) != WF_OK)
    return st->code;
  st_mesh_pad_columns(&p->m, CF_RADIUS);
  if (cf_wave_create(&p->w, &p->m, &run->wafer->fab, s->sponge, st) != WF_OK) return st->code;
  /* runs here: cfd_run checked it on every rank, before any work */
  if (cf_wave_use_kernel(&p->w, s->kernel, st) != WF_OK) return st->code;
  const st_mesh *m = &p->m;
  p->a = pow(s->v * s->dt / s->h, 2);
  p->cur = st_field_alloc(m);
  p->prev = st_field_alloc(m);
  p->holds_receivers =
      s->init == CFD_INIT_SOURCE && s->src[1] >= m->y0 && s->src[1] < m->y0 + m->lny;
  if (p->holds_receivers) p->trace = calloc((size_t)s->steps * m->lnx, sizeof *p->trace);
  p->energy = calloc(2 * ((size_t)s->steps / s->energy_every + 2), sizeof *p->energy);
  if (s->init == CFD_INIT_MODE) {
    p->amplitude = calloc((size_t)s->steps + 1, sizeof *p->amplitude);
    p->phi = st_field_alloc(m);
  }
  int failed = !p->cur || !p->prev || (p->holds_receivers && !p->trace) || !p->energy ||
               (s->init == CFD_INIT_MODE && (!p->amplitude || !p->phi));
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the wavefields");
  if (cf_wave_probe(m, &run->wafer->fab, p->a, p->cur, p->prev, probe, st) != WF_OK)
    return st->code;
  int n[3] = {s->nx, s->ny, s->nz}, steps = cf_balance_steps(n, s->src, s->sponge);
  failed = s->init == CFD_INIT_SOURCE &&
           cf_balance_create(&p->balance, steps < s->steps ? steps : s->steps, st) != WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the source's balance");
  const cf_bc free_faces[3] = {CF_DIRICHLET, CF_DIRICHLET, CF_DIRICHLET};
  cfd_initial_field(m, s, free_faces, p->cur);
  if (p->phi) memcpy(p->phi, p->cur, m->n_stored * sizeof *p->phi);
  /* At rest: u^{-1} = u^0 + (a / 2) lap(u^0), leapfrog's own start (exact
   * for a mode): one half step from prev = cur. */
  memcpy(p->prev, p->cur, m->n_stored * sizeof *p->prev);
  cf_wave_step(&p->w, p->cur, p->prev, p->a / 2);
  cf_wave_settle(&p->w, p->cur); /* u^0 stays u^0: the next step reads it as cur again */
  return WF_OK;
}

/* The source's term, dt^2 v^2 r(t) / h^3, into u^{n+1} where it is owned. */
static void add_source(wave *p, int n, double *next) {
  const st_mesh *m = &p->m;
  const cfd_setup *s = p->s;
  int i = s->src[0] - m->x0, j = s->src[1] - m->y0;
  if (i < 0 || i >= m->lnx || j < 0 || j >= m->lny) return;
  next[st_idx(m, i, j, s->src[2])] +=
      s->dt * s->dt * s->v * s->v / (s->h * s->h * s->h) * ricker(n * s->dt, s->f0);
}

/* What a wave run carries from step to step, for its checkpoints. */
static cf_wave_state state_of(wave *p) {
  const cfd_setup *s = p->s;
  return (cf_wave_state){.m = &p->m,
                         .cur = p->cur,
                         .prev = p->prev,
                         .energy = p->energy,
                         .nenergy = p->nenergy,
                         .max_energy = s->steps / s->energy_every + 2,
                         .energy_every = s->energy_every,
                         .trace = p->trace,
                         .trace_cols = p->m.lnx,
                         .amplitude = p->amplitude,
                         .max_steps = s->steps};
}

/* The checkpoint after n steps: u^{n-1} settled first (it may still owe
 * its sponge), which changes no bit of what follows. Collective. */
static int write_checkpoint(wave *p, MPI_Comm comm, int n, wf_status *st) {
  cf_wave_settle(&p->w, p->prev);
  cf_wave_state state = state_of(p);
  /* An energy measured only because step n ended this run is not one a
   * longer run measures: the restart would repeat it. */
  int every = p->s->energy_every;
  if (state.nenergy > 0 && (int)state.energy[2 * (state.nenergy - 1)] % every != 0)
    state.nenergy--;
  if (cf_wave_checkpoint_write(&state, comm, p->checkpoint, p->deck_state, n, st) != WF_OK)
    return st->code;
  p->last_checkpoint = n;
  return WF_OK;
}

/* The state after the checkpoint's steps, read into the fields wave_create
 * made. */
static int restart_from(wave *p, wf_run *run, const char *path, wf_status *st) {
  cf_wave_state state = state_of(p);
  int step;
  if (cf_wave_checkpoint_read(&state, run->comm, path, &step, st) != WF_OK)
    return wf_deck_blame(run->deck, "cfd", "restart", st);
  if (step >= p->s->steps)
    return wf_deck_fail(run->deck, "cfd", "restart", st,
                        "the checkpoint is at step %d: nothing to run (cfd.steps = %d is where the "
                        "whole run ends)",
                        step, p->s->steps);
  p->nenergy = state.nenergy;
  p->first_step = step;
  return WF_OK;
}

static int run_steps(wave *p, wf_run *run, wave_measured *out, wf_status *st) {
  const cfd_setup *s = p->s;
  const st_mesh *m = &p->m;
  wf_progress prog;
  wf_progress_start(&prog, "cfd", s->steps - p->first_step, run->verbose, stdout);
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  wf_fabric_main_begin(&run->wafer->fab);
  double phi2 = p->phi ? cfd_mesh_dot(m, &run->wafer->fab, p->phi, p->phi) : 1;
  if (p->amplitude && p->first_step == 0)
    p->amplitude[0] = cfd_mesh_dot(m, &run->wafer->fab, p->cur, p->phi) / phi2;
  int rc = WF_OK, ry = s->src[1] - m->y0;
  double seconds = 0;
  long n_done = 0; /* steps this run made */
  char where[320];
  for (int n = p->first_step; n < s->steps && rc == WF_OK; n++) {
    int sig = wf_signal_poll_next(&poll);
    if (sig) {
      if (p->checkpoint[0] && (rc = write_checkpoint(p, run->comm, n, st)) != WF_OK) break;
      cf_ckpt_last_good(p->checkpoint, p->last_checkpoint, where, sizeof where);
      char at[400];
      snprintf(at, sizeof at, "at step %d of %d (%s)", n, s->steps, where);
      rc = wf_signal_fail(st, sig, at);
      break;
    }
    double t0 = MPI_Wtime();
    cf_wave_step(&p->w, p->cur, p->prev, p->a); /* prev <- u^{n+1} */
    if (s->init == CFD_INIT_SOURCE) add_source(p, n, p->prev);
    seconds += MPI_Wtime() - t0;
    n_done++;
    if (n == s->steps / 2 && wf_fault("cfd_nan", run->comm)) /* the tests' blow-up */
      p->prev[st_idx(m, 0, 0, 0)] = NAN;
    if (n % s->energy_every == 0 || n + 1 == s->steps) {
      cf_wave_settle(&p->w, p->cur); /* u^n's sponge, before the energy reads it */
      p->energy[2 * p->nenergy] = n + 0.5;
      p->energy[2 * p->nenergy + 1] = energy(p, &run->wafer->fab, p->cur, p->prev);
      p->nenergy++;
    }
    if (p->trace)
      for (int i = 0; i < m->lnx; i++)
        p->trace[(size_t)n * m->lnx + i] = p->prev[st_idx(m, i, ry, s->receiver_z)];
    double *t = p->cur;
    p->cur = p->prev, p->prev = t;
    if (p->amplitude)
      p->amplitude[n + 1] = cfd_mesh_dot(m, &run->wafer->fab, p->cur, p->phi) / phi2;
    if (p->balance.sum && p->first_step == 0 && n + 1 <= p->balance.steps)
      cf_balance_record(&p->balance, n + 1, m, &run->wafer->fab, p->cur);
    bool last = n + 1 == s->steps;
    bool at_checkpoint = p->checkpoint[0] &&
                         ((p->checkpoint_every > 0 && (n + 1) % p->checkpoint_every == 0) || last);
    if ((n + 1) % 50 == 0 || last || at_checkpoint) { /* a checkpoint never holds a NaN */
      if (!cfd_all_finite(m, &run->wafer->fab, p->cur)) {
        cf_ckpt_last_good(p->checkpoint, p->last_checkpoint, where, sizeof where);
        rc = wf_fail(st, WF_ERR_RUNTIME,
                     "the wavefield is no longer finite after step %d of %d (%s)", n + 1, s->steps,
                     where);
        break;
      }
    }
    if (at_checkpoint && (rc = write_checkpoint(p, run->comm, n + 1, st)) != WF_OK) break;
    wf_progress_tick(&prog, n + 1 - p->first_step);
  }
  wf_fabric_main_end(&run->wafer->fab, n_done);
  wf_signal_poll_end(&poll);
  out->seconds = wf_slowest(run->comm, seconds);
  out->steps = s->steps - p->first_step;
  return rc;
}

/* ---- the wafer model ---- */

/* One step on the wafer, per PE (cf_model.h): this code's stencil on the
 * PE's brick, or, with model_counts = sc22, SC22's kernel on its column. */
static void project(wf_run *run, const st_mesh *m, const cfd_setup *s) {
  const wf_hw *hw = run->wafer->fab.hw;
  wf_prec prec = s->wafer_prec;
  double cells = (double)m->brick_x * m->brick_y * m->nz;
  const wf_grid *g = &run->wafer->grid;
  cf_model step = s->sc22_kernel ? cf_model_sc22_step(hw, m->nz)
                                 : cf_model_wave_step(hw, g, m->brick_x, m->brick_y, m->nz, prec);
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(hw, step.cycles),
                               .flops = step.flops_per_cell * m->n_global,
                               .bytes_per_pe = 2 * cells * wf_prec_bytes(prec),
                               .sram_for_data = wf_model_sram_for_data(hw),
                               .pes_needed = (double)run->wafer->dc.pe_nx * run->wafer->dc.pe_ny,
                               .pes_offered = (double)hw->pe_nx * hw->pe_ny};
}

/* model_only: the projection alone (the mesh's layout, no fields). */
static int project_only(wf_run *run, const cfd_setup *s, wf_status *st) {
  st_mesh m;
  if (st_mesh_create_halo(&m, run->wafer, s->nx, s->ny, s->nz, CF_RADIUS, st) != WF_OK)
    return wf_deck_blame(run->deck, "cfd", "nx", st);
  project(run, &m, s);
  run->wafer_seconds = run->model.seconds;
  wf_report rep;
  wf_report_open(&rep, run, "cfd");
  wf_report_model(&rep, &run->model);
  wf_report_note(&rep, "model only, %s kernel", s->sc22_kernel ? "SC22's" : "this code's");
  wf_report_note(&rep, "%dx%dx%d cells on %dx%d PEs", s->nx, s->ny, s->nz, run->wafer->dc.pe_nx,
                 run->wafer->dc.pe_ny);
  wf_report_end(&rep);
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "model only: %.1f-%.1f us/step on %s",
           1e6 * run->model.seconds.lo, 1e6 * run->model.seconds.hi, run->wafer->hw.name);
  return WF_OK;
}

/* ---- output ---- */

/* The last wavefield (with an XDMF sidecar), the energy history and the
 * shot gather (rank 0 holds it), with dt, h and the velocity. */
static int write_output(wf_run *run, const wave *p, const double *gather, const char *path,
                        wf_status *st) {
  const st_mesh *m = &p->m;
  const cfd_setup *s = p->s;
  bool root = run->rank == 0, shots = s->init == CFD_INIT_SOURCE;
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  double bytes =
      8.0 * ((double)m->n_global + 2.0 * p->nenergy + (shots ? (double)s->steps * s->nx : 0));
  int rc = wf_h5_reserve(&f, bytes, st);
  if (rc == WF_OK) {
    unsigned long long zero = 0, ne = (unsigned long long)p->nenergy;
    unsigned long long nt = (unsigned long long)s->steps, nx = (unsigned long long)s->nx;
    wf_h5_rows re = {ne, 2, root, &zero, &ne}, rg = {nt, nx, root, &zero, &nt};
    double none = 0; /* what ranks that write no rows point at */
    if (st_mesh_write_field(&f, m, "u", p->cur, st) != WF_OK ||
        wf_h5_write_rows(&f, "energy", WF_F64, &re, root ? p->energy : &none, st) != WF_OK ||
        (shots &&
         wf_h5_write_rows(&f, "shot_gather", WF_F64, &rg, root ? gather : &none, st) != WF_OK) ||
        wf_h5_attr_num(&f, "dt", s->dt, st) != WF_OK ||
        wf_h5_attr_num(&f, "h", s->h, st) != WF_OK ||
        wf_h5_attr_num(&f, "velocity", s->v, st) != WF_OK)
      rc = st->code;
  }
  return wf_h5_finish(&f, rc, st);
}

typedef struct gather_plot {
  const cfd_setup *s;
  const double *gather;
} gather_plot;

/* "nt nx dt h" then one line of nx values a step (scripts/plot_gather.py). */
static void write_gather(FILE *f, const void *data) {
  const gather_plot *g = data;
  const cfd_setup *s = g->s;
  fprintf(f, "%d %d %.9g %.9g\n", s->steps, s->nx, s->dt, s->h);
  for (int n = 0; n < s->steps; n++) {
    for (int x = 0; x < s->nx; x++)
      fprintf(f, "%s%.6g", x ? " " : "", g->gather ? g->gather[(size_t)n * s->nx + x] : 0.0);
    fputc('\n', f);
  }
}

/* ---- the run ---- */

int cfd_wave_run(wf_run *run, const cfd_setup *s, wf_status *st) {
  const wf_deck *d = run->deck;
  if (wf_deck_bool(d, "cfd", "model_only")) return project_only(run, s, st);
  wave p;
  wave_measured r = {0};
  wave_findings f = {0};
  double *gather = NULL;
  if (s->init == CFD_INIT_MODE && !s->free_faces)
    return wf_deck_fail(d, "cfd", "init", st,
                        "the slowest mode is that of free faces: with bc = absorbing it is no "
                        "mode, and its eigenvalue check would compare nothing (use bc = free)");
  int rc = wave_create(&p, run, s, &f.probe, st);
  if (rc != WF_OK && st->code == WF_ERR_INPUT) /* the mesh against the halo */
    rc = wf_deck_blame(d, "cfd", s->nz < CF_RADIUS ? "nz" : "nx", st);
  int narrowest = s->nx < s->ny ? (s->nx < s->nz ? s->nx : s->nz) : (s->ny < s->nz ? s->ny : s->nz);
  if (rc == WF_OK && !s->free_faces && s->sponge >= narrowest) {
    wave_free(&p);
    return wf_deck_fail(d, "cfd", "sponge", st,
                        "a damping layer of %d cells is as wide as the mesh's narrowest side (%d "
                        "cells): nothing would be left undamped",
                        s->sponge, narrowest);
  }
  p.checkpoint = wf_deck_str(d, "cfd", "checkpoint");
  p.deck_state = run->state;
  p.checkpoint_every = (int)wf_deck_int(d, "cfd", "checkpoint_every");
  p.last_checkpoint = -1;
  const char *restart = wf_deck_str(d, "cfd", "restart");
  if (rc == WF_OK && restart[0]) rc = restart_from(&p, run, restart, st);
  if (rc == WF_OK) rc = run_steps(&p, run, &r, st);
  wf_status_agree(run->comm, st);
  rc = st->code;
  if (rc == WF_OK) {
    if (s->init == CFD_INIT_SOURCE) {
      gather = cfd_wave_gather(&p, run);
      int failed = run->rank == 0 && !gather;
      MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
      if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the shot gather");
    }
  }
  if (rc == WF_OK && wf_deck_bool(d, "cfd", "stream")) {
    r.triad = wf_stream_triad(run->comm, p.m.n_owned, st);
    rc = st->code;
  }
  if (rc == WF_OK) {
    cfd_wave_check(&p, run, gather, &f);
    project(run, &p.m, s);
    cfd_wave_report(run, &p, &r, &f);
    run->seconds = r.seconds;
    run->wafer_seconds = wf_range_scale(run->model.seconds, r.steps);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &p, gather, out, st);
  const char *png = wf_deck_str(d, "cfd", "gather_plot");
  if (rc == WF_OK && png[0] && s->init == CFD_INIT_SOURCE) {
    gather_plot g = {s, gather};
    char title[160];
    snprintf(title, sizeof title, "shot gather: %dx%dx%d cells of %g m, v %g m/s, Ricker %g Hz",
             s->nx, s->ny, s->nz, s->h, s->v, s->f0);
    rc = wf_run_plot(run, "plot_gather.py", png, title, write_gather, &g,
                     st);
  }
  free(gather);
  wave_free(&p);
  return rc;
}
