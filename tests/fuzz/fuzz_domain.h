/* A one-rank domain without MPI for the harnesses: a 10 A cube on a 4 x 4
 * PE grid, of which this rank owns the lower half in x. */
#ifndef FUZZ_DOMAIN_H
#define FUZZ_DOMAIN_H

#include <string.h>

#include "md_domain.h"

static inline md_domain fuzz_domain(void) {
  md_domain d;
  memset(&d, 0, sizeof d);
  for (int c = 0; c < 3; c++) d.box.lo[c] = 0, d.box.len[c] = 10;
  d.pe_n[0] = d.pe_n[1] = 4;
  d.pe_hi[0] = 2, d.pe_hi[1] = 4;
  return d;
}

#endif
