/* wf_h5.h and wf_checkpoint.h in a build without HDF5 (wf_config.h:
 * WAFER_HAVE_HDF5 0, the simulated build: parallel HDF5 is built for a real
 * MPI and cannot join SimGrid's). The deck refuses every HDF5 file before
 * any work (wf_deck.c), so these only answer a caller that got past it:
 * each fails with that reason, collectively as the real ones do. */
#include "wf_checkpoint.h"
#include "wf_h5.h"

static int absent(MPI_Comm comm, const char *path, wf_status *st) {
  (void)comm;
  return wf_fail(st, WF_ERR_INPUT, "'%s': %s", path ? path : "", WF_H5_ABSENT);
}

int wf_h5_create(wf_h5file *f, MPI_Comm comm, const char *path, wf_status *st) {
  f->comm = comm, f->file = f->dxpl = -1;
  return absent(comm, path, st);
}
int wf_h5_write(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_block *b,
                const void *data, bool xdmf, wf_status *st) {
  (void)name, (void)type, (void)b, (void)data, (void)xdmf;
  return absent(f->comm, f->path, st);
}
int wf_h5_write_rows(wf_h5file *f, const char *name, wf_dtype type, const wf_h5_rows *r,
                     const void *data, wf_status *st) {
  (void)name, (void)type, (void)r, (void)data;
  return absent(f->comm, f->path, st);
}
int wf_h5_write_pieces(wf_h5file *f, const char *name, wf_dtype type, unsigned long long n,
                       unsigned long long mem_n, const wf_h5_piece *p, int npieces,
                       const void *data, wf_status *st) {
  (void)name, (void)type, (void)n, (void)mem_n, (void)p, (void)npieces, (void)data;
  return absent(f->comm, f->path, st);
}
int wf_h5_attr_str(wf_h5file *f, const char *name, const char *value, wf_status *st) {
  (void)name, (void)value;
  return absent(f->comm, f->path, st);
}
int wf_h5_attr_num(wf_h5file *f, const char *name, double value, wf_status *st) {
  (void)name, (void)value;
  return absent(f->comm, f->path, st);
}
int wf_h5_attr_int(wf_h5file *f, const char *name, long long value, wf_status *st) {
  (void)name, (void)value;
  return absent(f->comm, f->path, st);
}
int wf_h5_close(wf_h5file *f, wf_status *st) { return absent(f->comm, f->path, st); }
int wf_h5_reserve(wf_h5file *f, double bytes, wf_status *st) {
  (void)bytes;
  return absent(f->comm, f->path, st);
}
void wf_h5_discard(wf_h5file *f) { (void)f; }
int wf_h5_finish(wf_h5file *f, int rc, wf_status *st) {
  (void)f, (void)st;
  return rc;
}

int wf_h5_input_open(MPI_Comm comm, const char *path, const char *name, wf_h5_input *in,
                     wf_status *st) {
  (void)name, (void)in;
  return absent(comm, path, st);
}
int wf_h5_input_read(MPI_Comm comm, const char *path, const char *name, const wf_h5_input *in,
                     const wf_h5_block *b, double *data, wf_status *st) {
  (void)name, (void)in, (void)b, (void)data;
  return absent(comm, path, st);
}
int wf_h5_input_rows(MPI_Comm comm, const char *path, const char *name, wf_dtype type,
                     const wf_h5_rows *r, void *data, wf_status *st) {
  (void)name, (void)type, (void)r, (void)data;
  return absent(comm, path, st);
}
int wf_h5_input_attr_num(MPI_Comm comm, const char *path, const char *name, double *v,
                         wf_status *st) {
  (void)name, (void)v;
  return absent(comm, path, st);
}
int wf_h5_input_attr_str(MPI_Comm comm, const char *path, const char *name, char *v, size_t len,
                         wf_status *st) {
  (void)name, (void)v, (void)len;
  return absent(comm, path, st);
}

int wf_checkpoint_write(MPI_Comm comm, const char *path, long long step, const char *state,
                        const wf_ckpt_var *vars, int nvars, wf_status *st) {
  (void)step, (void)state, (void)vars, (void)nvars;
  return absent(comm, path, st);
}
int wf_checkpoint_write_more(MPI_Comm comm, const char *path, long long step, const char *state,
                             const wf_ckpt_var *vars, int nvars, const wf_ckpt_var *more,
                             int nmore, wf_status *st) {
  (void)step, (void)state, (void)vars, (void)nvars, (void)more, (void)nmore;
  return absent(comm, path, st);
}
int wf_checkpoint_read(MPI_Comm comm, const char *path, long long *step, const wf_ckpt_var *vars,
                       int nvars, wf_status *st) {
  (void)step, (void)vars, (void)nvars;
  return absent(comm, path, st);
}
int wf_checkpoint_write_scattered(MPI_Comm comm, const char *path, long long step,
                                  const char *state, const wf_ckpt_var *vars, int nvars,
                                  const wf_ckpt_scatter *scatter, const wf_ckpt_var *more,
                                  int nmore, wf_status *st) {
  (void)step, (void)state, (void)vars, (void)nvars, (void)scatter, (void)more, (void)nmore;
  return absent(comm, path, st);
}
int wf_checkpoint_read_scattered(MPI_Comm comm, const char *path, long long *step,
                                 const wf_ckpt_var *vars, int nvars,
                                 const wf_ckpt_scatter *scatter, wf_status *st) {
  (void)step, (void)vars, (void)nvars, (void)scatter;
  return absent(comm, path, st);
}
int wf_checkpoint_read_series(MPI_Comm comm, const char *path, const char *name,
                              unsigned long long max_n, double **data, unsigned long long *n,
                              wf_status *st) {
  (void)name, (void)max_n;
  *data = NULL, *n = 0;
  return absent(comm, path, st);
}
int wf_checkpoint_state(const char *path, char **state, wf_status *st) {
  *state = NULL;
  return absent(MPI_COMM_NULL, path, st);
}
