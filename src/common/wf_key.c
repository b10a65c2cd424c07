/* Key tables (wf_key.h): a value parsed and checked against its key (type,
 * range, choices, the key's own check), and the tables printed as the
 * Markdown reference of docs/decks.md. */
#include "wf_key.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *wf_key_type_name(wf_key_type t) {
  switch (t) {
  case WF_KEY_INT: return "integer";
  case WF_KEY_REAL: return "real";
  case WF_KEY_BOOL: return "bool";
  case WF_KEY_STRING: return "string";
  case WF_KEY_CHOICE: return "choice";
  case WF_KEY_INPUT: return "input file";
  case WF_KEY_OUTPUT: return "output file";
  case WF_KEY_CACHE: return "cache file";
  }
  return "?";
}

int wf_key_parse_long(const char *s, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

int wf_key_parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int wf_key_parse_bool(const char *s, bool *out) {
  static const char *yes[] = {"true", "yes", "on", "1"}, *no[] = {"false", "no", "off", "0"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0) return *out = true, 0;
    if (strcasecmp(s, no[i]) == 0) return *out = false, 0;
  }
  return -1;
}

static bool choice_allowed(const char *choices, const char *value) {
  size_t n = strlen(value);
  for (const char *p = choices; *p;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, value, n) == 0) return true;
    p += len + (bar ? 1 : 0);
  }
  return false;
}

/* Print a range bound without a trailing ".000000". */
void wf_key_bound(char *buf, size_t len, double v) { snprintf(buf, len, "%.15g", v); }

int wf_key_validate(const wf_key *key, const char *value, char *why, size_t len) {
  /* A deck is lines, and so are the deck values a checkpoint records. */
  if (strpbrk(value, "\n\r")) return snprintf(why, len, "a line break in a value"), -1;
  char lo[32], hi[32];
  wf_key_bound(lo, sizeof lo, key->min);
  wf_key_bound(hi, sizeof hi, key->max);
  switch (key->type) {
  case WF_KEY_INT: {
    long v;
    if (wf_key_parse_long(value, &v) != 0) return snprintf(why, len, "not an integer"), -1;
    if (v < key->min || v > key->max)
      return snprintf(why, len, "out of range [%s, %s]", lo, hi), -1;
    break;
  }
  case WF_KEY_REAL: {
    double v;
    if (wf_key_parse_double(value, &v) != 0) return snprintf(why, len, "not a finite real number"), -1;
    if (v < key->min || v > key->max)
      return snprintf(why, len, "out of range [%s, %s]", lo, hi), -1;
    break;
  }
  case WF_KEY_BOOL: {
    bool b;
    if (wf_key_parse_bool(value, &b) != 0)
      return snprintf(why, len, "not a bool (true/false, yes/no, on/off, 1/0)"), -1;
    break;
  }
  case WF_KEY_CHOICE:
    if (!choice_allowed(key->choices, value))
      return snprintf(why, len, "not one of %s", key->choices), -1;
    break;
  case WF_KEY_STRING:
  case WF_KEY_INPUT:
  case WF_KEY_OUTPUT:
  case WF_KEY_CACHE: break;
  }
  if (key->check) return key->check(value, why, len) == 0 ? 0 : -1;
  return 0;
}

void wf_key_print_reference(const wf_section *const *sections, int nsections, FILE *out) {
  for (int s = 0; s < nsections; s++) {
    const wf_section *sec = sections[s];
    fprintf(out, "\n#### [%s]\n\n%s\n\n", sec->name, sec->help);
    fprintf(out, "| key | type | default | allowed | meaning |\n| --- | --- | --- | --- | --- |\n");
    for (int k = 0; k < sec->nkeys; k++) {
      const wf_key *key = &sec->keys[k];
      char allowed[160] = "";
      if (key->type == WF_KEY_INT || key->type == WF_KEY_REAL) {
        char lo[32], hi[32];
        wf_key_bound(lo, sizeof lo, key->min);
        wf_key_bound(hi, sizeof hi, key->max);
        snprintf(allowed, sizeof allowed, "%s .. %s", lo, hi);
      } else if (key->type == WF_KEY_CHOICE) {
        snprintf(allowed, sizeof allowed, "%s", key->choices);
        for (char *p = allowed; *p; p++)
          if (*p == '|') *p = '/';
      } else if (key->type == WF_KEY_BOOL) {
        snprintf(allowed, sizeof allowed, "true/false");
      }
      fprintf(out, "| `%s` | %s | `%s` | %s | %s |\n", key->name, wf_key_type_name(key->type),
              key->def[0] ? key->def : "\"\"", allowed, key->help);
    }
    if (!sec->restart_from) continue;
    fprintf(out, "\nA run continued from a checkpoint (`%s`) may change ", sec->restart_from);
    for (const char *p = sec->restart_free ? sec->restart_free : ""; *p;) {
      size_t l = strcspn(p, " ");
      fprintf(out, "`%.*s`, ", (int)l, p);
      p += l + (p[l] == ' ');
    }
    fprintf(out, "and any output file; every other key keeps the value the checkpoint records, "
                 "or the run is refused.\n");
  }
}
