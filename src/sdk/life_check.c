/* The game of life's serial reference: written apart from the kernel (the
 * whole board on one rank, no halo, each neighbour found by wrapping or
 * bounding its index), sharing only the first generation's definition
 * (life_initial) and the digest's hash. Life is exact: every cell must
 * agree. */
#include <stdlib.h>

#include "life.h"
#include "sdk_grid.h"
#include "wf_signal.h"

/* The index of coordinate v + d on an axis of n cells: wrapped on a
 * periodic board, -1 past a bounded board's edge. */
static long long neighbour(long long v, int d, long long n, bool periodic) {
  long long u = v + d;
  if (u >= 0 && u < n) return u;
  return periodic ? (u + n) % n : -1;
}

uint64_t life_reference_digest(const void *board, bool *stopped) {
  const life_board *b = board;
  size_t n = (size_t)(b->width * b->height);
  unsigned char *g = malloc(n), *next = malloc(n);
  uint64_t digest = 0;
  if (!g || !next) { /* a check that could not run fails: its digest is no board's */
    free(g), free(next);
    return ~(uint64_t)0;
  }
  for (long long y = 0; y < b->height; y++)
    for (long long x = 0; x < b->width; x++) g[y * b->width + x] = life_initial(b, x, y);
  for (long gen = 0; gen < b->generations; gen++) {
    if (*stopped || wf_signal_stop()) {
      *stopped = true;
      break;
    }
    for (long long y = 0; y < b->height && !*stopped; y++)
      for (long long x = 0; x < b->width; x++) {
        if (x == 0 && y % 64 == 63 && wf_signal_stop()) *stopped = true;
        int around = 0;
        for (int dy = -1; dy <= 1; dy++) {
          long long ny = neighbour(y, dy, b->height, b->periodic);
          for (int dx = -1; dx <= 1 && ny >= 0; dx++) {
            long long nx = neighbour(x, dx, b->width, b->periodic);
            if ((dx || dy) && nx >= 0) around += g[ny * b->width + nx];
          }
        }
        int alive = g[y * b->width + x];
        next[y * b->width + x] = around == 3 || (alive && around == 2);
      }
    unsigned char *t = g;
    g = next, next = t;
  }
  for (size_t k = 0; k < n; k++) digest += sdk_digest_term(k, g[k]);
  free(g), free(next);
  return digest;
}
