/* `wafer gemm`: the SDK's GEMM example (csl-examples
 * benchmarks/gemm-collectives_2d) on the PE grid: C = A B by SUMMA.
 *
 * On a P x P grid of PEs, PE (i, j) (column i, row j) holds the tiles
 * A(j, i), B(j, i) and C(j, i) of matrices cut into P x P bands (balanced:
 * sdk_grid.h). At step s, the PEs of column s multicast their A tile along
 * their rows and the PEs of row s their B tile down their columns; every
 * PE then adds A(j, s) B(s, i) to its C tile (docs/sdk-kernels.md, 4a).
 *
 * On the cluster a rank holds a block of PEs, so its tiles form one block
 * of each matrix: a step's multicast gives the rank one tile a PE row (or
 * column), which it packs into a panel, and the step's product is one BLAS
 * call over the rank's rows and columns. Steps whose roots sit on the same
 * rank row and column are one multicast of their tiles together and one
 * product (on one rank, the whole product is one call). The fabric counts
 * every word each PE takes in; the model charges the SDK's P steps. */
#include "gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
#include "wf_wafer.h"

static const wf_key gemm_keys[] = {
    {"m", WF_KEY_INT, "512", 1, 1e6, NULL, "rows of A and C", NULL},
    {"n", WF_KEY_INT, "512", 1, 1e6, NULL, "columns of B and C", NULL},
    {"k", WF_KEY_INT, "512", 1, 1e6, NULL, "columns of A, rows of B", NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "the matrices' entries (uniform in [-1, 1))", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed products", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare C with one BLAS dgemm of each rank's rows and columns of A and B", NULL},
};
static const wf_section gemm_section = {
    "gemm", "The SDK's GEMM example: C = A B by SUMMA on a square PE grid.", gemm_keys,
    (int)(sizeof gemm_keys / sizeof gemm_keys[0]), NULL, NULL};
static const wf_section *const gemm_sections[] = {&gemm_section};

typedef struct gm_case {
  long long m, n, k;
  uint64_t seed;
  int P; /* the PE grid's side */
} gm_case;

/* This rank's part: rows and columns of C, the columns of A (k, by its PE
 * columns) and the rows of B (k, by its PE rows) its PEs hold. */
typedef struct gm_rank {
  sdk_span rows, cols, kx, ky;
  long long nr, nc; /* rows and columns of C here */
  double *a;  /* nr x |kx|, row-major */
  double *bt; /* nc x |ky|: B's block transposed, row-major */
  double *c;  /* nr x nc */
  double *aline, *bline; /* a step's tiles: one a PE row, one a PE column */
} gm_rank;

static long long span_len(sdk_span s) { return s.hi - s.lo; }

/* The tile widths a PE holds at most: ceil(N / P). */
static long long most(long long items, int P) { return (items + P - 1) / P; }

/* Steps [s, *end) whose roots (PE column s for A, row s for B) sit on the
 * same rank column and row: one multicast and one product on the cluster. */
static int group_end(const wf_decomp *dc, int P, int s) {
  int ox = wf_block_owner(P, dc->px, s), oy = wf_block_owner(P, dc->py, s), e = s + 1;
  while (e < P && wf_block_owner(P, dc->px, e) == ox && wf_block_owner(P, dc->py, e) == oy) e++;
  return e;
}

/* Pack `lines` elements of `esz` doubles, element l holding len(l) rows of
 * `width` (a prefix), into one panel of consecutive rows, in place. */
static void compact(double *line, int lines, long long esz, long long width, long long items,
                    int P, int first) {
  long long at = 0;
  for (int l = 0; l < lines; l++) {
    long long rows = span_len(sdk_span_of(items, P, first + l, 1));
    memmove(line + at * width, line + l * esz, (size_t)(rows * width) * sizeof *line);
    at += rows;
  }
}

/* Steps [s0, s1) of the product: the multicasts of their tiles and the
 * rank's product. Collective. */
static int product_steps(wf_run *run, const gm_case *g, gm_rank *r, int s0, int s1,
                         wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  wf_fabric *fab = &run->wafer->fab;
  long long k0 = sdk_part(g->k, g->P, s0), kw = sdk_part(g->k, g->P, s1) - k0;
  long long mt = most(g->m, g->P), nt = most(g->n, g->P);
  long long aesz = mt * kw, besz = nt * kw;
  if (wf_block_owner(g->P, dc->px, s0) == dc->cx) /* this rank holds the A tiles' PEs */
    for (int l = 0; l < dc->ny; l++) {
      sdk_span rows = sdk_span_of(g->m, g->P, dc->y0 + l, 1);
      for (long long i = rows.lo; i < rows.hi; i++)
        memcpy(r->aline + l * aesz + (i - rows.lo) * kw,
               r->a + (i - r->rows.lo) * span_len(r->kx) + (k0 - r->kx.lo),
               (size_t)kw * sizeof *r->a);
    }
  if (wf_block_owner(g->P, dc->py, s0) == dc->cy) /* ... the B tiles' PEs */
    for (int l = 0; l < dc->nx; l++) {
      sdk_span cols = sdk_span_of(g->n, g->P, dc->x0 + l, 1);
      for (long long j = cols.lo; j < cols.hi; j++)
        memcpy(r->bline + l * besz + (j - cols.lo) * kw,
               r->bt + (j - r->cols.lo) * span_len(r->ky) + (k0 - r->ky.lo),
               (size_t)kw * sizeof *r->bt);
    }
  if (wf_fabric_bcast_lines(fab, WF_ALONG_ROWS, r->aline, (size_t)aesz * sizeof(double), s0, st) !=
          WF_OK ||
      wf_fabric_bcast_lines(fab, WF_ALONG_COLUMNS, r->bline, (size_t)besz * sizeof(double), s0,
                            st) != WF_OK)
    return st->code;
  compact(r->aline, dc->ny, aesz, kw, g->m, g->P, dc->y0);
  compact(r->bline, dc->nx, besz, kw, g->n, g->P, dc->x0);
  /* After a signal the rank keeps to the multicasts (its partners wait in
   * them) but skips the work; sdk_repeat's check ends the run. */
  if (!wf_signal_stop())
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)r->nr, (int)r->nc, (int)kw, 1.0,
                r->aline, (int)kw, r->bline, (int)kw, 1.0, r->c, (int)r->nc);
  return WF_OK;
}

/* One product C = A B. Collective. */
static int product(wf_run *run, const gm_case *g, gm_rank *r, wf_status *st) {
  memset(r->c, 0, (size_t)(r->nr * r->nc) * sizeof *r->c);
  for (int s = 0; s < g->P;) {
    int e = group_end(&run->wafer->dc, g->P, s);
    if (product_steps(run, g, r, s, e, st) != WF_OK) return st->code;
    s = e;
  }
  return WF_OK;
}

/* The SDK kernel's product on the wafer: P steps of the two multicasts
 * (concurrent, on their own colours) and then Kt Nt fmacs of length Mt
 * (reading C and A from SRAM, writing C), at the busiest PE's tile sizes. */
static wf_range product_cycles(const wf_wafer *wf, const gm_case *g) {
  double mt = (double)most(g->m, g->P), kt = (double)most(g->k, g->P), nt = (double)most(g->n, g->P);
  wf_range fmac = wf_model_vec(&wf->hw, WF_OP_FMAC, WF_FP32, mt * kt * nt, 2, 1);
  wf_range cycles = {0, 0};
  for (int s = 0; s < g->P; s++) {
    double a = wf_model_bcast_cycles(&wf->hw, &wf->grid, (size_t)(mt * kt * 4), g->P, s);
    double b = wf_model_bcast_cycles(&wf->hw, &wf->grid, (size_t)(kt * nt * 4), g->P, s);
    cycles = wf_range_add(cycles, wf_range_plus(fmac, fmax(a, b)));
  }
  return cycles;
}

static void project(wf_run *run, const gm_case *g) {
  const wf_wafer *wf = run->wafer;
  double mt = (double)most(g->m, g->P), kt = (double)most(g->k, g->P), nt = (double)most(g->n, g->P);
  run->model = (wf_projection){.valid = true,
                               .unit = "product",
                               .seconds = wf_model_seconds(&wf->hw, product_cycles(wf, g)),
                               .flops = 2.0 * (double)g->m * (double)g->n * (double)g->k,
                               .bytes_per_pe = 4.0 * (2 * mt * kt + 2 * kt * nt + mt * nt),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)g->P * g->P,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

/* The check: each rank's rows of C against one dgemm of its rows of A (all
 * of k) by its columns of B, made afresh from the generator, within
 * 2 gamma_k |A| |B| entry by entry (both sums' error bound). The
 * reference's rows go in blocks, polling for signals between them.
 * Returns the worst ratio of error to bound over the ranks (NaN: a NaN). */
static int check_product(wf_run *run, const gm_case *g, const gm_rank *r, double *worst,
                         wf_status *st) {
  long long nr = r->nr, nc = r->nc, K = g->k;
  double *a = malloc((size_t)(nr * K + 1) * sizeof *a), *b = malloc((size_t)(K * nc + 1) * sizeof *b);
  double *want = malloc((size_t)(nr * nc + 1) * sizeof *want);
  double *bound = malloc((size_t)(nr * nc + 1) * sizeof *bound);
  double mine = 0;
  int stopped = 0;
  wf_status_clear(st);
  if (!a || !b || !want || !bound) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the product's reference");
  } else {
    stopped = !sdk_dense_fill(a, K, g->seed, SDK_A, r->rows.lo, nr, 0, K, g->k) ||
              !sdk_dense_fill(b, nc, g->seed, SDK_B, 0, K, r->cols.lo, nc, g->n);
    const long long block = 256;
    for (long long i = 0; i < nr && !stopped && !(stopped = wf_signal_stop()); i += block) {
      int rows = (int)(nr - i < block ? nr - i : block);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, (int)nc, (int)K, 1.0,
                  a + i * K, (int)K, b, (int)nc, 0.0, want + i * nc, (int)nc);
    }
    for (long long e = 0; e < nr * K; e++) a[e] = fabs(a[e]);
    for (long long e = 0; e < K * nc; e++) b[e] = fabs(b[e]);
    for (long long i = 0; i < nr && !stopped && !(stopped = wf_signal_stop()); i += block) {
      int rows = (int)(nr - i < block ? nr - i : block);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, (int)nc, (int)K,
                  2.0 * wf_gamma((double)K + 2, 0x1p-53), a + i * K, (int)K, b, (int)nc, 0.0,
                  bound + i * nc, (int)nc);
    }
    if (!stopped) mine = sdk_dense_worst(r->c, want, bound, nr * nc);
  }
  free(a), free(b), free(want), free(bound);
  wf_signal_barrier(run->comm);
  int sig = wf_signal_stop();
  if (st->code == WF_OK && sig) wf_signal_fail(st, sig, "while checking the product");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  if (mine != mine) mine = INFINITY; /* MPI_MAX may drop a NaN */
  MPI_Allreduce(&mine, worst, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  return WF_OK;
}

static int write_output(const wf_run *run, const gm_case *g, const gm_rank *r, const char *path,
                        wf_status *st) {
  long long kyn = span_len(r->ky);
  double *b = malloc((size_t)(kyn * r->nc + 1) * sizeof *b);
  wf_status_clear(st);
  if (!b) wf_fail(st, WF_ERR_RUNTIME, "out of memory for B's output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(b), st->code;
  for (long long i = 0; i < kyn; i++)
    for (long long j = 0; j < r->nc; j++) b[i * r->nc + j] = r->bt[j * kyn + i];
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return free(b), st->code;
  int rc = WF_OK;
  struct {
    const char *name;
    long long rows, cols;
    sdk_span r, c;
    const double *data;
  } out[3] = {{"C", g->m, g->n, r->rows, r->cols, r->c},
              {"A", g->m, g->k, r->rows, r->kx, r->a},
              {"B", g->k, g->n, r->ky, r->cols, b}};
  for (int d = 0; d < 3 && rc == WF_OK; d++) {
    unsigned long long gl[2] = {(unsigned long long)out[d].rows, (unsigned long long)out[d].cols};
    unsigned long long off[2] = {(unsigned long long)out[d].r.lo, (unsigned long long)out[d].c.lo};
    unsigned long long cnt[2] = {(unsigned long long)span_len(out[d].r),
                                 (unsigned long long)span_len(out[d].c)};
    wf_h5_block blk = {.ndim = 2, .global = gl, .offset = off, .count = cnt};
    if (wf_h5_write(&f, out[d].name, WF_F64, &blk, out[d].data, false, st) != WF_OK) rc = st->code;
  }
  rc = wf_h5_finish(&f, rc, st);
  free(b);
  return rc;
}

static int read_case(const wf_run *run, gm_case *g, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  *g = (gm_case){.m = wf_deck_int(d, "gemm", "m"),
                 .n = wf_deck_int(d, "gemm", "n"),
                 .k = wf_deck_int(d, "gemm", "k"),
                 .seed = (uint64_t)wf_deck_int(d, "gemm", "seed"),
                 .P = dc->pe_nx};
  if (dc->pe_nx != dc->pe_ny)
    return wf_deck_fail(d, "wafer", "pe_grid", st,
                        "the SDK's GEMM runs on a square grid of P x P PEs; this one is %d x %d",
                        dc->pe_nx, dc->pe_ny);
  const char *keys[3] = {"m", "n", "k"};
  long long v[3] = {g->m, g->n, g->k};
  for (int i = 0; i < 3; i++)
    if (v[i] < g->P)
      return wf_deck_fail(d, "gemm", keys[i], st,
                          "%lld for a grid of %d x %d PEs: each PE needs a row and a column of "
                          "every tile (a larger %s or a smaller [wafer] pe_grid)",
                          v[i], g->P, g->P, keys[i]);
  return WF_OK;
}

static int create_rank(const wf_run *run, const gm_case *g, gm_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  r->rows = sdk_span_of(g->m, g->P, dc->y0, dc->ny);
  r->cols = sdk_span_of(g->n, g->P, dc->x0, dc->nx);
  r->kx = sdk_span_of(g->k, g->P, dc->x0, dc->nx);
  r->ky = sdk_span_of(g->k, g->P, dc->y0, dc->ny);
  r->nr = span_len(r->rows), r->nc = span_len(r->cols);
  double lines = (double)dc->ny * most(g->m, g->P) * g->k + (double)dc->nx * most(g->n, g->P) * g->k;
  double held = (double)r->nr * span_len(r->kx) + (double)r->nc * span_len(r->ky) +
                (double)r->nr * r->nc;
  double check = wf_deck_bool(run->deck, "gemm", "check")
                     ? (double)r->nr * g->k + (double)g->k * r->nc + 2.0 * r->nr * r->nc
                     : 0;
  if (wf_memory_fits(run->comm, 8.0 * (lines + held + check), "the matrices' blocks",
                     "smaller [gemm] m, n and k, or more nodes", st) != WF_OK)
    return st->code;
  /* A step group's multicast holds at most all of k for a line's tiles. */
  const wf_fabric *fab = &run->wafer->fab;
  if (!wf_fabric_lines_fit(fab, WF_ALONG_ROWS, 8.0 * (double)most(g->m, g->P) * (double)g->k) ||
      !wf_fabric_lines_fit(fab, WF_ALONG_COLUMNS, 8.0 * (double)most(g->n, g->P) * (double)g->k))
    return wf_deck_fail(run->deck, "gemm", "k", st,
                        "the tiles a rank multicasts would pass MPI's 2 GB a message (more "
                        "ranks, so smaller blocks, or smaller m, n and k)");
  /* a group of steps multicasts at most the whole of k (one rank) */
  r->aline = malloc((size_t)(dc->ny * most(g->m, g->P) * g->k) * sizeof(double));
  r->bline = malloc((size_t)(dc->nx * most(g->n, g->P) * g->k) * sizeof(double));
  r->a = malloc((size_t)(r->nr * span_len(r->kx)) * sizeof(double));
  r->bt = malloc((size_t)(r->nc * span_len(r->ky)) * sizeof(double));
  r->c = malloc((size_t)(r->nr * r->nc) * sizeof(double));
  wf_status_clear(st);
  if (!r->aline || !r->bline || !r->a || !r->bt || !r->c)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrices' blocks");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  if (sdk_dense_fill(r->a, span_len(r->kx), g->seed, SDK_A, r->rows.lo, r->nr, r->kx.lo,
                     span_len(r->kx), g->k))
    for (long long j = 0; j < r->nc && !wf_signal_stop(); j++) /* B's block, transposed */
      for (long long i = 0; i < span_len(r->ky); i++)
        r->bt[j * span_len(r->ky) + i] =
            sdk_entry(g->seed, SDK_B, r->ky.lo + i, r->cols.lo + j, g->n);
  return sdk_filled(run, "while making the matrices", st);
}

static void free_rank(gm_rank *r) {
  free(r->aline), free(r->bline), free(r->a), free(r->bt), free(r->c);
}

static void report(wf_run *run, const gm_case *g, double seconds, long repeat, double worst,
                   bool checked) {
  double per = seconds / (double)repeat, flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
  wf_report rep;
  wf_report_open(&rep, run, "gemm");
  wf_report_begin(&rep, "gemm");
  wf_report_line(&rep, NULL);
  long long dims[3] = {g->m, g->n, g->k};
  wf_report_ints(&rep, "mnk", dims, 3, "m x n x k = %d");
  wf_report_int(&rep, "steps", g->P, "%d SUMMA steps");
  wf_report_scaled(&rep, "seconds_per_product", per, 1e3, "%.3f ms/product");
  wf_report_scaled(&rep, "flop_rate", per > 0 ? flops / per : 0, 1e-9, "%.2f GFLOP/s");
  if (checked) wf_report_num(&rep, "error_over_bound", worst, "error %.3g of its bound");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms/product, %.2f GFLOP/s", per * 1e3,
           per > 0 ? flops / per * 1e-9 : 0);
}

/* sdk_repeat's unit: one product. */
typedef struct gm_job {
  const gm_case *g;
  gm_rank *r;
} gm_job;
static int product_unit(wf_run *run, void *ctx, wf_status *st) {
  gm_job *job = ctx;
  return product(run, job->g, job->r, st);
}

static int gemm_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  gm_case g;
  if (read_case(run, &g, st) != WF_OK) return st->code;
  wf_blas_single_thread();
  gm_rank r = {0};
  int rc = create_rank(run, &g, &r, st);
  long repeat = wf_deck_int(d, "gemm", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("gemm: C = A B, %lld x %lld x %lld, on %d x %d PEs (tiles of %lld x %lld x %lld)\n",
           g.m, g.n, g.k, g.P, g.P, most(g.m, g.P), most(g.n, g.P), most(g.k, g.P));
  double seconds = 0, worst = 0;
  gm_job job = {&g, &r};
  if (rc == WF_OK) rc = sdk_repeat(run, "gemm", "products", repeat, product_unit, &job, &seconds, st);
  bool checked = wf_deck_bool(d, "gemm", "check");
  if (rc == WF_OK) {
    project(run, &g);
    if (checked) {
      rc = check_product(run, &g, &r, &worst, st);
      if (rc == WF_OK)
        wf_run_check(run, worst <= 1.0,
                     "C equals a dgemm of every rank's rows and columns within 2 gamma_k |A||B|");
    } else {
      wf_run_unchecked(run, "the product", "gemm.check = false");
    }
  }
  if (rc == WF_OK) report(run, &g, seconds, repeat, worst, checked);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &g, &r, out, st);
  free_rank(&r);
  return rc;
}

const wf_workload wf_gemm_workload = {
    .name = "gemm",
    .help = "the SDK's GEMM example: C = A B by SUMMA over a square PE grid, against dgemm",
    .sections = gemm_sections,
    .nsections = 1,
    .run = gemm_run,
};
