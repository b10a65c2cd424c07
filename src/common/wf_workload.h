/* The interface between the `wafer` command and a workload.
 *
 * A workload is one static wf_workload value: its name, one line of help,
 * its own deck sections, and a run function. The app registers it with one
 * line in src/app/registry.c; it never touches another workload. */
#ifndef WF_WORKLOAD_H
#define WF_WORKLOAD_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_deck.h"
#include "wf_error.h"
#include "wf_json.h"

struct wf_wafer; /* the PE grid, its decomposition and its fabric: mesh_decomp/wf_wafer.h */

typedef struct wf_run {
  const char *workload, *version; /* for output files */
  MPI_Comm comm;
  int rank, nranks;
  const wf_deck *deck;
  struct wf_wafer *wafer;
  bool verbose;   /* rank 0 and not --quiet: progress and report lines */
  wf_json *summary; /* the workload adds its results; the app adds the common part */
  /* Filled by the workload, the same on every rank: */
  int checks_passed, checks_failed; /* over all ranks */
  double seconds;                   /* measured time of the main computation */
  double wafer_seconds;             /* the same computation, projected onto the wafer */
  char headline[160];               /* one line for the demo table */
} wf_run;

typedef struct wf_workload {
  const char *name;
  const char *help;
  const wf_section *const *sections;
  int nsections;
  int (*run)(wf_run *run, wf_status *st);
  void (*finalize)(void); /* optional: once, before MPI_Finalize */
} wf_workload;

#endif
