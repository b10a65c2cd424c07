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
int md_checkpoint_write(const char *path, const char *state, const md_domain *d,
                        const md_atoms *a, long long step, wf_status *st);
/* A checkpoint's contents, every atom's (as read, not yet trusted). */
typedef struct md_checkpoint_data {
  long long step;
  double box[6]; /* lo[3], len[3] */
  size_t natoms;
  const int64_t *id, *species;
  const double *x, *v; /* 3 per atom */
} md_checkpoint_data;

/* Check a checkpoint's contents (a state this code can run: see below) and
 * replace `a`'s owned atoms by this rank's share of them. Errors name
 * `path`. This rank only. */
int md_checkpoint_adopt(const char *path, const md_checkpoint_data *c, const md_domain *d,
                        int nspecies, md_atoms *a, wf_status *st);

/* Replace `a`'s owned atoms by this rank's share of the checkpoint's, which
 * must hold `natoms` atoms in the same box, with a step >= 0, unique ids >= 1,
 * species below `nspecies` and finite numbers (input errors otherwise).
 * Collective. */
int md_checkpoint_read(const char *path, const md_domain *d, long long natoms, int nspecies,
                       md_atoms *a, long long *step, wf_status *st);

#endif
