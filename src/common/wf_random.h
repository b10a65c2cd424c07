/* Counter-based random numbers: a value is a pure function of (seed, index),
 * so a field drawn per cell or per atom is the same on any rank count. */
#ifndef WF_RANDOM_H
#define WF_RANDOM_H

#include <stdint.h>

/* SplitMix64's finaliser: a fast, well-mixed 64-bit hash. */
static inline uint64_t wf_splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* Uniform in [0, 1) for item `index` of stream `seed`. */
static inline double wf_uniform(uint64_t seed, uint64_t index) {
  return (double)(wf_splitmix64(wf_splitmix64(seed) ^ index) >> 11) * 0x1.0p-53;
}

#endif
