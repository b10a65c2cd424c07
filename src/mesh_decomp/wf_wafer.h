/* The wafer a run plays: hardware, logical PE grid (with its defect map),
 * the ranks' blocks and the fabric, built from the deck's [wafer] section. */
#ifndef WF_WAFER_H
#define WF_WAFER_H

#include <mpi.h>

#include "wf_decomp.h"
#include "wf_deck.h"
#include "wf_fabric.h"
#include "wf_grid.h"
#include "wf_hw.h"

typedef struct wf_wafer {
  wf_hw hw;
  wf_grid grid;
  wf_decomp dc;
  wf_fabric fab;
  char defects[WF_DECK_TEXT_MAX]; /* defect map path, "" if none */
} wf_wafer;

extern const wf_section wf_wafer_section;

/* How `rank_grid = auto` lays the ranks out. */
typedef enum {
  WF_RANKS_COMPACT, /* the shortest block perimeter (halo exchanges) */
  WF_RANKS_ROWS     /* 1 x nranks, bands of PE rows, where the grid has the rows: an
                       all-to-all within PE rows then stays inside each rank (the FFT) */
} wf_rank_layout;

/* Collective. Errors name the deck entry that caused them. */
int wf_wafer_create(wf_wafer *w, MPI_Comm comm, const wf_deck *deck, wf_rank_layout layout,
                    wf_status *st);
void wf_wafer_free(wf_wafer *w);

#endif
