/* Linear stability of Rayleigh-Benard convection between rigid walls (cf_rb_linear.h): the
 * growth rate of the least stable mode and the neutral curve, the reference the convection
 * run is checked against. Shares nothing with cf_rb. */
#include "cf_rb_linear.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>

/* The roots of z^3 + a z^2 + b z + c (Durand-Kerner, then Newton). */
static void cubic_roots(double a, double b, double c, double complex z[3]) {
  double radius = 1 + fmax(fabs(a), fmax(fabs(b), fabs(c)));
  double complex seed = 0.4 + 0.9 * I;
  z[0] = radius * seed, z[1] = radius * seed * seed, z[2] = radius * seed * seed * seed;
  for (int it = 0; it < 500; it++) {
    double moved = 0;
    for (int i = 0; i < 3; i++) {
      double complex f = ((z[i] + a) * z[i] + b) * z[i] + c, d = 1;
      for (int j = 0; j < 3; j++)
        if (j != i) d *= z[i] - z[j];
      double complex step = f / d;
      z[i] -= step;
      moved = fmax(moved, cabs(step) / fmax(1, cabs(z[i])));
    }
    if (moved < 1e-15) break;
  }
  for (int i = 0; i < 3; i++) /* Newton: a last polish on each */
    for (int it = 0; it < 3; it++) {
      double complex f = ((z[i] + a) * z[i] + b) * z[i] + c, df = (3 * z[i] + 2 * a) * z[i] + b;
      if (df != 0) z[i] -= f / df;
    }
}

/* The walls' determinant at sigma over the Vandermonde product of the roots
 * prod_{i<j} (p_j - p_i): both change sign when two roots swap, so their
 * ratio is a symmetric function of the roots, which makes it real for
 * real sigma (conjugation only permutes them), continuous, and free of
 * the zeros a determinant has wherever two roots meet (two equal columns).
 * Each column is scaled by 1 / cosh(Re q_j / 2) (positive, the same for
 * conjugate roots): zeros unchanged, no overflow. */
static double walls(double sigma, double ra, double pr, double k, double *q_max) {
  double complex p[3];
  cubic_roots(-sigma * (1 + pr) / pr, sigma * sigma / pr, ra * k * k, p);
  double complex m[3][3];
  *q_max = 0;
  for (int j = 0; j < 3; j++) {
    double complex q = csqrt(p[j] + k * k);
    double scale = cosh(creal(q) / 2);
    double complex ch = ccosh(q / 2) / scale, sh = csinh(q / 2) / scale;
    m[0][j] = ch, m[1][j] = q * sh, m[2][j] = (sigma - pr * p[j]) * p[j] * ch;
    *q_max = fmax(*q_max, cabs(q));
  }
  double complex d = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  double complex v = (p[1] - p[0]) * (p[2] - p[0]) * (p[2] - p[1]);
  return v != 0 ? creal(d / v) : NAN;
}

/* The first zero of f met going from x = `from` to `to` in `steps` steps
 * (evenly, or geometrically), by bisection; NAN if none. */
typedef double (*scalar_fn)(double x, const double *args, double *q_max);

static double first_zero(scalar_fn f, const double *args, double from, double to, int steps,
                         bool geometric, double *q_max) {
  double q, x1 = from, f1 = f(x1, args, &q);
  for (int s = 1; s <= steps; s++) {
    double x0 =
        geometric ? from * pow(to / from, (double)s / steps) : from + (to - from) * s / steps;
    double f0 = f(x0, args, &q);
    if ((f0 > 0) != (f1 > 0) && isfinite(f0) && isfinite(f1)) {
      double a = x0, b = x1, fa = f0;
      for (int it = 0; it < 200 && a != b; it++) {
        double mid = 0.5 * (a + b), fm = f(mid, args, &q);
        if ((fm > 0) == (fa > 0))
          a = mid, fa = fm;
        else
          b = mid;
      }
      double root = 0.5 * (a + b);
      f(root, args, q_max);
      return root;
    }
    x1 = x0, f1 = f0;
  }
  return NAN;
}

static double in_sigma(double sigma, const double *args, double *q_max) {
  return walls(sigma, args[0], args[1], args[2], q_max);
}

static double in_ra(double ra, const double *args, double *q_max) {
  return walls(0, ra, 1, args[0], q_max);
}

double cf_rb_growth_rate(double ra, double pr, double k, double *q_max) {
  /* Above: the free-fall rate sqrt(Ra Pr) bounds any growth; below: the
   * slowest even modes of pure diffusion decay at -(pi^2 + k^2) (heat) and
   * -Pr (4.73^2 + k^2) (momentum), so a least stable mode lies above twice
   * the larger. */
  double hi = sqrt(fmax(ra, 0) * pr) + 1, lo = -2 * (23 + k * k) * fmax(1, pr) - 1;
  double args[3] = {ra, pr, k};
  *q_max = NAN;
  return first_zero(in_sigma, args, hi, lo, 4000, false, q_max);
}

double cf_rb_neutral_ra(double k) {
  double args[1] = {k}, q;
  return first_zero(in_ra, args, 100, 1e9, 4000, true, &q);
}
