/* A growable string (wf_strbuf.h): printf-style appends; out of memory, it stops appending
 * and says so. */
#include "wf_strbuf.h"

#include <stdio.h>
#include <stdlib.h>

void wf_strbuf_vprintf(wf_strbuf *b, const char *fmt, va_list ap) {
  if (b->oom) return;
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + (size_t)n + 1 > cap) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) b->oom = true;
    else b->s = s, b->cap = cap;
  }
  if (n >= 0 && !b->oom) {
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, again);
    b->len += (size_t)n;
  }
  va_end(again);
}

void wf_strbuf_printf(wf_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wf_strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void wf_strbuf_free(wf_strbuf *b) {
  free(b->s);
  *b = (wf_strbuf){0};
}
