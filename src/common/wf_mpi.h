/* MPI conventions every module follows.
 *
 * Errors: MPI's default handler, MPI_ERRORS_ARE_FATAL, stays on every
 * communicator (they inherit it from MPI_COMM_WORLD): an MPI error ends the
 * job with MPI's own message. wafer never tests an MPI call's return code
 * (under that handler a test can never fire); its own errors travel as
 * wf_status, agreed by every rank.
 *
 * Counts: an MPI count is an int. A buffer whose length may pass INT_MAX
 * (a model's gradients) goes through the chunked calls here; sizes bounded
 * at setup (a layer, a vector, a tile count) are refused there when beyond
 * WF_MPI_MAX_COUNT. */
#ifndef WF_MPI_H
#define WF_MPI_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>

#define WF_MPI_MAX_COUNT ((size_t)INT_MAX)

/* MPI_Allreduce in place of `count` elements of `type`, in pieces of at
 * most WF_MPI_MAX_COUNT. Collective. */
void wf_allreduce_inplace(void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#endif
