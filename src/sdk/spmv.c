/* `wafer spmv`: the SDK's hypersparse SpMV example (csl-examples
 * benchmarks/spmv-hypersparse; docs/sdk-kernels.md 2) on the PE grid:
 * y = A x for a user's Matrix Market matrix or a generated one.
 *
 * A's rows are cut into a band a PE row and its columns into a band a PE
 * column; PE (x, y) holds the entries of row band y and column band x. A
 * product moves x along the columns (every PE of column x gets the whole
 * of column band x: the SDK's north and south trains), multiplies each
 * PE's entries, and moves the partial sums of the rows that have entries
 * along the rows to the PEs owning them (the west and east trains), which
 * add them up. The SDK's example balances the PEs' entries offline
 * (its util/analyze.cpp); wafer's `balance` moves the bands' boundaries
 * to equal counts of entries instead (y and x stay in the file's order).
 *
 * On the cluster a rank holds a block of PEs, as one CSR matrix of its
 * rows and columns: x moves between the ranks of a rank column (an
 * all-gather of each rank's range), the partial sums between the ranks of
 * a rank row (each rank's rows with entries, to the rank owning them: the
 * lists are exchanged once, the values every product). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_grid.h"
#include "spmv.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_reference.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_wafer.h"

static const wf_key spmv_keys[] = {
    {"matrix", WF_KEY_INPUT, "", 0, 0, NULL,
     "a Matrix Market file (coordinate; real, integer or pattern; general or symmetric) ('' = "
     "generate one)",
     NULL},
    {"generate", WF_KEY_CHOICE, "rmat", 0, 0, "rmat|laplace2d|laplace3d",
     "the generated matrix: an R-MAT graph or a 5- or 7-point Laplacian", NULL},
    {"scale", WF_KEY_INT, "14", 1, 30, NULL, "rmat: 2^scale rows and columns", NULL},
    {"edge_factor", WF_KEY_INT, "8", 1, 1024, NULL, "rmat: entries a row, on average", NULL},
    {"side", WF_KEY_INT, "64", 2, 1e6, NULL, "laplace2d, laplace3d: the grid's points a side", NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "the generated matrix and x (uniform in [-1, 1))", NULL},
    {"balance", WF_KEY_BOOL, "false", 0, 0, NULL,
     "bands of equal entries instead of equal widths (another pass over the matrix)", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed products", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare y with a plain product of each rank's rows", NULL},
    {"crosscheck", WF_KEY_CHOICE, "auto", 0, 0, "auto|none|petsc",
     "compare y with PETSc's MatMult of the same matrix (and time it beside ours)", NULL},
};
static const wf_section spmv_section = {
    "spmv", "The SDK's hypersparse SpMV example: y = A x with A's blocks over the PE grid.",
    spmv_keys, (int)(sizeof spmv_keys / sizeof spmv_keys[0]), NULL, NULL};
static const wf_section *const spmv_sections[] = {&spmv_section};

/* x between the ranks of a rank column: each sends its range to the others. */
static int gather_x(wf_run *run, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  int py = dc->py, k = 0;
  wf_piece *p = r->pieces;
  long long nc = r->c1 - r->c0;
  for (int q = 0; q < py; q++)
    if (q != dc->cy)
      p[k++] = (wf_piece){q, r->x + (r->xo0 - r->c0), (size_t)(r->xo1 - r->xo0) * sizeof(double)};
  for (int q = 0; q < py; q++)
    if (q != dc->cy)
      p[k++] = (wf_piece){q, r->x + sdk_part(nc, py, q),
                          (size_t)(sdk_part(nc, py, q + 1) - sdk_part(nc, py, q)) * sizeof(double)};
  /* inside the rank, each PE takes its column band but its own piece */
  size_t self = (size_t)(r->c1 - r->c0) * (size_t)(dc->ny - 1) * sizeof(double);
  double piece = (double)(nc / dc->nx) / dc->pe_ny * 2; /* words, for the fabric's count */
  return wf_fabric_alltoall_pieces(&run->wafer->fab, WF_ALONG_COLUMNS, p, py - 1, p + py - 1,
                                   py - 1, self, piece, st);
}

/* The partial sums to the ranks of the rank row owning their rows, and y. */
static int reduce_y(wf_run *run, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  int px = dc->px;
  for (long long i = 0; i < r->send_off[px]; i++) r->send_vals[i] = r->ypart[r->send_rows[i]];
  memset(r->y, 0, (size_t)(r->yo1 - r->yo0) * sizeof *r->y);
  for (long long i = r->send_off[dc->cx]; i < r->send_off[dc->cx + 1]; i++) /* its own rows */
    r->y[r->send_rows[i] - (r->yo0 - r->r0)] += r->send_vals[i];
  size_t self = (size_t)(r->send_off[dc->cx + 1] - r->send_off[dc->cx]) * 12;
  int rc = sp_exchange_rows(run, r, r->send_vals, r->recv_vals, sizeof(double), self, 2, st);
  if (rc != WF_OK) return rc;
  for (long long i = 0; i < r->recv_off[px]; i++) r->y[r->recv_rows[i]] += r->recv_vals[i];
  return WF_OK;
}

/* One product y = A x. Collective. */
static int product(wf_run *run, sp_rank *r, wf_status *st) {
  if (gather_x(run, r, st) != WF_OK) return st->code;
  if (!wf_signal_stop()) /* after a signal: the exchanges alone (sdk_repeat's check ends it) */
    for (long long i = 0; i < r->r1 - r->r0; i++) {
      double s = 0;
      for (long long e = r->rowptr[i]; e < r->rowptr[i + 1]; e++) s += r->val[e] * r->x[r->colidx[e]];
      r->ypart[i] = s;
    }
  return reduce_y(run, r, st);
}

static int read_case(const wf_run *run, sp_case *c, wf_ref_use *petsc, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  const char *file = wf_deck_str(d, "spmv", "matrix"), *gen = wf_deck_str(d, "spmv", "generate");
  *c = (sp_case){.source = file[0]                        ? SP_FILE
                           : strcmp(gen, "rmat") == 0      ? SP_RMAT
                           : strcmp(gen, "laplace2d") == 0 ? SP_LAPLACE2D
                                                           : SP_LAPLACE3D,
                 .matrix = file,
                 .scale = (int)wf_deck_int(d, "spmv", "scale"),
                 .edge_factor = (int)wf_deck_int(d, "spmv", "edge_factor"),
                 .side = (int)wf_deck_int(d, "spmv", "side"),
                 .seed = (uint64_t)wf_deck_int(d, "spmv", "seed")};
  if (wf_ref_choose(d, "spmv", "crosscheck", "petsc", wf_ref_petsc_absent(), petsc, st) != WF_OK ||
      sp_matrix_size(c, st) != WF_OK)
    return st->code;
  const char *key = file[0] ? "matrix" : c->source == SP_RMAT ? "scale" : "side";
  if (c->m < dc->pe_ny || c->n < dc->pe_nx)
    return wf_deck_fail(d, "spmv", key, st,
                        "%lld rows and %lld columns for %d PE rows and %d PE columns: each PE "
                        "needs a row and a column (a larger matrix or a smaller [wafer] pe_grid)",
                        c->m, c->n, dc->pe_ny, dc->pe_nx);
  /* Refused before any pass over the entries: the ranks' average share
   * (12 bytes an entry, as stored or mirrored) must fit. */
  double entries = (double)c->stored * (c->symmetric ? 2 : 1);
  char what[160] = "the matrix's entries";
  if (file[0])
    snprintf(what, sizeof what, "spmv.matrix = %s: the %lld entries its size line gives", file,
             c->stored);
  if (wf_memory_fits(run->comm, 12.0 * entries / run->nranks, what,
                     "a smaller matrix, or more nodes", st) != WF_OK)
    return st->code;
  /* a rank's rows and columns are 32-bit indices */
  if (c->m / dc->py >= (1LL << 30) || c->n / dc->px >= (1LL << 30))
    return wf_deck_fail(d, "spmv", key, st,
                        "%lld x %lld: a rank's rows or columns would pass 2^30 (more ranks)", c->m,
                        c->n);
  return WF_OK;
}

/* The SDK kernel's product on the wafer: its busiest PE's cycles
 * (spmv_setup.c, pe_cycles). */
static void project(wf_run *run, const sp_case *c, const sp_rank *r, double nnz) {
  const wf_wafer *wf = run->wafer;
  double pes = (double)wf->dc.pe_nx * wf->dc.pe_ny;
  run->model = (wf_projection){
      .valid = true,
      .unit = "product",
      .seconds = wf_model_seconds(&wf->hw, (wf_range){r->cycles_lo, r->cycles_hi}),
      .flops = 2 * nnz,
      /* fp32 values and 16-bit indices an entry, the x and y pieces (the SDK's layout) */
      .bytes_per_pe = 6 * r->pe_nnz_max + 4.0 * ((double)c->n / wf->dc.pe_nx + (double)c->m / wf->dc.pe_ny),
      .sram_for_data = wf_model_sram_for_data(&wf->hw),
      .pes_needed = pes,
      .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

static int write_output(const wf_run *run, const sp_case *c, const sp_rank *r, const char *path,
                        wf_status *st) {
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  unsigned long long gx = (unsigned long long)c->n, gy = (unsigned long long)c->m;
  unsigned long long ox = (unsigned long long)r->xo0, oy = (unsigned long long)r->yo0;
  unsigned long long nx = (unsigned long long)(r->xo1 - r->xo0), ny = (unsigned long long)(r->yo1 - r->yo0);
  wf_h5_block bx = {.ndim = 1, .global = &gx, .offset = &ox, .count = &nx};
  wf_h5_block by = {.ndim = 1, .global = &gy, .offset = &oy, .count = &ny};
  int rc = wf_h5_write(&f, "x", WF_F64, &bx, r->x + (r->xo0 - r->c0), false, st);
  if (rc == WF_OK) rc = wf_h5_write(&f, "y", WF_F64, &by, r->y, false, st);
  return wf_h5_finish(&f, rc, st);
}

/* The bytes a product streams from memory: each entry's value and column
 * index (12), x read and y written once (8 each). */
static double product_bytes(const sp_case *c, double nnz) {
  return 12 * nnz + 8.0 * (double)(c->m + c->n);
}

static void report(wf_run *run, const sp_case *c, const sp_rank *r, double nnz, double seconds,
                   long repeat, double worst, bool checked, double triad) {
  double per = seconds / (double)repeat, mean = nnz / ((double)run->wafer->dc.pe_nx * run->wafer->dc.pe_ny);
  double bytes = product_bytes(c, nnz);
  wf_report rep;
  wf_report_open(&rep, run, "spmv");
  wf_report_begin(&rep, "spmv");
  wf_report_line(&rep, NULL);
  long long dims[2] = {c->m, c->n};
  wf_report_str(&rep, "matrix", c->source == SP_FILE ? c->matrix
                                : c->source == SP_RMAT ? "rmat"
                                : c->source == SP_LAPLACE2D ? "laplace2d" : "laplace3d",
                "%s");
  wf_report_ints(&rep, "size", dims, 2, "%d");
  wf_report_num(&rep, "entries", nnz, "%.0f entries");
  wf_report_num(&rep, "pe_imbalance", mean > 0 ? r->pe_nnz_max / mean : 0,
                "imbalance %.2f (most entries on a PE / mean)");
  wf_report_scaled(&rep, "seconds_per_product", per, 1e3, "%.3f ms/product");
  wf_report_scaled(&rep, "flop_rate", per > 0 ? 2 * nnz / per : 0, 1e-9, "%.2f GFLOP/s");
  sdk_report_triad(&rep, bytes, per, triad, "%.0f%% of it (the matrix, x and y once)");
  if (checked) wf_report_num(&rep, "error_over_bound", worst, "error %.3g of its bound");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms/product, %.2f GFLOP/s", per * 1e3,
           per > 0 ? 2 * nnz / per * 1e-9 : 0);
}

static void report_petsc(wf_run *run, double ours, double petsc, double ratio) {
  wf_report rep;
  wf_report_open(&rep, run, "spmv");
  wf_report_begin(&rep, "petsc");
  wf_report_line(&rep, "PETSc");
  wf_report_scaled(&rep, "seconds_per_product", petsc, 1e3, "MatMult %.3f ms/product");
  wf_report_num(&rep, "ours_over_petsc", petsc > 0 ? ours / petsc : 0, "ours / PETSc's %.3f");
  wf_report_num(&rep, "error_over_bound", ratio, "projection's error %.3g of its bound");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

/* sdk_repeat's unit: one product. */
static int product_unit(wf_run *run, void *ctx, wf_status *st) { return product(run, ctx, st); }

static int check(wf_run *run, const sp_case *c, const sp_rank *r, double *worst, wf_status *st) {
  double mine = 0;
  wf_status_clear(st);
  sp_check_rows(c, r->yo0, r->yo1, r->y, run->wafer->dc.px, &mine, st);
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  if (mine != mine) mine = INFINITY; /* MPI_MAX may drop a NaN */
  wf_fabric_allreduce(&run->wafer->fab, &mine, 1, WF_MAX);
  *worst = mine;
  return WF_OK;
}

/* PETSc's product of the same matrix in its own layout, compared by the
 * projection w . y (one number over all rows, whichever rank holds them):
 * within the two products' bounds, 2 gamma_(k + px) sum |w_i| (|A| |x|)_i,
 * and the two projections' own, 2 gamma_(m + 1) the same sum. Sets
 * *ratio (error over bound) and *petsc_seconds. Collective. */
static int petsc_compare(wf_run *run, const sp_case *c, const sp_rank *r, long repeat,
                         double *ratio, double *petsc_seconds, wf_status *st) {
  sp_petsc_part p = {0};
  wf_status_clear(st);
  sp_petsc_product(c, run->comm, repeat, &p, st);
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  double ours = 0;
  for (long long i = r->yo0; i < r->yo1; i++) ours += sp_weight(c, i) * r->y[i - r->yo0];
  double sums[3] = {ours, p.proj, p.abs_proj}, most[2] = {p.kmax, p.seconds};
  wf_fabric_allreduce(&run->wafer->fab, sums, 3, WF_SUM);
  wf_fabric_allreduce(&run->wafer->fab, most, 2, WF_MAX);
  /* and below the normal range, each multiply's absolute 2^-1074 (Higham
   * (2.8)): at most k + px a row in each product, m in each projection,
   * with |w_i| <= 1 */
  double m = (double)c->m, k = most[0] + run->wafer->dc.px;
  double bound = (2 * wf_gamma(k, 0x1p-53) + 2 * wf_gamma(m + 1, 0x1p-53)) * sums[2] +
                 2 * m * (k + 1) * 0x1p-1074;
  double err = fabs(sums[0] - sums[1]);
  *ratio = err == 0 ? 0 : bound > 0 ? err / bound : INFINITY;
  if (err != err) *ratio = err;
  *petsc_seconds = most[1];
  return WF_OK;
}

static int spmv_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  sp_case c;
  wf_ref_use petsc;
  if (read_case(run, &c, &petsc, st) != WF_OK) return st->code;
  sp_rank r;
  int rc = sp_rank_create(run, &c, wf_deck_bool(d, "spmv", "balance"), &r, st);
  double nnz = (double)r.nnz;
  if (rc == WF_OK) wf_fabric_allreduce(&run->wafer->fab, &nnz, 1, WF_SUM);
  long repeat = wf_deck_int(d, "spmv", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("spmv: y = A x, %lld x %lld with %.0f entries, on %d x %d PEs\n", c.m, c.n, nnz,
           run->wafer->dc.pe_nx, run->wafer->dc.pe_ny);
  double seconds = 0, worst = 0;
  if (rc == WF_OK) rc = sdk_repeat(run, "spmv", "products", repeat, product_unit, &r, &seconds, st);
  bool checked = wf_deck_bool(d, "spmv", "check");
  if (rc == WF_OK) {
    project(run, &c, &r, nnz);
    if (checked) {
      rc = check(run, &c, &r, &worst, st);
      if (rc == WF_OK)
        wf_run_check(run, worst <= 1.0,
                     "y equals a CSR product of every rank's rows within 2 gamma_(k+px) |A||x|");
    } else {
      wf_run_unchecked(run, "the product", "spmv.check = false");
    }
  }
  double petsc_ratio = 0, petsc_seconds = 0;
  if (rc == WF_OK && petsc == WF_REF_USE) {
    rc = petsc_compare(run, &c, &r, repeat, &petsc_ratio, &petsc_seconds, st);
    if (rc == WF_OK)
      wf_run_check(run, petsc_ratio <= 1.0, "y equals PETSc's MatMult (projected) within the bound");
  } else if (rc == WF_OK && petsc == WF_REF_UNAVAILABLE) {
    wf_run_unavailable(run, "PETSc's MatMult", wf_ref_petsc_absent());
  }
  /* The machine's memory limit, all ranks at once. */
  double triad = rc == WF_OK ? wf_stream_triad(run->comm, (size_t)4 << 20, st) : 0;
  if (rc == WF_OK && st->code != WF_OK) rc = st->code;
  if (rc == WF_OK) report(run, &c, &r, nnz, seconds, repeat, worst, checked, triad);
  if (rc == WF_OK && petsc == WF_REF_USE) report_petsc(run, seconds / (double)repeat, petsc_seconds, petsc_ratio);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &c, &r, out, st);
  sp_rank_free(&r);
  return rc;
}

const wf_workload wf_spmv_workload = {
    .name = "spmv",
    .help = "the SDK's hypersparse SpMV example: y = A x for a Matrix Market or generated matrix "
            "over the PE grid, against a CSR product",
    .sections = spmv_sections,
    .nsections = 1,
    .run = spmv_run,
    .finalize = sp_petsc_finalize,
};
