/* Failure injection, for the tests of collective error handling: with
 * WAFER_FAULT=SITE@RANK in the environment, the I/O call at SITE reports a
 * failure on that rank alone (after the call itself, so that the library's
 * own collective state is intact), as a full disk or a broken file system
 * on one node would. Each rank must then end with the same message and exit
 * status as every other, never hang.
 *
 * Sites: h5_create, h5_write, h5_attr, h5_close (wf_h5: fields, checkpoints),
 * h5md_create, h5md_frame, h5md_close (trajectories), ckpt_read (restarts);
 * and cfd_nan, not I/O: a NaN in the wavefield half way through the steps. */
#ifndef WF_FAULT_H
#define WF_FAULT_H

#include <mpi.h>
#include <stdbool.h>

/* True if WAFER_FAULT names this site and this rank of `comm` (and says so
 * on stderr). */
bool wf_fault(const char *site, MPI_Comm comm);

#endif
