/* libFuzzer harness: the EAM potential reader. The first byte picks the
 * format (funcfl or setfl), the rest is the file. A potential either parses
 * or fails with an input error; one that parses has finite tables, a
 * positive cutoff, and evaluates to finite values anywhere in its range. */
#include <math.h>

#include "eam_potential.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_spline(const eam_spline *s) {
  FUZZ_ASSERT(s->n >= 2 && s->c);
  double end = (s->n - 1) * s->delta;
  for (int k = 0; k <= 16; k++) {
    double d, v = eam_eval(s, end * k / 16.0, &d);
    FUZZ_ASSERT(isfinite(v) && isfinite(d));
  }
  double d;
  (void)eam_eval(s, 1e300, &d); /* far beyond the table: clamped, no overflow */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  eam_format format = data[0] & 1 ? EAM_SETFL : EAM_FUNCFL;
  char *text = fuzz_text(data + 1, size - 1);
  if (!text) return 0;
  eam_potential p;
  wf_status st;
  int rc = eam_parse(&p, text, "fuzz.eam", format, &st);
  FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_INPUT);
  if (rc == WF_OK) {
    FUZZ_ASSERT(p.nelements >= 1 && p.nelements <= EAM_MAX_ELEMENTS);
    FUZZ_ASSERT(isfinite(p.cut) && p.cut > 0);
    for (int i = 0; i < p.nelements; i++) {
      check_spline(&p.frho[i]);
      check_spline(&p.rhor[i]);
      for (int j = 0; j <= i; j++) check_spline(&p.z2r[eam_pair(i, j)]);
    }
  }
  eam_free(&p);
  free(text);
  return 0;
}
