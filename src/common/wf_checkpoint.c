/* Checkpoints (wf_checkpoint.h): named distributed datasets and a step counter written to one
 * HDF5 file atomically, read back checked (sizes, finite values), and the deck state and
 * series a restart needs. */
#include "wf_checkpoint.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_fault.h"
#include "wf_io.h"
#include "wf_memory.h"

static double bytes_of(const wf_ckpt_var *vars, int n) {
  double bytes = 0;
  for (int i = 0; i < n; i++) bytes += 8.0 * (double)vars[i].global_n;
  return bytes;
}

static int write_vars(wf_h5file *f, const wf_ckpt_var *vars, int n, const wf_ckpt_scatter *sc,
                      wf_status *st) {
  int rc = WF_OK;
  for (int i = 0; i < n && rc == WF_OK; i++) {
    if (vars[i].global_n == 0) continue; /* an empty series (wf_checkpoint_read_series) */
    const wf_ckpt_var *v = &vars[i];
    wf_h5_block b = {.ndim = 1, .global = &v->global_n, .offset = &v->offset, .count = &v->count};
    rc = sc ? wf_h5_write_pieces(f, v->name, v->type, v->global_n, v->count, sc->pieces,
                                 sc->npieces, v->data, st)
            : wf_h5_write(f, v->name, v->type, &b, v->data, false, st);
  }
  return rc;
}

int wf_checkpoint_write(MPI_Comm comm, const char *path, long long step, const char *state,
                        const wf_ckpt_var *vars, int nvars, wf_status *st) {
  return wf_checkpoint_write_more(comm, path, step, state, vars, nvars, NULL, 0, st);
}

int wf_checkpoint_write_more(MPI_Comm comm, const char *path, long long step, const char *state,
                             const wf_ckpt_var *vars, int nvars, const wf_ckpt_var *more,
                             int nmore, wf_status *st) {
  return wf_checkpoint_write_scattered(comm, path, step, state, vars, nvars, NULL, more, nmore,
                                       st);
}

int wf_checkpoint_write_scattered(MPI_Comm comm, const char *path, long long step,
                                  const char *state, const wf_ckpt_var *vars, int nvars,
                                  const wf_ckpt_scatter *scatter, const wf_ckpt_var *more,
                                  int nmore, wf_status *st) {
  wf_h5file f;
  wf_status_clear(st);
  if (wf_h5_create(&f, comm, path, st) != WF_OK) return st->code;
  int rc = wf_h5_reserve(&f, bytes_of(vars, nvars) + bytes_of(more, nmore), st);
  if (rc == WF_OK) rc = wf_h5_attr_int(&f, "step", step, st);
  if (rc == WF_OK && state) rc = wf_h5_attr_str(&f, "deck_state", state, st);
  if (rc == WF_OK) rc = write_vars(&f, vars, nvars, scatter, st);
  if (rc == WF_OK) rc = write_vars(&f, more, nmore, NULL, st);
  wf_status_agree(comm, st);
  if (st->code != WF_OK) {
    wf_h5_discard(&f);
    return wf_wrap(st, "checkpoint '%s'", path);
  }
  return wf_h5_close(&f, st);
}

/* A run's state is finite (a run that went non-finite stops before it
 * writes a checkpoint): a NaN or Inf here is a damaged or edited file, which
 * would otherwise run on and print garbage with exit 0. */
static int check_finite(const wf_ckpt_var *v, const wf_ckpt_scatter *sc, const char *path,
                        wf_status *st) {
  long long at = -1;             /* in memory */
  unsigned long long where = 0;  /* in the file's dataset, as its reader counts */
  if (!sc) {
    at = wf_first_nonfinite(v->type, v->data, (size_t)v->count);
    where = v->offset + (unsigned long long)at;
  } else { /* only what was read */
    for (int k = 0; k < sc->npieces && at < 0; k++) {
      const wf_h5_piece *p = &sc->pieces[k];
      size_t bytes = v->type == WF_F32 ? 4 : 8;
      long long j = wf_first_nonfinite(v->type, (const char *)v->data + p->mem_start * bytes,
                                       (size_t)(p->count * p->block));
      if (j < 0) continue;
      at = (long long)p->mem_start + j;
      where = wf_h5_piece_place(p, (unsigned long long)j);
    }
  }
  if (at < 0) return WF_OK;
  double x = v->type == WF_F32 ? ((const float *)v->data)[at] : ((const double *)v->data)[at];
  return wf_fail(st, WF_ERR_INPUT,
                 "checkpoint '%s': dataset '%s' holds %s at element %llu: a damaged file, not a "
                 "run's state",
                 path, v->name, isnan(x) ? "NaN" : "an infinite value", where);
}

static int read_var(hid_t file, hid_t dxpl, const wf_ckpt_var *v, const wf_ckpt_scatter *sc,
                    const char *path, wf_status *st) {
  hid_t dset = H5Dopen2(file, v->name, H5P_DEFAULT);
  if (dset < 0)
    return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' has no dataset '%s'", path, v->name);
  hid_t fspace = H5Dget_space(dset);
  hsize_t n = 0;
  int ndim = H5Sget_simple_extent_ndims(fspace);
  if (ndim == 1) H5Sget_simple_extent_dims(fspace, &n, NULL);
  int rc = WF_OK;
  if (ndim != 1 || n != v->global_n) {
    rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': dataset '%s' has %llu elements, expected %llu",
                 path, v->name, (unsigned long long)n, v->global_n);
  } else {
    hid_t mspace;
    if (sc) { /* the pieces, on spaces of the same extents */
      H5Sclose(fspace);
      wf_h5_select_pieces(v->global_n, v->count, sc->pieces, sc->npieces, &fspace, &mspace);
    } else {
      hsize_t off = v->offset, cnt = v->count;
      mspace = H5Screate_simple(1, &cnt, NULL);
      if (cnt == 0) {
        H5Sselect_none(fspace);
        H5Sselect_none(mspace);
      } else {
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &off, NULL, &cnt, NULL);
      }
    }
    if (H5Dread(dset, wf_h5_type(v->type), mspace, fspace, dxpl, v->data) < 0)
      rc = wf_fail(st, WF_ERR_RUNTIME, "checkpoint '%s': reading '%s' failed", path, v->name);
    else
      rc = check_finite(v, sc, path, st);
    H5Sclose(mspace);
  }
  H5Sclose(fspace);
  H5Dclose(dset);
  return rc;
}

int wf_checkpoint_read(MPI_Comm comm, const char *path, long long *step, const wf_ckpt_var *vars,
                       int nvars, wf_status *st) {
  return wf_checkpoint_read_scattered(comm, path, step, vars, nvars, NULL, st);
}

int wf_checkpoint_read_scattered(MPI_Comm comm, const char *path, long long *step,
                                 const wf_ckpt_var *vars, int nvars,
                                 const wf_ckpt_scatter *scatter, wf_status *st) {
  wf_status_clear(st);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) return wf_fail(st, WF_ERR_INPUT, "cannot open checkpoint '%s'", path);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);

  int64_t s = -1;
  hid_t a = H5Aopen(file, "step", H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_INT64, &s) < 0)
    wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' has no step counter", path);
  if (a >= 0) H5Aclose(a);
  /* Every rank reads every dataset (collective), even after an error. */
  for (int i = 0; i < nvars; i++) {
    wf_status mine;
    wf_status_clear(&mine);
    if (read_var(file, dxpl, &vars[i], scatter, path, &mine) == WF_OK && wf_fault("ckpt_read", comm))
      wf_fail(&mine, WF_ERR_RUNTIME, "checkpoint '%s': reading '%s' failed", path, vars[i].name);
    if (mine.code != WF_OK && st->code == WF_OK) *st = mine;
  }
  H5Pclose(dxpl);
  H5Fclose(file);
  wf_status_agree(comm, st);
  if (st->code == WF_OK) *step = s;
  return st->code;
}

/* A scalar string attribute, fixed-length (as wafer writes it) or
 * variable-length (as h5py does), malloc'ed; NULL if it is neither. */
static char *string_attr(hid_t a) {
  hid_t t = H5Aget_type(a);
  char *text = NULL;
  if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
    hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_size(mem, H5T_VARIABLE);
    char *p = NULL;
    if (H5Aread(a, mem, &p) >= 0 && p) {
      size_t n = strlen(p) + 1;
      if ((text = malloc(n)) != NULL) memcpy(text, p, n);
      H5free_memory(p);
    }
    H5Tclose(mem);
  } else if (t >= 0 && H5Tget_class(t) == H5T_STRING) {
    size_t n = H5Tget_size(t);
    if (n > 0 && n < ((size_t)1 << 24) && (text = calloc(n + 1, 1)) != NULL &&
        H5Aread(a, t, text) < 0) {
      free(text);
      text = NULL;
    }
  }
  if (t >= 0) H5Tclose(t);
  return text;
}

int wf_checkpoint_state(const char *path, char **state, wf_status *st) {
  *state = NULL;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return wf_fail(st, WF_ERR_INPUT, "cannot open checkpoint '%s'", path);
  hid_t a = H5Aopen(file, "deck_state", H5P_DEFAULT);
  if (a >= 0) {
    *state = string_attr(a);
    H5Aclose(a);
  }
  H5Fclose(file);
  if (*state) return WF_OK;
  return wf_fail(st, WF_ERR_INPUT,
                 "checkpoint '%s' does not record the deck of the run that wrote it (not a "
                 "checkpoint of this workload, or of a wafer before 2026-11)",
                 path);
}

static int read_series(const char *path, const char *name, unsigned long long max_n,
                       double **data, unsigned long long *n, wf_status *st) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return wf_fail(st, WF_ERR_INPUT, "cannot open checkpoint '%s'", path);
  /* An empty series is not written (wf_checkpoint_write). */
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
    H5Fclose(file);
    *n = 0;
    return WF_OK;
  }
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t space = dset >= 0 ? H5Dget_space(dset) : H5I_INVALID_HID;
  hsize_t len = 0;
  int rc = WF_OK;
  if (space < 0 || H5Sget_simple_extent_ndims(space) != 1 ||
      H5Sget_simple_extent_dims(space, &len, NULL) < 0 || len > INT_MAX)
    rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' has no series '%s'", path, name);
  else if (len > max_n)
    rc = wf_fail(st, WF_ERR_INPUT,
                 "checkpoint '%s': its series '%s' declares %llu values, more than the %llu its "
                 "run can have written: a damaged file",
                 path, name, (unsigned long long)len, max_n);
  else if (len > 0 && !(*data = malloc(len * sizeof **data)))
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for '%s' of checkpoint '%s'", name, path);
  else if (len > 0 && H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0)
    rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': reading '%s' failed", path, name);
  if (rc == WF_OK) {
    wf_ckpt_var v = {name, WF_F64, *data, len, 0, len};
    rc = check_finite(&v, NULL, path, st);
  }
  if (rc == WF_OK) *n = len;
  if (space >= 0) H5Sclose(space);
  if (dset >= 0) H5Dclose(dset);
  H5Fclose(file);
  return rc;
}

int wf_checkpoint_read_series(MPI_Comm comm, const char *path, const char *name,
                              unsigned long long max_n, double **data, unsigned long long *n,
                              wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  *data = NULL, *n = 0;
  wf_status_clear(st);
  if (rank == 0 && read_series(path, name, max_n, data, n, st) != WF_OK) {
    free(*data);
    *data = NULL, *n = 0;
  }
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return st->code;
  MPI_Bcast(n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  if (*n == 0) return WF_OK;
  if (rank != 0) *data = wf_alloc_small(*n, sizeof **data, "a checkpoint's series");
  MPI_Bcast(*data, (int)*n, MPI_DOUBLE, 0, comm);
  return WF_OK;
}
