/* The LAMMPS cross-check of `wafer eam` (eam_crosscheck.h): a data file of
 * the start, `lmp` on it, and the comparisons that are the run's checks. */
#include "eam_crosscheck.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md_system.h"
#include "wf_io.h"

int eam_crosscheck_prepare(const wf_run *run, const eam_setup *s, const md_sim *sim,
                              eam_crosscheck *x, wf_status *st) {
  memset(x, 0, sizeof *x);
  wf_status_clear(st);
  if (run->rank == 0) {
    const char *tmp = getenv("TMPDIR");
    snprintf(x->dir, sizeof x->dir, "%s/wafer-lammps-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(x->dir)) wf_fail(st, WF_ERR_RUNTIME, "crosscheck: cannot create %s", x->dir);
    x->own_dir = true;
  }
  wf_status_bcast(run->comm, st);
  MPI_Bcast(x->dir, sizeof x->dir, MPI_CHAR, 0, run->comm);
  if (st->code != WF_OK) return st->code;
  char path[1100];
  snprintf(path, sizeof path, "%s/init.data", x->dir);
  if (md_data_write(path, "wafer eam: initial state for the LAMMPS cross-check", &sim->dom.box,
                    &sim->atoms, s->pot.nelements, s->pot.mass, run->comm, st) != WF_OK)
    return st->code;
  long long window_end = sim->step + s->crosscheck_steps;
  x->force_step = s->steps < window_end ? s->steps : window_end;
  x->start_step = sim->step;
  return WF_OK;
}

/* Our side of the force comparison, at the step LAMMPS dumps. */
int eam_crosscheck_forces(const wf_run *run, const md_sim *sim, eam_crosscheck *x, wf_status *st) {
  return md_gather_vec(&sim->atoms, sim->atoms.f, run->comm, &x->forces, &x->nforces, st);
}

int eam_crosscheck_run(const wf_run *run, const eam_setup *s, eam_crosscheck *x, long long steps,
                      wf_status *st) {
  wf_status_clear(st);
  if (run->rank == 0) {
    char elements[256] = "";
    for (int e = 0; e < s->pot.nelements; e++)
      snprintf(elements + strlen(elements), sizeof elements - strlen(elements), "%s%s",
               e ? " " : "", s->pot.element[e]);
    char potential[2048], cwd[1024];
    if (s->potential[0] != '/' && getcwd(cwd, sizeof cwd))
      snprintf(potential, sizeof potential, "%s/%s", cwd, s->potential); /* lmp runs elsewhere */
    else
      snprintf(potential, sizeof potential, "%s", s->potential);
    md_lammps_job job = {.lmp = wf_deck_str(run->deck, "eam", "lmp"),
                         .dir = x->dir,
                         .potential = potential,
                         .elements = strstr(s->potential, ".alloy") ? elements : NULL,
                         .skin = s->par.skin,
                         .dt = s->par.dt,
                         .neigh_delay = s->par.neigh_delay,
                         .start_step = x->start_step,
                         .steps = steps,
                         .thermo = s->thermo,
                         .force_step = x->force_step,
                         .berendsen_t = s->par.berendsen_t,
                         .berendsen_damp = s->par.berendsen_damp};
    md_lammps_run(&job, &x->lmp, st);
  }
  wf_status_bcast(run->comm, st);
  return st->code;
}

void eam_crosscheck_remove(eam_crosscheck *x, bool keep) {
  if (x->own_dir && !keep) {
    const char *files[] = {"init.data", "in.lmp", "log.lammps", "lmp.out", "forces.txt"};
    char path[1100];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
      snprintf(path, sizeof path, "%s/%s", x->dir, files[i]);
      remove(path);
    }
    rmdir(x->dir);
  }
  md_lammps_result_free(&x->lmp);
  free(x->forces);
}

/* Largest |E(t) - E(0)| per atom over the rows (eV/atom). */
double eam_energy_drift(const md_thermo_row *rows, int n, long long natoms) {
  double d = 0;
  for (int i = 1; i < n; i++) d = fmax(d, fabs(rows[i].etotal - rows[0].etotal));
  return d / (double)natoms;
}

static double rel_diff(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1.0); }

/* Rank 0 compares; the verdicts are broadcast. */
static void compare(wf_run *run, const eam_setup *s, const eam_crosscheck *x,
                    const md_thermo_row *rows, int nrows, long long natoms, eam_comparison *c) {
  memset(c, 0, sizeof *c);
  if (run->rank == 0) {
    const md_lammps_result *l = &x->lmp;
    int matched = 0;
    for (int i = 0; i < nrows; i++)
      for (int k = 0; k < l->nrows; k++) {
        if (l->rows[k].step != rows[i].step) continue;
        matched++;
        if (rows[i].step - x->start_step > s->crosscheck_steps) break;
        const md_thermo_row *a = &rows[i], *b = &l->rows[k];
        double diffs[5] = {rel_diff(a->temp, b->temp), rel_diff(a->pe, b->pe),
                           rel_diff(a->ke, b->ke), rel_diff(a->etotal, b->etotal),
                           rel_diff(a->press, b->press)};
        for (int v = 0; v < 5; v++) c->thermo_diff = fmax(c->thermo_diff, diffs[v]);
        c->rows_compared++;
      }
    if (matched != nrows || l->nrows != nrows) c->thermo_diff = INFINITY; /* rows missing */
    c->force_diff = x->nforces == l->nforces ? 0 : INFINITY;
    for (long long i = 0; i < x->nforces && i < l->nforces; i++) {
      const double *r = x->forces + 4 * i;
      if ((int64_t)r[0] != l->force_id[i]) c->force_diff = INFINITY;
      for (int k = 0; k < 3; k++) {
        c->force_diff = fmax(c->force_diff, fabs(r[1 + k] - l->force[i][k]));
        c->force_max = fmax(c->force_max, fabs(l->force[i][k]));
      }
    }
    c->drift_lammps = eam_energy_drift(l->rows, l->nrows, natoms);
    c->start_temp = NAN;
    for (int k = 0; k < l->nrows; k++)
      if (l->rows[k].step == 0) c->start_temp = l->rows[k].temp;
    long long steps = s->steps - x->start_step;
    c->us_lammps = steps ? l->loop_seconds / ((double)steps * natoms) * 1e6 : 0;
  }
  MPI_Bcast(c, sizeof *c, MPI_BYTE, 0, run->comm);
}

/* The run against LAMMPS's (run_lammps) on the same data file: thermo rows,
 * forces, the energy drift (NVE) and the drawn velocities' temperature;
 * the figures compared into *c. */
void eam_crosscheck_check(wf_run *run, const eam_setup *s, const md_sim *sim,
                          const eam_crosscheck *x, const md_thermo_row *rows, int nrows,
                          eam_comparison *c) {
  *c = (eam_comparison){0};
  if (!s->lammps) return;
  double drift = eam_energy_drift(rows, nrows, sim->natoms);
  compare(run, s, x, rows, nrows, sim->natoms, c);
  wf_run_check(run, c->thermo_diff <= 1e-8, "thermo rows agree with LAMMPS to 1e-8");
  wf_run_check(run, c->force_diff <= 1e-10 * fmax(c->force_max, 1.0),
               "forces agree with LAMMPS to 1e-10");
  /* NVE only (a thermostat does not conserve energy): over long runs the
   * two trajectories part (chaos), so the drifts are compared with a margin */
  if (s->par.berendsen_damp == 0)
    wf_run_check(run, drift <= 1.5 * c->drift_lammps + 1e-12,
                 "energy drift no worse than LAMMPS's");
  /* Velocities drawn here are scaled to exactly `temperature` (3N - 3
   * degrees of freedom, as LAMMPS's compute temp counts them): LAMMPS's
   * own temperature of them, to its thermo output's 1e-8. */
  const wf_deck *d = run->deck;
  bool drawn = (!s->from_data || strcmp(wf_deck_str(d, "eam", "velocities"), "create") == 0) &&
               !wf_deck_str(d, "eam", "restart")[0];
  /* (one atom has no degrees of freedom once its momentum is removed) */
  if (drawn && s->temperature > 0 && sim->natoms >= 2 && isfinite(c->start_temp)) {
    char what[160];
    snprintf(what, sizeof what, "LAMMPS's temperature of the drawn velocities %.8g K is the "
             "deck's %.8g K to 1e-8", c->start_temp, s->temperature);
    wf_run_check(run, rel_diff(c->start_temp, s->temperature) <= 1e-8, what);
  }
}
