/* Reading Matrix Market coordinate files (sdk_mtx.h). */
#include "sdk_mtx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wf_signal.h"

/* A line of the file, with what a message about it needs. */
typedef struct mtx_file {
  FILE *f;
  const char *path, *key;
  long long line;
  bool nul; /* the line holds a NUL byte */
  char *buf;
  size_t cap;
} mtx_file;

static int bad(const mtx_file *m, wf_status *st, const char *what) {
  return wf_fail(st, WF_ERR_INPUT, "%s = %s: line %lld: %s", m->key, m->path, m->line, what);
}

/* The next line (false at the end of the file). */
static bool next_line(mtx_file *m) {
  ssize_t n = getline(&m->buf, &m->cap, m->f);
  if (n < 0) return false;
  m->line++;
  m->nul = strlen(m->buf) != (size_t)n; /* a NUL byte would hide the rest of the line */
  return true;
}

static bool blank(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  return *s == '\0';
}

/* The banner: "%%MatrixMarket matrix coordinate FIELD SYMMETRY". */
static int read_banner(mtx_file *m, sdk_mtx_info *info, wf_status *st) {
  char obj[32] = "", fmt[32] = "", field[32] = "", sym[32] = "", extra[2];
  if (!next_line(m))
    return wf_fail(st, WF_ERR_INPUT, "%s = %s: the file is empty", m->key, m->path);
  if (strncmp(m->buf, "%%MatrixMarket", 14) != 0)
    return bad(m, st, "not a Matrix Market file (its first line must start %%MatrixMarket)");
  if (m->nul || sscanf(m->buf + 14, "%31s %31s %31s %31s %1s", obj, fmt, field, sym, extra) != 4 ||
      strcasecmp(obj, "matrix") != 0)
    return bad(m, st, "the banner must read \"%%MatrixMarket matrix FORMAT FIELD SYMMETRY\"");
  if (strcasecmp(fmt, "coordinate") != 0)
    return bad(m, st, "only the coordinate format is read (this file is not: a dense \"array\" "
                      "matrix can be converted with scipy.io.mmwrite of a sparse matrix)");
  info->pattern = strcasecmp(field, "pattern") == 0;
  info->integer = strcasecmp(field, "integer") == 0;
  if (!info->pattern && strcasecmp(field, "real") != 0 && strcasecmp(field, "integer") != 0)
    return bad(m, st, "the field must be real, integer or pattern (complex is not read)");
  info->symmetric = strcasecmp(sym, "symmetric") == 0;
  if (!info->symmetric && strcasecmp(sym, "general") != 0)
    return bad(m, st, "the symmetry must be general or symmetric (skew-symmetric and hermitian "
                      "are not read)");
  return WF_OK;
}

/* The size line after the comments: "ROWS COLS ENTRIES". */
static int read_size(mtx_file *m, sdk_mtx_info *info, wf_status *st) {
  do {
    if (!next_line(m)) return bad(m, st, "the file ends before its size line");
  } while (m->buf[0] == '%' || blank(m->buf));
  long long v[3];
  char *at = m->buf, *end;
  for (int k = 0; k < 3; k++, at = end) {
    errno = 0;
    v[k] = strtoll(at, &end, 10);
    if (end == at || errno == ERANGE || m->nul)
      return bad(m, st, errno == ERANGE ? "a number of the size line is beyond 2^63"
                                        : "the size line must be three integers: rows, columns, "
                                          "entries");
  }
  if (!blank(at)) return bad(m, st, "the size line must be three integers: rows, columns, entries");
  info->rows = v[0], info->cols = v[1], info->entries = v[2];
  if (info->rows > SDK_MTX_MAX_SIZE || info->cols > SDK_MTX_MAX_SIZE ||
      info->entries > SDK_MTX_MAX_SIZE)
    return bad(m, st, "the size line's rows, columns or entries pass 2^48");
  if (info->rows < 1 || info->cols < 1 || info->entries < 0)
    return bad(m, st, "the size line's rows and columns must be at least 1, its entries at least 0");
  if (info->symmetric && info->rows != info->cols)
    return bad(m, st, "a symmetric matrix must be square");
  return WF_OK;
}

/* One entry line: "ROW COL [VALUE]", 1-based. */
static int parse_entry(mtx_file *m, const sdk_mtx_info *info, long long *r, long long *c, double *v,
                       wf_status *st) {
  char *s = m->buf, *end;
  errno = 0;
  *r = strtoll(s, &end, 10), s = end;
  *c = strtoll(s, &end, 10);
  if (end == s || errno) return bad(m, st, "an entry must start with its row and column");
  s = end;
  *v = 1.0;
  if (!info->pattern) {
    while (isspace((unsigned char)*s)) s++;
    /* strtod reads hexadecimal too, which Matrix Market (and scipy) do not */
    if (strpbrk(s, "xX")) return bad(m, st, "the entry's value is not a decimal number");
    *v = strtod(s, &end);
    if (end == s) return bad(m, st, "an entry of a real or integer matrix needs its value");
    s = end;
    if (info->integer && *v == *v && *v != floor(*v))
      return bad(m, st, "an entry of an integer matrix has a value that is not an integer");
  }
  if (!blank(s) || m->nul) return bad(m, st, "more on the line than an entry");
  if (*r < 1 || *r > info->rows || *c < 1 || *c > info->cols)
    return bad(m, st, "the entry's row or column is outside the size line's matrix");
  if (!(fabs(*v) <= SDK_MTX_MAX_ABS))
    return bad(m, st, *v != *v   ? "the entry's value is not a number"
                      : isinf(*v) ? "the entry's value is infinite"
                                  : "the entry's value is beyond 1e150 in magnitude (products of "
                                    "two would overflow double precision)");
  (*r)--, (*c)--;
  return WF_OK;
}

static int read_entries(mtx_file *m, const sdk_mtx_info *info, const sdk_mtx_sink *sink,
                        wf_status *st) {
  long long got = 0;
  while (next_line(m)) {
    int sig = (m->line & 0xfffff) == 0 ? wf_signal_stop() : 0;
    if (sig) return wf_signal_fail(st, sig, "while reading the matrix");
    if (m->buf[0] == '%' || blank(m->buf)) continue;
    if (got == info->entries) return bad(m, st, "more entries than the size line says");
    long long r = 0, c = 0;
    double v = 0;
    if (parse_entry(m, info, &r, &c, &v, st) != WF_OK) return st->code;
    if (sink->entry(sink->ctx, r, c, v, st) != WF_OK) return st->code;
    got++;
  }
  if (ferror(m->f)) return bad(m, st, "a read error");
  if (got < info->entries) {
    char what[96];
    snprintf(what, sizeof what, "the file ends after %lld of its %lld entries", got, info->entries);
    return bad(m, st, what);
  }
  return WF_OK;
}

/* Open the file and read its banner and size line. */
static int open_head(mtx_file *m, sdk_mtx_info *info, wf_status *st) {
  m->f = fopen(m->path, "r");
  if (!m->f) return wf_fail(st, WF_ERR_INPUT, "%s = %s: %s", m->key, m->path, strerror(errno));
  int rc = read_banner(m, info, st);
  return rc == WF_OK ? read_size(m, info, st) : rc;
}

static void close_file(mtx_file *m) {
  free(m->buf);
  if (m->f) fclose(m->f);
}

int sdk_mtx_head(const char *path, const char *key, sdk_mtx_info *info, wf_status *st) {
  mtx_file m = {.path = path, .key = key};
  *info = (sdk_mtx_info){0};
  int rc = open_head(&m, info, st);
  close_file(&m);
  return rc;
}

int sdk_mtx_read(const char *path, const char *key, const sdk_mtx_sink *sink, wf_status *st) {
  mtx_file m = {.path = path, .key = key};
  sdk_mtx_info info = {0};
  int rc = open_head(&m, &info, st);
  if (rc == WF_OK) rc = sink->size(sink->ctx, &info, st);
  if (rc == WF_OK) rc = read_entries(&m, &info, sink, st);
  close_file(&m);
  return rc;
}
