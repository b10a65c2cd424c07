/* `wafer widemul`: wide integer multiplication on the PE grid.
 *
 * The SDK's example (csl-examples benchmarks/wide-multiplication) multiplies
 * two 128-bit integers on one PE, bit-serially by shifts and adds
 * (docs/sdk-kernels.md, 6). This is wafer's own mapping of the same
 * operation onto a row of PEs, for integers of any width: each PE row
 * multiplies its own pair of `bits`-bit integers, their 32-bit limbs spread
 * along the row.
 *
 *   1. The operands' limbs are gathered along the row: each PE multicasts
 *      its block of x and y (wf_fabric_bcast_lines), so every PE holds both.
 *   2. Each PE owns a block of the product's 2L limbs and sums, for each of
 *      its limbs k, the products x_a y_(k-a) (a column sum: up to L terms
 *      of 64 bits, kept in 128).
 *   3. The carries move east along the row: a PE turns its column sums into
 *      limbs from the carry its west neighbour passes, and passes its own
 *      on. The ranks of a rank row pass their carries in px - 1 rounds of
 *      one shift each (wf_fabric_shift), each round settling one more rank.
 *
 * Checked against GMP's mpz_mul of the same operands, limb by limb, and,
 * with or without GMP, the product modulo a prime. */
#include "widemul.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_grid.h"
#include "widemul_case.h"
#include "widemul_check.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_config.h"
#include "wf_wafer.h"

typedef unsigned __int128 wm_u128; /* GCC and Clang: a column sum of up to 2^64 terms */

static const wf_key widemul_keys[] = {
    {"bits", WF_KEY_INT, "16384", 32, 1e8, NULL,
     "width of each operand in bits (the SDK's example: 128)", NULL},
    {"operands", WF_KEY_CHOICE, "random", 0, 0, "random|ones|powers",
     "random limbs; 2^bits - 1 (every carry ripples); or powers of two", NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "random: the operands' draw", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed rounds of products (one a PE row)", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare every limb with GMP's mpz_mul, and the product modulo a prime", NULL},
};
static const wf_section widemul_section = {
    "widemul", "Wide integer multiplication: a product a PE row, limbs along the row.",
    widemul_keys, (int)(sizeof widemul_keys / sizeof widemul_keys[0]), NULL, NULL};
static const wf_section *const widemul_sections[] = {&widemul_section};

/* Cycles of a PE's work in this mapping (no SDK kernel to read: its is
 * bit-serial on one PE): a 32 x 32-bit limb product on the PE's 16-bit
 * datapath is 4 multiplies of halves and 4 adds into the column's 96-bit
 * sum, one instruction each at the fast end, the slow end an instruction
 * more for each add's carry; a limb's normalising is the carry's add, the
 * mask and the shift (3). */
#define WM_MAC_CYCLES_LO 8.0
#define WM_MAC_CYCLES_HI 12.0
#define WM_LIMB_CYCLES 3.0

static long long span_len(sdk_span s) { return s.hi - s.lo; }

/* Terms of column k of a product of two L-limb numbers. */
static long long column_terms(long long k, long long L) {
  long long lo = k - L + 1 > 0 ? k - L + 1 : 0, hi = k < L - 1 ? k : L - 1;
  return hi >= lo ? hi - lo + 1 : 0;
}

/* This rank's part: for each of its PE rows, the operands' limbs of its PE
 * columns (what it starts with), the whole operands (gathered), the column
 * sums and limbs of its block of the product. */
typedef struct wm_rank {
  sdk_span own, out; /* limbs of x and y it starts with; limbs of the product it owns */
  uint32_t *x, *y;   /* ny x L: whole operands, gathered */
  uint32_t *line;    /* a multicast's elements: ny x 2 x (limbs of a group of PE columns) */
  wm_u128 *sum;      /* ny x |out| */
  uint32_t *z;       /* ny x |out| */
  wm_u128 *carry_in, *carry_out; /* ny: from the west rank, to the east one */
} wm_rank;

/* PE columns [s, *end) owned by the same rank column: one multicast. */
static int group_end(const wf_decomp *dc, int s) {
  int o = wf_block_owner(dc->pe_nx, dc->px, s), e = s + 1;
  while (e < dc->pe_nx && wf_block_owner(dc->pe_nx, dc->px, e) == o) e++;
  return e;
}

/* Step 1: every PE row's x and y whole on its ranks. Collective. */
static int gather_operands(wf_run *run, const wm_case *c, wm_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  for (int s = 0; s < c->P;) {
    int e = group_end(dc, s);
    sdk_span g = {sdk_part(c->L, c->P, s), sdk_part(c->L, c->P, e)};
    long long n = span_len(g), esz = 2 * n;
    if (wf_block_owner(c->P, dc->px, s) == dc->cx) /* its PEs hold these limbs */
      for (int l = 0; l < dc->ny; l++) {
        memcpy(r->line + l * esz, r->x + l * c->L + g.lo, (size_t)n * sizeof *r->x);
        memcpy(r->line + l * esz + n, r->y + l * c->L + g.lo, (size_t)n * sizeof *r->y);
      }
    if (wf_fabric_bcast_lines(&run->wafer->fab, WF_ALONG_ROWS, r->line,
                              (size_t)esz * sizeof *r->line, s, st) != WF_OK)
      return st->code;
    for (int l = 0; l < dc->ny; l++) {
      memcpy(r->x + l * c->L + g.lo, r->line + l * esz, (size_t)n * sizeof *r->x);
      memcpy(r->y + l * c->L + g.lo, r->line + l * esz + n, (size_t)n * sizeof *r->y);
    }
    s = e;
  }
  return WF_OK;
}

/* Column k's sum of x_a y_(k-a), a in [lo, hi]: each 64-bit product's
 * halves summed apart (no carries: fewer than 2^32 terms), which the
 * compiler turns into vector multiplies of 32-bit limbs. */
WF_HOT static wm_u128 column(const uint32_t *restrict x, const uint32_t *restrict y, long long k,
                             long long lo, long long hi) {
  uint64_t low = 0, high = 0;
  for (long long a = lo; a <= hi; a++) {
    uint64_t p = (uint64_t)x[a] * y[k - a];
    low += p & 0xffffffffu, high += p >> 32;
  }
  return (wm_u128)low + ((wm_u128)high << 32);
}

/* Step 2: the column sums of the rank's block of each product; false when
 * wf_signal_stop() (polled every 256 columns) stopped them. */
static bool column_sums(const wm_case *c, const wf_decomp *dc, wm_rank *r) {
  long long w = span_len(r->out);
  for (int l = 0; l < dc->ny; l++) {
    if (wf_signal_stop()) return false;
    const uint32_t *x = r->x + l * c->L, *y = r->y + l * c->L;
    for (long long k = r->out.lo; k < r->out.hi; k++) {
      if ((k - r->out.lo) % 256 == 255 && wf_signal_stop()) return false;
      long long lo = k - c->L + 1 > 0 ? k - c->L + 1 : 0, hi = k < c->L - 1 ? k : c->L - 1;
      r->sum[l * w + (k - r->out.lo)] = column(x, y, k, lo, hi);
    }
  }
  return true;
}

/* The rank's limbs from its column sums and the carries coming in; the
 * carries going out. */
static void settle(const wf_decomp *dc, wm_rank *r) {
  long long w = span_len(r->out);
  for (int l = 0; l < dc->ny; l++) {
    wm_u128 carry = dc->cx == 0 ? 0 : r->carry_in[l]; /* the first rank's west is the ring's wrap */
    for (long long k = 0; k < w; k++) {
      wm_u128 t = r->sum[l * w + k] + carry;
      r->z[l * w + k] = (uint32_t)t;
      carry = t >> 32;
    }
    r->carry_out[l] = carry;
  }
}

/* Step 3: the carries east along each rank row, px - 1 rounds. Collective. */
static void pass_carries(wf_run *run, wm_rank *r) {
  const wf_decomp *dc = &run->wafer->dc;
  size_t bytes = (size_t)dc->ny * sizeof *r->carry_in;
  memset(r->carry_in, 0, bytes);
  settle(dc, r);
  for (int round = 1; round < dc->px; round++) {
    wf_fabric_shift(&run->wafer->fab, 0, 1, r->carry_out, bytes, r->carry_in, bytes);
    settle(dc, r);
  }
}

/* One round of products, every PE row its own. Collective. */
static int products(wf_run *run, const wm_case *c, wm_rank *r, wf_status *st) {
  if (gather_operands(run, c, r, st) != WF_OK) return st->code;
  /* A rank's long solo phase: it stops at a signal and the rank keeps to
   * the carries' shifts (its partners wait in them); sdk_repeat's check
   * ends the run. No agreement here: a round's only collective is
   * sdk_repeat's barrier. */
  (void)column_sums(c, &run->wafer->dc, r);
  pass_carries(run, r);
  return WF_OK;
}

/* A round on the wafer, every PE row at once: a PE takes in the other PEs'
 * limbs (2L words less its own, through its ramp), sums its columns (the
 * busiest PE's terms), turns them into limbs, and the carry crosses the
 * row PE by PE: at each, the ramps in and out and a hop, then the carry's
 * ripple, one limb at the fast end, the whole block at the slow end. */
static wf_range round_cycles(const wf_wafer *wf, const wm_case *c) {
  const wf_hw *hw = &wf->hw;
  double terms = 0, block = 0;
  for (int i = 0; i < c->P; i++) {
    sdk_span s = sdk_span_of(2 * c->L, c->P, i, 1);
    double t = 0;
    for (long long k = s.lo; k < s.hi; k++) t += (double)column_terms(k, c->L);
    if (t > terms) terms = t;
    if ((double)span_len(s) > block) block = (double)span_len(s);
  }
  double own = 2.0 * (double)((c->L + c->P - 1) / c->P);
  double gather = wf_model_ramp(hw, 2.0 * (double)c->L - own);
  double hop = wf_model_latency(hw, 1);
  return (wf_range){gather + terms * WM_MAC_CYCLES_LO + block * WM_LIMB_CYCLES +
                        c->P * (hop + WM_LIMB_CYCLES),
                    gather + terms * WM_MAC_CYCLES_HI + block * WM_LIMB_CYCLES +
                        c->P * (hop + block * WM_LIMB_CYCLES)};
}

static void project(wf_run *run, const wm_case *c) {
  const wf_wafer *wf = run->wafer;
  double block = (double)((2 * c->L + c->P - 1) / c->P);
  run->model = (wf_projection){.valid = true,
                               .unit = "round",
                               .seconds = wf_model_seconds(&wf->hw, round_cycles(wf, c)),
                               .bytes_per_pe = 4.0 * (2.0 * c->L + block) + 12.0 * block,
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)c->P * c->rows,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

/* The checks: GMP limb by limb (each rank its block of each of its rows'
 * products), and the residue of every product. */
static int check(wf_run *run, const wm_case *c, const wm_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  long long w = span_len(r->out);
  /* Each PE row's residue from its ranks' blocks: summed along the rank
   * row, one slot a PE row. */
  uint64_t *res = calloc((size_t)c->rows, sizeof *res);
  long long bad = 0;
  wf_status_clear(st);
  if (!res) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the residues");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  for (int l = 0; l < dc->ny; l++) {
    res[dc->y0 + l] = wm_residue(r->z + l * w, r->out.lo, w);
    if (wm_have_gmp()) bad += wm_gmp_mismatches(c, dc->y0 + l, r->z + l * w, r->out.lo, w);
  }
  MPI_Allreduce(MPI_IN_PLACE, res, c->rows, MPI_UINT64_T, MPI_SUM, run->comm);
  long long wrong = 0;
  for (int j = 0; j < c->rows; j++) wrong += res[j] % wm_prime() != wm_product_residue(c, j);
  free(res);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, run->comm);
  wf_run_check(run, wrong == 0, "every product modulo 2^31 - 19 equals its operands' residues "
                                "multiplied");
  if (wm_have_gmp())
    wf_run_check(run, bad == 0, "every limb of every product equals GMP's mpz_mul");
  else
    wf_run_unavailable(run, "GMP's mpz_mul",
                       "this build has no GMP (Debian: libgmp-dev; at a centre: -DGMP_ROOT)");
  return WF_OK;
}

static int write_output(const wf_run *run, const wm_case *c, const wm_rank *r, const char *path,
                        wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  long long w = span_len(r->out), n = span_len(r->own);
  int64_t *v = malloc((size_t)(dc->ny * (w > n ? w : n) + 1) * sizeof *v);
  wf_status_clear(st);
  if (!v) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(v), st->code;
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return free(v), st->code;
  int rc = WF_OK;
  const char *names[3] = {"z", "x", "y"};
  for (int d = 0; d < 3 && rc == WF_OK; d++) {
    sdk_span s = d == 0 ? r->out : r->own;
    long long cols = d == 0 ? 2 * c->L : c->L, len = span_len(s);
    for (int l = 0; l < dc->ny; l++)
      for (long long k = 0; k < len; k++)
        v[l * len + k] = d == 0   ? r->z[l * w + k]
                         : d == 1 ? r->x[l * c->L + s.lo + k]
                                  : r->y[l * c->L + s.lo + k];
    unsigned long long g[2] = {(unsigned long long)c->rows, (unsigned long long)cols};
    unsigned long long off[2] = {(unsigned long long)dc->y0, (unsigned long long)s.lo};
    unsigned long long cnt[2] = {(unsigned long long)dc->ny, (unsigned long long)len};
    wf_h5_block b = {.ndim = 2, .global = g, .offset = off, .count = cnt};
    if (wf_h5_write(&f, names[d], WF_I64, &b, v, false, st) != WF_OK) rc = st->code;
  }
  rc = wf_h5_finish(&f, rc, st);
  free(v);
  return rc;
}

static void report(wf_run *run, const wm_case *c, double seconds, long repeat) {
  double per = seconds / (double)repeat, macs = (double)c->L * (double)c->L * c->rows;
  wf_report rep;
  wf_report_open(&rep, run, "widemul");
  wf_report_begin(&rep, "widemul");
  wf_report_line(&rep, NULL);
  wf_report_int(&rep, "bits", c->bits, "%d-bit operands");
  wf_report_int(&rep, "products", c->rows, "%d products a round (one a PE row)");
  wf_report_int(&rep, "limbs_per_pe", (2 * c->L + c->P - 1) / c->P, "%d product limbs a PE");
  wf_report_scaled(&rep, "seconds_per_round", per, 1e3, "%.3f ms/round");
  wf_report_scaled(&rep, "limb_products_per_second", per > 0 ? macs / per : 0, 1e-9,
                   "%.2f G limb products/s");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms a round of %d %lld-bit products",
           per * 1e3, c->rows, c->bits);
}

static int create_rank(const wf_run *run, const wm_case *c, wm_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  r->own = sdk_span_of(c->L, c->P, dc->x0, dc->nx);
  r->out = sdk_span_of(2 * c->L, c->P, dc->x0, dc->nx);
  long long w = span_len(r->out);
  double need = (double)dc->ny * (12.0 * c->L + 20.0 * w + 32.0);
  if (wf_memory_fits(run->comm, need, "the operands' and products' limbs",
                     "fewer [widemul] bits or PE rows, or more nodes", st) != WF_OK)
    return st->code;
  if (!wf_fabric_lines_fit(&run->wafer->fab, WF_ALONG_ROWS, 8.0 * (double)c->L))
    return wf_deck_fail(run->deck, "widemul", "bits", st,
                        "the limbs a rank multicasts would pass MPI's 2 GB a message (more ranks "
                        "along the PE rows, or fewer bits)");
  r->x = malloc((size_t)(dc->ny * c->L) * sizeof *r->x);
  r->y = malloc((size_t)(dc->ny * c->L) * sizeof *r->y);
  r->line = malloc((size_t)(dc->ny * 2 * c->L) * sizeof *r->line);
  r->sum = malloc((size_t)(dc->ny * w) * sizeof *r->sum);
  r->z = malloc((size_t)(dc->ny * w) * sizeof *r->z);
  r->carry_in = malloc((size_t)dc->ny * sizeof *r->carry_in);
  r->carry_out = malloc((size_t)dc->ny * sizeof *r->carry_out);
  wf_status_clear(st);
  if (!r->x || !r->y || !r->line || !r->sum || !r->z || !r->carry_in || !r->carry_out)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the limbs");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  /* Each PE starts with its own limbs only (the rest is gathered). */
  memset(r->x, 0, (size_t)(dc->ny * c->L) * sizeof *r->x);
  memset(r->y, 0, (size_t)(dc->ny * c->L) * sizeof *r->y);
  for (int l = 0; l < dc->ny; l++)
    for (long long a = r->own.lo; a < r->own.hi; a++) {
      r->x[l * c->L + a] = wm_limb(c, dc->y0 + l, 0, a);
      r->y[l * c->L + a] = wm_limb(c, dc->y0 + l, 1, a);
    }
  return WF_OK;
}

static void free_rank(wm_rank *r) {
  free(r->x), free(r->y), free(r->line), free(r->sum), free(r->z);
  free(r->carry_in), free(r->carry_out);
}

/* sdk_repeat's unit: one round of products. */
typedef struct wm_job {
  const wm_case *c;
  wm_rank *r;
} wm_job;
static int round_unit(wf_run *run, void *ctx, wf_status *st) {
  wm_job *job = ctx;
  return products(run, job->c, job->r, st);
}

static int widemul_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  const char *kind = wf_deck_str(d, "widemul", "operands");
  wm_case c = {.bits = wf_deck_int(d, "widemul", "bits"),
               .P = dc->pe_nx,
               .rows = dc->pe_ny,
               .kind = strcmp(kind, "ones") == 0     ? WM_ONES
                       : strcmp(kind, "powers") == 0 ? WM_POWERS
                                                     : WM_RANDOM,
               .seed = (uint64_t)wf_deck_int(d, "widemul", "seed")};
  c.L = (c.bits + 31) / 32;
  if (c.L < c.P)
    return wf_deck_fail(d, "widemul", "bits", st,
                        "%lld bits are %lld limbs of 32 for a row of %d PEs: each PE needs a "
                        "limb (at least %d bits, or a narrower [wafer] pe_grid)",
                        c.bits, c.L, c.P, 32 * c.P);
  wm_rank r = {0};
  int rc = create_rank(run, &c, &r, st);
  long repeat = wf_deck_int(d, "widemul", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("widemul: %d products of two %lld-bit integers (%s), %lld limbs along %d PEs a row\n",
           c.rows, c.bits, kind, c.L, c.P);
  double seconds = 0;
  wm_job job = {&c, &r};
  if (rc == WF_OK) rc = sdk_repeat(run, "widemul", "rounds", repeat, round_unit, &job, &seconds, st);
  if (rc == WF_OK) {
    project(run, &c);
    if (wf_deck_bool(d, "widemul", "check"))
      rc = check(run, &c, &r, st);
    else
      wf_run_unchecked(run, "the products", "widemul.check = false");
  }
  if (rc == WF_OK) report(run, &c, seconds, repeat);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &c, &r, out, st);
  free_rank(&r);
  return rc;
}

const wf_workload wf_widemul_workload = {
    .name = "widemul",
    .help = "wide integer multiplication: a product a PE row, carries along the row, against GMP",
    .sections = widemul_sections,
    .nsections = 1,
    .run = widemul_run,
};
