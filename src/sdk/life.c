/* `wafer life`: the SDK's game of life example on the PE grid.
 *
 * The SDK's kernel (csl-examples benchmarks/game-of-life) gives each PE one
 * cell: every generation a PE sends its state to its four neighbours,
 * forwards what came from north and south on east and west (so the corners
 * arrive in two hops), adds the eight states and applies the rule
 * (docs/sdk-kernels.md). Here each PE holds a block of cells
 * (`cells_per_pe`, 1x1 being the SDK's mapping), the ranks' blocks
 * exchange a one-cell halo with corners through the fabric (wf_halo), and
 * the model charges the SDK's per-cell work and its words. Cells are a byte
 * each on the cluster (a vector adds 32 neighbours at once). */
#include "life.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk_grid.h"
#include "wf_h5.h"
#include "wf_halo.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_random.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_wafer.h"

static int check_cells_per_pe(const char *v, char *why, size_t len) {
  int bx, by;
  char end;
  if (sscanf(v, "%dx%d%c", &bx, &by, &end) != 2 || bx < 1 || by < 1 || bx > 65536 ||
      by > 65536) {
    snprintf(why, len, "expected BXxBY, each 1 to 65536 cells (the SDK's mapping: 1x1)");
    return 1;
  }
  return 0;
}

static const wf_key life_keys[] = {
    {"cells_per_pe", WF_KEY_STRING, "8x8", 0, 0, NULL,
     "each PE's block of cells, BXxBY (the SDK's example: 1x1)", check_cells_per_pe},
    {"generations", WF_KEY_INT, "100", 1, 1e9, NULL, "generations to run", NULL},
    {"pattern", WF_KEY_CHOICE, "random", 0, 0, "random|glider",
     "first generation: random cells, or one glider (its period and travel are checked)", NULL},
    {"density", WF_KEY_REAL, "0.35", 0, 1, NULL, "random: the chance a cell starts alive", NULL},
    {"seed", WF_KEY_INT, "1", 0, 1e18, NULL, "random: the first generation's seed", NULL},
    {"periodic", WF_KEY_BOOL, "true", 0, 0, NULL,
     "wrap the board around (false: dead cells beyond its edges, as the SDK's example)", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare the last generation with a serial reference on rank 0 (costs one serial run)",
     NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG of the last generation (at most 512 x 512, a cell alive if any it covers is; "
     "matplotlib)",
     NULL},
};
static const wf_section life_section = {
    "life", "The SDK's game of life example: a board of cells over the PEs, exact.", life_keys,
    (int)(sizeof life_keys / sizeof life_keys[0]), NULL, NULL};
static const wf_section *const life_sections[] = {&life_section};

/* Cycles of the SDK kernel's per-cell work (pe_program.csl), one instruction
 * a cycle: the fast end adds the eight neighbours' states and applies the
 * rule (a compare, a select, a store: 11); the slow end runs a receive
 * task's body for each state as the SDK does (the sum and two counters: 3
 * each, 24) and the rule. Task switches are not public and not counted. */
#define LIFE_CELL_CYCLES_LO 11.0
#define LIFE_CELL_CYCLES_HI 27.0
/* A state crosses the fabric as one 32-bit word (the SDK's u32 states). */
#define LIFE_STATE_BYTES 4

bool life_initial(const life_board *b, long long x, long long y) {
  if (b->pattern == LIFE_GLIDER) return life_glider_cell(x - 1, y - 1);
  return wf_uniform(b->seed, (uint64_t)(y * b->width + x)) < b->density;
}

/* This rank's cells: [x.lo, x.hi) x [y.lo, y.hi) of the board, two fields
 * with a one-cell halo (this generation and the next). */
typedef struct life_block {
  sdk_span x, y;
  int w, h;
  wf_halo halo;
  unsigned char *cur, *next;
} life_block;

/* The next generation of every cell of the block from `cur` (its halo
 * filled). */
static void step(const wf_halo *h, const unsigned char *restrict cur,
                 unsigned char *restrict next, int w, int rows) {
  for (int j = 0; j < rows; j++) {
    const unsigned char *up = cur + wf_halo_index(h, 0, j - 1);
    const unsigned char *mid = cur + wf_halo_index(h, 0, j);
    const unsigned char *down = cur + wf_halo_index(h, 0, j + 1);
    unsigned char *out = next + wf_halo_index(h, 0, j);
    for (int i = 0; i < w; i++) {
      unsigned char around = (unsigned char)(up[i - 1] + up[i] + up[i + 1] + mid[i - 1] +
                                             mid[i + 1] + down[i - 1] + down[i] + down[i + 1]);
      out[i] = (unsigned char)((around == 3) | (mid[i] & (around == 2)));
    }
  }
}

static void fill_initial(const life_board *board, life_block *b) {
  memset(b->cur, 0, wf_halo_field_elems(&b->halo));
  memset(b->next, 0, wf_halo_field_elems(&b->halo)); /* its halo stays dead: never written */
  for (int j = 0; j < b->h; j++)
    for (int i = 0; i < b->w; i++)
      b->cur[wf_halo_index(&b->halo, i, j)] = life_initial(board, b->x.lo + i, b->y.lo + j);
}

/* Alive cells and the digest of the block's current generation. */
static void census(const life_board *board, const life_block *b, double *alive, uint64_t *digest) {
  *alive = 0, *digest = 0;
  for (int j = 0; j < b->h; j++)
    for (int i = 0; i < b->w; i++) {
      unsigned char c = b->cur[wf_halo_index(&b->halo, i, j)];
      *alive += c;
      *digest += sdk_digest_term((uint64_t)((b->y.lo + j) * board->width + b->x.lo + i), c);
    }
}

/* The glider after the run, by its period alone: four generations move it
 * one cell along +x and +y. Cells of the block that differ from that. */
static double glider_misses(const life_board *board, const life_block *b) {
  long long shift = board->generations / 4;
  double misses = 0;
  for (int j = 0; j < b->h; j++)
    for (int i = 0; i < b->w; i++) {
      long long x = b->x.lo + i - 1 - shift, y = b->y.lo + j - 1 - shift;
      if (board->periodic) x = ((x % board->width) + board->width) % board->width,
                           y = ((y % board->height) + board->height) % board->height;
      misses += b->cur[wf_halo_index(&b->halo, i, j)] != life_glider_cell(x, y);
    }
  return misses;
}

/* Whether the glider check applies: whole periods, and on a bounded board
 * the glider never reaching an edge. */
static bool glider_checkable(const life_board *board, const char **why) {
  long long far = 3 + board->generations / 4 + 1;
  if (board->generations % 4 != 0) return *why = "life.generations is not a multiple of 4", false;
  if (!board->periodic && (far >= board->width || far >= board->height))
    return *why = "the glider reaches the bounded board's edge", false;
  return true;
}

typedef struct life_result {
  long done;
  double seconds;
  int signal;
} life_result;

static void run_generations(wf_run *run, const life_board *board, life_block *b,
                            life_result *res) {
  wf_fabric *fab = &run->wafer->fab;
  wf_progress prog;
  wf_progress_start(&prog, "life", board->generations, run->verbose, stdout);
  wf_signal_poll sig;
  wf_signal_poll_start(&sig, run->comm);
  wf_fabric_barrier(fab);
  double t0 = MPI_Wtime();
  wf_fabric_main_begin(fab);
  for (long g = 0; g < board->generations; g++) {
    if ((res->signal = wf_signal_poll_next(&sig)) != 0) break;
    wf_halo_exchange(&b->halo, b->cur);
    step(&b->halo, b->cur, b->next, b->w, b->h);
    unsigned char *t = b->cur;
    b->cur = b->next, b->next = t;
    res->done = g + 1;
    wf_progress_tick(&prog, res->done);
  }
  wf_fabric_main_end(fab, res->done);
  wf_signal_poll_end(&sig);
  res->seconds = wf_fabric_slowest(fab, MPI_Wtime() - t0);
}

/* A generation on the wafer: the halo of one state a cell (the SDK's words,
 * corners forwarded by the router: wf_model_brick_halo_cycles), then the
 * cells' work. */
static wf_range generation_cycles(const wf_wafer *wf, int bx, int by) {
  wf_range halo = wf_model_brick_halo_cycles(&wf->hw, &wf->grid, bx, by, 1, 1, LIFE_STATE_BYTES);
  double cells = (double)bx * by;
  return (wf_range){halo.lo + cells * LIFE_CELL_CYCLES_LO, halo.hi + cells * LIFE_CELL_CYCLES_HI};
}

static void project(wf_run *run, int bx, int by) {
  const wf_wafer *wf = run->wafer;
  run->model = (wf_projection){.valid = true,
                               .unit = "generation",
                               .seconds = wf_model_seconds(&wf->hw, generation_cycles(wf, bx, by)),
                               .bytes_per_pe = 2.0 * LIFE_STATE_BYTES * (bx + 2.0) * (by + 2.0),
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)wf->dc.pe_nx * wf->dc.pe_ny,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

static int write_output(const wf_run *run, const life_board *board, life_block *b,
                        const char *path, wf_status *st) {
  size_t n = (size_t)b->w * (size_t)b->h;
  int64_t *v = malloc((n ? n : 1) * sizeof *v);
  wf_status_clear(st);
  if (!v) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the board's output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(v), st->code;
  unsigned long long g[2] = {(unsigned long long)board->height, (unsigned long long)board->width};
  unsigned long long off[2] = {(unsigned long long)b->y.lo, (unsigned long long)b->x.lo};
  unsigned long long cnt[2] = {(unsigned long long)b->h, (unsigned long long)b->w};
  wf_h5_block blk = {.ndim = 2, .global = g, .offset = off, .count = cnt};
  wf_h5file f;
  int rc = wf_run_h5_create(run, path, &f, st);
  if (rc == WF_OK) {
    for (int j = 0; j < b->h; j++)
      for (int i = 0; i < b->w; i++) v[(size_t)j * b->w + i] = b->cur[wf_halo_index(&b->halo, i, j)];
    if (wf_h5_write(&f, "cells", WF_I64, &blk, v, true, st) != WF_OK) rc = st->code;
    for (int j = 0; j < b->h && rc == WF_OK; j++)
      for (int i = 0; i < b->w; i++) v[(size_t)j * b->w + i] = life_initial(board, b->x.lo + i, b->y.lo + j);
    if (rc == WF_OK && wf_h5_write(&f, "initial", WF_I64, &blk, v, true, st) != WF_OK)
      rc = st->code;
    rc = wf_h5_finish(&f, rc, st);
  }
  free(v);
  return rc;
}

static int plot(const wf_run *run, const life_board *board, const life_block *b, const char *png,
                wf_status *st) {
  sdk_thumb t;
  if (sdk_thumb_create(run, &t, board->width, board->height, 512, st) != WF_OK) return st->code;
  for (int j = 0; j < b->h; j++)
    for (int i = 0; i < b->w; i++)
      sdk_thumb_put(&t, b->x.lo + i, b->y.lo + j, b->cur[wf_halo_index(&b->halo, i, j)]);
  sdk_thumb_gather(run, &t);
  char title[160];
  snprintf(title, sizeof title, "Game of life %lld x %lld, generation %ld", board->width,
           board->height, board->generations);
  int rc = sdk_thumb_plot(run, &t, png, title, "alive", st);
  sdk_thumb_free(&t);
  return rc;
}

static void report(wf_run *run, const life_board *board, const life_result *res, double alive0,
                   double alive) {
  double cells = (double)board->width * (double)board->height;
  double per = res->seconds / (double)board->generations;
  wf_report rep;
  wf_report_open(&rep, run, "life");
  wf_report_begin(&rep, "life");
  wf_report_line(&rep, NULL);
  long long dims[2] = {board->width, board->height};
  wf_report_ints(&rep, "cells", dims, 2, "%d cells");
  wf_report_int(&rep, "generations", board->generations, "%d generations");
  wf_report_num(&rep, "alive_first", alive0, "%.0f alive at first");
  wf_report_num(&rep, "alive_last", alive, "%.0f at the last");
  wf_report_line(&rep, NULL);
  wf_report_scaled(&rep, "seconds_per_generation", per, 1e6, "%.2f us/generation");
  wf_report_scaled(&rep, "cell_updates_per_second", per > 0 ? cells / per : 0, 1e-9,
                   "%.3f G cell updates/s");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, res->seconds, (double)board->generations);
  snprintf(run->headline, sizeof run->headline, "%.2f us/generation, %.3f G cell updates/s",
           per * 1e6, per > 0 ? cells / per * 1e-9 : 0);
}

/* The checks: the serial reference's digest, and the glider's travel. */
static int check(wf_run *run, const life_board *board, const life_block *b, uint64_t digest,
                 wf_status *st) {
  if (wf_deck_bool(run->deck, "life", "check")) {
    uint64_t want;
    if (sdk_reference_digest(run, life_reference_digest, board, "the serial reference board",
                             &want, st) != WF_OK)
      return st->code;
    wf_run_check(run, digest == want, "every cell of the last generation equals a serial "
                                      "reference's (digest)");
  } else {
    wf_run_unchecked(run, "the last generation", "life.check = false");
  }
  const char *why = NULL;
  if (board->pattern == LIFE_GLIDER && glider_checkable(board, &why)) {
    double misses = glider_misses(board, b);
    wf_fabric_allreduce(&run->wafer->fab, &misses, 1, WF_SUM);
    wf_run_check(run, misses == 0, "the glider moved one cell diagonally every four generations");
  } else if (board->pattern == LIFE_GLIDER) {
    wf_run_unchecked(run, "the glider's travel", why);
  }
  return WF_OK;
}

static int create_block(wf_run *run, const life_board *board, int bx, int by, life_block *b,
                        wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  b->x = sdk_span_of(board->width, dc->pe_nx, dc->x0, dc->nx);
  b->y = sdk_span_of(board->height, dc->pe_ny, dc->y0, dc->ny);
  b->w = (int)(b->x.hi - b->x.lo), b->h = (int)(b->y.hi - b->y.lo);
  double field = (b->w + 2.0) * (b->h + 2.0);
  double need = 2 * field + 8.0 * b->w * b->h; /* the fields, the output's copy */
  if (run->rank == 0 && wf_deck_bool(run->deck, "life", "check"))
    need += 2.0 * (double)board->width * (double)board->height; /* the serial reference */
  if (wf_memory_fits(run->comm, need, "the board's cells",
                     "a smaller [life] cells_per_pe or [wafer] pe_grid, or more nodes", st) != WF_OK)
    return st->code;
  wf_halo_shape shape = {.nx = b->w, .ny = b->h, .min_nx = bx, .min_ny = by, .unit = "cells"};
  if (wf_halo_create_shape(&b->halo, &run->wafer->fab, &shape, 1, 1, true, board->periodic,
                           board->periodic, st) != WF_OK)
    return st->code;
  b->halo.model_cycles = generation_cycles(run->wafer, bx, by).lo -
                         (double)bx * by * LIFE_CELL_CYCLES_LO; /* the halo's part */
  b->cur = malloc((size_t)field), b->next = malloc((size_t)field);
  wf_status_clear(st);
  if (!b->cur || !b->next) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the board");
  wf_status_agree(run->comm, st);
  return st->code;
}

static void free_block(life_block *b) {
  free(b->cur), free(b->next);
  wf_halo_free(&b->halo);
}

static int life_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  int bx, by;
  sscanf(wf_deck_str(d, "life", "cells_per_pe"), "%dx%d", &bx, &by);
  life_board board = {.width = (long long)dc->pe_nx * bx,
                      .height = (long long)dc->pe_ny * by,
                      .periodic = wf_deck_bool(d, "life", "periodic"),
                      .pattern = strcmp(wf_deck_str(d, "life", "pattern"), "glider") == 0
                                     ? LIFE_GLIDER
                                     : LIFE_RANDOM,
                      .density = wf_deck_real(d, "life", "density"),
                      .seed = (uint64_t)wf_deck_int(d, "life", "seed"),
                      .generations = wf_deck_int(d, "life", "generations")};
  if (board.width > (1LL << 30) || board.height > (1LL << 30))
    return wf_deck_fail(d, "life", "cells_per_pe", st,
                        "a board of %lld x %lld cells: at most 2^30 a side (fewer cells a PE or "
                        "a smaller [wafer] pe_grid)",
                        board.width, board.height);
  if (board.pattern == LIFE_GLIDER && (board.width < 5 || board.height < 5))
    return wf_deck_fail(d, "life", "pattern", st,
                        "a glider needs a board of 5 x 5 cells at least; this one is %lld x %lld",
                        board.width, board.height);
  life_block b = {0};
  if (create_block(run, &board, bx, by, &b, st) != WF_OK) {
    free_block(&b);
    return st->code;
  }
  if (run->verbose)
    printf("life: %lld x %lld cells (%d x %d a PE), %ld generations, %s, %s\n", board.width,
           board.height, bx, by, board.generations, board.periodic ? "periodic" : "dead edges",
           board.pattern == LIFE_GLIDER ? "a glider" : "random");
  fill_initial(&board, &b);
  double sums[2];
  uint64_t digest;
  census(&board, &b, &sums[0], &digest);
  life_result res = {0};
  run_generations(run, &board, &b, &res);
  int rc = WF_OK;
  if (res.signal) {
    char where[96];
    snprintf(where, sizeof where, "after %ld of %ld generations (nothing written)", res.done,
             board.generations);
    rc = wf_signal_fail(st, res.signal, where);
  }
  if (rc == WF_OK) {
    census(&board, &b, &sums[1], &digest);
    wf_fabric_allreduce(&run->wafer->fab, sums, 2, WF_SUM);
    digest = sdk_digest_sum(run, digest);
    project(run, bx, by);
    rc = check(run, &board, &b, digest, st);
  }
  if (rc == WF_OK) report(run, &board, &res, sums[0], sums[1]);
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &board, &b, out, st);
  const char *png = wf_deck_str(d, "life", "plot");
  if (rc == WF_OK && png[0]) rc = plot(run, &board, &b, png, st);
  free_block(&b);
  return rc;
}

const wf_workload wf_life_workload = {
    .name = "life",
    .help = "the SDK's game of life example: a board over the PEs with a halo of cells, exact",
    .sections = life_sections,
    .nsections = 1,
    .run = life_run,
};
