/* The interface between the `wafer` command and a workload.
 *
 * A workload is one static wf_workload value: its name, one line of help,
 * its own deck sections, and a run function. The app registers it with one
 * line in src/app/registry.c; it never touches another workload. */
#ifndef WF_WORKLOAD_H
#define WF_WORKLOAD_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "wf_deck.h"
#include "wf_error.h"
#include "wf_json.h"
#include "wf_range.h"

struct wf_wafer; /* the PE grid, its decomposition and its fabric: mesh_decomp/wf_wafer.h */
struct wf_roles; /* the ranks' roles: mesh_decomp/wf_roles.h */
struct wf_h5file; /* an HDF5 output file: common/wf_h5.h */
struct wf_files;  /* the registry of a run's files: common/wf_files.h */

/* A workload's wafer projection of one unit of its work (an iteration, a
 * timestep), for the run's report and for `wafer fidelity`. */
typedef struct wf_projection {
  bool valid;
  const char *unit;      /* "iteration", "step", ... */
  wf_range seconds;      /* per unit, [fast, slow] */
  double flops;          /* per unit, the whole wafer (0: not counted) */
  double bytes_per_pe;   /* the busiest PE's data */
  double sram_for_data;  /* what a PE offers to data (SRAM less the reserve) */
  double pes_needed;     /* PEs the mapping needs */
  double pes_offered;    /* PEs the hardware's program rectangle offers */
  double systems;        /* wafers working at once (TLR-MVM's systems, training's
                            replicas); 0 means 1 */
} wf_projection;

typedef struct wf_run {
  const char *workload, *version; /* for output files */
  MPI_Comm comm;  /* the wafer's ranks (or, for a rank of another role, that role's) */
  MPI_Comm world; /* every rank of the run */
  const struct wf_roles *roles;
  int rank, nranks; /* in comm */
  const wf_deck *deck;
  /* The values of the deck's keys the run's state depends on
   * (wf_deck_state of the workload's sections): each checkpoint records
   * them, and a restart from it must give the same. */
  const char *state;
  char hardware[16];               /* of the wafer, for output files */
  const char *machine;             /* the wafer's ("CS-2 (WSE-2)"), for reports; NULL: none */
  int pe_grid[2], rank_grid[2];
  struct wf_wafer *wafer; /* NULL on ranks that do not play the wafer */
  bool verbose;   /* rank 0 and not --quiet: progress and report lines */
  wf_json *summary; /* the workload adds its results; the app adds the common part */
  /* Filled by the workload, the same on every rank: */
  /* Independent assertions against a reference, counted once per run (not
   * per rank or iteration). A run that checked nothing is "unchecked". */
  int checks_passed, checks_failed;
  /* Checks whose reference this build or machine lacks ("" if none; "; "
   * between them): reported, never counted as passed (wf_run_unavailable). */
  char unavailable[512];
  /* What the run could not check on this deck ("" if nothing; "; " between):
   * reported, so that a weaker run says so (wf_run_unchecked). */
  char unchecked[512];
  double seconds;         /* measured time of the main computation */
  wf_range wafer_seconds; /* the same computation, projected onto the wafer */
  wf_projection model;    /* the projection per unit of work */
  char headline[160];               /* one line for the demo table */
} wf_run;

typedef struct wf_workload {
  const char *name;
  const char *help;
  const wf_section *const *sections;
  int nsections;
  int (*run)(wf_run *run, wf_status *st);
  void (*finalize)(void); /* optional: once, before MPI_Finalize */
  /* optional: files the run makes beyond its keys' (wf_files.h), declared
   * to the run's registry before any work (cfd: the snapshot series) */
  int (*claim_files)(const wf_deck *deck, struct wf_files *files, wf_status *st);
  bool rank_roles;        /* accepts MemoryX / SwarmX ranks ([wafer] memoryx_ranks, ...) */
  int rank_layout;        /* wf_rank_layout of `rank_grid = auto` (0: compact blocks) */
  bool not_in_demo;       /* needs an input its embedded deck cannot give (generate: a
                             checkpoint), so `wafer demo` leaves it out */
  const char *const *demo_variant; /* optional, NULL-terminated --set assignments: `wafer demo`
                                      runs the workload a second time with them (cfd: a short
                                      convection run besides the default wave) */
} wf_workload;

/* Higham's gamma_n = n u / (1 - n u): the relative error bound of n
 * roundings of unit roundoff u (0x1p-24 float, 0x1p-53 double), what the
 * checks' tolerances are built from. */
static inline double wf_gamma(double n, double u) { return n * u / (1 - n * u); }

/* The worse of two errors for a check: NaN when either is (fmax drops a
 * NaN, and a comparison with one is false: a NaN must fail a check, never
 * pass it). */
static inline double wf_worse(double a, double b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}

/* Count one independent check (the same on every rank); a failed one is
 * reported on stdout with `what` when the run is verbose. */
void wf_run_check(wf_run *run, bool ok, const char *what);
/* A check that could not run because its reference is absent (`why` says
 * how to enable it): printed when verbose, kept for the JSON summary. */
void wf_run_unavailable(wf_run *run, const char *check, const char *why);
/* A check this run's deck leaves out of reach (`why` says what would
 * reach it): printed when verbose, kept for the JSON summary. */
void wf_run_unchecked(wf_run *run, const char *check, const char *why);
/* "error", "failed", "unchecked" (nothing was checked) or "ok". */
const char *wf_run_status(const wf_run *run, int code);
/* Create a run's HDF5 output with the standard attributes: workload,
 * version, resolved deck, ranks, rank grid, PE grid, hardware. Collective. */
int wf_run_h5_create(const wf_run *run, const char *path, struct wf_h5file *f, wf_status *st);
/* A plot: rank 0 writes the data with `write` to a temporary file (in
 * TMPDIR) and runs `PYTHON SCRIPTS/SCRIPT DATA PNG TITLE` (matplotlib), with
 * the Python and the scripts' folder of wf_data.h. Collective: every rank
 * gets rank 0's status. */
int wf_run_plot(const wf_run *run, const char *script, const char *png, const char *title,
                void (*write)(FILE *f, const void *data), const void *data, wf_status *st);
/* The projection as a "model" object's common part: unit, seconds and
 * FLOP/s as [fast, slow] ranges, memory and PE budgets. */
void wf_projection_json(const wf_projection *p, wf_json *j);

#endif
