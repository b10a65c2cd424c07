/* The wafer a run plays: hardware, logical PE grid (with its defect map),
 * the ranks' blocks and the fabric, built from the deck's [wafer] section. */
#ifndef WF_WAFER_H
#define WF_WAFER_H

#include <mpi.h>
#include <stdio.h>

#include "wf_decomp.h"
#include "wf_deck.h"
#include "wf_fabric.h"
#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_h5.h"
#include "wf_json.h"
#include "wf_workload.h"

typedef struct wf_wafer {
  wf_hw hw;
  wf_grid grid;
  wf_decomp dc;
  wf_fabric fab;
  char defects[WF_DECK_TEXT_MAX]; /* defect map path, "" if none */
} wf_wafer;

extern const wf_section wf_wafer_section;

/* Collective. Errors name the deck entry that caused them. */
int wf_wafer_create(wf_wafer *w, MPI_Comm comm, const wf_deck *deck, wf_status *st);
void wf_wafer_free(wf_wafer *w);

/* Two lines for the run header (rank 0 prints them). */
void wf_wafer_describe(const wf_wafer *w, FILE *out);
/* The wafer part of the JSON summary. */
void wf_wafer_json(const wf_wafer *w, wf_json *j);
/* The fabric counters summed over ranks, as a "fabric" object. Collective. */
void wf_wafer_json_fabric(const wf_wafer *w, wf_json *j);

/* Create a run's HDF5 output with the standard attributes: workload, version,
 * resolved deck, ranks, rank grid, PE grid, hardware. Collective. */
int wf_wafer_h5_create(const wf_run *run, const char *path, wf_h5file *f, wf_status *st);

#endif
