/* MD checkpoints: step, box and every atom's id, species, position and
 * velocity in one HDF5 file (written atomically), with every atom's position
 * at the last neighbour-list build and that build's step. A restart builds
 * the lists from those positions, which gives the same atoms in the same
 * order (md_neigh_sort), ghosts and lists as the run had, then moves the
 * atoms to where they were at the checkpoint's step: the restarted run
 * continues bit for bit on the same rank count, from a periodic checkpoint
 * (the run rebuilds its lists there) or from one taken between builds (its
 * last step, or a signal's). */
#ifndef MD_CHECKPOINT_H
#define MD_CHECKPOINT_H

#include <mpi.h>

#include "md_atoms.h"
#include "md_domain.h"
#include "wf_error.h"

/* `x_build`: the owned atoms' positions at the last list build, made at
 * step `last_build` (the atoms in the same order since). Collective. */
int md_checkpoint_write(const char *path, const char *state, const md_domain *d,
                        const md_atoms *a, const md_vec *x_build, long long last_build,
                        long long step, wf_status *st);
/* A checkpoint's contents, every atom's (as read, not yet trusted). */
typedef struct md_checkpoint_data {
  long long step;
  double box[6]; /* lo[3], len[3] */
  size_t natoms;
  const int64_t *id, *species;
  const double *x, *v; /* 3 per atom */
  const double *x_build; /* 3 per atom, at step last_build; NULL: at `step` */
  long long last_build;
} md_checkpoint_data;

/* Where a restart resumes: this rank's atoms are adopted at their positions
 * of the last list build (step last_build), and these are their positions at
 * the checkpoint's step, for md_sim_start to move them to once it has built
 * the lists. n = 0 and last_build = the step: none. */
typedef struct md_resume_atom {
  int64_t id; /* first: the atoms are sorted by it */
  md_vec x;
} md_resume_atom;
typedef struct md_resume {
  long long last_build;
  size_t n;
  md_resume_atom *atoms; /* by ascending id */
  const char *path;      /* the checkpoint's, for messages */
} md_resume;
void md_resume_free(md_resume *r);
/* Atom `id`'s position at the checkpoint's step; NULL when r has no such atom. */
const double *md_resume_position(const md_resume *r, int64_t id);

/* Check a checkpoint's contents (a state this code can run: see below) and
 * replace `a`'s owned atoms by this rank's share of them, at their positions
 * of the last build, with their positions at the step in *r. Errors name
 * `path`. This rank only. */
int md_checkpoint_adopt(const char *path, const md_checkpoint_data *c, const md_domain *d,
                        int nspecies, md_atoms *a, md_resume *r, wf_status *st);

/* Replace `a`'s owned atoms by this rank's share of the checkpoint's, which
 * must hold `natoms` atoms in the same box, with a step >= 0, unique ids >= 1,
 * species below `nspecies` and finite numbers, and, between list builds, no
 * atom further from its place at the last build than the run's lists
 * (`skin`, `neigh_delay`) allow (input errors otherwise). Collective. */
int md_checkpoint_read(const char *path, const md_domain *d, long long natoms, int nspecies,
                       double skin, int neigh_delay, md_atoms *a, long long *step, md_resume *r,
                       wf_status *st);

#endif
