/* libFuzzer harness: the LAMMPS data file reader. A file either parses or
 * fails with an input error; one that parses has a finite box, positive
 * unique ids, types in range, finite positions and velocities, and its atoms
 * can be placed on a domain. */
#include <math.h>

#include "fuzz_domain.h"
#include "fuzz_util.h"
#include "md_system.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  md_data D;
  wf_status st;
  int rc = md_data_parse(&D, text, "fuzz.data", &st);
  FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_INPUT);
  if (rc == WF_OK) {
    FUZZ_ASSERT(D.natoms >= 1 && D.ntypes >= 1 && D.ntypes <= MD_MAX_SPECIES);
    for (int c = 0; c < 3; c++) FUZZ_ASSERT(isfinite(D.box.lo[c]) && isfinite(D.box.len[c]) && D.box.len[c] > 0);
    for (long long i = 0; i < D.natoms; i++) {
      FUZZ_ASSERT(D.id[i] >= 1 && D.type[i] >= 0 && D.type[i] < D.ntypes);
      for (int c = 0; c < 3; c++) FUZZ_ASSERT(isfinite(D.x[i][c]) && isfinite(D.v[i][c]));
    }
    /* place them on the fuzz domain, in the file's box */
    md_domain d = fuzz_domain();
    d.box = D.box;
    int species[MD_MAX_SPECIES] = {0};
    md_atoms a;
    md_atoms_init(&a);
    rc = md_data_fill(&D, species, &d, &a, &st);
    FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_RUNTIME); /* RUNTIME: out of memory */
    md_atoms_free(&a);
    md_data_free(&D);
  }
  free(text);
  return 0;
}
