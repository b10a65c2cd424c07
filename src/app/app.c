/* The parts of the `wafer` command that `wafer fidelity` and the tests share:
 * options, deck resolution, one workload run with its JSON summary. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "app.h"
#include "report.h"
#include "version.h"
#include "energy.h"
#include "wf_binding.h"
#include "wf_checkpoint.h"
#include "wf_data.h"
#include "wf_deck.h"
#include "wf_files.h"
#include "wf_io.h"
#include "wf_json.h"
#include "wf_roles.h"
#include "wf_signal.h"
#include "wf_wafer.h"

/* The --json file, given once: a second one is refused, not silently the one that wins. */
static int take_json(options *o, const char *path, wf_status *st) {
  if (o->json)
    return wf_fail(st, WF_ERR_INPUT, "--json given twice ('%s' and '%s'): one summary file",
                   o->json, path);
  o->json = path;
  return WF_OK;
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
      const char *value = argv[++i];
      if (a[2] != 'j') o->sets[o->nsets++] = value;
      else if (take_json(o, value, st) != WF_OK) return st->code;
    } else if (strncmp(a, "--set=", 6) == 0) {
      o->sets[o->nsets++] = a + 6;
    } else if (strncmp(a, "--json=", 7) == 0) {
      if (take_json(o, a + 7, st) != WF_OK) return st->code;
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
    if (wf_read_text_bcast(comm, o->deck, "deck", WF_MAX_DECK_BYTES, &text, st) != WF_OK ||
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

/* A plot asked for (an output key whose name ends in `plot`: plot,
 * gather_plot, mdd_plot) is a PNG file and needs a Python with matplotlib:
 * a name without .png, or no such Python, is bad input, found before any
 * work. */
static int check_plots(const wf_deck *deck, const wf_workload *wl, wf_status *st) {
  char why[512];
  for (int s = 0; s < wl->nsections; s++) {
    const wf_section *sec = wl->sections[s];
    for (int k = 0; k < sec->nkeys; k++) {
      const wf_key *key = &sec->keys[k];
      size_t n = strlen(key->name);
      bool plot = key->type == WF_KEY_OUTPUT && n >= 4 && strcmp(key->name + n - 4, "plot") == 0;
      const char *png = plot ? wf_deck_str(deck, sec->name, key->name) : "";
      size_t len = strlen(png);
      if (len && (len < 5 || strcasecmp(png + len - 4, ".png") != 0))
        return wf_deck_fail(deck, sec->name, key->name, st,
                            "plots are PNG images: name the file NAME.png");
      if (len && !wf_plots_available(why, sizeof why))
        return wf_deck_fail(deck, sec->name, key->name, st, "cannot draw plots: %s", why);
    }
  }
  return WF_OK;
}

/* The ranks' peak resident memory so far (the process's high-water mark),
 * smallest and largest: what a rank needs, and whether it grows with the
 * rank count. Collective. */
static void json_memory(MPI_Comm comm, wf_json *j) {
  struct rusage ru;
  /* ru_maxrss is in KiB on Linux; MB (10^6 bytes) as every other figure */
  double mb = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024 / 1e6 : 0;
  double lo, hi;
  MPI_Allreduce(&mb, &lo, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&mb, &hi, 1, MPI_DOUBLE, MPI_MAX, comm);
  wf_json_begin(j, "memory");
  wf_json_range(j, "peak_rss_mb", lo, hi);
  wf_json_end(j);
}

int app_claim_files(const options *o, wf_files *files, wf_status *st) {
  char who[600];
  if (o->deck) {
    snprintf(who, sizeof who, "the deck %.500s", o->deck);
    if (wf_files_add(files, who, "the deck", o->deck, WF_FILE_READ, st) != WF_OK) return st->code;
  }
  if (o->json && o->json[0]) {
    wf_file_claim c;
    snprintf(who, sizeof who, "--json %.500s", o->json);
    if (wf_file_claim_init(&c, who, "--json", o->json, WF_FILE_WRITE, st) != WF_OK)
      return st->code;
    c.stream_ok = true; /* /dev/stdout is written in place */
    return wf_files_add_claim(files, &c, st);
  }
  return WF_OK;
}

/* Every file the run names, in one registry, checked before any work: an
 * output that cannot be written, or that would overwrite an input, the deck,
 * the JSON summary or another output, is found here (rank 0). */
static int check_files(const wf_workload *wl, const wf_deck *deck, const options *o,
                       wf_status *st) {
  const char *names[MAX_SECTIONS] = {"wafer", "output"};
  int nnames = 2;
  for (int s = 0; s < wl->nsections && nnames < MAX_SECTIONS; s++) names[nnames++] = wl->sections[s]->name;
  wf_files files = {0};
  int rc = wf_deck_claim_files(deck, names, nnames, &files, st);
  if (rc == WF_OK && wl->claim_files) rc = wl->claim_files(deck, &files, st);
  if (rc == WF_OK && o) rc = app_claim_files(o, &files, st);
  if (rc == WF_OK) rc = wf_files_check(&files, st);
  wf_files_free(&files);
  return rc;
}

/* The names of the workload's own sections, into names[MAX_SECTIONS]. */
static int own_sections(const wf_workload *wl, const char **names) {
  int n = 0;
  for (int s = 0; s < wl->nsections && n < MAX_SECTIONS; s++) names[n++] = wl->sections[s]->name;
  return n;
}

/* A restart continues the run that wrote its checkpoint: the deck gives
 * the values that run's state depended on (wf_deck_state), or the run is
 * refused before any work. Rank 0. */
static int check_restarts(const wf_workload *wl, const wf_deck *deck, wf_status *st) {
  const char *names[MAX_SECTIONS];
  int nnames = own_sections(wl, names);
  for (int s = 0; s < wl->nsections; s++) {
    const wf_section *sec = wl->sections[s];
    const char *path = sec->restart_from ? wf_deck_str(deck, sec->name, sec->restart_from) : "";
    /* A file that is not there is the workload's to report: it may not
     * use the key at all (a cfd heat run), which says more. */
    if (!path[0] || access(path, R_OK) != 0) continue;
    char *saved;
    if (wf_checkpoint_state(path, &saved, st) != WF_OK)
      return wf_deck_blame(deck, sec->name, sec->restart_from, st);
    int rc = wf_deck_check_state(deck, names, nnames, saved, sec->name, sec->restart_from, st);
    free(saved);
    if (rc != WF_OK) return rc;
  }
  return WF_OK;
}

/* The deck's state keys (wf_deck_state) of the workload's own sections,
 * on every rank; NULL when a rank is out of memory. */
static char *deck_state(MPI_Comm comm, const wf_workload *wl, const wf_deck *deck) {
  const char *names[MAX_SECTIONS];
  char *state = wf_deck_state(deck, names, own_sections(wl, names));
  int failed = !state;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (!failed) return state;
  free(state);
  return NULL;
}

/* Run one workload; its JSON summary is returned in `j` (on every rank). */
int app_run_workload(MPI_Comm comm, const wf_workload *wl, const wf_deck *deck, const options *o,
                     bool verbose, wf_run *run, wf_json *j, wf_status *st) {
  wf_wafer wafer;
  wf_roles roles;
  memset(run, 0, sizeof *run);
  wf_json_init(j);
  wf_json_str(j, "workload", wl->name);
  wf_json_str(j, "version", wf_version());
  wf_status_clear(st);
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && check_files(wl, deck, o, st) == WF_OK && check_plots(deck, wl, st) == WF_OK)
    check_restarts(wl, deck, st);
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return refused(j, st);
  if (split_roles(comm, wl, deck, &roles, st) != WF_OK) return refused(j, st);
  /* The PE grid lives on the wafer ranks' communicator. */
  bool on_wafer = roles.role == WF_ROLE_WAFER;
  int made = on_wafer ? wf_wafer_create(&wafer, roles.role_comm, deck, wl->rank_layout, st) : WF_ERR_INPUT;
  wf_status_agree(comm, st);
  if (st->code != WF_OK) {
    if (made == WF_OK) wf_wafer_free(&wafer); /* it failed elsewhere */
    wf_roles_free(&roles);
    return refused(j, st);
  }
  wf_binding binding;
  if (wf_binding_gather(comm, &binding, st) != WF_OK) {
    if (on_wafer) wf_wafer_free(&wafer);
    wf_roles_free(&roles);
    return refused(j, st);
  }
  if (verbose) {
    printf("== wafer %s: %s\n", wf_version(), wl->name);
    app_describe_wafer(&wafer, stdout);
    wf_binding_print(&binding, stdout);
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
    run->machine = wafer.hw.machine;
    run->pe_grid[0] = wafer.dc.pe_nx, run->pe_grid[1] = wafer.dc.pe_ny;
    run->rank_grid[0] = wafer.dc.px, run->rank_grid[1] = wafer.dc.py;
  }
  run->verbose = verbose;
  run->summary = j;
  if (on_wafer) app_json_wafer(&wafer, j);
  wf_binding_json(&binding, j);
  int nodes = binding.nhosts; /* rank 0's, which reports */
  wf_binding_free(&binding);

  double t0 = MPI_Wtime();
  char *state = deck_state(comm, wl, deck);
  run->state = state;
  if (state)
    wl->run(run, st);
  else
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the deck's values");
  free(state);
  run->state = NULL;
  if (st->code == WF_OK && wf_deck_bug(deck)[0]) wf_fail(st, WF_ERR_RUNTIME, "%s", wf_deck_bug(deck));
  double wall = MPI_Wtime() - t0;
  wf_status_agree(comm, st);
  blame_signal(comm, st);
  MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, comm);

  if (on_wafer) app_json_fabric(&wafer, run->model.unit, j);
  json_memory(comm, j);
  wf_json_num(j, "seconds", run->seconds);
  wf_json_range(j, "wafer_seconds", run->wafer_seconds.lo, run->wafer_seconds.hi);
  wf_json_num(j, "wall_seconds", wall);
  app_energy energy = app_energy_of(wf_hw_preset(wf_deck_str(deck, "wafer", "hardware")),
                                    run->wafer_seconds, run->model.systems, run->seconds, nodes,
                                    wf_deck_real(deck, "energy", "node_watts"));
  app_energy_json(&energy, j);
  if (verbose && st->code == WF_OK) app_energy_print(&energy, stdout);
  wf_json_begin(j, "checks");
  wf_json_int(j, "passed", run->checks_passed);
  wf_json_int(j, "failed", run->checks_failed);
  if (run->unavailable[0]) wf_json_str(j, "unavailable", run->unavailable);
  if (run->unchecked[0]) wf_json_str(j, "unchecked", run->unchecked);
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

void app_options_free(options *o) {
  free(o->sets);
  o->sets = NULL;
}
