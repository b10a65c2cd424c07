/* `wafer gemv`: the SDK's GEMV example (csl-examples
 * benchmarks/gemv-collectives_2d) on the PE grid: y = A x + b.
 *
 * PE (i, j) holds the tile A(j, i) of A cut into bands (rows over the PE
 * rows, columns over the PE columns: sdk_grid.h); x starts on the first PE
 * row (band i on PE (i, 0)) and b on the first PE column. x is multicast
 * down the columns, every PE multiplies its tile by its band of x (Nt
 * fmacs of length Mt), the first column adds b, and the partial sums are
 * reduced along the rows into the last PE column, which ends with y
 * (docs/sdk-kernels.md, 4c; the SDK then gathers y to one PE, which wafer
 * leaves where it is).
 *
 * On the cluster a rank's tiles form one block of A: its band of x arrives
 * by one multicast a PE column (wf_fabric_bcast_lines), its product is one
 * BLAS dgemv, and its partial sums go into the reduction as its first PE
 * column's (the other PEs' partial sums being zero). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "sdk_dense.h"
#include "sdk_grid.h"
#include "wf_cblas.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_wafer.h"

static const wf_key gemv_keys[] = {
    {"m", WF_KEY_INT, "2048", 1, 1e7, NULL, "rows of A, entries of y and b", NULL},
    {"n", WF_KEY_INT, "2048", 1, 1e7, NULL, "columns of A, entries of x", NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "the entries of A, x and b (uniform in [-1, 1))", NULL},
    {"repeat", WF_KEY_INT, "10", 1, 1e9, NULL, "timed products", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare y with one BLAS dgemv of the last PE column's rows of A", NULL},
};
static const wf_section gemv_section = {
    "gemv", "The SDK's GEMV example: y = A x + b with 2D collectives over the PE grid.",
    gemv_keys, (int)(sizeof gemv_keys / sizeof gemv_keys[0]), NULL, NULL};
static const wf_section *const gemv_sections[] = {&gemv_section};

typedef struct gv_case {
  long long m, n;
  uint64_t seed;
} gv_case;

/* This rank's part: its rows of A, y and b, its columns of A and x. */
typedef struct gv_rank {
  sdk_span rows, cols;
  long long nr, nc, mt, nt; /* ... their counts; the largest PE band of each */
  double *a;       /* nr x nc, row-major */
  double *x, *b;   /* the rank's band of x (from the multicast), of b */
  double *xline;   /* one band of x a PE column: nx x nt */
  double *partial; /* a segment of mt a PE: nx x ny x mt, x fastest */
  bool last;       /* holds the last PE column, where y ends */
} gv_rank;

static long long span_len(sdk_span s) { return s.hi - s.lo; }

/* One product: the rank's y rows (valid where `last`) in r->partial.
 * Collective. */
static int product(wf_run *run, const gv_case *g, gv_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  wf_fabric *fab = &run->wafer->fab;
  if (dc->y0 == 0) /* the first PE row holds x */
    for (int l = 0; l < dc->nx; l++) {
      sdk_span c = sdk_span_of(g->n, dc->pe_nx, dc->x0 + l, 1);
      memcpy(r->xline + l * r->nt, r->x + (c.lo - r->cols.lo), (size_t)span_len(c) * sizeof *r->x);
    }
  if (wf_fabric_bcast_lines(fab, WF_ALONG_COLUMNS, r->xline, (size_t)r->nt * sizeof(double), 0,
                            st) != WF_OK)
    return st->code;
  double *xr = r->xline; /* the bands, packed: the rank's x */
  for (int l = 0, at = 0; l < dc->nx; l++) {
    long long w = span_len(sdk_span_of(g->n, dc->pe_nx, dc->x0 + l, 1));
    memmove(xr + at, r->xline + l * r->nt, (size_t)w * sizeof *xr);
    at += (int)w;
  }
  /* The rank's partial sums, as its first PE column's segments. */
  size_t seg = (size_t)r->mt;
  memset(r->partial, 0, (size_t)dc->nx * dc->ny * seg * sizeof *r->partial);
  double *y = r->partial + (size_t)(dc->nx * dc->ny) * seg; /* scratch after the segments */
  memcpy(y, r->b, (size_t)r->nr * sizeof *y);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)r->nr, (int)r->nc, 1.0, r->a, (int)r->nc, xr, 1,
              dc->x0 == 0 ? 1.0 : 0.0, y, 1); /* b once: on the first PE column */
  for (int l = 0; l < dc->ny; l++) {
    sdk_span rows = sdk_span_of(g->m, dc->pe_ny, dc->y0 + l, 1);
    memcpy(r->partial + (size_t)l * dc->nx * seg, y + (rows.lo - r->rows.lo),
           (size_t)span_len(rows) * sizeof *y);
  }
  return wf_fabric_reduce_segments(fab, WF_ALONG_ROWS, r->partial, (int)r->mt, dc->pe_nx - 1, st);
}

/* y of PE row l on the last PE column (where r->last). */
static const double *y_of_row(const wf_decomp *dc, const gv_rank *r, int l) {
  return r->partial + ((size_t)l * dc->nx + (size_t)(dc->pe_nx - 1 - dc->x0)) * (size_t)r->mt;
}

/* The SDK kernel's product on the wafer: x down the columns, Nt fmacs of
 * length Mt (reading the partial sums and A from SRAM, writing the sums),
 * b's add on the first column, the reduction along the rows into the last
 * column; one after another (the SDK's task chain). */
static wf_range product_cycles(const wf_wafer *wf, const gv_rank *r) {
  const wf_decomp *dc = &wf->dc;
  double mt = (double)r->mt, nt = (double)r->nt;
  wf_range cycles = wf_model_vec(&wf->hw, WF_OP_FMAC, WF_FP32, mt * nt, 2, 1);
  cycles = wf_range_add(cycles, wf_model_vec(&wf->hw, WF_OP_ADD, WF_FP32, mt, 2, 1));
  cycles = wf_range_plus(cycles, wf_model_bcast_cycles(&wf->hw, &wf->grid, (size_t)(nt * 4),
                                                       dc->pe_ny, 0));
  return wf_range_plus(cycles, wf_model_segment_reduce_cycles(&wf->hw, &wf->grid, dc->pe_nx,
                                                              dc->pe_nx - 1, mt));
}

static void project(wf_run *run, const gv_case *g, const gv_rank *r) {
  const wf_wafer *wf = run->wafer;
  double mt = (double)r->mt, nt = (double)r->nt;
  run->model = (wf_projection){.valid = true,
                               .unit = "product",
                               .seconds = wf_model_seconds(&wf->hw, product_cycles(wf, r)),
                               .flops = 2.0 * (double)g->m * (double)g->n,
                               .bytes_per_pe = 4.0 * (mt * nt + nt + 2 * mt),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)wf->dc.pe_nx * wf->dc.pe_ny,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

/* The check, on the ranks of the last PE column: their rows of y against
 * one dgemv of their rows of A (all columns) made afresh, within
 * 2 gamma_{n+1} (|A| |x| + |b|) entry by entry. The worst ratio of error to
 * bound over the ranks. */
static int check_product(wf_run *run, const gv_case *g, const gv_rank *r, double *worst,
                         wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  long long nr = r->last ? r->nr : 0, N = g->n;
  double *a = malloc((size_t)(nr * N + 1) * sizeof *a), *x = malloc((size_t)(N + 1) * sizeof *x);
  double *want = malloc((size_t)(3 * nr + 1) * sizeof *want);
  double mine = 0;
  wf_status_clear(st);
  if (!a || !x || !want) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the product's reference");
  } else if (nr > 0 && sdk_dense_fill(a, N, g->seed, SDK_A, r->rows.lo, nr, 0, N, N)) {
    double *bound = want + nr, *got = want + 2 * nr;
    sdk_dense_fill(x, N, g->seed, SDK_X, 0, 1, 0, N, N);
    sdk_dense_fill(want, nr, g->seed, SDK_Y, 0, 1, r->rows.lo, nr, g->m); /* b */
    for (long long i = 0; i < nr; i++) bound[i] = fabs(want[i]);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nr, (int)N, 1.0, a, (int)N, x, 1, 1.0, want, 1);
    for (long long e = 0; e < nr * N; e++) a[e] = fabs(a[e]);
    for (long long e = 0; e < N; e++) x[e] = fabs(x[e]);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)nr, (int)N, 1.0, a, (int)N, x, 1, 1.0, bound, 1);
    for (long long i = 0; i < nr; i++) bound[i] *= 2.0 * wf_gamma((double)N + 3, 0x1p-53);
    for (int l = 0; l < dc->ny; l++) {
      sdk_span rows = sdk_span_of(g->m, dc->pe_ny, dc->y0 + l, 1);
      memcpy(got + (rows.lo - r->rows.lo), y_of_row(dc, r, l), (size_t)span_len(rows) * sizeof *got);
    }
    mine = sdk_dense_worst(got, want, bound, nr);
  }
  free(a), free(x), free(want);
  if (sdk_filled(run, "while checking the product", st) != WF_OK) return st->code;
  if (mine != mine) mine = INFINITY; /* MPI_MAX may drop a NaN */
  MPI_Allreduce(&mine, worst, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  return WF_OK;
}

/* y (from the last PE column), and the inputs A, x and b. */
static int write_output(const wf_run *run, const gv_case *g, const gv_rank *r, const char *path,
                        wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  double *y = malloc((size_t)(r->nr + 1) * sizeof *y);
  wf_status_clear(st);
  if (!y) wf_fail(st, WF_ERR_RUNTIME, "out of memory for y's output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(y), st->code;
  if (r->last)
    for (int l = 0; l < dc->ny; l++) {
      sdk_span rows = sdk_span_of(g->m, dc->pe_ny, dc->y0 + l, 1);
      memcpy(y + (rows.lo - r->rows.lo), y_of_row(dc, r, l), (size_t)span_len(rows) * sizeof *y);
    }
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return free(y), st->code;
  int rc = WF_OK;
  bool first_row = dc->y0 == 0, first_col = dc->x0 == 0;
  struct {
    const char *name;
    int ndim;
    long long rows, cols;
    sdk_span r, c;
    bool mine;
    const double *data;
  } out[4] = {{"y", 1, g->m, 1, r->rows, {0, 1}, r->last, y},
              {"A", 2, g->m, g->n, r->rows, r->cols, true, r->a},
              {"x", 1, g->n, 1, r->cols, {0, 1}, first_row, r->x},
              {"b", 1, g->m, 1, r->rows, {0, 1}, first_col, r->b}};
  for (int d = 0; d < 4 && rc == WF_OK; d++) {
    /* vectors: written by one rank a band (the others write nothing) */
    sdk_span rs = out[d].mine ? out[d].r : (sdk_span){0, 0};
    unsigned long long gl[2] = {(unsigned long long)out[d].rows, (unsigned long long)out[d].cols};
    unsigned long long off[2] = {(unsigned long long)rs.lo, (unsigned long long)out[d].c.lo};
    unsigned long long cnt[2] = {(unsigned long long)span_len(rs),
                                 (unsigned long long)span_len(out[d].c)};
    wf_h5_block blk = {.ndim = out[d].ndim, .global = gl, .offset = off, .count = cnt};
    if (wf_h5_write(&f, out[d].name, WF_F64, &blk, out[d].data, false, st) != WF_OK) rc = st->code;
  }
  rc = wf_h5_finish(&f, rc, st);
  free(y);
  return rc;
}

static int create_rank(const wf_run *run, const gv_case *g, gv_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  r->rows = sdk_span_of(g->m, dc->pe_ny, dc->y0, dc->ny);
  r->cols = sdk_span_of(g->n, dc->pe_nx, dc->x0, dc->nx);
  r->nr = span_len(r->rows), r->nc = span_len(r->cols);
  r->mt = (g->m + dc->pe_ny - 1) / dc->pe_ny, r->nt = (g->n + dc->pe_nx - 1) / dc->pe_nx;
  r->last = dc->x0 + dc->nx == dc->pe_nx;
  double partial = (double)dc->nx * dc->ny * r->mt + (double)r->nr;
  double held = (double)r->nr * r->nc + r->nc + r->nr + (double)dc->nx * r->nt + partial;
  double check = wf_deck_bool(run->deck, "gemv", "check") && r->last
                     ? (double)r->nr * g->n + g->n + 3.0 * r->nr
                     : 0;
  if (wf_memory_fits(run->comm, 8.0 * (held + check), "the matrix's blocks",
                     "smaller [gemv] m and n, or more nodes", st) != WF_OK)
    return st->code;
  r->a = malloc((size_t)(r->nr * r->nc) * sizeof(double));
  r->x = malloc((size_t)r->nc * sizeof(double));
  r->b = malloc((size_t)r->nr * sizeof(double));
  r->xline = malloc((size_t)(dc->nx * r->nt) * sizeof(double));
  r->partial = malloc((size_t)partial * sizeof(double));
  wf_status_clear(st);
  if (!r->a || !r->x || !r->b || !r->xline || !r->partial)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's blocks");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  if (sdk_dense_fill(r->a, r->nc, g->seed, SDK_A, r->rows.lo, r->nr, r->cols.lo, r->nc, g->n)) {
    sdk_dense_fill(r->x, r->nc, g->seed, SDK_X, 0, 1, r->cols.lo, r->nc, g->n);
    sdk_dense_fill(r->b, r->nr, g->seed, SDK_Y, 0, 1, r->rows.lo, r->nr, g->m);
  }
  return sdk_filled(run, "while making the matrix", st);
}

static void free_rank(gv_rank *r) {
  free(r->a), free(r->x), free(r->b), free(r->xline), free(r->partial);
}

static void report(wf_run *run, const gv_case *g, double seconds, long repeat, double worst,
                   bool checked, double triad) {
  double per = seconds / (double)repeat, bytes = 8.0 * (double)g->m * (double)g->n;
  wf_report rep;
  wf_report_open(&rep, run, "gemv");
  wf_report_begin(&rep, "gemv");
  wf_report_line(&rep, NULL);
  long long dims[2] = {g->m, g->n};
  wf_report_ints(&rep, "mn", dims, 2, "m x n = %d");
  wf_report_scaled(&rep, "seconds_per_product", per, 1e6, "%.1f us/product");
  wf_report_scaled(&rep, "matrix_GBps", per > 0 ? bytes / per : 0, 1e-9, "A read at %.2f GB/s");
  sdk_report_triad(&rep, bytes, per, triad, "%.0f%% of it");
  if (checked) wf_report_num(&rep, "error_over_bound", worst, "error %.3g of its bound");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.1f us/product, A at %.2f GB/s", per * 1e6,
           per > 0 ? bytes / per * 1e-9 : 0);
}

/* sdk_repeat's unit: one product. */
typedef struct gv_job {
  const gv_case *g;
  gv_rank *r;
} gv_job;
static int product_unit(wf_run *run, void *ctx, wf_status *st) {
  gv_job *job = ctx;
  return product(run, job->g, job->r, st);
}

static int gemv_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  gv_case g = {.m = wf_deck_int(d, "gemv", "m"),
               .n = wf_deck_int(d, "gemv", "n"),
               .seed = (uint64_t)wf_deck_int(d, "gemv", "seed")};
  if (g.m < dc->pe_ny)
    return wf_deck_fail(d, "gemv", "m", st,
                        "%lld rows for %d PE rows: each PE needs a row of A (a larger m or a "
                        "smaller [wafer] pe_grid)",
                        g.m, dc->pe_ny);
  if (g.n < dc->pe_nx)
    return wf_deck_fail(d, "gemv", "n", st,
                        "%lld columns for %d PE columns: each PE needs a column of A (a larger n "
                        "or a smaller [wafer] pe_grid)",
                        g.n, dc->pe_nx);
  wf_blas_single_thread();
  gv_rank r = {0};
  int rc = create_rank(run, &g, &r, st);
  long repeat = wf_deck_int(d, "gemv", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("gemv: y = A x + b, %lld x %lld, on %d x %d PEs (tiles of %lld x %lld)\n", g.m, g.n,
           dc->pe_nx, dc->pe_ny, r.mt, r.nt);
  double seconds = 0, worst = 0;
  gv_job job = {&g, &r};
  if (rc == WF_OK) rc = sdk_repeat(run, "gemv", "products", repeat, product_unit, &job, &seconds, st);
  bool checked = wf_deck_bool(d, "gemv", "check");
  if (rc == WF_OK) {
    project(run, &g, &r);
    if (checked) {
      rc = check_product(run, &g, &r, &worst, st);
      if (rc == WF_OK)
        wf_run_check(run, worst <= 1.0,
                     "y equals a dgemv of the last PE column's rows within "
                     "2 gamma_(n+1) (|A||x| + |b|)");
    } else {
      wf_run_unchecked(run, "the product", "gemv.check = false");
    }
  }
  /* The machine's memory limit, all ranks at once (the matrix streams from
   * memory once it outgrows the caches). */
  double triad = rc == WF_OK ? wf_stream_triad(run->comm, (size_t)4 << 20, st) : 0;
  if (rc == WF_OK && st->code != WF_OK) rc = st->code;
  if (rc == WF_OK) report(run, &g, seconds, repeat, worst, checked, triad);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &g, &r, out, st);
  free_rank(&r);
  return rc;
}

const wf_workload wf_gemv_workload = {
    .name = "gemv",
    .help = "the SDK's GEMV example: y = A x + b with 2D collectives over the PE grid, against dgemv",
    .sections = gemv_sections,
    .nsections = 1,
    .run = gemv_run,
};
