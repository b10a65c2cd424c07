/* `wafer mandelbrot`: the SDK's Mandelbrot example on the PE grid. */
#ifndef MANDELBROT_H
#define MANDELBROT_H

#include <stdbool.h>
#include <stdint.h>

#include "wf_workload.h"

extern const wf_workload wf_mandelbrot_workload;

/* The image: width x height pixels over [re_min, re_max] x [im_min, im_max]
 * of the complex plane, at most max_iters iterations a pixel. */
typedef struct mb_image {
  long long width, height;
  int max_iters;
  double re_min, re_max, im_min, im_max;
} mb_image;

/* The point c of pixel (x, y), at the pixel's centre: the problem's
 * definition, which the kernel and the serial reference both take. */
static inline void mb_pixel_point(const mb_image *im, long long x, long long y, double *cr,
                                  double *ci) {
  *cr = im->re_min + ((double)x + 0.5) * (im->re_max - im->re_min) / (double)im->width;
  *ci = im->im_min + ((double)y + 0.5) * (im->im_max - im->im_min) / (double)im->height;
}

/* The serial reference (mandelbrot_check.c): every pixel of the image in
 * order, z <- z^2 + c in C's complex arithmetic, escaping when |z|^2 > 4;
 * the digest (sdk_grid.h) of the counts. Polls wf_signal_stop() every 512
 * pixels; *stopped when it asked to stop. */
uint64_t mb_reference_digest(const void *image, bool *stopped);

#endif
