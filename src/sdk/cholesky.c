/* `wafer cholesky`: the SDK's Cholesky example (csl-examples
 * benchmarks/cholesky; docs/sdk-kernels.md 1) on the PE grid: A = L L' by
 * right-looking Cholesky over the lower triangle of a P x P grid.
 *
 * PE (x, y), x <= y, holds the tile of A's rows band y and columns band x
 * (balanced bands: sdk_grid.h). At step s the diagonal PE (s, s) factors
 * its tile and multicasts it down column s; the PEs below solve their
 * tiles against it (the panel L(y, s)) and send them east along their rows
 * to the diagonal; each diagonal PE (x, x) forwards the tile it got south
 * down its column; every PE (x, y), s < x <= y, then subtracts L(y, s)
 * L(x, s)' from its tile, and column s retires. The SDK does this a column
 * at a time (N = P Nt steps of vectors of Nt); wafer a tile column at a
 * time (LAPACK's dpotrf, dtrsm and dgemm on the tiles), the same
 * factorisation with its sums in another order, and the model charges the
 * SDK's column steps.
 *
 * On the cluster a rank holds a block of PEs: the multicasts are the
 * fabric's within parts of lines (wf_fabric_bcast_spans), and the rank's
 * update is one dgemm a PE row. A pivot that is not positive travels in the
 * multicasts' headers: every rank that still has work learns it in the
 * step it happens and stops computing (the multicasts go on, so no rank
 * waits for another), and the run is refused naming the pivot's row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cholesky.h"
#include "wf_cblas.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_lapacke.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_wafer.h"

static const wf_key cholesky_keys[] = {
    {"n", WF_KEY_INT, "512", 1, 1e6, NULL, "rows and columns of the generated matrix", NULL},
    {"cond", WF_KEY_REAL, "1e6", 1, 1e15, NULL,
     "the generated matrix's 2-norm condition number (eigenvalues from 1 down to 1 / cond)", NULL},
    {"matrix", WF_KEY_INPUT, "", 0, 0, NULL,
     "a Matrix Market file (coordinate; real, integer or pattern; symmetric) to factor instead "
     "('' = generate one)",
     NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "the generated matrix's reflections", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed factorisations", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "check L L' = A and L against LAPACKE_dpotrf of each rank's leading rows", NULL},
};
static const wf_section cholesky_section = {
    "cholesky", "The SDK's Cholesky example: A = L L' over the lower triangle of a square PE grid.",
    cholesky_keys, (int)(sizeof cholesky_keys / sizeof cholesky_keys[0]), NULL, NULL};
static const wf_section *const cholesky_sections[] = {&cholesky_section};

static long long most(long long items, int P) { return (items + P - 1) / P; }
static sdk_span band(const ch_case *c, int k) { return sdk_span_of(c->n, c->P, k, 1); }
static long long len(sdk_span s) { return s.hi - s.lo; }
static double *elem(double *lines, const ch_rank *r, int l) { return lines + l * r->esz; }

/* Copy rows [r0, r1) and columns [k.lo, k.hi) of the block into a tile
 * (leading dimension |k|), or back. */
static void tile_get(const ch_block *b, long long r0, long long r1, sdk_span k, double *t) {
  for (long long i = r0; i < r1; i++)
    memcpy(t + (i - r0) * len(k), b->a + (i - b->rows.lo) * b->nc + (k.lo - b->cols.lo),
           (size_t)len(k) * sizeof *t);
}

/* A line that carries nothing (its root is its last PE: the diagonal PE of
 * the last column, or a row's own root) is read by the ranks along it all
 * the same: its header must say "no failure", not what the heap held. */
static void clear_headers(double *lines, const ch_rank *r, int n) {
  for (int l = 0; l < n; l++) lines[l * r->esz] = 0;
}

static void learn(ch_rank *r, const double *e) {
  if (!r->failed && e[0] != 0) r->failed = (long long)e[0];
}

int ch_panels(wf_run *run, const ch_case *c, ch_rank *r, int s, int from, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  wf_fabric *fab = &run->wafer->fab;
  sdk_span k = band(c, s);
  int *root = r->root, *last = r->last;
  clear_headers(r->rline, r, dc->ny), clear_headers(r->cline, r, dc->nx);
  bool col_here = dc->x0 <= s && s < dc->x0 + dc->nx;
  for (int l = 0; l < dc->ny; l++) { /* east: PE (s, y) to the diagonal (y, y) */
    int y = dc->y0 + l;
    root[l] = s, last[l] = y >= from ? y : -1;
    if (col_here && y >= from) {
      double *e = elem(r->rline, r, l);
      e[0] = (double)r->failed;
      tile_get(&r->b, band(c, y).lo, band(c, y).hi, k, e + 1);
    }
  }
  int rc = wf_fabric_bcast_spans(fab, WF_ALONG_ROWS, r->rline, (size_t)r->esz * sizeof(double),
                                 root, last, st);
  for (int l = 0; l < dc->nx && rc == WF_OK; l++) { /* south: each diagonal PE down its column */
    int x = dc->x0 + l;
    root[l] = x, last[l] = x >= from ? c->P - 1 : -1;
    if (x >= from && dc->y0 <= x && x < dc->y0 + dc->ny) {
      const double *e = elem(r->rline, r, x - dc->y0);
      learn(r, e);
      memcpy(elem(r->cline, r, l), e, (size_t)(1 + len(band(c, x)) * len(k)) * sizeof(double));
    }
  }
  if (rc == WF_OK)
    rc = wf_fabric_bcast_spans(fab, WF_ALONG_COLUMNS, r->cline, (size_t)r->esz * sizeof(double),
                               root, last, st);
  if (rc != WF_OK) return rc;
  for (int l = 0; l < dc->ny; l++)
    if (dc->y0 + l >= from) learn(r, elem(r->rline, r, l));
  for (int l = 0; l < dc->nx; l++) { /* the column tiles, packed as one panel */
    int x = dc->x0 + l;
    if (x < from) continue;
    const double *e = elem(r->cline, r, l);
    learn(r, e);
    memcpy(r->panel + (band(c, x).lo - r->b.cols.lo) * len(k), e + 1,
           (size_t)(len(band(c, x)) * len(k)) * sizeof(double));
  }
  return WF_OK;
}

void ch_panel_update(const wf_decomp *dc, const ch_case *c, const ch_rank *r, int s, int from,
                     double alpha, double *out) {
  const ch_block *b = &r->b;
  long long kw = len(band(c, s));
  long long c0 = band(c, from > dc->x0 ? from : dc->x0).lo; /* the first column updated */
  for (int l = 0; l < dc->ny; l++) {
    int y = dc->y0 + l;
    sdk_span rows = band(c, y);
    long long c1 = rows.hi < b->cols.hi ? rows.hi : b->cols.hi; /* to the diagonal */
    if (y < from || from >= dc->x0 + dc->nx || c1 <= c0) continue;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len(rows), (int)(c1 - c0), (int)kw,
                alpha, elem(r->rline, r, l) + 1, (int)kw, r->panel + (c0 - b->cols.lo) * kw,
                (int)kw, 1.0, out + (rows.lo - b->rows.lo) * b->nc + (c0 - b->cols.lo),
                (int)b->nc);
  }
}

/* Step s's diagonal tile: factored by PE (s, s), multicast down column s,
 * and the panel below solved against it. Collective. */
static int factor_panel(wf_run *run, const ch_case *c, ch_rank *r, int s, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  sdk_span k = band(c, s);
  bool col_here = dc->x0 <= s && s < dc->x0 + dc->nx;
  bool work = !r->failed && !wf_signal_stop();
  double *d = col_here ? elem(r->dline, r, s - dc->x0) : NULL;
  clear_headers(r->dline, r, dc->nx);
  if (col_here && dc->y0 <= s && s < dc->y0 + dc->ny) { /* PE (s, s) */
    d[0] = (double)r->failed;
    if (work) {
      tile_get(&r->b, k.lo, k.hi, k, d + 1);
      lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)len(k), d + 1,
                                       (lapack_int)len(k));
      if (info > 0) d[0] = (double)(k.lo + info);
      for (long long i = k.lo; i < k.hi; i++) /* its lower triangle back */
        memcpy(r->b.a + (i - r->b.rows.lo) * r->b.nc + (k.lo - r->b.cols.lo),
               d + 1 + (i - k.lo) * len(k), (size_t)(i - k.lo + 1) * sizeof(double));
    }
  }
  for (int l = 0; l < dc->nx; l++) r->root[l] = s, r->last[l] = dc->x0 + l == s ? c->P - 1 : -1;
  int rc = wf_fabric_bcast_spans(&run->wafer->fab, WF_ALONG_COLUMNS, r->dline,
                                 (size_t)r->esz * sizeof(double), r->root, r->last, st);
  if (rc != WF_OK || !col_here) return rc;
  learn(r, d);
  long long i0 = k.hi > r->b.rows.lo ? k.hi : r->b.rows.lo; /* the rows below the tile */
  if (work && !r->failed && i0 < r->b.rows.hi)
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
                (int)(r->b.rows.hi - i0), (int)len(k), 1.0, d + 1, (int)len(k),
                r->b.a + (i0 - r->b.rows.lo) * r->b.nc + (k.lo - r->b.cols.lo), (int)r->b.nc);
  return WF_OK;
}

/* One factorisation of the block as made. Collective. */
static int factor(wf_run *run, const ch_case *c, ch_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  memcpy(r->b.a, r->a0, (size_t)(r->b.nr * r->b.nc) * sizeof *r->a0);
  r->failed = 0;
  for (int s = 0; s < c->P; s++) {
    if (factor_panel(run, c, r, s, st) != WF_OK || ch_panels(run, c, r, s, s + 1, st) != WF_OK)
      return st->code;
    /* After a signal the rank keeps to the multicasts (its partners wait in
     * them) but skips the work; sdk_repeat's check ends the run. */
    if (!r->failed && !wf_signal_stop()) ch_panel_update(dc, c, r, s, s + 1, -1.0, r->b.a);
  }
  return WF_OK;
}

/* The SDK kernel's factorisation on the wafer (pe.csl, tasks main and cont:
 * docs/sdk-kernels.md 1): N = P Nt column steps, each a chain through the
 * roles of the PEs: the fringe's diagonal PE (an inverse square root, its
 * column scaled by fmuls of Nt, its triangle's fmacs of i - ti for
 * i > ti), the column down (Nt words), the edge PEs (a division, fmuls of
 * Nt, Nt - ti - 1 fmacs of Nt), the row multicast east and the diagonal's
 * forward south (Nt words each), and the interior PEs' Nt fmacs of Nt,
 * over the P - s PEs still active. Vector operations read two operands from
 * SRAM and write one; the diagonal's scalar inverse square root and the
 * edge's division cost the hardware's ranges (wf_model_scalar). */
static wf_range factor_cycles(const wf_wafer *wf, const ch_case *c) {
  long long nt = most(c->n, c->P);
  wf_range fmul = wf_model_vec(&wf->hw, WF_OP_MUL, WF_FP32, (double)nt, 2, 1);
  wf_range fmac = wf_model_vec(&wf->hw, WF_OP_FMAC, WF_FP32, (double)nt, 2, 1);
  wf_range root = wf_model_scalar(&wf->hw, 0, 1, 0), divide = wf_model_scalar(&wf->hw, 0, 0, 1);
  wf_range total = {0, 0};
  for (int s = 0; s < c->P; s++) {
    double hop = wf_model_bcast_cycles(&wf->hw, &wf->grid, (size_t)(nt * 4), c->P - s, 0);
    for (long long ti = 0; ti < nt; ti++) {
      wf_range step = wf_range_add(root, fmul); /* the diagonal PE */
      for (long long i = ti + 1; i < nt; i++)
        step = wf_range_add(step, wf_model_vec(&wf->hw, WF_OP_FMAC, WF_FP32, (double)(i - ti), 2, 1));
      if (s + 1 < c->P) { /* the edge and the interior */
        step = wf_range_add(step, wf_range_add(divide, fmul));
        step = wf_range_add(step, wf_range_scale(fmac, (double)(nt - ti - 1)));
        step = wf_range_add(step, wf_range_scale(fmac, (double)nt));
      }
      total = wf_range_add(total, wf_range_plus(step, 3 * hop));
    }
  }
  return total;
}

static void project(wf_run *run, const ch_case *c) {
  const wf_wafer *wf = run->wafer;
  double nt = (double)most(c->n, c->P), n = (double)c->n;
  run->model = (wf_projection){.valid = true,
                               .unit = "factorisation",
                               .seconds = wf_model_seconds(&wf->hw, factor_cycles(wf, c)),
                               .flops = n * n * n / 3,
                               .bytes_per_pe = 4.0 * (nt * nt + 2 * nt),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)c->P * c->P,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

/* The factor (lower triangle, zeros above) and the matrix as made. */
static int write_output(const wf_run *run, const ch_case *c, const ch_rank *r, const char *path,
                        wf_status *st) {
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  unsigned long long gl[2] = {(unsigned long long)c->n, (unsigned long long)c->n};
  unsigned long long off[2] = {(unsigned long long)r->b.rows.lo, (unsigned long long)r->b.cols.lo};
  unsigned long long cnt[2] = {(unsigned long long)r->b.nr, (unsigned long long)r->b.nc};
  wf_h5_block blk = {.ndim = 2, .global = gl, .offset = off, .count = cnt};
  int rc = wf_h5_write(&f, "L", WF_F64, &blk, r->b.a, false, st);
  if (rc == WF_OK) rc = wf_h5_write(&f, "A", WF_F64, &blk, r->a0, false, st);
  return wf_h5_finish(&f, rc, st);
}

static int read_case(const wf_run *run, ch_case *c, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  *c = (ch_case){.n = wf_deck_int(d, "cholesky", "n"),
                 .P = dc->pe_nx,
                 .matrix = wf_deck_str(d, "cholesky", "matrix"),
                 .cond = wf_deck_real(d, "cholesky", "cond"),
                 .seed = (uint64_t)wf_deck_int(d, "cholesky", "seed")};
  if (dc->pe_nx != dc->pe_ny)
    return wf_deck_fail(d, "wafer", "pe_grid", st,
                        "the SDK's Cholesky runs on a square grid of P x P PEs; this one is %d x %d",
                        dc->pe_nx, dc->pe_ny);
  if (ch_matrix_size(c, st) != WF_OK) return st->code;
  if (c->n < c->P)
    return wf_deck_fail(d, "cholesky", c->matrix[0] ? "matrix" : "n", st,
                        "%lld rows for a grid of %d x %d PEs: each PE needs a row of its tile "
                        "(a larger matrix or a smaller [wafer] pe_grid)",
                        c->n, c->P, c->P);
  return WF_OK;
}

static int create_rank(const wf_run *run, const ch_case *c, ch_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  ch_block *b = &r->b;
  b->rows = sdk_span_of(c->n, c->P, dc->y0, dc->ny);
  b->cols = sdk_span_of(c->n, c->P, dc->x0, dc->nx);
  b->nr = len(b->rows), b->nc = len(b->cols);
  r->mt = most(c->n, c->P), r->esz = 1 + r->mt * r->mt;
  double lines = (double)r->esz * (2.0 * dc->nx + dc->ny) + (double)b->nc * r->mt;
  char what[160] = "the matrix's blocks";
  if (c->matrix[0])
    snprintf(what, sizeof what, "cholesky.matrix = %s: %lld x %lld, its size line says", c->matrix,
             c->n, c->n);
  if (wf_memory_fits(run->comm, 8.0 * (lines + 2.0 * b->nr * b->nc), what,
                     "a smaller matrix, or more nodes", st) != WF_OK)
    return st->code;
  const wf_fabric *fab = &run->wafer->fab;
  if (!wf_fabric_lines_fit(fab, WF_ALONG_ROWS, 8.0 * (double)r->esz) ||
      !wf_fabric_lines_fit(fab, WF_ALONG_COLUMNS, 8.0 * (double)r->esz))
    return wf_deck_fail(run->deck, "cholesky", c->matrix[0] ? "matrix" : "n", st,
                        "the tiles a rank multicasts would pass MPI's 2 GB a message (more "
                        "ranks, so smaller blocks, or a smaller matrix)");
  b->a = malloc((size_t)(b->nr * b->nc) * sizeof(double));
  r->a0 = malloc((size_t)(b->nr * b->nc) * sizeof(double));
  r->dline = malloc((size_t)(dc->nx * r->esz) * sizeof(double));
  r->rline = malloc((size_t)(dc->ny * r->esz) * sizeof(double));
  r->cline = malloc((size_t)(dc->nx * r->esz) * sizeof(double));
  r->panel = malloc((size_t)(b->nc * r->mt + 1) * sizeof(double));
  int most = dc->nx > dc->ny ? dc->nx : dc->ny;
  r->root = malloc(2 * (size_t)most * sizeof *r->root);
  r->last = r->root ? r->root + most : NULL;
  wf_status_clear(st);
  if (!b->a || !r->a0 || !r->dline || !r->rline || !r->cline || !r->panel || !r->root)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's blocks");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  if (ch_matrix_fill(run, (ch_case *)c, b, st) != WF_OK) return st->code;
  memcpy(r->a0, b->a, (size_t)(b->nr * b->nc) * sizeof(double));
  return WF_OK;
}

static void free_rank(ch_rank *r) {
  free(r->b.a), free(r->a0), free(r->dline), free(r->rline), free(r->cline), free(r->panel);
  free(r->root);
}

static void report(wf_run *run, const ch_case *c, double seconds, long repeat,
                   const double worst[2], const bool checked[2]) {
  double per = seconds / (double)repeat, n = (double)c->n, flops = n * n * n / 3;
  wf_report rep;
  wf_report_open(&rep, run, "cholesky");
  wf_report_begin(&rep, "cholesky");
  wf_report_line(&rep, NULL);
  wf_report_int(&rep, "n", c->n, "n = %d");
  wf_report_str(&rep, "matrix", c->matrix[0] ? c->matrix : "generated", "matrix %s");
  if (!c->matrix[0]) wf_report_num(&rep, "cond", c->cond, "condition %.3g");
  wf_report_int(&rep, "tile", most(c->n, c->P), "tiles of %d");
  wf_report_scaled(&rep, "seconds_per_factorisation", per, 1e3, "%.3f ms/factorisation");
  wf_report_scaled(&rep, "flop_rate", per > 0 ? flops / per : 0, 1e-9, "%.2f GFLOP/s");
  if (checked[0]) wf_report_num(&rep, "residual_over_bound", worst[0], "L L' - A %.3g of its bound");
  if (checked[1]) wf_report_num(&rep, "lapack_over_bound", worst[1], "L - L_lapack %.3g of its bound");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms/factorisation, %.2f GFLOP/s", per * 1e3,
           per > 0 ? flops / per * 1e-9 : 0);
}

/* sdk_repeat's unit: one factorisation. */
typedef struct ch_job {
  const ch_case *c;
  ch_rank *r;
} ch_job;
static int factor_unit(wf_run *run, void *ctx, wf_status *st) {
  ch_job *job = ctx;
  return factor(run, job->c, job->r, st);
}

/* A pivot that was not positive, on any rank: the run's input error. */
static int refuse_failed(wf_run *run, const ch_case *c, ch_rank *r, wf_status *st) {
  double failed = (double)r->failed;
  wf_fabric_allreduce(&run->wafer->fab, &failed, 1, WF_MAX);
  if (failed == 0) return WF_OK;
  long long row = (long long)failed;
  if (c->matrix[0])
    return wf_fail(st, WF_ERR_INPUT, "cholesky.matrix = %s: not positive definite: the pivot of "
                   "row and column %lld (1-based) is not positive", c->matrix, row);
  return wf_fail(st, WF_ERR_INPUT, "cholesky: the generated matrix (cond %g) is not positive "
                 "definite in double precision: the pivot of row and column %lld (1-based) is "
                 "not positive (a smaller cholesky.cond)", c->cond, row);
}

static int run_checks(wf_run *run, ch_case *c, ch_rank *r, double worst[2], bool checked[2],
                      wf_status *st) {
  checked[0] = checked[1] = false;
  if (!wf_deck_bool(run->deck, "cholesky", "check")) {
    wf_run_unchecked(run, "the factor", "cholesky.check = false");
    return WF_OK;
  }
  bool applicable = false;
  if (ch_check_lapack(run, c, r, &worst[1], &applicable, st) != WF_OK) return st->code;
  checked[1] = applicable;
  if (applicable)
    wf_run_check(run, worst[1] <= 1.0,
                 "L equals LAPACKE_dpotrf's within the perturbation bound of both");
  else
    wf_run_unchecked(run, "L against LAPACK",
                     "the perturbation bound does not hold: kappa eps >= 1/2 (a matrix too "
                     "ill-conditioned), or the condition estimate overflowed (values near the "
                     "bottom of double's range)");
  if (ch_check_residual(run, c, r, &worst[0], st) != WF_OK) return st->code;
  checked[0] = true;
  wf_run_check(run, worst[0] <= 1.0, "L L' equals A within 2 gamma_(n+2) |L| |L'|");
  return WF_OK;
}

static int cholesky_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  ch_case c;
  if (read_case(run, &c, st) != WF_OK) return st->code;
  wf_blas_single_thread();
  ch_rank r = {0};
  int rc = create_rank(run, &c, &r, st);
  long repeat = wf_deck_int(d, "cholesky", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("cholesky: A = L L', n = %lld (%s), on the lower triangle of %d x %d PEs (tiles of "
           "%lld)\n", c.n, c.matrix[0] ? c.matrix : "generated", c.P, c.P, most(c.n, c.P));
  double seconds = 0, worst[2] = {0, 0};
  bool checked[2] = {false, false};
  ch_job job = {&c, &r};
  if (rc == WF_OK)
    rc = sdk_repeat(run, "cholesky", "factorisations", repeat, factor_unit, &job, &seconds, st);
  if (rc == WF_OK) rc = refuse_failed(run, &c, &r, st);
  if (rc == WF_OK) {
    for (long long i = r.b.rows.lo; i < r.b.rows.hi; i++) /* the upper triangle's scratch */
      for (long long j = i + 1 > r.b.cols.lo ? i + 1 : r.b.cols.lo; j < r.b.cols.hi; j++)
        r.b.a[(i - r.b.rows.lo) * r.b.nc + (j - r.b.cols.lo)] = 0;
    project(run, &c);
    rc = run_checks(run, &c, &r, worst, checked, st);
  }
  if (rc == WF_OK) report(run, &c, seconds, repeat, worst, checked);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &c, &r, out, st);
  free_rank(&r);
  return rc;
}

const wf_workload wf_cholesky_workload = {
    .name = "cholesky",
    .help = "the SDK's Cholesky example: A = L L' over the lower triangle of a square PE grid, "
            "against LAPACKE_dpotrf",
    .sections = cholesky_sections,
    .nsections = 1,
    .run = cholesky_run,
};
