/* PETSc's MatMult of the SpMV example's matrix (spmv.h): a second
 * reference, in PETSc's own layout, assembled from the matrix's entries.
 * Built only with PETSc (else spmv_petsc_absent.c). */
#include <math.h>
#include <petscmat.h>
#include <stdlib.h>

#include "spmv.h"
#include "wf_io.h"

#ifndef PETSC_SUCCESS /* PETSc before 3.19 */
#define PETSC_SUCCESS 0
#endif

/* A pass over the entries keeping this rank's rows [r0, r1): their counts
 * on and off the diagonal block [c0, c1) (the preallocation), or into the
 * matrix, with each row's sum |a_ij x_j|. */
typedef struct pass {
  const sp_case *c;
  long long r0, r1, c0, c1;
  PetscInt *d_nnz, *o_nnz;
  Mat A;
  double *abs_ax;
  PetscErrorCode err;
} pass;

static void count_entry(void *ctx, long long r, long long col, double v) {
  pass *p = ctx;
  if (r < p->r0 || r >= p->r1) return;
  if (col >= p->c0 && col < p->c1) p->d_nnz[r - p->r0]++;
  else p->o_nnz[r - p->r0]++;
  (void)v;
}

static void set_entry(void *ctx, long long r, long long col, double v) {
  pass *p = ctx;
  if (r < p->r0 || r >= p->r1 || p->err) return;
  PetscInt i = (PetscInt)r, j = (PetscInt)col;
  PetscScalar a = v;
  p->err = MatSetValues(p->A, 1, &i, 1, &j, &a, ADD_VALUES);
  p->abs_ax[r - p->r0] += fabs(v * sp_x(p->c, col));
}

/* Assembled: `repeat` timed products after a warm-up; this rank's shares. */
static PetscErrorCode multiply(const sp_case *c, pass *p, long repeat, sp_petsc_part *out) {
  Vec x, y;
  PetscCall(MatAssemblyBegin(p->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(p->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(p->A, &x, &y));
  for (long long j = p->c0; j < p->c1; j++)
    PetscCall(VecSetValue(x, (PetscInt)j, sp_x(c, j), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(MatMult(p->A, x, y)); /* warm-up */
  double t0 = MPI_Wtime();
  for (long k = 0; k < repeat; k++) PetscCall(MatMult(p->A, x, y));
  const PetscScalar *yv;
  *out = (sp_petsc_part){.seconds = (MPI_Wtime() - t0) / (double)repeat};
  PetscCall(VecGetArrayRead(y, &yv));
  for (long long i = 0; i < p->r1 - p->r0; i++) {
    double w = sp_weight(c, p->r0 + i), k = (double)(p->d_nnz[i] + p->o_nnz[i]);
    out->proj += w * yv[i];
    out->abs_proj += fabs(w) * p->abs_ax[i];
    if (k > out->kmax) out->kmax = k;
  }
  PetscCall(VecRestoreArrayRead(y, &yv));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  return PETSC_SUCCESS;
}

static PetscErrorCode product(const sp_case *c, MPI_Comm comm, long repeat, sp_petsc_part *out,
                              wf_status *st) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank), MPI_Comm_size(comm, &nranks);
  pass p = {.c = c,
            .r0 = c->m * rank / nranks, .r1 = c->m * (rank + 1) / nranks,
            .c0 = c->n * rank / nranks, .c1 = c->n * (rank + 1) / nranks};
  long long nr = p.r1 - p.r0;
  p.d_nnz = calloc((size_t)nr + 1, sizeof *p.d_nnz);
  p.o_nnz = calloc((size_t)nr + 1, sizeof *p.o_nnz);
  p.abs_ax = calloc((size_t)nr + 1, sizeof *p.abs_ax);
  if (!p.d_nnz || !p.o_nnz || !p.abs_ax) {
    free(p.d_nnz), free(p.o_nnz), free(p.abs_ax);
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for PETSc's rows");
    return PETSC_SUCCESS;
  }
  /* Each pass ends agreed (a signal may stop one rank's and not another's)
   * before PETSc's collectives. */
  sp_matrix_each(c, count_entry, &p, st);
  wf_status_agree(comm, st);
  if (st->code == WF_OK) {
    for (long long i = 0; i < nr; i++) { /* repeated entries were counted apart */
      if (p.d_nnz[i] > p.c1 - p.c0) p.d_nnz[i] = (PetscInt)(p.c1 - p.c0);
      if (p.o_nnz[i] > c->n - (p.c1 - p.c0)) p.o_nnz[i] = (PetscInt)(c->n - (p.c1 - p.c0));
    }
    PetscCall(MatCreateAIJ(comm, (PetscInt)nr, (PetscInt)(p.c1 - p.c0), (PetscInt)c->m,
                           (PetscInt)c->n, 0, p.d_nnz, 0, p.o_nnz, &p.A));
    sp_matrix_each(c, set_entry, &p, st);
    if (p.err != PETSC_SUCCESS && st->code == WF_OK)
      wf_fail(st, WF_ERR_RUNTIME, "PETSc's MatSetValues failed (PETSc's message above)");
    wf_status_agree(comm, st);
    if (st->code == WF_OK) PetscCall(multiply(c, &p, repeat, out));
    PetscCall(MatDestroy(&p.A));
  }
  free(p.d_nnz), free(p.o_nnz), free(p.abs_ax);
  return PETSC_SUCCESS;
}

int sp_petsc_product(const sp_case *c, MPI_Comm comm, long repeat, sp_petsc_part *p,
                     wf_status *st) {
  PetscBool started;
  PetscInitialized(&started);
  /* wafer's handler keeps SIGINT and SIGTERM (PETSc's would abort) */
  if (!started) (void)PetscOptionsSetValue(NULL, "-no_signal_handler", NULL);
  if (!started && PetscInitializeNoArguments() != PETSC_SUCCESS)
    return wf_fail(st, WF_ERR_RUNTIME, "PETSc failed to initialise");
  if (product(c, comm, repeat, p, st) != PETSC_SUCCESS)
    return wf_fail(st, WF_ERR_RUNTIME, "PETSc's MatMult failed (PETSc's message above)");
  return st->code;
}

void sp_petsc_finalize(void) {
  PetscBool started, finished;
  PetscInitialized(&started);
  PetscFinalized(&finished);
  if (started && !finished) PetscFinalize();
}
