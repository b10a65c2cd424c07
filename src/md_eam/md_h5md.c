/* The MD run's HDF5 output in the H5MD layout (md_h5md.h): the file's fixed parts, then one
 * frame at a time (positions, velocities, box, thermo quantities) gathered on rank 0, appended
 * and flushed. */
#include "md_h5md.h"

#include <stdlib.h>
#include <string.h>

#include "wf_fault.h"
#include "wf_io.h"
#include "wf_wafer.h"

/* ---- small HDF5 helpers; each returns < 0 on failure ---------------------- */

static hid_t group(hid_t parent, const char *name) {
  return H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

static herr_t attr(hid_t obj, const char *name, hid_t type, hid_t space, const void *v) {
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, v);
  if (a >= 0) H5Aclose(a);
  return rc;
}

/* One string, or an array of n strings, variable-length (UTF-8): readers
 * get text, not bytes (MDAnalysis compares the unit attributes as str). */
static herr_t attr_strs(hid_t obj, const char *name, const char *const *v, int n) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  hsize_t dim = (hsize_t)n;
  hid_t s = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  herr_t rc = attr(obj, name, t, s, v);
  H5Sclose(s);
  H5Tclose(t);
  return rc;
}

static herr_t attr_str(hid_t obj, const char *name, const char *v) { return attr_strs(obj, name, &v, 1); }

static herr_t attr_ints(hid_t obj, const char *name, const int *v, int n) {
  hsize_t dim = (hsize_t)n;
  hid_t s = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  herr_t rc = attr(obj, name, H5T_NATIVE_INT, s, v);
  H5Sclose(s);
  return rc;
}

static hid_t dataset(hid_t parent, const char *name, hid_t type, int ndim, const hsize_t *dims) {
  hid_t s = H5Screate_simple(ndim, dims, NULL);
  hid_t d = H5Dcreate2(parent, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Sclose(s);
  return d;
}

/* A time series of up to `max_frames` frames, one chunk a frame, empty at
 * first (`inner`: the shape of one frame's value): a trajectory grows by one
 * frame at a time (H5Dset_extent), so that the file, flushed after every
 * frame, holds exactly the frames written whenever the run stops. */
static hid_t series(hid_t parent, const char *name, hid_t type, int inner_ndim,
                    const hsize_t *inner, hsize_t max_frames) {
  hsize_t dims[3] = {0, 1, 1}, maxdims[3] = {max_frames, 1, 1}, chunk[3] = {1, 1, 1};
  for (int d = 0; d < inner_ndim; d++) dims[1 + d] = maxdims[1 + d] = chunk[1 + d] = inner[d];
  hid_t s = H5Screate_simple(1 + inner_ndim, dims, maxdims);
  hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  /* every frame is written whole: no fill values for the new chunks */
  hid_t d = p < 0 || H5Pset_chunk(p, 1 + inner_ndim, chunk) < 0 ||
                    H5Pset_fill_time(p, H5D_FILL_TIME_NEVER) < 0
                ? -1
                : H5Dcreate2(parent, name, type, s, H5P_DEFAULT, p, H5P_DEFAULT);
  if (p >= 0) H5Pclose(p);
  H5Sclose(s);
  return d;
}

/* Collective write of a block at `start` of size `count`; only rank 0 has data. */
static herr_t write_block(hid_t dset, hid_t type, hid_t dxpl, bool mine, int ndim,
                          const hsize_t *start, const hsize_t *count, const void *data) {
  hid_t fs = H5Dget_space(dset), ms = H5Screate_simple(ndim, count, NULL);
  if (mine) {
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
  } else {
    H5Sselect_none(fs);
    H5Sselect_none(ms);
  }
  herr_t rc = H5Dwrite(dset, type, ms, fs, dxpl, data);
  H5Sclose(ms);
  H5Sclose(fs);
  return rc;
}

/* A time-dependent H5MD element: group `name` with step, time and value
 * [frame][inner...], empty, for up to `max_frames` frames; ids of the three
 * datasets into out[]. */
static herr_t element(hid_t parent, const char *name, long long max_frames, int inner_ndim,
                      const hsize_t *inner, const char *unit, hid_t out[3]) {
  hid_t g = group(parent, name);
  if (g < 0) return -1;
  hsize_t m = (hsize_t)max_frames;
  out[0] = series(g, "step", H5T_NATIVE_INT64, 0, NULL, m);
  out[1] = series(g, "time", H5T_NATIVE_DOUBLE, 0, NULL, m);
  out[2] = series(g, "value", H5T_NATIVE_DOUBLE, inner_ndim, inner, m);
  herr_t rc = out[0] < 0 || out[1] < 0 || out[2] < 0 ? -1 : 0;
  if (rc == 0) rc = attr_str(out[1], "unit", "ps");
  if (rc == 0 && unit[0]) rc = attr_str(out[2], "unit", unit);
  H5Gclose(g);
  return rc;
}

static void close_all(hid_t *ids, int n) {
  for (int i = 0; i < n; i++)
    if (ids[i] > 0) H5Dclose(ids[i]), ids[i] = 0;
}

/* ---- the file ------------------------------------------------------------------ */

static herr_t write_header(md_h5md *h, const wf_run *run) {
  hid_t root = h->f.file;
  hid_t g = group(root, "h5md");
  if (g < 0) return -1;
  const int version[2] = {1, 1};
  herr_t rc = attr_ints(g, "version", version, 2);
  hid_t a = group(g, "author"), c = group(g, "creator");
  if (rc == 0) rc = a < 0 ? -1 : attr_str(a, "name", "wafer eam");
  if (rc == 0) rc = c < 0 ? -1 : attr_str(c, "name", "wafer");
  if (rc == 0) rc = attr_str(c, "version", run->version);
  if (a >= 0) H5Gclose(a);
  if (c >= 0) H5Gclose(c);
  H5Gclose(g);
  return rc;
}

/* box, id, species, and the position and velocity elements */
static herr_t write_particles(md_h5md *h, bool root, double *rows) {
  hid_t p = group(h->f.file, "particles");
  hid_t all = p < 0 ? -1 : group(p, "all");
  hid_t box = all < 0 ? -1 : group(all, "box");
  herr_t rc = box < 0 ? -1 : 0;
  const int dim = 3;
  const char *periodic[3] = {"periodic", "periodic", "periodic"};
  if (rc == 0) rc = attr_ints(box, "dimension", &dim, 1);
  if (rc == 0) rc = attr_strs(box, "boundary", periodic, 3);
  hsize_t zero = 0, n = (hsize_t)h->natoms;
  /* the edges as a time series of box matrices (diagonal: the box is
   * orthorhombic), the form MDAnalysis reads */
  hsize_t matrix[2] = {3, 3};
  if (rc == 0) rc = element(box, "edges", h->nframes, 2, matrix, "angstrom", h->edges);
  /* id and species from the gathered (id, type, 0, 0) rows */
  int64_t *ids = malloc((n + 1) * sizeof *ids);
  if (!ids) rc = -1;
  const char *names[2] = {"id", "species"};
  for (int k = 0; k < 2 && rc == 0; k++) {
    for (hsize_t i = 0; root && i < n; i++) ids[i] = (int64_t)rows[4 * i + k];
    hid_t d = dataset(all, names[k], H5T_NATIVE_INT64, 1, &n);
    rc = d < 0 ? -1 : write_block(d, H5T_NATIVE_INT64, h->f.dxpl, root, 1, &zero, &n, ids);
    if (d >= 0) H5Dclose(d);
  }
  free(ids);
  hsize_t inner[2] = {n, 3};
  if (rc == 0) rc = element(all, "position", h->nframes, 2, inner, "angstrom", h->pos);
  if (rc == 0) rc = element(all, "velocity", h->nframes, 2, inner, "Angstrom ps-1", h->vel);
  if (box >= 0) H5Gclose(box);
  if (all >= 0) H5Gclose(all);
  if (p >= 0) H5Gclose(p);
  return rc;
}

static const char *const obs_names[MD_H5MD_NOBS] = {"temperature", "potential_energy",
                                                    "kinetic_energy", "total_energy", "pressure"};
static const char *const obs_units[MD_H5MD_NOBS] = {"K", "eV", "eV", "eV", "bar"};

/* /observables: one time series per thermo quantity, a value per frame (the
 * frames' steps: readers such as MDAnalysis index them by frame). */
static herr_t write_observables_layout(md_h5md *h) {
  hid_t obs = group(h->f.file, "observables");
  herr_t rc = obs < 0 ? -1 : 0;
  for (int k = 0; k < MD_H5MD_NOBS; k++) /* every call made: collective */
    rc = element(obs, obs_names[k], h->nframes, 0, NULL, obs_units[k], h->obs[k]) < 0 ? -1 : rc;
  if (obs >= 0) H5Gclose(obs);
  return rc;
}

int md_h5md_create(md_h5md *h, const wf_run *run, const char *path, const md_sim *sim,
                   long long nframes, wf_status *st) {
  memset(h, 0, sizeof *h);
  h->natoms = sim->natoms;
  h->nframes = nframes;
  if (wf_run_h5_create(run, path, &h->f, st) != WF_OK) return st->code;
  /* per frame: positions and velocities, the box, the observables (with
   * their steps and times); once: ids and species */
  double bytes = (double)nframes * ((double)h->natoms * 48 + 256) + (double)h->natoms * 16;
  if (wf_h5_reserve(&h->f, bytes, st) != WF_OK) {
    md_h5md_discard(h);
    return st->code;
  }
  /* species as a vector so that the id-sorted gather carries it */
  const md_atoms *a = &sim->atoms;
  md_vec *t = malloc(((size_t)a->nlocal + 1) * sizeof *t);
  double *rows = NULL;
  long long n;
  int rc = t ? WF_OK : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  for (int i = 0; t && i < a->nlocal; i++) t[i][0] = a->type[i], t[i][1] = t[i][2] = 0;
  if (rc == WF_OK) rc = md_gather_vec(a, t, run->comm, &rows, &n, st);
  free(t);
  if (rc == WF_OK) {
    wf_status_clear(st);
    herr_t e = write_header(h, run); /* all three: collective */
    e = write_particles(h, run->rank == 0, rows) < 0 ? -1 : e;
    e = write_observables_layout(h) < 0 ? -1 : e;
    if (e < 0 || wf_fault("h5md_create", run->comm))
      wf_fail(st, WF_ERR_RUNTIME, "HDF5: writing the H5MD layout of '%s' failed", path);
    wf_status_agree(run->comm, st);
    rc = st->code;
  }
  free(rows);
  if (rc != WF_OK) md_h5md_discard(h);
  return rc;
}

/* Grow a time series by this frame and write its step, time and value
 * (`count`: the value's block, rank 0's; the others write nothing). Every
 * call is made whatever failed before: they are collective. */
static herr_t append(const md_h5md *h, const hid_t ids[3], int ndim, const hsize_t *grown,
                     const hsize_t *count, bool root, int64_t step, double time,
                     const double *value) {
  const hsize_t start[3] = {(hsize_t)h->frame, 0, 0}, one[1] = {1};
  herr_t e = 0;
  for (int i = 0; i < 3; i++) e = H5Dset_extent(ids[i], grown) < 0 ? -1 : e;
  e = write_block(ids[0], H5T_NATIVE_INT64, h->f.dxpl, root, 1, start, one, &step) < 0 ? -1 : e;
  e = write_block(ids[1], H5T_NATIVE_DOUBLE, h->f.dxpl, root, 1, start, one, &time) < 0 ? -1 : e;
  e = write_block(ids[2], H5T_NATIVE_DOUBLE, h->f.dxpl, root, ndim, start, count, value) < 0 ? -1 : e;
  return e;
}

int md_h5md_frame(md_h5md *h, const md_sim *sim, wf_status *st) {
  MPI_Comm comm = h->f.comm;
  int rank;
  MPI_Comm_rank(comm, &rank);
  const bool root = rank == 0;
  const hsize_t f = (hsize_t)h->frame, natoms = (hsize_t)h->natoms;
  const int64_t step = sim->step;
  const double time = (double)sim->step * sim->par.dt;
  /* positions and velocities, gathered in id order on rank 0 */
  const md_vec *vecs[2] = {sim->atoms.x, sim->atoms.v};
  hid_t *ids[2] = {h->pos, h->vel};
  herr_t e = 0;
  for (int k = 0; k < 2; k++) {
    double *rows = NULL;
    long long n = 0;
    if (md_gather_vec(&sim->atoms, vecs[k], comm, &rows, &n, st) != WF_OK) return st->code;
    for (long long i = 0; root && i < n; i++) /* drop the id column in place */
      memmove(rows + 3 * i, rows + 4 * i + 1, 3 * sizeof *rows);
    const hsize_t grown[3] = {f + 1, natoms, 3}, count[3] = {1, (hsize_t)n, 3};
    e = append(h, ids[k], 3, grown, count, root, step, time, rows) < 0 ? -1 : e;
    free(rows);
  }
  /* the box matrix, and the thermo quantities of this step */
  const double *len = sim->dom.box.len;
  const double edges[9] = {len[0], 0, 0, 0, len[1], 0, 0, 0, len[2]};
  const hsize_t grown_box[3] = {f + 1, 3, 3}, count_box[3] = {1, 3, 3};
  e = append(h, h->edges, 3, grown_box, count_box, root, step, time, edges) < 0 ? -1 : e;
  const md_thermo_row r = md_sim_thermo(sim); /* collective */
  const double obs[MD_H5MD_NOBS] = {r.temp, r.pe, r.ke, r.etotal, r.press};
  const hsize_t grown_obs[1] = {f + 1}, one[1] = {1};
  for (int k = 0; k < MD_H5MD_NOBS; k++)
    e = append(h, h->obs[k], 1, grown_obs, one, root, step, time, &obs[k]) < 0 ? -1 : e;
  if (H5Fflush(h->f.file, H5F_SCOPE_GLOBAL) < 0) e = -1; /* a kill keeps this frame */
  if (wf_fault("h5md_frame", comm)) e = -1;
  wf_status_clear(st);
  if (e < 0)
    wf_fail(st, WF_ERR_RUNTIME, "HDF5: writing frame %lld of '%s' failed (disk full?)", h->frame,
            h->f.path);
  wf_status_agree(comm, st);
  h->frame++;
  return st->code;
}

static void close_datasets(md_h5md *h) {
  close_all(h->pos, 3);
  close_all(h->vel, 3);
  close_all(h->edges, 3);
  for (int k = 0; k < MD_H5MD_NOBS; k++) close_all(h->obs[k], 3);
}

int md_h5md_close(md_h5md *h, wf_status *st) {
  close_datasets(h);
  wf_status_clear(st);
  if (wf_fault("h5md_close", h->f.comm))
    wf_fail(st, WF_ERR_RUNTIME, "HDF5: closing the H5MD datasets of '%s' failed", h->f.path);
  wf_status_agree(h->f.comm, st);
  return wf_h5_finish(&h->f, st->code, st);
}

void md_h5md_discard(md_h5md *h) {
  close_datasets(h);
  wf_h5_discard(&h->f);
}
