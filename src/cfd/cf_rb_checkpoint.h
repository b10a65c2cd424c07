/* Checkpoints of Rayleigh-Benard convection (cf_rb.h): HDF5, written
 * atomically (wf_checkpoint). A restart needs the same ranks, rank grid and
 * PE grid (checked: the file records every rank's block) and continues bit
 * for bit. */
#ifndef CF_RB_CHECKPOINT_H
#define CF_RB_CHECKPOINT_H

#include <mpi.h>

#include "cf_rb.h"
#include "wf_error.h"

/* Collective. `state`: the deck's (wf_deck_state), which the file records;
 * `history`: the run's measurements so far (history_n doubles, the same on
 * every rank), kept for the restart to go on with (read them with
 * wf_checkpoint_read_series, "history"). */
int cf_rb_checkpoint_write(cf_rb *rb, MPI_Comm comm, const char *path, const char *state,
                           long long step, double t, const double *history,
                           unsigned long long history_n, wf_status *st);
/* Collective: the state, step and time from `path`. Errors (input): no such
 * file, a mesh of another size, other rank blocks. */
int cf_rb_checkpoint_read(cf_rb *rb, MPI_Comm comm, const char *path, long long *step, double *t,
                          wf_status *st);

#endif
