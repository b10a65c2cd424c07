/* A byte-level corpus (vocabulary 256): a text file, gzip-compressed or not,
 * read by rank 0 and broadcast, split into training and validation parts,
 * and batches drawn from either by a counter-based generator, so that
 * sequence i of step s is the same whatever the number of replicas. */
#ifndef WS_CORPUS_H
#define WS_CORPUS_H

#include <mpi.h>
#include <stddef.h>

#include "wf_error.h"

typedef struct ws_corpus {
  unsigned char *bytes;
  size_t len;
  size_t train_len; /* bytes [0, train_len) train; the rest validate */
} ws_corpus;

typedef enum { WS_TRAIN, WS_VAL } ws_split;

/* Read `path` (at most max_bytes once uncompressed); the last `val_fraction`
 * validates. Input errors: unreadable, or a part shorter than one sequence
 * of `seq` tokens and its target. Collective. */
int ws_corpus_load(ws_corpus *c, MPI_Comm comm, const char *path, size_t max_bytes,
                   double val_fraction, int seq, wf_status *st);
void ws_corpus_free(ws_corpus *c);

/* Sequences [first, first + count) of the global batch of step `step`:
 * tokens and targets (the next bytes), each count x T. */
void ws_corpus_batch(const ws_corpus *c, ws_split split, unsigned long long seed, long step,
                     int first, int count, int T, int *tokens, int *targets);

#endif
