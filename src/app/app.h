/* What the `wafer` command's parts share: its options, deck resolution, one
 * workload run with its JSON summary, and the summary's output. */
#ifndef WF_APP_H
#define WF_APP_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_deck.h"
#include "wf_error.h"
#include "wf_json.h"
#include "wf_workload.h"

#define MAX_SECTIONS 64

typedef struct options {
  const char *command; /* "halo", "demo", "info", ... */
  const char *deck;    /* deck file or NULL */
  const char *json;    /* --json FILE or NULL */
  const char **sets; /* the --set assignments, as many as given (malloc'ed) */
  int nsets;
  bool quiet, help, version, markdown;
} options;

int app_parse_args(int argc, char **argv, options *o, wf_status *st);
void app_options_free(options *o);
/* Defaults, then o->deck (read on rank 0, broadcast), then o's --set list. */
int app_resolve_deck(MPI_Comm comm, const options *o, const wf_section **secs, int nsecs,
                     wf_deck *deck, wf_status *st);
/* The command line's own files in the run's file registry: the deck (read)
 * and --json (written; a device or pipe such as /dev/stdout in place). */
struct wf_files;
int app_claim_files(const options *o, struct wf_files *files, wf_status *st);
/* Build the wafer and run one workload; its JSON summary is left in `j` (on
 * every rank). Before any work, every file the run names (the deck's keys,
 * the workload's derived files, and `o`'s deck and --json when `o` is given)
 * is checked in one registry (wf_files.h). Returns the exit status. */
int app_run_workload(MPI_Comm comm, const wf_workload *wl, const wf_deck *deck, const options *o,
                     bool verbose, wf_run *run, wf_json *j, wf_status *st);
/* The summary is stdout's last line (rank 0), and --json FILE on request. */
void app_emit_summary(int rank, const options *o, const char *json, wf_status *st);

#endif
