/* Error statuses (wf_error.h): set a code and its message, add context to one, clear it. */
#include "wf_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message `wanted` characters long cut to fit msg[size]: its end says so. */
static void mark_cut(char *msg, size_t size, int wanted) {
  static const char cut[] = " [...]";
  if (wanted >= 0 && (size_t)wanted < size) return;
  memcpy(msg + size - sizeof cut, cut, sizeof cut);
}

int wf_fail(wf_status *st, int code, const char *fmt, ...) {
  st->code = code;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(st->msg, sizeof st->msg, fmt, ap);
  va_end(ap);
  mark_cut(st->msg, sizeof st->msg, n);
  return code;
}

int wf_wrap(wf_status *st, const char *fmt, ...) {
  char prefix[sizeof st->msg], old[sizeof st->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, st->msg, sizeof old);
  int n = snprintf(st->msg, sizeof st->msg, "%s: %s", prefix, old);
  mark_cut(st->msg, sizeof st->msg, n);
  return st->code;
}

void wf_status_clear(wf_status *st) {
  st->code = WF_OK;
  st->msg[0] = '\0';
}
