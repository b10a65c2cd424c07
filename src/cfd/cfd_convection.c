/* `wafer cfd` with problem = convection: Rayleigh-Benard convection
 * (cf_rb.h) run for a number of steps or up to a time, its Nusselt numbers
 * and kinetic energy sampled as it goes, checked against linear stability
 * theory (the perturbation's growth rate while it is small, against the
 * normal mode's at this Ra and this box's wavenumber: cf_rb_linear.h) and
 * by the divergence each projection leaves. */
#include "cfd_convection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_rb.h"
#include "cf_rb_linear.h"
#include "cf_checkpoint.h"
#include "cf_rb_checkpoint.h"
#include "ff_model.h"
#include "st_model.h"
#include "st_petsc.h"
#include "wf_checkpoint.h"
#include "wf_files.h"
#include "wf_reference.h"
#include "wf_fault.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_signal.h"
#include "wf_timing.h"
#include "wf_wafer.h"


typedef struct conv_setup {
  int nx, ny, nz, steps, every;
  double ra, pr, t_end, cfl, dt, amplitude;
  bool side_walls;
  cf_poisson solver;
  st_opts poisson;
  wf_prec wafer_prec;
} conv_setup;

static int read_setup(const wf_deck *d, conv_setup *s, wf_status *st) {
  *s =
      (conv_setup){.nx = (int)wf_deck_int(d, "cfd", "nx"),
                   .ny = (int)wf_deck_int(d, "cfd", "ny"),
                   .nz = (int)wf_deck_int(d, "cfd", "nz"),
                   .steps = (int)wf_deck_int(d, "cfd", "steps"),
                   .every = (int)wf_deck_int(d, "cfd", "energy_every"),
                   .ra = wf_deck_real(d, "cfd", "ra"),
                   .pr = wf_deck_real(d, "cfd", "pr"),
                   .t_end = wf_deck_real(d, "cfd", "t_end"),
                   .cfl = wf_deck_real(d, "cfd", "cfl"),
                   .dt = wf_deck_real(d, "cfd", "dt"),
                   .amplitude = wf_deck_real(d, "cfd", "perturbation"),
                   .side_walls = strcmp(wf_deck_str(d, "cfd", "walls_x"), "adiabatic") == 0,
                   .solver = strcmp(wf_deck_str(d, "cfd", "poisson"), "fft") == 0 ? CF_POISSON_FFT
                                                                                  : CF_POISSON_PCG};
  s->poisson = (st_opts){.rtol = wf_deck_real(d, "cfd", "poisson_rtol"),
                         .atol = 0,
                         .dtol = 1e10,
                         .max_its = (int)wf_deck_int(d, "cfd", "poisson_max_its"),
                         .precision = ST_DOUBLE,
                         .nonzero_guess = true,   /* the last stage's phi */
                         .ignore_signals = true}; /* the step loop stops, between steps */
  s->wafer_prec = strcmp(wf_deck_str(d, "cfd", "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  const char *init = wf_deck_str(d, "cfd", "init");
  if (strcmp(init, "auto") != 0 && strcmp(init, "mode") != 0)
    return wf_deck_fail(d, "cfd", "init", st,
                        "convection starts from the conduction state plus the onset mode "
                        "(init = mode or auto), not from '%s'",
                        init);
  if (s->nz < 2)
    return wf_deck_fail(d, "cfd", "nz", st, "%d cells across the layer: convection needs 2 or more",
                        s->nz);
  /* The PETSc comparison is asked for by name (no auto): absent, bad input. */
  if (strcmp(wf_deck_str(d, "cfd", "petsc"), "none") != 0 && wf_ref_petsc_absent())
    return wf_deck_fail(d, "cfd", "petsc", st, "PETSc is not available: %s (or set cfd.petsc = none)",
                        wf_ref_petsc_absent());
  return WF_OK;
}

/* ---- the history: one row every `every` steps ---- */

enum { H_T, H_NU_BOTTOM, H_NU_TOP, H_NU_VOLUME, H_KINETIC, H_MAX_DIV, H_COLS };

typedef struct history {
  double *rows; /* [n][H_COLS] */
  int n, cap;
  bool last_off_cadence; /* the last row was measured only because the run ended there */
} history;

static bool history_add(history *h, double t, const cf_rb_stats *s) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 256;
    double *r = realloc(h->rows, (size_t)cap * H_COLS * sizeof *r);
    if (!r) return false;
    h->rows = r, h->cap = cap;
  }
  double *row = h->rows + (size_t)h->n++ * H_COLS;
  row[H_T] = t, row[H_NU_BOTTOM] = s->nu_bottom, row[H_NU_TOP] = s->nu_top;
  row[H_NU_VOLUME] = s->nu_volume, row[H_KINETIC] = s->kinetic, row[H_MAX_DIV] = s->max_div;
  return true;
}

/* The rows a checkpoint keeps, for its restart to go on from. */
static int read_history(MPI_Comm comm, const char *path, history *h, wf_status *st) {
  unsigned long long len;
  if (wf_checkpoint_read_series(comm, path, "history", &h->rows, &len, st) != WF_OK)
    return st->code;
  h->n = h->cap = (int)(len / H_COLS);
  if (len % H_COLS == 0 && len > 0) return WF_OK;
  return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': its history holds %llu values, not rows of %d",
                 path, len, H_COLS);
}

/* Half the slope of ln E against t (least squares) over the rows 0..r1
 * whose time is in [t0, t1] and energy positive; NAN with fewer than 2. */
static double log_slope(const history *h, int r1, double t0, double t1) {
  double st = 0, sy = 0, stt = 0, sty = 0;
  int n = 0;
  for (int r = 0; r <= r1; r++) {
    const double *row = h->rows + (size_t)r * H_COLS;
    if (row[H_T] < t0 || row[H_T] > t1 || !(row[H_KINETIC] > 0)) continue;
    double y = log(row[H_KINETIC]);
    st += row[H_T], sy += y, stt += row[H_T] * row[H_T], sty += row[H_T] * y, n++;
  }
  return n < 2 ? NAN : 0.5 * (n * sty - st * sy) / (n * stt - st * st);
}

/* The kinetic energy's growth rate over the run's second half. */
static double growth_rate(const history *h) {
  double t_end = h->rows[(size_t)(h->n - 1) * H_COLS + H_T];
  return log_slope(h, h->n - 1, 0.5 * t_end, t_end);
}

/* The mean of column `col` over the run's second half. */
static double late_mean(const history *h, int col) {
  double t_half = 0.5 * h->rows[(size_t)(h->n - 1) * H_COLS + H_T], sum = 0;
  int n = 0;
  for (int r = 0; r < h->n; r++)
    if (h->rows[(size_t)r * H_COLS + H_T] >= t_half) sum += h->rows[(size_t)r * H_COLS + col], n++;
  return n ? sum / n : NAN;
}

/* ---- the steps ---- */

typedef struct conv_result {
  bool restarted;
  int first_step; /* 0, or the restart's */
  double t0;      /* the time at first_step */
  int steps;      /* run here */
  double t, dt_last, seconds;
  cf_rb_stats last;
} conv_result;

/* ---- output: the last state, and a time series as the run goes ---- */

static const char *const field_names[4] = {"temperature", "velocity_x", "velocity_y", "velocity_z"};

/* The temperature and the velocity at the centres into an open file, with
 * its time. Collective. */
static int write_fields(wf_run *run, cf_rb *rb, wf_h5file *f, double t, wf_status *st) {
  const st_mesh *m = rb->m;
  double *centred = st_field_alloc(m);
  int failed = !centred;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory for the output") : WF_OK;
  if (rc == WF_OK && (wf_h5_reserve(f, 8.0 * 4 * (double)m->n_global, st) != WF_OK ||
                      st_mesh_write_field(f, m, field_names[0], rb->f[CF_T], st) != WF_OK))
    rc = st->code;
  for (int a = 0; a < 3 && rc == WF_OK; a++) {
    cf_rb_centred(rb, a, centred);
    if (st_mesh_write_field(f, m, field_names[a + 1], centred, st) != WF_OK) rc = st->code;
  }
  if (rc == WF_OK &&
      (wf_h5_attr_num(f, "ra", rb->ra, st) != WF_OK ||
       wf_h5_attr_num(f, "pr", rb->pr, st) != WF_OK || wf_h5_attr_num(f, "t", t, st) != WF_OK))
    rc = st->code;
  free(centred);
  return rc;
}

static int write_output(wf_run *run, cf_rb *rb, const history *h, const conv_result *r,
                        const char *path, wf_status *st) {
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  int rc = write_fields(run, rb, &f, r->t, st);
  bool root = run->rank == 0;
  unsigned long long zero = 0, rows = (unsigned long long)(root ? h->n : 0);
  wf_h5_rows hr = {(unsigned long long)h->n, H_COLS, root, &zero, &rows};
  double none = 0;
  if (rc == WF_OK &&
      (wf_h5_write_rows(&f, "history", WF_F64, &hr, root ? h->rows : &none, st) != WF_OK ||
       wf_h5_attr_str(&f, "history_columns", "t nu_bottom nu_top nu_volume kinetic max_div", st) !=
           WF_OK))
    rc = st->code;
  return wf_h5_finish(&f, rc, st);
}

/* ---- the time series: a snapshot every `every` steps ---- */

typedef struct series {
  int every;                 /* 0: none */
  char base[WF_H5_PATH_MAX]; /* the output's path less ".h5" */
  double *rows;              /* [n][2]: each snapshot's step and time (every rank) */
  int n, cap;
} series;

/* The series' base name: output.file less ".h5". */
static void series_base(const char *out, char *base, size_t len) {
  snprintf(base, len, "%s", out);
  char *dot = strrchr(base, '.');
  if (dot && strcmp(dot, ".h5") == 0) *dot = '\0';
}

int cfd_convection_claim_files(const wf_deck *deck, wf_files *files, wf_status *st) {
  const char *out = wf_deck_str(deck, "output", "file");
  if (strcmp(wf_deck_str(deck, "cfd", "problem"), "convection") != 0 || !out[0] ||
      wf_deck_int(deck, "cfd", "snapshot_every") <= 0)
    return WF_OK;
  char base[WF_H5_PATH_MAX], who[WF_H5_PATH_MAX + 64], path[WF_H5_PATH_MAX + 48];
  series_base(out, base, sizeof base);
  snprintf(who, sizeof who, "%s_NNNNNN.h5 (the snapshots of [cfd] snapshot_every)", base);
  snprintf(path, sizeof path, "%s_[0-9][0-9][0-9][0-9][0-9][0-9].*", base);
  wf_file_claim c;
  if (wf_file_claim_init(&c, who, "[cfd] snapshot_every (the snapshots)", path, WF_FILE_WRITE,
                         st) != WF_OK)
    return st->code;
  c.pattern = true; /* base_000010.h5, its .part and its sidecar */
  if (wf_files_add_claim(files, &c, st) != WF_OK) return st->code;
  snprintf(path, sizeof path, "%s_series.xmf", base);
  return wf_files_add(files, "the time series of [cfd] snapshot_every", "the time series", path,
                      WF_FILE_WRITE, st);
}

typedef char snapshot_name[WF_H5_PATH_MAX + 16];

static void snapshot_path(const series *sr, int step, snapshot_name path) {
  snprintf(path, sizeof(snapshot_name), "%s_%06d.h5", sr->base, step);
}

/* The series file (base_series.xmf) listing every snapshot so far. */
static int write_series(const series *sr, const st_mesh *m, wf_status *st) {
  wf_h5_xdmf_field fields[4];
  for (int a = 0; a < 4; a++) {
    fields[a] = (wf_h5_xdmf_field){
        .ndim = 3,
        .dims = {(unsigned long long)m->nz, (unsigned long long)m->ny, (unsigned long long)m->nx},
        .type = WF_F64};
    snprintf(fields[a].name, sizeof fields[a].name, "%s", field_names[a]);
  }
  snapshot_name *names = malloc((size_t)sr->n * sizeof *names);
  const char **files = malloc((size_t)sr->n * sizeof *files);
  double *times = malloc((size_t)sr->n * sizeof *times);
  int rc = names && files && times ? WF_OK
                                   : wf_fail(st, WF_ERR_RUNTIME, "out of memory for the time series");
  for (int s = 0; rc == WF_OK && s < sr->n; s++) {
    snapshot_path(sr, (int)sr->rows[2 * s], names[s]);
    files[s] = names[s], times[s] = sr->rows[2 * s + 1];
  }
  snapshot_name xmf;
  snprintf(xmf, sizeof xmf, "%s_series.xmf", sr->base);
  if (rc == WF_OK) rc = wf_xdmf_series_write(xmf, sr->n, files, times, fields, 4, st);
  free(names), free(files), free(times);
  return rc;
}

/* base_NNNNNN.h5 for step n, the fields at time t; then the series file
 * (rank 0) lists every snapshot so far. Collective. */
static int snapshot(wf_run *run, cf_rb *rb, series *sr, int n, double t, wf_status *st) {
  snapshot_name path;
  snapshot_path(sr, n, path);
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  if (wf_h5_finish(&f, write_fields(run, rb, &f, t, st), st) != WF_OK) return st->code;
  if (sr->n == sr->cap) {
    sr->cap = sr->cap ? 2 * sr->cap : 16;
    double *rows = wf_alloc_small(2 * (size_t)sr->cap, sizeof *rows, "the time series");
    if (sr->n) memcpy(rows, sr->rows, 2 * (size_t)sr->n * sizeof *rows);
    free(sr->rows);
    sr->rows = rows;
  }
  sr->rows[2 * sr->n] = n, sr->rows[2 * sr->n + 1] = t, sr->n++;
  if (run->rank == 0) write_series(sr, rb->m, st);
  wf_status_bcast(run->comm, st);
  return st->code;
}

/* The snapshots of the run a restart continues (its checkpoint's list),
 * which the series goes on from: each must still be beside output.file. */
static int read_series(wf_run *run, const char *path, series *sr, int first_step, wf_status *st) {
  unsigned long long len;
  if (wf_checkpoint_read_series(run->comm, path, "snapshots", &sr->rows, &len, st) != WF_OK)
    return st->code;
  sr->n = sr->cap = (int)(len / 2);
  bool ordered = len % 2 == 0;
  for (int s = 0; ordered && s < sr->n; s++) /* steps 0 .. first_step, rising */
    ordered = sr->rows[2 * s] == (int)sr->rows[2 * s] && sr->rows[2 * s] >= 0 &&
              sr->rows[2 * s] <= first_step && (s == 0 || sr->rows[2 * s] > sr->rows[2 * s - 2]);
  if (!ordered)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s': its snapshot list is not one of steps up to its own (%d): a "
                   "damaged file",
                   path, first_step);
  if (run->rank == 0) {
    for (int s = 0; s < sr->n && st->code == WF_OK; s++) {
      snapshot_name file;
      snapshot_path(sr, (int)sr->rows[2 * s], file);
      if (access(file, R_OK) != 0)
        wf_fail(st, WF_ERR_INPUT,
                "the run it continues took snapshot '%s', which is gone: the series would list "
                "it (keep output.file as it was, or set cfd.snapshot_every = 0)",
                file);
    }
  }
  wf_status_bcast(run->comm, st);
  return st->code;
}

/* Where the run keeps its checkpoints, and the last one written. */
typedef struct checkpoints {
  const char *path; /* '' = none */
  int every;        /* steps between them (0: only at the end) */
  int last_step;    /* -1: none written yet */
} checkpoints;

static int write_checkpoint(wf_run *run, cf_rb *rb, checkpoints *ck, const history *h,
                            const series *sr, int n, double t, wf_status *st) {
  /* A row a longer run would not measure stays out: the restart goes on
   * with the rows the uninterrupted run has. */
  unsigned long long rows = (unsigned long long)(h->n - h->last_off_cadence) * H_COLS,
                     snaps = 2 * (unsigned long long)sr->n;
  bool root = run->rank == 0;
  double none = 0;
  const wf_ckpt_var kept[2] = {
      {"history", WF_F64, h->rows, rows, 0, root ? rows : 0},
      {"snapshots", WF_F64, snaps ? sr->rows : &none, snaps, 0, root ? snaps : 0}};
  if (cf_rb_checkpoint_write(rb, run->comm, ck->path, run->state, n, t, kept, 2, st) != WF_OK)
    return st->code;
  ck->last_step = n;
  return WF_OK;
}

static int run_steps(wf_run *run, const conv_setup *s, cf_rb *rb, checkpoints *ck, series *sr,
                     history *h, conv_result *r, wf_status *st) {
  bool to_time = s->t_end > 0;
  int n = r->first_step;
  double t = r->t0, seconds = 0;
  long total = to_time ? 1000 : s->steps - r->first_step;
  wf_progress prog;
  wf_progress_start(&prog, "cfd", total, run->verbose, stdout);
  if (to_time) prog.unit = " thousandths of t_end"; /* not steps: dt adapts */
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  int rc = WF_OK;
  char where[200];
  cf_rb_stats stats = cf_rb_measure(rb);
  /* The start's row and snapshot; a restart's were taken by the run it continues. */
  if (!r->restarted && !history_add(h, t, &stats))
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the history");
  if (rc == WF_OK && !r->restarted && sr->every > 0) rc = snapshot(run, rb, sr, n, t, st);
  while (rc == WF_OK && (to_time ? t < s->t_end * (1 - 1e-12) : n < s->steps)) {
    int sig = wf_signal_poll_next(&poll);
    if (sig) {
      /* The state after step n is whole: keep it if the run keeps any. */
      if (ck->path[0] && (rc = write_checkpoint(run, rb, ck, h, sr, n, t, st)) != WF_OK) break;
      cf_ckpt_last_good(ck->path, ck->last_step, where, sizeof where);
      char at[260];
      snprintf(at, sizeof at, "at step %d (%s)", n, where);
      rc = wf_signal_fail(st, sig, at);
      break;
    }
    double limit = cf_rb_dt_limit(rb), dt = s->dt > 0 ? s->dt : s->cfl * limit;
    if (dt > limit) {
      rc = wf_fail(st, WF_ERR_RUNTIME,
                   "at step %d (t = %.6g) the fixed step %g exceeds the stable limit %.6g of the "
                   "flow as it now is: use a smaller dt, or dt = 0 for the adaptive step",
                   n, t, dt, limit);
      break;
    }
    if (to_time) dt = fmin(dt, s->t_end - t);
    double t0 = MPI_Wtime();
    if ((rc = cf_rb_step(rb, dt, st)) != WF_OK) break;
    seconds += MPI_Wtime() - t0;
    t += dt, n++;
    if (n == 10 && wf_fault("cfd_nan", run->comm)) /* the tests' blow-up */
      rb->f[CF_T][st_idx(rb->m, 0, 0, 0)] = NAN;
    bool last = to_time ? t >= s->t_end * (1 - 1e-12) : n == s->steps;
    bool at_checkpoint = ck->path[0] && ((ck->every > 0 && n % ck->every == 0) || last);
    if (n % s->every == 0 || last || at_checkpoint) {
      stats = cf_rb_measure(rb);
      if (!stats.finite) {
        cf_ckpt_last_good(ck->path, ck->last_step, where, sizeof where);
        rc = wf_fail(st, WF_ERR_RUNTIME,
                     "the flow is no longer finite after step %d (t = %.6g; %s)", n, t, where);
        break;
      }
      if ((n % s->every == 0 || last) && !history_add(h, t, &stats)) {
        rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the history");
        break;
      }
      h->last_off_cadence = last && n % s->every != 0;
    }
    /* The snapshot first: the checkpoint lists it, and its restart does not take it again. */
    if (sr->every > 0 && n % sr->every == 0 && (rc = snapshot(run, rb, sr, n, t, st)) != WF_OK)
      break;
    if (at_checkpoint && (rc = write_checkpoint(run, rb, ck, h, sr, n, t, st)) != WF_OK) break;
    r->dt_last = dt;
    wf_progress_tick(&prog, to_time ? (long)(1000 * t / s->t_end) : n - r->first_step);
  }
  wf_signal_poll_end(&poll);
  r->steps = n - r->first_step, r->t = t, r->last = stats;
  r->seconds = wf_slowest(run->comm, seconds);
  return rc;
}

/* ---- the pressure solve against PETSc ---- */

typedef struct petsc_cmp {
  bool done;
  const char *pc;      /* "jacobi" or "gamg" */
  double ours, theirs; /* seconds a solve: medians of 3 */
  int our_its, their_its;
  double rel_diff; /* ||phi_ours - phi_petsc|| / ||phi_petsc|| */
  char reason[64];
} petsc_cmp;

/* The system a step solves, from the run's last state: ours (the run's
 * solver, PCG from zero) and PETSc's KSPCG with Jacobi or GAMG on the same
 * matrix (AIJ, the constants as its null space), to the same rtol; setup
 * (GAMG's coarsening) outside the timing, as a run would amortise it. */
static int compare_petsc(wf_run *run, cf_rb *rb, const conv_setup *s, double dt, petsc_cmp *pc,
                         wf_status *st) {
  const st_mesh *m = rb->m;
  double *b = st_field_alloc(m), *phi = st_field_alloc(m);
  int failed = !b || !phi;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  st_op own = {0};
  const st_op *op = &rb->poisson;
  int rc = failed ? wf_fail(st, WF_ERR_RUNTIME, "out of memory for the PETSc comparison") : WF_OK;
  if (rc == WF_OK && rb->solver == CF_POISSON_FFT) { /* PETSc needs the matrix */
    const bool periodic[3] = {true, true, false};
    const st_coef_spec laplacian = {
        .kind = "smooth", .contrast = 1, .neumann = {false, false, true}};
    rc = st_op_create(&own, m, &run->wafer->fab, periodic, &laplacian, st);
    op = &own;
  }
  if (rc == WF_OK) {
    cf_rb_sample_rhs(rb, dt, b);
    double t[3];
    for (int r = 0; r < 3 && rc == WF_OK; r++) {
      MPI_Barrier(run->comm);
      double t0 = MPI_Wtime();
      rc = cf_rb_poisson_solve(rb, b, phi, &pc->our_its, st);
      t[r] = wf_slowest(run->comm, MPI_Wtime() - t0);
    }
    pc->ours = wf_median(t, 3);
    /* The solution is defined up to a constant (the null space): PETSc's
     * has mean zero; Jacobi-PCG's drifts by one. Compare the mean-free. */
    double sum = 0;
    for (int j = 0; j < m->lny; j++)
      for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++) sum += phi[c];
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, run->comm);
    for (int j = 0; j < m->lny; j++)
      for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++)
        phi[c] -= sum / (double)m->n_global;
  }
  char options[128];
  snprintf(options, sizeof options, "-ksp_constant_null_space%s",
           strcmp(pc->pc, "gamg") == 0 ? " -pc_type gamg" : "");
  const st_opts o = {.rtol = s->poisson.rtol,
                     .atol = 0,
                     .dtol = 1e10,
                     .max_its = s->poisson.max_its,
                     .precision = ST_DOUBLE};
  double t[3];
  for (int r = 0; r < 3 && rc == WF_OK; r++) {
    st_petsc_result pr;
    rc = st_petsc_check(op, ST_PCG, b, phi, &o, options, &pr, st);
    t[r] = wf_slowest(run->comm, pr.seconds);
    pc->their_its = pr.its, pc->rel_diff = pr.rel_diff;
    snprintf(pc->reason, sizeof pc->reason, "%s", pr.reason);
  }
  if (rc == WF_OK) pc->theirs = wf_median(t, 3), pc->done = true;
  if (op == &own) st_op_free(&own);
  free(b), free(phi);
  return rc;
}

static void report_petsc(wf_run *run, const petsc_cmp *pc) {
  if (run->verbose)
    printf(
        "cfd: a Poisson solve: ours %.4g s (%d iterations), PETSc KSPCG + %s %.4g s (%d, %s): "
        "ratio %.3f; solutions %.2e apart\n",
        pc->ours, pc->our_its, pc->pc, pc->theirs, pc->their_its, pc->reason, pc->ours / pc->theirs,
        pc->rel_diff);
  wf_json *j = run->summary;
  wf_json_begin(j, "petsc");
  wf_json_str(j, "pc", pc->pc);
  wf_json_num(j, "seconds_per_solve", pc->theirs);
  wf_json_int(j, "iterations", pc->their_its);
  wf_json_str(j, "reason", pc->reason);
  wf_json_num(j, "our_seconds_per_solve", pc->ours);
  wf_json_int(j, "our_iterations", pc->our_its);
  wf_json_num(j, "ratio", pc->ours / pc->theirs);
  wf_json_num(j, "solution_rel_diff", pc->rel_diff);
  wf_json_end(j);
}

/* ---- the wafer model ---- */

/* One step on the wafer, per PE: three stages, each the right-hand sides
 * (per cell about 70 additions and 50 multiplies or FMACs over the four
 * fields and their neighbours, operands from SRAM), the divergence and the
 * correction (about 12 operations), the Poisson solve (PCG: its measured
 * iterations, each as the stencil solvers' PCG iteration on a stored
 * 7-point operator; FFT: a forward and a backward pencil FFT of the
 * even-extended box, as ff_model projects the FFT workload's), and five
 * halo exchanges (the four fields and phi). */
static void project_model(wf_run *run, const st_mesh *m, const conv_setup *s, const cf_rb *rb) {
  const wf_hw *hw = run->wafer->fab.hw;
  const wf_grid *g = run->wafer->fab.grid;
  double cells = (double)m->brick_x * m->brick_y * m->nz;
  wf_range add = wf_model_vec(hw, WF_OP_ADD, s->wafer_prec, 82 * cells, 2, 1);
  wf_range mul = wf_model_vec(hw, WF_OP_FMAC, s->wafer_prec, 50 * cells, 2, 1);
  st_model it =
      st_model_iteration(hw, g, m->brick_x, m->brick_y, m->nz, ST_PCG, true, s->wafer_prec);
  double its = rb->solves ? (double)rb->poisson_its / rb->solves : 0;
  wf_range solve = {its * it.cycles.lo, its * it.cycles.hi};
  double solve_flops = its * it.flops_per_cell * (double)m->n_global;
  int arrays = it.arrays;
  if (rb->solver == CF_POISSON_FFT) { /* forward and backward, nx x ny x 2 nz complex */
    const int n[3] = {m->nx, m->ny, 2 * m->nz};
    ff_model fm =
        ff_model_transform(hw, g, run->wafer->dc.pe_nx, run->wafer->dc.pe_ny, n, 3, s->wafer_prec);
    solve = (wf_range){2 * fm.cycles.lo, 2 * fm.cycles.hi};
    solve_flops = 2 * fm.flops;
    arrays = 4; /* the doubled complex column, and the transposes' buffer */
  }
  double halo = 5 * st_op_halo_cycles(m, hw, g);
  wf_range stage = {add.lo + mul.lo + solve.lo + halo, add.hi + mul.hi + solve.hi + halo};
  wf_range cycles = {3 * stage.lo, 3 * stage.hi};
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(hw, cycles),
                               .flops = 3 * (132 * (double)m->n_global + solve_flops),
                               .bytes_per_pe = (14 + arrays) * cells * wf_prec_bytes(s->wafer_prec),
                               .sram_for_data = wf_model_sram_for_data(hw),
                               .pes_needed = (double)run->wafer->dc.pe_nx * run->wafer->dc.pe_ny,
                               .pes_offered = (double)hw->pe_nx * hw->pe_ny};
}

/* ---- checks, report, output ---- */

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
} conv_findings;

/* A perturbation is linear while the heat flux it adds (second order in its
 * amplitude) keeps the volume Nusselt number within 1e-3 of 1. */
static bool linear_row(const double *row) { return fabs(row[H_NU_VOLUME] - 1) < 1e-3; }

/* The kinetic energy's growth rate while the run was linear, past the
 * start's transient: over the second half of the rows before the first that
 * is not linear (NAN with fewer than 4 rows there), and over that half's
 * two halves, in q[0] and q[1]: from rest the energy first grows as t^2 and
 * the other modes decay, so the two agree only once the least stable mode
 * has taken over. */
static double linear_growth(const history *h, double q[2]) {
  int last = 0;
  while (last + 1 < h->n && linear_row(h->rows + (size_t)(last + 1) * H_COLS)) last++;
  double t_end = h->rows[(size_t)last * H_COLS + H_T], t_half = 0.5 * t_end;
  int n = 0;
  for (int r = 1; r <= last; r++) n += h->rows[(size_t)r * H_COLS + H_T] >= t_half;
  q[0] = log_slope(h, last, t_half, 0.75 * t_end);
  q[1] = log_slope(h, last, 0.75 * t_end, t_end);
  return n < 4 ? NAN : log_slope(h, last, t_half, t_end);
}

/* Linear theory for this run: the perturbation (cos(k x) sin(pi z), k = 2 pi
 * / Lx; uniform in y) excites the modes of wavenumber k alone while it is
 * small, and the least stable of them takes over. The grid's second
 * differences see a mode e^{qz} with relative error (q h)^2 / 12: scaling
 * every operator by 1 - e is, in the normal modes' cubic, sigma -> (1 - e)
 * sigma at Ra / (1 - e)^2, so sigma moves by e (|sigma| + 2 Ra |dsigma/dRa|);
 * allowed: twice that with e from the mode's largest wavenumber (docs/cfd.md). */
static void compare_linear_theory(wf_run *run, const conv_setup *s, const history *h,
                                  conv_findings *f) {
  f->k = 2 * ST_PI * s->nz / s->nx;
  f->ra_onset = cf_rb_neutral_ra(f->k);
  f->growth_linear = f->growth_theory = f->growth_allowed = NAN;
  if (s->side_walls) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "no-slip side walls: the flow has no separable normal mode to compare with");
    return;
  }
  double quarters[2];
  f->growth_linear = linear_growth(h, quarters);
  if (!(s->amplitude > 0) || !isfinite(f->growth_linear)) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "the run was not linear for 4 history rows past its start: a smaller "
                     "perturbation, more steps or a smaller energy_every would be");
    return;
  }
  double q, q1, h_grid = 1.0 / s->nz;
  f->growth_theory = cf_rb_growth_rate(s->ra, s->pr, f->k, &q);
  double ds_dra = (cf_rb_growth_rate(1.01 * s->ra, s->pr, f->k, &q1) - f->growth_theory) /
                  (0.01 * s->ra);
  double e = (q * q + f->k * f->k) * h_grid * h_grid / 12;
  f->growth_allowed = 2 * e * (fabs(f->growth_theory) + 2 * s->ra * fabs(ds_dra));
  if (!(fabs(quarters[0] - quarters[1]) <= f->growth_allowed / 2)) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "the growth had not settled into one normal mode while the run was linear "
                     "(the last two quarters of that phase grew at different rates): a smaller "
                     "perturbation or more steps would let it");
    f->growth_theory = NAN;
    return;
  }
  char what[240];
  snprintf(what, sizeof what,
           "growth rate while linear %.4g per thermal time against the normal mode's %.4g at Ra "
           "%g, k = %.4f (allowed %.2g: the grid's truncation)",
           f->growth_linear, f->growth_theory, s->ra, f->k, f->growth_allowed);
  wf_run_check(run, fabs(f->growth_linear - f->growth_theory) <= f->growth_allowed, what);
}

static void check(wf_run *run, const conv_setup *s, const cf_rb *rb, const history *h,
                  conv_findings *f) {
  char what[220];
  f->div_ratio = rb->div_ratio;
  /* PCG leaves its tolerance; the FFT solve is exact: round-off. */
  double allowed = s->solver == CF_POISSON_FFT ? 1e-12 : 10 * s->poisson.rtol;
  snprintf(what, sizeof what,
           "each projection leaves ||div u|| at most %.0e of what it found (worst %.2e, %d "
           "projections)",
           allowed, f->div_ratio, rb->solves);
  wf_run_check(run, rb->solves > 0 && f->div_ratio <= allowed, what);
  snprintf(what, sizeof what,
           "heat budget: the temperature's right-hand side sums over the cells to what the "
           "walls conduct in (%.2g of the round-off bound)",
           f->heat_budget);
  wf_run_check(run, f->heat_budget <= 1, what);
  f->growth = growth_rate(h);
  f->nu = late_mean(h, H_NU_VOLUME);
  f->nu_bottom = late_mean(h, H_NU_BOTTOM);
  f->nu_top = late_mean(h, H_NU_TOP);
  f->linear = true;
  for (int r = 0; r < h->n; r++) f->linear = f->linear && linear_row(h->rows + (size_t)r * H_COLS);
  compare_linear_theory(run, s, h, f);
}

static void report(wf_run *run, const conv_setup *s, const cf_rb *rb, const conv_result *r,
                   const conv_findings *f, const history *h) {
  const st_mesh *m = rb->m;
  double updates = (double)m->n_global * r->steps / r->seconds;
  double its = rb->solves ? (double)rb->poisson_its / rb->solves : 0;
  double lx = (double)s->nx / s->nz;
  if (run->verbose) {
    char box[64];
    if (rb->dims == 3)
      snprintf(box, sizeof box, "%.4g x %.4g x 1", lx, (double)s->ny / s->nz);
    else
      snprintf(box, sizeof box, "%.4g x 1", lx);
    printf(
        "cfd: convection %dD, %dx%dx%d cells (box %s, wavenumber 2 pi / Lx = %.4f, its onset Ra "
        "%.2f), Ra %g, Pr %g: %d steps to t = %.4g in %.3f s, %.2f Mcell/s\n",
        rb->dims, s->nx, s->ny, s->nz, box, f->k, f->ra_onset, s->ra, s->pr, r->steps, r->t,
        r->seconds, updates / 1e6);
    printf(
        "cfd: pressure: %d %s solves, %.1f iterations each, %.0f%% of the time; worst "
        "||div u|| after / before a projection %.2e\n",
        rb->solves, rb->solver == CF_POISSON_FFT ? "FFT" : "PCG", its,
        100 * rb->poisson_seconds / fmax(r->seconds, 1e-300), f->div_ratio);
    printf(
        "cfd: Nusselt (second half's mean): bottom %.5f, top %.5f, volume %.5f; last kinetic "
        "energy %.4g\n",
        f->nu_bottom, f->nu_top, f->nu, r->last.kinetic);
    if (isfinite(f->growth))
      printf("cfd: kinetic energy's growth rate over the second half: %.5g per thermal time\n",
             f->growth);
    if (isfinite(f->growth_theory))
      printf("cfd: growth rate while linear %.5g, the normal mode's %.5g (linear theory)\n",
             f->growth_linear, f->growth_theory);
    printf("cfd: wafer model (%s, %dx%d PEs): [%.3g, %.3g] s/step\n", run->wafer->hw.machine,
           run->wafer->dc.pe_nx, run->wafer->dc.pe_ny, run->model.seconds.lo,
           run->model.seconds.hi);
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "cfd");
  wf_json_str(j, "problem", "convection");
  long long cells[3] = {s->nx, s->ny, s->nz};
  wf_json_ints(j, "cells", cells, 3);
  wf_json_int(j, "dims", rb->dims);
  wf_json_num(j, "ra", s->ra);
  wf_json_num(j, "pr", s->pr);
  wf_json_int(j, "first_step", r->first_step);
  wf_json_int(j, "steps", r->steps);
  wf_json_num(j, "t", r->t);
  wf_json_num(j, "dt_last", r->dt_last);
  wf_json_num(j, "seconds_per_step", r->seconds / fmax(r->steps, 1));
  wf_json_num(j, "cell_updates_per_s", updates);
  wf_json_str(j, "poisson", rb->solver == CF_POISSON_FFT ? "fft" : "pcg");
  wf_json_int(j, "poisson_solves", rb->solves);
  wf_json_num(j, "poisson_iterations_per_solve", its);
  wf_json_num(j, "poisson_fraction_of_time", rb->poisson_seconds / fmax(r->seconds, 1e-300));
  wf_json_num(j, "divergence_ratio", f->div_ratio);
  wf_json_num(j, "max_divergence", r->last.max_div);
  wf_json_num(j, "nusselt", f->nu);
  wf_json_num(j, "nusselt_bottom", f->nu_bottom);
  wf_json_num(j, "nusselt_top", f->nu_top);
  wf_json_num(j, "kinetic_energy", r->last.kinetic);
  wf_json_num(j, "heat_budget_of_bound", f->heat_budget);
  if (isfinite(f->growth)) wf_json_num(j, "growth_rate", f->growth);
  wf_json_bool(j, "linear", f->linear);
  wf_json_num(j, "wavenumber", f->k);
  if (isfinite(f->ra_onset)) wf_json_num(j, "ra_onset", f->ra_onset);
  if (isfinite(f->growth_theory)) {
    wf_json_num(j, "growth_rate_linear", f->growth_linear);
    wf_json_num(j, "growth_rate_theory", f->growth_theory);
    wf_json_num(j, "growth_rate_allowed", f->growth_allowed);
  }
  double nus[3] = {r->last.nu_bottom, r->last.nu_top, r->last.nu_volume};
  wf_json_nums(j, "nusselt_last", nus, 3);
  wf_json_int(j, "history_rows", h->n);
  wf_json_end(j);
  wf_json_begin(j, "model");
  wf_projection_json(&run->model, j);
  wf_json_end(j);
  snprintf(run->headline, sizeof run->headline, "convection %dD Ra %g, %d steps, Nu %.3f", rb->dims,
           s->ra, r->steps, f->nu);
}

/* ---- the plot ---- */

/* The temperature in the x-z plane through y = ny / 2, on rank 0 as
 * [nz][nx] (NULL elsewhere, or out of memory). Collective. */
static double *gather_plane(wf_run *run, const cf_rb *rb) {
  const st_mesh *m = rb->m;
  int j = m->ny / 2 - m->y0, mine = j >= 0 && j < m->lny ? m->lnx : 0;
  double *row = malloc(((size_t)m->lnx + 1) * m->nz * sizeof *row);
  for (int i = 0; row && i < mine; i++)
    for (int k = 0; k < m->nz; k++) row[(size_t)k * m->lnx + i] = rb->f[CF_T][st_idx(m, i, j, k)];
  int *counts = NULL, *x0 = NULL, *displ = NULL;
  double *packed = NULL, *plane = NULL;
  if (run->rank == 0) {
    counts = wf_alloc_small((size_t)run->nranks, sizeof *counts, "counts");
    x0 = wf_alloc_small((size_t)run->nranks, sizeof *x0, "offsets");
    displ = wf_alloc_small((size_t)run->nranks, sizeof *displ, "offsets");
    packed = malloc((size_t)m->nx * m->nz * sizeof *packed);
    plane = malloc((size_t)m->nx * m->nz * sizeof *plane);
  }
  int send = mine * m->nz;
  MPI_Gather(&send, 1, MPI_INT, counts, 1, MPI_INT, 0, run->comm);
  MPI_Gather(&m->x0, 1, MPI_INT, x0, 1, MPI_INT, 0, run->comm);
  for (int r = 1; run->rank == 0 && r < run->nranks; r++) displ[r] = displ[r - 1] + counts[r - 1];
  MPI_Gatherv(row, send, MPI_DOUBLE, packed, counts, displ, MPI_DOUBLE, 0, run->comm);
  for (int r = 0; plane && packed && r < run->nranks; r++) {
    int width = counts[r] / m->nz;
    for (int k = 0; k < m->nz; k++)
      for (int i = 0; i < width; i++)
        plane[(size_t)k * m->nx + x0[r] + i] = packed[displ[r] + (size_t)k * width + i];
  }
  free(row), free(counts), free(x0), free(displ), free(packed);
  return plane;
}

typedef struct plot_data {
  const st_mesh *m;
  const double *plane;
  const history *h;
} plot_data;

/* "nx nz rows", the plane bottom first, the history (plot_convection.py). */
static void write_plot_data(FILE *f, const void *data) {
  const plot_data *p = data;
  fprintf(f, "%d %d %d\n", p->m->nx, p->m->nz, p->h->n);
  for (int k = 0; k < p->m->nz; k++)
    for (int i = 0; i < p->m->nx; i++)
      fprintf(f, "%.6g%c", p->plane[(size_t)k * p->m->nx + i], i + 1 < p->m->nx ? ' ' : '\n');
  for (int r = 0; r < p->h->n; r++)
    for (int c = 0; c < H_COLS; c++)
      fprintf(f, "%.9g%c", p->h->rows[(size_t)r * H_COLS + c], c + 1 < H_COLS ? ' ' : '\n');
}

static int plot(wf_run *run, const cf_rb *rb, const history *h, const char *png, wf_status *st) {
  double *plane = gather_plane(run, rb);
  int failed = run->rank == 0 && !plane;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the plot's plane");
  plot_data data = {rb->m, plane, h};
  char title[160];
  snprintf(title, sizeof title, "Rayleigh-Benard, Ra %g, Pr %g, %dx%dx%d cells: T at y = Ly/2",
           rb->ra, rb->pr, rb->m->nx, rb->m->ny, rb->m->nz);
  int rc = wf_run_plot(run, "plot_convection.py", png, title,
                       write_plot_data, &data, st);
  free(plane);
  return rc;
}

int cfd_convection_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  conv_setup s;
  if (read_setup(d, &s, st) != WF_OK) return st->code;
  st_mesh m;
  if (st_mesh_create(&m, run->wafer, s.nx, s.ny, s.nz, st) != WF_OK)
    return wf_deck_blame(d, "cfd", "nx", st);
  cf_rb rb;
  const cf_rb_params params = {
      .ra = s.ra, .pr = s.pr, .side_walls = s.side_walls, .solver = s.solver, .pcg = s.poisson};
  int rc = cf_rb_create(&rb, &m, &run->wafer->fab, &params, st);
  if (rc != WF_OK && st->code == WF_ERR_INPUT)
    rc = wf_deck_blame(d, "cfd", s.solver == CF_POISSON_FFT && s.side_walls ? "poisson" : "nx", st);
  history h = {0};
  conv_result r = {0};
  checkpoints ck = {wf_deck_str(d, "cfd", "checkpoint"),
                    (int)wf_deck_int(d, "cfd", "checkpoint_every"), -1};
  const char *restart = wf_deck_str(d, "cfd", "restart");
  if (rc == WF_OK && restart[0]) {
    long long step = 0;
    rc = cf_rb_checkpoint_read(&rb, run->comm, restart, &step, &r.t0, st);
    if (rc == WF_OK) rc = read_history(run->comm, restart, &h, st);
    r.restarted = true;
    r.first_step = (int)step;
    if (rc != WF_OK && st->code == WF_ERR_INPUT)
      rc = wf_deck_blame(d, "cfd", "restart", st);
    else if (rc == WF_OK && (s.t_end > 0 ? r.t0 >= s.t_end : step >= s.steps))
      rc = wf_deck_fail(d, "cfd", "restart", st,
                        "the checkpoint is at step %lld, t = %.6g: nothing to run (cfd.steps or "
                        "cfd.t_end is where the whole run ends)",
                        step, r.t0);
  } else if (rc == WF_OK) {
    cf_rb_init(&rb, s.amplitude);
  }
  if (rc == WF_OK && !restart[0]) {
    double limit = cf_rb_dt_limit(&rb); /* at rest: diffusion's */
    if (s.dt > limit)
      rc = wf_deck_fail(d, "cfd", "dt", st,
                        "%g violates the stability limit of the explicit scheme (SSP-RK3, "
                        "diffusion at Pr = %g): dt <= %.6g thermal times at nz = %d, less as the "
                        "flow speeds up",
                        s.dt, s.pr, limit, s.nz);
  }
  series sr = {.every = (int)wf_deck_int(d, "cfd", "snapshot_every")};
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && sr.every > 0) {
    if (!out[0])
      rc = wf_deck_fail(d, "cfd", "snapshot_every", st,
                        "a time series needs output.file: its snapshots go beside it");
    series_base(out, sr.base, sizeof sr.base);
  }
  if (rc == WF_OK && restart[0] && sr.every > 0 &&
      (rc = read_series(run, restart, &sr, r.first_step, st)) != WF_OK)
    rc = wf_deck_blame(d, "cfd", "restart", st);
  if (rc == WF_OK) rc = run_steps(run, &s, &rb, &ck, &sr, &h, &r, st);
  wf_status_agree(run->comm, st);
  rc = st->code;
  petsc_cmp pc = {.pc = wf_deck_str(d, "cfd", "petsc")};
  if (rc == WF_OK && strcmp(pc.pc, "none") != 0)
    rc = compare_petsc(run, &rb, &s, r.dt_last > 0 ? r.dt_last : cf_rb_dt_limit(&rb), &pc, st);
  if (rc == WF_OK) {
    conv_findings f;
    f.heat_budget = cf_rb_heat_budget(&rb);
    check(run, &s, &rb, &h, &f);
    if (pc.done) {
      char what[200];
      snprintf(what, sizeof what,
               "the pressure's Poisson solve against PETSc's (KSPCG, %s): %.2e relative (allowed "
               "1e-6)",
               pc.pc, pc.rel_diff);
      wf_run_check(run, pc.rel_diff <= 1e-6, what);
    }
    project_model(run, &m, &s, &rb);
    report(run, &s, &rb, &r, &f, &h);
    if (pc.done) report_petsc(run, &pc);
    run->seconds = r.seconds;
    run->wafer_seconds = wf_range_scale(run->model.seconds, r.steps);
    if (out[0]) rc = write_output(run, &rb, &h, &r, out, st);
    const char *png = wf_deck_str(d, "cfd", "plot");
    if (rc == WF_OK && png[0]) rc = plot(run, &rb, &h, png, st);
  }
  free(h.rows), free(sr.rows);
  cf_rb_free(&rb);
  return rc;
}
