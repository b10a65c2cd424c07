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

/* One string, or an array of n strings (fixed length). */
static herr_t attr_strs(hid_t obj, const char *name, const char *const *v, int n) {
  size_t len = 1;
  for (int i = 0; i < n; i++) len = strlen(v[i]) + 1 > len ? strlen(v[i]) + 1 : len;
  char *buf = calloc((size_t)n, len);
  if (!buf) return -1;
  for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * len, v[i], strlen(v[i]));
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, len);
  hsize_t dim = (hsize_t)n;
  hid_t s = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  herr_t rc = attr(obj, name, t, s, buf);
  H5Sclose(s);
  H5Tclose(t);
  free(buf);
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

/* A time series of up to `max_frames` frames, one chunk a frame, holding
 * dims[0] frames now: a trajectory grows by one frame at a time
 * (H5Dset_extent), so that the file, flushed after every frame, holds
 * exactly the frames written whenever the run stops. */
static hid_t series(hid_t parent, const char *name, hid_t type, int ndim, const hsize_t *dims,
                    hsize_t max_frames) {
  if (max_frames == 0) return dataset(parent, name, type, ndim, dims);
  hsize_t chunk[3] = {1, ndim > 1 ? dims[1] : 1, ndim > 2 ? dims[2] : 1};
  hsize_t maxdims[3] = {max_frames, ndim > 1 ? dims[1] : 1, ndim > 2 ? dims[2] : 1};
  hid_t s = H5Screate_simple(ndim, dims, maxdims);
  hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  /* every frame is written whole: no fill values for the new chunks */
  hid_t d = p < 0 || H5Pset_chunk(p, ndim, chunk) < 0 || H5Pset_fill_time(p, H5D_FILL_TIME_NEVER) < 0
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
 * [n][inner...]; ids of the three datasets into out[]. */
static herr_t element(hid_t parent, const char *name, long long n, long long max_frames,
                      int inner_ndim, const hsize_t *inner, const char *unit, hid_t out[3]) {
  hid_t g = group(parent, name);
  if (g < 0) return -1;
  hsize_t dims[3] = {(hsize_t)n, inner_ndim > 0 ? inner[0] : 0, inner_ndim > 1 ? inner[1] : 0};
  hsize_t m = (hsize_t)max_frames;
  out[0] = series(g, "step", H5T_NATIVE_INT64, 1, dims, m);
  out[1] = series(g, "time", H5T_NATIVE_DOUBLE, 1, dims, m);
  out[2] = series(g, "value", H5T_NATIVE_DOUBLE, 1 + inner_ndim, dims, m);
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
static herr_t write_particles(md_h5md *h, const md_sim *sim, bool root, double *rows) {
  hid_t p = group(h->f.file, "particles");
  hid_t all = p < 0 ? -1 : group(p, "all");
  hid_t box = all < 0 ? -1 : group(all, "box");
  herr_t rc = box < 0 ? -1 : 0;
  const int dim = 3;
  const char *periodic[3] = {"periodic", "periodic", "periodic"};
  if (rc == 0) rc = attr_ints(box, "dimension", &dim, 1);
  if (rc == 0) rc = attr_strs(box, "boundary", periodic, 3);
  hsize_t three = 3, zero = 0, n = (hsize_t)h->natoms;
  hid_t edges = rc == 0 ? dataset(box, "edges", H5T_NATIVE_DOUBLE, 1, &three) : -1;
  if (edges < 0) rc = -1;
  if (rc == 0) rc = attr_str(edges, "unit", "angstrom");
  if (rc == 0)
    rc = write_block(edges, H5T_NATIVE_DOUBLE, h->f.dxpl, root, 1, &zero, &three, sim->dom.box.len);
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
  if (rc == 0) rc = element(all, "position", 0, h->nframes, 2, inner, "angstrom", h->pos);
  if (rc == 0) rc = element(all, "velocity", 0, h->nframes, 2, inner, "angstrom ps-1", h->vel);
  if (edges >= 0) H5Dclose(edges);
  if (box >= 0) H5Gclose(box);
  if (all >= 0) H5Gclose(all);
  if (p >= 0) H5Gclose(p);
  return rc;
}

int md_h5md_create(md_h5md *h, const wf_run *run, const char *path, const md_sim *sim,
                   long long nframes, wf_status *st) {
  memset(h, 0, sizeof *h);
  h->natoms = sim->natoms;
  h->nframes = nframes;
  if (wf_run_h5_create(run, path, &h->f, st) != WF_OK) return st->code;
  /* positions and velocities of every frame, ids and species, observables */
  double bytes = (double)nframes * (double)h->natoms * 48 + (double)h->natoms * 16 + nframes * 32.0;
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
    herr_t e = write_header(h, run);
    e = write_particles(h, sim, run->rank == 0, rows) < 0 ? -1 : e; /* both: collective */
    if (e < 0 || wf_fault("h5md_create", run->comm))
      wf_fail(st, WF_ERR_RUNTIME, "HDF5: writing the H5MD layout of '%s' failed", path);
    wf_status_agree(run->comm, st);
    rc = st->code;
  }
  free(rows);
  if (rc != WF_OK) md_h5md_discard(h);
  return rc;
}

int md_h5md_frame(md_h5md *h, const md_sim *sim, wf_status *st) {
  MPI_Comm comm = h->f.comm;
  int rank;
  MPI_Comm_rank(comm, &rank);
  const md_vec *vecs[2] = {sim->atoms.x, sim->atoms.v};
  hid_t *ids[2] = {h->pos, h->vel};
  int rc = WF_OK;
  for (int k = 0; k < 2 && rc == WF_OK; k++) {
    double *rows = NULL;
    long long n;
    if ((rc = md_gather_vec(&sim->atoms, vecs[k], comm, &rows, &n, st)) != WF_OK) break;
    bool root = rank == 0;
    for (long long i = 0; root && i < n; i++) /* drop the id column in place */
      memmove(rows + 3 * i, rows + 4 * i + 1, 3 * sizeof *rows);
    hsize_t start[3] = {(hsize_t)h->frame, 0, 0}, count[3] = {1, (hsize_t)n, 3};
    int64_t step = sim->step;
    double time = (double)sim->step * sim->par.dt;
    wf_status_clear(st);
    /* Collective writes: every rank makes every call, whatever failed
     * before on it (a rank that skipped one would leave the others waiting
     * in it); the errors are combined afterwards. */
    herr_t e[4];
    hsize_t grown[3] = {(hsize_t)h->frame + 1, (hsize_t)h->natoms, 3}; /* the same on every rank */
    e[3] = 0;
    for (int i = 0; i < 3; i++) e[3] = H5Dset_extent(ids[k][i], grown) < 0 ? -1 : e[3];
    e[0] = write_block(ids[k][0], H5T_NATIVE_INT64, h->f.dxpl, root, 1, start, count, &step);
    e[1] = write_block(ids[k][1], H5T_NATIVE_DOUBLE, h->f.dxpl, root, 1, start, count, &time);
    e[2] = write_block(ids[k][2], H5T_NATIVE_DOUBLE, h->f.dxpl, root, 3, start, count, rows);
    if (k == 1 && H5Fflush(h->f.file, H5F_SCOPE_GLOBAL) < 0) e[3] = -1; /* a kill keeps it */
    if (wf_fault("h5md_frame", comm)) e[2] = -1;
    if (e[0] < 0 || e[1] < 0 || e[2] < 0 || e[3] < 0)
      wf_fail(st, WF_ERR_RUNTIME, "HDF5: writing frame %lld of '%s' failed (disk full?)", h->frame,
              h->f.path);
    free(rows);
    wf_status_agree(comm, st);
    rc = st->code;
  }
  h->frame++;
  return rc;
}

int md_h5md_close(md_h5md *h, const md_thermo_row *rows, int nrows, double dt, wf_status *st) {
  int rank;
  MPI_Comm_rank(h->f.comm, &rank);
  close_all(h->pos, 3);
  close_all(h->vel, 3);
  static const char *names[5] = {"temperature", "potential_energy", "kinetic_energy",
                                 "total_energy", "pressure"};
  static const char *units[5] = {"K", "eV", "eV", "eV", "bar"};
  int64_t *step = malloc(((size_t)nrows + 1) * sizeof *step);
  double *time = malloc(((size_t)nrows + 1) * sizeof *time);
  double *value = malloc(((size_t)nrows + 1) * sizeof *value);
  hid_t obs = group(h->f.file, "observables");
  herr_t err = !step || !time || !value || obs < 0 ? -1 : 0;
  for (int i = 0; err == 0 && i < nrows; i++) step[i] = rows[i].step, time[i] = rows[i].step * dt;
  hsize_t zero = 0, n = (hsize_t)nrows;
  /* Collective calls: every rank makes all of them whatever failed on it
   * (one that stopped early would leave the others waiting); errors are
   * combined at the end. */
  bool root = rank == 0;
  for (int k = 0; k < 5; k++) {
    for (int i = 0; value && i < nrows; i++) {
      const md_thermo_row *r = &rows[i];
      const double v[5] = {r->temp, r->pe, r->ke, r->etotal, r->press};
      value[i] = v[k];
    }
    hid_t d[3] = {0, 0, 0};
    herr_t e[4];
    e[0] = element(obs, names[k], nrows, 0, 0, NULL, units[k], d);
    e[1] = write_block(d[0], H5T_NATIVE_INT64, h->f.dxpl, root && step, 1, &zero, &n, step);
    e[2] = write_block(d[1], H5T_NATIVE_DOUBLE, h->f.dxpl, root && time, 1, &zero, &n, time);
    e[3] = write_block(d[2], H5T_NATIVE_DOUBLE, h->f.dxpl, root && value, 1, &zero, &n, value);
    for (int i = 0; i < 4; i++) err = e[i] < 0 ? -1 : err;
    close_all(d, 3);
  }
  if (obs >= 0) H5Gclose(obs);
  if (wf_fault("h5md_close", h->f.comm)) err = -1;
  free(step), free(time), free(value);
  wf_status_clear(st);
  if (err < 0) wf_fail(st, WF_ERR_RUNTIME, "HDF5: writing the observables of '%s' failed", h->f.path);
  wf_status_agree(h->f.comm, st);
  if (st->code != WF_OK) {
    wf_h5_discard(&h->f);
    return st->code;
  }
  return wf_h5_close(&h->f, st);
}

void md_h5md_discard(md_h5md *h) {
  close_all(h->pos, 3);
  close_all(h->vel, 3);
  wf_h5_discard(&h->f);
}
