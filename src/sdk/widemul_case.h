/* The wide multiplication's problem (src/sdk/widemul.c): its operands'
 * definition, which the run and its checks (widemul_check.c) share. */
#ifndef WIDEMUL_CASE_H
#define WIDEMUL_CASE_H

#include <stdint.h>

#include "wf_random.h"

typedef enum { WM_RANDOM, WM_ONES, WM_POWERS } wm_kind;

/* The problem: one product of two `bits`-bit integers a PE row, each
 * integer L = ceil(bits / 32) limbs of 32 bits (a fabric word), least
 * significant first. */
typedef struct wm_case {
  long long bits, L;
  int P, rows; /* PEs along a row; PE rows (one product each) */
  wm_kind kind;
  uint64_t seed;
} wm_case;

/* Limb a of operand `which` (0: x, 1: y) of PE row j's product: the
 * problem's definition, which the run and its checks all take.
 *   random: uniform limbs (each row its own operands);
 *   ones:   2^bits - 1 (every carry ripples the whole way);
 *   powers: x = 2^(bits-1), y = 2^(bits-1 - (j mod 64)): one bit set. */
static inline uint32_t wm_limb(const wm_case *c, int j, int which, long long a) {
  int top = (int)(c->bits - 32 * (c->L - 1)); /* bits in the last limb: 1 to 32 */
  uint32_t mask = a == c->L - 1 && top < 32 ? ((uint32_t)1 << top) - 1 : 0xffffffffu;
  switch (c->kind) {
  case WM_ONES:
    return mask;
  case WM_POWERS: {
    long long bit = which == 0 ? c->bits - 1 : c->bits - 1 - (j % 64 < c->bits ? j % 64 : 0);
    return a == bit / 32 ? (uint32_t)1 << (bit % 32) : 0;
  }
  default:
    return (uint32_t)wf_splitmix64(wf_splitmix64(c->seed * 4 + (uint64_t)which) ^
                                   ((uint64_t)j << 40) ^ (uint64_t)a) & mask;
  }
}

#endif
