/* Checkpoints of Rayleigh-Benard convection (cf_rb.h): HDF5, written
 * atomically (wf_checkpoint). A restart needs the same ranks, rank grid and
 * PE grid (checked: the file records every rank's block) and continues bit
 * for bit. */
#ifndef CF_RB_CHECKPOINT_H
#define CF_RB_CHECKPOINT_H

#include <mpi.h>

#include "cf_rb.h"
#include "wf_checkpoint.h"
#include "wf_error.h"

/* Collective. `state`: the deck's (wf_deck_state), which the file records;
 * `extra`: series the run keeps for its restart to go on with
 * (its measurements so far; read back with wf_checkpoint_read_series). */
int cf_rb_checkpoint_write(cf_rb *rb, MPI_Comm comm, const char *path, const char *state,
                           long long step, double t, const wf_ckpt_var *extra, int nextra,
                           wf_status *st);
/* Collective: the state, step and time from `path`. Errors (input): no such
 * file, a mesh of another size, other rank blocks. */
int cf_rb_checkpoint_read(cf_rb *rb, MPI_Comm comm, const char *path, long long *step, double *t,
                          wf_status *st);

#endif
