/* Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html) as
 * the SDK's Cholesky and SpMV examples take users' matrices: the coordinate
 * format, real, integer or pattern, general or symmetric. Each rank reads
 * the file itself and keeps the entries it owns (a parallel file system
 * serves every rank; no rank holds the whole matrix). */
#ifndef SDK_MTX_H
#define SDK_MTX_H

#include <stdbool.h>

#include "wf_error.h"

/* The largest magnitude of a value read: products of two stay finite. */
#define SDK_MTX_MAX_ABS 1e150
/* The largest rows, columns or entries a size line may give: 2^48. */
#define SDK_MTX_MAX_SIZE (1LL << 48)

typedef struct sdk_mtx_info {
  long long rows, cols, entries; /* the size line: entries as stored */
  bool symmetric;                /* only one triangle stored; (c, r) mirrors (r, c) */
  bool pattern;                  /* no values: every stored entry is 1 */
  bool integer;                  /* integer values */
} sdk_mtx_info;

/* What the reader tells its caller: `size` once the header and size line
 * are read (it may refuse the matrix, or allocate), then `entry` for every
 * stored entry (0-based row and column, as stored: a symmetric file's
 * mirror is the caller's). Either returns WF_OK or fails `st`. */
typedef struct sdk_mtx_sink {
  int (*size)(void *ctx, const sdk_mtx_info *info, wf_status *st);
  int (*entry)(void *ctx, long long r, long long c, double v, wf_status *st);
  void *ctx;
} sdk_mtx_sink;

/* Read `path` into `sink`. A file that is not Matrix Market, a format this
 * reader does not take (array, complex, hermitian, skew-symmetric), an entry
 * out of range, a value that is not finite or is beyond SDK_MTX_MAX_ABS, or
 * a line that does not parse fails `st` as bad input, naming
 * `key` (the deck key that named the file), the file and its line. Stops at
 * wf_signal_stop() (polled every 2^20 lines) with the signal's status. */
int sdk_mtx_read(const char *path, const char *key, const sdk_mtx_sink *sink, wf_status *st);
/* The banner and size line alone, with the same errors. */
int sdk_mtx_head(const char *path, const char *key, sdk_mtx_info *info, wf_status *st);

#endif
