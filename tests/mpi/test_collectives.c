/* Fabric collectives against direct sums and closed forms. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "mpi_check.h"
#include "wf_decomp.h"
#include "wf_fabric.h"
#include "wf_grid.h"
#include "wf_hw.h"

static double pe_val(int gi, int gj) { return 100.0 * gi + gj + 0.5; }

static void run_grid(checks *ck, int nx, int ny) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp dc = t.dc;
  wf_fabric *fab = &t.fab;

  /* Sum and max over all PEs: partials per rank, compared with the direct
   * sum over the whole grid that every rank computes alone. */
  double part[2] = {0, -INFINITY}, direct_sum = 0, direct_max = -INFINITY;
  for (int j = 0; j < dc.ny; j++)
    for (int i = 0; i < dc.nx; i++) {
      double v = pe_val(dc.x0 + i, dc.y0 + j);
      part[0] += v;
      part[1] = fmax(part[1], v);
    }
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      direct_sum += pe_val(i, j);
      direct_max = fmax(direct_max, pe_val(i, j));
    }
  double sum = part[0], max = part[1];
  wf_fabric_allreduce(fab, &sum, 1, WF_SUM);
  wf_fabric_allreduce(fab, &max, 1, WF_MAX);
  CHECK(ck, fabs(sum - direct_sum) <= 1e-12 * fabs(direct_sum), "allreduce sum %.17g vs %.17g",
        sum, direct_sum);
  CHECK(ck, max == direct_max, "allreduce max %g vs %g", max, direct_max);
  double red = part[0];
  wf_fabric_reduce(fab, &red, 1, WF_SUM);
  if (dc.rank == wf_decomp_owner(&dc, 0, 0))
    CHECK(ck, fabs(red - direct_sum) <= 1e-12 * fabs(direct_sum), "reduce sum");

  /* Row and column broadcasts from the first, a middle and the last PE. */
  double *blk = malloc(sizeof(double) * (size_t)dc.nx * dc.ny);
  int roots_x[3] = {0, nx / 2, nx - 1}, roots_y[3] = {0, ny / 2, ny - 1};
  for (int r = 0; r < 3; r++) {
    for (int axis = 0; axis < 2; axis++) {
      for (int j = 0; j < dc.ny; j++)
        for (int i = 0; i < dc.nx; i++) blk[j * dc.nx + i] = pe_val(dc.x0 + i, dc.y0 + j);
      wf_status st;
      int rc = axis == 0 ? wf_fabric_bcast_row(fab, blk, sizeof(double), roots_x[r], &st)
                         : wf_fabric_bcast_col(fab, blk, sizeof(double), roots_y[r], &st);
      CHECK(ck, rc == WF_OK, "bcast: %s", st.msg);
      long bad = 0;
      for (int j = 0; j < dc.ny; j++)
        for (int i = 0; i < dc.nx; i++) {
          double want = axis == 0 ? pe_val(roots_x[r], dc.y0 + j) : pe_val(dc.x0 + i, roots_y[r]);
          if (blk[j * dc.nx + i] != want) bad++;
        }
      CHECK(ck, bad == 0, "grid %dx%d bcast %s root %d: %ld bad", nx, ny, axis ? "col" : "row",
            axis ? roots_y[r] : roots_x[r], bad);
    }
  }
  CHECK(ck, fab->c.ops == 3 + 6, "fabric counted %lld collectives", fab->c.ops);
  CHECK(ck, fab->c.model_cycles > 0, "model cycles counted");
  free(blk);
  test_wafer_free(&t);
}

/* Multicasts within parts of lines: line l's element from PE root(l) to
 * root(l) + 1 .. last(l), some lines carrying nothing; every rank of a line
 * ends with the root's element (the others keep theirs), and the words
 * counted are those of the PEs the spans reach. */
static void run_spans(checks *ck, int nx, int ny) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp dc = t.dc;
  wf_fabric *fab = &t.fab;
  for (int axis = 0; axis < 2; axis++) {
    int nlines = axis == 0 ? dc.ny : dc.nx, lo = axis == 0 ? dc.y0 : dc.x0;
    int n_along = axis == 0 ? nx : ny, plo = axis == 0 ? dc.x0 : dc.y0;
    int pn = axis == 0 ? dc.nx : dc.ny;
    double *lines = malloc(sizeof(double) * (size_t)nlines);
    int *root = malloc(sizeof(int) * 2 * (size_t)nlines), *last = root + nlines;
    long long want_words = 0;
    for (int l = 0; l < nlines; l++) {
      int g = lo + l;
      root[l] = (3 * g) % n_along;
      last[l] = g % 5 == 4 ? -1 : root[l] + g % 4 < n_along ? root[l] + g % 4 : n_along - 1;
      bool own = root[l] >= plo && root[l] < plo + pn;
      lines[l] = own ? pe_val(root[l], g) : -1.0 - g;
      for (int p = plo; p < plo + pn; p++)
        if (p > root[l] && p <= last[l]) want_words += 2;
    }
    long long words0 = fab->c.words_intra;
    wf_status st;
    int rc = wf_fabric_bcast_spans(fab, axis == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS, lines,
                                   sizeof(double), root, last, &st);
    CHECK(ck, rc == WF_OK, "bcast_spans: %s", st.msg);
    long bad = 0;
    for (int l = 0; l < nlines; l++) {
      int g = lo + l;
      bool own = root[l] >= plo && root[l] < plo + pn;
      double want = last[l] > root[l] || own ? pe_val(root[l], g) : -1.0 - g;
      if (lines[l] != want) bad++;
    }
    CHECK(ck, bad == 0, "grid %dx%d spans along %s: %ld lines wrong", nx, ny,
          axis ? "columns" : "rows", bad);
    CHECK(ck, fab->c.words_intra - words0 == want_words, "spans counted %lld words, want %lld",
          fab->c.words_intra - words0, want_words);
    free(lines), free(root);
  }
  test_wafer_free(&t);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  run_grid(&ck, 12, 9);
  run_grid(&ck, 13, 11);
  run_grid(&ck, 5, 31);
  run_spans(&ck, 12, 9);
  run_spans(&ck, 7, 23);
  int rc = checks_finish(&ck, "test_collectives");
  return rc;
}
