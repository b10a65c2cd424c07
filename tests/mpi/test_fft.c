/* The pencil FFT against a direct O(N^2) DFT of the global array, on every
 * rank grid the run's ranks allow, uneven sizes, 1, 2 and 3 dimensions, in
 * double and single precision, complex and real (r2c) data; the round trip;
 * the redistribution between boxes against the global index; size errors. */
#include <complex.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

#include "ff_pencil.h"
#include "mpi_check.h"

static const double TWO_PI = 6.283185307179586476925;

/* A deterministic field without symmetries (its real part for r2c). */
static bool real_data;
static double complex field(int x, int y, int z) {
  double re = sin(1.3 * x + 0.7 * y * y + 0.11 * z);
  return real_data ? re : re + I * cos(0.37 * x * z + 2.1 * y - 0.5);
}

/* The DFT along the transformed axes (z; z and x; all), by its definition. */
static double complex direct(const int n[3], int dims, int kx, int ky, int kz) {
  double complex sum = 0;
  for (int y = 0; y < n[1]; y++)
    for (int x = 0; x < n[0]; x++)
      for (int z = 0; z < n[2]; z++) {
        if ((dims < 2 && x != kx) || (dims < 3 && y != ky)) continue;
        double phase = (double)kz * z / n[2];
        if (dims >= 2) phase += (double)kx * x / n[0];
        if (dims >= 3) phase += (double)ky * y / n[1];
        sum += field(x, y, z) * cexp(-I * TWO_PI * phase);
      }
  return sum;
}

static double complex get(ff_prec p, const void *a, size_t i) {
  return p == FF_SINGLE ? (double complex)((const float complex *)a)[i]
                        : ((const double complex *)a)[i];
}

/* The input value at local cell (x, y, z) of stage A: complex, or real in
 * FFTW's padded layout. */
static double complex *in_complex(const ff_plan *p, int x, int y, int z) {
  return (double complex *)ff_in(p) + ff_index(ff_in_box(p), x, y, z);
}
static void put(const ff_plan *p, int x, int y, int z, double complex v) {
  if (p->r2c && p->prec == FF_SINGLE)
    ((float *)ff_in(p))[ff_real_index(p, x, y, z)] = (float)creal(v);
  else if (p->r2c)
    ((double *)ff_in(p))[ff_real_index(p, x, y, z)] = creal(v);
  else if (p->prec == FF_SINGLE)
    ((float complex *)ff_in(p))[ff_index(ff_in_box(p), x, y, z)] = (float complex)v;
  else
    *in_complex(p, x, y, z) = v;
}
static double complex take(const ff_plan *p, int x, int y, int z) {
  if (p->r2c && p->prec == FF_SINGLE) return ((float *)ff_in(p))[ff_real_index(p, x, y, z)];
  if (p->r2c) return ((double *)ff_in(p))[ff_real_index(p, x, y, z)];
  return get(p->prec, ff_in(p), ff_index(ff_in_box(p), x, y, z));
}

static void fill(const ff_plan *p) {
  const ff_box *b = ff_in_box(p);
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < p->n[2]; z++) put(p, x, y, z, field(b->x0 + x, b->y0 + y, z));
}

static void test_case(checks *ck, int pe_nx, int pe_ny, int px, int py, const int n[3], int dims,
                      ff_prec prec, bool r2c) {
  real_data = r2c;
  test_wafer t;
  if (test_wafer_create_ranks(ck, &t, pe_nx, pe_ny, px, py) != 0) return;
  ff_plan p;
  wf_status st;
  ff_opts o = {.prec = prec,
               .dims = dims,
               .fftw_flags = FFTW_ESTIMATE,
               .real_input = r2c,
               .wafer_prec = WF_FP32};
  int rc = ff_plan_create(&p, &t.fab, n, &o, &st);
  CHECK(ck, rc == WF_OK, "plan %dx%dx%d dims %d on %dx%d ranks: %s", n[0], n[1], n[2], dims, px, py,
        st.msg);
  if (rc != WF_OK) {
    test_wafer_free(&t);
    return;
  }
  double tol = prec == FF_SINGLE ? 2e-5 : 1e-12, scale = 0;
  for (int y = 0; y < n[1]; y++)
    for (int x = 0; x < n[0]; x++)
      for (int z = 0; z < n[2]; z++) scale = fmax(scale, cabs(field(x, y, z)));
  fill(&p);
  CHECK(ck, ff_execute(&p, FFTW_FORWARD, &st) == WF_OK, "forward: %s", st.msg);
  const ff_box *b = ff_out_box(&p);
  double N = (double)n[2] * (dims >= 2 ? n[0] : 1) * (dims >= 3 ? n[1] : 1);
  long bad = 0;
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < b->nz; z++) {
        double complex want = direct(n, dims, b->x0 + x, b->y0 + y, b->z0 + z);
        if (cabs(get(prec, ff_out(&p), ff_index(b, x, y, z)) - want) > tol * N * scale) bad++;
      }
  CHECK(ck, bad == 0,
        "%s %s %dx%dx%d dims %d, %dx%d PEs, %dx%d ranks: %ld values differ from "
        "the direct DFT",
        r2c ? "r2c" : "c2c", prec == FF_SINGLE ? "single" : "double", n[0], n[1], n[2], dims, pe_nx,
        pe_ny, px, py, bad);
  /* r2c keeps the non-negative frequencies along z. */
  CHECK(ck, b->z0 + b->nz <= (r2c ? n[2] / 2 + 1 : n[2]), "output box beyond the spectrum");

  /* The output redistributed to y-slabs lands where the global index says. */
  int rank, nranks, ylo, yn;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  wf_block_range(n[1], nranks, rank, &ylo, &yn);
  /* Stored [x][y][z] where the output is [y][x][z] and the other way
   * round: the redistribution transposes as it moves. */
  ff_box slab = {0, n[0], ylo, yn, 0, p.nc[2], b->order == FF_YXZ ? FF_XYZ : FF_YXZ};
  void *s = malloc(ff_box_cells(&slab) * p.elem + 1);
  CHECK(ck, ff_redistribute(MPI_COMM_WORLD, prec, b, ff_out(&p), &slab, s, &st) == WF_OK,
        "redistribute: %s", st.msg);
  bad = 0;
  for (int y = 0; y < slab.ny; y++)
    for (int x = 0; x < slab.nx; x++)
      for (int z = 0; z < slab.nz; z++) {
        double complex want = direct(n, dims, x, ylo + y, z);
        if (cabs(get(prec, s, ff_index(&slab, x, y, z)) - want) > tol * N * scale) bad++;
      }
  CHECK(ck, bad == 0, "redistributed to y-slabs: %ld values misplaced", bad);
  free(s);

  CHECK(ck, ff_execute(&p, FFTW_BACKWARD, &st) == WF_OK, "backward: %s", st.msg);
  const ff_box *a = ff_in_box(&p);
  bad = 0;
  for (int y = 0; y < a->ny; y++)
    for (int x = 0; x < a->nx; x++)
      for (int z = 0; z < n[2]; z++)
        if (cabs(take(&p, x, y, z) / N - field(a->x0 + x, a->y0 + y, z)) > tol * scale) bad++;
  CHECK(ck, bad == 0, "round trip: %ld values differ", bad);
  ff_plan_free(&p);
  test_wafer_free(&t);
}

/* Sizes the layout cannot take are input errors on every rank. */
static void test_bad_sizes(checks *ck) {
  test_wafer t;
  if (test_wafer_create(ck, &t, 4, 3) != 0) return;
  const int cases[][4] = {{0, 8, 8, 3}, {8, -1, 8, 3}, {3, 8, 8, 1}, {8, 2, 8, 1},
                          {8, 8, 3, 2}, {8, 8, 3, 3},  {2, 8, 8, 3}, {8, 8, 8, 4}};
  /* Real data: nz/2 + 1 must cover the 4 PE columns; nz at least 2. */
  const int real_cases[][4] = {{8, 8, 5, 2}, {8, 8, 1, 1}};
  for (size_t c = 0; c < sizeof real_cases / sizeof real_cases[0]; c++) {
    ff_plan p;
    wf_status st;
    ff_opts o = {.prec = FF_DOUBLE,
                 .dims = real_cases[c][3],
                 .fftw_flags = FFTW_ESTIMATE,
                 .real_input = true,
                 .wafer_prec = WF_FP32};
    int rc = ff_plan_create(&p, &t.fab, real_cases[c], &o, &st);
    CHECK(ck, rc == WF_ERR_INPUT, "r2c %dx%dx%d dims %d: expected an input error, got %d",
          real_cases[c][0], real_cases[c][1], real_cases[c][2], real_cases[c][3], rc);
    if (rc == WF_OK) ff_plan_free(&p);
  }
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ff_plan p;
    wf_status st;
    ff_opts o = {
        .prec = FF_DOUBLE, .dims = cases[c][3], .fftw_flags = FFTW_ESTIMATE, .wafer_prec = WF_FP32};
    int rc = ff_plan_create(&p, &t.fab, cases[c], &o, &st);
    CHECK(ck, rc == WF_ERR_INPUT, "%dx%dx%d dims %d on 4x3 PEs: expected an input error, got %d",
          cases[c][0], cases[c][1], cases[c][2], cases[c][3], rc);
    if (rc == WF_OK) ff_plan_free(&p);
  }
  test_wafer_free(&t);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int sizes[][3] = {{7, 6, 5}, {5, 9, 8}, {8, 8, 8}};
  for (int px = 1; px <= nranks; px++) {
    if (nranks % px) continue;
    int py = nranks / px;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int dims = 1; dims <= 3; dims++) {
        test_case(&ck, 5, 4, px, py, sizes[s], dims, FF_DOUBLE, false);
        if (s == 0) test_case(&ck, 5, 4, px, py, sizes[s], dims, FF_SINGLE, false);
      }
    /* Real data: odd and even nz (nz/2 + 1 = 5 over 5 PE columns). */
    for (int dims = 1; dims <= 3; dims++) {
      test_case(&ck, 5, 4, px, py, (int[3]){7, 6, 9}, dims, FF_DOUBLE, true);
      test_case(&ck, 5, 4, px, py, (int[3]){5, 9, 8}, dims, FF_DOUBLE, true);
    }
    test_case(&ck, 5, 4, px, py, (int[3]){7, 6, 9}, 3, FF_SINGLE, true);
    /* One pencil per PE, as ICS23 lays it out. */
    test_case(&ck, 8, 8, px, py, (int[3]){8, 8, 8}, 3, FF_DOUBLE, false);
  }
  test_bad_sizes(&ck);
  return checks_finish(&ck, "test_fft");
}
