/* The operators of `wafer tlrmvm` (tlrmvm_parts.h): from the survey or an
 * input file, compressed here or read from a compressed file, shared out
 * over the systems. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl_io.h"
#include "tlrmvm_parts.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_signal.h"

/* Where a matrix's entries come from: the survey at one frequency, or this
 * rank's block of a dense input (rows r0.., columns c0.., (re, im) pairs). */
typedef struct source {
  const tlrmvm_setup *s;
  double hz;
  const double *block;
  int row0, col0, rows, cols;
} source;

static void fill(void *ctx, int r0, int nr, int c0, int nc, float complex *a, int ld) {
  const source *src = ctx;
  if (!src->block) {
    tl_survey_block(&src->s->survey, src->hz, r0, nr, c0, nc, a, ld);
    return;
  }
  for (int c = 0; c < nc; c++)
    for (int r = 0; r < nr; r++) {
      size_t e = (size_t)(r0 - src->row0 + r) * src->cols + (size_t)(c0 - src->col0 + c);
      a[(size_t)c * ld + r] = (float)src->block[2 * e] + I * (float)src->block[2 * e + 1];
    }
}

static void dataset_name(const tlrmvm_setup *s, int f, char *name, size_t len) {
  snprintf(name, len, "%s_%d", s->dataset, f);
}

/* The input's matrix size, from its first dataset; every dataset must have it. */
int tlrmvm_input_shape(wf_run *run, tlrmvm_setup *s, wf_status *st) {
  for (int f = 0; f < s->nfreq; f++) {
    char name[WF_DECK_TEXT_MAX + 16];
    dataset_name(s, f, name, sizeof name);
    wf_h5_input in;
    if (wf_h5_input_open(run->comm, s->input, name, &in, st) != WF_OK)
      return wf_deck_blame(run->deck, TLRMVM_SECTION, "input", st);
    if (in.ndim != 2 || !in.complex_values)
      return wf_deck_fail(run->deck, TLRMVM_SECTION, "input", st,
                          "dataset '%s' is not a complex matrix (a 2D array of h5py's complex "
                          "values)",
                          name);
    if (f == 0) s->m = (int)in.dims[0], s->n = (int)in.dims[1];
    if ((int)in.dims[0] != s->m || (int)in.dims[1] != s->n)
      return wf_deck_fail(run->deck, TLRMVM_SECTION, "input", st,
                          "dataset '%s' is %llu x %llu; '%s_0' is %d x %d", name, in.dims[0],
                          in.dims[1], s->dataset, s->m, s->n);
  }
  return WF_OK;
}

/* This rank's block of dense input matrix f (NULL block when it has no tiles). */
static int input_block(wf_run *run, const tlrmvm_setup *s, const tl_layout *l, int f, source *src,
                       wf_status *st) {
  char name[WF_DECK_TEXT_MAX + 16];
  dataset_name(s, f, name, sizeof name);
  int r0, rows, c0, cols;
  tl_layout_block(l, &r0, &rows, &c0, &cols);
  *src = (source){.s = s, .hz = s->hz[f], .row0 = r0, .col0 = c0, .rows = rows, .cols = cols};
  double *block = malloc(2 * (size_t)src->rows * src->cols * sizeof *block + 1);
  int failed = !block;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, l->comm);
  if (failed) {
    free(block);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a block of '%s'", name);
  }
  wf_h5_input in;
  unsigned long long g[2] = {(unsigned long long)s->m, (unsigned long long)s->n};
  unsigned long long off[2] = {(unsigned long long)r0, (unsigned long long)c0};
  unsigned long long cnt[2] = {(unsigned long long)src->rows, (unsigned long long)src->cols};
  wf_h5_block b = {.ndim = 2, .global = g, .offset = off, .count = cnt};
  if (wf_h5_input_open(l->comm, s->input, name, &in, st) != WF_OK ||
      wf_h5_input_read(l->comm, s->input, name, &in, &b, block, st) != WF_OK) {
    free(block);
    return wf_deck_blame(run->deck, TLRMVM_SECTION, "input", st);
  }
  double limit = tl_value_limit(l), most = 0;
  for (size_t e = 0; e < 2 * (size_t)src->rows * src->cols; e++) most = fmax(most, fabs(block[e]));
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, l->comm);
  if (!(most <= limit)) { /* NaN too */
    free(block);
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "input", st,
                        "dataset '%s' holds a value of magnitude %g, beyond the %.3g that single "
                        "precision can multiply and sum at this size (scale the operator)",
                        name, most, limit);
  }
  /* Every check is relative to ||A||_F, and single precision holds values
   * to its full precision only above FLT_MIN: an operator whose largest
   * value is below FLT_MIN / FLT_EPSILON (about 1e-31) loses its digits in
   * the products, and one of zeros has nothing to compress or compare. */
  double floor_ = FLT_MIN / FLT_EPSILON;
  if (!(most >= floor_)) {
    free(block);
    if (most == 0)
      return wf_deck_fail(run->deck, TLRMVM_SECTION, "input", st,
                          "dataset '%s' is zero everywhere: an operator that maps everything to "
                          "0 has nothing to compress, and no error relative to it to check",
                          name);
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "input", st,
                        "dataset '%s' holds values of magnitude %g at most, below the %.3g that "
                        "single precision keeps to its full precision (scale the operator)",
                        name, most, floor_);
  }
  src->block = block;
  return WF_OK;
}

/* What the compressed file must have been made from: every key that
 * changes the operators (the survey's, unless they come from a file, whose
 * content then counts: its size and checksum) or their compression.
 * Collective. */
static int signature(const wf_run *run, const tlrmvm_setup *s, char *sig, size_t len,
                     wf_status *st) {
  const wf_deck *d = run->deck;
  static const char *const survey[] = {"src_nx",    "src_ny",    "rec_nx",   "rec_ny", "spacing",
                                       "src_depth", "rec_depth", "velocity", "order"};
  static const char *const always[] = {"frequencies", "input", "input_dataset", "nb",
                                       "acc",         "norm",  "rank_multiple"};
  size_t at = 0;
  for (size_t k = 0; !s->input[0] && k < sizeof survey / sizeof *survey && at < len; k++)
    at += (size_t)snprintf(sig + at, len - at, "%s%s=%s", at ? " " : "", survey[k],
                           wf_deck_str(d, TLRMVM_SECTION, survey[k]));
  for (size_t k = 0; k < sizeof always / sizeof *always && at < len; k++)
    at += (size_t)snprintf(sig + at, len - at, "%s%s=%s", at ? " " : "", always[k],
                           wf_deck_str(d, TLRMVM_SECTION, always[k]));
  if (!s->input[0] || at >= len) return WF_OK;
  char id[96];
  if (wf_file_identity(run->comm, s->input, id, sizeof id, st) != WF_OK) return st->code;
  snprintf(sig + at, len - at, " input_content=%s", id);
  return WF_OK;
}

void tlrmvm_ops_free(tlrmvm_ops *op) {
  for (int f = 0; op->a && f < op->nfreq; f++) tl_matrix_free(&op->a[f]);
  free(op->a), free(op->norm), free(op->error);
}

static void tag(int f, char *t, size_t len) { snprintf(t, len, "%d", f); }

static int load_compressed(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, wf_status *st) {
  char want[2048], have[2048];
  if (signature(run, s, want, sizeof want, st) != WF_OK) return st->code;
  if (wf_h5_input_attr_str(run->comm, s->compressed, "tlr_signature", have, sizeof have, st) !=
      WF_OK)
    return wf_deck_blame(run->deck, TLRMVM_SECTION, "compressed", st);
  if (strcmp(want, have) != 0)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "compressed", st,
                        "the file holds another operator (made with: %s; this deck: %s): "
                        "remove it or name another file",
                        have, want);
  int rc = WF_OK;
  for (int f = 0; f < s->nfreq && rc == WF_OK; f++) {
    char t[16];
    tag(f, t, sizeof t);
    if (tlrmvm_mine(op->sys, f))
      rc = tl_io_read(op->layout.comm, s->compressed, t, &op->layout, &op->a[f], &op->norm[f], st);
  }
  /* One system's bad file is every rank's error. */
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return wf_deck_blame(run->deck, TLRMVM_SECTION, "compressed", st);
  op->loaded = true;
  return WF_OK;
}

static int save_compressed(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op,
                           wf_status *st) {
  char sig[2048];
  if (signature(run, s, sig, sizeof sig, st) != WF_OK) return st->code;
  wf_h5file f;
  if (wf_run_h5_create(run, s->compressed, &f, st) != WF_OK) return st->code;
  int rc = wf_h5_attr_str(&f, "tlr_signature", sig, st);
  /* The survey's ordering: every receiver's (row's) and source's (column's)
   * position, x y z in m, in matrix order. */
  if (rc == WF_OK && !s->input[0]) {
    unsigned long long zero = 0, nm = (unsigned long long)s->m, nn = (unsigned long long)s->n;
    bool root = run->rank == 0;
    wf_h5_rows rr = {nm, 3, root, &zero, &nm}, rs = {nn, 3, root, &zero, &nn};
    if (wf_h5_write_rows(&f, "receivers", WF_F64, &rr, s->survey.rec_xyz, st) != WF_OK ||
        wf_h5_write_rows(&f, "sources", WF_F64, &rs, s->survey.src_xyz, st) != WF_OK)
      rc = st->code;
  }
  for (int q = 0; rc == WF_OK && q < s->nfreq; q++) {
    char t[16], name[32];
    tag(q, t, sizeof t);
    snprintf(name, sizeof name, "hz_%d", q);
    rc = tl_io_write(&f, t, &op->a[q], op->norm[q], st);
    if (rc == WF_OK) rc = wf_h5_attr_num(&f, name, s->hz[q], st);
  }
  return wf_h5_finish(&f, rc, st);
}

/* Every rank learns every frequency's norm and tile ranks from its system;
 * the other systems' frequencies get matrices without tiles (their ranks
 * only: for the report, the model and the compressed file). */
static int share_operators(tlrmvm_ops *op, wf_status *st) {
  const tlrmvm_systems *y = op->sys;
  if (y->count == 1) return WF_OK;
  const tl_layout *l = &op->layout;
  size_t tiles = (size_t)l->mt * l->nt;
  int *rank = malloc(tiles * sizeof *rank);
  int failed = !rank, rc = WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, y->world);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  op->empty = *l;
  op->empty.i0 = op->empty.i1 = op->empty.j0 = op->empty.j1 = 0;
  for (int f = 0; f < op->nfreq && rc == WF_OK; f++) {
    if (tlrmvm_mine(y, f)) memcpy(rank, op->a[f].rank, tiles * sizeof *rank);
    MPI_Bcast(rank, (int)tiles, MPI_INT, tlrmvm_root_of(y, f), y->world);
    MPI_Bcast(&op->norm[f], 1, MPI_DOUBLE, tlrmvm_root_of(y, f), y->world);
    if (!tlrmvm_mine(y, f)) rc = tl_matrix_alloc(&op->a[f], &op->empty, rank, st);
  }
  free(rank);
  wf_status_agree(y->world, st);
  return st->code;
}

/* Each frequency's compression error, summed over the ranks holding its
 * tiles (the others add zero), and the bound acc puts on it. */
static void errors(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op) {
  double tiles = (double)op->layout.mt * op->layout.nt;
  op->bound = s->opts.acc * (s->opts.global_norm ? sqrt(tiles) : 1.0);
  for (int f = 0; f < op->nfreq; f++) op->error[f] = op->a[f].dropped2;
  MPI_Allreduce(MPI_IN_PLACE, op->error, op->nfreq, MPI_DOUBLE, MPI_SUM, run->comm);
  for (int f = 0; f < op->nfreq; f++) op->error[f] = op->loaded ? -1 : sqrt(op->error[f]);
}

int tlrmvm_build(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, wf_status *st) {
  wf_status_clear(st);
  op->a = calloc((size_t)s->nfreq, sizeof *op->a);
  op->norm = calloc((size_t)s->nfreq, sizeof *op->norm);
  op->error = calloc((size_t)s->nfreq, sizeof *op->error);
  int failed = !op->a || !op->norm || !op->error;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  op->nfreq = s->nfreq;
  bool reuse = s->compressed[0] && access(s->compressed, F_OK) == 0;
  double t0 = MPI_Wtime();
  int rc = reuse ? load_compressed(run, s, op, st) : WF_OK;
  for (int f = 0; !reuse && f < s->nfreq && rc == WF_OK; f++) {
    if (!tlrmvm_mine(op->sys, f)) continue;
    source src = {.s = s, .hz = s->hz[f]};
    rc = s->input[0] ? input_block(run, s, &op->layout, f, &src, st) : WF_OK;
    if (rc == WF_OK && run->verbose && s->nfreq > 1)
      printf("tlrmvm: compressing %g Hz\n", s->hz[f]);
    if (rc == WF_OK)
      rc =
          tl_compress(&op->a[f], &op->layout, fill, &src, &s->opts, run->verbose, &op->norm[f], st);
    free((void *)src.block);
  }
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  op->compress_seconds = MPI_Wtime() - t0;
  if (share_operators(op, st) != WF_OK) return st->code;
  errors(run, s, op);
  if (!reuse && s->compressed[0]) return save_compressed(run, s, op, st);
  return WF_OK;
}

/* Frequency f's dense block, from the survey or the input, into slot
 * `slot` of d. */
int tlrmvm_dense_fill(wf_run *run, const tlrmvm_setup *s, tl_dense *d, int slot, int f,
                      wf_status *st) {
  source src = {.s = s, .hz = s->hz[f]};
  if (s->input[0] && input_block(run, s, d->l, f, &src, st) != WF_OK) return st->code;
  /* A tile's width of columns at a time, stopping (the block then partial:
   * the caller's wf_signal_stop finds why) on a signal: a block of a large
   * survey takes seconds. */
  for (int c = 0; d->rows > 0 && c < d->cols && !wf_signal_stop(); c += s->nb) {
    int w = d->cols - c < s->nb ? d->cols - c : s->nb;
    fill(&src, d->r0, d->rows, d->c0 + c, w, d->block[slot] + (size_t)c * d->rows, d->rows);
  }
  free((void *)src.block);
  return WF_OK;
}

/* Every frequency's dense block (dense = time, and MDD). */
int tlrmvm_dense_all(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, tl_dense *d,
                     wf_status *st) {
  bool *used = malloc((size_t)s->nfreq * sizeof *used);
  if (!used) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  for (int f = 0; f < s->nfreq; f++) used[f] = tlrmvm_mine(op->sys, f);
  int rc = tl_dense_create(d, &op->layout, s->nfreq, used, st);
  free(used);
  for (int f = 0; f < s->nfreq && rc == WF_OK; f++)
    if (tlrmvm_mine(op->sys, f)) rc = tlrmvm_dense_fill(run, s, d, f, f, st);
  wf_signal_barrier(run->comm);
  int sig = wf_signal_stop();
  if (rc == WF_OK) wf_status_clear(st);
  if (rc == WF_OK && sig) wf_signal_fail(st, sig, "while building the dense operators");
  wf_status_agree(run->comm, st);
  return st->code;
}
