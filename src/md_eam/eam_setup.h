/* `wafer eam`'s deck: the [eam] section's keys, and the section resolved:
 * what eam_workload.c runs. */
#ifndef EAM_SETUP_H
#define EAM_SETUP_H

#include <stdbool.h>

#include "eam_potential.h"
#include "md_atoms.h"
#include "md_domain.h"
#include "md_sim.h"
#include "md_system.h"
#include "wf_error.h"
#include "wf_workload.h"

/* Where a potential named without a directory is looked for when it is not here. */
#define EAM_LAMMPS_POTENTIALS "/usr/share/lammps/potentials"

/* Unit cells per axis: at most 10^5, and at most 2^31 / 4 atoms in all (atom
 * ids and per-rank counts are ints). */
#define EAM_MAX_CELLS_AXIS 100000
#define EAM_MAX_ATOMS (1LL << 29)

/* Everything the run needs, read from the deck. */
typedef struct eam_setup {
  char potential[1024];
  eam_potential pot;
  md_params par;
  long long steps, thermo, crosscheck_steps;
  bool lammps;
  bool lammps_unavailable; /* crosscheck = auto, and no `lmp` to run */
  char lammps_absent[256]; /* why not, when so */
  bool from_data;
  md_lattice lattice;
  md_data data;
  int type_species[MD_MAX_SPECIES];
  double temperature;
} eam_setup;

/* The [eam] section: its keys and their checks (EAM_NSECTIONS of them). */
#define EAM_NSECTIONS 1
extern const wf_section *const eam_sections[EAM_NSECTIONS];

/* Reads the [eam] section (the potential on rank 0, broadcast; a data file
 * likewise): errors name the key to blame. Collective. */
int eam_read_setup(const wf_run *run, eam_setup *s, wf_status *st);
void eam_free_setup(eam_setup *s);
/* The domain over the ranks' PEs (folded when `mapping = fold`) and this
 * rank's atoms, with velocities (drawn, or the data file's). Collective. */
int eam_build_system(const wf_run *run, eam_setup *s, md_domain *dom, md_atoms *atoms,
                     wf_status *st);

#endif
