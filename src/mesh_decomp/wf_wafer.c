/* The wafer a run plays (wf_wafer.h): the deck's [wafer] section, and the hardware, PE grid,
 * rank blocks and fabric built from it. */
#include "wf_wafer.h"

#include <stdlib.h>
#include <string.h>

#include "wf_io.h"

static int check_pe_grid(const char *v, char *why, size_t len) {
  int nx, ny;
  if (strcmp(v, "hardware") == 0 || wf_grid_parse_size(v, &nx, &ny) == 0) return 0;
  snprintf(why, len, "expected 'hardware' or NXxNY, e.g. 750x994, each side 1 .. %d",
           WF_GRID_MAX_SIDE);
  return -1;
}

static int check_rank_grid(const char *v, char *why, size_t len) {
  int px, py;
  if (strcmp(v, "auto") == 0 || wf_grid_parse_size(v, &px, &py) == 0) return 0;
  snprintf(why, len, "expected 'auto' or PXxPY, e.g. 4x2, each side 1 .. %d", WF_GRID_MAX_SIDE);
  return -1;
}

static const wf_key wafer_keys[] = {
    {"hardware", WF_KEY_CHOICE, "wse2", 0, 0, "wse1|wse2|wse3",
     "hardware whose parameters the cost model uses (docs/model.md)", NULL},
    {"pe_grid", WF_KEY_STRING, "64x64", 0, 0, NULL,
     "logical PE grid NXxNY, or 'hardware' for the whole wafer (wse2: 750x994)", check_pe_grid},
    {"rank_grid", WF_KEY_STRING, "auto", 0, 0, NULL,
     "MPI rank grid PXxPY, or 'auto' (shortest block perimeter; the FFT: 1 x ranks, bands of PE "
     "rows, so that one of its two all-to-alls stays inside ranks)",
     check_rank_grid},
    {"defects", WF_KEY_INPUT, "", 0, 0, NULL,
     "defect map: file of dead physical PEs, one 'x y' per line ('' = none)", NULL},
    {"spare_columns", WF_KEY_INT, "0", 0, 4096, NULL,
     "physical PE columns beyond pe_grid that dead PEs are skipped into", NULL},
    {"memoryx_ranks", WF_KEY_INT, "0", 0, 1000000, NULL,
     "ranks that hold weights and optimizer state instead of PEs (weight streaming)", NULL},
    {"swarmx_ranks", WF_KEY_INT, "0", 0, 1000000, NULL,
     "ranks that broadcast weights and reduce gradients between MemoryX and the wafers (weight "
     "streaming)",
     NULL},
};

const wf_section wf_wafer_section = {
    "wafer", "The wafer the run plays: hardware, PE grid, rank layout, defects.", wafer_keys,
    (int)(sizeof wafer_keys / sizeof wafer_keys[0]), NULL, NULL};

int wf_wafer_create(wf_wafer *w, MPI_Comm comm, const wf_deck *deck, wf_rank_layout layout,
                    wf_status *st) {
  memset(w, 0, sizeof *w);
  w->dc.comm = MPI_COMM_NULL;
  w->hw = *wf_hw_preset(wf_deck_str(deck, "wafer", "hardware"));

  const char *grid = wf_deck_str(deck, "wafer", "pe_grid");
  int nx = w->hw.pe_nx, ny = w->hw.pe_ny;
  if (strcmp(grid, "hardware") != 0) wf_grid_parse_size(grid, &nx, &ny);
  int px = 0, py = 0;
  const char *ranks = wf_deck_str(deck, "wafer", "rank_grid");
  if (strcmp(ranks, "auto") != 0) {
    wf_grid_parse_size(ranks, &px, &py);
  } else if (layout == WF_RANKS_ROWS) {
    int nranks;
    MPI_Comm_size(comm, &nranks);
    if (nranks <= ny) px = 1, py = nranks;
  }

  snprintf(w->defects, sizeof w->defects, "%s", wf_deck_str(deck, "wafer", "defects"));
  char *defect_text = NULL;
  if (w->defects[0] &&
      wf_read_text_bcast(comm, w->defects, "defect map", WF_MAX_DECK_BYTES, &defect_text, st) != WF_OK)
    return wf_deck_blame(deck, "wafer", "defects", st);
  int rc = wf_grid_create(&w->grid, nx, ny, (int)wf_deck_int(deck, "wafer", "spare_columns"),
                          defect_text, w->defects, st);
  free(defect_text);
  if (rc != WF_OK) return rc;

  if (wf_decomp_create(&w->dc, comm, nx, ny, px, py, st) != WF_OK) {
    wf_grid_free(&w->grid);
    return wf_deck_blame(deck, "wafer", strcmp(ranks, "auto") != 0 ? "rank_grid" : "pe_grid", st);
  }
  wf_fabric_create(&w->fab, &w->dc, &w->grid, &w->hw);
  return WF_OK;
}

void wf_wafer_free(wf_wafer *w) {
  wf_fabric_free(&w->fab);
  wf_decomp_free(&w->dc);
  wf_grid_free(&w->grid);
}

