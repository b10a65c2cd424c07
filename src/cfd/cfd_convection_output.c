/* The convection run's files (cfd_convection_parts.h): the output (the last
 * state's temperature and velocity at the cell centres, and the history),
 * the time series of snapshots beside it with its XDMF series file, and the
 * plot of the mid-plane's temperature with the history. */
#include "cfd_convection.h"
#include "cfd_convection_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wf_checkpoint.h"
#include "wf_files.h"
#include "wf_io.h"
#include "wf_memory.h"

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

int conv_write_output(wf_run *run, cf_rb *rb, const history *h, const conv_result *r,
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

/* The series' base name: output.file less ".h5". */
void conv_series_base(const char *out, char *base, size_t len) {
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
  conv_series_base(out, base, sizeof base);
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
int conv_snapshot(wf_run *run, cf_rb *rb, series *sr, int n, double t, wf_status *st) {
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
int conv_read_series(wf_run *run, const char *path, series *sr, int first_step, wf_status *st) {
  unsigned long long len;
  /* (step, time) pairs, at most one a step up to first_step */
  unsigned long long most = 2 * ((unsigned long long)first_step + 1);
  if (wf_checkpoint_read_series(run->comm, path, "snapshots", most, &sr->rows, &len, st) != WF_OK)
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

int conv_plot(wf_run *run, const cf_rb *rb, const history *h, const char *png, wf_status *st) {
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

