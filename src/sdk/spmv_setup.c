/* The SpMV example's setup (spmv.h): the bands, this rank's CSR block, the
 * plans of its exchanges and its PEs' counts for the model. */
#include <stdlib.h>
#include <string.h>

#include "sdk_grid.h"
#include "spmv.h"
#include "wf_memory.h"
#include "wf_io.h"
#include "wf_signal.h"
#include "wf_wafer.h"

/* The band of bounds b[0..parts] holding item i. */
static int band_of(const long long *b, int parts, long long i) {
  int lo = 0, hi = parts; /* b[lo] <= i < b[hi] */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (b[mid] <= i) lo = mid; else hi = mid;
  }
  return lo;
}

/* Bounds cutting `len` items into `parts` bands of about equal counts
 * (cnt: each item's), each band at least one item. */
static void balanced_bands(const long long *cnt, long long len, int parts, long long *b) {
  long long total = 0, prefix = 0, i = 0;
  for (long long k = 0; k < len; k++) total += cnt[k];
  b[0] = 0, b[parts] = len;
  for (int k = 1; k < parts; k++) {
    double target = (double)total * k / parts;
    while (i < len && (double)(prefix + cnt[i]) <= target) prefix += cnt[i++];
    long long at = i > b[k - 1] + 1 ? i : b[k - 1] + 1, most = len - (parts - k);
    b[k] = at < most ? at : most;
    while (i < b[k]) prefix += cnt[i++];
  }
}

/* The passes over the entries: counting a row's and a column's entries
 * (for balanced bands), counting this rank's rows' entries, and filling
 * its CSR block. */
typedef struct pass_ctx {
  sp_rank *r;
  long long *rowcnt, *colcnt; /* the balance's pass */
  long long *fill;            /* the fill's next place a row */
  bool count_only;
} pass_ctx;

static void count_all(void *ctx, long long row, long long col, double v) {
  pass_ctx *p = ctx;
  p->rowcnt[row]++, p->colcnt[col]++;
  (void)v;
}

static void take_mine(void *ctx, long long row, long long col, double v) {
  pass_ctx *p = ctx;
  sp_rank *r = p->r;
  if (row < r->r0 || row >= r->r1 || col < r->c0 || col >= r->c1) return;
  if (p->count_only) {
    r->rowptr[row - r->r0 + 1]++;
    return;
  }
  long long at = p->fill[row - r->r0]++;
  r->colidx[at] = (int32_t)(col - r->c0), r->val[at] = v;
}

static int make_bands(wf_run *run, const sp_case *c, bool balance, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  r->rb = malloc((size_t)(dc->pe_ny + 1) * sizeof *r->rb);
  r->cb = malloc((size_t)(dc->pe_nx + 1) * sizeof *r->cb);
  pass_ctx p = {.r = r};
  if (balance) {
    if (wf_memory_fits(run->comm, 8.0 * (double)(c->m + c->n), "the balance's counts",
                       "spmv.balance = false", st) != WF_OK)
      return st->code;
    p.rowcnt = calloc((size_t)c->m, sizeof *p.rowcnt);
    p.colcnt = calloc((size_t)c->n, sizeof *p.colcnt);
  }
  wf_status_clear(st);
  if (!r->rb || !r->cb || (balance && (!p.rowcnt || !p.colcnt)))
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's bands");
  else if (balance && sp_matrix_each(c, count_all, &p, st) == WF_OK) {
    balanced_bands(p.rowcnt, c->m, dc->pe_ny, r->rb);
    balanced_bands(p.colcnt, c->n, dc->pe_nx, r->cb);
  } else if (!balance) {
    for (int k = 0; k <= dc->pe_ny; k++) r->rb[k] = sdk_part(c->m, dc->pe_ny, k);
    for (int k = 0; k <= dc->pe_nx; k++) r->cb[k] = sdk_part(c->n, dc->pe_nx, k);
  }
  free(p.rowcnt), free(p.colcnt);
  wf_status_agree(run->comm, st);
  return st->code;
}

/* This rank's CSR block: a pass counting its rows' entries, then one
 * filling them. */
static int make_block(wf_run *run, const sp_case *c, sp_rank *r, wf_status *st) {
  long long nr = r->r1 - r->r0;
  r->rowptr = calloc((size_t)nr + 1, sizeof *r->rowptr);
  wf_status_clear(st);
  pass_ctx p = {.r = r, .count_only = true};
  if (!r->rowptr) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's rows");
  else sp_matrix_each(c, take_mine, &p, st);
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  for (long long i = 0; i < nr; i++) r->rowptr[i + 1] += r->rowptr[i];
  r->nnz = r->rowptr[nr];
  if (wf_memory_fits(run->comm, 12.0 * (double)r->nnz + 16.0 * (double)nr,
                     "the matrix's block", "more nodes", st) != WF_OK)
    return st->code;
  r->colidx = malloc((size_t)r->nnz * sizeof *r->colidx + 1);
  r->val = malloc((size_t)r->nnz * sizeof *r->val + 1);
  p.fill = malloc((size_t)nr * sizeof *p.fill + 1);
  p.count_only = false;
  if (!r->colidx || !r->val || !p.fill) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's block");
  } else {
    memcpy(p.fill, r->rowptr, (size_t)nr * sizeof *p.fill);
    sp_matrix_each(c, take_mine, &p, st);
  }
  free(p.fill);
  wf_status_agree(run->comm, st);
  return st->code;
}

int sp_exchange_rows(wf_run *run, sp_rank *r, void *send, void *recv, size_t esz,
                     size_t self_bytes, double pe_words, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  int px = dc->px, k = 0;
  for (int q = 0; q < px; q++)
    if (q != dc->cx)
      r->pieces[k++] = (wf_piece){q, (char *)send + (size_t)r->send_off[q] * esz,
                                  (size_t)(r->send_off[q + 1] - r->send_off[q]) * esz};
  for (int q = 0; q < px; q++)
    if (q != dc->cx)
      r->pieces[k++] = (wf_piece){q, (char *)recv + (size_t)r->recv_off[q] * esz,
                                  (size_t)(r->recv_off[q + 1] - r->recv_off[q]) * esz};
  return wf_fabric_alltoall_pieces(&run->wafer->fab, WF_ALONG_ROWS, r->pieces, px - 1,
                                   r->pieces + px - 1, px - 1, self_bytes, pe_words, st);
}

/* Where the partial products go: to each rank q of this rank's row, its
 * nonzero rows that q owns (counts, then the rows themselves, exchanged
 * once). Collective. */
static int make_plan(wf_run *run, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  int px = dc->px;
  long long nr = r->r1 - r->r0;
  r->send_off = calloc((size_t)px + 1, sizeof *r->send_off);
  r->recv_off = calloc((size_t)px + 1, sizeof *r->recv_off);
  r->send_rows = malloc((size_t)nr * sizeof *r->send_rows + 1);
  long long *count = calloc((size_t)px + 1, sizeof *count);
  wf_status_clear(st);
  if (!r->send_off || !r->recv_off || !r->send_rows || !count)
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the exchange's plan");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(count), st->code;
  long long n = 0;
  for (int q = 0; q < px; q++) { /* q owns rows [sdk_part(nr, px, q), sdk_part(nr, px, q + 1)) */
    r->send_off[q] = n;
    for (long long i = sdk_part(nr, px, q); i < sdk_part(nr, px, q + 1); i++)
      if (r->rowptr[i + 1] > r->rowptr[i]) r->send_rows[n++] = (int32_t)i;
    count[q] = n - r->send_off[q];
  }
  r->send_off[px] = n;
  int k = 0; /* the counts: one to and from each other rank of the row */
  for (int q = 0; q < px; q++)
    if (q != dc->cx) r->pieces[k++] = (wf_piece){q, &count[q], sizeof *count};
  for (int q = 0; q < px; q++)
    if (q != dc->cx) r->pieces[k++] = (wf_piece){q, &r->recv_off[q + 1], sizeof *r->recv_off};
  int rc = wf_fabric_alltoall_pieces(&run->wafer->fab, WF_ALONG_ROWS, r->pieces, px - 1,
                                     r->pieces + px - 1, px - 1, 0, 1, st);
  free(count);
  for (int q = 0; q < px; q++) r->recv_off[q + 1] += r->recv_off[q];
  long long nrecv = r->recv_off[px];
  r->recv_rows = malloc((size_t)nrecv * sizeof *r->recv_rows + 1);
  r->recv_vals = malloc((size_t)nrecv * sizeof *r->recv_vals + 1);
  r->send_vals = malloc((size_t)n * sizeof *r->send_vals + 1);
  if (rc == WF_OK && (!r->recv_rows || !r->recv_vals || !r->send_vals))
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the exchange's plan");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  /* the rows, as the rank row's (all its ranks' rows start at r0) */
  if (sp_exchange_rows(run, r, r->send_rows, r->recv_rows, sizeof(int32_t), 0, 1, st) != WF_OK)
    return st->code;
  for (long long i = 0; i < nrecv; i++) r->recv_rows[i] -= (int32_t)(r->yo0 - r->r0);
  return WF_OK;
}

/* The SDK kernel's work on one PE (docs/sdk.md, "SpMV"): x from the other
 * PEs of its column in, its own piece out north and south; one scalar
 * multiply-add an entry, one add a row it sends (the merge) and one for
 * each partial it receives for a row it owns, at 1 cycle (fast end) to 4
 * (slow: the loads of the indirect addressing); two words (row, value) a
 * partial sent or received; then the trains' latency along its column and
 * row. */
static wf_range pe_cycles(const wf_wafer *wf, double x_in, double x_out, double nnz,
                          double rows_out, double rows_in) {
  double ops = nnz + rows_out + rows_in;
  wf_range compute = {ops, 4 * ops};
  wf_range cycles = wf_model_phase(&wf->hw, compute, (wf_range){0, 0}, x_in + 2 * rows_in,
                                   x_out + 2 * rows_out);
  double latency = wf_model_bcast_cycles(&wf->hw, &wf->grid, 4, wf->dc.pe_ny, 0) +
                   wf_model_bcast_cycles(&wf->hw, &wf->grid, 4, wf->dc.pe_nx, 0);
  return wf_range_plus(cycles, latency);
}

/* Each of this rank's PEs' entries, the rows it sends partials of and
 * those it receives for the rows it owns (the rows owned by PE (x, y): the
 * x-th of pe_nx parts of row band y); the busiest PE's cycles. The
 * partials a row receives are summed over the rank row (a line reduction:
 * bookkeeping). Collective. */
static int count_pes(wf_run *run, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  long long nr = r->r1 - r->r0;
  size_t npe = (size_t)dc->nx * (size_t)dc->ny;
  double *nnz = calloc(npe, sizeof *nnz), *out = calloc(npe, sizeof *out);
  double *row_parts = calloc((size_t)nr + 1, sizeof *row_parts);
  long long *mark = malloc((size_t)dc->nx * sizeof *mark);
  wf_status_clear(st);
  if (!nnz || !out || !row_parts || !mark) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the model's counts");
  wf_status_agree(run->comm, st);
  if (st->code == WF_OK) {
    for (int l = 0; l < dc->nx; l++) mark[l] = -1;
    for (long long i = 0; i < nr; i++) {
      int ly = band_of(r->rb, dc->pe_ny, r->r0 + i) - dc->y0;
      for (long long e = r->rowptr[i]; e < r->rowptr[i + 1]; e++) {
        int lx = band_of(r->cb, dc->pe_nx, r->c0 + r->colidx[e]) - dc->x0;
        nnz[(size_t)ly * dc->nx + lx]++;
        if (mark[lx] != i) mark[lx] = i, out[(size_t)ly * dc->nx + lx]++, row_parts[i]++;
      }
    }
    if (nr > 0 && nr < (1LL << 31))
      wf_fabric_allreduce_line(&run->wafer->fab, WF_ALONG_ROWS, row_parts, (int)nr, WF_SUM);
    double most[3] = {0, 0, 0};
    for (int ly = 0; ly < dc->ny; ly++)
      for (int lx = 0; lx < dc->nx; lx++) {
        int x = dc->x0 + lx, y = dc->y0 + ly;
        long long len = r->rb[y + 1] - r->rb[y], w = r->cb[x + 1] - r->cb[x];
        long long o0 = r->rb[y] + sdk_part(len, dc->pe_nx, x) - r->r0;
        long long o1 = r->rb[y] + sdk_part(len, dc->pe_nx, x + 1) - r->r0;
        double in = 0, piece = (double)(sdk_part(w, dc->pe_ny, y + 1) - sdk_part(w, dc->pe_ny, y));
        for (long long i = o0; i < o1; i++) in += row_parts[i];
        size_t at = (size_t)ly * dc->nx + lx;
        wf_range c = pe_cycles(run->wafer, (double)w - piece,
                               piece * wf_model_streams(dc->pe_ny, y), nnz[at], out[at], in);
        most[0] = c.lo > most[0] ? c.lo : most[0];
        most[1] = c.hi > most[1] ? c.hi : most[1];
        most[2] = nnz[at] > most[2] ? nnz[at] : most[2];
      }
    wf_fabric_allreduce(&run->wafer->fab, most, 3, WF_MAX);
    r->cycles_lo = most[0], r->cycles_hi = most[1], r->pe_nnz_max = most[2];
  }
  free(nnz), free(out), free(row_parts), free(mark);
  return st->code;
}

int sp_rank_create(wf_run *run, const sp_case *c, bool balance, sp_rank *r, wf_status *st) {
  const wf_decomp *dc = &run->wafer->dc;
  *r = (sp_rank){0};
  if (make_bands(run, c, balance, r, st) != WF_OK) return st->code;
  r->r0 = r->rb[dc->y0], r->r1 = r->rb[dc->y0 + dc->ny];
  r->c0 = r->cb[dc->x0], r->c1 = r->cb[dc->x0 + dc->nx];
  r->xo0 = r->c0 + sdk_part(r->c1 - r->c0, dc->py, dc->cy);
  r->xo1 = r->c0 + sdk_part(r->c1 - r->c0, dc->py, dc->cy + 1);
  r->yo0 = r->r0 + sdk_part(r->r1 - r->r0, dc->px, dc->cx);
  r->yo1 = r->r0 + sdk_part(r->r1 - r->r0, dc->px, dc->cx + 1);
  if (make_block(run, c, r, st) != WF_OK) return st->code;
  r->x = malloc((size_t)(r->c1 - r->c0) * sizeof *r->x + 1);
  r->ypart = malloc((size_t)(r->r1 - r->r0) * sizeof *r->ypart + 1);
  r->y = malloc((size_t)(r->yo1 - r->yo0) * sizeof *r->y + 1);
  r->pieces = malloc(2 * (size_t)(dc->px > dc->py ? dc->px : dc->py) * sizeof *r->pieces);
  wf_status_clear(st);
  if (!r->x || !r->ypart || !r->y || !r->pieces) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the vectors");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  for (long long j = r->xo0; j < r->xo1; j++) r->x[j - r->c0] = sp_x(c, j);
  if (make_plan(run, r, st) != WF_OK) return st->code;
  return count_pes(run, r, st);
}

void sp_rank_free(sp_rank *r) {
  free(r->rb), free(r->cb), free(r->rowptr), free(r->colidx), free(r->val), free(r->x);
  free(r->ypart), free(r->y), free(r->send_off), free(r->recv_off), free(r->send_rows);
  free(r->recv_rows), free(r->send_vals), free(r->recv_vals), free(r->pieces);
  *r = (sp_rank){0};
}
