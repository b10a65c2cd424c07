/* `wafer halo`: the fabric benchmark.
 *
 * Every PE holds one element of `elem_bytes`, a hash of its global position
 * and the iteration, so any rank can compute what any PE holds. Each
 * iteration refills the owned elements, exchanges halos and checks every
 * received element against that formula, and that halo cells that must not
 * be written (past a non-periodic edge, corners when off) were not. It
 * reports the measured exchange time and bandwidth and the modelled wafer
 * time of the same exchange. */
#include "halo_workload.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_halo.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_random.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_wafer.h"

static const wf_key halo_keys[] = {
    {"elem_bytes", WF_KEY_INT, "8", 1, 65536, NULL, "bytes of per-PE data exchanged", NULL},
    {"width", WF_KEY_INT, "1", 1, 64, NULL, "halo width in PEs", NULL},
    {"corners", WF_KEY_BOOL, "true", 0, 0, NULL, "also exchange with diagonal neighbours", NULL},
    {"periodic", WF_KEY_BOOL, "true", 0, 0, NULL, "wrap around the PE grid in x and y", NULL},
    {"iterations", WF_KEY_INT, "200", 1, 1e9, NULL, "timed exchanges", NULL},
    {"verify", WF_KEY_BOOL, "true", 0, 0, NULL, "check every received element", NULL},
};
static const wf_section halo_section = {
    "halo", "The fabric benchmark: halo exchange of per-PE data.", halo_keys,
    (int)(sizeof halo_keys / sizeof halo_keys[0]), NULL, NULL};
static const wf_section *const halo_sections[] = {&halo_section};

enum { SENTINEL = 0xA5 };

/* What PE (gi, gj) holds at iteration `it`. */
static void pe_value(unsigned char *dst, size_t esz, int gi, int gj, long it) {
  uint64_t h = wf_splitmix64(((uint64_t)gi << 42) ^ ((uint64_t)gj << 21) ^ (uint64_t)it);
  for (size_t b = 0; b < esz; b++) {
    if (b && b % 8 == 0) h = wf_splitmix64(h);
    dst[b] = (unsigned char)(h >> (8 * (b % 8)));
  }
}

typedef struct halo_case {
  const wf_decomp *dc;
  size_t esz;
  int w;
  bool corners, periodic;
} halo_case;

static void fill(const halo_case *c, const wf_halo *h, unsigned char *field, long it, bool verify) {
  if (verify) memset(field, SENTINEL, wf_halo_field_elems(h) * c->esz);
  for (int j = 0; j < c->dc->ny; j++)
    for (int i = 0; i < c->dc->nx; i++)
      pe_value(field + wf_halo_index(h, i, j) * c->esz, c->esz, c->dc->x0 + i, c->dc->y0 + j, it);
}

/* Whether local halo cell (i, j) is written by an exchange, and from which
 * PE (gi, gj) of the grid (wrapped when periodic). */
static bool halo_source(const halo_case *c, int i, int j, int *gi, int *gj) {
  const wf_decomp *dc = c->dc;
  bool out_x = i < 0 || i >= dc->nx, out_y = j < 0 || j >= dc->ny;
  bool written = c->corners || !(out_x && out_y);
  *gi = dc->x0 + i, *gj = dc->y0 + j;
  if (*gi < 0 || *gi >= dc->pe_nx || *gj < 0 || *gj >= dc->pe_ny) {
    written = written && c->periodic;
    *gi = (*gi + dc->pe_nx) % dc->pe_nx;
    *gj = (*gj + dc->pe_ny) % dc->pe_ny;
  }
  return written;
}

/* Expected content of local halo cell (i, j): a PE's value, or untouched. */
static bool expect(const halo_case *c, int i, int j, long it, unsigned char *out) {
  int gi, gj;
  bool written = halo_source(c, i, j, &gi, &gj);
  if (written) pe_value(out, c->esz, gi, gj, it);
  else memset(out, SENTINEL, c->esz);
  return written;
}

static bool is_neighbour(const halo_case *c, int dx, int dy) {
  return (dx || dy) && (c->corners || dx == 0 || dy == 0);
}

/* One exchange's traffic counted cell by cell, for the fabric's counters:
 * elements delivered inside this rank (a PE's neighbour in the same block,
 * or a halo cell this rank itself owns: a periodic wrap) and between ranks
 * (a halo cell another rank owns), and what one PE takes in (its
 * neighbourhood, for the model). No region arithmetic of wf_halo's. */
typedef struct halo_traffic {
  long long intra, inter, per_pe; /* elements */
} halo_traffic;

/* PEs i of a row of n whose neighbour i + d is in the row too. */
static long long inside(int n, int d) {
  long long count = 0;
  for (int i = 0; i < n; i++) count += i + d >= 0 && i + d < n;
  return count;
}

static halo_traffic count_traffic(const halo_case *c) {
  const wf_decomp *dc = c->dc;
  halo_traffic t = {0, 0, 0};
  /* Pairs inside the block, offset by offset: the x and y counts multiply. */
  for (int dy = -c->w; dy <= c->w; dy++)
    for (int dx = -c->w; dx <= c->w; dx++)
      if (is_neighbour(c, dx, dy)) {
        t.per_pe++;
        t.intra += inside(dc->nx, dx) * inside(dc->ny, dy);
      }
  /* The halo ring, cell by cell: who owns what lands there. */
  for (int j = -c->w; j < dc->ny + c->w; j++)
    for (int i = -c->w; i < dc->nx + c->w; i++) {
      int gi, gj;
      if (i >= 0 && i < dc->nx && j >= 0 && j < dc->ny) {
        i = dc->nx - 1; /* skip the block's interior */
        continue;
      }
      if (!halo_source(c, i, j, &gi, &gj)) continue;
      if (wf_decomp_owner(dc, gi, gj) == dc->rank) t.intra++;
      else t.inter++;
    }
  return t;
}

/* The fabric's counters after `exchanges` exchanges, summed over the ranks
 * as the report gives them, and the model's per-PE intake, against that
 * count. */
static bool traffic_ok(const wf_run *run, const halo_case *c, const halo_traffic *t,
                       const wf_fabric_counters *totals, long exchanges) {
  const wf_hw *hw = &run->wafer->hw;
  double words = wf_model_words(hw, c->esz);
  long long mine[3] = {t->intra, t->inter, t->inter * (long long)c->esz}, all[3];
  MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_SUM, run->comm);
  return (double)totals->words_intra == (double)all[0] * words * exchanges &&
         (double)totals->words_inter == (double)all[1] * words * exchanges &&
         totals->mpi_bytes == all[2] * exchanges &&
         wf_model_halo_intake_words(hw, c->esz, c->w, c->corners) == (double)t->per_pe * words;
}

/* Number of halo elements that differ from what they should hold. */
static long check_halo(const halo_case *c, const wf_halo *h, const unsigned char *field, long it) {
  unsigned char *want = wf_alloc_small(1, c->esz, "a halo element");
  long bad = 0;
  for (int j = -c->w; j < c->dc->ny + c->w; j++)
    for (int i = -c->w; i < c->dc->nx + c->w; i++) {
      if (i >= 0 && i < c->dc->nx && j >= 0 && j < c->dc->ny) continue;
      expect(c, i, j, it, want);
      if (memcmp(field + wf_halo_index(h, i, j) * c->esz, want, c->esz) != 0) bad++;
    }
  free(want);
  return bad;
}

/* A checksum of what every PE sees after the last exchange: its own element
 * and its halo neighbourhood (cells never written count as the sentinel).
 * Summed PE by PE, it is the same for any rank count and defect map. */
static unsigned long long neighbourhood_checksum(const halo_case *c, const wf_halo *h,
                                                 const unsigned char *field) {
  unsigned long long sum = 0;
  for (int j = 0; j < c->dc->ny; j++)
    for (int i = 0; i < c->dc->nx; i++)
      for (int dy = -c->w; dy <= c->w; dy++)
        for (int dx = -c->w; dx <= c->w; dx++) {
          if (!c->corners && dx != 0 && dy != 0) continue; /* not a neighbour then */
          const unsigned char *e = field + wf_halo_index(h, i + dx, j + dy) * c->esz;
          for (size_t b = 0; b < c->esz; b++) sum += (unsigned long long)e[b] * (b % 251 + 1);
        }
  return sum;
}

static int write_output(wf_run *run, const wf_wafer *wf, const char *path, wf_status *st) {
  const wf_decomp *dc = &wf->dc;
  size_t n = (size_t)dc->nx * dc->ny;
  int64_t *owner = malloc(n * sizeof *owner), *phys = malloc(n * sizeof *phys);
  wf_status_clear(st);
  if (!owner || !phys) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the output maps");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) {
    free(owner), free(phys);
    return st->code;
  }
  for (int j = 0; j < dc->ny; j++)
    for (int i = 0; i < dc->nx; i++) {
      owner[(size_t)j * dc->nx + i] = dc->rank;
      phys[(size_t)j * dc->nx + i] = wf_grid_phys_x(&wf->grid, dc->x0 + i, dc->y0 + j);
    }
  unsigned long long g[2] = {(unsigned long long)dc->pe_ny, (unsigned long long)dc->pe_nx};
  unsigned long long off[2] = {(unsigned long long)dc->y0, (unsigned long long)dc->x0};
  unsigned long long cnt[2] = {(unsigned long long)dc->ny, (unsigned long long)dc->nx};
  wf_h5_block b = {.ndim = 2, .global = g, .offset = off, .count = cnt};
  wf_h5file f;
  int rc = wf_run_h5_create(run, path, &f, st);
  if (rc == WF_OK) {
    if (wf_h5_write(&f, "owner_rank", WF_I64, &b, owner, true, st) != WF_OK ||
        wf_h5_write(&f, "physical_column", WF_I64, &b, phys, true, st) != WF_OK)
      rc = st->code;
    rc = wf_h5_finish(&f, rc, st);
  }
  free(owner);
  free(phys);
  return rc;
}

/* What the timed exchanges measured and verified, summed over ranks. */
typedef struct halo_result {
  long iters;
  bool verify;
  long bad, checked, failed; /* elements; exchanges checked / failed */
  double seconds;            /* the slowest rank's time in exchanges */
  unsigned long long checksum;
  bool sum_ok;               /* the allreduce's check */
  int signal;                /* SIGINT or SIGTERM stopped the loop after `done` exchanges */
  long done;
  wf_fabric_counters totals; /* of the timed exchanges */
} halo_result;

/* The timed exchanges, each verified against the closed form when asked.
 * Collective. */
static void exchange_loop(const wf_run *run, const halo_case *c, wf_halo *h,
                          unsigned char *field, halo_result *res) {
  wf_wafer *wf = run->wafer;
  /* One untimed exchange warms up the connections. */
  fill(c, h, field, -1, false);
  wf_halo_exchange(h, field);
  wf->fab.c = (wf_fabric_counters){0};

  wf_progress prog;
  wf_progress_start(&prog, "halo", res->iters, run->verbose, stdout);
  long bad = 0, checked = 0, failed = 0;
  double t_exchange = 0;
  wf_signal_poll sig;
  wf_signal_poll_start(&sig, run->comm);
  wf_fabric_main_begin(&wf->fab);
  for (long it = 0; it < res->iters; it++) {
    if (res->verify || it == 0) fill(c, h, field, it, res->verify); /* new values only to check them */
    wf_fabric_barrier(&wf->fab); /* time the exchange alone, not the skew of the fill */
    res->signal = wf_signal_poll_next(&sig);
    if (res->signal) break;
    res->done = it + 1;
    double t0 = MPI_Wtime();
    wf_halo_exchange(h, field);
    t_exchange += MPI_Wtime() - t0;
    if (res->verify) {
      long nbad = check_halo(c, h, field, it);
      bad += nbad;
      failed += nbad > 0;
      checked++;
    }
    wf_progress_tick(&prog, it + 1);
  }
  wf_fabric_main_end(&wf->fab, res->done);
  wf_signal_poll_end(&sig);
  res->totals = wf_fabric_totals(&wf->fab);
  unsigned long long sum = res->verify ? neighbourhood_checksum(c, h, field) : 0;
  MPI_Allreduce(&sum, &res->checksum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, run->comm);
  long counts[3] = {bad, checked, failed}, totals[3];
  MPI_Allreduce(counts, totals, 3, MPI_LONG, MPI_SUM, run->comm);
  res->bad = totals[0], res->checked = totals[1], res->failed = totals[2];
  MPI_Allreduce(&t_exchange, &res->seconds, 1, MPI_DOUBLE, MPI_MAX, run->comm);
}

/* A grid-wide collective against its closed form: the sum of PE ids. */
static bool allreduce_ok(wf_wafer *wf) {
  double npe = (double)wf->dc.pe_nx * wf->dc.pe_ny;
  double ids = 0;
  for (int j = 0; j < wf->dc.ny; j++)
    for (int i = 0; i < wf->dc.nx; i++)
      ids += (double)(wf->dc.x0 + i) + (double)(wf->dc.y0 + j) * wf->dc.pe_nx;
  wf_fabric_allreduce(&wf->fab, &ids, 1, WF_SUM);
  return ids == npe * (npe - 1) / 2;
}

/* The exchange on the wafer, `cycles` of it, and the PE's memory (its
 * element and its neighbourhood's copies). */
static void project(wf_run *run, wf_range cycles, const halo_case *c, long long neigh) {
  const wf_wafer *wf = run->wafer;
  run->model = (wf_projection){.valid = true,
                               .unit = "exchange",
                               .seconds = wf_model_seconds(&wf->hw, cycles),
                               .bytes_per_pe = (double)c->esz * (neigh + 1),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)wf->dc.pe_nx * wf->dc.pe_ny,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

static void report(wf_run *run, wf_range cycles, const halo_case *c, const halo_result *res) {
  const wf_wafer *wf = run->wafer;
  const wf_projection *p = &run->model;
  double per = res->seconds / (double)res->iters;
  double inter_bytes = (double)res->totals.mpi_bytes / (double)res->iters; /* all ranks */
  double gbs = per > 0 ? inter_bytes / per / 1e9 : 0.0;
  wf_report rep;
  wf_report_open(&rep, run, "halo");
  wf_report_begin(&rep, "halo");
  wf_report_line(&rep, NULL);
  wf_report_int(&rep, "iterations", res->iters, "%d exchanges");
  wf_report_int(&rep, "elem_bytes", (long long)c->esz, "of %d B/PE");
  wf_report_int(&rep, "width", c->w, "width %d");
  wf_report_bool(&rep, "corners", c->corners, "corners: %s");
  wf_report_bool(&rep, "periodic", c->periodic, "periodic: %s");
  wf_report_scaled(&rep, "seconds_per_exchange", per, 1e6, "%.2f us/exchange");
  wf_report_scaled(&rep, "inter_rank_bytes_per_exchange", inter_bytes, 1e-6,
                   "%.3g MB/exchange between ranks");
  wf_report_num(&rep, "inter_rank_GBps", gbs, "%.2f GB/s");
  wf_report_scaled(&rep, "intra_rank_words_per_exchange",
                   (double)res->totals.words_intra / (double)res->iters, 1e-6,
                   "%.3g Mwords/exchange inside ranks (free)");
  if (res->verify) {
    wf_report_line(&rep, res->failed ? "FAILED" : "verified");
    wf_report_note(&rep, "%ld exchanges on every rank", res->checked / wf->dc.nranks);
    wf_report_int(&rep, "checksum", (long long)res->checksum, NULL);
  } else {
    wf_report_line(&rep, "not verified");
    wf_report_note(&rep, "halo.verify = false");
  }
  wf_report_int(&rep, "bad_elements", res->bad, "%d bad elements");
  wf_report_bool(&rep, "allreduce_ok", res->sum_ok, "allreduce right: %s");
  wf_report_end(&rep);
  wf_report_model(&rep, p);
  wf_report_range(&rep, "cycles_per_exchange", cycles.lo, cycles.hi, 1, "%.0f cycles");
  wf_report_num(&rep, "busiest_link_words",
                wf_model_halo_link_words(&wf->hw, c->esz, c->w, c->corners),
                "%.0f words on the busiest link");
  wf_report_range(&rep, "wafer_seconds_per_exchange", p->seconds.lo, p->seconds.hi, 1, NULL);
  wf_report_end(&rep);
  wf_report_close(&rep);
  run->seconds = res->seconds;
  run->wafer_seconds = wf_range_scale(p->seconds, (double)res->iters);
  snprintf(run->headline, sizeof run->headline, "%.2f us/exchange, %.2f GB/s between ranks",
           per * 1e6, gbs);
}

static int halo_run(wf_run *run, wf_status *st) {
  wf_wafer *wf = run->wafer;
  const wf_deck *d = run->deck;
  halo_case c = {.dc = &wf->dc,
                 .esz = (size_t)wf_deck_int(d, "halo", "elem_bytes"),
                 .w = (int)wf_deck_int(d, "halo", "width"),
                 .corners = wf_deck_bool(d, "halo", "corners"),
                 .periodic = wf_deck_bool(d, "halo", "periodic")};
  halo_result res = {.iters = wf_deck_int(d, "halo", "iterations"),
                     .verify = wf_deck_bool(d, "halo", "verify")};
  wf_halo h;
  if (wf_halo_create(&h, &wf->fab, c.esz, c.w, c.corners, c.periodic, c.periodic, st) != WF_OK)
    return wf_deck_blame(d, "halo", "width", st);
  unsigned char *field = malloc(wf_halo_field_elems(&h) * c.esz);
  wf_status_clear(st);
  if (!field) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the halo field");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) {
    free(field);
    wf_halo_free(&h);
    return st->code;
  }
  if (run->verbose)
    printf("halo: %ld exchanges of %zu B/PE, width %d, %s, %s\n", res.iters, c.esz, c.w,
           c.corners ? "faces+corners" : "faces only", c.periodic ? "periodic" : "open edges");

  exchange_loop(run, &c, &h, field, &res);
  if (res.signal) {
    char where[96];
    snprintf(where, sizeof where, "after %ld of %ld exchanges (nothing written)", res.done,
             res.iters);
    free(field);
    wf_halo_free(&h);
    return wf_signal_fail(st, res.signal, where);
  }
  res.sum_ok = allreduce_ok(wf);
  /* Two independent checks: every verified exchange on every rank delivered
   * what the closed form says, and the allreduce equals its closed form. */
  if (res.verify)
    wf_run_check(run, res.failed == 0, "every received halo element as computed directly");
  wf_run_check(run, res.sum_ok, "grid-wide allreduce of PE ids equals n(n-1)/2");
  halo_traffic traffic = count_traffic(&c);
  wf_run_check(run, traffic_ok(run, &c, &traffic, &res.totals, res.iters),
               "the fabric's counters (words inside and between ranks, MPI bytes) and the "
               "model's per-PE intake equal a cell-by-cell count of the neighbourhoods");
  wf_range cycles = wf_model_halo_cycles(&wf->hw, &wf->grid, c.esz, c.w, c.corners);
  project(run, cycles, &c, traffic.per_pe);
  report(run, cycles, &c, &res);
  free(field);
  wf_halo_free(&h);

  const char *out = wf_deck_str(d, "output", "file");
  if (out[0] && write_output(run, wf, out, st) != WF_OK) return st->code;
  return WF_OK;
}

const wf_workload wf_halo_workload = {
    .name = "halo",
    .help = "fabric benchmark: halo exchange of per-PE data, verified, with the wafer model",
    .sections = halo_sections,
    .nsections = 1,
    .run = halo_run,
};
