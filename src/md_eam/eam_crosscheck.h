/* The LAMMPS cross-check of `wafer eam` (eam_workload.c): the start's
 * state written as a LAMMPS data file, `lmp` run on it for the same steps
 * (md_lammps.h), and the run's thermo rows, forces, energy drift and drawn
 * temperature checked against LAMMPS's. */
#ifndef EAM_CROSSCHECK_H
#define EAM_CROSSCHECK_H

#include <stdbool.h>

#include "eam_setup.h"
#include "md_lammps.h"
#include "md_sim.h"
#include "wf_workload.h"

typedef struct eam_crosscheck {
  char dir[1024];
  bool own_dir;
  md_lammps_result lmp;
  long long start_step, force_step;
  double *forces; /* rank 0: our forces at force_step, rows (id, fx, fy, fz) by id */
  long long nforces;
} eam_crosscheck;

/* What the comparison found (the same on every rank). */
typedef struct eam_comparison {
  double thermo_diff, force_diff, force_max, drift_lammps, us_lammps;
  double start_temp; /* LAMMPS's temperature at step 0 (NAN: no such row) */
  int rows_compared;
} eam_comparison;

/* The data file of the start's state in a fresh directory (rank 0's
 * TMPDIR), and the steps compared: from now to crosscheck_steps on. */
int eam_crosscheck_prepare(const wf_run *run, const eam_setup *s, const md_sim *sim,
                           eam_crosscheck *x, wf_status *st);
/* Our side of the force comparison, at the step LAMMPS dumps (x->force_step). */
int eam_crosscheck_forces(const wf_run *run, const md_sim *sim, eam_crosscheck *x, wf_status *st);
/* `lmp` on rank 0 for `steps` steps from the data file. */
int eam_crosscheck_run(const wf_run *run, const eam_setup *s, eam_crosscheck *x, long long steps,
                       wf_status *st);
/* The run's checks against LAMMPS's results (wf_run_check), the figures in *c. */
void eam_crosscheck_check(wf_run *run, const eam_setup *s, const md_sim *sim,
                          const eam_crosscheck *x, const md_thermo_row *rows, int nrows,
                          eam_comparison *c);
/* Its files removed unless `keep`, its memory freed. */
void eam_crosscheck_remove(eam_crosscheck *x, bool keep);
/* Largest |E(t) - E(0)| per atom over the rows (eV/atom). */
double eam_energy_drift(const md_thermo_row *rows, int n, long long natoms);

#endif
