/* Rank roles, decided before the wafer is built. Most runs give every rank
 * a block of the PE grid. Weight streaming also has MemoryX ranks (weights
 * and optimizer state) and SwarmX ranks (the broadcast and reduction tree
 * between MemoryX and the wafers): the PE grid then lives on the
 * sub-communicator of the wafer ranks. */
#ifndef WF_ROLES_H
#define WF_ROLES_H

#include <mpi.h>

#include "wf_error.h"

typedef enum { WF_ROLE_WAFER, WF_ROLE_MEMORYX, WF_ROLE_SWARMX, WF_NROLES } wf_role;

typedef struct wf_roles {
  int count[WF_NROLES]; /* ranks of each role */
  wf_role role;         /* this rank's */
  MPI_Comm role_comm;   /* the ranks of this rank's role, in world order */
  int role_rank;        /* this rank in role_comm */
  int first[WF_NROLES]; /* rank in `comm` of each role's first rank */
} wf_roles;

/* Split `comm` (n ranks): ranks [0, n - memoryx - swarmx) play the wafer,
 * then `memoryx` MemoryX ranks, then `swarmx` SwarmX ranks. At least one
 * wafer rank is needed. Collective. */
int wf_roles_split(wf_roles *r, MPI_Comm comm, int memoryx, int swarmx, wf_status *st);
void wf_roles_free(wf_roles *r);
const char *wf_role_name(wf_role role);

#endif
