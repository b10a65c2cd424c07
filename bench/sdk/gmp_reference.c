/* GMP's product, the reference wafer's wide multiplication is timed
 * against (bench/sdk/run.sh): ROWS products of two BITS-bit integers with
 * mpz_mul on one core, the median of REPEAT rounds after one warm-up.
 *
 *   gmp_reference BITS ROWS REPEAT     seconds a round */
#define _POSIX_C_SOURCE 200809L
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: gmp_reference BITS ROWS REPEAT\n"), 2;
  unsigned long bits = strtoul(argv[1], NULL, 10);
  int rows = atoi(argv[2]), repeat = atoi(argv[3]);
  gmp_randstate_t rng;
  gmp_randinit_default(rng);
  mpz_t *x = malloc(sizeof *x * (size_t)rows), *y = malloc(sizeof *y * (size_t)rows), z;
  mpz_init(z);
  for (int j = 0; j < rows; j++) {
    mpz_inits(x[j], y[j], NULL);
    mpz_urandomb(x[j], rng, bits), mpz_urandomb(y[j], rng, bits);
  }
  double *t = malloc(sizeof *t * (size_t)(repeat + 1));
  for (int r = 0; r <= repeat; r++) {
    double t0 = now();
    for (int j = 0; j < rows; j++) mpz_mul(z, x[j], y[j]);
    t[r] = now() - t0;
  }
  printf("%.9g\n", median(t + 1, repeat)); /* t[0]: the warm-up */
  return 0;
}
