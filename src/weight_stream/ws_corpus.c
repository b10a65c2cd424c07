/* The byte-level corpus (ws_corpus.h): a text file, gzip or plain, read on rank 0 and
 * broadcast, split into training and validation bytes, and batches that are the same on any
 * number of replicas. */
#include "ws_corpus.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "wf_io.h"
#include "wf_random.h"

/* gzread reads plain files as they are, compressed ones decompressed. */
static unsigned char *slurp(const char *path, size_t max_bytes, size_t *len, wf_status *st) {
  int fd = wf_open_input(path, "corpus", st);
  gzFile f = fd >= 0 ? gzdopen(fd, "rb") : NULL;
  if (!f) {
    if (fd >= 0) close(fd), wf_fail(st, WF_ERR_RUNTIME, "cannot read the corpus '%s'", path);
    return NULL;
  }
  size_t cap = 1 << 20, n = 0;
  unsigned char *buf = malloc(cap);
  int got = 0;
  while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)got;
    if (n > max_bytes) break;
    if (n == cap) {
      unsigned char *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  /* A damaged or truncated gzip stream: gzread may return what it could
   * decompress and then 0; gzerror says the stream did not end. */
  int err = Z_OK;
  if (buf && n <= max_bytes) gzerror(f, &err);
  if (err != Z_OK) got = -1;
  gzclose(f);
  if (!buf) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory reading the corpus '%s'", path);
  } else if (got < 0) {
    wf_fail(st, WF_ERR_INPUT, "the corpus '%s' cannot be read (a damaged gzip file?)", path);
  } else if (n > max_bytes) {
    wf_fail(st, WF_ERR_INPUT, "the corpus '%s' is larger than %zu bytes", path, max_bytes);
  }
  if (st->code != WF_OK) {
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

int ws_corpus_load(ws_corpus *c, MPI_Comm comm, const char *path, size_t max_bytes,
                   double val_fraction, int seq, wf_status *st) {
  *c = (ws_corpus){0};
  int rank;
  MPI_Comm_rank(comm, &rank);
  wf_status_clear(st);
  unsigned long long len = 0;
  if (rank == 0) {
    c->bytes =
        slurp(path, max_bytes < WF_MAX_BCAST_BYTES ? max_bytes : WF_MAX_BCAST_BYTES, &c->len, st);
    len = c->len;
  }
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) return st->code;
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  if (rank != 0) c->bytes = malloc(len + 1);
  int failed = !c->bytes;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    ws_corpus_free(c);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the corpus");
  }
  c->len = (size_t)len;
  MPI_Bcast(c->bytes, (int)len, MPI_UNSIGNED_CHAR, 0, comm);
  c->train_len = (size_t)((double)c->len * (1.0 - val_fraction));
  size_t need = (size_t)seq + 1;
  if (c->train_len < need || c->len - c->train_len < need) {
    ws_corpus_free(c);
    return wf_fail(st, WF_ERR_INPUT,
                   "the corpus '%s' (%llu bytes) is too short: its training and validation "
                   "parts (%.0f%% of it) must each hold one sequence of %d bytes and its target",
                   path, len, 100 * val_fraction, seq);
  }
  return WF_OK;
}

void ws_corpus_free(ws_corpus *c) {
  free(c->bytes);
  *c = (ws_corpus){0};
}

void ws_corpus_batch(const ws_corpus *c, ws_split split, unsigned long long seed, long step,
                     int first, int count, int T, int *tokens, int *targets) {
  const unsigned char *base = split == WS_TRAIN ? c->bytes : c->bytes + c->train_len;
  size_t len = split == WS_TRAIN ? c->train_len : c->len - c->train_len;
  size_t starts = len - (size_t)T; /* a start needs T tokens and the byte after */
  for (int i = 0; i < count; i++) {
    uint64_t key = ((uint64_t)step << 24) ^ (uint64_t)(first + i) ^ ((uint64_t)split << 62);
    size_t at = (size_t)(wf_splitmix64(wf_splitmix64(seed) ^ key) % starts);
    for (int t = 0; t < T; t++) {
      tokens[i * T + t] = base[at + t];
      targets[i * T + t] = base[at + t + 1];
    }
  }
}
