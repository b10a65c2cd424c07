/* Systems: the wafers `wafer tlrmvm` shares its frequencies out over (tlrmvm_parts.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlrmvm_parts.h"
#include "wf_wafer.h"

bool tlrmvm_mine(const tlrmvm_systems *y, int f) { return f % y->count == y->index; }
int tlrmvm_root_of(const tlrmvm_systems *y, int f) { return (f % y->count) * y->per; }

int tlrmvm_systems_create(wf_run *run, const tlrmvm_setup *s, tlrmvm_systems *y, wf_status *st) {
  const wf_wafer *w = run->wafer;
  *y = (tlrmvm_systems){.count = s->systems,
                        .per = run->nranks / s->systems,
                        .world = run->comm,
                        .row = w->fab.row_comm,
                        .col = w->fab.col_comm};
  if (run->nranks % s->systems != 0 || s->systems > s->nfreq)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "systems", st,
                        "%d systems need a multiple of %d ranks (this run has %d) and at most "
                        "one system a frequency (%d frequencies)",
                        s->systems, s->systems, run->nranks, s->nfreq);
  if (s->systems == 1) {
    y->dc = w->dc;
    return WF_OK;
  }
  y->index = run->rank / y->per;
  MPI_Comm group;
  MPI_Comm_split(run->comm, y->index, run->rank, &group);
  /* Bands of PE rows, as the one-system run lays its ranks out. */
  int py = y->per <= w->dc.pe_ny ? y->per : 0, px = py ? 1 : 0;
  int rc = wf_decomp_create(&y->dc, group, w->dc.pe_nx, w->dc.pe_ny, px, py, st);
  MPI_Comm_free(&group);
  if (rc != WF_OK) return wf_deck_blame(run->deck, TLRMVM_SECTION, "systems", st);
  MPI_Comm_split(y->dc.comm, y->dc.cy, y->dc.cx, &y->row);
  MPI_Comm_split(y->dc.comm, y->dc.cx, y->dc.cy, &y->col);
  y->own = true;
  return WF_OK;
}

void tlrmvm_systems_free(tlrmvm_systems *y) {
  if (!y->own) return;
  MPI_Comm_free(&y->row);
  MPI_Comm_free(&y->col);
  wf_decomp_free(&y->dc);
  y->own = false;
}

/* Frequency f's `len` values at `v`, from its system to every rank. */
void tlrmvm_share(const tlrmvm_systems *y, int f, float complex *v, size_t len) {
  if (y->count > 1) MPI_Bcast(v, 2 * (int)len, MPI_FLOAT, tlrmvm_root_of(y, f), y->world);
}
