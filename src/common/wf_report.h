/* A run's report, each quantity declared once: its JSON name, its value and
 * its text (a printf template with one conversion, the label and unit
 * around it: "Ra %g", "%d steps", "%.2f Mcell/s"). One call writes both,
 * the value into the run's JSON summary and its text into the report's
 * current line, so the two cannot drift:
 *
 *   wf_report r;
 *   wf_report_open(&r, run, "cfd");        lines start "cfd: "
 *   wf_report_begin(&r, "cfd");            {"cfd": {
 *   wf_report_line(&r, "heat");            cfd: heat:
 *   wf_report_int(&r, "steps", n, "%d steps");       "steps": n  /  100 steps
 *   wf_report_num(&r, "dt", dt, NULL);               JSON only
 *   wf_report_scaled(&r, "cell_updates_per_s", u, 1e-6, "%.1f Mcell/s");
 *   wf_report_end(&r);                     }
 *   wf_report_model(&r, &run->model);      "model": {...  /  cfd: wafer model (...): [lo, hi] us/step
 *   wf_report_end(&r);                     }
 *   wf_report_close(&r);
 *
 * A NULL key: text only; a NULL text: JSON only. A line's items are joined
 * by ", ". A template whose conversion does not fit the value's kind is a
 * bug in the caller: the run aborts with it named. */
#ifndef WF_REPORT_H
#define WF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "wf_json.h"
#include "wf_strbuf.h"
#include "wf_workload.h"

typedef struct wf_report {
  wf_json *json;      /* the run's summary (NULL: text only) */
  FILE *out;          /* where the lines go (NULL: no text: quiet, or not rank 0) */
  const char *prefix; /* each line's start: the workload's name */
  const char *machine; /* the wafer's, for the model's line */
  wf_strbuf line; /* the line so far */
  int items;      /* on it */
} wf_report;

/* A report on `run`'s summary, its lines on stdout when the run is verbose. */
void wf_report_open(wf_report *r, const wf_run *run, const char *prefix);
/* The same on any JSON builder and stream (NULL: none); tests use it. */
void wf_report_open_on(wf_report *r, wf_json *json, FILE *out, const char *prefix);
/* Ends the last line; the report is done. */
void wf_report_close(wf_report *r);
/* Ends the line so far now (output that is no quantity follows it). */
void wf_report_flush(wf_report *r);

/* Ends the line so far and starts "prefix: title: " (NULL: "prefix: "). */
void wf_report_line(wf_report *r, const char *title);
/* Words on the line that are no quantity (the text only). */
void wf_report_note(wf_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A nested JSON object and its end (the text is unaffected). */
void wf_report_begin(wf_report *r, const char *key);
void wf_report_end(wf_report *r);

/* Quantities. Templates: num, range and nums a floating conversion (f e E g
 * G a A, with the flags - + space # 0, a width and a precision in digits);
 * int and ints d or i (any length modifier: the value is a long long); str
 * s; bool s ("yes" / "no"). "%%" anywhere stands for "%". */
void wf_report_num(wf_report *r, const char *key, double v, const char *text);
/* The text shows v * scale (JSON: v): a rate in M/s, a time in us. */
void wf_report_scaled(wf_report *r, const char *key, double v, double scale, const char *text);
void wf_report_int(wf_report *r, const char *key, long long v, const char *text);
void wf_report_str(wf_report *r, const char *key, const char *v, const char *text);
void wf_report_bool(wf_report *r, const char *key, bool v, const char *text);
/* [lo, hi]: the JSON's two-number array; the text "[lo, hi]" in the template. */
void wf_report_range(wf_report *r, const char *key, double lo, double hi, double scale,
                     const char *text);
/* n integers: the text joins them by "x" (a box's cells, a grid). */
void wf_report_ints(wf_report *r, const char *key, const long long *v, int n, const char *text);
/* n numbers: the text joins them by ", ". */
void wf_report_nums(wf_report *r, const char *key, const double *v, int n, const char *text);

/* The wafer model's projection: opens the JSON object "model" with its
 * figures (wf_projection_json) and starts the line "prefix: wafer model
 * (machine): [lo, hi] s/unit, PEs needed of offered (fits), B/PE of SRAM
 * (fits)" ("no projection" when it has none), the seconds shown in s, ms
 * or us by their size; the caller may add the model's own
 * quantities, then ends the object with wf_report_end. */
void wf_report_model(wf_report *r, const wf_projection *p);

#endif
