/* MD checkpoints: step, box and every atom's id, species, position and
 * velocity in one HDF5 file (written atomically). A run that checkpoints at
 * step s also rebuilds its neighbour lists at s, and a restart builds them
 * from the same atoms in the same order (md_neigh_sort), so the restarted run
 * continues bit for bit on the same rank count. */
#ifndef MD_CHECKPOINT_H
#define MD_CHECKPOINT_H

#include <mpi.h>

#include "md_atoms.h"
#include "md_domain.h"
#include "wf_error.h"

/* Collective. */
int md_checkpoint_write(const char *path, const md_domain *d, const md_atoms *a, long long step,
                        wf_status *st);
/* Replace `a`'s owned atoms by this rank's share of the checkpoint's, which
 * must hold `natoms` atoms in the same box, with a step >= 0, unique ids >= 1,
 * species below `nspecies` and finite numbers (input errors otherwise).
 * Collective. */
int md_checkpoint_read(const char *path, const md_domain *d, long long natoms, int nspecies,
                       md_atoms *a, long long *step, wf_status *st);

#endif
