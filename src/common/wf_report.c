/* A run's report (wf_report.h): each quantity written to the JSON summary and,
 * through its one-conversion template, to the report's current text line. */
#include "wf_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void wf_report_open_on(wf_report *r, wf_json *json, FILE *out, const char *prefix) {
  *r = (wf_report){.json = json, .out = out, .prefix = prefix, .machine = ""};
}

void wf_report_open(wf_report *r, const wf_run *run, const char *prefix) {
  wf_report_open_on(r, run->summary, run->verbose ? stdout : NULL, prefix);
  r->machine = run->machine ? run->machine : run->hardware;
}

static void end_line(wf_report *r) {
  if (r->out && r->line.len) fprintf(r->out, "%s\n", r->line.s);
  r->line.len = 0;
  if (r->line.s) r->line.s[0] = '\0';
  r->items = 0;
}

void wf_report_flush(wf_report *r) {
  end_line(r);
  if (r->out) fflush(r->out);
}

void wf_report_close(wf_report *r) {
  wf_report_flush(r);
  wf_strbuf_free(&r->line);
}

void wf_report_line(wf_report *r, const char *title) {
  end_line(r);
  if (!r->out) return;
  wf_strbuf_printf(&r->line, "%s: ", r->prefix);
  if (title) wf_strbuf_printf(&r->line, "%s: ", title);
}

/* Room for the next item: the line's start if none is open, else ", ". */
static void next_item(wf_report *r) {
  if (!r->line.len) wf_report_line(r, NULL);
  if (r->items++) wf_strbuf_printf(&r->line, ", ");
}

void wf_report_note(wf_report *r, const char *fmt, ...) {
  if (!r->out) return;
  next_item(r);
  va_list ap;
  va_start(ap, fmt);
  wf_strbuf_vprintf(&r->line, fmt, ap);
  va_end(ap);
}

void wf_report_begin(wf_report *r, const char *key) {
  if (r->json) wf_json_begin(r->json, key);
}

void wf_report_end(wf_report *r) {
  if (r->json) wf_json_end(r->json);
}

/* ---- templates ---- */

/* A template split at its one conversion: the text before and after it,
 * and the conversion itself with no length modifier ("%.3g", "%5d"). */
typedef struct piece {
  const char *before, *after;
  int before_len;
  char spec[32];
  char conv;
} piece;

/* Splits `text`; false if it has no conversion, more than one, or one
 * that is not among `allowed`. */
static bool split(const char *text, const char *allowed, piece *p) {
  const char *at = NULL;
  for (const char *c = text; *c; c++) {
    if (*c != '%') continue;
    if (c[1] == '%') {
      c++;
      continue;
    }
    if (at) return false; /* a second conversion */
    at = c;
  }
  if (!at) return false;
  const char *c = at + 1;
  size_t n = 0;
  p->spec[n++] = '%';
  while (*c && strchr("-+ #0", *c) && n < 16) p->spec[n++] = *c++;
  while (*c >= '0' && *c <= '9' && n < 20) p->spec[n++] = *c++;
  if (*c == '.') {
    p->spec[n++] = *c++;
    while (*c >= '0' && *c <= '9' && n < 26) p->spec[n++] = *c++;
  }
  while (*c && strchr("hlLqjzt", *c)) c++; /* length modifiers: the value's own is used */
  if (!*c || !strchr(allowed, *c)) return false;
  p->conv = *c;
  p->spec[n++] = *c;
  p->spec[n] = '\0';
  p->before = text, p->before_len = (int)(at - text), p->after = c + 1;
  return true;
}

/* The caller's bug: a template that cannot show its value. */
static void bad_template(const wf_report *r, const char *key, const char *text) {
  fprintf(stderr, "wafer: internal error: %s report: template \"%s\" of %s does not fit its value\n",
          r->prefix, text, key ? key : "a text-only item");
  abort();
}

/* Template text that is no conversion onto the line, "%%" as "%". */
static void put_literal(wf_report *r, const char *from, const char *to) {
  for (const char *c = from; c < to; c++) {
    wf_strbuf_printf(&r->line, "%c", *c);
    if (c[0] == '%' && c + 1 < to && c[1] == '%') c++;
  }
}

/* Opens the item: `text` up to its conversion; the caller appends the value. */
static bool open_item(wf_report *r, const char *key, const char *text, const char *allowed,
                      piece *p) {
  if (!text) return false;
  if (!split(text, allowed, p)) bad_template(r, key, text);
  if (!r->out) return false;
  next_item(r);
  put_literal(r, p->before, p->before + p->before_len);
  return true;
}

/* Closes it: the rest of the template. */
static void close_item(wf_report *r, const piece *p) {
  put_literal(r, p->after, p->after + strlen(p->after));
}

#define FLOATING "feEgGaA"
#define INTEGER "di"

/* Shows one number by the template's floating conversion. */
static void put_value(wf_report *r, const piece *p, double v) {
  wf_strbuf_printf(&r->line, p->spec, v);
}

/* Shows one integer by the template's d or i conversion, as a long long. */
static void put_int(wf_report *r, const piece *p, long long v) {
  char spec[40];
  snprintf(spec, sizeof spec, "%.*sll%c", (int)strlen(p->spec) - 1, p->spec, p->conv);
  wf_strbuf_printf(&r->line, spec, v);
}

void wf_report_scaled(wf_report *r, const char *key, double v, double scale, const char *text) {
  if (key && r->json) wf_json_num(r->json, key, v);
  piece p;
  if (!open_item(r, key, text, FLOATING, &p)) return;
  put_value(r, &p, v * scale);
  close_item(r, &p);
}

void wf_report_num(wf_report *r, const char *key, double v, const char *text) {
  wf_report_scaled(r, key, v, 1, text);
}

void wf_report_int(wf_report *r, const char *key, long long v, const char *text) {
  if (key && r->json) wf_json_int(r->json, key, v);
  piece p;
  if (!open_item(r, key, text, INTEGER, &p)) return;
  put_int(r, &p, v);
  close_item(r, &p);
}

void wf_report_str(wf_report *r, const char *key, const char *v, const char *text) {
  if (key && r->json) wf_json_str(r->json, key, v);
  piece p;
  if (!open_item(r, key, text, "s", &p)) return;
  wf_strbuf_printf(&r->line, p.spec, v);
  close_item(r, &p);
}

void wf_report_bool(wf_report *r, const char *key, bool v, const char *text) {
  if (key && r->json) wf_json_bool(r->json, key, v);
  piece p;
  if (!open_item(r, key, text, "s", &p)) return;
  wf_strbuf_printf(&r->line, p.spec, v ? "yes" : "no");
  close_item(r, &p);
}

void wf_report_range(wf_report *r, const char *key, double lo, double hi, double scale,
                     const char *text) {
  if (key && r->json) wf_json_range(r->json, key, lo, hi);
  piece p;
  if (!open_item(r, key, text, FLOATING, &p)) return;
  wf_strbuf_printf(&r->line, "[");
  put_value(r, &p, lo * scale);
  wf_strbuf_printf(&r->line, ", ");
  put_value(r, &p, hi * scale);
  wf_strbuf_printf(&r->line, "]");
  close_item(r, &p);
}

void wf_report_ints(wf_report *r, const char *key, const long long *v, int n, const char *text) {
  if (key && r->json) wf_json_ints(r->json, key, v, n);
  piece p;
  if (!open_item(r, key, text, INTEGER, &p)) return;
  for (int i = 0; i < n; i++) {
    if (i) wf_strbuf_printf(&r->line, "x");
    put_int(r, &p, v[i]);
  }
  close_item(r, &p);
}

void wf_report_nums(wf_report *r, const char *key, const double *v, int n, const char *text) {
  if (key && r->json) wf_json_nums(r->json, key, v, n);
  piece p;
  if (!open_item(r, key, text, FLOATING, &p)) return;
  for (int i = 0; i < n; i++) {
    if (i) wf_strbuf_printf(&r->line, ", ");
    put_value(r, &p, v[i]);
  }
  close_item(r, &p);
}

void wf_report_model(wf_report *r, const wf_projection *p) {
  wf_report_begin(r, "model");
  if (r->json) wf_projection_json(p, r->json);
  char title[96], unit[48];
  snprintf(title, sizeof title, "wafer model (%s)", r->machine);
  wf_report_line(r, title);
  if (!p->valid) {
    wf_report_note(r, "no projection");
    return;
  }
  double hi = p->seconds.hi, scale = hi < 1e-3 ? 1e6 : hi < 1 ? 1e3 : 1;
  snprintf(unit, sizeof unit, "%%.3g %s/%s", scale == 1e6 ? "us" : scale == 1e3 ? "ms" : "s",
           p->unit);
  wf_report_range(r, NULL, p->seconds.lo, p->seconds.hi, scale, unit);
  wf_report_note(r, "%.0f of %.0f PEs (%s)", p->pes_needed, p->pes_offered,
                 p->pes_needed <= p->pes_offered ? "fits" : "does NOT fit");
  wf_report_note(r, "%.0f B/PE of %.0f (%s)", p->bytes_per_pe, p->sram_for_data,
                 p->bytes_per_pe <= p->sram_for_data ? "fits" : "does NOT fit");
}
