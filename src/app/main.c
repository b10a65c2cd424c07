/* The `wafer` command: parses the command line, resolves the deck, builds
 * the wafer and runs a workload (or all of them: `wafer demo`; the parts
 * shared with `wafer fidelity` are in app.c). The only place that turns
 * errors into exit statuses: 0 ok, 1 run failed (a check or a library
 * call), 2 bad input, 128 + N ended by signal N. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app.h"
#include "fidelity.h"
#include "registry.h"
#include "report.h"
#include "sections.h"
#include "version.h"
#include "wf_deck.h"
#include "wf_files.h"
#include "wf_io.h"
#include "wf_json.h"
#include "wf_roles.h"
#include "wf_signal.h"
#include "wf_wafer.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: wafer WORKLOAD [DECK] [--set section.key=value ...] [--json FILE] [--quiet]\n"
          "       wafer demo [--set ...] [--json FILE] [--quiet]\n"
          "       wafer info [DECK] [--set ...]\n"
          "       wafer fidelity [DIR | DECK] [--markdown]   the model against published wafer "
          "results\n"
          "       wafer keys        the deck reference (Markdown)\n"
          "       wafer --help | --version\n\n"
          "Runs wafer-scale workloads on an MPI cluster: each rank plays a block of the\n"
          "wafer's processing elements (PEs), halo exchange is the wafer's fabric, every\n"
          "result is checked, and every run projects its time on a real wafer.\n\n"
          "workloads:\n");
  for (int i = 0; i < wf_nworkloads; i++)
    fprintf(out, "  %-10s %s\n", wf_workloads[i]->name, wf_workloads[i]->help);
  fprintf(out, "  %-10s %s\n", "demo", "every workload on its embedded default deck, one table");
  fprintf(out,
          "\nDECK is an INI file; every key has a default (see `wafer info`, `wafer keys`).\n"
          "The last line of stdout is a one-line JSON summary; --json FILE writes it too.\n"
          "Launch with mpiexec -n N or srun.\n");
}

/* `wafer WORKLOAD --help`: its keys, then the keys every run shares. */
static void workload_help(const wf_workload *wl) {
  printf("wafer %s: %s\n\nusage: wafer %s [DECK] [--set section.key=value ...] [--json FILE] "
         "[--quiet]\n",
         wl->name, wl->help, wl->name);
  wf_key_print_reference(wl->sections, wl->nsections, stdout);
  const wf_section *common[3];
  wf_all_sections(common, 3); /* [wafer], [output], [energy] */
  wf_key_print_reference(common, 3, stdout);
}

/* The deck and --json FILE checked before any work, as the deck's own
 * files are (each run checks them again with those). */
static int check_command_files(MPI_Comm comm, int rank, const options *o, wf_status *st) {
  wf_status_clear(st);
  if (rank == 0) {
    wf_files files = {0};
    if (app_claim_files(o, &files, st) == WF_OK) wf_files_check(&files, st);
    wf_files_free(&files);
  }
  wf_status_bcast(comm, st);
  return st->code;
}

static int cmd_workload(MPI_Comm comm, int rank, const options *o, const wf_workload *wl,
                        const wf_section **secs, int nsecs) {
  wf_status st;
  wf_status_clear(&st);
  wf_deck deck;
  if (check_command_files(comm, rank, o, &st) != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
    return st.code;
  }
  if (app_resolve_deck(comm, o, secs, nsecs, &deck, &st) != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
    return st.code;
  }
  wf_run run;
  wf_json j;
  int rc = app_run_workload(comm, wl, &deck, o, rank == 0 && !o->quiet, &run, &j, &st);
  if (st.code && rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
  if (st.code != WF_ERR_INPUT) app_emit_summary(rank, o, wf_json_finish(&j), &st);
  wf_json_free(&j);
  wf_deck_free(&deck);
  return rc ? rc : st.code;
}

/* The deck of a demo run: a variant's assignments go before the user's
 * own --set list, which has the last word. */
static int resolve_variant(MPI_Comm comm, const options *o, const char *const *variant,
                           const wf_section **secs, int nsecs, wf_deck *deck, wf_status *st) {
  int n = 0;
  while (variant && variant[n]) n++;
  if (n == 0) return app_resolve_deck(comm, o, secs, nsecs, deck, st);
  const char **sets = malloc((size_t)(n + o->nsets) * sizeof *sets);
  if (!sets) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the demo's decks");
  for (int i = 0; i < n; i++) sets[i] = variant[i];
  for (int i = 0; i < o->nsets; i++) sets[n + i] = o->sets[i];
  options with = *o;
  with.sets = sets, with.nsets = n + o->nsets;
  int rc = app_resolve_deck(comm, &with, secs, nsecs, deck, st);
  free(sets);
  return rc;
}

/* `text` appended to the malloc'ed string *s (of length *len); ends the job
 * when out of memory, as any bookkeeping (wf_alloc_small). */
static void append(char **s, size_t *len, const char *text) {
  size_t n = strlen(text);
  char *more = realloc(*s, *len + n + 1);
  if (!more) {
    fprintf(stderr, "wafer: error: out of memory joining the demo's results: ending the job\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memcpy(more + *len, text, n + 1);
  *s = more, *len += n;
}

static int cmd_demo(MPI_Comm comm, int rank, const options *o, const wf_section **secs,
                    int nsecs) {
  wf_status st;
  wf_status_clear(&st);
  if (check_command_files(comm, rank, o, &st) != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
    return st.code;
  }
  bool verbose = rank == 0 && !o->quiet;
  wf_json all;
  wf_json_init(&all);
  wf_json_str(&all, "workload", "demo");
  wf_json_str(&all, "version", wf_version());
  char *runs = NULL; /* the runs' JSON summaries, joined: as long as they are */
  size_t runs_len = 0;
  append(&runs, &runs_len, "[");
  wf_run rows[64];
  int codes[64];
  /* Every workload its embedded deck can run, and its variant if it has one. */
  const wf_workload *list[64];
  const char *const *variant[64];
  int nlist = 0;
  for (int w = 0; w < wf_nworkloads && nlist < 63; w++) {
    if (wf_workloads[w]->not_in_demo) continue;
    variant[nlist] = NULL, list[nlist++] = wf_workloads[w];
    if (wf_workloads[w]->demo_variant)
      variant[nlist] = wf_workloads[w]->demo_variant, list[nlist++] = wf_workloads[w];
  }
  int worst = 0, passed = 0, failed = 0, nrun = nlist;
  for (int w = 0; w < nlist; w++) {
    wf_deck deck;
    wf_json j;
    int rc = resolve_variant(comm, o, variant[w], secs, nsecs, &deck, &st);
    if (rc == WF_OK) rc = app_run_workload(comm, list[w], &deck, o, verbose, &rows[w], &j, &st);
    else memset(&rows[w], 0, sizeof rows[w]), wf_json_init(&j);
    if (st.code && rank == 0) fprintf(stderr, "wafer: error: %s: %s\n", list[w]->name, st.msg);
    codes[w] = st.code;
    if (rc > worst) worst = rc;
    passed += rows[w].checks_passed;
    failed += rows[w].checks_failed;
    if (w) append(&runs, &runs_len, ",");
    append(&runs, &runs_len, wf_json_finish(&j));
    wf_json_free(&j);
    wf_deck_free(&deck);
    if (verbose) printf("\n");
    if (wf_interrupted(codes[w])) {
      nrun = w + 1;
      break;
    }
  }
  append(&runs, &runs_len, "]");
  if (verbose) {
    printf("== demo summary (%d of %d workloads)\n", nrun, nlist);
    printf("%-10s %-9s %12s %21s %8s  %s\n", "workload", "status", "measured s",
           "wafer model s", "checks", "headline");
    for (int w = 0; w < nrun; w++)
      printf("%-10s %-9s %12.4g %10.3g-%-10.3g %4d/%-3d  %s\n", list[w]->name,
             wf_run_status(&rows[w], codes[w]), rows[w].seconds, rows[w].wafer_seconds.lo,
             rows[w].wafer_seconds.hi, rows[w].checks_passed,
             rows[w].checks_passed + rows[w].checks_failed, rows[w].headline);
  }
  /* Checks whose reference this build or machine lacks, named once more. */
  char unavailable[1024] = "";
  for (int w = 0; w < nrun; w++) {
    size_t used = strlen(unavailable);
    if (rows[w].unavailable[0])
      snprintf(unavailable + used, sizeof unavailable - used, "%s%s: %s", used ? "; " : "",
               list[w]->name, rows[w].unavailable);
  }
  if (verbose && unavailable[0])
    printf("not checked, reference unavailable: %s (wafer --version says how to add them)\n",
           unavailable);
  int nranks;
  MPI_Comm_size(comm, &nranks);
  wf_json_int(&all, "ranks", nranks);
  wf_json_raw(&all, "runs", runs);
  free(runs);
  wf_json_begin(&all, "checks");
  wf_json_int(&all, "passed", passed);
  wf_json_int(&all, "failed", failed);
  if (unavailable[0]) wf_json_str(&all, "unavailable", unavailable);
  wf_json_end(&all);
  bool any_error = false;
  for (int w = 0; w < nrun; w++) any_error |= codes[w] != WF_OK;
  const char *status = any_error ? "error" : failed ? "failed" : passed ? "ok" : "unchecked";
  if (wf_interrupted(codes[nrun - 1])) status = "interrupted";
  wf_json_str(&all, "status", status);
  wf_status_clear(&st);
  app_emit_summary(rank, o, wf_json_finish(&all), &st);
  wf_json_free(&all);
  return worst ? worst : st.code;
}

static int cmd_info(MPI_Comm comm, int rank, const options *o, const wf_section **secs,
                    int nsecs) {
  wf_status st;
  wf_deck deck;
  wf_status_clear(&st);
  if (app_resolve_deck(comm, o, secs, nsecs, &deck, &st) != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
    return st.code;
  }
  if (rank == 0) wf_deck_print_info(&deck, stdout);
  wf_deck_free(&deck);
  return 0;
}


/* One command of the parsed command line. */
static int run_command(MPI_Comm comm, int rank, options o) {
  if (o.version) {
    if (rank == 0) wf_print_versions(stdout);
    return 0;
  }
  const wf_workload *wl = o.command ? wf_find_workload(o.command) : NULL;
  if (o.help && wl) {
    if (rank == 0) workload_help(wl);
    return 0;
  }
  if (o.help || !o.command) {
    if (rank == 0) usage(o.help ? stdout : stderr);
    return o.help ? 0 : WF_ERR_INPUT;
  }
  const wf_section *secs[MAX_SECTIONS];
  int nsecs = wf_all_sections(secs, MAX_SECTIONS);
  if (strcmp(o.command, "info") == 0) return cmd_info(comm, rank, &o, secs, nsecs);
  if (strcmp(o.command, "keys") == 0) {
    if (rank == 0) wf_key_print_reference(secs, nsecs, stdout);
    return 0;
  }
  if (strcmp(o.command, "demo") == 0) return cmd_demo(comm, rank, &o, secs, nsecs);
  if (strcmp(o.command, "fidelity") == 0) return app_fidelity(comm, rank, &o, secs, nsecs);
  if (o.markdown) {
    if (rank == 0) fprintf(stderr, "wafer: error: --markdown is an option of `wafer fidelity`\n");
    return WF_ERR_INPUT;
  }
  if (!wl) {
    if (rank == 0)
      fprintf(stderr, "wafer: error: unknown workload or command '%s' (see wafer --help)\n",
              o.command);
    return WF_ERR_INPUT;
  }
  return cmd_workload(comm, rank, &o, wl, secs, nsecs);
}

static int dispatch(MPI_Comm comm, int rank, int argc, char **argv) {
  options o;
  wf_status st;
  wf_status_clear(&st);
  int rc = app_parse_args(argc, argv, &o, &st);
  if (rc != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
  } else {
    rc = run_command(comm, rank, o);
  }
  app_options_free(&o);
  return rc;
}

int main(int argc, char **argv) {
  wf_mpi_io_prefer_romio();
  MPI_Init(&argc, &argv);
  wf_signal_install();
  wf_signal_notice_open(MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = dispatch(MPI_COMM_WORLD, rank, argc, argv);
  fflush(stdout);
  wf_finalize_workloads();
  wf_signal_notice_close();
  wf_signal_restore();
  MPI_Finalize();
  return rc;
}
