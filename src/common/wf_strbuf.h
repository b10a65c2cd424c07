/* A growable string for building text (deck dumps, JSON summaries). */
#ifndef WF_STRBUF_H
#define WF_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct wf_strbuf {
  char *s; /* NUL-terminated once anything was appended */
  size_t len, cap;
  bool oom; /* ran out of memory: nothing more is appended */
} wf_strbuf;

void wf_strbuf_printf(wf_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wf_strbuf_vprintf(wf_strbuf *b, const char *fmt, va_list ap);
void wf_strbuf_free(wf_strbuf *b);

#endif
