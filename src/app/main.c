/* The `wafer` command: parses the command line, resolves the deck, builds
 * the wafer and runs a workload (or all of them: `wafer demo`). The only
 * place that turns errors into exit statuses: 0 ok, 1 run failed (a check or
 * a library call), 2 bad input. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "fidelity.h"
#include "registry.h"
#include "report.h"
#include "version.h"
#include "wf_deck.h"
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
  wf_deck_print_reference(wl->sections, wl->nsections, stdout);
  const wf_section *common[2];
  wf_all_sections(common, 2); /* [wafer], [output] */
  wf_deck_print_reference(common, 2, stdout);
}

int app_parse_args(int argc, char **argv, options *o, wf_status *st) {
  memset(o, 0, sizeof *o);
  o->sets = calloc((size_t)argc + 1, sizeof *o->sets); /* never more than the arguments */
  if (!o->sets) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the arguments");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      o->help = true;
    } else if (strcmp(a, "--version") == 0) {
      o->version = true;
    } else if (strcmp(a, "--markdown") == 0) {
      o->markdown = true;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      o->quiet = true;
    } else if (strcmp(a, "--set") == 0 || strcmp(a, "--json") == 0) {
      if (i + 1 >= argc) return wf_fail(st, WF_ERR_INPUT, "%s needs a value", a);
      if (a[2] == 'j') o->json = argv[++i];
      else o->sets[o->nsets++] = argv[++i];
    } else if (strncmp(a, "--set=", 6) == 0) {
      o->sets[o->nsets++] = a + 6;
    } else if (strncmp(a, "--json=", 7) == 0) {
      o->json = a + 7;
    } else if (a[0] == '-') {
      return wf_fail(st, WF_ERR_INPUT, "unknown option '%s' (see wafer --help)", a);
    } else if (!o->command) {
      o->command = a;
    } else if (!o->deck) {
      o->deck = a;
    } else {
      return wf_fail(st, WF_ERR_INPUT, "unexpected argument '%s' (one deck per run)", a);
    }
  }
  return WF_OK;
}

/* Defaults, then the deck file (read on rank 0, broadcast), then --set. */
int app_resolve_deck(MPI_Comm comm, const options *o, const wf_section **secs, int nsecs,
                        wf_deck *deck, wf_status *st) {
  if (wf_deck_create(deck, secs, nsecs, st) != WF_OK) return st->code;
  if (o->deck) {
    char *text = NULL;
    if (wf_read_text_bcast(comm, o->deck, "deck", &text, st) != WF_OK ||
        wf_deck_parse_text(deck, text, o->deck, st) != WF_OK) {
      free(text);
      return st->code;
    }
    free(text);
  }
  for (int i = 0; i < o->nsets; i++)
    if (wf_deck_set(deck, o->sets[i], st) != WF_OK) return st->code;
  return WF_OK;
}

static int exit_code(const wf_status *st, const wf_run *run) {
  if (st->code != WF_OK) return st->code;
  return run->checks_failed ? WF_ERR_RUNTIME : 0;
}

/* The ranks' roles: all play the wafer unless the deck gives MemoryX or
 * SwarmX ranks, which only a workload that uses them accepts. */
static int split_roles(MPI_Comm comm, const wf_workload *wl, const wf_deck *deck, wf_roles *roles,
                       wf_status *st) {
  int mx = (int)wf_deck_int(deck, "wafer", "memoryx_ranks");
  int sx = (int)wf_deck_int(deck, "wafer", "swarmx_ranks");
  const char *key = mx ? "memoryx_ranks" : "swarmx_ranks";
  if ((mx || sx) && !wl->rank_roles)
    return wf_deck_fail(deck, "wafer", key, st,
                        "the %s workload gives every rank a block of the PE grid: MemoryX and "
                        "SwarmX ranks are for weight streaming",
                        wl->name);
  if (wf_roles_split(roles, comm, mx, sx, st) != WF_OK) return wf_deck_blame(deck, "wafer", key, st);
  return WF_OK;
}

/* A run that could not start: its summary says why. */
static int refused(wf_json *j, const wf_status *st) {
  wf_json_str(j, "status", "error");
  wf_json_str(j, "error", st->msg);
  return st->code;
}

/* A run that failed after a rank caught SIGINT or SIGTERM failed because of
 * it (a helper such as LAMMPS got the signal too): say so. Collective. */
static void blame_signal(MPI_Comm comm, wf_status *st) {
  int sig = wf_signal_caught();
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, comm);
  if (!sig || st->code == WF_OK || wf_interrupted(st->code)) return;
  char was[sizeof st->msg];
  snprintf(was, sizeof was, "(%s)", st->msg);
  wf_signal_fail(st, sig, was);
}

/* Run one workload; its JSON summary is returned in `j` (on every rank). */
int app_run_workload(MPI_Comm comm, const wf_workload *wl, const wf_deck *deck, bool verbose,
                     wf_run *run, wf_json *j, wf_status *st) {
  wf_wafer wafer;
  wf_roles roles;
  memset(run, 0, sizeof *run);
  wf_json_init(j);
  wf_json_str(j, "workload", wl->name);
  wf_json_str(j, "version", wf_version());
  wf_status_clear(st);
  /* Files first: an output that cannot be written, or that would overwrite
   * an input or another output, is found before any work starts. */
  int rank;
  MPI_Comm_rank(comm, &rank);
  const char *names[MAX_SECTIONS] = {"wafer", "output"};
  int nnames = 2;
  for (int s = 0; s < wl->nsections && nnames < MAX_SECTIONS; s++) names[nnames++] = wl->sections[s]->name;
  if (rank == 0) wf_deck_check_files(deck, names, nnames, st);
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return refused(j, st);
  if (split_roles(comm, wl, deck, &roles, st) != WF_OK) return refused(j, st);
  /* The PE grid lives on the wafer ranks' communicator. */
  bool on_wafer = roles.role == WF_ROLE_WAFER;
  int made = on_wafer ? wf_wafer_create(&wafer, roles.role_comm, deck, st) : WF_ERR_INPUT;
  wf_status_agree(comm, st);
  if (st->code != WF_OK) {
    if (made == WF_OK) wf_wafer_free(&wafer); /* it failed elsewhere */
    wf_roles_free(&roles);
    return refused(j, st);
  }
  if (verbose) {
    printf("== wafer %s: %s\n", wf_version(), wl->name);
    app_describe_wafer(&wafer, stdout);
    fflush(stdout);
  }
  run->workload = wl->name;
  run->version = wf_version();
  run->world = comm;
  run->roles = &roles;
  run->comm = on_wafer ? wafer.dc.comm : roles.role_comm;
  MPI_Comm_rank(run->comm, &run->rank);
  MPI_Comm_size(run->comm, &run->nranks);
  run->deck = deck;
  run->wafer = on_wafer ? &wafer : NULL;
  if (on_wafer) {
    snprintf(run->hardware, sizeof run->hardware, "%s", wafer.hw.name);
    run->pe_grid[0] = wafer.dc.pe_nx, run->pe_grid[1] = wafer.dc.pe_ny;
    run->rank_grid[0] = wafer.dc.px, run->rank_grid[1] = wafer.dc.py;
  }
  run->verbose = verbose;
  run->summary = j;
  if (on_wafer) app_json_wafer(&wafer, j);

  double t0 = MPI_Wtime();
  wl->run(run, st);
  if (st->code == WF_OK && wf_deck_bug(deck)[0]) wf_fail(st, WF_ERR_RUNTIME, "%s", wf_deck_bug(deck));
  double wall = MPI_Wtime() - t0;
  wf_status_agree(comm, st);
  blame_signal(comm, st);
  MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, comm);

  if (on_wafer) app_json_fabric(&wafer, j);
  wf_json_num(j, "seconds", run->seconds);
  wf_json_range(j, "wafer_seconds", run->wafer_seconds.lo, run->wafer_seconds.hi);
  wf_json_num(j, "wall_seconds", wall);
  wf_json_begin(j, "checks");
  wf_json_int(j, "passed", run->checks_passed);
  wf_json_int(j, "failed", run->checks_failed);
  wf_json_end(j);
  wf_json_str(j, "status", wf_run_status(run, st->code));
  if (st->code) wf_json_str(j, "error", st->msg);
  if (on_wafer) wf_wafer_free(&wafer);
  wf_roles_free(&roles);
  run->roles = NULL;
  return exit_code(st, run);
}

/* The summary is stdout's last line, and --json FILE on request. */
void app_emit_summary(int rank, const options *o, const char *json, wf_status *st) {
  if (rank != 0) return;
  printf("%s\n", json);
  fflush(stdout);
  if (o->json) {
    char *text = malloc(strlen(json) + 2);
    wf_status wst;
    if (text) sprintf(text, "%s\n", json);
    else wf_fail(&wst, WF_ERR_RUNTIME, "out of memory for the JSON summary");
    if (!text || wf_write_text_atomic(o->json, text, &wst) != WF_OK) {
      fprintf(stderr, "wafer: error: %s\n", wst.msg);
      if (st->code == WF_OK) *st = wst;
    }
    free(text);
  }
}

static int cmd_workload(MPI_Comm comm, int rank, const options *o, const wf_workload *wl,
                        const wf_section **secs, int nsecs) {
  wf_status st;
  wf_status_clear(&st);
  wf_deck deck;
  if (app_resolve_deck(comm, o, secs, nsecs, &deck, &st) != WF_OK) {
    if (rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
    return st.code;
  }
  wf_run run;
  wf_json j;
  int rc = app_run_workload(comm, wl, &deck, rank == 0 && !o->quiet, &run, &j, &st);
  if (st.code && rank == 0) fprintf(stderr, "wafer: error: %s\n", st.msg);
  if (st.code != WF_ERR_INPUT) app_emit_summary(rank, o, wf_json_finish(&j), &st);
  wf_json_free(&j);
  wf_deck_free(&deck);
  return rc ? rc : st.code;
}

static int cmd_demo(MPI_Comm comm, int rank, const options *o, const wf_section **secs,
                    int nsecs) {
  wf_status st;
  wf_status_clear(&st);
  bool verbose = rank == 0 && !o->quiet;
  wf_json all;
  wf_json_init(&all);
  wf_json_str(&all, "workload", "demo");
  wf_json_str(&all, "version", wf_version());
  char runs[1 << 16] = "[";
  wf_run rows[64];
  int codes[64];
  int worst = 0, passed = 0, failed = 0, nrun = wf_nworkloads;
  for (int w = 0; w < wf_nworkloads; w++) {
    wf_deck deck;
    wf_json j;
    int rc = app_resolve_deck(comm, o, secs, nsecs, &deck, &st);
    if (rc == WF_OK) rc = app_run_workload(comm, wf_workloads[w], &deck, verbose, &rows[w], &j, &st);
    else memset(&rows[w], 0, sizeof rows[w]), wf_json_init(&j);
    if (st.code && rank == 0) fprintf(stderr, "wafer: error: %s: %s\n", wf_workloads[w]->name, st.msg);
    codes[w] = st.code;
    if (rc > worst) worst = rc;
    passed += rows[w].checks_passed;
    failed += rows[w].checks_failed;
    size_t used = strlen(runs);
    snprintf(runs + used, sizeof runs - used, "%s%s", w ? "," : "", wf_json_finish(&j));
    wf_json_free(&j);
    wf_deck_free(&deck);
    if (verbose) printf("\n");
    if (wf_interrupted(codes[w])) {
      nrun = w + 1;
      break;
    }
  }
  strncat(runs, "]", sizeof runs - strlen(runs) - 1);
  if (verbose) {
    printf("== demo summary (%d of %d workloads)\n", nrun, wf_nworkloads);
    printf("%-10s %-9s %12s %21s %8s  %s\n", "workload", "status", "measured s",
           "wafer model s", "checks", "headline");
    for (int w = 0; w < nrun; w++)
      printf("%-10s %-9s %12.4g %10.3g-%-10.3g %4d/%-3d  %s\n", wf_workloads[w]->name,
             wf_run_status(&rows[w], codes[w]), rows[w].seconds, rows[w].wafer_seconds.lo,
             rows[w].wafer_seconds.hi, rows[w].checks_passed,
             rows[w].checks_passed + rows[w].checks_failed, rows[w].headline);
  }
  int nranks;
  MPI_Comm_size(comm, &nranks);
  wf_json_int(&all, "ranks", nranks);
  wf_json_raw(&all, "runs", runs);
  wf_json_begin(&all, "checks");
  wf_json_int(&all, "passed", passed);
  wf_json_int(&all, "failed", failed);
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

void app_options_free(options *o) {
  free(o->sets);
  o->sets = NULL;
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
    if (rank == 0) wf_deck_print_reference(secs, nsecs, stdout);
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
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = dispatch(MPI_COMM_WORLD, rank, argc, argv);
  fflush(stdout);
  wf_finalize_workloads();
  wf_signal_restore();
  MPI_Finalize();
  return rc;
}
