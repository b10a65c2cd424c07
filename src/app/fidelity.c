/* `wafer fidelity` (fidelity.h): runs each published case's deck as a projection only and
 * compares the model's range with the published figure. Owns the [fidelity] deck section,
 * the table and the JSON summary. */
#include "fidelity.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity_kernel.h"
#include "registry.h"
#include "wf_data.h"
#include "wf_io.h"
#include "wf_model.h"
#include "wf_strbuf.h"
#include "wf_wafer.h"

static const wf_key fidelity_keys[] = {
    {"case", WF_KEY_STRING, "", 0, 0, NULL, "short name of the published case ('' = not a fidelity deck)",
     NULL},
    {"workload", WF_KEY_STRING, "", 0, 0, NULL, "the workload that projects it", NULL},
    {"kernel", WF_KEY_CHOICE, "none", 0, 0, "none|gemv|tlrmvm_bound",
     "or a kernel the model projects without a workload: a GEMV, or TLR-MVM's bandwidth "
     "ceiling (a bound)", NULL},
    {"rows", WF_KEY_INT, "16384", 1, 1 << 30, NULL, "gemv: rows of the matrix", NULL},
    {"cols", WF_KEY_INT, "16384", 1, 1 << 30, NULL, "gemv: columns of the matrix", NULL},
    {"systems", WF_KEY_INT, "1", 1, 1 << 20, NULL, "tlrmvm_bound: wafers working at once", NULL},
    {"precision", WF_KEY_CHOICE, "fp32", 0, 0, "fp16|fp32", "the kernel's values", NULL},
    {"published", WF_KEY_REAL, "0", 0, 1e300, NULL, "the published figure, in SI units", NULL},
    {"quantity", WF_KEY_CHOICE, "seconds", 0, 0, "seconds|rate|flop_rate",
     "what the figure measures: seconds per unit of work, units per second, or FLOP/s", NULL},
    {"display_unit", WF_KEY_STRING, "", 0, 0, NULL, "unit the table shows, e.g. 'PFLOP/s'", NULL},
    {"display_scale", WF_KEY_REAL, "1", 1e-30, 1e30, NULL,
     "factor from SI units to display_unit, e.g. 1e-15 for PFLOP/s", NULL},
    {"source", WF_KEY_STRING, "", 0, 0, NULL, "where the figure is published", NULL},
    {"time_base", WF_KEY_CHOICE, "wall", 0, 0, "wall|cycles",
     "wall: a wall-clock figure (the model's clock range applies); cycles: the source "
     "converts cycles at a clock it states (clock_ghz), so the comparison is in cycles",
     NULL},
    {"clock_ghz", WF_KEY_REAL, "0", 0, 100, NULL,
     "time_base = cycles: the clock the source converts its cycles at, in GHz", NULL},
    {"narrow_by", WF_KEY_STRING, "", 0, 0, NULL,
     "what would narrow the model's range (printed when it is too wide to decide)", NULL},
    {"published_digits", WF_KEY_INT, "0", 0, 17, NULL,
     "significant digits the source gives its figure to (0 = exact): the figure stands for "
     "every value that rounds to it",
     NULL},
};

/* A figure inside a range wider than this (high over low end) is not
 * decided: the row is undetermined (docs/model.md, "Ranges, not numbers"). */
#define FIDELITY_MAX_WIDTH 1.5

const wf_section wf_fidelity_section = {
    "fidelity",
    "A published wafer result the model is checked against (decks in inputs/fidelity/; `wafer "
    "fidelity`).",
    fidelity_keys, (int)(sizeof fidelity_keys / sizeof fidelity_keys[0]), NULL, NULL};

/* One case: the model's figure as a range, in the quantity published. */
typedef struct fidelity_row {
  char deck[256], name[128], hardware[16], unit[32], source[256], narrow_by[256];
  double published, scale;
  double published_lo, published_hi; /* what rounds to the published figure */
  double source_hz;      /* the source's own clock (time_base = cycles), 0: wall clock */
  wf_range model, ratio; /* model / published */
  bool inside;           /* the published figure lies in the model's range (a bound's: at
                            most its fast end) */
  bool bound;            /* the model's figure is a ceiling (fidelity_kernel.h) */
  const char *verdict;   /* inside, outside, or undetermined (a range too wide) */
  bool fits_pes, fits_sram;
  double bytes_per_pe, pes_needed, pes_offered;
} fidelity_row;

/* The model's figure in the published quantity, from its seconds a unit. */
static wf_range model_quantity(wf_range seconds, double flops, const char *quantity) {
  if (strcmp(quantity, "rate") == 0) return wf_range_inverse(seconds);
  if (strcmp(quantity, "flop_rate") == 0) return wf_range_scale(wf_range_inverse(seconds), flops);
  return seconds;
}

/* Outside when the published figure (with its rounding) misses the model's
 * range, whatever the range's width; inside only when the range is at most
 * FIDELITY_MAX_WIDTH wide, undetermined when it is wider. */
static const char *verdict(const fidelity_row *r) {
  if (!r->inside) return "outside";
  return r->ratio.hi > FIDELITY_MAX_WIDTH * r->ratio.lo ? "undetermined" : "inside";
}

/* The values that round to `v` at `digits` significant digits (0: v alone). */
static void rounding(double v, int digits, double *lo, double *hi) {
  double half = digits > 0 ? 0.5 * pow(10, floor(log10(fabs(v))) - digits + 1) : 0;
  *lo = v - half, *hi = v + half;
}

/* A stated clock within the deck's hardware's range. */
static bool clock_in_range(const wf_deck *deck) {
  const wf_hw *hw = wf_hw_preset(wf_deck_str(deck, "wafer", "hardware"));
  return hw && wf_model_clock_in_range(hw, 1e9 * wf_deck_real(deck, "fidelity", "clock_ghz"));
}

/* The [fidelity] section's keys, each against the others: a case names a
 * workload or a kernel, a figure > 0, and a time base its clock agrees with. */
static int check_case(const wf_deck *deck, bool kernel, const wf_workload *wl, const char *name,
                      wf_status *st) {
  bool cycles = strcmp(wf_deck_str(deck, "fidelity", "time_base"), "cycles") == 0;
  double ghz = wf_deck_real(deck, "fidelity", "clock_ghz");
  if (!wf_deck_str(deck, "fidelity", "case")[0])
    return wf_deck_fail(deck, "fidelity", "case", st, "not a fidelity deck (no case name)");
  if (kernel && name[0])
    return wf_deck_fail(deck, "fidelity", "kernel", st, "a case is a workload or a kernel, not both");
  if (kernel && fidelity_kernel_is_bound(deck) &&
      strcmp(wf_deck_str(deck, "fidelity", "quantity"), "rate") != 0)
    return wf_deck_fail(deck, "fidelity", "quantity", st,
                        "a bandwidth ceiling is a rate: quantity = rate (bytes/s)");
  if (!kernel && !wl) return wf_deck_fail(deck, "fidelity", "workload", st, "no such workload");
  if (wf_deck_real(deck, "fidelity", "published") <= 0)
    return wf_deck_fail(deck, "fidelity", "published", st, "the published figure must be > 0");
  if (cycles && ghz <= 0)
    return wf_deck_fail(deck, "fidelity", "clock_ghz", st,
                        "time_base = cycles needs the clock the source converts at (> 0 GHz)");
  if (cycles && !clock_in_range(deck))
    return wf_deck_fail(deck, "fidelity", "clock_ghz", st,
                        "outside the hardware's clock range (docs/model.md): a source's clock "
                        "is one the hardware runs at");
  if (cycles && wl && wl->rank_roles)
    return wf_deck_fail(deck, "fidelity", "time_base", st,
                        "the %s projection has I/O seconds besides cycles: compare it in wall "
                        "clock",
                        name);
  if (!cycles && ghz > 0)
    return wf_deck_fail(deck, "fidelity", "clock_ghz", st,
                        "a wall-clock figure has no clock of its own: time_base = cycles");
  return WF_OK;
}

/* Run the deck's workload (a projection only) and compare. */
static int one_case(MPI_Comm comm, const options *o, const char *path, const wf_section **secs,
                    int nsecs, fidelity_row *row, wf_status *st) {
  options od = *o;
  od.deck = path;
  wf_deck deck;
  if (app_resolve_deck(comm, &od, secs, nsecs, &deck, st) != WF_OK) return st->code;
  const char *name = wf_deck_str(&deck, "fidelity", "workload");
  bool kernel = strcmp(wf_deck_str(&deck, "fidelity", "kernel"), "none") != 0;
  const wf_workload *wl = wf_find_workload(name);
  int rc = check_case(&deck, kernel, wl, name, st);
  wf_run run = {0};
  wf_json j;
  wf_json_init(&j);
  if (rc == WF_OK && kernel) rc = fidelity_kernel(&deck, &run.model, st);
  else if (rc == WF_OK) rc = app_run_workload(comm, wl, &deck, &od, false, &run, &j, st);
  if (rc == WF_OK && !run.model.valid)
    rc = wf_fail(st, WF_ERR_INPUT, "%s: the %s run made no wafer projection", path, name);
  if (rc == WF_OK) {
    snprintf(row->deck, sizeof row->deck, "%s", path);
    snprintf(row->name, sizeof row->name, "%s", wf_deck_str(&deck, "fidelity", "case"));
    snprintf(row->hardware, sizeof row->hardware, "%s", wf_deck_str(&deck, "wafer", "hardware"));
    snprintf(row->unit, sizeof row->unit, "%s", wf_deck_str(&deck, "fidelity", "display_unit"));
    snprintf(row->source, sizeof row->source, "%s", wf_deck_str(&deck, "fidelity", "source"));
    row->published = wf_deck_real(&deck, "fidelity", "published");
    row->scale = wf_deck_real(&deck, "fidelity", "display_scale");
    snprintf(row->narrow_by, sizeof row->narrow_by, "%s",
             wf_deck_str(&deck, "fidelity", "narrow_by"));
    /* A source that converts its cycles at a clock it states is compared in
     * cycles: the model's seconds at that clock, not over the clock range. */
    row->source_hz = 1e9 * wf_deck_real(&deck, "fidelity", "clock_ghz");
    wf_range seconds = run.model.seconds;
    if (row->source_hz > 0)
      seconds = wf_model_at_clock(wf_hw_preset(row->hardware), seconds, row->source_hz);
    row->model = model_quantity(seconds, run.model.flops, wf_deck_str(&deck, "fidelity", "quantity"));
    row->ratio = wf_range_scale(row->model, 1.0 / row->published);
    row->bound = kernel && fidelity_kernel_is_bound(&deck);
    rounding(row->published, (int)wf_deck_int(&deck, "fidelity", "published_digits"),
             &row->published_lo, &row->published_hi);
    double top = fmax(row->model.lo, row->model.hi), bottom = fmin(row->model.lo, row->model.hi);
    row->inside = row->bound ? top >= row->published_lo
                             : bottom <= row->published_hi && row->published_lo <= top;
    row->verdict = verdict(row);
    row->fits_pes = run.model.pes_needed <= run.model.pes_offered;
    row->fits_sram = run.model.bytes_per_pe <= run.model.sram_for_data;
    row->bytes_per_pe = run.model.bytes_per_pe;
    row->pes_needed = run.model.pes_needed, row->pes_offered = run.model.pes_offered;
  }
  wf_json_free(&j);
  wf_deck_free(&deck);
  return rc;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The decks: one file, or every *.ini of a directory in name order. */
static int list_decks(const char *where, char ***paths, int *n, wf_status *st) {
  *paths = NULL, *n = 0;
  DIR *dir = opendir(where);
  if (!dir) {
    FILE *f = fopen(where, "r");
    if (!f) return wf_fail(st, WF_ERR_INPUT, "%s: no such deck or directory", where);
    fclose(f);
    *paths = malloc(sizeof **paths);
    if (!*paths || !((*paths)[0] = strdup(where))) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
    *n = 1;
    return WF_OK;
  }
  struct dirent *e;
  int cap = 0;
  bool oom = false;
  while (!oom && (e = readdir(dir))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      char **grown = realloc(*paths, (size_t)cap * sizeof *grown);
      if (!grown) {
        oom = true;
        break;
      }
      *paths = grown;
    }
    size_t sz = strlen(where) + len + 2;
    char *p = malloc(sz);
    if (!p) oom = true;
    else snprintf(p, sz, "%s/%s", where, e->d_name), (*paths)[(*n)++] = p;
  }
  closedir(dir);
  if (oom) return wf_fail(st, WF_ERR_RUNTIME, "out of memory listing %s", where);
  if (*n == 0) return wf_fail(st, WF_ERR_INPUT, "%s: no *.ini decks", where);
  qsort(*paths, (size_t)*n, sizeof **paths, by_name);
  return WF_OK;
}

/* Three significant digits, thousands grouped: 408,000; 1.05; 0.955 (from
 * 1e15 on, as %g: 1.23e+17). */
static const char *sig3(double v, char *buf, size_t len) {
  if (!(fabs(v) >= 1000) || fabs(v) >= 1e15) {
    snprintf(buf, len, "%.3g", v);
    return buf;
  }
  double mag = pow(10, floor(log10(fabs(v))) - 2);
  long long r = llround(v / mag) * llround(mag);
  char digits[32];
  snprintf(digits, sizeof digits, "%lld", r < 0 ? -r : r);
  size_t nd = strlen(digits), o = 0;
  if (r < 0 && o + 1 < len) buf[o++] = '-';
  for (size_t i = 0; i < nd && o + 2 < len; i++) {
    if (i && (nd - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
  return buf;
}

/* "cycles at 1.1 GHz" or "wall clock": the row's time base. */
static const char *time_base(const fidelity_row *r, char *buf, size_t len) {
  if (r->source_hz > 0) snprintf(buf, len, "cycles at %.3g GHz", r->source_hz * 1e-9);
  else snprintf(buf, len, "wall clock");
  return buf;
}

static const char *fits(const fidelity_row *r) {
  return r->fits_pes && r->fits_sram ? "yes"
         : !r->fits_pes && !r->fits_sram ? "no (PEs, SRAM)"
         : !r->fits_pes                  ? "no (PEs)"
                                         : "no (SRAM)";
}

/* Under the table: what would narrow each undetermined row. */
static void print_undetermined(const fidelity_row *rows, int n, bool markdown) {
  bool first = true;
  for (int i = 0; i < n; i++) {
    const fidelity_row *r = &rows[i];
    if (strcmp(r->verdict, "undetermined") != 0) continue;
    if (markdown && first) printf("\n");
    first = false;
    printf("%s%s: the published figure lies inside a %.2fx range, too wide to decide%s%s\n",
           markdown ? "* " : "undetermined: ", r->name, r->ratio.hi / r->ratio.lo,
           r->narrow_by[0] ? "; it would narrow with " : "", r->narrow_by);
  }
}

static void print_table(const fidelity_row *rows, int n, bool markdown) {
  char a[32], b[32], c[32], tb[32];
  if (markdown) {
    printf("| case | hardware | time base | published | model (low - high) | model / published | "
           "width | verdict | fits | source |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
      const fidelity_row *r = &rows[i];
      printf("| %s | %s | %s | %s %s | %s - %s %s%s | **%.2f - %.2f** | %.2fx | %s%s | %s | %s |\n",
             r->name, r->hardware, time_base(r, tb, sizeof tb),
             sig3(r->published * r->scale, a, sizeof a), r->unit,
             sig3(r->model.lo * r->scale, b, sizeof b), sig3(r->model.hi * r->scale, c, sizeof c),
             r->unit, r->bound ? " (bound)" : "", r->ratio.lo, r->ratio.hi, r->ratio.hi / r->ratio.lo,
             r->verdict, r->bound && r->inside ? " (below the bound)" : "", fits(r), r->source);
    }
    print_undetermined(rows, n, true);
    return;
  }
  printf("%-20s %-5s %-18s %14s %21s %13s %6s %-12s  %s\n", "case", "hw", "time base",
         "published", "model (low - high)", "model/publ.", "width", "verdict", "deck");
  for (int i = 0; i < n; i++) {
    const fidelity_row *r = &rows[i];
    char pub[40], mod[60], rat[30], wid[16];
    snprintf(pub, sizeof pub, "%s %s", sig3(r->published * r->scale, a, sizeof a), r->unit);
    snprintf(mod, sizeof mod, "%s - %s", sig3(r->model.lo * r->scale, b, sizeof b),
             sig3(r->model.hi * r->scale, c, sizeof c));
    snprintf(rat, sizeof rat, "%.2f - %.2f", r->ratio.lo, r->ratio.hi);
    snprintf(wid, sizeof wid, "%.2fx", r->ratio.hi / r->ratio.lo);
    const char *base = strrchr(r->deck, '/');
    printf("%-20s %-5s %-18s %14s %21s %13s %6s %-12s  %s%s%s%s\n", r->name, r->hardware,
           time_base(r, tb, sizeof tb), pub, mod, rat, wid, r->verdict, base ? base + 1 : r->deck,
           r->bound ? " (the model's ceiling: inside means at or below it)" : "",
           r->fits_pes ? "" : " (needs more PEs than the wafer offers)",
           r->fits_sram ? "" : " (data exceed a PE's SRAM)");
  }
  print_undetermined(rows, n, false);
}

/* The cases as a JSON array, each an object built (and escaped) by wf_json. */
static void json_rows(const fidelity_row *rows, int n, wf_json *j) {
  wf_strbuf b = {0};
  wf_strbuf_printf(&b, "[");
  for (int i = 0; i < n; i++) {
    const fidelity_row *r = &rows[i];
    wf_json c;
    wf_json_init(&c);
    wf_json_str(&c, "case", r->name);
    wf_json_str(&c, "hardware", r->hardware);
    wf_json_num(&c, "published", r->published);
    wf_json_range(&c, "published_rounding", r->published_lo, r->published_hi);
    wf_json_range(&c, "model", r->model.lo, r->model.hi);
    wf_json_range(&c, "ratio", r->ratio.lo, r->ratio.hi);
    wf_json_str(&c, "time_base", r->source_hz > 0 ? "cycles" : "wall");
    wf_json_num(&c, "clock_hz", r->source_hz);
    wf_json_num(&c, "width", r->ratio.hi / r->ratio.lo);
    wf_json_str(&c, "verdict", r->verdict);
    wf_json_bool(&c, "inside", r->inside);
    wf_json_bool(&c, "bound", r->bound);
    wf_json_bool(&c, "fits", r->fits_pes && r->fits_sram);
    wf_json_num(&c, "bytes_per_pe", r->bytes_per_pe);
    wf_json_num(&c, "pes_needed", r->pes_needed);
    wf_json_num(&c, "pes_offered", r->pes_offered);
    wf_strbuf_printf(&b, "%s%s", i ? "," : "", wf_json_finish(&c));
    wf_json_free(&c);
  }
  wf_strbuf_printf(&b, "]");
  wf_json_raw(j, "cases", b.oom ? "null" : b.s);
  wf_strbuf_free(&b);
}

int app_fidelity(MPI_Comm comm, int rank, const options *o, const wf_section **secs, int nsecs) {
  wf_status st;
  wf_status_clear(&st);
  /* The published cases: a deck or folder given, else the data folder's. */
  char fidelity_dir[4096];
  const char *where = o->deck ? o->deck : fidelity_dir;
  char **paths = NULL;
  int n = 0;
  int rc = o->deck ? WF_OK : wf_data_path("inputs/fidelity", fidelity_dir, sizeof fidelity_dir, &st);
  if (rc == WF_OK) rc = list_decks(where, &paths, &n, &st);
  /* Every rank looked for itself; the cases are collective, so all must
   * have found the same number (a folder one node lacks is an error on all). */
  int range[2] = {-n, n};
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, comm);
  if (rc == WF_OK && -range[0] != range[1])
    rc = wf_fail(&st, WF_ERR_INPUT, "the ranks found different fidelity decks in %s (%d to %d)",
                 where, -range[0], range[1]);
  wf_status_agree(comm, &st);
  rc = st.code;
  fidelity_row *rows = rc == WF_OK ? calloc((size_t)n, sizeof *rows) : NULL;
  if (rc == WF_OK && !rows) rc = wf_fail(&st, WF_ERR_RUNTIME, "out of memory");
  for (int i = 0; rc == WF_OK && i < n; i++)
    rc = one_case(comm, o, paths[i], secs, nsecs, &rows[i], &st);
  if (rc != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
  } else {
    if (rank == 0 && !o->quiet) print_table(rows, n, o->markdown);
    wf_json j;
    wf_json_init(&j);
    wf_json_str(&j, "workload", "fidelity");
    json_rows(rows, n, &j);
    /* The published figures are the references. A case whose figure lies
     * outside the model's range makes the status "outside"; the command
     * still exits 0: it reports, and docs/model.md explains each miss (the
     * tests pin the figures). */
    int inside = 0, undetermined = 0;
    for (int i = 0; i < n; i++) {
      inside += strcmp(rows[i].verdict, "inside") == 0;
      undetermined += strcmp(rows[i].verdict, "undetermined") == 0;
    }
    wf_json_int(&j, "inside", inside);
    wf_json_int(&j, "undetermined", undetermined);
    wf_json_int(&j, "count", n);
    wf_json_str(&j, "status", inside == n ? "ok" : "outside");
    if (rank == 0 && !o->quiet && !o->markdown)
      printf("%d of %d published figures inside the model's range, %d outside, %d undetermined "
             "(a range over %.1fx)\n",
             inside, n, n - inside - undetermined, undetermined, FIDELITY_MAX_WIDTH);
    if (!o->markdown) app_emit_summary(rank, o, wf_json_finish(&j), &st);
    wf_json_free(&j);
  }
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
  free(rows);
  return rc ? rc : st.code;
}
