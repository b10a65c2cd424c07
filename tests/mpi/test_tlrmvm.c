/* The distributed TLR-MVM against the dense operator computed here in
 * double precision from the Green's function's formula: A x and A^H v
 * within the bound the compression accuracy implies, the adjoint identity,
 * the same ranks and products on every rank grid (some with ranks that hold
 * no tiles), and the HDF5 round trip of the compressed operator. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "tl_compress.h"
#include "tl_io.h"
#include "tl_matrix.h"
#include "tl_survey.h"

static const double PI = 3.14159265358979323846;

typedef struct problem {
  tl_survey s;
  double hz;
} problem;

static void fill(void *ctx, int r0, int nr, int c0, int nc, float complex *a, int ld) {
  const problem *p = ctx;
  tl_survey_block(&p->s, p->hz, r0, nr, c0, nc, a, ld);
}

/* The operator by its formula, in double: entry (r, c). */
static double complex green(const problem *p, int r, int c) {
  const double *x = p->s.rec_xyz + 3 * r, *y = p->s.src_xyz + 3 * c;
  double d = sqrt(pow(x[0] - y[0], 2) + pow(x[1] - y[1], 2) + pow(x[2] - y[2], 2));
  return cexp(-I * 2 * PI * p->hz / p->s.velocity * d) / (4 * PI * d);
}

static double complex vec_entry(int i, int which) {
  return sin(0.37 * i + which) + I * cos(1.3 * i - 0.2 * which);
}

static double norm(const double complex *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += pow(cabs(v[i]), 2);
  return sqrt(s);
}

static long long reference_rank = -1;

static void test_case(checks *ck, int pe_nx, int pe_ny, int px, int py, int snx, int sny, int rnx,
                      int rny, int nb, double acc, bool global) {
  test_wafer t;
  if (test_wafer_create_ranks(ck, &t, pe_nx, pe_ny, px, py) != 0) return;
  problem p = {.s = {.src = {snx, sny, 15, 15, 0, 0, 0},
                     .rec = {rnx, rny, 15, 15, 0, 0, 200},
                     .velocity = 1500,
                     .hilbert = true},
               .hz = 25};
  wf_status st;
  CHECK(ck, tl_survey_init(&p.s, &st) == WF_OK, "survey: %s", st.msg);
  int M = tl_survey_rows(&p.s), N = tl_survey_cols(&p.s);
  tl_layout l;
  tl_matrix a;
  double fro;
  tl_compress_opts o = {acc, global, 1};
  int rc = tl_layout_init(&l, M, N, nb, &t.dc, t.fab.row_comm, t.fab.col_comm, &st);
  if (rc == WF_OK) rc = tl_compress(&a, &l, fill, &p, &o, false, &fro, &st);
  CHECK(ck, rc == WF_OK, "compress %dx%d in tiles of %d: %s", M, N, nb, st.msg);
  if (rc != WF_OK) {
    tl_survey_free(&p.s);
    test_wafer_free(&t);
    return;
  }
  /* The dense products, by the formula. */
  double complex *A = malloc((size_t)M * N * sizeof *A), *x = malloc(N * sizeof *x),
                 *v = malloc(M * sizeof *v), *Ax = calloc(M, sizeof *Ax),
                 *Ahv = calloc(N, sizeof *Ahv);
  double fro_ref = 0;
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      A[(size_t)r * N + c] = green(&p, r, c);
      fro_ref += pow(cabs(A[(size_t)r * N + c]), 2);
    }
  fro_ref = sqrt(fro_ref);
  CHECK(ck, fabs(fro - fro_ref) <= 1e-6 * fro_ref, "||A||_F %g, by the formula %g", fro, fro_ref);
  for (int c = 0; c < N; c++) x[c] = vec_entry(c, 0);
  for (int r = 0; r < M; r++) v[r] = vec_entry(r, 1);
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      Ax[r] += A[(size_t)r * N + c] * x[c];
      Ahv[c] += conj(A[(size_t)r * N + c]) * v[r];
    }
  float complex *xf = malloc(N * sizeof *xf), *vf = malloc(M * sizeof *vf);
  float complex *y = malloc(M * sizeof *y), *xa = malloc(N * sizeof *xa);
  for (int c = 0; c < N; c++) xf[c] = (float complex)x[c];
  for (int r = 0; r < M; r++) vf[r] = (float complex)v[r];
  tl_matrix_apply(&a, false, xf, y, NULL);
  tl_matrix_apply(&a, true, vf, xa, NULL);
  double tiles = (double)l.mt * l.nt, bound = acc * (global ? sqrt(tiles) : 1.0) + 1e-5;
  double ey = 0, ex = 0;
  for (int r = 0; r < M; r++) ey += pow(cabs(y[r] - Ax[r]), 2);
  for (int c = 0; c < N; c++) ex += pow(cabs(xa[c] - Ahv[c]), 2);
  CHECK(ck, sqrt(ey) <= bound * fro_ref * norm(x, N),
        "%dx%d ranks %dx%d nb %d acc %g: ||A x - y|| = %.3e > %.3e", pe_nx, pe_ny, px, py, nb, acc,
        sqrt(ey), bound * fro_ref * norm(x, N));
  CHECK(ck, sqrt(ex) <= bound * fro_ref * norm(v, M), "||A^H v - x|| = %.3e > %.3e", sqrt(ex),
        bound * fro_ref * norm(v, M));
  /* Compression did compress (acc is far above round-off). */
  long long R = tl_total_rank(&a);
  CHECK(ck, R < (long long)l.mt * l.nt * nb, "R = %lld: nothing dropped", R);
  if (reference_rank < 0) reference_rank = R;
  CHECK(ck, R == reference_rank, "R = %lld on ranks %dx%d, %lld on the first grid", R, px, py,
        reference_rank);
  /* <A x, v> = <x, A^H v> for the compressed operator. */
  double complex lhs = 0, rhs = 0;
  for (int r = 0; r < M; r++) lhs += conj((double complex)y[r]) * vf[r];
  for (int c = 0; c < N; c++) rhs += conj((double complex)xf[c]) * xa[c];
  CHECK(ck, cabs(lhs - rhs) <= 1e-5 * norm(Ax, M) * norm(v, M), "adjoint identity off by %.3e",
        cabs(lhs - rhs));

  /* The HDF5 round trip gives the same bases, hence bitwise the same product. */
  char path[64] = "/tmp/wafer-test-tlr-XXXXXX";
  if (ck->rank == 0) {
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  wf_h5file f;
  rc = wf_h5_create(&f, MPI_COMM_WORLD, path, &st);
  if (rc == WF_OK) rc = tl_io_write(&f, "q", &a, fro, &st);
  if (rc == WF_OK) rc = wf_h5_close(&f, &st);
  tl_matrix b;
  double fro2 = 0;
  if (rc == WF_OK) rc = tl_io_read(MPI_COMM_WORLD, path, "q", &l, &b, &fro2, &st);
  CHECK(ck, rc == WF_OK, "round trip: %s", st.msg);
  if (rc == WF_OK) {
    float complex *y2 = malloc(M * sizeof *y2);
    tl_matrix_apply(&b, false, xf, y2, NULL);
    CHECK(ck, memcmp(y, y2, M * sizeof *y) == 0 && fro2 == fro, "the file's operator differs");
    CHECK(ck, tl_total_rank(&b) == R, "the file's ranks differ");
    free(y2);
    tl_matrix_free(&b);
  }
  /* A file of another shape is an input error, not a crash. */
  tl_layout l2;
  tl_matrix c2;
  double fro3;
  if (tl_layout_init(&l2, M, N, nb + 1, &t.dc, t.fab.row_comm, t.fab.col_comm, &st) == WF_OK) {
    rc = tl_io_read(MPI_COMM_WORLD, path, "q", &l2, &c2, &fro3, &st);
    CHECK(ck, rc == WF_ERR_INPUT, "a mis-shaped file read as %d (%s)", rc, st.msg);
    if (rc == WF_OK) tl_matrix_free(&c2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (ck->rank == 0) remove(path);
  tl_matrix_free(&a);
  free(A), free(x), free(v), free(Ax), free(Ahv), free(xf), free(vf), free(y), free(xa);
  tl_survey_free(&p.s);
  test_wafer_free(&t);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int px = 1; px <= nranks; px++) {
    if (nranks % px) continue;
    int py = nranks / px;
    /* 48 x 63: 5 x 7 tiles of 10 (ragged), on fewer PEs than tiles and on more. */
    test_case(&ck, 6, 5, px, py, 9, 7, 8, 6, 10, 1e-3, true);
    test_case(&ck, 16, 16, px, py, 9, 7, 8, 6, 10, 1e-3, true);
  }
  /* Each tile's own norm; a different compression: a new reference rank. */
  reference_rank = -1;
  for (int px = 1; px <= nranks; px++)
    if (nranks % px == 0) test_case(&ck, 8, 8, px, nranks / px, 9, 7, 8, 6, 12, 1e-2, false);
  /* Two tile columns on four ranks in a row: two ranks hold nothing. */
  reference_rank = -1;
  if (nranks == 4) test_case(&ck, 16, 4, 4, 1, 5, 4, 6, 5, 10, 1e-3, true);
  return checks_finish(&ck, "test_tlrmvm");
}
