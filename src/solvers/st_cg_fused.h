/* The fused CG, a template included by st_krylov.c once per precision with
 *   CG_REAL  the type of the vectors (double or float),
 *   CG_ACC   the type the dot products accumulate in,
 *   CG_NAME  a suffix for the functions it defines.
 *
 * Textbook CG moves about 12 values per cell and iteration (q = Ap, two dots,
 * three vector updates). Here each iteration is two sweeps:
 *   A: p = s r + beta p, and p'Ap, with Ap computed on the fly one row behind
 *      the update of p (reads r, p; writes p: 3 values);
 *   B: Ap recomputed from p, x += alpha p, r -= alpha Ap, r'r
 *      (reads p, x, r; writes x, r: 5 values).
 * Ap is never stored. The halo of p is not exchanged: each rank updates p on
 * its halo ring too, from r's halo (exchanged once per iteration, the only
 * exchange) and the p halo it computed the iteration before: the same
 * operations on the same values as the owner, so bit for bit the same.
 * With the Laplacian's constant diagonal, Jacobi is the scaling s = 1/6
 * (PCG); the preconditioned residual norm is then s ||r||, as PETSc reports. */

/* The five neighbouring columns of owned column (i, j) of a field. */
typedef struct CG_NAME(cols) {
  const CG_REAL *restrict c, *restrict w, *restrict e, *restrict s, *restrict n;
} CG_NAME(cols);

static inline CG_NAME(cols) CG_NAME(columns)(const st_mesh *m, const CG_REAL *x, int i, int j) {
  const CG_REAL *c = x + st_idx(m, i, j, 0);
  const size_t row = m->ld * (size_t)m->nz;
  return (CG_NAME(cols)){c, c - m->nz, c + m->nz, c - row, c + row};
}

static inline CG_REAL CG_NAME(inner)(CG_NAME(cols) q, CG_REAL d, int k) {
  return d * q.c[k] - (q.c[k - 1] + q.c[k + 1]) - (q.w[k] + q.e[k]) - (q.s[k] + q.n[k]);
}

static inline CG_REAL CG_NAME(end)(const st_op *op, CG_NAME(cols) q, int k) {
  const int nz = op->m->nz;
  const bool pz = op->periodic[2];
  CG_REAL below = k > 0 ? q.c[k - 1] : pz ? q.c[nz - 1] : 0;
  CG_REAL above = k < nz - 1 ? q.c[k + 1] : pz ? q.c[0] : 0;
  return (CG_REAL)op->diag * q.c[k] - (below + above) - (q.w[k] + q.e[k]) - (q.s[k] + q.n[k]);
}

/* p = s r + beta p on the stored row j (owned columns and the halo ring). */
static void CG_NAME(update_p_row)(const st_mesh *m, CG_REAL *restrict p,
                                  const CG_REAL *restrict r, int j, CG_REAL s, CG_REAL beta) {
  const size_t start = st_idx(m, -1, j, 0), len = m->ld * (size_t)m->nz;
#pragma omp simd
  for (size_t k = start; k < start + len; k++) p[k] = s * r[k] + beta * p[k];
}

WF_HOT static CG_ACC CG_NAME(sweep_a)(const st_op *op, CG_REAL *p, const CG_REAL *r, CG_REAL s,
                               CG_REAL beta) {
  const st_mesh *m = op->m;
  const int nz = m->nz;
  const CG_REAL d = (CG_REAL)op->diag;
  CG_ACC pap = 0;
  CG_NAME(update_p_row)(m, p, r, -1, s, beta);
  CG_NAME(update_p_row)(m, p, r, 0, s, beta);
  for (int j = 0; j < m->lny; j++) {
    CG_NAME(update_p_row)(m, p, r, j + 1, s, beta);
    for (int i = 0; i < m->lnx; i++) {
      const CG_NAME(cols) q = CG_NAME(columns)(m, p, i, j);
#pragma omp simd reduction(+ : pap)
      for (int k = 1; k < nz - 1; k++) pap += (CG_ACC)(q.c[k] * CG_NAME(inner)(q, d, k));
      for (int k = 0; k < nz; k += st_end_step(m)) pap += (CG_ACC)(q.c[k] * CG_NAME(end)(op, q, k));
    }
  }
  return pap;
}

WF_HOT static CG_ACC CG_NAME(sweep_b)(const st_op *op, const CG_REAL *p, CG_REAL *x, CG_REAL *r,
                               CG_REAL alpha) {
  const st_mesh *m = op->m;
  const int nz = m->nz;
  const CG_REAL d = (CG_REAL)op->diag;
  CG_ACC rr = 0;
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++) {
      const CG_NAME(cols) q = CG_NAME(columns)(m, p, i, j);
      const size_t c = st_idx(m, i, j, 0);
      CG_REAL *restrict xc = x + c, *restrict rc = r + c;
#pragma omp simd reduction(+ : rr)
      for (int k = 1; k < nz - 1; k++) {
        xc[k] += alpha * q.c[k];
        rc[k] -= alpha * CG_NAME(inner)(q, d, k);
        rr += (CG_ACC)rc[k] * rc[k];
      }
      for (int k = 0; k < nz; k += st_end_step(m)) {
        xc[k] += alpha * q.c[k];
        rc[k] -= alpha * CG_NAME(end)(op, q, k);
        rr += (CG_ACC)rc[k] * rc[k];
      }
    }
  return rr;
}

static CG_ACC CG_NAME(dot)(const st_mesh *m, const CG_REAL *a, const CG_REAL *b) {
  CG_ACC sum = 0;
  const size_t len = st_row_len(m);
  for (int j = 0; j < m->lny; j++) {
    const CG_REAL *restrict x = a + st_row(m, j), *restrict y = b + st_row(m, j);
#pragma omp simd reduction(+ : sum)
    for (size_t k = 0; k < len; k++) sum += (CG_ACC)x[k] * y[k];
  }
  return sum;
}

/* Solve with b and x in double, the iterations in CG_REAL. */
static int CG_NAME(cg)(st_op *op, bool jacobi, const double *b, double *x, const st_opts *o,
                       st_result *res, wf_status *st) {
  const st_mesh *m = op->m;
  wf_fabric *fab = op->halo.fab;
  /* A halo plan for columns of CG_REAL (the operator's is for doubles). */
  wf_halo halo;
  if (st_mesh_halo_create(&halo, fab, m, sizeof(CG_REAL), 1, false, op->periodic[0],
                          op->periodic[1], st) != WF_OK)
    return st->code;
  halo.model_cycles = op->halo.model_cycles;
  CG_REAL *r = st_field_alloc_bytes(m, sizeof(CG_REAL)), *p = st_field_alloc_bytes(m, sizeof(CG_REAL));
  CG_REAL *xr = st_field_alloc_bytes(m, sizeof(CG_REAL));
  if (!r || !p || !xr) {
    free(r), free(p), free(xr);
    wf_halo_free(&halo);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for CG vectors");
  }
  const double s = jacobi ? 1.0 / op->diag : 1.0;
  for (int j = 0; j < m->lny; j++)
    for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++) r[k] = (CG_REAL)b[k];
  wf_halo_exchange(&halo, r);
  double rr = allreduce1(fab, (double)CG_NAME(dot)(m, r, r));
  monitor mo;
  monitor_start(&mo, fab, o, res, s * sqrt(rr));
  res->bytes_per_cell_it = 8 * sizeof(CG_REAL);
  double t0 = MPI_Wtime();
  bool done = monitor_step(&mo, 0, s * sqrt(rr));
  double rz = s * rr, beta = 0;
  for (int its = 1; !done; its++) {
    double pap = allreduce1(fab, (double)CG_NAME(sweep_a)(op, p, r, (CG_REAL)s, (CG_REAL)beta));
    if (!(pap > 0)) {
      res->reason = isfinite(pap) ? ST_DIVERGED_INDEFINITE : ST_DIVERGED_NONFINITE;
      break;
    }
    double alpha = rz / pap;
    double rr_local = (double)CG_NAME(sweep_b)(op, p, xr, r, (CG_REAL)alpha);
    wf_halo_begin(&halo, r); /* overlapped with the reduction */
    rr = allreduce1(fab, rr_local);
    wf_halo_end(&halo, r);
    done = monitor_step(&mo, its, s * sqrt(rr));
    beta = s * rr / rz;
    rz = s * rr;
  }
  res->seconds = MPI_Wtime() - t0;
  monitor_end(&mo);
  /* The last r'r against r's squares summed again in double by a plain
   * loop, for the tests (the accumulator's precision is a claim): one pass
   * per solve, outside the timed iterations. Plain MPI: the fabric's
   * counters count the solve, not this. */
  double rr_vector = 0;
  for (int j = 0; j < m->lny; j++)
    for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++)
      rr_vector += (double)r[k] * (double)r[k];
  MPI_Allreduce(MPI_IN_PLACE, &rr_vector, 1, MPI_DOUBLE, MPI_SUM, fab->dc->comm);
  res->rr = rr, res->rr_vector = rr_vector;
  memset(x, 0, m->n_stored * sizeof(double));
  for (int j = 0; j < m->lny; j++)
    for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++) x[k] = (double)xr[k];
  free(r), free(p), free(xr);
  wf_halo_free(&halo);
  return WF_OK;
}

#undef CG_REAL
#undef CG_ACC
#undef CG_NAME
