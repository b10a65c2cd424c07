/* Checkpoints of Rayleigh-Benard convection (cf_rb.h): HDF5, written
 * atomically (wf_checkpoint). A restart needs the same ranks, rank grid and
 * PE grid (checked: the file records every rank's block) and continues bit
 * for bit. */
#ifndef CF_RB_CHECKPOINT_H
#define CF_RB_CHECKPOINT_H

#include <mpi.h>

#include "cf_rb.h"
#include "wf_error.h"

/* Collective. */
int cf_rb_checkpoint_write(cf_rb *rb, MPI_Comm comm, const char *path, long long step, double t,
                           wf_status *st);
/* Collective: the state, step and time from `path`. Errors (input): no such
 * file, a mesh of another size, other rank blocks. */
int cf_rb_checkpoint_read(cf_rb *rb, MPI_Comm comm, const char *path, long long *step, double *t,
                          wf_status *st);

#endif
