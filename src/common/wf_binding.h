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
  int rank; /* in the communicator */
  int ncores;
  int core[256]; /* physical cores: package * 65536 + core id */
} wf_binding_rank;

/* Hosts alike: as many ranks, the same CPUs in all, sharing or not. */
typedef struct wf_host_kind {
  int hosts, ranks;
  char first[64]; /* the first such host's name */
  unsigned char cpus[128];
  bool shared;
} wf_host_kind;

enum { WF_BINDING_KINDS = 8, WF_BINDING_LISTED = 8 };

/* The summary, the same size at any scale: each host's ranks compare their
 * cores among themselves, and the hosts' summaries merge up a reduction
 * tree (no rank holds every rank's record). */
typedef struct wf_binding {
  int nranks, nhosts;
  int shared[2];             /* the first two ranks of one host sharing a core, or -1 -1 */
  char shared_host[64], shared_cpus[2][128];
  int nkinds, other_hosts;   /* kinds of host; hosts of kinds beyond the table */
  wf_host_kind kind[WF_BINDING_KINDS];
  char cpus[WF_BINDING_LISTED][128]; /* the first ranks' CPU lists, for the line */
  bool valid;                /* on rank 0, after a gather */
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
