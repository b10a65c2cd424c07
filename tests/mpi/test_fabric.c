/* The fabric's primitives at 1, 2 and 4 ranks against direct computations:
 * multicast of vector segments, reduction of segments along rows and
 * columns, all-to-all within rows and columns (chunks, and a caller's
 * contiguous pieces), the neighbour exchange of
 * irregular data (with a failure on one rank only), rank roles; and the
 * modelled cycles of each against the documented formulas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "wf_io.h"
#include "wf_model.h"
#include "wf_roles.h"

/* A value that names its PE and position. */
static double tag(int gi, int gj, int e) { return 1e4 * gi + 10.0 * gj + 0.001 * e + 0.5; }

static void test_segments(checks *ck, int nx, int ny, int n) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp *dc = &t.dc;
  size_t pes = (size_t)dc->nx * dc->ny;
  double *blk = malloc(pes * (size_t)n * sizeof *blk);
  wf_status st;
  for (int axis = 0; axis < 2; axis++) {
    int len = axis == 0 ? nx : ny;
    int roots[3] = {0, len / 2, len - 1};
    for (int r = 0; r < 3; r++) {
      /* Reduction: the root's segment becomes the sum over its row/column. */
      for (int j = 0; j < dc->ny; j++)
        for (int i = 0; i < dc->nx; i++)
          for (int e = 0; e < n; e++)
            blk[((size_t)j * dc->nx + i) * n + e] = tag(dc->x0 + i, dc->y0 + j, e);
      double before = wf_fabric_totals(&t.fab).model_cycles;
      int rc = wf_fabric_reduce_segments(&t.fab, axis == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS,
                                         blk, n, roots[r], &st);
      CHECK(ck, rc == WF_OK, "reduce_segments: %s", st.msg);
      long bad = 0;
      for (int j = 0; j < dc->ny; j++)
        for (int i = 0; i < dc->nx; i++) {
          int gi = dc->x0 + i, gj = dc->y0 + j;
          bool root = (axis == 0 ? gi : gj) == roots[r];
          for (int e = 0; e < n; e++) {
            double want = 0;
            if (root)
              for (int k = 0; k < len; k++) want += axis == 0 ? tag(k, gj, e) : tag(gi, k, e);
            else
              want = tag(gi, gj, e);
            if (fabs(blk[((size_t)j * dc->nx + i) * n + e] - want) > 1e-9 * fabs(want)) bad++;
          }
        }
      CHECK(ck, bad == 0, "%dx%d reduce %s to %d: %ld bad values", nx, ny, axis ? "columns" : "rows",
            roots[r], bad);
      /* Its model: a tree into the root, hops to the farther end, and at
       * each of its levels (1, 2, 2, 3 levels for 1, 2, 3, 4..7 hops) both
       * sides' n words into an interior root, 2 ramps and an add. */
      int far = roots[r] > len - 1 - roots[r] ? roots[r] : len - 1 - roots[r];
      int streams = (roots[r] > 0) + (roots[r] < len - 1);
      int levels = far == 0 ? 0 : far == 1 ? 1 : far <= 3 ? 2 : far <= 7 ? 3 : far <= 15 ? 4 : 5;
      double want = levels * (streams * n + 4 + 1) + far;
      double got = wf_fabric_totals(&t.fab).model_cycles - before;
      CHECK(ck, fabs(got - want) < 1e-9, "segment reduce model %g cycles, hand count %g", got, want);

      /* Multicast: every PE gets its row's (column's) root segment. */
      for (int j = 0; j < dc->ny; j++)
        for (int i = 0; i < dc->nx; i++)
          for (int e = 0; e < n; e++)
            blk[((size_t)j * dc->nx + i) * n + e] = tag(dc->x0 + i, dc->y0 + j, e);
      rc = axis == 0 ? wf_fabric_bcast_row(&t.fab, blk, (size_t)n * sizeof(double), roots[r], &st)
                     : wf_fabric_bcast_col(&t.fab, blk, (size_t)n * sizeof(double), roots[r], &st);
      CHECK(ck, rc == WF_OK, "multicast: %s", st.msg);
      bad = 0;
      for (int j = 0; j < dc->ny; j++)
        for (int i = 0; i < dc->nx; i++)
          for (int e = 0; e < n; e++) {
            double want = axis == 0 ? tag(roots[r], dc->y0 + j, e) : tag(dc->x0 + i, roots[r], e);
            if (blk[((size_t)j * dc->nx + i) * n + e] != want) bad++;
          }
      CHECK(ck, bad == 0, "%dx%d multicast of %d-value segments along %s from %d: %ld bad", nx,
            ny, n, axis ? "columns" : "rows", roots[r], bad);
    }
  }
  free(blk);
  test_wafer_free(&t);
}

/* Chunk k of PE (i, j) for the k-th PE of its row (axis 0) or column. */
static double chunk_val(int gi, int gj, int k, int e) { return 1e6 * gi + 1e3 * gj + k + 1e-3 * e; }

static void test_alltoall(checks *ck, int nx, int ny, int cw) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp *dc = &t.dc;
  for (int axis = 0; axis < 2; axis++) {
    int L = axis == 0 ? nx : ny;
    size_t n = (size_t)dc->nx * dc->ny * (size_t)L * (size_t)cw;
    double *send = malloc(n * sizeof *send), *recv = malloc(n * sizeof *recv);
    for (int j = 0; j < dc->ny; j++)
      for (int i = 0; i < dc->nx; i++)
        for (int k = 0; k < L; k++)
          for (int e = 0; e < cw; e++)
            send[(((size_t)j * dc->nx + i) * L + k) * cw + e] = chunk_val(dc->x0 + i, dc->y0 + j, k, e);
    wf_status st;
    double before = wf_fabric_totals(&t.fab).model_cycles;
    int rc = wf_fabric_alltoall(&t.fab, axis == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS, send, recv,
                                (size_t)cw * sizeof(double), &st);
    CHECK(ck, rc == WF_OK, "alltoall: %s", st.msg);
    long bad = 0;
    for (int j = 0; j < dc->ny; j++)
      for (int i = 0; i < dc->nx; i++) {
        int gi = dc->x0 + i, gj = dc->y0 + j;
        for (int k = 0; k < L; k++) /* chunk k came from the k-th PE, addressed to me */
          for (int e = 0; e < cw; e++) {
            double want = axis == 0 ? chunk_val(k, gj, gi, e) : chunk_val(gi, k, gj, e);
            if (recv[(((size_t)j * dc->nx + i) * L + k) * cw + e] != want) bad++;
          }
      }
    CHECK(ck, bad == 0, "%dx%d all-to-all along %s, %d doubles a chunk: %ld bad", nx, ny,
          axis ? "columns" : "rows", cw, bad);
    /* Model (the fast reading): L - 1 senders in turn, each L - 1 chunks
     * of 2cw words, 2 control words, 2 ramps and a hop; at least a core's
     * chunks out both ways (one way in a line of 2). */
    double words = 2.0 * cw;
    double want = fmax((L - 1) * ((L - 1) * words + 2 + 4 + 1), (L > 2 ? 2 : 1) * (L - 1) * words);
    double got = wf_fabric_totals(&t.fab).model_cycles - before;
    CHECK(ck, fabs(got - want) < 1e-9, "all-to-all model %g cycles, hand count %g", got, want);
    free(send), free(recv);
  }
  test_wafer_free(&t);
}

/* The all-to-all of contiguous pieces: rank `from` of a line sends rank
 * `to` 1 + (from + to) % 3 pieces, piece q of 1 + q + from values naming all
 * four; self_bytes and the model's chunk as a caller gives them. */
static int npieces(int from, int to) { return 1 + (from + to) % 3; }
static int piece_len(int from, int q) { return 1 + q + from; }
static double piece_val(int from, int to, int q, int e) { return 1e6 * from + 1e4 * to + 100 * q + e; }

static void test_pieces(checks *ck, int nx, int ny) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp *dc = &t.dc;
  for (int axis = 0; axis < 2; axis++) {
    int parts = axis == 0 ? dc->px : dc->py, me = axis == 0 ? dc->cx : dc->cy;
    int ns = 0, nr = 0, vals = 0;
    for (int k = 0; k < parts; k++)
      for (int q = 0; k != me && q < npieces(me, k); q++) ns++, vals += piece_len(me, q);
    for (int k = 0; k < parts; k++)
      for (int q = 0; k != me && q < npieces(k, me); q++) nr++, vals += piece_len(k, q);
    wf_piece *send = malloc((size_t)(ns + 1) * sizeof *send);
    wf_piece *recv = malloc((size_t)(nr + 1) * sizeof *recv);
    double *buf = malloc((size_t)(vals + 1) * sizeof *buf), *at = buf;
    ns = nr = 0;
    for (int k = 0; k < parts; k++)
      for (int q = 0; k != me && q < npieces(me, k); q++) {
        int n = piece_len(me, q);
        for (int e = 0; e < n; e++) at[e] = piece_val(me, k, q, e);
        send[ns++] = (wf_piece){k, at, (size_t)n * sizeof *at};
        at += n;
      }
    double *got = at;
    for (int k = 0; k < parts; k++)
      for (int q = 0; k != me && q < npieces(k, me); q++) {
        int n = piece_len(k, q);
        for (int e = 0; e < n; e++) at[e] = -1;
        recv[nr++] = (wf_piece){k, at, (size_t)n * sizeof *at};
        at += n;
      }
    wf_fabric_counters before = wf_fabric_totals(&t.fab);
    wf_status st;
    int rc = wf_fabric_alltoall_pieces(&t.fab, axis == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS, send,
                                       ns, recv, nr, 8 * (size_t)(me + 1), 3.0, &st);
    CHECK(ck, rc == WF_OK, "alltoall_pieces: %s", st.msg);
    long bad = 0, bytes = 0;
    at = got;
    for (int k = 0; k < parts; k++)
      for (int q = 0; k != me && q < npieces(k, me); q++) {
        for (int e = 0; e < piece_len(k, q); e++, at++) bad += *at != piece_val(k, me, q, e);
        bytes += 8L * piece_len(k, q);
      }
    CHECK(ck, bad == 0, "%dx%d pieces along %s: %ld bad values", nx, ny, axis ? "columns" : "rows",
          bad);
    /* Counters: what came in from other ranks, and each rank's own part. */
    long long sums[2] = {bytes / 4, 2 * (me + 1)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_LONG_LONG, MPI_SUM, dc->comm);
    wf_fabric_counters after = wf_fabric_totals(&t.fab);
    CHECK(ck, after.words_inter - before.words_inter == sums[0] &&
                  after.words_intra - before.words_intra == sums[1],
          "pieces counted %lld words between ranks and %lld inside, direct count %lld and %lld",
          after.words_inter - before.words_inter, after.words_intra - before.words_intra, sums[0],
          sums[1]);
    int L = axis == 0 ? nx : ny;
    double want = fmax((L - 1) * ((L - 1) * 3.0 + 2 + 4 + 1), (L > 2 ? 2 : 1) * (L - 1) * 3.0);
    CHECK(ck, fabs(after.model_cycles - before.model_cycles - want) < 1e-9,
          "pieces model %g cycles, hand count %g", after.model_cycles - before.model_cycles, want);
    free(send), free(recv), free(buf);
  }
  test_wafer_free(&t);
}

/* The neighbour exchange: each rank sends a message whose length depends on
 * its rank and the direction (0 bytes for some), naming sender and side. */
typedef struct ring {
  int rank, axis, side, from;
  long bad, got;
  bool fail; /* make this rank's pack fail */
} ring;

static int msg_len(int rank, int axis, int side) { return (rank * 7 + axis * 3 + side) % 5; }

static int ring_pack(void *ctx, wf_buffer *out, wf_status *st) {
  ring *r = ctx;
  if (r->fail) return wf_fail(st, WF_ERR_RUNTIME, "pack failed on rank %d, on purpose", r->rank);
  for (int k = 0; k < msg_len(r->rank, r->axis, r->side); k++) {
    int v[3] = {r->rank, r->axis * 2 + r->side, k};
    if (wf_buffer_append(out, v, sizeof v, st) != WF_OK) return st->code;
  }
  return WF_OK;
}

static int ring_unpack(void *ctx, const char *data, size_t bytes, wf_status *st) {
  (void)st;
  ring *r = ctx;
  size_t n = bytes / (3 * sizeof(int));
  r->got = (long)n;
  if (n != (size_t)msg_len(r->from, r->axis, r->side)) r->bad++;
  for (size_t k = 0; k < n; k++) {
    int v[3];
    memcpy(v, data + k * sizeof v, sizeof v);
    if (v[0] != r->from || v[1] != r->axis * 2 + r->side || v[2] != (int)k) r->bad++;
  }
  return WF_OK;
}

static void test_exchange(checks *ck, int nx, int ny) {
  test_wafer t;
  if (test_wafer_create(ck, &t, nx, ny) != 0) return;
  const wf_decomp *dc = &t.dc;
  wf_status st;
  for (int axis = 0; axis < 2; axis++)
    for (int side = 0; side < 2; side++) {
      /* The sender is the neighbour on the other side (periodic). */
      int dir = axis == 0 ? (side == 0 ? WF_E : WF_W) : (side == 0 ? WF_N : WF_S);
      ring r = {.rank = dc->rank, .axis = axis, .side = side,
                .from = wf_decomp_neighbor(dc, dir, true, true)};
      wf_fabric_counters before = t.fab.c;
      wf_status_clear(&st);
      int rc = wf_fabric_exchange(&t.fab, axis, side, ring_pack, ring_unpack, &r, &st);
      CHECK(ck, rc == WF_OK, "exchange: %s", st.msg);
      CHECK(ck, r.bad == 0, "exchange axis %d side %d: %ld bad values from rank %d", axis, side,
            r.bad, r.from);
      /* Counted: bytes from another rank as MPI bytes, from itself as words inside. */
      long long bytes = 12LL * msg_len(r.from, axis, side);
      bool self = r.from == dc->rank;
      CHECK(ck, t.fab.c.mpi_bytes - before.mpi_bytes == (self ? 0 : bytes) &&
                    t.fab.c.words_intra - before.words_intra == (self ? bytes / 4 : 0),
            "exchange counters: %lld MPI bytes, %lld words inside for %lld bytes",
            t.fab.c.mpi_bytes - before.mpi_bytes, t.fab.c.words_intra - before.words_intra, bytes);
      /* One message to another rank, none to itself; no collective. */
      CHECK(ck, t.fab.c.messages - before.messages == (self ? 0 : 1) &&
                    t.fab.c.collectives == before.collectives,
            "exchange: %lld messages, %lld collectives counted",
            t.fab.c.messages - before.messages, t.fab.c.collectives - before.collectives);
    }
  /* A pack that fails on the last rank only: that rank returns its error,
   * its partner skips the unpack (nothing came), the others succeed; one
   * agreement after gives every rank the error. */
  int last = dc->nranks - 1;
  ring r = {.rank = dc->rank, .axis = 0, .side = 1,
            .from = wf_decomp_neighbor(dc, WF_W, true, true), .fail = dc->rank == last};
  wf_status_clear(&st);
  int rc = wf_fabric_exchange(&t.fab, 0, 1, ring_pack, ring_unpack, &r, &st);
  CHECK(ck, (dc->rank == last) == (rc == WF_ERR_RUNTIME), "rank %d returned %d", dc->rank, rc);
  CHECK(ck, r.from != last || r.got == 0, "rank %d unpacked %ld from a failed pack", dc->rank, r.got);
  /* A rank with an error already still takes part (its partner's call completes). */
  ring again = {.rank = dc->rank, .axis = 0, .side = 1, .from = r.from};
  rc = wf_fabric_exchange(&t.fab, 0, 1, ring_pack, ring_unpack, &again, &st);
  CHECK(ck, (dc->rank == last) == (rc == WF_ERR_RUNTIME) && again.bad == 0,
        "after a failure: rank %d returned %d, %ld bad", dc->rank, rc, again.bad);
  wf_status_agree(dc->comm, &st);
  CHECK(ck, st.code == WF_ERR_RUNTIME && strstr(st.msg, "on purpose"),
        "a failure on one rank reaches every rank: rc %d, '%s'", st.code, st.msg);
  test_wafer_free(&t);
}

static void test_roles(checks *ck) {
  int n, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  wf_roles r;
  wf_status st;
  /* Too many: no wafer rank left. */
  CHECK(ck, wf_roles_split(&r, MPI_COMM_WORLD, n, 0, &st) == WF_ERR_INPUT, "all MemoryX accepted");
  wf_roles_free(&r);
  int mx = n >= 2 ? 1 : 0, sx = n >= 4 ? 1 : 0;
  CHECK(ck, wf_roles_split(&r, MPI_COMM_WORLD, mx, sx, &st) == WF_OK, "roles: %s", st.msg);
  wf_role want = rank < n - mx - sx ? WF_ROLE_WAFER : rank < n - sx ? WF_ROLE_MEMORYX : WF_ROLE_SWARMX;
  int size;
  MPI_Comm_size(r.role_comm, &size);
  CHECK(ck, r.role == want && size == r.count[want], "rank %d: role %s of %d, wanted %s", rank,
        wf_role_name(r.role), size, wf_role_name(want));
  /* The PE grid on the wafer ranks alone: a grid-wide sum over them. */
  if (r.role == WF_ROLE_WAFER) {
    wf_decomp dc;
    wf_grid g;
    wf_fabric fab;
    int rc = wf_decomp_create(&dc, r.role_comm, 6, 5, 0, 0, &st);
    if (rc == WF_OK) rc = wf_grid_create(&g, 6, 5, 0, NULL, "", &st);
    if (rc == WF_OK) wf_fabric_create(&fab, &dc, &g, wf_hw_preset("wse2"));
    CHECK(ck, rc == WF_OK, "wafer on the sub-communicator: %s", st.msg);
    if (rc == WF_OK) {
      double pes = (double)dc.nx * dc.ny;
      wf_fabric_allreduce(&fab, &pes, 1, WF_SUM);
      CHECK(ck, pes == 30 && dc.nranks == r.count[WF_ROLE_WAFER], "PE grid over %d wafer ranks: %g PEs",
            dc.nranks, pes);
      wf_fabric_free(&fab);
      wf_grid_free(&g);
      wf_decomp_free(&dc);
    }
  }
  wf_roles_free(&r);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  test_segments(&ck, 7, 5, 3);
  test_segments(&ck, 16, 9, 1);
  test_alltoall(&ck, 7, 5, 2);
  test_alltoall(&ck, 8, 8, 1);
  test_pieces(&ck, 7, 5);
  test_exchange(&ck, 7, 5);
  test_exchange(&ck, 12, 12);
  test_roles(&ck);
  return checks_finish(&ck, "test_fabric");
}
