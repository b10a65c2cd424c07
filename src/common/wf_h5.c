/* HDF5 files (wf_h5.h): one parallel file per run, written as its own new temporary
 * <path>.part.XXXXXX (wf_temp_create) with its disk
 * reserved ahead and renamed when complete; distributed datasets and attributes (XDMF
 * sidecars for ParaView: wf_h5_xdmf.c; collective reads of input datasets: wf_h5_input.c). */
#define _GNU_SOURCE /* fallocate(2) with FALLOC_FL_KEEP_SIZE: Linux */
#include "wf_h5.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "wf_fault.h"
#include "wf_io.h"

hid_t wf_h5_type(wf_dtype t) {
  switch (t) {
    case WF_F64:
      return H5T_NATIVE_DOUBLE;
    case WF_F32:
      return H5T_NATIVE_FLOAT;
    case WF_I64:
      return H5T_NATIVE_INT64;
  }
  return H5T_NATIVE_DOUBLE;
}

static int h5_check(herr_t rc, wf_status *st, const char *what, const wf_h5file *f) {
  if (rc >= 0) return WF_OK;
  return wf_fail(st, WF_ERR_RUNTIME, "HDF5: %s failed for '%s'", what, f->path);
}

/* HDF5's own structures (superblock, groups, attributes, chunk indexes) on
 * top of the data: a generous margin, reserved before the file exists. */
#define METADATA_MARGIN (1.0 * 1024 * 1024)

/* Make sure `bytes` of disk from the start of `path` are the file's (rank 0,
 * which alone touches the disk here): allocated without changing the file's
 * size where the file system can, else its free space checked. 0 or an errno. */
static int allocate(const char *path, double bytes) {
  int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  if (!err && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes) != 0) err = errno;
  if (fd >= 0) close(fd);
  if (err == EOPNOTSUPP || err == ENOSYS) { /* no allocation here: check the free space */
    struct statvfs vfs;
    err = statvfs(path, &vfs) != 0                              ? errno
          : (double)vfs.f_bavail * (double)vfs.f_frsize < bytes ? ENOSPC
                                                                : 0;
  }
  return err;
}

/* The file's disk reserved up to `bytes` of data plus the metadata margin;
 * every rank learns rank 0's outcome. A full disk is found here, as one
 * clean error on every rank, never inside HDF5's collective writes or its
 * close, where ranks that see the error and ranks that do not wait for each
 * other forever (or, alone, crash at MPI_Finalize). `create`: the file was
 * just created, and nothing is left behind when the space is not there.
 * Collective. */
static int reserve_to(MPI_Comm comm, const char *tmp, const char *path, double bytes, bool create,
                      double *reserved, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  wf_status_clear(st);
  double want = bytes * 1.02 + METADATA_MARGIN;
  if (want <= *reserved) return WF_OK;
  if (rank == 0) {
    int err = allocate(tmp, want);
    if (err) {
      wf_fail(st, WF_ERR_RUNTIME, "'%s' needs about %.3g MB of disk: %s", path, want / 1e6,
              strerror(err));
      if (create) remove(tmp);
    }
  }
  wf_status_bcast(comm, st);
  if (st->code == WF_OK) *reserved = want;
  return st->code;
}

int wf_h5_create(wf_h5file *f, MPI_Comm comm, const char *path, wf_status *st) {
  memset(f, 0, sizeof *f);
  f->comm = comm;
  f->file = f->dxpl = H5I_INVALID_HID;
  if (strlen(path) + 1 > WF_H5_PATH_MAX)
    return wf_fail(st, WF_ERR_INPUT, "output path too long: '%s'", path);
  snprintf(f->path, sizeof f->path, "%s", path);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* we report errors ourselves */
  /* The run's own temporary, new (never a name that exists: a link there
   * would redirect the write); every rank learns its name. */
  int rank;
  MPI_Comm_rank(comm, &rank);
  wf_status_clear(st);
  if (rank == 0) {
    int fd = wf_temp_create(path, f->tmp, sizeof f->tmp);
    if (fd < 0)
      wf_fail(st, WF_ERR_INPUT,
              "cannot create a temporary file beside '%s': %s (check the directory exists and "
              "is writable)",
              path, strerror(errno));
    else
      close(fd);
  }
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return st->code;
  MPI_Bcast(f->tmp, (int)sizeof f->tmp, MPI_CHAR, 0, comm);
  /* Room for HDF5's own structures before HDF5 writes any. */
  double probed = 0;
  if (reserve_to(comm, f->tmp, f->path, 0, true, &probed, st) != WF_OK) return st->code;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl, 1);
  H5Pset_coll_metadata_write(fapl, 1);
  f->file = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  f->dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(f->dxpl, H5FD_MPIO_COLLECTIVE);
  wf_status_clear(st);
  if (f->file < 0 || wf_fault("h5_create", comm))
    wf_fail(st, WF_ERR_INPUT,
            "cannot create HDF5 file '%s' (check the directory exists and is "
            "writable)",
            f->tmp);
  wf_status_agree(comm, st);
  /* Creating truncated the probe's allocation: take the margin again. */
  if (st->code == WF_OK) reserve_to(comm, f->tmp, f->path, 0, false, &f->reserved, st);
  if (st->code != WF_OK) wf_h5_discard(f);
  return st->code;
}

int wf_h5_reserve(wf_h5file *f, double bytes, wf_status *st) {
  return reserve_to(f->comm, f->tmp, f->path, f->written + bytes, false, &f->reserved, st);
}

/* Before `bytes` more data go into the file: its disk, as wf_h5_reserve.
 * Every write does this, so no workload can forget it. Collective. */
static int reserve_more(wf_h5file *f, double bytes, wf_status *st) {
  if (wf_h5_reserve(f, bytes, st) != WF_OK) return st->code;
  f->written += bytes;
  return WF_OK;
}

static size_t type_size(wf_dtype t) { return t == WF_F32 ? 4 : 8; }

/* Dataset `name` over fspace, created by every rank; each learns whether
 * any failed (before the collective write that follows). */
static hid_t create_dataset(wf_h5file *f, const char *name, wf_dtype type, hid_t fspace,
                            wf_status *st) {
  hid_t dset =
      H5Dcreate2(f->file, name, wf_h5_type(type), fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  wf_status_clear(st);
  if (dset < 0)
    wf_fail(st, WF_ERR_RUNTIME, "HDF5: cannot create dataset '%s' in '%s'", name, f->path);
  wf_status_agree(f->comm, st);
  return dset;
}

int wf_h5_write(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_block *b,
                const void *data, bool xdmf, wf_status *st) {
  hsize_t g[3], off[3], cnt[3], md[3], ms[3];
  if (b->ndim < 1 || b->ndim > 3)
    return wf_fail(st, WF_ERR_RUNTIME, "wf_h5_write: ndim %d", b->ndim);
  bool empty = false;
  for (int d = 0; d < b->ndim; d++) {
    g[d] = b->global[d];
    off[d] = b->offset[d];
    cnt[d] = b->count[d];
    md[d] = b->mem_dims ? b->mem_dims[d] : cnt[d];
    ms[d] = b->mem_start ? b->mem_start[d] : 0;
    if (cnt[d] == 0) empty = true;
  }
  /* A block outside the array (a caller's bug) would fail this rank's part
   * of the collective write while the others wait in it for ever: every
   * rank learns of it first. */
  wf_status_clear(st);
  for (int d = 0; d < b->ndim && !empty && st->code == WF_OK; d++)
    if (off[d] + cnt[d] > g[d] || ms[d] + cnt[d] > md[d])
      wf_fail(st, WF_ERR_RUNTIME,
              "dataset '%s': a rank's block lies outside the array in dimension %d (%llu + %llu of "
              "%llu; in memory %llu + %llu of %llu)",
              name, d, (unsigned long long)off[d], (unsigned long long)cnt[d],
              (unsigned long long)g[d], (unsigned long long)ms[d], (unsigned long long)cnt[d],
              (unsigned long long)md[d]);
  wf_status_agree(f->comm, st);
  if (st->code != WF_OK) return st->code;
  double bytes = (double)type_size(type);
  for (int d = 0; d < b->ndim; d++) bytes *= (double)g[d];
  if (reserve_more(f, bytes, st) != WF_OK) return st->code;
  hid_t fspace = H5Screate_simple(b->ndim, g, NULL);
  hid_t dset = create_dataset(f, name, type, fspace, st);
  if (st->code != WF_OK) {
    if (dset >= 0) H5Dclose(dset);
    H5Sclose(fspace);
    return st->code;
  }
  hid_t mspace = H5Screate_simple(b->ndim, empty ? cnt : md, NULL);
  if (empty) {
    H5Sselect_none(fspace);
    H5Sselect_none(mspace);
  } else {
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, off, NULL, cnt, NULL);
    H5Sselect_hyperslab(mspace, H5S_SELECT_SET, ms, NULL, cnt, NULL);
  }
  herr_t rc = H5Dwrite(dset, wf_h5_type(type), mspace, fspace, f->dxpl, data);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(dset);
  if (wf_fault("h5_write", f->comm)) rc = -1;
  wf_status_clear(st);
  if (h5_check(rc, st, "collective write", f) != WF_OK) wf_wrap(st, "dataset '%s'", name);
  wf_status_agree(f->comm, st);
  if (st->code != WF_OK) return st->code;

  if (xdmf && b->ndim >= 2 && f->nxdmf < WF_H5_MAX_XDMF) {
    wf_h5_xdmf_field *x = &f->xdmf[f->nxdmf++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->ndim = b->ndim;
    x->type = type;
    for (int d = 0; d < b->ndim; d++) x->dims[d] = b->global[d];
  }
  return WF_OK;
}

void wf_h5_select_rows(const wf_h5_rows *r, hid_t *fspace, hid_t *mspace) {
  hsize_t g[2] = {r->rows, r->cols}, total = 0;
  *fspace = H5Screate_simple(2, g, NULL);
  H5Sselect_none(*fspace);
  for (int k = 0; k < r->nranges; k++) {
    if (r->count[k] == 0) continue;
    hsize_t off[2] = {r->first[k], 0}, cnt[2] = {r->count[k], r->cols};
    H5Sselect_hyperslab(*fspace, H5S_SELECT_OR, off, NULL, cnt, NULL);
    total += r->count[k];
  }
  hsize_t m[1] = {total * r->cols > 0 ? total * r->cols : 1};
  *mspace = H5Screate_simple(1, m, NULL);
  if (total * r->cols == 0) H5Sselect_none(*mspace);
}

/* Create dataset `name` over the file space `fspace` and write `data`
 * (laid out as `mspace`) into its selection, collectively; both spaces are
 * closed. Faults injected at "h5_write"; the verdict agreed over ranks. */
static int write_selected(wf_h5file *f, const char *name, wf_dtype type, hid_t fspace,
                          hid_t mspace, const void *data, wf_status *st) {
  hid_t dset = create_dataset(f, name, type, fspace, st);
  herr_t rc = -1;
  if (st->code == WF_OK) rc = H5Dwrite(dset, wf_h5_type(type), mspace, fspace, f->dxpl, data);
  if (dset >= 0) H5Dclose(dset);
  H5Sclose(mspace);
  H5Sclose(fspace);
  if (st->code != WF_OK) return st->code;
  if (wf_fault("h5_write", f->comm)) rc = -1;
  if (h5_check(rc, st, "collective write", f) != WF_OK) wf_wrap(st, "dataset '%s'", name);
  wf_status_agree(f->comm, st);
  return st->code;
}

int wf_h5_write_rows(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_rows *r,
                     const void *data, wf_status *st) {
  if (reserve_more(f, (double)type_size(type) * (double)r->rows * (double)r->cols, st) != WF_OK)
    return st->code;
  hid_t fspace, mspace;
  wf_h5_select_rows(r, &fspace, &mspace);
  return write_selected(f, name, type, fspace, mspace, data, st);
}

void wf_h5_select_pieces(unsigned long long n, unsigned long long mem_n, const wf_h5_piece *p,
                         int npieces, hid_t *fspace, hid_t *mspace) {
  hsize_t g = n, m = mem_n > 0 ? mem_n : 1;
  *fspace = H5Screate_simple(1, &g, NULL);
  *mspace = H5Screate_simple(1, &m, NULL);
  H5Sselect_none(*fspace);
  H5Sselect_none(*mspace);
  for (int k = 0; k < npieces; k++) {
    hsize_t start = p[k].start, stride = p[k].stride, count = p[k].count, block = p[k].block;
    hsize_t mstart = p[k].mem_start, mcount = count * block;
    if (mcount == 0) continue;
    /* one run needs no stride (and HDF5 refuses one shorter than the block) */
    H5Sselect_hyperslab(*fspace, H5S_SELECT_OR, &start, count > 1 ? &stride : NULL, &count,
                        &block);
    H5Sselect_hyperslab(*mspace, H5S_SELECT_OR, &mstart, NULL, &mcount, NULL);
  }
}

int wf_h5_write_pieces(wf_h5file *f, const char *name, wf_dtype type, unsigned long long n,
                       unsigned long long mem_n, const wf_h5_piece *p, int npieces,
                       const void *data, wf_status *st) {
  if (reserve_more(f, (double)type_size(type) * (double)n, st) != WF_OK) return st->code;
  hid_t fspace, mspace;
  wf_h5_select_pieces(n, mem_n, p, npieces, &fspace, &mspace);
  return write_selected(f, name, type, fspace, mspace, data, st);
}

static int attr_write(wf_h5file *f, const char *name, hid_t type, hid_t space, const void *v,
                      wf_status *st) {
  if (reserve_more(f, (double)H5Tget_size(type) + 256, st) != WF_OK) return st->code;
  hid_t a = H5Acreate2(f->file, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, v);
  if (a >= 0) H5Aclose(a);
  if (wf_fault("h5_attr", f->comm)) rc = -1;
  wf_status_clear(st);
  if (rc < 0)
    wf_fail(st, WF_ERR_RUNTIME, "HDF5: cannot write attribute '%s' in '%s'", name, f->path);
  wf_status_agree(f->comm, st);
  return st->code;
}

int wf_h5_attr_str(wf_h5file *f, const char *name, const char *value, wf_status *st) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(value) + 1);
  hid_t s = H5Screate(H5S_SCALAR);
  int rc = attr_write(f, name, t, s, value, st);
  H5Sclose(s);
  H5Tclose(t);
  return rc;
}

int wf_h5_attr_num(wf_h5file *f, const char *name, double value, wf_status *st) {
  hid_t s = H5Screate(H5S_SCALAR);
  int rc = attr_write(f, name, H5T_NATIVE_DOUBLE, s, &value, st);
  H5Sclose(s);
  return rc;
}

int wf_h5_attr_int(wf_h5file *f, const char *name, long long value, wf_status *st) {
  hid_t s = H5Screate(H5S_SCALAR);
  int64_t v = value;
  int rc = attr_write(f, name, H5T_NATIVE_INT64, s, &v, st);
  H5Sclose(s);
  return rc;
}

/* The disk reserved past the file's end, given back once it is complete
 * (the reservation is an estimate: about 1 MB a file stayed allocated).
 * Truncating to its own size frees the blocks beyond it; a file system
 * that keeps them costs only their space. */
static void release_reserve(const char *path) {
  int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat sb;
  if (fd >= 0 && fstat(fd, &sb) == 0 && ftruncate(fd, sb.st_size) != 0) { /* kept: harmless */
  }
  if (fd >= 0) close(fd);
}

int wf_h5_close(wf_h5file *f, wf_status *st) {
  int rank;
  MPI_Comm_rank(f->comm, &rank);
  H5Pclose(f->dxpl);
  herr_t rc = H5Fclose(f->file);
  f->file = f->dxpl = H5I_INVALID_HID;
  if (wf_fault("h5_close", f->comm)) rc = -1;
  wf_status_clear(st);
  if (rc < 0) wf_fail(st, WF_ERR_RUNTIME, "HDF5: closing '%s' failed", f->tmp);
  wf_status_agree(f->comm, st);
  if (st->code != WF_OK) {
    if (rank == 0) remove(f->tmp); /* unfinished: nothing under any name */
    return st->code;
  }
  if (rank == 0) {
    release_reserve(f->tmp);
    if (rename(f->tmp, f->path) != 0) {
      wf_fail(st, WF_ERR_RUNTIME, "cannot rename '%s' to '%s': %s", f->tmp, f->path,
              strerror(errno));
      remove(f->tmp);
    } else if (f->nxdmf > 0)
      wf_h5_write_xdmf(f, st);
  }
  wf_status_bcast(f->comm, st);
  return st->code;
}

void wf_h5_discard(wf_h5file *f) {
  int rank;
  MPI_Comm_rank(f->comm, &rank);
  if (f->dxpl >= 0) H5Pclose(f->dxpl);
  if (f->file >= 0) H5Fclose(f->file);
  f->file = f->dxpl = H5I_INVALID_HID;
  MPI_Barrier(f->comm);
  if (rank == 0) remove(f->tmp);
}

int wf_h5_finish(wf_h5file *f, int rc, wf_status *st) {
  if (rc == WF_OK) return wf_h5_close(f, st);
  wf_h5_discard(f);
  return rc;
}
