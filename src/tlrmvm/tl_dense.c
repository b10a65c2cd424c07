/* The dense reference operators (tl_dense.h): each rank's dense block of every frequency,
 * and products with them, partial results summed over the ranks as the TLR products are. */
#include "tl_dense.h"

#include "wf_cblas.h"
#include <stdlib.h>
#include <string.h>

#include "wf_memory.h"

int tl_dense_create(tl_dense *d, const tl_layout *l, int nfreq, const bool *used, wf_status *st) {
  *d = (tl_dense){.l = l, .nfreq = nfreq};
  tl_layout_block(l, &d->r0, &d->rows, &d->c0, &d->cols);
  int whole = l->m > l->n ? l->m : l->n;
  d->block = calloc((size_t)nfreq, sizeof *d->block);
  d->part = malloc((size_t)whole * sizeof *d->part);
  int failed = !d->block || !d->part;
  for (int f = 0; !failed && f < nfreq; f++) {
    if (used && !used[f]) continue;
    d->block[f] = wf_alloc_large((size_t)d->rows * d->cols * sizeof **d->block);
    failed = !d->block[f];
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, l->comm);
  if (failed) {
    tl_dense_free(d);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the dense operators (%d of %d x %d)",
                   nfreq, l->m, l->n);
  }
  return WF_OK;
}

void tl_dense_free(tl_dense *d) {
  for (int f = 0; d->block && f < d->nfreq; f++) free(d->block[f]);
  free(d->block), free(d->part);
  *d = (tl_dense){0};
}

void tl_dense_apply(tl_dense *d, int f, bool adjoint, const float complex *in, float complex *out) {
  const float complex one = 1, zero = 0;
  int len = adjoint ? d->l->n : d->l->m;
  memset(d->part, 0, (size_t)len * sizeof *d->part);
  if (d->rows > 0 && d->cols > 0) {
    if (adjoint)
      cblas_cgemv(CblasColMajor, CblasConjTrans, d->rows, d->cols, &one, d->block[f], d->rows,
                  in + d->r0, 1, &zero, d->part + d->c0, 1);
    else
      cblas_cgemv(CblasColMajor, CblasNoTrans, d->rows, d->cols, &one, d->block[f], d->rows,
                  in + d->c0, 1, &zero, d->part + d->r0, 1);
  }
  MPI_Allreduce(d->part, out, 2 * len, MPI_FLOAT, MPI_SUM, d->l->comm);
}
