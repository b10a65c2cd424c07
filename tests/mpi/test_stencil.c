/* The stencil operator against a direct evaluation of the 7-point formula on
 * the global mesh, for every boundary combination and uneven meshes; the
 * solvers' handling of a NaN in the right-hand side (reported, not hung);
 * the fused CG's residual sums in each precision. */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "deck_wafer.h"
#include "mpi_check.h"
#include "st_krylov.h"
#include "wf_workload.h"

static double f(int x, int y, int z) { return sin(0.3 * x + 1.1) * cos(0.7 * y) + 0.01 * z * z; }

static int wrap(int g, int n, bool periodic, bool *outside) {
  *outside = false;
  if (g >= 0 && g < n) return g;
  if (!periodic) return *outside = true, 0;
  return (g + n) % n;
}

static double direct(int nx, int ny, int nz, const bool per[3], int x, int y, int z) {
  double sum = 6 * f(x, y, z);
  const int d[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  for (int q = 0; q < 6; q++) {
    bool ox, oy, oz;
    int a = wrap(x + d[q][0], nx, per[0], &ox), b = wrap(y + d[q][1], ny, per[1], &oy),
        c = wrap(z + d[q][2], nz, per[2], &oz);
    if (!ox && !oy && !oz) sum -= f(a, b, c);
  }
  return sum;
}

static void test_operator(checks *ck, int nx, int ny, int nz) {
  wf_wafer w;
  wf_deck deck;
  if (deck_wafer_create(ck, &w, &deck, 4, 3) != 0) return;
  for (int bc = 0; bc < 8; bc++) {
    bool per[3] = {bc & 1, bc & 2, bc & 4};
    wf_status st;
    st_mesh m;
    st_op op;
    CHECK(ck, st_mesh_create(&m, &w, nx, ny, nz, &st) == WF_OK, "mesh: %s", st.msg);
    CHECK(ck, st_op_create(&op, &m, &w.fab, per, NULL, &st) == WF_OK, "op: %s", st.msg);
    double *x = st_field_alloc(&m), *y = st_field_alloc(&m);
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++) x[st_idx(&m, i, j, k)] = f(m.x0 + i, m.y0 + j, k);
    st_op_apply(&op, x, y);
    long bad = 0;
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++) {
          double want = direct(nx, ny, nz, per, m.x0 + i, m.y0 + j, k);
          if (fabs(y[st_idx(&m, i, j, k)] - want) > 1e-13 * (1 + fabs(want))) bad++;
        }
    CHECK(ck, bad == 0, "mesh %dx%dx%d bc %d%d%d: %ld cells differ", nx, ny, nz, per[0], per[1],
          per[2], bad);
    free(x), free(y);
    st_op_free(&op);
  }
  wf_wafer_free(&w);
  wf_deck_free(&deck);
}

/* A mesh and its operator on a wafer of PEs, as the solver tests need them. */
typedef struct problem {
  wf_wafer w;
  wf_deck deck;
  st_mesh m;
  st_op op;
} problem;

/* On pe_nx x pe_ny PEs: 0, or -1 (the failure recorded, nothing left to free). */
static int problem_create(checks *ck, problem *p, int pe_nx, int pe_ny, int nx, int ny, int nz,
                          const bool per[3], const st_coef_spec *coef) {
  if (deck_wafer_create(ck, &p->w, &p->deck, pe_nx, pe_ny) != 0) return -1;
  wf_status st;
  int rc = st_mesh_create(&p->m, &p->w, nx, ny, nz, &st);
  if (rc == WF_OK) rc = st_op_create(&p->op, &p->m, &p->w.fab, per, coef, &st);
  CHECK(ck, rc == WF_OK, "mesh and operator: %s", st.msg);
  if (rc == WF_OK) return 0;
  wf_wafer_free(&p->w);
  wf_deck_free(&p->deck);
  return -1;
}

static void problem_free(problem *p) {
  st_op_free(&p->op);
  wf_wafer_free(&p->w);
  wf_deck_free(&p->deck);
}

static void test_nan_rhs(checks *ck) {
  problem pb;
  bool per[3] = {false, false, false};
  if (problem_create(ck, &pb, 4, 4, 9, 8, 5, per, NULL) != 0) return;
  const st_mesh *m = &pb.m;
  wf_status st;
  double *b = st_field_alloc(m), *x = st_field_alloc(m);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) b[st_idx(m, i, j, k)] = 1.0;
  if (m->x0 == 0 && m->y0 == 0) b[st_idx(m, 0, 0, 2)] = NAN;
  st_opts o = {.rtol = 1e-8, .atol = 1e-50, .dtol = 1e5, .max_its = 500, .precision = ST_DOUBLE};
  for (int method = ST_CG; method <= ST_BICGSTAB; method++) {
    st_result res = {0};
    CHECK(ck, st_solve(&pb.op, (st_method)method, b, x, &o, &res, &st) == WF_OK, "solve");
    CHECK(ck, res.reason == ST_DIVERGED_NONFINITE, "method %d: reason %s, not diverged_nonfinite",
          method, st_reason_name(res.reason));
    CHECK(ck, res.its <= 1, "method %d went on for %d iterations with a NaN", method, res.its);
    st_result_free(&res);
  }
  free(b), free(x);
  problem_free(&pb);
}

/* The general operator: with contrast 1 it is the Laplacian (plus the upwind
 * convection u (x_c - x_W) when asked); with a random coefficient and no
 * convection it is symmetric: y'Ax = x'Ay. */
static void test_general_operator(checks *ck, int nx, int ny, int nz) {
  wf_wafer w;
  wf_deck deck;
  if (deck_wafer_create(ck, &w, &deck, 4, 3) != 0) return;
  wf_status st;
  st_mesh m;
  int rc = st_mesh_create(&m, &w, nx, ny, nz, &st);
  CHECK(ck, rc == WF_OK, "mesh %dx%dx%d: %s", nx, ny, nz, st.msg);
  for (int bc = 0; rc == WF_OK && bc < 8; bc++) {
    bool per[3] = {bc & 1, bc & 2, bc & 4};
    st_op lap, flat, conv, rnd, neu;
    st_coef_spec one = {.kind = "smooth", .contrast = 1, .seed = 1},
                 upwind = {.kind = "smooth", .contrast = 1, .convection = 2.5, .seed = 1},
                 random = {.kind = "random", .contrast = 50, .seed = 7},
                 walls = {.kind = "smooth", .contrast = 1, .neumann = {!per[0], !per[1], !per[2]}};
    int made = st_op_create(&lap, &m, &w.fab, per, NULL, &st) == WF_OK;
    made += st_op_create(&flat, &m, &w.fab, per, &one, &st) == WF_OK;
    made += st_op_create(&conv, &m, &w.fab, per, &upwind, &st) == WF_OK;
    made += st_op_create(&rnd, &m, &w.fab, per, &random, &st) == WF_OK;
    made += st_op_create(&neu, &m, &w.fab, per, &walls, &st) == WF_OK;
    CHECK(ck, made == 5, "operators (bc %d): %s", bc, st.msg);
    if (made != 5) break; /* a test that cannot set up has failed: no more cases */
    double *x = st_field_alloc(&m), *y = st_field_alloc(&m), *a = st_field_alloc(&m),
           *b = st_field_alloc(&m);
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++) {
          x[st_idx(&m, i, j, k)] = f(m.x0 + i, m.y0 + j, k);
          y[st_idx(&m, i, j, k)] = cos(m.x0 + i + 2.0 * (m.y0 + j) - 0.5 * k);
        }
    st_op_apply(&lap, x, a);
    st_op_apply(&flat, x, b);
    long bad = 0;
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++)
          if (fabs(a[st_idx(&m, i, j, k)] - b[st_idx(&m, i, j, k)]) > 1e-13) bad++;
    CHECK(ck, bad == 0, "contrast 1 differs from the Laplacian in %ld cells (bc %d)", bad, bc);
    /* Zero flux through the non-periodic faces: the Dirichlet Laplacian
     * less x_c for each face of the cell on the mesh's boundary. */
    st_op_apply(&neu, x, b);
    bad = 0;
    int n3[3] = {nx, ny, nz};
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++) {
          size_t c = st_idx(&m, i, j, k);
          int g[3] = {m.x0 + i, m.y0 + j, k}, faces = 0;
          for (int d = 0; d < 3; d++)
            if (!per[d]) faces += (g[d] == 0) + (g[d] == n3[d] - 1);
          if (fabs(b[c] - (a[c] - faces * x[c])) > 1e-12) bad++;
        }
    CHECK(ck, bad == 0, "zero-flux faces wrong in %ld cells (bc %d)", bad, bc);
    st_op_apply(&conv, x, b); /* x's halo is current after the applications above */
    bad = 0;
    for (int j = 0; j < m.lny; j++)
      for (int i = 0; i < m.lnx; i++)
        for (int k = 0; k < nz; k++) {
          size_t c = st_idx(&m, i, j, k);
          bool edge = m.x0 + i == 0 && !per[0];
          double want = a[c] + 2.5 * (x[c] - (edge ? 0.0 : x[st_idx(&m, i - 1, j, k)]));
          if (fabs(b[c] - want) > 1e-12) bad++;
        }
    CHECK(ck, bad == 0, "upwind convection wrong in %ld cells (bc %d)", bad, bc);
    st_op_apply(&rnd, x, a);
    st_op_apply(&rnd, y, b);
    double yax = st_dot_local(&m, y, a), xay = st_dot_local(&m, x, b);
    double v[2] = {yax, xay};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(ck, fabs(v[0] - v[1]) <= 1e-12 * fabs(v[0]), "random coefficient not symmetric: %.17g vs %.17g (bc %d)", v[0], v[1], bc);
    free(x), free(y), free(a), free(b);
    st_op_free(&lap), st_op_free(&flat), st_op_free(&conv), st_op_free(&rnd), st_op_free(&neu);
  }
  wf_wafer_free(&w);
  wf_deck_free(&deck);
}

/* PCG from a nonzero guess: from the solution itself it stops at once;
 * from half of it, it reaches the same solution; rtol stays relative to
 * ||b||, so both meet the same residual as the solve from zero. */
static void test_nonzero_guess(checks *ck) {
  problem pb;
  bool per[3] = {true, false, false};
  st_coef_spec walls = {.kind = "random", .contrast = 10, .seed = 3};
  if (problem_create(ck, &pb, 4, 3, 13, 9, 7, per, &walls) != 0) return;
  const st_mesh *m = &pb.m;
  wf_status st;
  double *b = st_field_alloc(m), *x = st_field_alloc(m), *y = st_field_alloc(m);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) b[st_idx(m, i, j, k)] = f(m->x0 + i, m->y0 + j, k);
  st_opts o = {.rtol = 1e-10, .dtol = 1e5, .max_its = 1000, .precision = ST_DOUBLE};
  st_result res = {0};
  CHECK(ck,
        st_solve(&pb.op, ST_PCG, b, x, &o, &res, &st) == WF_OK && st_reason_converged(res.reason),
        "solve from zero");
  int cold = res.its;
  st_result_free(&res);
  o.nonzero_guess = true;
  memcpy(y, x, m->n_stored * sizeof *y);
  CHECK(ck, st_solve(&pb.op, ST_PCG, b, y, &o, &res, &st) == WF_OK && res.its == 0,
        "from the solution: %d iterations, not 0", res.its);
  st_result_free(&res);
  for (size_t c = 0; c < m->n_stored; c++) y[c] = 0.5 * x[c];
  CHECK(ck,
        st_solve(&pb.op, ST_PCG, b, y, &o, &res, &st) == WF_OK && st_reason_converged(res.reason),
        "from half the solution");
  double diff = 0, norm = 0;
  for (int j = 0; j < m->lny; j++)
    for (size_t c = st_row(m, j); c < st_row(m, j) + st_row_len(m); c++)
      diff = fmax(diff, fabs(y[c] - x[c])), norm = fmax(norm, fabs(x[c]));
  double v[2] = {diff, norm};
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(ck, v[0] <= 1e-8 * v[1] && res.its > 0 && res.its <= cold,
        "from half the solution: %.2e off in %d iterations (%d from zero)", v[0] / v[1], res.its,
        cold);
  st_result_free(&res);
  free(b), free(x), free(y);
  problem_free(&pb);
}

/* The fused CG's last r'r against its residual vector's squares summed
 * again in double, in each precision. Each sum of the N cells' squares over
 * P ranks is within gamma_{N+P+2} of the exact one in its accumulator's
 * precision (Higham 2002, 3.1: float products are exact in double; single
 * rounds them in float), so they differ by at most the two gammas. Mixed
 * precision promises double sums; summed in float they are some 1e-6 off
 * here, a million times that. */
static void test_cg_sums(checks *ck) {
  problem pb;
  bool per[3] = {false, true, false};
  const int nx = 24, ny = 20, nz = 16;
  if (problem_create(ck, &pb, 4, 4, nx, ny, nz, per, NULL) != 0) return;
  const st_mesh *m = &pb.m;
  wf_status st;
  double *b = st_field_alloc(m), *x = st_field_alloc(m);
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) b[st_idx(m, i, j, k)] = f(m->x0 + i, m->y0 + j, k);
  int ranks;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  double terms = (double)nx * ny * nz + ranks + 2;
  const st_precision precs[3] = {ST_DOUBLE, ST_SINGLE, ST_MIXED};
  const char *names[3] = {"double", "single", "mixed"};
  for (int q = 0; q < 3; q++) {
    st_opts o = {.rtol = 1e-5, .dtol = 1e5, .max_its = 200, .precision = precs[q]};
    st_result res = {0};
    CHECK(ck, st_solve(&pb.op, ST_CG, b, x, &o, &res, &st) == WF_OK && res.its > 0, "%s: solve",
          names[q]);
    double u = precs[q] == ST_SINGLE ? 0x1p-24 : 0x1p-53;
    double allowed = (wf_gamma(terms, u) + wf_gamma(terms, 0x1p-53)) * res.rr_vector;
    CHECK(ck, res.rr_vector > 0 && fabs(res.rr - res.rr_vector) <= allowed,
          "%s: r'r %.17g, from the vector %.17g (%.2g of the rounding bound)", names[q], res.rr,
          res.rr_vector, fabs(res.rr - res.rr_vector) / allowed);
    st_result_free(&res);
  }
  free(b), free(x);
  problem_free(&pb);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  test_operator(&ck, 4, 3, 1);   /* one column per PE, nz = 1 */
  test_operator(&ck, 13, 7, 2);  /* uneven bricks */
  test_operator(&ck, 9, 11, 17);
  test_general_operator(&ck, 13, 7, 5);
  test_general_operator(&ck, 4, 3, 1);
  test_nan_rhs(&ck);
  test_nonzero_guess(&ck);
  test_cg_sums(&ck);
  return checks_finish(&ck, "test_stencil");
}
