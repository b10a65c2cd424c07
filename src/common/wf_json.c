/* The JSON builder of the one-line run summary (wf_json.h): keys and values appended to a
 * string buffer, strings escaped, non-finite numbers written as null. */
#include "wf_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(wf_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(wf_json *j, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wf_strbuf_vprintf(&j->b, fmt, ap);
  va_end(ap);
}

static void put_string(wf_json *j, const char *s) {
  put(j, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') put(j, "\\%c", *p);
    else if (*p == '\n') put(j, "\\n");
    else if (*p < 0x20) put(j, "\\u%04x", *p);
    else put(j, "%c", *p);
  }
  put(j, "\"");
}

static void key(wf_json *j, const char *k) {
  if (j->need_comma) put(j, ",");
  put_string(j, k);
  put(j, ":");
  j->need_comma = true;
}

void wf_json_init(wf_json *j) {
  memset(j, 0, sizeof *j);
  put(j, "{");
  j->depth = 1;
}

void wf_json_free(wf_json *j) {
  wf_strbuf_free(&j->b);
  memset(j, 0, sizeof *j);
}

void wf_json_str(wf_json *j, const char *k, const char *v) {
  key(j, k);
  put_string(j, v);
}

void wf_json_num(wf_json *j, const char *k, double v) {
  key(j, k);
  if (isfinite(v)) put(j, "%.9g", v);
  else put(j, "null");
}

void wf_json_int(wf_json *j, const char *k, long long v) {
  key(j, k);
  put(j, "%lld", v);
}

void wf_json_bool(wf_json *j, const char *k, bool v) {
  key(j, k);
  put(j, "%s", v ? "true" : "false");
}

void wf_json_range(wf_json *j, const char *k, double lo, double hi) {
  key(j, k);
  put(j, "[");
  for (int i = 0; i < 2; i++) {
    double v = i ? hi : lo;
    if (isfinite(v)) put(j, "%s%.9g", i ? "," : "", v);
    else put(j, "%snull", i ? "," : "");
  }
  put(j, "]");
}

void wf_json_ints(wf_json *j, const char *k, const long long *v, int n) {
  key(j, k);
  put(j, "[");
  for (int i = 0; i < n; i++) put(j, "%s%lld", i ? "," : "", v[i]);
  put(j, "]");
}

void wf_json_nums(wf_json *j, const char *k, const double *v, int n) {
  key(j, k);
  put(j, "[");
  for (int i = 0; i < n; i++) {
    if (isfinite(v[i])) put(j, "%s%.9g", i ? "," : "", v[i]);
    else put(j, "%snull", i ? "," : "");
  }
  put(j, "]");
}

void wf_json_raw(wf_json *j, const char *k, const char *json) {
  key(j, k);
  put(j, "%s", json);
}

void wf_json_begin(wf_json *j, const char *k) {
  key(j, k);
  put(j, "{");
  j->depth++;
  j->need_comma = false;
}

void wf_json_end(wf_json *j) {
  if (j->depth <= 1) return;
  put(j, "}");
  j->depth--;
  j->need_comma = true;
}

const char *wf_json_finish(wf_json *j) {
  if (j->b.oom || !j->b.s)
    return "{\"status\":\"error\",\"error\":\"out of memory while building this summary\"}";
  while (j->depth > 0) {
    put(j, "}");
    j->depth--;
  }
  return j->b.oom ? "{\"status\":\"error\",\"error\":\"out of memory while building this summary\"}"
                  : j->b.s;
}
