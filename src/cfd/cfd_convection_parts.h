/* The parts of `wafer cfd`'s convection run shared by its files: the setup,
 * the history of sampled rows, the steps' result, the time series of
 * snapshots, the findings the checks make (private to src/cfd):
 *   cfd_convection.c         the setup, the steps, the PETSc comparison, the model, the run
 *   cfd_convection_output.c  the output file, the time series, the plot
 *   cfd_convection_check.c   the history's analysis, the checks, the report */
#ifndef CFD_CONVECTION_PARTS_H
#define CFD_CONVECTION_PARTS_H

#include <stdbool.h>

#include "cf_rb.h"
#include "wf_h5.h"
#include "wf_model.h"
#include "wf_workload.h"

typedef struct conv_setup {
  int nx, ny, nz, steps, every;
  double ra, pr, t_end, cfl, dt, amplitude;
  bool side_walls;
  cf_poisson solver;
  st_opts poisson;
  wf_prec wafer_prec;
} conv_setup;

/* ---- the history: one row every `every` steps ---- */

enum { H_T, H_NU_BOTTOM, H_NU_TOP, H_NU_VOLUME, H_KINETIC, H_MAX_DIV, H_COLS };

typedef struct history {
  double *rows; /* [n][H_COLS] */
  int n, cap;
  bool last_off_cadence; /* the last row was measured only because the run ended there */
} history;

/* Appends a row (false: out of memory). */
bool conv_history_add(history *h, double t, const cf_rb_stats *s);
/* The rows a checkpoint keeps, for its restart to go on from. */
int conv_history_read(MPI_Comm comm, const char *path, long long step, history *h,
                      wf_status *st);

/* ---- the steps ---- */

typedef struct conv_result {
  bool restarted;
  int first_step; /* 0, or the restart's */
  double t0;      /* the time at first_step */
  int steps;      /* run here */
  double t, dt_last, seconds;
  cf_rb_stats last;
} conv_result;

/* ---- the time series: a snapshot every `every` steps ---- */

typedef struct series {
  int every;                 /* 0: none */
  char base[WF_H5_PATH_MAX]; /* the output's path less ".h5" */
  double *rows;              /* [n][2]: each snapshot's step and time (every rank) */
  int n, cap;
} series;

/* The series' base name: output.file less ".h5". */
void conv_series_base(const char *out, char *base, size_t len);
/* base_NNNNNN.h5 for step n, the fields at time t; then the series file
 * (rank 0) lists every snapshot so far. Collective. */
int conv_snapshot(wf_run *run, cf_rb *rb, series *sr, int n, double t, wf_status *st);
/* The snapshots of the run a restart continues (its checkpoint's list),
 * which the series goes on from: each must still be beside output.file. */
int conv_read_series(wf_run *run, const char *path, series *sr, int first_step, wf_status *st);

/* ---- the end: the output file and the plot ---- */

/* The last state's fields and the history into output.file. Collective. */
int conv_write_output(wf_run *run, cf_rb *rb, const history *h, const conv_result *r,
                      const char *path, wf_status *st);
/* The temperature's mid-plane and the history as a PNG. Collective. */
int conv_plot(wf_run *run, const cf_rb *rb, const history *h, const char *png, wf_status *st);

/* ---- checks and report ---- */

typedef struct conv_findings {
  double growth; /* 1 / thermal time, over the second half (NAN: not measured) */
  double nu;     /* the volume Nusselt number, mean over the second half */
  double nu_bottom, nu_top;
  double div_ratio;
  bool linear; /* the perturbation stayed small: Nu within 1e-3 of 1 */
  /* Linear theory at the box's wavenumber k (NAN: not compared): the
   * growth rate measured while the run was linear, the normal mode's, what
   * the grid's truncation allows between them, and the box's onset. */
  double k, growth_linear, growth_theory, growth_allowed, ra_onset;
  double heat_budget; /* the last state's (cf_rb_heat_budget): difference / allowed */
  cf_rb_truncation truncation; /* the operator on a manufactured state */
} conv_findings;

/* The projections' divergence, the heat budget, the operator's truncation, the second half's means,
 * and the growth rate against linear theory: checks counted on `run`. */
void conv_check(wf_run *run, const conv_setup *s, const cf_rb *rb, const history *h,
                conv_findings *f);
/* The run's lines and JSON summary (wf_report), its headline. */
void conv_report(wf_run *run, const conv_setup *s, const cf_rb *rb, const conv_result *r,
                 const conv_findings *f, const history *h);

#endif
