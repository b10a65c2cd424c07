/* The wave stencil (cf_wave) against a direct evaluation on the global mesh:
 * a few leapfrog steps of the 25-point Laplacian with odd reflection at
 * every face, with and without the sponge, on meshes whose nz is and is not
 * a whole number of the kernel's vectors, whose row counts are odd, and
 * wide enough that some strips of columns have no x taper while their rows
 * have a y taper, narrow enough that a rank's ring of columns reads the
 * ghosts past both of its faces, and with columns long enough that the
 * update goes in several bands of rows. Also cf_wave_dot_lap (what the
 * energy reads). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cf_wave.h"
#include "cf_wave_probe.h"
#include "deck_wafer.h"
#include "mpi_check.h"

/* Two smooth, unrelated initial fields. */
static double f0(int x, int y, int z) { return sin(0.31 * x + 0.2) * cos(0.23 * y) + 0.02 * z; }
static double f1(int x, int y, int z) { return cos(0.17 * x) * sin(0.29 * y + 0.5 * z + 0.1); }

/* The global mesh, every rank holding all of it: the reference. */
typedef struct ref {
  int n[3];
  double *u, *prev; /* [x][y][z] */
} ref;

static double *at(const ref *r, double *a, int x, int y, int z) {
  return a + ((size_t)x * r->n[1] + (size_t)y) * r->n[2] + (size_t)z;
}

/* a at (x, y, z), odd reflection across faces half a cell outside the mesh. */
static double reflected(const ref *r, double *a, int x, int y, int z) {
  int p[3] = {x, y, z};
  double sign = 1;
  for (int d = 0; d < 3; d++) {
    if (p[d] < 0) p[d] = -1 - p[d], sign = -sign;
    if (p[d] >= r->n[d]) p[d] = 2 * r->n[d] - 1 - p[d], sign = -sign;
  }
  return sign * *at(r, a, p[0], p[1], p[2]);
}

/* The order-8 central second difference, written out (not the code's
 * cf_c8): the solution of sum_k c_k k^2 = 1, sum_k c_k k^4 = sum_k c_k k^6 =
 * sum_k c_k k^8 = 0, e.g. c_4 = 2 (4!)^2 / (16 0! 8!) = 1152 / 645120 =
 * 1/560 with sign (-1)^5; c_0 = -2 (8/5 - 1/5 + 8/315 - 1/560) = -205/72. */
static const double C8[5] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};

static double lap(const ref *r, double *a, int x, int y, int z) {
  double s = 3 * C8[0] * *at(r, a, x, y, z);
  for (int d = 1; d <= CF_RADIUS; d++)
    s += C8[d] * (reflected(r, a, x - d, y, z) + reflected(r, a, x + d, y, z) +
                     reflected(r, a, x, y - d, z) + reflected(r, a, x, y + d, z) +
                     reflected(r, a, x, y, z - d) + reflected(r, a, x, y, z + d));
  return s;
}

/* Cerjan's taper as docs/cfd.md states it: exp(-(0.3 (s - d) / s)^2) at d
 * cells from the nearest face of a sponge of s cells, 1 beyond it, the
 * product over the three axes. */
static double taper(const ref *r, int sponge, int x, int y, int z) {
  int p[3] = {x, y, z};
  double g = 1;
  for (int d = 0; d < 3 && sponge > 0; d++) {
    int dist = p[d] < r->n[d] - 1 - p[d] ? p[d] : r->n[d] - 1 - p[d];
    if (dist < sponge) g *= exp(-pow(0.3 * (sponge - dist) / sponge, 2));
  }
  return g;
}

/* One step: next = g (2 u - prev + a lap u); prev <- g u; u <- next. */
static void ref_step(ref *r, int sponge, double a) {
  size_t cells = (size_t)r->n[0] * r->n[1] * r->n[2];
  double *next = malloc(cells * sizeof *next);
  for (int x = 0; x < r->n[0]; x++)
    for (int y = 0; y < r->n[1]; y++)
      for (int z = 0; z < r->n[2]; z++) {
        double g = taper(r, sponge, x, y, z), u = *at(r, r->u, x, y, z);
        *at(r, next, x, y, z) = g * (2 * u - *at(r, r->prev, x, y, z) + a * lap(r, r->u, x, y, z));
      }
  free(r->prev);
  r->prev = r->u, r->u = next;
  for (int x = 0; x < r->n[0]; x++)
    for (int y = 0; y < r->n[1]; y++)
      for (int z = 0; z < r->n[2]; z++) *at(r, r->prev, x, y, z) *= taper(r, sponge, x, y, z);
}

/* Cells of `field` (this rank's) differing from the reference array by more
 * than 1e-12 of its largest value. */
static long differing(const st_mesh *m, const double *field, const ref *r, double *want) {
  double scale = 0;
  size_t cells = (size_t)r->n[0] * r->n[1] * r->n[2];
  for (size_t c = 0; c < cells; c++) scale = fmax(scale, fabs(want[c]));
  long bad = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        double got = field[st_idx(m, i, j, k)], w = *at(r, want, m->x0 + i, m->y0 + j, k);
        if (!(fabs(got - w) <= 1e-12 * scale)) bad++;
      }
  return bad;
}

/* This rank's owned cells of u^n and u^{n-1}, packed (bits compared
 * between kernels). */
static double *owned(const st_mesh *m, const double *cur, const double *prev) {
  double *o = malloc(2 * (size_t)m->lnx * m->lny * m->nz * sizeof *o), *at = o;
  for (int f = 0; f < 2; f++)
    for (int j = 0; j < m->lny; j++)
      for (int i = 0; i < m->lnx; i++)
        for (int k = 0; k < m->nz; k++) *at++ = (f ? prev : cur)[st_idx(m, i, j, k)];
  return o;
}

/* Three steps of `kernel` (cf_wave_use_kernel) against the reference; the
 * first kernel's u^n and u^{n-1} are kept in *first, and every later one
 * must give their bits (a kernel this CPU cannot run is skipped, and
 * said). */
static void test_steps(checks *ck, const char *kernel, double **first, int nx, int ny, int nz,
                       int sponge) {
  enum { STEPS = 3 };
  const double a = 0.2; /* (v dt / h)^2, inside the stable range */
  wf_wafer w;
  wf_deck deck;
  if (deck_wafer_create(ck, &w, &deck, 2, 2) != 0) return;
  wf_status st;
  st_mesh m;
  cf_wave wave;
  int rc = st_mesh_create_halo(&m, &w, nx, ny, nz, CF_RADIUS, &st);
  if (rc == WF_OK) {
    st_mesh_pad_columns(&m, CF_RADIUS);
    rc = cf_wave_create(&wave, &m, &w.fab, sponge, &st);
  }
  CHECK(ck, rc == WF_OK, "wave on %dx%dx%d: %s", nx, ny, nz, st.msg);
  if (rc == WF_OK && cf_wave_use_kernel(&wave, kernel, &st) != WF_OK) {
    cf_wave_free(&wave);
    rc = WF_ERR_INPUT; /* not on this CPU: skipped, and said */
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) printf("SKIP: the %s kernel does not run on this CPU\n", kernel);
  }
  if (rc != WF_OK) {
    wf_wafer_free(&w), wf_deck_free(&deck);
    return;
  }
  ref r = {.n = {nx, ny, nz}};
  size_t cells = (size_t)nx * ny * nz;
  r.u = malloc(cells * sizeof *r.u), r.prev = malloc(cells * sizeof *r.prev);
  for (int x = 0; x < nx; x++)
    for (int y = 0; y < ny; y++)
      for (int z = 0; z < nz; z++)
        *at(&r, r.u, x, y, z) = f0(x, y, z), *at(&r, r.prev, x, y, z) = f1(x, y, z);
  double *cur = st_field_alloc(&m), *prev = st_field_alloc(&m);
  for (int j = 0; j < m.lny; j++)
    for (int i = 0; i < m.lnx; i++)
      for (int k = 0; k < nz; k++) {
        cur[st_idx(&m, i, j, k)] = f0(m.x0 + i, m.y0 + j, k);
        prev[st_idx(&m, i, j, k)] = f1(m.x0 + i, m.y0 + j, k);
      }

  for (int n = 0; n < STEPS; n++) { /* the caller swaps, as cfd does */
    cf_wave_step(&wave, cur, prev, a);
    double *t = cur;
    cur = prev, prev = t;
    ref_step(&r, sponge, a);
  }
  cf_wave_settle(&wave, prev); /* the sponge u^{n-1} still owes */
  long bad_u = differing(&m, cur, &r, r.u), bad_prev = differing(&m, prev, &r, r.prev);
  CHECK(ck, bad_u == 0, "%s, %dx%dx%d sponge %d: u^n differs at %ld cells", kernel, nx, ny, nz,
        sponge, bad_u);
  double *bits = owned(&m, cur, prev);
  size_t n_owned = 2 * (size_t)m.lnx * m.lny * m.nz;
  if (*first) {
    CHECK(ck, memcmp(bits, *first, n_owned * sizeof *bits) == 0,
          "%s, %dx%dx%d sponge %d: not the generic kernel's bits", kernel, nx, ny, nz, sponge);
    free(bits);
  } else {
    *first = bits;
  }
  CHECK(ck, bad_prev == 0, "%dx%dx%d sponge %d: u^{n-1} differs at %ld cells", nx, ny, nz, sponge,
        bad_prev);

  /* sum u^n lap(u^{n-1}), what the energy reads: u^{n-1} settled, its halo
   * current */
  double got = cf_wave_dot_lap(&wave, prev, cur), want = 0, size = 0;
  MPI_Allreduce(MPI_IN_PLACE, &got, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int x = 0; x < nx; x++)
    for (int y = 0; y < ny; y++)
      for (int z = 0; z < nz; z++) {
        double term = *at(&r, r.u, x, y, z) * lap(&r, r.prev, x, y, z);
        want += term, size += fabs(term);
      }
  CHECK(ck, fabs(got - want) <= 1e-12 * size, "%dx%dx%d sponge %d: sum u lap u is %.15g, not %.15g",
        nx, ny, nz, sponge, got, want);

  free(cur), free(prev), free(r.u), free(r.prev);
  cf_wave_free(&wave);
  wf_wafer_free(&w);
  wf_deck_free(&deck);
}

/* The in-run check's reference coefficients (cf_wave_probe.h): for every
 * order 2r, the Taylor conditions as plain moment sums (a consistent
 * operator: sum c = 0, sum c k^2 = 2 over k = -r..r; the higher even moments
 * 0), and order 8 against the literals above. */
static void test_reference_coefficients(checks *ck) {
  for (int r = 1; r <= 6; r++) {
    for (int p = 0; p <= 2 * r; p += 2) {
      double moment = p == 0 ? cf_reference_coeff(r, 0) : 0;
      for (int k = 1; k <= r; k++) moment += 2 * cf_reference_coeff(r, k) * pow(k, p);
      double want = p == 2 ? 2 : 0;
      CHECK(ck, fabs(moment - want) <= 1e-12 * pow(r, p), "order %d: moment %d is %.17g, not %g",
            2 * r, p, moment, want);
    }
  }
  for (int k = 0; k <= 4; k++)
    CHECK(ck, fabs(cf_reference_coeff(4, k) - C8[k]) <= 1e-15 * fabs(C8[k]),
          "c_%d of order 8: %.17g, not %.17g", k, cf_reference_coeff(4, k), C8[k]);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  test_reference_coefficients(&ck);
  const struct {
    int n[3], sponge;
  } meshes[] = {
      {{48, 21, 21}, 0}, /* nz: 2 vectors and 5 cells; odd rows */
      {{48, 21, 21}, 4}, /* a sponge: strips with no x taper in tapered rows */
      {{23, 17, 16}, 5}, /* nz whole vectors, the sponge deeper than a rank */
      {{9, 9, 4}, 0},    /* the smallest: nz = the stencil's reach */
      {{13, 14, 9}, 2},  /* ranks under 8 cells across: the ring reads past both faces */
      {{9, 21, 3300}, 3} /* columns so long that a band is 8 rows (cf_wave.c) */
  };
  /* every kernel this CPU runs, each against the reference and the first's bits */
  const char *kernels[] = {"generic", "avx2", "avx512"};
  for (size_t c = 0; c < sizeof meshes / sizeof *meshes; c++) {
    double *first = NULL;
    for (int k = 0; k < 3; k++)
      test_steps(&ck, kernels[k], &first, meshes[c].n[0], meshes[c].n[1], meshes[c].n[2],
                 meshes[c].sponge);
    free(first);
  }
  cf_wave unknown = {0};
  wf_status st;
  CHECK(&ck, cf_wave_use_kernel(&unknown, "sse9", &st) == WF_ERR_INPUT, "an unknown kernel");
  return checks_finish(&ck, "test_wave");
}
