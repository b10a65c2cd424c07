/* The plain serial codes wafer's Mandelbrot and game of life are timed
 * against (bench/sdk/run.sh): what a user would write on one core, with
 * no PE grid, no MPI, no checks.
 *
 *   reference mandelbrot WIDTH HEIGHT MAX_ITERS REPEAT   seconds an image
 *   reference life WIDTH HEIGHT GENERATIONS              seconds a generation
 *   reference histogram VALUES BUCKETS WIDTH              seconds a histogram
 *
 * Mandelbrot: the same window as wafer's default deck, z <- z^2 + c in C's
 * complex type. Life: a periodic board of bytes, neighbours by wrapped
 * row and column indices, random start at density 0.35. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

static double mandelbrot(long w, long h, int max_iters, int repeat) {
  int *count = malloc((size_t)(w * h) * sizeof *count);
  long long sum = 0;
  double t0 = now();
  for (int r = 0; r < repeat; r++)
    for (long y = 0; y < h; y++)
      for (long x = 0; x < w; x++) {
        double complex c = CMPLX(-2.25 + (x + 0.5) * 3.0 / w, -1.125 + (y + 0.5) * 2.25 / h);
        double complex z = 0;
        int n = 0;
        while (n < max_iters && creal(z) * creal(z) + cimag(z) * cimag(z) <= 4.0) z = z * z + c, n++;
        count[y * w + x] = n;
      }
  double t = (now() - t0) / repeat;
  for (long k = 0; k < w * h; k++) sum += count[k];
  fprintf(stderr, "iterations %lld\n", sum);
  free(count);
  return t;
}

static double life(long w, long h, long generations) {
  unsigned char *g = malloc((size_t)(w * h)), *next = malloc((size_t)(w * h));
  unsigned long long s = 88172645463325252ull;
  for (long k = 0; k < w * h; k++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    g[k] = (s >> 11) * 0x1.0p-53 < 0.35;
  }
  double t0 = now();
  for (long gen = 0; gen < generations; gen++) {
    for (long y = 0; y < h; y++) {
      const unsigned char *up = g + ((y + h - 1) % h) * w, *mid = g + y * w,
                          *down = g + ((y + 1) % h) * w;
      for (long x = 0; x < w; x++) {
        long l = (x + w - 1) % w, r = (x + 1) % w;
        int n = up[l] + up[x] + up[r] + mid[l] + mid[r] + down[l] + down[x] + down[r];
        next[y * w + x] = n == 3 || (mid[x] && n == 2);
      }
    }
    unsigned char *t = g;
    g = next, next = t;
  }
  double t = (now() - t0) / (double)generations;
  long alive = 0;
  for (long k = 0; k < w * h; k++) alive += g[k];
  fprintf(stderr, "alive %ld\n", alive);
  free(g), free(next);
  return t;
}

/* VALUES values drawn uniformly (the same hash as wafer's, a pure function
 * of the index) into BUCKETS buckets of WIDTH values: one loop, one array. */
static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double histogram(long long values, long long buckets, long long width) {
  long long *count = calloc((size_t)buckets, sizeof *count), range = buckets * width;
  double t0 = now();
  for (long long i = 0; i < values; i++) {
    double u = (double)(mix(mix(7) ^ (uint64_t)i) >> 11) * 0x1.0p-53;
    count[(long long)(u * (double)range) / width]++;
  }
  double t = now() - t0;
  fprintf(stderr, "bucket 0: %lld\n", count[0]);
  free(count);
  return t;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "mandelbrot") == 0)
    printf("%.9g\n", mandelbrot(atol(argv[2]), atol(argv[3]), atoi(argv[4]), atoi(argv[5])));
  else if (argc == 5 && strcmp(argv[1], "histogram") == 0)
    printf("%.9g\n", histogram(atoll(argv[2]), atoll(argv[3]), atoll(argv[4])));
  else if (argc == 5 && strcmp(argv[1], "life") == 0)
    printf("%.9g\n", life(atol(argv[2]), atol(argv[3]), atol(argv[4])));
  else
    return fprintf(stderr, "usage: reference mandelbrot W H MAX_ITERS REPEAT | life W H GENS\n"), 2;
  return 0;
}
