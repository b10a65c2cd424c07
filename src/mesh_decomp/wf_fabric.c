/* The fabric (wf_fabric.h): the collectives between PEs beyond the halo exchange (reductions,
 * multicasts, segment reductions, all-to-all, irregular neighbour exchange), each timed, its
 * words counted and its wafer cycles modelled. */
#include "wf_fabric.h"

#include "wf_fabric_parts.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"

enum { TAG_DATA = 721, TAG_FAILED = 722 };

/* ---- buffers ---- */

int wf_buffer_reserve(wf_buffer *b, size_t bytes, wf_status *st) {
  if (bytes <= b->cap) return WF_OK;
  size_t cap = bytes + bytes / 2 + 4096;
  char *d = realloc(b->data, cap);
  if (!d) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a %zu-byte fabric message", bytes);
  b->data = d;
  b->cap = cap;
  return WF_OK;
}

int wf_buffer_append(wf_buffer *b, const void *src, size_t bytes, wf_status *st) {
  if (bytes == 0) return WF_OK; /* nothing to copy, and maybe no buffer yet */
  if (wf_buffer_reserve(b, b->len + bytes, st) != WF_OK) return st->code;
  memcpy(b->data + b->len, src, bytes);
  b->len += bytes;
  return WF_OK;
}

void wf_buffer_push(wf_buffer *b, const void *src, size_t bytes) {
  wf_status st = {0};
  if (wf_buffer_append(b, src, bytes, &st) != WF_OK) {
    fprintf(stderr, "wafer: error: %s\n", st.msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

void wf_buffer_free(wf_buffer *b) {
  free(b->data);
  *b = (wf_buffer){0};
}

/* ---- lifecycle and counters ---- */

void wf_fabric_create(wf_fabric *f, const wf_decomp *dc, const wf_grid *grid, const wf_hw *hw) {
  memset(f, 0, sizeof *f);
  f->dc = dc;
  f->grid = grid;
  f->hw = hw;
  f->row_comm = f->col_comm = MPI_COMM_NULL;
  MPI_Comm_dup(dc->comm, &f->swap_comm); /* MPI errors are fatal: wf_mpi.h */
  int keep_x[2] = {1, 0}, keep_y[2] = {0, 1};
  MPI_Cart_sub(dc->comm, keep_x, &f->row_comm);
  MPI_Cart_sub(dc->comm, keep_y, &f->col_comm);
}

void wf_fabric_free(wf_fabric *f) {
  if (f->row_comm != MPI_COMM_NULL) MPI_Comm_free(&f->row_comm);
  if (f->col_comm != MPI_COMM_NULL) MPI_Comm_free(&f->col_comm);
  if (f->swap_comm != MPI_COMM_NULL) MPI_Comm_free(&f->swap_comm);
  wf_buffer_free(&f->send);
  wf_buffer_free(&f->recv);
}

void wf_fabric_count(wf_fabric *f, const wf_fabric_counters *d) {
  wf_fabric_counters *c = &f->c;
  c->ops += d->ops;
  c->collectives += d->collectives;
  c->line_collectives += d->line_collectives;
  c->messages += d->messages;
  c->model_cycles += d->model_cycles;
  c->words_intra += d->words_intra;
  c->words_inter += d->mpi_bytes / 4;
  c->mpi_bytes += d->mpi_bytes;
  c->seconds += d->seconds;
}

void wf_fabric_count_op(wf_fabric *f, wf_fabric_kind kind, long long messages, double t0,
                        double cycles, long long intra_words, long long inter_bytes) {
  wf_fabric_counters d = {.ops = 1, .collectives = kind == KIND_GLOBAL,
                          .line_collectives = kind == KIND_LINE, .messages = messages,
                          .model_cycles = cycles, .words_intra = intra_words,
                          .mpi_bytes = inter_bytes, .seconds = MPI_Wtime() - t0};
  wf_fabric_count(f, &d);
}

void wf_fabric_main_begin(wf_fabric *f) { f->main_start = f->c; }

void wf_fabric_main_end(wf_fabric *f, long long units) {
  const wf_fabric_counters *a = &f->main_start, *b = &f->c;
  wf_fabric_counters *m = &f->main;
  m->ops += b->ops - a->ops;
  m->collectives += b->collectives - a->collectives;
  m->line_collectives += b->line_collectives - a->line_collectives;
  m->messages += b->messages - a->messages;
  m->words_intra += b->words_intra - a->words_intra;
  m->words_inter += b->words_inter - a->words_inter;
  m->mpi_bytes += b->mpi_bytes - a->mpi_bytes;
  m->model_cycles += b->model_cycles - a->model_cycles;
  m->seconds += b->seconds - a->seconds;
  f->main_units += units;
  f->main_start = f->c;
}

wf_fabric_counters wf_fabric_totals(const wf_fabric *f) {
  long long in[4] = {f->c.ops, f->c.words_intra, f->c.words_inter, f->c.mpi_bytes};
  long long out[4];
  MPI_Allreduce(in, out, 4, MPI_LONG_LONG, MPI_SUM, f->dc->comm);
  double t[2] = {f->c.model_cycles, f->c.seconds}, tmax[2];
  MPI_Allreduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, f->dc->comm);
  wf_fabric_counters c = f->c;
  c.words_intra = out[1], c.words_inter = out[2], c.mpi_bytes = out[3];
  c.model_cycles = tmax[0], c.seconds = tmax[1];
  return c;
}

wf_fabric_counters wf_fabric_busiest(const wf_fabric *f, const wf_fabric_counters *c) {
  long long n[7] = {c->ops,      c->collectives,  c->line_collectives, c->messages,
                    c->words_intra, c->words_inter, c->mpi_bytes};
  double t[2] = {c->model_cycles, c->seconds};
  MPI_Allreduce(MPI_IN_PLACE, n, 7, MPI_LONG_LONG, MPI_MAX, f->dc->comm);
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, f->dc->comm);
  return (wf_fabric_counters){.ops = n[0], .collectives = n[1], .line_collectives = n[2],
                              .messages = n[3], .words_intra = n[4], .words_inter = n[5],
                              .mpi_bytes = n[6], .model_cycles = t[0], .seconds = t[1]};
}

/* ---- grid-wide reductions ---- */

static void reduce_common(wf_fabric *f, double *vals, int n, wf_reduce_op op, int all) {
  double t0 = MPI_Wtime();
  MPI_Op mop = op == WF_SUM ? MPI_SUM : MPI_MAX;
  if (all) {
    MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, mop, f->dc->comm);
  } else {
    int root = wf_decomp_owner(f->dc, 0, 0);
    MPI_Reduce(f->dc->rank == root ? MPI_IN_PLACE : vals, vals, n, MPI_DOUBLE, mop, root,
               f->dc->comm);
  }
  /* Every PE but one per block forwards its partial once (twice with the
   * result coming back); one partial per rank crosses to another rank. */
  long long words = (long long)n * 2, pes = (long long)f->dc->nx * f->dc->ny;
  int k = all ? 2 : 1;
  wf_fabric_count_op(f, KIND_GLOBAL, 0, t0, wf_model_reduce_cycles(f->hw, f->grid, n, all),
                     words * (pes - 1) * k, f->dc->rank == 0 ? 0 : (long long)n * 8 * k);
}

void wf_fabric_allreduce(wf_fabric *f, double *vals, int n, wf_reduce_op op) {
  reduce_common(f, vals, n, op, 1);
}

void wf_fabric_reduce(wf_fabric *f, double *vals, int n, wf_reduce_op op) {
  reduce_common(f, vals, n, op, 0);
}

void wf_fabric_allreduce_line(wf_fabric *f, wf_axis axis, double *vals, int n, wf_reduce_op op) {
  double t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, vals, n, MPI_DOUBLE, op == WF_SUM ? MPI_SUM : MPI_MAX,
                axis == WF_ALONG_ROWS ? f->row_comm : f->col_comm);
  wf_fabric_count_op(f, KIND_LINE, 0, t0, 0, 0, 0);
}

void wf_fabric_barrier(wf_fabric *f) {
  double t0 = MPI_Wtime();
  MPI_Barrier(f->dc->comm);
  wf_fabric_count_op(f, KIND_GLOBAL, 0, t0, 0, 0, 0);
}

double wf_fabric_slowest(wf_fabric *f, double seconds) {
  double t0 = MPI_Wtime();
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, f->dc->comm);
  wf_fabric_count_op(f, KIND_GLOBAL, 0, t0, 0, 0, 0);
  return seconds;
}

/* ---- what the line collectives share (wf_fabric_parts.h) ---- */

size_t wf_fabric_block_pe(const wf_decomp *dc, int along_x, int line, int p) {
  return along_x ? (size_t)line * dc->nx + (size_t)p : (size_t)p * dc->nx + (size_t)line;
}

int wf_fabric_reserve(wf_fabric *f, size_t bytes, size_t most, bool both, const char *what,
                      wf_status *st) {
  if (most > INT_MAX)
    return wf_fail(st, WF_ERR_RUNTIME, "%s of %zu bytes: over MPI's int count", what, most);
  wf_status oom = {0};
  if (wf_buffer_reserve(&f->send, bytes, &oom) != WF_OK ||
      (both && wf_buffer_reserve(&f->recv, bytes, &oom) != WF_OK)) {
    fprintf(stderr, "wafer: error: %s: %s\n", what, oom.msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return WF_OK;
}

int wf_fabric_most_lines(const wf_decomp *dc, int along_x) {
  int n = along_x ? dc->pe_ny : dc->pe_nx, parts = along_x ? dc->py : dc->px;
  return (n + parts - 1) / parts;
}

/* ---- reduction of segments along rows or columns ---- */

int wf_fabric_reduce_segments(wf_fabric *f, wf_axis axis, double *block, int n, int root,
                              wf_status *st) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  int n_along = along_x ? dc->pe_nx : dc->pe_ny, parts = along_x ? dc->px : dc->py;
  int lines = along_x ? dc->ny : dc->nx, here = along_x ? dc->nx : dc->ny;
  int root_rank = wf_block_owner(n_along, parts, root), me = along_x ? dc->cx : dc->cy;
  size_t vals = (size_t)lines * (size_t)n;
  wf_status_clear(st);
  size_t most = (size_t)wf_fabric_most_lines(dc, along_x) * (size_t)n * sizeof(double);
  if (wf_fabric_reserve(f, vals * sizeof(double), most, true, "a segment reduction", st) != WF_OK)
    return st->code;
  double *part = (double *)(void *)f->send.data;
  memset(part, 0, vals * sizeof *part);
  for (int l = 0; l < lines; l++)
    for (int p = 0; p < here; p++) {
      const double *seg = block + wf_fabric_block_pe(dc, along_x, l, p) * (size_t)n;
      double *sum = part + (size_t)l * (size_t)n;
      for (int e = 0; e < n; e++) sum[e] += seg[e];
    }
  MPI_Comm comm = along_x ? f->row_comm : f->col_comm;
  /* Not in place: MPICH 4.0's reduce of 16 kB in place crashed (gemv). */
  double *sum = (double *)(void *)f->recv.data;
  MPI_Reduce(part, me == root_rank ? sum : NULL, (int)vals, MPI_DOUBLE, MPI_SUM, root_rank, comm);
  int root_here = root - (along_x ? dc->x0 : dc->y0);
  if (me == root_rank)
    for (int l = 0; l < lines; l++)
      memcpy(block + wf_fabric_block_pe(dc, along_x, l, root_here) * (size_t)n,
             sum + (size_t)l * n, (size_t)n * sizeof *block);
  long long seg_words = 2LL * n; /* doubles */
  wf_fabric_count_op(f, KIND_LINE, 0, t0,
                     wf_model_segment_reduce_cycles(f->hw, f->grid, n_along, root, n),
                     seg_words * lines * (here - 1),
                     me == root_rank ? (long long)(parts - 1) * (long long)vals * 8 : 0);
  return WF_OK;
}

/* ---- all-to-all within rows or columns ---- */

int wf_fabric_alltoall(wf_fabric *f, wf_axis axis, const void *sendv, void *recvv,
                       size_t chunk, wf_status *st) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  const int along_x = axis == WF_ALONG_ROWS;
  const char *send = sendv;
  char *recv = recvv;
  int L = along_x ? dc->pe_nx : dc->pe_ny, parts = along_x ? dc->px : dc->py;
  int lines = along_x ? dc->ny : dc->nx, here = along_x ? dc->nx : dc->ny;
  MPI_Comm comm = along_x ? f->row_comm : f->col_comm;
  size_t total = (size_t)lines * here * (size_t)L * chunk;

  /* the most lines times the most PEs along them (a rank's PEs of its line) */
  size_t most = (size_t)wf_fabric_most_lines(dc, along_x) *
                (size_t)wf_fabric_most_lines(dc, !along_x) * (size_t)L * chunk;
  wf_status_clear(st);
  if (wf_fabric_reserve(f, total, most, true, "an all-to-all", st) != WF_OK) return st->code;
  int *counts = wf_alloc_small(4 * (size_t)parts, sizeof *counts, "an all-to-all's counts");
  int *scount = counts, *sdispl = counts + parts, *rcount = counts + 2 * parts,
      *rdispl = counts + 3 * parts;
  /* Pack for rank r: for each line, each of my PEs, the chunks of r's PEs. */
  size_t off = 0;
  for (int r = 0; r < parts; r++) {
    int rlo, rn;
    wf_block_range(L, parts, r, &rlo, &rn);
    sdispl[r] = (int)off;
    for (int l = 0; l < lines; l++)
      for (int p = 0; p < here; p++) {
        size_t src = (wf_fabric_block_pe(dc, along_x, l, p) * (size_t)L + (size_t)rlo) * chunk;
        memcpy(f->send.data + off, send + src, (size_t)rn * chunk);
        off += (size_t)rn * chunk;
      }
    scount[r] = (int)(off - (size_t)sdispl[r]);
    rcount[r] = (int)((size_t)lines * rn * here * chunk);
    rdispl[r] = r ? rdispl[r - 1] + rcount[r - 1] : 0;
  }
  MPI_Alltoallv(f->send.data, scount, sdispl, MPI_BYTE, f->recv.data, rcount, rdispl, MPI_BYTE,
                comm);
  /* From rank r, in its packing order: line, its PE s, then my PEs p. */
  for (int r = 0; r < parts; r++) {
    int rlo, rn;
    wf_block_range(L, parts, r, &rlo, &rn);
    const char *in = f->recv.data + rdispl[r];
    for (int l = 0; l < lines; l++)
      for (int s = 0; s < rn; s++)
        for (int p = 0; p < here; p++, in += chunk)
          memcpy(recv + (wf_fabric_block_pe(dc, along_x, l, p) * (size_t)L + (size_t)(rlo + s)) *
                            chunk,
                 in, chunk);
  }
  int me = along_x ? dc->cx : dc->cy;
  long long inter = (long long)(total - (size_t)rcount[me]);
  long long intra_words = (long long)(((size_t)rcount[me] - (size_t)lines * here * chunk) / 4);
  free(counts);
  /* a run's fabric count is one figure: the fast reading */
  double cycles = wf_model_alltoall_cycles(f->hw, f->grid, L, wf_model_words(f->hw, chunk)).lo;
  wf_fabric_count_op(f, KIND_LINE, 0, t0, cycles, intra_words, inter);
  return WF_OK;
}

int wf_fabric_alltoall_pieces(wf_fabric *f, wf_axis axis, const wf_piece *send, int nsend,
                              const wf_piece *recv, int nrecv, size_t self_bytes,
                              double pe_chunk_words, wf_status *st) {
  double t0 = MPI_Wtime();
  const int along_x = axis == WF_ALONG_ROWS;
  MPI_Comm comm = along_x ? f->row_comm : f->col_comm;
  /* No agreement between ranks before the exchange (a collective a
   * transpose): the requests are bookkeeping (out of memory ends the job),
   * and a piece over WF_PIECE_MAX is a caller's bug (ff_pencil cuts them). */
  MPI_Request *req = wf_alloc_small((size_t)nsend + (size_t)nrecv + 1, sizeof *req,
                                    "an all-to-all's requests");
  for (int i = 0; i < nsend + nrecv; i++) {
    size_t bytes = i < nsend ? send[i].bytes : recv[i - nsend].bytes;
    if (bytes > WF_PIECE_MAX) {
      fprintf(stderr, "wafer: error: an all-to-all piece of %zu bytes (at most %zu): a bug\n",
              bytes, WF_PIECE_MAX);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  wf_status_clear(st);
  long long inter = 0;
  /* Every receive is posted first; the sends follow a batch at a time, each
   * waited for before the next (it completes as its receivers progress, in
   * their own waits: no cycle). Hundreds of large messages in flight at once
   * ran far slower under Open MPI on one node: a 256^3 FFT's column
   * transpose on 2 ranks 32 ms a transform with every send posted at once,
   * 13 ms in batches of 32 (8: 14 ms). */
  enum { SEND_BATCH = 32 };
  for (int i = 0; i < nrecv; i++) {
    MPI_Irecv(recv[i].data, (int)recv[i].bytes, MPI_BYTE, recv[i].peer, 0, comm, &req[i]);
    inter += (long long)recv[i].bytes;
  }
  MPI_Request *sends = req + nrecv;
  for (int i = 0; i < nsend; i += SEND_BATCH) {
    int n = nsend - i < SEND_BATCH ? nsend - i : SEND_BATCH;
    for (int j = 0; j < n; j++)
      MPI_Isend(send[i + j].data, (int)send[i + j].bytes, MPI_BYTE, send[i + j].peer, 0, comm,
                &sends[j]);
    MPI_Waitall(n, sends, MPI_STATUSES_IGNORE);
  }
  MPI_Waitall(nrecv, req, MPI_STATUSES_IGNORE);
  free(req);
  int L = along_x ? f->dc->pe_nx : f->dc->pe_ny;
  /* a run's fabric count is one figure: the fast reading */
  double cycles = wf_model_alltoall_cycles(f->hw, f->grid, L, pe_chunk_words).lo;
  wf_fabric_count_op(f, KIND_NEIGHBOUR, nsend, t0, cycles, (long long)(self_bytes / 4), inter);
  return WF_OK;
}

/* ---- neighbour exchange of irregular data ---- */

/* The neighbours of a swap toward `side` of `axis`: where this rank sends,
 * and where it receives from. */
static void swap_peers(const wf_decomp *dc, int axis, int side, int *to, int *from) {
  int up = axis == 0 ? WF_E : WF_N, down = axis == 0 ? WF_W : WF_S;
  *to = wf_decomp_neighbor(dc, side ? up : down, true, true);
  *from = wf_decomp_neighbor(dc, side ? down : up, true, true);
}

/* One message each way: a send and a receive of known sizes, counted. */
static void count_swap(wf_fabric *f, int axis, double t0, size_t received, bool self) {
  const wf_decomp *dc = f->dc;
  int face = axis == 0 ? dc->ny : dc->nx;
  long long r = (long long)received;
  wf_fabric_count_op(f, KIND_NEIGHBOUR, self ? 0 : 1, t0,
                     wf_model_exchange_cycles(f->hw, f->grid, (double)r / 4, face),
                     self ? r / 4 : 0, self ? 0 : r);
}

int wf_fabric_exchange(wf_fabric *f, int axis, int side, wf_pack_fn pack, wf_unpack_fn unpack,
                       void *ctx, wf_status *st) {
  double t0 = MPI_Wtime();
  const wf_decomp *dc = f->dc;
  int to, from;
  swap_peers(dc, axis, side, &to, &from);
  /* After an earlier failure this rank still takes part, sending a notice
   * instead of data, so that its partners' calls complete. */
  int rc = st->code;
  f->send.len = 0;
  if (rc == WF_OK) rc = pack(ctx, &f->send, st);
  if (rc == WF_OK && f->send.len > INT_MAX)
    rc = wf_fail(st, WF_ERR_RUNTIME, "a neighbour message of %zu bytes: over MPI's int count",
                 f->send.len);
  if (to == dc->rank) {
    if (rc == WF_OK) rc = unpack(ctx, f->send.data, f->send.len, st);
    count_swap(f, axis, t0, f->send.len, true);
    return rc;
  }
  /* One message: its tag says whether it holds data or a failure notice,
   * and the receiver learns its size from the probe. (A probe, then the
   * receive of what it found: nothing else is received on swap_comm, and
   * a rank makes one exchange at a time. SimGrid 3.32 has no MPI_Mprobe.) */
  MPI_Request sent;
  MPI_Isend(f->send.data, rc == WF_OK ? (int)f->send.len : 0, MPI_BYTE, to,
            rc == WF_OK ? TAG_DATA : TAG_FAILED, f->swap_comm, &sent);
  MPI_Status status;
  MPI_Probe(from, MPI_ANY_TAG, f->swap_comm, &status);
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  /* A receive buffer that cannot be had ends the job: the message is on
   * its way and MPI cannot refuse it (a neighbour list's few MB; Linux
   * overcommits, so this is rarer than the OOM killer). */
  wf_status room = {0};
  if (wf_buffer_reserve(&f->recv, (size_t)bytes, &room) != WF_OK) {
    fprintf(stderr, "wafer: error: %s: ending the job\n", room.msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Recv(f->recv.data, bytes, MPI_BYTE, from, status.MPI_TAG, f->swap_comm, MPI_STATUS_IGNORE);
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  /* A partner's failure is its own to report (wf_status_agree after the
   * caller's exchanges); this rank only skips the data that never came. */
  if (rc == WF_OK && status.MPI_TAG == TAG_DATA) rc = unpack(ctx, f->recv.data, (size_t)bytes, st);
  count_swap(f, axis, t0, (size_t)bytes, false);
  return rc;
}

void wf_fabric_shift(wf_fabric *f, int axis, int side, const void *send, size_t send_bytes,
                     void *recv, size_t recv_bytes) {
  double t0 = MPI_Wtime();
  int to, from;
  swap_peers(f->dc, axis, side, &to, &from);
  if (to == f->dc->rank) {
    if (send_bytes) memcpy(recv, send, send_bytes < recv_bytes ? send_bytes : recv_bytes);
  } else {
    MPI_Sendrecv(send, (int)send_bytes, MPI_BYTE, to, TAG_DATA, recv, (int)recv_bytes, MPI_BYTE,
                 from, TAG_DATA, f->swap_comm, MPI_STATUS_IGNORE);
  }
  count_swap(f, axis, t0, recv_bytes, to == f->dc->rank);
}
