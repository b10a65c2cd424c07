/* HDF5 output: one parallel file per run, collective writes of distributed
 * per-PE fields (each rank writes its block as a hyperslab), attributes, and
 * an XDMF sidecar so that ParaView opens the structured fields.
 *
 * Atomicity: the file is written as its own new temporary "<path>.part.XXXXXX"
 * (wf_temp_create) and renamed to <path> only when it is complete and closed;
 * a crash never leaves a half file under the final name, and two runs that
 * write one name never mix (the last to finish wins whole). */
#ifndef WF_H5_H
#define WF_H5_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_config.h"
#if WAFER_HAVE_HDF5
#include <hdf5.h>
#else
typedef long long hid_t; /* the simulated build: no HDF5 (wf_h5_absent.c) */
#endif
/* Why a build without HDF5 refuses HDF5 files. */
#define WF_H5_ABSENT                                                                              \
  "this build has no HDF5 (the simulated build, on SimGrid's SMPI, cannot link the parallel "     \
  "HDF5 a real MPI needs): run without HDF5 files, or on the normal build"

#include "wf_error.h"

typedef enum { WF_F64, WF_F32, WF_I64 } wf_dtype;

#define WF_H5_MAX_XDMF 32
#define WF_H5_PATH_MAX 1024

typedef struct wf_h5_xdmf_field {
  char name[128];
  int ndim;
  unsigned long long dims[3]; /* slowest first, as in the dataset */
  wf_dtype type;
} wf_h5_xdmf_field;

typedef struct wf_h5file {
  MPI_Comm comm;
  hid_t file, dxpl;
  char path[WF_H5_PATH_MAX], tmp[WF_H5_PATH_MAX + 16]; /* tmp: wf_temp_create's */
  double reserved; /* bytes of disk the file holds for itself */
  double written;  /* bytes of data (and attributes) written or reserved ahead */
  int nxdmf;
  wf_h5_xdmf_field xdmf[WF_H5_MAX_XDMF];
} wf_h5file;

/* Distributed block of a global n-dimensional array (dims slowest first).
 * The rank's data sits in memory as an array of `mem_dims` (NULL: exactly
 * `count`) starting at `mem_start` (NULL: the origin); this lets a field with
 * halo cells be written without a copy. */
typedef struct wf_h5_block {
  int ndim;
  const unsigned long long *global, *offset, *count;
  const unsigned long long *mem_dims, *mem_start;
} wf_h5_block;

/* Every function here is collective and returns the same status on every
 * rank: a failure on one rank ends the file's writing on all of them
 * together (nothing is left under any name after wf_h5_discard). */
int wf_h5_create(wf_h5file *f, MPI_Comm comm, const char *path, wf_status *st);
/* Collective write of one dataset. `xdmf` lists it (2D/3D only) in the sidecar. */
int wf_h5_write(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_block *b,
                const void *data, bool xdmf, wf_status *st);
/* Rows of a 2D dataset [rows][cols] that this rank writes or reads as
 * `nranges` ranges (first[r], count[r] rows each), packed one after another
 * in memory: data whose ranks hold scattered pieces (a tile low-rank
 * matrix's bases). */
typedef struct wf_h5_rows {
  unsigned long long rows, cols;
  int nranges;
  const unsigned long long *first, *count;
} wf_h5_rows;
int wf_h5_write_rows(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_rows *r,
                     const void *data, wf_status *st);
/* The union of a rank's row ranges in a [rows][cols] file space, and a
 * memory space holding them packed; both empty when it has none (the
 * caller closes both). */
void wf_h5_select_rows(const wf_h5_rows *r, hid_t *fspace, hid_t *mspace);
/* A strided piece of a 1D dataset: `count` runs of `block` elements,
 * `stride` apart, from element `start` (a tile of a row-major matrix the
 * dataset holds), kept contiguously in memory from element `mem_start`.
 * A rank's pieces go in increasing order, each ending before the next
 * begins, in the file and in memory alike (HDF5 pairs the two selections'
 * elements in order). */
typedef struct wf_h5_piece {
  unsigned long long start, stride, count, block, mem_start;
} wf_h5_piece;
/* Where number j of piece p's numbers in memory sits in the dataset. */
unsigned long long wf_h5_piece_place(const wf_h5_piece *p, unsigned long long j);
/* 1D file (n elements) and memory (mem_n) spaces selecting the pieces. */
void wf_h5_select_pieces(unsigned long long n, unsigned long long mem_n, const wf_h5_piece *p,
                         int npieces, hid_t *fspace, hid_t *mspace);
/* Collective write of a 1D dataset of n elements, this rank's the pieces of
 * `data` (mem_n elements). */
int wf_h5_write_pieces(wf_h5file *f, const char *name, wf_dtype type, unsigned long long n,
                       unsigned long long mem_n, const wf_h5_piece *p, int npieces,
                       const void *data, wf_status *st);

/* Attributes on the root group (collective: same value on every rank). */
int wf_h5_attr_str(wf_h5file *f, const char *name, const char *value, wf_status *st);
int wf_h5_attr_num(wf_h5file *f, const char *name, double value, wf_status *st);
int wf_h5_attr_int(wf_h5file *f, const char *name, long long value, wf_status *st);
/* The XDMF sidecar of the file's listed fields, beside its final name (one
 * rank, once the file is renamed: wf_h5_close). */
int wf_h5_write_xdmf(const wf_h5file *f, wf_status *st);
/* The XDMF sidecar's path for an HDF5 file's: x.h5 -> x.xmf. */
void wf_h5_sidecar_path(const char *h5, char *xmf, size_t len);
/* A time series (called on one rank): an XDMF temporal collection of `n`
 * snapshots, snapshot s the fields' first shape read from files[s] (named
 * relative to the series file) at time times[s]; written atomically. */
int wf_xdmf_series_write(const char *xmf, int n, const char *const *files, const double *times,
                         const wf_h5_xdmf_field *fields, int nfields, wf_status *st);
/* Close, rename to the final name, write the XDMF sidecar. Collective. */
int wf_h5_close(wf_h5file *f, wf_status *st);
/* Disk space: a file is created only with room for HDF5's own structures
 * (a margin of 1 MB), and every write and attribute first reserves its own
 * bytes (fallocate, keeping the file's size, where the file system can;
 * elsewhere its free space is checked). A full disk, at any level of free
 * space down to 0 bytes, is then a clean error on every rank, never a
 * failure inside HDF5's collective writes or its close, where ranks that see
 * it and ranks that do not wait for each other forever. wf_h5_reserve takes
 * `bytes` more ahead: a file written over a run (a trajectory) reserves all
 * of it at the start, so the disk is found short before the run, not after.
 * Collective. */
int wf_h5_reserve(wf_h5file *f, double bytes, wf_status *st);
/* Close and delete the temporary file (error path). Collective. */
void wf_h5_discard(wf_h5file *f);
/* The end of a file's writing, `rc` its outcome so far (the same on every
 * rank, its message in st): wf_h5_close when it is WF_OK, else wf_h5_discard
 * and rc. Collective. */
int wf_h5_finish(wf_h5file *f, int rc, wf_status *st);

hid_t wf_h5_type(wf_dtype t);

/* The index of the first NaN or Inf among `n` values of `type`, -1 if none
 * (integers: always -1): what every reader of an input or checkpoint checks. */
long long wf_first_nonfinite(wf_dtype type, const void *data, size_t n);

/* ---- reading an input dataset (collective; wf_h5_input.c) ---- */

/* An input array: its shape (slowest first) and whether its values are
 * complex (a compound of two floating-point members "r" and "i", as h5py
 * writes them) or real (floating point). */
typedef struct wf_h5_input {
  int ndim;
  unsigned long long dims[3];
  bool complex_values;
} wf_h5_input;

/* Open `path` (read only) and describe dataset `name`. Input errors: the
 * file cannot be opened as HDF5, no such dataset, more than 3 dimensions,
 * values neither floating point nor such a compound. */
int wf_h5_input_open(MPI_Comm comm, const char *path, const char *name, wf_h5_input *in,
                     wf_status *st);
/* Read this rank's block (b->global must be the dataset's shape) as
 * doubles: one per value, or (r, i) pairs for complex values. */
int wf_h5_input_read(MPI_Comm comm, const char *path, const char *name, const wf_h5_input *in,
                     const wf_h5_block *b, double *data, wf_status *st);

/* Read this rank's row ranges of a 2D dataset converted to `type`; an
 * input error if its shape is not r->rows x r->cols. */
int wf_h5_input_rows(MPI_Comm comm, const char *path, const char *name, wf_dtype type,
                     const wf_h5_rows *r, void *data, wf_status *st);
/* A root attribute of an input file: a number, or a string (cut to `len`).
 * Input errors when missing or of another kind. */
int wf_h5_input_attr_num(MPI_Comm comm, const char *path, const char *name, double *v,
                         wf_status *st);
int wf_h5_input_attr_str(MPI_Comm comm, const char *path, const char *name, char *v, size_t len,
                         wf_status *st);

#endif

#include "wf_deck.h"
/* [output]: where a run writes its HDF5 file. */
extern const wf_section wf_output_section;
