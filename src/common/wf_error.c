/* Error statuses (wf_error.h): set a code and its message, add context to one, clear it. */
#include "wf_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int wf_fail(wf_status *st, int code, const char *fmt, ...) {
  st->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->msg, sizeof st->msg, fmt, ap);
  va_end(ap);
  return code;
}

int wf_wrap(wf_status *st, const char *fmt, ...) {
  char prefix[512], old[sizeof st->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, st->msg, sizeof old);
  snprintf(st->msg, sizeof st->msg, "%s: %s", prefix, old);
  return st->code;
}

void wf_status_clear(wf_status *st) {
  st->code = WF_OK;
  st->msg[0] = '\0';
}
