/* The wide multiplication's references: GMP's mpz_mul of the same operands
 * (when this build has GMP), and a residue check that needs nothing: the
 * product modulo the prime 2^31 - 19 equals the operands' residues
 * multiplied. (Not a Mersenne prime: modulo 2^31 - 1, 2^32 is 2, of order
 * 31, so limbs 31 places apart weigh the same and a misplaced limb could
 * pass; modulo 2^31 - 19, 2^32 has order 536870907.) Both take the
 * operands from their definition (wm_limb), not from what the run
 * gathered. */
#include "widemul_check.h"

#include <stdlib.h>

#include "wf_config.h"
#if WAFER_HAVE_GMP
#include <gmp.h>
#endif

#define WM_PRIME 2147483629ull /* 2^31 - 19 */

/* sum of limbs[k] 2^(32 (first + k)) mod p, k < n */
uint64_t wm_residue(const uint32_t *limbs, long long first, long long n) {
  uint64_t r = 0, base = 1, shift = ((uint64_t)1 << 32) % WM_PRIME;
  for (long long k = 0; k < first; k++) base = base * shift % WM_PRIME;
  for (long long k = 0; k < n; k++) {
    r = (r + (uint64_t)limbs[k] % WM_PRIME * base) % WM_PRIME;
    base = base * shift % WM_PRIME;
  }
  return r;
}

uint64_t wm_product_residue(const wm_case *c, int j) {
  uint64_t r[2];
  uint32_t *limbs = malloc((size_t)c->L * sizeof *limbs);
  if (!limbs) return WM_PRIME; /* no residue is p: the check fails */
  for (int which = 0; which < 2; which++) {
    for (long long a = 0; a < c->L; a++) limbs[a] = wm_limb(c, j, which, a);
    r[which] = wm_residue(limbs, 0, c->L);
  }
  free(limbs);
  return r[0] * r[1] % WM_PRIME;
}

uint64_t wm_prime(void) { return WM_PRIME; }

bool wm_have_gmp(void) { return WAFER_HAVE_GMP; }

long long wm_gmp_mismatches(const wm_case *c, int j, const uint32_t *z, long long first,
                            long long n) {
#if WAFER_HAVE_GMP
  uint32_t *limbs = malloc((size_t)(2 * c->L) * sizeof *limbs);
  if (!limbs) return n > 0 ? n : 1;
  mpz_t x, y, p;
  mpz_inits(x, y, p, NULL);
  for (int which = 0; which < 2; which++) {
    for (long long a = 0; a < c->L; a++) limbs[a] = wm_limb(c, j, which, a);
    mpz_import(which ? y : x, (size_t)c->L, -1, sizeof *limbs, 0, 0, limbs);
  }
  mpz_mul(p, x, y);
  size_t count = 0;
  for (long long k = 0; k < 2 * c->L; k++) limbs[k] = 0;
  mpz_export(limbs, &count, -1, sizeof *limbs, 0, 0, p);
  long long bad = count > (size_t)(2 * c->L);
  for (long long k = 0; k < n; k++) bad += z[k] != limbs[first + k];
  mpz_clears(x, y, p, NULL);
  free(limbs);
  return bad;
#else
  (void)c, (void)j, (void)z, (void)first;
  return n > 0 ? n : 1;
#endif
}
