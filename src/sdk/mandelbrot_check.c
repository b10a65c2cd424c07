/* The Mandelbrot image's serial reference: written apart from the kernel
 * (C's complex type, one pixel after another over the whole image, no PE
 * grid), sharing only the problem's definition (mb_pixel_point) and the
 * digest's hash. The arithmetic is the same (z^2's real part x x - y y, its
 * imaginary part x y + y x = 2 x y exactly; -ffp-contract=off: no fused
 * multiply-add), so every count must be equal, not close. */
#include <complex.h>

#include "mandelbrot.h"
#include "sdk_grid.h"
#include "wf_signal.h"

static int escape_count(double complex c, int max_iters) {
  double complex z = 0;
  int n = 0;
  for (; n < max_iters; n++) {
    if (creal(z) * creal(z) + cimag(z) * cimag(z) > 4.0) break;
    z = z * z + c;
  }
  return n;
}

uint64_t mb_reference_digest(const void *image, bool *stopped) {
  const mb_image *im = image;
  uint64_t digest = 0;
  for (long long y = 0; y < im->height; y++) {
    if (wf_signal_stop()) {
      *stopped = true;
      return 0;
    }
    for (long long x = 0; x < im->width; x++) {
      if (x % 512 == 511 && wf_signal_stop()) {
        *stopped = true;
        return 0;
      }
      double cr, ci;
      mb_pixel_point(im, x, y, &cr, &ci);
      /* cr + ci I is exact for finite parts (a real times I multiplies each
       * part alone); CMPLX is missing from clang 14's view of glibc. */
      int n = escape_count(cr + ci * I, im->max_iters);
      digest += sdk_digest_term((uint64_t)(y * im->width + x), n);
    }
  }
  return digest;
}
