/* `wafer eam`: EAM molecular dynamics on the PE grid, checked against LAMMPS.
 *
 * Builds a crystal (or reads a LAMMPS data file), draws Maxwell-Boltzmann
 * velocities, runs velocity Verlet with EAM forces over the ranks' blocks of
 * PEs, prints LAMMPS-style thermo, and cross-checks every thermo row and the
 * forces of one step against `lmp` started from the same data file. */
#include "eam_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eam_crosscheck.h"
#include "eam_potential.h"
#include "eam_setup.h"
#include "md_checkpoint.h"
#include "md_h5md.h"
#include "md_model.h"
#include "md_sim.h"
#include "wf_io.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_wafer.h"

/* ---- reporting ------------------------------------------------------------------ */

typedef struct history {
  md_thermo_row *rows;
  int n, cap;
} history;

static int history_add(history *h, md_thermo_row r, wf_status *st) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 64;
    md_thermo_row *q = realloc(h->rows, (size_t)cap * sizeof *q);
    if (!q) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for thermo rows");
    h->rows = q;
    h->cap = cap;
  }
  h->rows[h->n++] = r;
  return WF_OK;
}

static void print_row(const md_thermo_row *r) {
  printf("eam: %8lld %14.6f %18.8f %16.8f %18.8f %14.6f\n", r->step, r->temp, r->pe, r->ke,
         r->etotal, r->press);
}

/* ---- the run ------------------------------------------------------------------------ */

/* Trajectory frames: the first and last step, and every `every` steps. */
typedef struct trajectory {
  md_h5md *h5; /* NULL: no output file */
  long long every, first, last;
  bool failed;          /* writing it failed (as opposed to the run) */
  long long last_frame; /* step of the last frame written */
} trajectory;

static bool frame_at(const trajectory *t, long long step) {
  return step == t->first || step == t->last || (t->every > 0 && step % t->every == 0);
}

/* How many steps frame_at picks: the multiples of `every` in [first, last],
 * and first and last when they are not multiples. */
static long long frame_count(const trajectory *t) {
  if (t->every <= 0) return t->first == t->last ? 1 : 2;
  long long e = t->every, n = t->last / e - (t->first + e - 1) / e + 1;
  if (t->first % e != 0) n++;
  if (t->last % e != 0 && t->last != t->first) n++;
  return n;
}

typedef struct checkpoints {
  const char *path;
  long long every, last_step; /* last_step -1: none written */
  const char *state;          /* the deck's, which each records (wf_deck_state) */
} checkpoints;

/* The thermo row of the current step, refusing a state that has blown up. */
static int thermo_row(const md_sim *sim, md_thermo_row *r, wf_status *st) {
  *r = md_sim_thermo(sim);
  if (!isfinite(r->pe) || !isfinite(r->ke) || !isfinite(r->press))
    return wf_fail(st, WF_ERR_RUNTIME,
                   "non-finite energy at step %lld (pe %g, ke %g): the run has blown up "
                   "(timestep too large, or overlapping atoms?)",
                   r->step, r->pe, r->ke);
  return WF_OK;
}

static int write_checkpoint(const md_sim *sim, checkpoints *c, wf_status *st) {
  md_thermo_row r;
  if (thermo_row(sim, &r, st) != WF_OK ||
      md_checkpoint_write(c->path, c->state, &sim->dom, &sim->atoms, sim->nl.x_hold,
                          sim->last_build, sim->step, st) != WF_OK)
    return st->code;
  c->last_step = sim->step;
  return WF_OK;
}

/* A signal stopped the run after step sim->step: keep that state as a
 * checkpoint when there is one to keep (a restart from it continues bit for
 * bit, md_checkpoint.h). */
static int interrupted(const md_sim *sim, checkpoints *ck, int sig, wf_status *st) {
  char where[sizeof st->msg];
  if (!ck->path[0]) {
    snprintf(where, sizeof where, "at step %lld (no checkpoint: set eam.checkpoint to keep one)",
             sim->step);
  } else if (write_checkpoint(sim, ck, st) == WF_OK) {
    snprintf(where, sizeof where, "at step %lld; checkpoint written to %s (continue with "
             "--set eam.restart=%s and another eam.checkpoint)", sim->step, ck->path, ck->path);
  } else {
    snprintf(where, sizeof where, "at step %lld; writing its checkpoint failed: %s", sim->step,
             st->msg);
  }
  return wf_signal_fail(st, sig, where);
}

/* Steps to s->steps: thermo rows, checkpoints (with a list rebuild at each,
 * so that a restart from it continues bit for bit), the cross-check's forces,
 * progress. *seconds: the loop's time, slowest rank. */
static int integrate(const wf_run *run, const eam_setup *s, md_sim *sim, eam_crosscheck *x,
                     history *h, checkpoints *ck, trajectory *traj, double *seconds,
                     wf_status *st) {
  int rc = WF_OK;
  wf_progress prog;
  long long first = sim->step;
  wf_progress_start(&prog, "eam", (long)(s->steps - first), run->verbose, stdout);
  wf_signal_poll sig;
  MPI_Barrier(run->comm);
  wf_signal_poll_start(&sig, run->comm);
  double t0 = MPI_Wtime();
  wf_fabric_main_begin(&run->wafer->fab);
  while (rc == WF_OK && sim->step < s->steps) {
    int caught = wf_signal_poll_next(&sig);
    if (caught) {
      rc = interrupted(sim, ck, caught, st);
      break;
    }
    bool at_checkpoint = ck->every > 0 && (sim->step + 1) % ck->every == 0;
    rc = md_sim_step(sim, at_checkpoint, st);
    if (rc == WF_OK && s->lammps && sim->step == x->force_step)
      rc = eam_crosscheck_forces(run, sim, x, st);
    bool last = sim->step == s->steps;
    if (rc == WF_OK && (last || (s->thermo > 0 && sim->step % s->thermo == 0))) {
      md_thermo_row r;
      rc = thermo_row(sim, &r, st);
      if (rc == WF_OK) rc = history_add(h, r, st);
      if (rc == WF_OK && run->verbose) print_row(&r);
    }
    if (rc == WF_OK && (at_checkpoint || (last && ck->path[0])) && ck->path[0])
      rc = write_checkpoint(sim, ck, st);
    if (rc == WF_OK && traj->h5 && frame_at(traj, sim->step)) {
      rc = md_h5md_frame(traj->h5, sim, st);
      traj->failed = rc != WF_OK;
      if (rc == WF_OK) traj->last_frame = sim->step;
    }
    wf_progress_tick(&prog, (long)(sim->step - first));
  }
  double t = MPI_Wtime() - t0;
  wf_fabric_main_end(&run->wafer->fab, sim->step - first);
  wf_signal_poll_end(&sig);
  MPI_Allreduce(&t, seconds, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  if (rc == WF_ERR_RUNTIME) {
    if (ck->last_step >= 0)
      wf_wrap(st, "at step %lld (last good checkpoint: %s, step %lld)", sim->step, ck->path,
              ck->last_step);
    else if (ck->path[0])
      wf_wrap(st, "at step %lld (no checkpoint written yet to %s: the first was due at step %lld)",
              sim->step, ck->path,
              ck->every > 0 ? (first / ck->every + 1) * ck->every : s->steps);
    else
      wf_wrap(st, "at step %lld (no checkpoint: set eam.checkpoint and eam.checkpoint_every to "
                  "keep one)",
              sim->step);
  }
  return rc;
}

/* Continue from a checkpoint: its atoms replace the deck's (same box, same
 * count). */
static int restart(const wf_run *run, const eam_setup *s, const md_domain *dom, md_atoms *atoms,
                   long long *step, md_resume *resume, wf_status *st) {
  const char *path = wf_deck_str(run->deck, "eam", "restart");
  *step = 0;
  if (!path[0]) return WF_OK;
  long long n = atoms->nlocal, natoms;
  MPI_Allreduce(&n, &natoms, 1, MPI_LONG_LONG, MPI_SUM, run->comm);
  if (md_checkpoint_read(path, dom, natoms, s->pot.nelements, s->par.skin, s->par.neigh_delay,
                         atoms, step, resume, st) != WF_OK)
    return wf_deck_blame(run->deck, "eam", "restart", st);
  if (*step >= s->steps)
    return wf_deck_fail(run->deck, "eam", "steps", st,
                        "the checkpoint is at step %lld: nothing to run (eam.steps is the last "
                        "step, counted from the start of the first run)",
                        *step);
  return WF_OK;
}

/* Thermo rows, wafer's (code 0) then LAMMPS's (code 1), for
 * scripts/plot_thermo.py. */
typedef struct thermo_plot {
  const history *h;
  const eam_crosscheck *x;
  long long natoms;
  double dt;
} thermo_plot;

static void write_thermo(FILE *f, const void *data) {
  const thermo_plot *p = data;
  for (int code = 0; code < 2; code++) {
    const md_thermo_row *rows = code ? p->x->lmp.rows : p->h->rows;
    int n = code ? p->x->lmp.nrows : p->h->n;
    for (int i = 0; i < n; i++)
      fprintf(f, "%d %lld %.17g %.17g %.17g %.17g %.17g %.17g %lld\n", code, rows[i].step,
              (double)rows[i].step * p->dt, rows[i].temp, rows[i].pe, rows[i].ke, rows[i].etotal,
              rows[i].press, p->natoms);
  }
}

static int plot_thermo(const wf_run *run, const char *png, const history *h,
                       const eam_crosscheck *x, long long natoms, double dt, wf_status *st) {
  char title[160];
  snprintf(title, sizeof title, "wafer eam: %lld atoms, %d ranks", natoms, run->nranks);
  thermo_plot p = {h, x, natoms, dt};
  return wf_run_plot(run, "plot_thermo.py", png, title, write_thermo, &p,
                     st);
}

static void report(wf_run *run, const eam_setup *s, const md_sim *sim, const eam_crosscheck *x,
                   const history *h, const eam_comparison *cmp, double seconds, int per_pe,
                   const int halo[2]) {
  long long steps = h->rows[h->n - 1].step - h->rows[0].step;
  double drift = eam_energy_drift(h->rows, h->n, sim->natoms);
  double us = steps ? seconds / ((double)steps * sim->natoms) * 1e6 : 0;
  double share = 100 / fmax(seconds, 1e-30);
  const eam_comparison c = *cmp;
  const md_thermo_row *r = &h->rows[h->n - 1];
  /* estimated from this rank's last list and pairs, scaled to all atoms */
  double per_atom = sim->atoms.nlocal ? 1.0 / sim->atoms.nlocal : 0;
  double flops = EAM_FLOPS_PER_ENTRY * (double)sim->nl.pairs * per_atom +
                 EAM_FLOPS_PER_PAIR * (double)sim->work.pairs * per_atom + EAM_FLOPS_PER_ATOM;
  wf_report rep;
  wf_report_open(&rep, run, "eam");
  wf_report_begin(&rep, "eam");
  wf_report_line(&rep, NULL);
  wf_report_int(&rep, "atoms", sim->natoms, "%d atoms");
  wf_report_int(&rep, "first_step", h->rows[0].step, "from step %d");
  wf_report_int(&rep, "steps", steps, "%d steps");
  wf_report_num(&rep, "seconds", seconds, "in %.3f s");
  wf_report_num(&rep, "us_per_atom_step", us, "%.4g us/atom-step");
  wf_report_str(&rep, "kernel", sim->work.kernel->name, "(the %s force loops)");
  wf_report_note(&rep, "neighbour lists %.0f%%, forces %.0f%%, ghosts %.0f%%",
                 share * sim->seconds_neigh, share * sim->seconds_force, share * sim->seconds_comm);
  wf_report_int(&rep, "neighbor_builds", sim->nl.builds, "%d list builds");
  wf_report_num(&rep, "flops_per_atom_step", flops, "%.0f flops/atom-step (estimated)");
  wf_report_num(&rep, "gflops", us > 0 ? flops / us * 1e-3 : 0.0, "%.3g GFLOP/s");
  wf_report_line(&rep, "energy");
  wf_report_num(&rep, "energy_drift_per_atom", drift, "drift %.3g eV/atom");
  wf_report_num(&rep, "etotal_first", h->rows[0].etotal, "etotal %.10g");
  wf_report_num(&rep, "etotal_final", r->etotal, "to %.10g eV");
  wf_report_num(&rep, "pe_final", r->pe, "last pe %.10g eV");
  wf_report_num(&rep, "temp_final", r->temp, "temp %.6g K");
  wf_report_num(&rep, "press_final", r->press, "press %.6g bar");
  wf_report_line(&rep, "PEs");
  wf_report_num(&rep, "atoms_per_pe_mean",
                (double)sim->natoms / ((double)sim->dom.pe_n[0] * sim->dom.pe_n[1]),
                "%.2g atoms per PE on average");
  wf_report_int(&rep, "atoms_per_pe_max", per_pe, "at most %d");
  long long halo_pes[2] = {halo[0], halo[1]};
  wf_report_ints(&rep, "halo_pes", halo_pes, 2, "halo %d PEs");
  wf_report_end(&rep);
  if (s->lammps) {
    wf_report_begin(&rep, "lammps");
    wf_report_line(&rep, "LAMMPS");
    wf_report_num(&rep, "us_per_atom_step", c.us_lammps, "%.4g us/atom-step");
    wf_report_num(&rep, "ratio", c.us_lammps > 0 ? us / c.us_lammps : 0.0, "ratio wafer/LAMMPS %.2f");
    wf_report_num(&rep, "thermo_rel_diff", c.thermo_diff, "thermo rows differ by %.2g");
    wf_report_int(&rep, "rows_compared", c.rows_compared, "%d rows");
    wf_report_int(&rep, "force_step", x->force_step, "forces at step %d");
    wf_report_num(&rep, "force_diff", c.force_diff, "by %.2g eV/A");
    wf_report_num(&rep, "force_max", c.force_max, "largest %.3g");
    wf_report_num(&rep, "energy_drift_per_atom", c.drift_lammps, "LAMMPS drift %.3g eV/atom");
    wf_report_end(&rep);
  }
  md_model_result model;
  wf_status mst;
  wf_status_clear(&mst);
  if (!s->from_data &&
      md_model_project(&model, &s->lattice, &s->pot, s->par.skin, run, &mst) == WF_OK) {
    md_model_report(&model, run, &rep);
    run->wafer_seconds = wf_range_scale(run->model.seconds, (double)steps);
  } else {
    wf_report_line(&rep, "no wafer projection");
    const char *why = "the fold maps lattice sites to PEs (lattice runs only)";
    wf_report_note(&rep, "%s", s->from_data ? why : mst.msg);
  }
  if (!s->lammps && !s->lammps_unavailable) {
    wf_report_line(&rep, "unchecked");
    wf_report_note(&rep, "no reference (eam.crosscheck = none)");
  }
  wf_report_close(&rep);
  run->seconds = seconds;
  snprintf(run->headline, sizeof run->headline,
           "%lld atoms, %lld steps, %.3g us/atom-step, drift %.2g eV/atom%s", sim->natoms, steps,
           us, drift, s->lammps ? (run->checks_failed ? ", LAMMPS differs" : ", = LAMMPS") : "");
}

/* Two lines about the system and how it sits on the PEs. */
static void describe(const eam_setup *s, const md_sim *sim, long long step0, int per_pe,
                     const int halo[2]) {
  const md_box *b = &sim->dom.box;
  printf("eam: %lld atoms of", sim->natoms);
  for (int e = 0; e < s->pot.nelements; e++) printf(" %s", s->pot.element[e]);
  printf(" (%s), box %.4g x %.4g x %.4g A, cutoff %.4g + skin %.4g A, dt %g ps, steps %lld to "
         "%lld%s\n",
         s->potential, b->len[0], b->len[1], b->len[2], s->pot.cut, s->par.skin, s->par.dt, step0,
         s->steps, s->par.berendsen_damp > 0 ? ", Berendsen thermostat" : ", NVE");
  double mean = (double)sim->natoms / ((double)sim->dom.pe_n[0] * sim->dom.pe_n[1]);
  if (sim->dom.fold_mode)
    printf("eam: fold mapping: %.2g atoms per PE on average, at most %d; atoms keep their PE\n",
           mean, per_pe);
  else
    printf("eam: columns mapping: PE columns of %.3g x %.3g A hold %.2g atoms on average, at most "
           "%d; a PE needs the atoms of the PEs within %d x %d hops (cutoff + skin)\n",
           b->len[0] / sim->dom.pe_n[0], b->len[1] / sim->dom.pe_n[1], mean, per_pe, halo[0],
           halo[1]);
}

/* model_only: the projection of the deck's lattice, without atoms. */
static int project_only(wf_run *run, const eam_setup *s, wf_status *st) {
  if (s->from_data)
    return wf_deck_fail(run->deck, "eam", "model_only", st,
                        "the wafer model folds a lattice onto the PEs: give eam.cells, not "
                        "eam.data");
  md_model_result model;
  if (md_model_project(&model, &s->lattice, &s->pot, s->par.skin, run, st) != WF_OK)
    return st->code;
  if (run->verbose)
    printf("eam: model only: %.0f atoms of %s (%s), %dx%dx%d cells, cutoff %.4g + skin %.4g A\n",
           run->model.pes_needed, s->pot.element[s->lattice.species[0]], s->lattice.kind,
           s->lattice.cells[0], s->lattice.cells[1], s->lattice.cells[2], s->pot.cut, s->par.skin);
  wf_report rep;
  wf_report_open(&rep, run, "eam");
  md_model_report(&model, run, &rep);
  wf_report_close(&rep);
  run->wafer_seconds = wf_range_scale(run->model.seconds, (double)s->steps);
  wf_range rate = wf_range_inverse(run->model.seconds);
  snprintf(run->headline, sizeof run->headline, "model only: %.0f-%.0f timesteps/s on %s", rate.lo,
           rate.hi, run->wafer->hw.name);
  return WF_OK;
}

/* The thermo table's header and its first row (the start's), kept in h. */
static int first_row(const wf_run *run, const md_sim *sim, history *h, wf_status *st) {
  if (run->verbose)
    printf("eam: %8s %14s %18s %16s %18s %14s\n", "step", "temp", "pe", "ke", "etotal", "press");
  md_thermo_row r;
  int rc = thermo_row(sim, &r, st);
  if (rc == WF_OK) rc = history_add(h, r, st);
  if (rc == WF_OK && run->verbose) print_row(&r);
  return rc;
}

/* The H5MD trajectory (output.file), with the start's frame, if asked for. */
static int open_trajectory(wf_run *run, const md_sim *sim, trajectory *traj, wf_status *st) {
  if (!traj->h5) return WF_OK;
  const char *path = wf_deck_str(run->deck, "output", "file");
  int rc = md_h5md_create(traj->h5, run, path, sim, frame_count(traj), st);
  if (rc == WF_OK) rc = md_h5md_frame(traj->h5, sim, st);
  else traj->h5 = NULL;
  traj->failed = rc != WF_OK; /* its first frame: nothing worth keeping */
  traj->last_frame = sim->step;
  return rc;
}

/* The trajectory closed after the run ended with `rc`: complete, or, when
 * the run failed or was stopped and the file did not, kept with every frame
 * written so far (said in st's message), else discarded. */
static int close_trajectory(const wf_run *run, trajectory *traj, int rc, wf_status *st) {
  if (!traj->h5) return rc;
  if (rc == WF_OK) return md_h5md_close(traj->h5, st);
  if ((rc == WF_ERR_RUNTIME || wf_interrupted(rc)) && !traj->failed) {
    wf_status kept;
    if (md_h5md_close(traj->h5, &kept) == WF_OK) {
      size_t len = strlen(st->msg);
      snprintf(st->msg + len, sizeof st->msg - len, "; the trajectory up to step %lld is kept in %s",
               traj->last_frame, wf_deck_str(run->deck, "output", "file"));
    }
  } else {
    md_h5md_discard(traj->h5);
  }
  return rc;
}

/* The final state as a LAMMPS data file (eam.write_data), if asked for. */
static int write_data(const wf_run *run, const eam_setup *s, const md_sim *sim, wf_status *st) {
  const char *path = wf_deck_str(run->deck, "eam", "write_data");
  if (!path[0]) return WF_OK;
  return md_data_write(path, "wafer eam: final state", &sim->dom.box, &sim->atoms,
                       s->pot.nelements, s->pot.mass, run->comm, st);
}

/* The system from the deck (a lattice or a data file) or a restart's
 * checkpoint, and the simulation started on it. */
static int start(wf_run *run, eam_setup *s, md_sim *sim, long long *step0, wf_status *st) {
  md_domain dom = {0};
  md_atoms atoms = {0};
  md_resume resume = {0};
  int rc = eam_build_system(run, s, &dom, &atoms, st);
  if (rc == WF_OK) rc = restart(run, s, &dom, &atoms, step0, &resume, st);
  if (rc != WF_OK) {
    md_resume_free(&resume);
    md_atoms_free(&atoms);
    md_domain_free(&dom);
    return rc;
  }
  rc = md_sim_start(sim, &s->par, &s->pot, &atoms, &dom, *step0, &resume, st);
  md_resume_free(&resume);
  if (rc == WF_OK) return WF_OK;
  const char *from = wf_deck_str(run->deck, "eam", "restart")[0] ? "restart"
                     : s->from_data                                 ? "data"
                                                                    : "cells";
  return st->code == WF_ERR_INPUT ? wf_deck_blame(run->deck, "eam", from, st) : st->code;
}

static int eam_run(wf_run *run, wf_status *st) {
  eam_setup s;
  int rc = eam_read_setup(run, &s, st);
  if (rc == WF_OK && wf_deck_bool(run->deck, "eam", "model_only")) {
    rc = project_only(run, &s, st);
    eam_free_setup(&s);
    return rc;
  }
  md_sim sim = {0}; /* freed whatever happened: all its parts are free's to free */
  long long step0 = 0;
  if (rc == WF_OK) rc = start(run, &s, &sim, &step0, st);
  if (rc != WF_OK) {
    md_sim_free(&sim);
    eam_free_setup(&s);
    return rc;
  }
  int per_pe = md_domain_max_atoms_per_pe(&sim.dom, &sim.atoms), halo[2];
  md_domain_halo_pes(&sim.dom, halo);
  if (run->verbose) describe(&s, &sim, step0, per_pe, halo);

  eam_crosscheck x = {0};
  if (s.lammps_unavailable)
    wf_run_unavailable(run, "LAMMPS cross-check", s.lammps_absent);
  if (s.lammps) rc = eam_crosscheck_prepare(run, &s, &sim, &x, st);
  if (rc == WF_OK && s.lammps && x.force_step == sim.step)
    rc = eam_crosscheck_forces(run, &sim, &x, st);
  history h = {0};
  if (rc == WF_OK) rc = first_row(run, &sim, &h, st);
  checkpoints ck = {wf_deck_str(run->deck, "eam", "checkpoint"),
                    wf_deck_int(run->deck, "eam", "checkpoint_every"), -1, run->state};
  md_h5md h5;
  trajectory traj = {wf_deck_str(run->deck, "output", "file")[0] ? &h5 : NULL,
                     wf_deck_int(run->deck, "eam", "dump_every"), step0, s.steps, false, step0};
  if (rc == WF_OK) rc = open_trajectory(run, &sim, &traj, st);
  double seconds = 0;
  if (rc == WF_OK) rc = integrate(run, &s, &sim, &x, &h, &ck, &traj, &seconds, st);
  rc = close_trajectory(run, &traj, rc, st);
  if (rc == WF_OK && s.lammps) rc = eam_crosscheck_run(run, &s, &x, sim.step - step0, st);
  if (rc == WF_OK) rc = write_data(run, &s, &sim, st);
  eam_comparison c;
  if (rc == WF_OK) eam_crosscheck_check(run, &s, &sim, &x, h.rows, h.n, &c);
  if (rc == WF_OK) report(run, &s, &sim, &x, &h, &c, seconds, per_pe, halo);
  const char *png = wf_deck_str(run->deck, "eam", "plot");
  if (rc == WF_OK && png[0]) rc = plot_thermo(run, png, &h, &x, sim.natoms, s.par.dt, st);
  if (s.lammps) {
    bool keep = rc != WF_OK || run->checks_failed > 0;
    if (keep && run->verbose && x.dir[0]) printf("eam: LAMMPS files kept in %s\n", x.dir);
    eam_crosscheck_remove(&x, keep);
  }
  free(h.rows);
  md_sim_free(&sim);
  eam_free_setup(&s);
  return rc;
}

const wf_workload wf_eam_workload = {
    .name = "eam",
    .help = "EAM molecular dynamics (velocity Verlet) on the PE grid, checked against LAMMPS",
    .sections = eam_sections,
    .nsections = EAM_NSECTIONS,
    .run = eam_run,
};
