/* The seismic survey's operator (tl_survey.h): sources and receivers on grids, numbered along
 * a Hilbert curve, and blocks of the Green's function matrix at one frequency. */
#include "tl_survey.h"

#include <math.h>
#include <stdlib.h>

static const double PI = 3.14159265358979323846;

uint64_t tl_hilbert_index(uint32_t n, uint32_t x, uint32_t y) {
  uint64_t d = 0;
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    uint32_t rx = (x & s) != 0, ry = (y & s) != 0;
    d += (uint64_t)s * s * ((3 * rx) ^ ry);
    /* Turn the quadrant so that the sub-curve starts where the curve enters it. */
    if (ry == 0) {
      if (rx == 1) {
        x = n - 1 - x;
        y = n - 1 - y;
      }
      uint32_t t = x;
      x = y;
      y = t;
    }
  }
  return d;
}

typedef struct keyed {
  uint64_t key;
  int point;
} keyed;

static int by_key(const void *a, const void *b) {
  uint64_t ka = ((const keyed *)a)->key, kb = ((const keyed *)b)->key;
  return (ka > kb) - (ka < kb);
}

int tl_hilbert_order(int nx, int ny, int *order, wf_status *st) {
  uint32_t n = 1;
  while (n < (uint32_t)nx || n < (uint32_t)ny) n *= 2;
  keyed *k = malloc((size_t)nx * ny * sizeof *k);
  if (!k) return wf_fail(st, WF_ERR_RUNTIME, "out of memory ordering %d x %d points", nx, ny);
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++)
      k[(size_t)y * nx + x] = (keyed){tl_hilbert_index(n, (uint32_t)x, (uint32_t)y), y * nx + x};
  qsort(k, (size_t)nx * ny, sizeof *k, by_key);
  for (size_t i = 0; i < (size_t)nx * ny; i++) order[i] = k[i].point;
  free(k);
  return WF_OK;
}

static int place(const tl_grid *g, bool hilbert, double **xyz, wf_status *st) {
  size_t n = (size_t)g->nx * g->ny;
  int *order = malloc(n * sizeof *order);
  *xyz = malloc(3 * n * sizeof **xyz);
  if (!order || !*xyz) {
    free(order);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory placing %zu points", n);
  }
  int rc = WF_OK;
  if (hilbert)
    rc = tl_hilbert_order(g->nx, g->ny, order, st);
  else
    for (size_t i = 0; i < n; i++) order[i] = (int)i;
  for (size_t i = 0; rc == WF_OK && i < n; i++) {
    int x = order[i] % g->nx, y = order[i] / g->nx;
    (*xyz)[3 * i] = g->x0 + x * g->dx;
    (*xyz)[3 * i + 1] = g->y0 + y * g->dy;
    (*xyz)[3 * i + 2] = g->z;
  }
  free(order);
  return rc;
}

int tl_survey_init(tl_survey *s, wf_status *st) {
  s->src_xyz = s->rec_xyz = NULL;
  if (place(&s->src, s->hilbert, &s->src_xyz, st) != WF_OK ||
      place(&s->rec, s->hilbert, &s->rec_xyz, st) != WF_OK) {
    tl_survey_free(s);
    return st->code;
  }
  return WF_OK;
}

void tl_survey_free(tl_survey *s) {
  free(s->src_xyz), free(s->rec_xyz);
  s->src_xyz = s->rec_xyz = NULL;
}

void tl_survey_block(const tl_survey *s, double hz, int r0, int nr, int c0, int nc,
                     float complex *a, int ld) {
  const double k = 2 * PI * hz / s->velocity, four_pi = 4 * PI;
  for (int c = 0; c < nc; c++) {
    const double *ps = s->src_xyz + 3 * (size_t)(c0 + c);
    float complex *col = a + (size_t)c * ld;
    for (int r = 0; r < nr; r++) {
      const double *pr = s->rec_xyz + 3 * (size_t)(r0 + r);
      double dx = pr[0] - ps[0], dy = pr[1] - ps[1], dz = pr[2] - ps[2];
      double d = sqrt(dx * dx + dy * dy + dz * dz);
      col[r] = (float complex)(cexp(-I * k * d) / (four_pi * d));
    }
  }
}
