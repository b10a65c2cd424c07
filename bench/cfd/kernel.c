/* The wave stencil's loop alone, its data in the caches: a pair of rows
 * of a strip of 16 columns, each column NZ cells long (argument; 256 if
 * none), its pencils (8 cells along z) swept in turn, again and again, so
 * that every line it reads was read by the sweep before. NZ = 24 is one
 * pencil, all in the first-level cache; NZ = 256 is a pair's rows as a
 * 256^3 step reads them (10 rows of 24 columns, about 0.5 MB), in the
 * second-level cache. Its rate against a whole step's says how much of a
 * step is the loop's own work and how much is waiting on the last-level
 * cache and memory. The loop is the variant named (cf_wave_parts.h:
 * avx512, avx2 or generic; avx512 if none); the pencils at a column's ends
 * are left out. Prints the best of REPS timings: Mcell/s, and cycles a
 * pencil of 8 cells at the clock a chain of dependent adds runs at (x86-64;
 * elsewhere, none).
 *   bench/cfd/kernel NZ [VARIANT]      (bench/cfd/limits.sh builds and runs it) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cf_wave_parts.h"

static double seconds(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The core's clock in Hz: 10^8 dependent adds, one a cycle (best of 3). */
static double clock_hz(void) {
#if defined(__x86_64__)
  const long n = 25000000;
  double best = INFINITY;
  for (int rep = 0; rep < 3; rep++) {
    long x = 0;
    double t = seconds();
    for (long i = 0; i < n; i++)
      __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    t = seconds() - t;
    if (t < best) best = t;
  }
  return 4.0 * (double)n / best;
#else
  return 0;
#endif
}

int main(int argc, char **argv) {
  enum { COLUMNS = 16, ROWS = 2 * CF_RADIUS + 2, VECTORS = 8000000, REPS = 15 };
  const int nz = argc > 1 ? atoi(argv[1]) : 256, line = 8; /* doubles a 64-byte line */
  const char *variant = argc > 2 ? argv[2] : "avx512";
  cf_sweep_fn *sweep = strcmp(variant, "avx512") == 0 ? cf_sweep_avx512
                       : strcmp(variant, "avx2") == 0 ? cf_sweep_avx2
                       : strcmp(variant, "generic") == 0 ? cf_sweep_generic
                                                         : NULL;
  if (!sweep) {
    fprintf(stderr, "kernel: no variant '%s' (avx512, avx2, generic)\n", variant);
    return 2;
  }
#if defined(__x86_64__)
  __builtin_cpu_init();
  if ((sweep == cf_sweep_avx512 && !__builtin_cpu_supports("avx512bw")) ||
      (sweep == cf_sweep_avx2 && !__builtin_cpu_supports("avx2"))) {
    fprintf(stderr, "kernel: this CPU does not run the %s variant\n", variant);
    return 3;
  }
#endif
  if (nz < 3 * CF_LANES || nz % CF_LANES) {
    fprintf(stderr, "kernel: NZ must be a multiple of %d, at least %d\n", CF_LANES, 3 * CF_LANES);
    return 2;
  }
  const int lines = (nz + line - 1) / line, zs = (lines | 1) * line; /* an odd number of lines */
  const int ld = COLUMNS + 2 * CF_RADIUS, pencils = nz / CF_LANES - 2;
  size_t n = (size_t)ld * ROWS * zs;
  double *u = aligned_alloc(64, n * sizeof *u), *o = aligned_alloc(64, n * sizeof *o);
  if (!u || !o) return 1;
  for (size_t i = 0; i < n; i++) u[i] = 1e-3 * (double)(i % 97), o[i] = 1e-3 * (double)(i % 89);
  /* row CF_RADIUS, column CF_RADIUS: all 10 rows and 24 columns inside */
  const size_t first = ((size_t)CF_RADIUS * ld + CF_RADIUS) * zs;
  cf_pencil p = {.sx = zs,
              .sy = (ptrdiff_t)ld * zs,
              .b = {1.9, 0.1, -0.01, 1e-3, -1e-4},
              .columns = COLUMNS,
              .lanes = CF_LANES,
              .mode = TAPER_NONE};
  const long sweeps = VECTORS / (2L * COLUMNS * pencils);
  double best = INFINITY;
  for (int rep = 0; rep < REPS; rep++) {
    double t = seconds();
    for (long s = 0; s < sweeps; s++)
      for (int k = CF_LANES; k + 2 * CF_LANES <= nz; k += CF_LANES) {
        p.u = u + first + k, p.out = o + first + k;
        p.next = k + 3 * CF_LANES <= nz ? CF_LANES : 0; /* prefetch as the step does */
        sweep(2, false, &p);
        __asm__ volatile("" ::: "memory"); /* each sweep reads what the last wrote */
      }
    t = seconds() - t;
    if (t < best) best = t;
  }
  double vectors = (double)sweeps * pencils * COLUMNS * 2, hz = clock_hz();
  printf("%s: %.0f Mcell/s", variant, vectors * CF_LANES / best / 1e6);
  if (hz > 0) printf(" %.1f cycles/pencil %.2f GHz", best * hz / vectors, hz / 1e9);
  printf(" (checksum %.6g)\n", o[first + 2 * CF_LANES]);
  free(u), free(o);
  return 0;
}
