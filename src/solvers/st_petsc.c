/* The PETSc cross-check (st_petsc.h): the same operator built as a PETSc matrix from its
 * definition, solved with the same method and tolerances, and the solutions compared. Built
 * only with PETSc (else st_petsc_absent.c). */
#include "st_petsc.h"

#include <math.h>
#include <petscksp.h>
#include <stdlib.h>
#include <string.h>

#include "wf_signal.h"

#ifndef PETSC_SUCCESS /* PETSc before 3.19 */
#define PETSC_SUCCESS 0
#endif

/* Where every rank's cells start in the global numbering. */
typedef struct numbering {
  const st_mesh *m;
  const wf_decomp *dc;
  int *xlo, *xn, *ylo, *yn;
  long long *offset; /* by rank */
} numbering;

static int numbering_create(numbering *nb, const st_mesh *m) {
  const wf_decomp *dc = &m->wafer->dc;
  nb->m = m;
  nb->dc = dc;
  nb->xlo = malloc(sizeof(int) * dc->px);
  nb->xn = malloc(sizeof(int) * dc->px);
  nb->ylo = malloc(sizeof(int) * dc->py);
  nb->yn = malloc(sizeof(int) * dc->py);
  nb->offset = malloc(sizeof(long long) * dc->nranks);
  if (!nb->xlo || !nb->xn || !nb->ylo || !nb->yn || !nb->offset) return -1;
  for (int c = 0; c < dc->px; c++) st_rank_columns(m->nx, dc->pe_nx, dc->px, c, &nb->xlo[c], &nb->xn[c]);
  for (int c = 0; c < dc->py; c++) st_rank_columns(m->ny, dc->pe_ny, dc->py, c, &nb->ylo[c], &nb->yn[c]);
  long long off = 0;
  for (int r = 0; r < dc->nranks; r++) {
    nb->offset[r] = off;
    off += (long long)nb->xn[r / dc->py] * nb->yn[r % dc->py] * m->nz;
  }
  return 0;
}

static void numbering_free(numbering *nb) {
  free(nb->xlo), free(nb->xn), free(nb->ylo), free(nb->yn), free(nb->offset);
}

static PetscInt global_index(const numbering *nb, int gx, int gy, int gz) {
  const wf_decomp *dc = nb->dc;
  const st_mesh *m = nb->m;
  int cx = wf_block_owner(dc->pe_nx, dc->px, wf_block_owner(m->nx, dc->pe_nx, gx));
  int cy = wf_block_owner(dc->pe_ny, dc->py, wf_block_owner(m->ny, dc->pe_ny, gy));
  int r = wf_decomp_rank_of(dc, cx, cy);
  long long local = ((long long)(gy - nb->ylo[cy]) * nb->xn[cx] + (gx - nb->xlo[cx])) * m->nz + gz;
  return (PetscInt)(nb->offset[r] + local);
}

/* Neighbour coordinate along an axis of n cells: wrapped, or -1 (outside). */
static int step(int g, int d, int n, bool periodic) {
  int h = g + d;
  if (h >= 0 && h < n) return h;
  return periodic ? (h + n) % n : -1;
}

/* Row g's entries from the operator's definition, written apart from
 * st_op.c's coefficient arrays (a slip in either shows as a difference):
 * the Laplacian is 6 on the diagonal and -1 for each neighbour inside the
 * mesh (or across a periodic face); the general operator's faces carry the
 * harmonic mean of their two cells' kappa (st_kappa: the problem's input),
 * a Dirichlet face the cell's own kappa, a Neumann face nothing; upwind
 * convection u (x_c - x_W) adds u to the diagonal and -u to the west
 * neighbour. Returns the entries (at most 7) in cols (global coordinates,
 * -1 for none) and vals. */
static int definition_row(const st_op *op, const int g[3], int nb[7][3], double vals[7]) {
  const st_mesh *m = op->m;
  const int n[3] = {m->nx, m->ny, m->nz};
  static const int dirs[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  const st_coef_spec *sp = &op->spec;
  double kc = op->general ? st_kappa(m, sp, g) : 1, diag = 0;
  int count = 1;
  for (int d = 0; d < 6; d++) {
    int axis = d / 2, h[3] = {g[0], g[1], g[2]};
    h[axis] = step(g[axis], dirs[d][axis], n[axis], op->periodic[axis]);
    bool inside = h[axis] >= 0;
    double face;
    if (!op->general)
      face = 1;
    else if (inside)
      face = 1 / (0.5 / kc + 0.5 / st_kappa(m, sp, h));
    else
      face = sp->neumann[axis] ? 0 : kc;
    diag += face;
    if (!inside) continue;
    double west = op->general && d == 0 ? sp->convection : 0;
    nb[count][0] = h[0], nb[count][1] = h[1], nb[count][2] = h[2];
    vals[count++] = -(face + west);
  }
  nb[0][0] = g[0], nb[0][1] = g[1], nb[0][2] = g[2];
  vals[0] = diag + (op->general ? sp->convection : 0);
  return count;
}

static PetscErrorCode build_matrix(const st_op *op, const numbering *nb, MPI_Comm comm, Mat *A) {
  const st_mesh *m = op->m;
  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, (PetscInt)m->n_owned, (PetscInt)m->n_owned, m->n_global, m->n_global));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 7, NULL, 6, NULL));
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        int g[3] = {m->x0 + i, m->y0 + j, k}, at[7][3];
        double v[7];
        int count = definition_row(op, g, at, v);
        PetscInt row = global_index(nb, g[0], g[1], g[2]), cols[7];
        PetscScalar vals[7];
        for (int e = 0; e < count; e++)
          cols[e] = global_index(nb, at[e][0], at[e][1], at[e][2]), vals[e] = v[e];
        PetscCall(MatSetValues(*A, 1, &row, count, cols, vals, ADD_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void copy_owned(const st_mesh *m, const double *field, PetscScalar *v, bool to_petsc,
                       double *out) {
  size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    if (to_petsc) memcpy(v + (size_t)j * len, field + st_row(m, j), len * sizeof(double));
    else memcpy(out + st_row(m, j), v + (size_t)j * len, len * sizeof(double));
  }
}

/* PETSc's default convergence test, then wafer's signal poll: SIGINT and
 * SIGTERM stop PETSc's solve as they stop ours. */
typedef struct convergence {
  void *dflt;
  wf_signal_poll sig;
  int signal;
} convergence;

static PetscErrorCode converged(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason *reason,
                                void *ctx) {
  convergence *c = ctx;
  PetscFunctionBeginUser;
  PetscCall(KSPConvergedDefault(ksp, it, rnorm, reason, c->dflt));
  if (*reason == KSP_CONVERGED_ITERATING) {
    c->signal = wf_signal_poll_next(&c->sig);
    if (c->signal) *reason = KSP_DIVERGED_ITS; /* pr->signal says why */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode run_check(const st_op *op, st_method method, const double *b,
                                const double *x_ours, const st_opts *o, st_petsc_result *pr) {
  const st_mesh *m = op->m;
  MPI_Comm comm = m->wafer->dc.comm;
  numbering nb;
  Mat A;
  Vec vb, vx, vo;
  KSP ksp;
  PC pc;
  PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCheck(numbering_create(&nb, m) == 0, comm, PETSC_ERR_MEM, "out of memory");
  PetscCall(build_matrix(op, &nb, comm, &A));
  PetscCall(MatCreateVecs(A, &vx, &vb));
  PetscCall(VecDuplicate(vx, &vo));
  PetscCall(VecGetArray(vb, &a));
  copy_owned(m, b, a, true, NULL);
  PetscCall(VecRestoreArray(vb, &a));
  PetscCall(VecGetArray(vo, &a));
  copy_owned(m, x_ours, a, true, NULL);
  PetscCall(VecRestoreArray(vo, &a));

  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, method == ST_BICGSTAB ? KSPBCGS : KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, method == ST_PCG ? PCJACOBI : PCNONE));
  PetscCall(KSPSetTolerances(ksp, o->rtol, o->atol, o->dtol, o->max_its));
  PetscCall(KSPSetFromOptions(ksp));
  convergence conv = {0};
  PetscCall(KSPConvergedDefaultCreate(&conv.dflt));
  PetscCall(KSPSetConvergenceTest(ksp, converged, &conv, NULL));
  PetscCall(KSPSetUp(ksp));
  wf_signal_poll_start(&conv.sig, comm);
  double t0 = MPI_Wtime();
  PetscErrorCode solved = KSPSolve(ksp, vb, vx);
  pr->seconds = MPI_Wtime() - t0;
  wf_signal_poll_end(&conv.sig);
  PetscCall(KSPConvergedDefaultDestroy(conv.dflt));
  PetscCall(solved);
  pr->signal = conv.signal;
  PetscInt its;
  KSPConvergedReason reason;
  PetscReal rnorm, nx, nd;
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetResidualNorm(ksp, &rnorm));
  pr->its = (int)its;
  pr->rnorm = rnorm;
  snprintf(pr->reason, sizeof pr->reason, "%s", KSPConvergedReasons[reason]);
  PetscCall(VecNorm(vx, NORM_2, &nx));
  PetscCall(VecAXPY(vo, -1.0, vx));
  PetscCall(VecNorm(vo, NORM_2, &nd));
  pr->rel_diff = nx > 0 ? nd / nx : nd;

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&vb));
  PetscCall(VecDestroy(&vx));
  PetscCall(VecDestroy(&vo));
  PetscCall(MatDestroy(&A));
  numbering_free(&nb);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int st_petsc_check(const st_op *op, st_method method, const double *b, const double *x_ours,
                   const st_opts *o, const char *options, st_petsc_result *pr, wf_status *st) {
  memset(pr, 0, sizeof *pr);
  if (method == ST_POWER)
    return wf_fail(st, WF_ERR_INPUT, "crosscheck = petsc applies to the solvers, not the power "
                   "method (checked against the analytic eigenvalue instead)");
  PetscBool started;
  PetscInitialized(&started);
  /* wafer's handler keeps SIGINT and SIGTERM (PETSc's would abort) */
  if (!started) (void)PetscOptionsSetValue(NULL, "-no_signal_handler", NULL);
  if (!started && PetscInitializeNoArguments() != PETSC_SUCCESS)
    return wf_fail(st, WF_ERR_RUNTIME, "PETSc failed to initialise");
  if (options && options[0] && PetscOptionsInsertString(NULL, options) != PETSC_SUCCESS)
    return wf_fail(st, WF_ERR_INPUT, "PETSc did not accept the options '%s'", options);
  if (run_check(op, method, b, x_ours, o, pr) != PETSC_SUCCESS)
    return wf_fail(st, WF_ERR_RUNTIME, "the PETSc cross-check failed (PETSc's message above)");
  return WF_OK;
}

void st_petsc_finalize(void) {
  PetscBool started, finished;
  PetscInitialized(&started);
  PetscFinalized(&finished);
  if (started && !finished) PetscFinalize();
}
