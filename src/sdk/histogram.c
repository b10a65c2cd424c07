/* `wafer histogram`: the SDK's histogram example (csl-examples
 * benchmarks/histogram-torus) on the PE grid.
 *
 * Every PE holds `values_per_pe` values and owns `buckets_per_pe` buckets
 * of the histogram (in row-major PE order). A value travels to the PE
 * owning its bucket in two legs, as the SDK routes it over its rings: along
 * its PE column to the target row, then along that row to the target PE;
 * each PE on the way takes it in and passes it on (docs/sdk-kernels.md, 3).
 *
 * On the cluster the legs are rounds of neighbour exchanges along the rank
 * grid's rings (wf_fabric_exchange: irregular data, one message each way),
 * each value going the shorter way round: the traffic depends on the data,
 * and a skewed distribution piles it onto a few ranks and PEs. The model
 * counts the SDK's per-value work on every PE of every value's path and
 * charges the busiest PE. */
#include "histogram.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_grid.h"
#include "wf_fabric.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_wafer.h"

static const wf_key histogram_keys[] = {
    {"values_per_pe", WF_KEY_INT, "256", 1, 1e8, NULL, "values each PE starts with (the SDK: 16)",
     NULL},
    {"buckets_per_pe", WF_KEY_INT, "16", 1, 4096, NULL,
     "buckets each PE owns (the SDK: 4; at most 4096, its wavelet's bucket field)", NULL},
    {"bucket_width", WF_KEY_INT, "4", 1, 1e6, NULL, "values a bucket spans (the SDK: 2)", NULL},
    {"distribution", WF_KEY_CHOICE, "uniform", 0, 0, "uniform|skewed",
     "the values: uniform, or skewed (u^4: most land in the first PE row's buckets)", NULL},
    {"seed", WF_KEY_INT, "7", 0, 1e15, NULL, "the values' draw", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed histograms", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare every bucket with a serial count on rank 0 (costs one serial pass)", NULL},
};
static const wf_section histogram_section = {
    "histogram", "The SDK's histogram example: values routed to the PEs owning their buckets.",
    histogram_keys, (int)(sizeof histogram_keys / sizeof histogram_keys[0]), NULL, NULL};
static const wf_section *const histogram_sections[] = {&histogram_section};

/* Cycles of the SDK kernel's work (histogram.csl), one instruction a
 * cycle (wf_model_scalar): a value starting out is its bucket's 4 divides
 * and modulos (the hardware's range for a division), the wavelet's packing
 * and its send (5); a wavelet taken in is its task's unpacking and compare,
 * the FIFO push and the send on, or the bucket's add (6), the slow end
 * adding the repacking at the turn and the task's bookkeeping (12). */
#define HG_VALUE_PLAIN 5.0
#define HG_VALUE_DIVISIONS 4.0
#define HG_HOP_CYCLES_LO 6.0
#define HG_HOP_CYCLES_HI 12.0

/* Where a value goes: its bucket's PE and the bucket there. */
typedef struct hg_target {
  int x, y;
  long long bucket;
} hg_target;

static hg_target target_of(const hg_case *c, uint32_t v) {
  long long b = v / c->bucket_width, pe = b / c->buckets_per_pe;
  return (hg_target){(int)(pe % c->pe_nx), (int)(pe / c->pe_nx), b % c->buckets_per_pe};
}

/* This rank's values on their way, and its PEs' buckets. */
typedef struct hg_rank {
  const hg_case *c;
  const wf_decomp *dc;
  int axis;             /* the leg under way: 1 along columns (y), 0 along rows (x) */
  wf_buffer up, down;   /* values (uint32) going to higher / lower places on the ring */
  wf_buffer home;       /* values at their leg's end on this rank */
  wf_buffer start;      /* a leg's values as it starts (the last leg's home) */
  long long *count;     /* buckets of the rank's PEs: [PE, x fastest][bucket] */
} hg_rank;

/* The places (rank rows or columns) from this rank to a value's target
 * along the leg's ring: 0 when it is home. */
static int distance(const hg_rank *r, uint32_t v) {
  const wf_decomp *dc = r->dc;
  hg_target t = target_of(r->c, v);
  int n = r->axis ? dc->py : dc->px, me = r->axis ? dc->cy : dc->cx;
  int to = r->axis ? wf_block_owner(dc->pe_ny, dc->py, t.y) : wf_block_owner(dc->pe_nx, dc->px, t.x);
  return (to - me + n) % n;
}

/* Sort one value into home, up (the shorter way is upward, ties too) or
 * down. Out of memory ends the job: a unit of work agrees on nothing. */
static void route(hg_rank *r, uint32_t v) {
  int n = r->axis ? r->dc->py : r->dc->px, d = distance(r, v);
  wf_buffer *to = d == 0 ? &r->home : d <= n / 2 ? &r->up : &r->down;
  wf_buffer_push(to, &v, sizeof v);
}

typedef struct hg_side {
  hg_rank *r;
  wf_buffer *leaving; /* up or down */
  wf_buffer staged;   /* what is leaving, while arrivals refill `leaving` */
} hg_side;

static int pack_side(void *ctx, wf_buffer *out, wf_status *st) {
  hg_side *s = ctx;
  wf_buffer_push(out, s->leaving->data, s->leaving->len);
  s->leaving->len = 0;
  (void)st;
  return WF_OK;
}

static int unpack_side(void *ctx, const char *data, size_t bytes, wf_status *st) {
  hg_side *s = ctx;
  for (size_t at = 0; at + sizeof(uint32_t) <= bytes; at += sizeof(uint32_t)) {
    uint32_t v;
    memcpy(&v, data + at, sizeof v);
    route(s->r, v);
  }
  (void)st;
  return WF_OK;
}

/* One leg: every value to the rank row (axis 1) or column (axis 0) of its
 * target, floor(n / 2) rounds of a step each way round the ring.
 * Collective. */
static int leg(wf_run *run, hg_rank *r, int axis, wf_status *st) {
  wf_fabric *fab = &run->wafer->fab;
  r->axis = axis;
  /* Values that came home on the last leg start this one. */
  wf_buffer start = r->home;
  r->home = r->start, r->home.len = 0;
  const uint32_t *v = (const uint32_t *)(const void *)start.data;
  for (size_t k = 0; k < start.len / sizeof *v; k++) route(r, v[k]);
  r->start = start;
  /* No agreement after the exchanges: nothing in them can fail (a pack
   * that runs out of memory ends the job), so a unit has no collective
   * but its multicast-free exchanges and sdk_repeat's barrier. */
  int rounds = (axis ? run->wafer->dc.py : run->wafer->dc.px) / 2;
  for (int round = 0; round < rounds; round++) {
    hg_side up = {r, &r->up, {0}}, down = {r, &r->down, {0}};
    if (wf_fabric_exchange(fab, axis, 1, pack_side, unpack_side, &up, st) != WF_OK ||
        wf_fabric_exchange(fab, axis, 0, pack_side, unpack_side, &down, st) != WF_OK)
      return st->code;
  }
  return WF_OK;
}

/* Count a value whose bucket's PE is this rank's. */
static void count_here(hg_rank *r, hg_target t) {
  const wf_decomp *dc = r->dc;
  r->count[((size_t)(t.y - dc->y0) * dc->nx + (size_t)(t.x - dc->x0)) * r->c->buckets_per_pe +
           t.bucket]++;
}

/* One histogram: the values from the rank's PEs, the two legs, the counts.
 * Collective. */
static int histogram(wf_run *run, hg_rank *r, wf_status *st) {
  const wf_decomp *dc = r->dc;
  const hg_case *c = r->c;
  r->home.len = r->up.len = r->down.len = 0;
  memset(r->count, 0, (size_t)(dc->nx * dc->ny * c->buckets_per_pe) * sizeof *r->count);
  wf_status_clear(st);
  /* A value whose bucket this rank's PEs own is counted at once (its
   * journey is between PEs of the rank: free on the cluster, counted by the
   * model); the others set out. */
  /* (A signal cuts this short, a PE at a time: sdk_repeat ends the run.) */
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx && !wf_signal_stop(); i++)
      for (long long k = 0; k < c->values_per_pe; k++) {
        uint32_t v = hg_value(c, dc->x0 + i, dc->y0 + j, k);
        hg_target t = target_of(c, v);
        if (t.x >= dc->x0 && t.x < dc->x0 + dc->nx && t.y >= dc->y0 && t.y < dc->y0 + dc->ny)
          count_here(r, t);
        else
          wf_buffer_push(&r->home, &v, sizeof v);
      }
  if (leg(run, r, 1, st) != WF_OK || leg(run, r, 0, st) != WF_OK) return st->code;
  const uint32_t *v = (const uint32_t *)(const void *)r->home.data;
  for (size_t k = 0; k < r->home.len / sizeof *v; k++) count_here(r, target_of(c, v[k]));
  return WF_OK;
}

static uint64_t count_digest(const hg_rank *r) {
  const wf_decomp *dc = r->dc;
  uint64_t d = 0;
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx; i++)
      for (long long b = 0; b < r->c->buckets_per_pe; b++) {
        long long pe = (long long)(dc->y0 + j) * dc->pe_nx + dc->x0 + i;
        d += sdk_digest_term((uint64_t)(pe * r->c->buckets_per_pe + b),
                             r->count[((size_t)j * dc->nx + i) * r->c->buckets_per_pe + b]);
      }
  return d;
}

/* Steps from a to b round a ring of n, the shorter way (ties upward): +1,
 * -1 or 0, and how many. */
static int ring_steps(int a, int b, int n, int *dir) {
  int up = (b - a + n) % n;
  *dir = up == 0 ? 0 : up <= n / 2 ? 1 : -1;
  return *dir >= 0 ? up : n - up;
}

/* The wavelets every PE takes in on the wafer: each value, along its PE
 * column to its target row and along that row to its target, the shorter
 * way round each ring, as the SDK's torus routes it. Summed over the ranks
 * (a model's bookkeeping, not fabric traffic: one counter a PE on every
 * rank, in the run's memory estimate); the busiest PE's count in *most.
 * Polls for signals a PE at a time. Collective. */
static int busiest_pe_load(const wf_run *run, const hg_case *c, double *most, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  size_t npe = (size_t)dc->pe_nx * dc->pe_ny;
  double *load = calloc(npe, sizeof *load);
  wf_status_clear(st);
  if (!load) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the model's counter of each PE");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx && !wf_signal_stop(); i++)
      for (long long k = 0; k < c->values_per_pe; k++) {
        int x = dc->x0 + i, y = dc->y0 + j, dir;
        hg_target t = target_of(c, hg_value(c, x, y, k));
        for (int s = ring_steps(y, t.y, dc->pe_ny, &dir); s > 0; s--)
          y = (y + dir + dc->pe_ny) % dc->pe_ny, load[(size_t)y * dc->pe_nx + x]++;
        for (int s = ring_steps(x, t.x, dc->pe_nx, &dir); s > 0; s--)
          x = (x + dir + dc->pe_nx) % dc->pe_nx, load[(size_t)y * dc->pe_nx + x]++;
      }
  MPI_Allreduce(MPI_IN_PLACE, load, (int)npe, MPI_DOUBLE, MPI_SUM, run->comm);
  *most = 0;
  for (size_t p = 0; p < npe; p++)
    if (load[p] > *most) *most = load[p];
  free(load);
  return wf_signal_check(run->comm, "while walking the values' paths for the model", st);
}

static void project(wf_run *run, const hg_case *c, double load) {
  const wf_wafer *wf = run->wafer;
  double vals = (double)c->values_per_pe;
  wf_range value = wf_model_scalar(&wf->hw, HG_VALUE_PLAIN, 0, HG_VALUE_DIVISIONS);
  wf_range cycles = {vals * value.lo + load * HG_HOP_CYCLES_LO,
                     vals * value.hi + load * HG_HOP_CYCLES_HI};
  run->model = (wf_projection){.valid = true,
                               .unit = "histogram",
                               .seconds = wf_model_seconds(&wf->hw, cycles),
                               .bytes_per_pe = 4.0 * (vals + (double)c->buckets_per_pe + 2 * 2048),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)wf->dc.pe_nx * wf->dc.pe_ny,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

static int write_output(const wf_run *run, const hg_rank *r, const char *path, wf_status *st) {
  const wf_decomp *dc = r->dc;
  const hg_case *c = r->c;
  size_t nb = (size_t)dc->nx * c->buckets_per_pe, nv = (size_t)dc->nx * c->values_per_pe;
  int64_t *counts = malloc(((size_t)dc->ny * nb + 1) * sizeof *counts);
  int64_t *values = malloc(((size_t)dc->ny * nv + 1) * sizeof *values);
  wf_status_clear(st);
  if (!counts || !values) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(counts), free(values), st->code;
  /* [PE row][PE column, then bucket]: each rank's PEs one block */
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx; i++) {
      for (long long b = 0; b < c->buckets_per_pe; b++)
        counts[(size_t)j * nb + (size_t)i * c->buckets_per_pe + b] =
            r->count[((size_t)j * dc->nx + i) * c->buckets_per_pe + b];
      for (long long k = 0; k < c->values_per_pe; k++)
        values[(size_t)j * nv + (size_t)i * c->values_per_pe + k] = hg_value(c, dc->x0 + i, dc->y0 + j, k);
    }
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return free(counts), free(values), st->code;
  int rc = WF_OK;
  unsigned long long off[2] = {(unsigned long long)dc->y0, 0}, cnt[2] = {(unsigned long long)dc->ny, 0};
  unsigned long long g[2] = {(unsigned long long)dc->pe_ny, 0};
  g[1] = (unsigned long long)(dc->pe_nx * c->buckets_per_pe);
  off[1] = (unsigned long long)(dc->x0 * c->buckets_per_pe), cnt[1] = nb;
  wf_h5_block b = {.ndim = 2, .global = g, .offset = off, .count = cnt};
  if (wf_h5_write(&f, "counts", WF_I64, &b, counts, false, st) != WF_OK) rc = st->code;
  g[1] = (unsigned long long)(dc->pe_nx * c->values_per_pe);
  off[1] = (unsigned long long)(dc->x0 * c->values_per_pe), cnt[1] = nv;
  if (rc == WF_OK && wf_h5_write(&f, "values", WF_I64, &b, values, false, st) != WF_OK) rc = st->code;
  rc = wf_h5_finish(&f, rc, st);
  free(counts), free(values);
  return rc;
}

static void report(wf_run *run, const hg_case *c, const wf_fabric_counters *moved, double seconds,
                   long repeat, double load) {
  const wf_decomp *dc = &run->wafer->dc;
  double per = seconds / (double)repeat;
  double values = (double)dc->pe_nx * dc->pe_ny * (double)c->values_per_pe;
  wf_report rep;
  wf_report_open(&rep, run, "histogram");
  wf_report_begin(&rep, "histogram");
  wf_report_line(&rep, NULL);
  wf_report_num(&rep, "values", values, "%.0f values");
  wf_report_int(&rep, "buckets", (long long)dc->pe_nx * dc->pe_ny * c->buckets_per_pe, "%d buckets");
  wf_report_str(&rep, "distribution", c->skewed ? "skewed" : "uniform", "%s");
  wf_report_scaled(&rep, "seconds_per_histogram", per, 1e3, "%.3f ms/histogram");
  wf_report_scaled(&rep, "values_per_second", per > 0 ? values / per : 0, 1e-6, "%.1f Mvalues/s");
  wf_report_num(&rep, "bytes_between_ranks", (double)moved->mpi_bytes / (double)repeat,
                "%.3g B between ranks a histogram");
  wf_report_num(&rep, "busiest_pe_wavelets", load, "busiest PE takes in %.0f wavelets");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms/histogram, %.1f Mvalues/s", per * 1e3,
           per > 0 ? values / per * 1e-6 : 0);
}

static int read_case(const wf_run *run, hg_case *c, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  *c = (hg_case){.pe_nx = dc->pe_nx,
                 .pe_ny = dc->pe_ny,
                 .values_per_pe = wf_deck_int(d, "histogram", "values_per_pe"),
                 .buckets_per_pe = wf_deck_int(d, "histogram", "buckets_per_pe"),
                 .bucket_width = wf_deck_int(d, "histogram", "bucket_width"),
                 .skewed = strcmp(wf_deck_str(d, "histogram", "distribution"), "skewed") == 0,
                 .seed = (uint64_t)wf_deck_int(d, "histogram", "seed")};
  double range = (double)dc->pe_nx * dc->pe_ny * (double)c->buckets_per_pe * (double)c->bucket_width;
  if (range > 4294967295.0)
    return wf_deck_fail(d, "histogram", "bucket_width", st,
                        "values up to %.0f: over the 32 bits a wavelet carries (fewer buckets or "
                        "narrower ones)",
                        range);
  c->range = (long long)range;
  if ((double)dc->pe_nx * dc->pe_ny > 2147483647.0)
    return wf_deck_fail(d, "wafer", "pe_grid", st,
                        "%.0f PEs: the model counts each PE's wavelets in one reduction, of at "
                        "most 2^31 - 1 (a smaller grid)",
                        (double)dc->pe_nx * dc->pe_ny);
  return WF_OK;
}

/* sdk_repeat's unit: one histogram. */
static int histogram_unit(wf_run *run, void *ctx, wf_status *st) {
  return histogram(run, ctx, st);
}

static int histogram_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  hg_case c;
  if (read_case(run, &c, st) != WF_OK) return st->code;
  /* the values twice (start and arrivals) and the buckets; a skewed run
   * may pile more on a rank: the estimate is the mean's */
  double need = (double)dc->nx * dc->ny * (12.0 * c.values_per_pe + 8.0 * c.buckets_per_pe) +
                8.0 * dc->pe_nx * dc->pe_ny; /* the model's counter of each PE */
  if (run->rank == 0 && wf_deck_bool(d, "histogram", "check"))
    need += 8.0 * (double)c.range / (double)c.bucket_width;
  if (wf_memory_fits(run->comm, need, "the values and buckets",
                     "fewer [histogram] values_per_pe or buckets, or more nodes", st) != WF_OK)
    return st->code;
  hg_rank r = {.c = &c, .dc = dc};
  r.count = malloc((size_t)(dc->nx * dc->ny * c.buckets_per_pe) * sizeof *r.count);
  wf_status_clear(st);
  if (!r.count) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the buckets");
  wf_status_agree(run->comm, st);
  int rc = st->code;
  long repeat = wf_deck_int(d, "histogram", "repeat");
  if (rc == WF_OK && run->verbose)
    printf("histogram: %lld values a PE into %lld buckets a PE of %lld, %s, on %d x %d PEs\n",
           c.values_per_pe, c.buckets_per_pe, c.bucket_width, c.skewed ? "skewed" : "uniform",
           dc->pe_nx, dc->pe_ny);
  double seconds = 0;
  if (rc == WF_OK)
    rc = sdk_repeat(run, "histogram", "histograms", repeat, histogram_unit, &r, &seconds, st);
  if (rc == WF_OK) {
    wf_fabric_counters moved = wf_fabric_totals(&run->wafer->fab);
    uint64_t got = sdk_digest_sum(run, count_digest(&r));
    double load = 0;
    rc = busiest_pe_load(run, &c, &load, st);
    if (rc == WF_OK) project(run, &c, load);
    if (rc != WF_OK) {
    } else if (wf_deck_bool(d, "histogram", "check")) {
      uint64_t want;
      rc = sdk_reference_digest(run, hg_reference_digest, &c, "the serial count", &want, st);
      if (rc == WF_OK)
        wf_run_check(run, got == want, "every bucket's count equals a serial count's (digest)");
    } else {
      wf_run_unchecked(run, "the counts", "histogram.check = false");
    }
    if (rc == WF_OK) report(run, &c, &moved, seconds, repeat, load);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &r, out, st);
  free(r.count);
  wf_buffer_free(&r.up), wf_buffer_free(&r.down), wf_buffer_free(&r.home);
  wf_buffer_free(&r.start);
  return rc;
}

const wf_workload wf_histogram_workload = {
    .name = "histogram",
    .help = "the SDK's histogram example: values routed over the PE grid's rings to their buckets",
    .sections = histogram_sections,
    .nsections = 1,
    .run = histogram_run,
};
