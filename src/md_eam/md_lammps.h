/* The built-in LAMMPS cross-check: run `lmp` on the data file wafer started
 * from, with the same potential, neighbour settings, timestep, steps and
 * thermostat, and read back its thermo rows, its forces at one step and its
 * loop time. Runs on the calling process only (rank 0). */
#ifndef MD_LAMMPS_H
#define MD_LAMMPS_H

#include <stdint.h>

#include "md_atoms.h"
#include "wf_error.h"

typedef struct md_thermo_row {
  long long step;
  double temp, pe, ke, etotal, press; /* K, eV, eV, eV, bar */
} md_thermo_row;

typedef struct md_lammps_job {
  const char *lmp;       /* command, found on PATH */
  const char *dir;       /* work directory: holds init.data, receives in.lmp, log.lammps */
  const char *potential; /* absolute path */
  const char *elements;  /* eam/alloy: the element of each type, "Cu Ta"; NULL: funcfl */
  double skin, dt;
  int neigh_delay;
  long long start_step, steps, thermo; /* steps: run length from start_step */
  long long force_step; /* the step whose forces are dumped (0 or a divisor of a later step) */
  double berendsen_t, berendsen_damp; /* damp 0: NVE */
} md_lammps_job;

typedef struct md_lammps_result {
  md_thermo_row *rows;
  int nrows;
  long long nforces; /* at force_step */
  int64_t *force_id; /* sorted by id */
  md_vec *force;
  double loop_seconds;
} md_lammps_result;

int md_lammps_run(const md_lammps_job *job, md_lammps_result *res, wf_status *st);
void md_lammps_result_free(md_lammps_result *res);

#endif
