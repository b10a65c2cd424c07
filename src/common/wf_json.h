/* A small JSON object builder for the one-line run summary. */
#ifndef WF_JSON_H
#define WF_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_strbuf.h"

typedef struct wf_json {
  wf_strbuf b; /* out of memory: finish() returns an error summary */
  int depth;
  bool need_comma;
} wf_json;

void wf_json_init(wf_json *j);  /* starts the top-level object */
void wf_json_free(wf_json *j);
void wf_json_str(wf_json *j, const char *key, const char *value);
void wf_json_num(wf_json *j, const char *key, double value); /* non-finite -> null */
void wf_json_int(wf_json *j, const char *key, long long value);
void wf_json_bool(wf_json *j, const char *key, bool value);
/* [lo, hi] */
void wf_json_range(wf_json *j, const char *key, double lo, double hi);
void wf_json_ints(wf_json *j, const char *key, const long long *v, int n);
void wf_json_nums(wf_json *j, const char *key, const double *v, int n); /* non-finite -> null */
void wf_json_raw(wf_json *j, const char *key, const char *json); /* an already-built value */
void wf_json_begin(wf_json *j, const char *key);                 /* nested object */
void wf_json_end(wf_json *j);
/* Close all open objects and return the text (owned by j). */
const char *wf_json_finish(wf_json *j);

#endif
