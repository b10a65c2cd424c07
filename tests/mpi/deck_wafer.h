/* A whole wf_wafer (what the workloads run on) for MPI tests, made from a
 * deck that sets only its PE grid. */
#ifndef DECK_WAFER_H
#define DECK_WAFER_H

#include <stdio.h>

#include "mpi_check.h"
#include "wf_deck.h"
#include "wf_wafer.h"

/* A wafer of pe_nx x pe_ny PEs over MPI_COMM_WORLD; a setup that fails is a
 * failed check. Free with wf_wafer_free and wf_deck_free. */
static inline int deck_wafer_create(checks *ck, wf_wafer *w, wf_deck *deck, int pe_nx, int pe_ny) {
  const wf_section *secs[] = {&wf_wafer_section};
  wf_status st;
  char set[64];
  snprintf(set, sizeof set, "wafer.pe_grid=%dx%d", pe_nx, pe_ny);
  int rc = wf_deck_create(deck, secs, 1, &st);
  if (rc == WF_OK) rc = wf_deck_set(deck, set, &st);
  if (rc == WF_OK) rc = wf_wafer_create(w, MPI_COMM_WORLD, deck, WF_RANKS_COMPACT, &st);
  CHECK(ck, rc == WF_OK, "setup of a %dx%d wafer: %s", pe_nx, pe_ny, st.msg);
  return rc;
}

#endif
