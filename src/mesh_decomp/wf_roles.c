/* Rank roles (wf_roles.h): splits the ranks into wafer, MemoryX and SwarmX ranks, each role
 * with its own communicator. */
#include "wf_roles.h"

#include <string.h>

int wf_roles_split(wf_roles *r, MPI_Comm comm, int memoryx, int swarmx, wf_status *st) {
  memset(r, 0, sizeof *r);
  r->role_comm = MPI_COMM_NULL;
  int rank, n;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  if (memoryx < 0 || swarmx < 0 || (long long)memoryx + swarmx >= n)
    return wf_fail(st, WF_ERR_INPUT,
                   "%d MemoryX + %d SwarmX ranks leave no rank of the %d to play the wafer",
                   memoryx, swarmx, n);
  r->count[WF_ROLE_WAFER] = n - memoryx - swarmx;
  r->count[WF_ROLE_MEMORYX] = memoryx;
  r->count[WF_ROLE_SWARMX] = swarmx;
  r->first[WF_ROLE_WAFER] = 0;
  r->first[WF_ROLE_MEMORYX] = r->count[WF_ROLE_WAFER];
  r->first[WF_ROLE_SWARMX] = r->first[WF_ROLE_MEMORYX] + memoryx;
  r->role = rank < r->first[WF_ROLE_MEMORYX]  ? WF_ROLE_WAFER
            : rank < r->first[WF_ROLE_SWARMX] ? WF_ROLE_MEMORYX
                                              : WF_ROLE_SWARMX;
  MPI_Comm_split(comm, (int)r->role, rank, &r->role_comm); /* MPI errors are fatal: wf_mpi.h */
  MPI_Comm_rank(r->role_comm, &r->role_rank);
  return WF_OK;
}

void wf_roles_free(wf_roles *r) {
  if (r->role_comm != MPI_COMM_NULL) MPI_Comm_free(&r->role_comm);
}

const char *wf_role_name(wf_role role) {
  static const char *const names[WF_NROLES] = {"wafer", "memoryx", "swarmx"};
  return role >= 0 && role < WF_NROLES ? names[role] : "?";
}
