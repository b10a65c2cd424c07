/* Where the ranks run: each rank's host and the logical CPUs it may run
 * on (its affinity), and whether two ranks of one host share a physical
 * core (from /sys's core and package ids), which makes per-rank timings
 * and scaling figures meaningless. */
#ifndef WF_BINDING_H
#define WF_BINDING_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "wf_error.h"
#include "wf_json.h"

typedef struct wf_binding_rank {
  char host[64];
  char cpus[128]; /* logical CPUs, as a list: "0-3,8" */
  unsigned char cpu_bits[128]; /* the same as a bit set (CPUs 0-1023) */
  int ncores;
  int core[256]; /* physical cores: package * 65536 + core id */
} wf_binding_rank;

typedef struct wf_binding {
  int nranks, nhosts;
  wf_binding_rank *rank; /* every rank's, on rank 0 only */
  int shared[2];         /* two ranks of one host sharing a core, or -1 -1 */
} wf_binding;

/* Collective; the result is complete on rank 0. */
int wf_binding_gather(MPI_Comm comm, wf_binding *b, wf_status *st);
void wf_binding_free(wf_binding *b);
/* One line ("binding: ...") and, when ranks share a core, a warning line. */
void wf_binding_print(const wf_binding *b, FILE *out);
/* "binding": {"hosts", "ranks", "shared_core", "host_kinds": [...]}: hosts
 * with the same ranks, CPUs and sharing counted once ({"hosts", "first",
 * "ranks_per_host", "cpus", "shared_core"}), so the summary stays small at
 * any scale. */
void wf_binding_json(const wf_binding *b, wf_json *j);

#endif
