/* The wide multiplication's checks (widemul_check.c). */
#ifndef WIDEMUL_CHECK_H
#define WIDEMUL_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "widemul_case.h"

/* The prime of the residue check, 2^31 - 19. */
uint64_t wm_prime(void);
/* Limbs [first, first + n) of a number, given from limbs[0]: their part of
 * the number modulo the prime. */
uint64_t wm_residue(const uint32_t *limbs, long long first, long long n);
/* PE row j's product modulo the prime, from its operands' residues. */
uint64_t wm_product_residue(const wm_case *c, int j);
/* Whether this build has GMP. */
bool wm_have_gmp(void);
/* Limbs [first, first + n) of PE row j's product (z) that differ from
 * GMP's mpz_mul of the same operands (all of them without GMP). */
long long wm_gmp_mismatches(const wm_case *c, int j, const uint32_t *z, long long first,
                            long long n);

#endif
