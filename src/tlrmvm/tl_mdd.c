/* Multi-dimensional deconvolution (tl_mdd.h): LSQR on the block-diagonal operator of every
 * frequency, TLR or dense, each frequency on its own system; and the residuals that check a
 * solve. */
#include "tl_mdd.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>

typedef struct ctx {
  const tl_mdd *p;
  bool dense;
} ctx;

/* diag(A_f) v or its adjoint: each frequency's segment by its operator. */
static void blocks(void *c, bool adjoint, const float complex *in, float complex *out) {
  const ctx *x = c;
  const tl_mdd *p = x->p;
  size_t in_len = (size_t)(adjoint ? p->m : p->n), out_len = (size_t)(adjoint ? p->n : p->m);
  for (int f = 0; f < p->nfreq; f++) {
    if (f % p->systems != p->system) continue;
    if (x->dense)
      tl_dense_apply(p->dense, f, adjoint, in + f * in_len, out + f * out_len);
    else
      tl_matrix_apply(&p->tlr[f], adjoint, in + f * in_len, out + f * out_len, NULL);
  }
  for (int f = 0; p->systems > 1 && f < p->nfreq; f++)
    MPI_Bcast(out + f * out_len, 2 * (int)out_len, MPI_FLOAT, (f % p->systems) * p->per, p->world);
}

int tl_mdd_solve(const tl_mdd *p, bool dense, const float complex *d, const tl_lsqr_opts *o,
                 float complex *x, double *history, tl_lsqr_result *r, wf_status *st) {
  ctx c = {p, dense};
  return tl_lsqr(blocks, &c, p->nfreq * p->m, p->nfreq * p->n, d, o, x, history, r, st);
}

double tl_norm2(const float complex *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += (double)crealf(v[i]) * crealf(v[i]) + (double)cimagf(v[i]) * cimagf(v[i]);
  return sqrt(s);
}

/* The residuals frequency by frequency on each frequency's own system,
 * with its operator directly: not through `blocks`, whose broadcasts the
 * solves share, so that a solve that went wrong there shows here. Each
 * system's first rank adds its frequencies' squares to the sums. */
int tl_mdd_residuals(const tl_mdd *p, bool dense, const float complex *d, const float complex *x,
                     double damp, double *residual, double *normal, wf_status *st) {
  size_t m = (size_t)p->m, n = (size_t)p->n;
  float complex *r = malloc(m * sizeof *r), *g = malloc(n * sizeof *g);
  int failed = !r || !g;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, p->world);
  if (failed) {
    free(r), free(g);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the MDD's residuals");
  }
  int rank;
  MPI_Comm_rank(p->world, &rank);
  double sums[2] = {0, 0};
  for (int f = 0; f < p->nfreq; f++) {
    if (f % p->systems != p->system) continue;
    const float complex *xf = x + f * n, *df = d + f * m;
    if (dense)
      tl_dense_apply(p->dense, f, false, xf, r);
    else
      tl_matrix_apply(&p->tlr[f], false, xf, r, NULL);
    for (size_t i = 0; i < m; i++) r[i] = df[i] - r[i];
    if (dense)
      tl_dense_apply(p->dense, f, true, r, g);
    else
      tl_matrix_apply(&p->tlr[f], true, r, g, NULL);
    for (size_t j = 0; j < n; j++) g[j] -= (float)(damp * damp) * xf[j];
    if (rank == p->system * p->per) {
      sums[0] += pow(tl_norm2(r, m), 2);
      sums[1] += pow(tl_norm2(g, n), 2);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, p->world);
  *residual = sqrt(sums[0]);
  *normal = sqrt(sums[1]);
  free(r), free(g);
  return WF_OK;
}
