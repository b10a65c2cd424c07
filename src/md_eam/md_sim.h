/* One EAM molecular dynamics simulation on this rank: the potential, the
 * domain, the atoms, the neighbour lists, and the velocity Verlet step
 * (LAMMPS's Verlet + fix nve, optionally fix temp/berendsen). */
#ifndef MD_SIM_H
#define MD_SIM_H

#include <stdbool.h>

#include "eam_force.h"
#include "md_checkpoint.h"
#include "eam_potential.h"
#include "md_atoms.h"
#include "md_domain.h"
#include "md_lammps.h"
#include "md_neigh.h"
#include "md_system.h"

typedef struct md_params {
  double dt, skin, overlap;
  int neigh_delay;                    /* steps after a build before the next check */
  double berendsen_t, berendsen_damp; /* damp 0: NVE */
  const eam_simd_kernel *kernel;     /* NULL: the widest this CPU runs */
} md_params;

typedef struct md_sim {
  md_params par;
  const eam_potential *pot;
  double mass[MD_MAX_SPECIES];
  md_domain dom;
  md_atoms atoms;
  md_neigh nl;
  eam_work work;
  long long natoms, step, last_build;
  eam_sums sums;
  double seconds_neigh, seconds_force, seconds_comm; /* this rank */
} md_sim;

/* The domain and neighbour lists for atoms already in `atoms` (owned by
 * this rank; taken over by the sim). Builds the lists and computes the
 * forces of step `step`. A restart's `resume` (NULL: none) moves the atoms,
 * adopted at their places of the last build, to their positions at `step`
 * once the lists are built. Collective. */
int md_sim_start(md_sim *s, const md_params *par, const eam_potential *pot, md_atoms *atoms,
                 const md_domain *dom, long long step, const md_resume *resume, wf_status *st);
void md_sim_free(md_sim *s);

/* One velocity Verlet step; `rebuild` forces a neighbour list build (at
 * checkpoints, so that a restart meets the same lists). Collective. */
int md_sim_step(md_sim *s, bool rebuild, wf_status *st);

/* Thermo of the current state, the same on every rank. Collective. */
md_thermo_row md_sim_thermo(const md_sim *s);

#endif
