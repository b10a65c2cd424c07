/* HDF5 inputs (wf_h5.h): an input dataset opened and described, read
 * collectively by blocks or row ranges, every value checked finite, and a
 * file's root attributes. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_io.h"

/* A complex value as h5py stores it: compound {r, i} of two equal floats. */
static bool is_complex(hid_t type) {
  if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2) return false;
  bool ok = true;
  for (unsigned m = 0; m < 2 && ok; m++) {
    char *name = H5Tget_member_name(type, m);
    ok = name && strcmp(name, m ? "i" : "r") == 0 && H5Tget_member_class(type, m) == H5T_FLOAT;
    H5free_memory(name);
  }
  return ok;
}

static hid_t complex_double_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, 2 * sizeof(double));
  H5Tinsert(t, "r", 0, H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "i", sizeof(double), H5T_NATIVE_DOUBLE);
  return t;
}

/* An input file opened read-only for collective reads; -1 (and an input
 * error) if it cannot be. */
static hid_t open_file(MPI_Comm comm, const char *path, wf_status *st) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) wf_fail(st, WF_ERR_INPUT, "cannot open '%s' as an HDF5 file", path);
  return file;
}

static hid_t open_input(MPI_Comm comm, const char *path, const char *name, hid_t *dset,
                        wf_status *st) {
  hid_t file = open_file(comm, path, st);
  *dset = -1;
  if (file < 0) return -1;
  *dset = H5Dopen2(file, name, H5P_DEFAULT);
  if (*dset < 0) {
    H5Fclose(file);
    wf_fail(st, WF_ERR_INPUT, "'%s' has no dataset '%s'", path, name);
    return -1;
  }
  return file;
}

int wf_h5_input_open(MPI_Comm comm, const char *path, const char *name, wf_h5_input *in,
                     wf_status *st) {
  wf_status_clear(st);
  memset(in, 0, sizeof *in);
  hid_t dset, file = open_input(comm, path, name, &dset, st);
  if (file >= 0) {
    hid_t space = H5Dget_space(dset), type = H5Dget_type(dset);
    in->ndim = H5Sget_simple_extent_ndims(space);
    hsize_t d[H5S_MAX_RANK];
    if (in->ndim < 1 || in->ndim > 3) {
      wf_fail(st, WF_ERR_INPUT, "'%s': dataset '%s' has %d dimensions (1 to 3 expected)", path,
              name, in->ndim);
    } else {
      H5Sget_simple_extent_dims(space, d, NULL);
      for (int i = 0; i < in->ndim; i++) in->dims[i] = d[i];
      in->complex_values = is_complex(type);
      if (!in->complex_values && H5Tget_class(type) != H5T_FLOAT)
        wf_fail(st, WF_ERR_INPUT,
                "'%s': dataset '%s' holds neither floating-point values nor complex ones (a "
                "compound of two floats named r and i, as h5py writes them)",
                path, name);
    }
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(dset);
    H5Fclose(file);
  }
  wf_status_agree(comm, st);
  return st->code;
}

/* Input values are finite: NaN or Inf in an input would run on and come out
 * as NaN outputs with the checks' differences read as 0 ("ok"). `n` values
 * read as `mtype` (a float, a double, or a compound of doubles) by this
 * rank; an input error naming the file and dataset. */
static int check_finite(const char *path, const char *name, hid_t mtype, const void *data,
                        size_t n, wf_status *st) {
  H5T_class_t c = H5Tget_class(mtype);
  if (c != H5T_FLOAT && c != H5T_COMPOUND) return WF_OK;
  wf_dtype t = c == H5T_FLOAT && H5Tget_size(mtype) == sizeof(float) ? WF_F32 : WF_F64;
  long long i = wf_first_nonfinite(t, data, n);
  if (i < 0) return WF_OK;
  double x = t == WF_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
  return wf_fail(st, WF_ERR_INPUT, "'%s': dataset '%s' holds %s: inputs must be finite", path, name,
                 isnan(x) ? "NaN" : "an infinite value");
}

/* The collective read of the selections into `data` as `mtype`; closes the
 * spaces, the dataset and the file. */
static int collective_read(MPI_Comm comm, const char *path, const char *name, hid_t file,
                           hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, void *data,
                           wf_status *st) {
  hssize_t selected = H5Sget_select_npoints(mspace);
  size_t values = selected > 0 ? (size_t)selected * (H5Tget_class(mtype) == H5T_COMPOUND ? 2 : 1) : 0;
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  herr_t rc = H5Dread(dset, mtype, mspace, fspace, dxpl, data);
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(dset);
  H5Fclose(file);
  if (rc < 0) wf_fail(st, WF_ERR_INPUT, "'%s': reading dataset '%s' failed", path, name);
  else check_finite(path, name, mtype, data, values, st);
  wf_status_agree(comm, st);
  return st->code;
}

int wf_h5_input_read(MPI_Comm comm, const char *path, const char *name, const wf_h5_input *in,
                     const wf_h5_block *b, double *data, wf_status *st) {
  wf_status_clear(st);
  hid_t dset, file = open_input(comm, path, name, &dset, st);
  wf_status_agree(comm, st); /* before the collective read */
  if (st->code != WF_OK) {
    if (file >= 0) H5Dclose(dset), H5Fclose(file);
    return st->code;
  }
  hsize_t off[3], cnt[3];
  bool empty = false;
  for (int d = 0; d < b->ndim; d++) {
    off[d] = b->offset[d], cnt[d] = b->count[d];
    if (cnt[d] == 0) empty = true;
  }
  hid_t fspace = H5Dget_space(dset), mspace = H5Screate_simple(b->ndim, cnt, NULL);
  if (empty) {
    H5Sselect_none(fspace);
    H5Sselect_none(mspace);
  } else {
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, off, NULL, cnt, NULL);
  }
  hid_t mtype = in->complex_values ? complex_double_type() : H5Tcopy(H5T_NATIVE_DOUBLE);
  int rc = collective_read(comm, path, name, file, dset, mtype, mspace, fspace, data, st);
  H5Tclose(mtype);
  return rc;
}

int wf_h5_input_rows(MPI_Comm comm, const char *path, const char *name, wf_dtype type,
                     const wf_h5_rows *r, void *data, wf_status *st) {
  wf_status_clear(st);
  hid_t dset, file = open_input(comm, path, name, &dset, st);
  if (file >= 0) {
    hid_t space = H5Dget_space(dset);
    hsize_t d[H5S_MAX_RANK];
    int nd = H5Sget_simple_extent_ndims(space);
    if (nd > 0 && nd <= H5S_MAX_RANK) H5Sget_simple_extent_dims(space, d, NULL);
    if (nd != 2 || d[0] != r->rows || d[1] != r->cols)
      wf_fail(st, WF_ERR_INPUT, "'%s': dataset '%s' is not %llu x %llu as expected", path, name,
              r->rows, r->cols);
    H5Sclose(space);
  }
  wf_status_agree(comm, st); /* before the collective read */
  if (st->code != WF_OK) {
    if (file >= 0) H5Dclose(dset), H5Fclose(file);
    return st->code;
  }
  hid_t fspace, mspace;
  wf_h5_select_rows(r, &fspace, &mspace);
  return collective_read(comm, path, name, file, dset, wf_h5_type(type), mspace, fspace, data, st);
}

/* Read root attribute `name` as `mtype` (a string type: its size bounds
 * the read) into v. */
static int input_attr(MPI_Comm comm, const char *path, const char *name, hid_t mtype, bool string,
                      void *v, wf_status *st) {
  wf_status_clear(st);
  hid_t file = open_file(comm, path, st);
  hid_t a = file >= 0 ? H5Aopen(file, name, H5P_DEFAULT) : -1;
  if (file >= 0 && a < 0) {
    wf_fail(st, WF_ERR_INPUT, "'%s' has no attribute '%s'", path, name);
  } else if (a >= 0) {
    hid_t t = H5Aget_type(a);
    bool is_string = H5Tget_class(t) == H5T_STRING;
    /* A string read as NUL-terminated: one byte more than the file's, so
     * that a NUL-padded string (h5py's) keeps its last character. */
    bool ok = string ? is_string && !H5Tis_variable_str(t) && H5Tget_size(t) < H5Tget_size(mtype)
                     : H5Tget_class(t) == H5T_FLOAT || H5Tget_class(t) == H5T_INTEGER;
    if (ok && string) H5Tset_size(mtype, H5Tget_size(t) + 1);
    if (!ok || H5Aread(a, mtype, v) < 0)
      wf_fail(st, WF_ERR_INPUT, "'%s': attribute '%s' is not a %s", path, name,
              string ? "fixed-length string of the expected size" : "number");
    H5Tclose(t);
  }
  if (a >= 0) H5Aclose(a);
  if (file >= 0) H5Fclose(file);
  wf_status_agree(comm, st);
  return st->code;
}

int wf_h5_input_attr_num(MPI_Comm comm, const char *path, const char *name, double *v,
                         wf_status *st) {
  return input_attr(comm, path, name, H5T_NATIVE_DOUBLE, false, v, st);
}

int wf_h5_input_attr_str(MPI_Comm comm, const char *path, const char *name, char *v, size_t len,
                         wf_status *st) {
  if (len < 2) return wf_fail(st, WF_ERR_RUNTIME, "wf_h5_input_attr_str: no room");
  memset(v, 0, len);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, len - 1); /* keeps a terminating zero */
  int rc = input_attr(comm, path, name, t, true, v, st);
  H5Tclose(t);
  return rc;
}
