/* Checkpoints: named distributed 1D datasets plus a step counter in one HDF5
 * file, written atomically (temporary name, then rename). Reading checks
 * that every dataset has the expected global size and reads each rank's
 * slice back bit for bit. */
#ifndef WF_CHECKPOINT_H
#define WF_CHECKPOINT_H

#include <mpi.h>

#include "wf_error.h"
#include "wf_h5.h"

typedef struct wf_ckpt_var {
  const char *name;
  wf_dtype type;
  void *data;                   /* this rank's `count` elements */
  unsigned long long global_n;  /* elements over all ranks */
  unsigned long long offset;    /* this rank's first element */
  unsigned long long count;
} wf_ckpt_var;

int wf_checkpoint_write(MPI_Comm comm, const char *path, long long step, const wf_ckpt_var *vars,
                        int nvars, wf_status *st);
int wf_checkpoint_read(MPI_Comm comm, const char *path, long long *step, const wf_ckpt_var *vars,
                       int nvars, wf_status *st);

#endif
