/* MPI calls whose counts may pass an int (wf_mpi.h). */
#include "wf_mpi.h"

void wf_allreduce_inplace(void *buf, size_t count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(type, &lb, &extent);
  char *p = buf;
  for (size_t done = 0; done < count;) {
    size_t n = count - done < WF_MPI_MAX_COUNT ? count - done : WF_MPI_MAX_COUNT;
    MPI_Allreduce(MPI_IN_PLACE, p + done * (size_t)extent, (int)n, type, op, comm);
    done += n;
  }
}
