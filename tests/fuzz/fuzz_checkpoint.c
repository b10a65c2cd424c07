/* libFuzzer harness: what a restart does with a checkpoint's contents
 * (md_checkpoint_adopt: the checks, then the atoms this rank owns). The
 * HDF5 container is HDF5's own to parse (and to fuzz); this harness feeds
 * the values a checkpoint can hold, decoded from the input: a flag byte
 * (bit 0: the deck's box, else 6 doubles; bit 1: small ids; bit 2: small
 * coordinates), a step, then atoms. A checkpoint either is adopted with
 * every atom valid or fails with an input error. */
#include <math.h>

#include "fuzz_domain.h"
#include "fuzz_util.h"
#include "md_checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct cursor {
  const uint8_t *p;
  size_t left;
} cursor;

static bool take(cursor *c, void *out, size_t n) {
  if (c->left < n) return false;
  memcpy(out, c->p, n);
  c->p += n, c->left -= n;
  return true;
}

/* A coordinate: a raw double, or a small signed value around the box. */
static bool coordinate(cursor *c, bool small, double *x) {
  if (!small) return take(c, x, sizeof *x);
  int16_t s;
  if (!take(c, &s, sizeof s)) return false;
  *x = s / 1000.0;
  return true;
}

enum { MAX_ATOMS = 256 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cursor c = {data, size};
  uint8_t flags;
  int64_t step;
  if (!take(&c, &flags, 1) || !take(&c, &step, sizeof step)) return 0;
  md_domain d = fuzz_domain();
  double box[6] = {0, 0, 0, 10, 10, 10};
  if (!(flags & 1) && !take(&c, box, sizeof box)) return 0;
  int64_t id[MAX_ATOMS], species[MAX_ATOMS];
  double x[3 * MAX_ATOMS], v[3 * MAX_ATOMS];
  size_t n = 0;
  for (; n < MAX_ATOMS; n++) {
    int8_t sp;
    if (flags & 2) {
      uint8_t small;
      if (!take(&c, &small, 1)) break;
      id[n] = small;
    } else if (!take(&c, &id[n], sizeof id[n])) {
      break;
    }
    if (!take(&c, &sp, 1)) break;
    species[n] = sp;
    bool ok = true;
    for (int k = 0; k < 3 && ok; k++) ok = coordinate(&c, flags & 4, &x[3 * n + k]);
    for (int k = 0; k < 3 && ok; k++) ok = coordinate(&c, flags & 4, &v[3 * n + k]);
    if (!ok) break;
  }
  md_checkpoint_data ck = {.step = step, .natoms = n, .id = id, .species = species, .x = x, .v = v};
  memcpy(ck.box, box, sizeof box);
  if (flags & 8) ck.x_build = v, ck.last_build = step / 2 + (flags >> 4); /* may pass step */
  md_atoms a;
  md_atoms_init(&a);
  wf_status st;
  md_resume r;
  int rc = md_checkpoint_adopt("fuzz.h5", &ck, &d, 2, &a, &r, &st);
  FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_INPUT);
  if (rc == WF_OK) {
    FUZZ_ASSERT(step >= 0 && a.nlocal <= (int)n && r.last_build <= step);
    FUZZ_ASSERT(ck.x_build && ck.last_build != step ? r.n == (size_t)a.nlocal : r.n == 0);
    for (int i = 0; i < a.nlocal; i++) FUZZ_ASSERT(a.id[i] >= 1 && a.type[i] >= 0 && a.type[i] < 2);
  }
  md_resume_free(&r);
  md_atoms_free(&a);
  return 0;
}
