/* Halo exchange against an independent computation: every element of PE
 * (gi, gj) holds k doubles computed from (gi, gj); each halo cell must hold
 * the value of the PE it mirrors (wrapped when periodic) or be untouched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "wf_decomp.h"
#include "wf_fabric.h"
#include "wf_grid.h"
#include "wf_halo.h"
#include "wf_hw.h"

#define UNTOUCHED (-12345.0)

static double pe_val(int gi, int gj, int c, int round) {
  return gi * 1000.0 + gj + c * 0.25 + round * 1e6;
}

typedef struct cfg {
  int nx, ny, w, k;
  bool corners, px, py;
  int off, len; /* len > 0: only values [off, off + len) of an element are its payload */
} cfg;

/* Elements one exchange delivers to this rank's PEs, counted directly:
 * from PEs of the same rank (pairs inside the block, and periodic wraps onto
 * the rank itself) and from other ranks (each cell of the block's halo
 * once: one MPI message carries it to the block). */
static void count_elements(const cfg *c, const wf_decomp *dc, long long *intra, long long *inter) {
  *intra = *inter = 0;
  for (int j = -c->w; j < dc->ny + c->w; j++)
    for (int i = -c->w; i < dc->nx + c->w; i++) {
      bool in_x = i >= 0 && i < dc->nx, in_y = j >= 0 && j < dc->ny;
      if (in_x && in_y) { /* a PE of the block: its neighbours inside the block */
        for (int dy = -c->w; dy <= c->w; dy++)
          for (int dx = -c->w; dx <= c->w; dx++) {
            if ((dx == 0 && dy == 0) || (!c->corners && dx && dy)) continue;
            int a = i + dx, b = j + dy;
            *intra += a >= 0 && a < dc->nx && b >= 0 && b < dc->ny;
          }
        continue;
      }
      if (!c->corners && !in_x && !in_y) continue;
      int gi = dc->x0 + i, gj = dc->y0 + j;
      if ((gi < 0 || gi >= c->nx) && !c->px) continue;
      if ((gj < 0 || gj >= c->ny) && !c->py) continue;
      int owner = wf_decomp_owner(dc, (gi + c->nx) % c->nx, (gj + c->ny) % c->ny);
      if (owner == dc->rank) ++*intra;
      else ++*inter;
    }
}

static void run_case(checks *ck, const cfg *c) {
  wf_status st;
  test_wafer t;
  if (test_wafer_create(ck, &t, c->nx, c->ny) != 0) return;
  const wf_decomp dc = t.dc;
  wf_fabric *fab = &t.fab;
  wf_halo h;
  size_t esz = (size_t)c->k * sizeof(double);
  int rc;
  if (c->len > 0) {
    wf_halo_shape pes = {.nx = dc.nx,
                         .ny = dc.ny,
                         .min_nx = dc.pe_nx / dc.px,
                         .min_ny = dc.pe_ny / dc.py,
                         .unit = "PEs",
                         .elem_offset = (size_t)c->off * sizeof(double),
                         .elem_payload = (size_t)c->len * sizeof(double)};
    rc = wf_halo_create_shape(&h, fab, &pes, esz, c->w, c->corners, c->px, c->py, &st);
  } else {
    rc = wf_halo_create(&h, fab, esz, c->w, c->corners, c->px, c->py, &st);
  }
  bool too_wide = c->w > c->nx / dc.px || c->w > c->ny / dc.py;
  CHECK(ck, rc == (too_wide ? WF_ERR_INPUT : WF_OK), "halo create rc %d (%s)", rc, st.msg);
  if (rc == WF_OK) {
    double *f = malloc(wf_halo_field_elems(&h) * esz);
    for (int round = 0; round < 2; round++) {
      for (size_t e = 0; e < wf_halo_field_elems(&h) * (size_t)c->k; e++) f[e] = UNTOUCHED;
      for (int j = 0; j < dc.ny; j++)
        for (int i = 0; i < dc.nx; i++)
          for (int q = 0; q < c->k; q++)
            f[wf_halo_index(&h, i, j) * c->k + q] = pe_val(dc.x0 + i, dc.y0 + j, q, round);
      wf_halo_begin(&h, f);
      /* Work on the interior while messages fly: reading the field is allowed. */
      double interior = 0, want_interior = 0;
      for (int j = 0; j < dc.ny; j++)
        for (int i = 0; i < dc.nx; i++) {
          interior += f[wf_halo_index(&h, i, j) * c->k];
          want_interior += pe_val(dc.x0 + i, dc.y0 + j, 0, round);
        }
      CHECK(ck, interior == want_interior, "interior changed during the exchange");
      wf_halo_end(&h, f);
      long bad = 0;
      for (int j = -c->w; j < dc.ny + c->w; j++)
        for (int i = -c->w; i < dc.nx + c->w; i++) {
          bool in_x = i >= 0 && i < dc.nx, in_y = j >= 0 && j < dc.ny;
          if (in_x && in_y) continue;
          int gi = dc.x0 + i, gj = dc.y0 + j;
          bool set = c->corners || in_x || in_y;
          if (gi < 0 || gi >= c->nx) set = set && c->px, gi = (gi + c->nx) % c->nx;
          if (gj < 0 || gj >= c->ny) set = set && c->py, gj = (gj + c->ny) % c->ny;
          for (int q = 0; q < c->k; q++) {
            if (c->len > 0 && (q < c->off || q >= c->off + c->len)) continue; /* not payload */
            double want = set ? pe_val(gi, gj, q, round) : UNTOUCHED;
            if (f[wf_halo_index(&h, i, j) * c->k + q] != want) bad++;
          }
        }
      CHECK(ck, bad == 0,
            "grid %dx%d w=%d k=%d corners=%d periodic=%d,%d round %d: %ld bad values", c->nx,
            c->ny, c->w, c->k, c->corners, c->px, c->py, round, bad);
    }
    CHECK(ck, fab->c.ops == 2, "fabric counted %lld exchanges", fab->c.ops);
    size_t payload = c->len > 0 ? (size_t)c->len * sizeof(double) : esz;
    long long intra, inter, words = (long long)((payload + 3) / 4);
    count_elements(c, &dc, &intra, &inter);
    CHECK(ck, fab->c.words_intra == 2 * intra * words && fab->c.words_inter == 2 * inter * words &&
                  fab->c.mpi_bytes == 2 * inter * (long long)payload,
          "grid %dx%d w=%d corners=%d periodic=%d,%d: counted %lld/%lld words inside/between "
          "ranks, direct count %lld/%lld",
          c->nx, c->ny, c->w, c->corners, c->px, c->py, fab->c.words_intra, fab->c.words_inter,
          2 * intra * words, 2 * inter * words);
    CHECK(ck, fabs(fab->c.model_cycles - 2 * h.model_cycles) < 1e-9, "model cycles counted");
    free(f);
    wf_halo_free(&h);
  }
  test_wafer_free(&t);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  const int grids[][2] = {{12, 9}, {13, 11}, {7, 20}, {4, 4}};
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++)
    for (int w = 1; w <= 3; w++)
      for (int k = 1; k <= 3; k += 2)
        for (int corners = 0; corners <= 1; corners++)
          for (int per = 0; per < 3; per++) {
            cfg c = {grids[gi][0], grids[gi][1], w, k, corners, per >= 1, per == 2, 0, 0};
            run_case(&ck, &c);
          }
  /* Padded elements (a padded mesh column): 7 values, the payload 3 from the 2nd on. */
  for (int per = 0; per < 3; per++) {
    cfg c = {13, 11, 2, 7, true, per >= 1, per == 2, 2, 3};
    run_case(&ck, &c);
  }
  int rc = checks_finish(&ck, "test_halo");
  return rc;
}
