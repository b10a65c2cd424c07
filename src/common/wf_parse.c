/* Strict number parsing (wf_parse.h): an integer within bounds, and "N1xN2x..." sizes.
 * Trailing text or an out-of-range value is an error, never clamped. */
#include "wf_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int wf_parse_int(const char **p, long long min, long long max, long long *out) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t') s++;
  const char *digits = s + (*s == '-' || *s == '+');
  if (!isdigit((unsigned char)*digits)) return WF_PARSE_SYNTAX;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  *p = end;
  if (errno == ERANGE || v < min || v > max) return WF_PARSE_RANGE;
  *out = v;
  return WF_PARSE_OK;
}

int wf_parse_dims(const char *text, int n, long long min, long long max, long long *out) {
  const char *p = text;
  int worst = WF_PARSE_OK;
  for (int i = 0; i < n; i++) {
    if (i > 0) {
      while (*p == ' ' || *p == '\t') p++;
      if (*p != 'x' && *p != 'X') return WF_PARSE_SYNTAX;
      p++;
    }
    int rc = wf_parse_int(&p, min, max, &out[i]);
    if (rc == WF_PARSE_SYNTAX) return rc;
    if (rc == WF_PARSE_RANGE) worst = rc; /* a syntax error later still wins */
  }
  while (*p == ' ' || *p == '\t') p++;
  return *p ? WF_PARSE_SYNTAX : worst;
}
