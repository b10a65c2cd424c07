/* The pencil FFT over the PE grid (ff_pencil.h). */
#include "ff_pencil.h"

#include <complex.h>
#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

#include "ff_model.h"
#include "wf_memory.h"
#include "st_mesh.h"
#include "wf_signal.h"

MPI_Datatype ff_mpi_type(ff_prec prec) {
  return prec == FF_SINGLE ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX;
}

/* ---- FFTW plans, either precision ---- */

/* In-place transforms along `rank` axes, batched over `howmany` others:
 * lengths and the input's and output's strides (they differ only where
 * real values sit in place of complex ones: r2c, c2r). */
typedef struct axes {
  int rank, howmany;
  ptrdiff_t n[3], is[3], os[3];
  ptrdiff_t hn[3], his[3], hos[3];
} axes;

typedef enum { PLAN_FORWARD, PLAN_BACKWARD, PLAN_R2C, PLAN_C2R } plan_kind;

/* FFTW's guru interface, either precision. */
static void *plan_axes(ff_prec prec, const axes *ax, void *a, plan_kind kind, unsigned flags) {
  int sign = kind == PLAN_BACKWARD ? FFTW_BACKWARD : FFTW_FORWARD;
  if (prec == FF_SINGLE) {
    fftwf_iodim64 d[3], h[3];
    for (int i = 0; i < ax->rank; i++) d[i] = (fftwf_iodim64){ax->n[i], ax->is[i], ax->os[i]};
    for (int i = 0; i < ax->howmany; i++) h[i] = (fftwf_iodim64){ax->hn[i], ax->his[i], ax->hos[i]};
    if (kind == PLAN_R2C)
      return fftwf_plan_guru64_dft_r2c(ax->rank, d, ax->howmany, h, a, a, flags);
    if (kind == PLAN_C2R)
      return fftwf_plan_guru64_dft_c2r(ax->rank, d, ax->howmany, h, a, a, flags);
    return fftwf_plan_guru64_dft(ax->rank, d, ax->howmany, h, a, a, sign, flags);
  }
  fftw_iodim64 d[3], h[3];
  for (int i = 0; i < ax->rank; i++) d[i] = (fftw_iodim64){ax->n[i], ax->is[i], ax->os[i]};
  for (int i = 0; i < ax->howmany; i++) h[i] = (fftw_iodim64){ax->hn[i], ax->his[i], ax->hos[i]};
  if (kind == PLAN_R2C) return fftw_plan_guru64_dft_r2c(ax->rank, d, ax->howmany, h, a, a, flags);
  if (kind == PLAN_C2R) return fftw_plan_guru64_dft_c2r(ax->rank, d, ax->howmany, h, a, a, flags);
  return fftw_plan_guru64_dft(ax->rank, d, ax->howmany, h, a, a, sign, flags);
}

void ff_fftw_execute(ff_prec prec, void *plan) {
  if (!plan) return;
  if (prec == FF_SINGLE)
    fftwf_execute(plan);
  else
    fftw_execute(plan);
}

void ff_fftw_destroy(ff_prec prec, void *plan) {
  if (!plan) return;
  if (prec == FF_SINGLE)
    fftwf_destroy_plan(plan);
  else
    fftw_destroy_plan(plan);
}

/* Arrays of 2 MiB or more are backed by transparent huge pages where the
 * kernel allows it (madvise mode is Debian's default): the strided passes
 * along x and y touch a new 4 KiB page at almost every element otherwise.
 * Measured here at 256^3: 7% off a 3D transform. */
static void *alloc_array(size_t cells, size_t elem) {
  size_t bytes = cells * elem;
  if (bytes < (2u << 20)) return fftw_malloc(bytes ? bytes : elem);
  return wf_alloc_large(bytes);
}

static void free_array(void *a, size_t cells, size_t elem) {
  (cells * elem < (2u << 20) ? fftw_free : free)(a);
}

/* ---- boxes ---- */

/* The boxes of rank (cx, cy) in the three stages (ff_pencil.h's table),
 * all stored [y][x][z]. Stage C's y-lines then sit at a stride of the
 * box's x-z plane, and FFTW runs its y transforms across that plane's
 * contiguous cells at once (measured here at 128 x 256 x 256: 34 ms,
 * against 46 with the y-lines at stride nz in [x][y][z]). */
static void stage_boxes(const int n[3], const wf_decomp *dc, int cx, int cy, ff_box b[3]) {
  int xlo, xn, ylo, yn, zlo, zn, cxlo, cxn;
  st_rank_columns(n[0], dc->pe_nx, dc->px, cx, &xlo, &xn);
  st_rank_columns(n[1], dc->pe_ny, dc->py, cy, &ylo, &yn);
  st_rank_columns(n[2], dc->pe_nx, dc->px, cx, &zlo, &zn);
  st_rank_columns(n[0], dc->pe_ny, dc->py, cy, &cxlo, &cxn);
  b[0] = (ff_box){xlo, xn, ylo, yn, 0, n[2], FF_YXZ};
  b[1] = (ff_box){0, n[0], ylo, yn, zlo, zn, FF_YXZ};
  b[2] = (ff_box){cxlo, cxn, 0, n[1], zlo, zn, FF_YXZ};
}

/* The part of `whole` (an array stored as box `whole`) inside box `part`,
 * as an MPI type over that array. Its elements come in the global order
 * (y, then x, then z), whatever the array's order: two ranks whose arrays
 * are stored differently still agree element by element, and the
 * all-to-all transposes as it moves. */
static void sub_box_type(const ff_box *whole, const ff_box *part, MPI_Datatype elem,
                         MPI_Datatype *t) {
  MPI_Aint lb, esize;
  MPI_Type_get_extent(elem, &lb, &esize);
  MPI_Aint sz = esize, sx = (MPI_Aint)whole->nz * esize, sy = sx * whole->nx;
  if (whole->order == FF_XYZ) sy = sx, sx = sy * whole->ny;
  MPI_Datatype z, zx, zxy;
  int x0 = part->x0 - whole->x0, y0 = part->y0 - whole->y0, z0 = part->z0 - whole->z0;
  MPI_Aint first = y0 * sy + x0 * sx + z0 * sz;
  MPI_Type_contiguous(part->nz, elem, &z); /* MPI errors are fatal: wf_mpi.h */
  MPI_Type_create_hvector(part->nx, 1, sx, z, &zx);
  MPI_Type_create_hvector(part->ny, 1, sy, zx, &zxy);
  int one = 1;
  MPI_Type_create_struct(1, &one, &first, &zxy, t);
  MPI_Type_commit(t);
  MPI_Type_free(&z), MPI_Type_free(&zx), MPI_Type_free(&zxy);
}

static bool intersect(const ff_box *a, const ff_box *b, ff_box *out) {
  int lo[3] = {a->x0 > b->x0 ? a->x0 : b->x0, a->y0 > b->y0 ? a->y0 : b->y0,
               a->z0 > b->z0 ? a->z0 : b->z0};
  int hi[3] = {a->x0 + a->nx < b->x0 + b->nx ? a->x0 + a->nx : b->x0 + b->nx,
               a->y0 + a->ny < b->y0 + b->ny ? a->y0 + a->ny : b->y0 + b->ny,
               a->z0 + a->nz < b->z0 + b->nz ? a->z0 + a->nz : b->z0 + b->nz};
  *out = (ff_box){lo[0], hi[0] - lo[0], lo[1], hi[1] - lo[1], lo[2], hi[2] - lo[2], FF_YXZ};
  return out->nx > 0 && out->ny > 0 && out->nz > 0;
}

/* ---- transposes ---- */

/* Whether each y row of `part` (cells inside box b, stored [y][x][z]) is
 * one contiguous block of b's array, and whether the whole part is. */
static bool rows_contiguous(const ff_box *b, const ff_box *part) {
  return part->nz == b->nz || part->nx == 1;
}

static bool contiguous(const ff_box *b, const ff_box *part) {
  return rows_contiguous(b, part) && (part->ny == 1 || (part->nx == b->nx && part->nz == b->nz));
}

/* The exchange of the transpose from stage s to s + 1 (0: within this
 * rank's row of ranks, 1: its column), from every rank's boxes of that line. */
static int line_exchange(const ff_plan *p, const wf_decomp *dc, int s, ff_exchange *x) {
  int parts = s == 0 ? dc->px : dc->py, me = s == 0 ? dc->cx : dc->cy;
  *x = (ff_exchange){.parts = parts, .me = me};
  ff_box *from = malloc(2 * (size_t)parts * sizeof *from);
  x->peer = calloc((size_t)parts, sizeof *x->peer);
  if (!from || !x->peer) {
    free(from);
    return -1;
  }
  ff_box *to = from + parts;
  for (int k = 0; k < parts; k++) {
    ff_box b[3];
    stage_boxes(p->nc, dc, s == 0 ? k : dc->cx, s == 0 ? dc->cy : k, b);
    from[k] = b[s], to[k] = b[s + 1];
  }
  int rc = 0;
  for (int k = 0; k < parts && rc == 0; k++) {
    ff_peer_part *q = &x->peer[k];
    /* Every pair of a line shares cells: bricks tile the line's axis. */
    if (!intersect(&from[me], &to[k], &q->send) || !intersect(&from[k], &to[me], &q->recv))
      rc = -1;
    else if (k == me)
      x->self = q->send;
    /* Both sides cut a part alike: whole only where it is whole on both. */
    q->send_whole = contiguous(&from[me], &q->send) && contiguous(&to[k], &q->send);
    q->recv_whole = contiguous(&from[k], &q->recv) && contiguous(&to[me], &q->recv);
  }
  free(from);
  return rc;
}

/* The messages of a part of `rows` y rows of `row_bytes`: one if both sides
 * hold it whole, else one a row, each cut at WF_PIECE_MAX. Written to `out`
 * (counted only, when NULL), the first at `first`, rows `stride` apart. */
static int cut(wf_piece *out, int peer, char *first, size_t row_bytes, size_t stride, int rows,
               bool whole) {
  size_t seg = whole ? row_bytes * (size_t)rows : row_bytes;
  int nseg = whole ? 1 : rows, n = 0;
  for (int r = 0; r < nseg; r++)
    for (size_t o = 0; o < seg; o += WF_PIECE_MAX, n++) {
      size_t bytes = seg - o < WF_PIECE_MAX ? seg - o : WF_PIECE_MAX;
      if (out) out[n] = (wf_piece){peer, first + (size_t)r * stride + o, bytes};
    }
  return n;
}

/* Whether a part not whole on both sides moves packed in one message: its
 * rows are short (both sides see the same part, so they agree). A message
 * a row suits long rows (one copy each, CMA on a node); at scale the rows
 * are short and that would be thousands of tiny messages a transpose. */
static bool packs_rows(const ff_plan *p, const ff_box *part, bool whole) {
  return !whole && (size_t)part->nx * part->nz * p->elem < ((size_t)64 << 10);
}

/* Bytes of a part that moves through a packed copy on this side (its rows
 * are not contiguous in box b, or it packs its rows). */
static size_t packed_bytes(const ff_plan *p, const ff_box *b, const ff_box *part, bool whole) {
  bool direct = whole || (rows_contiguous(b, part) && !packs_rows(p, part, whole));
  return direct ? 0 : ff_box_cells(part) * p->elem;
}

/* The messages of exchange x and the bytes it packs, forward: the parts
 * sent out of box `sb` and received into box `rb` (backward, the same
 * parts go the other way: the same counts). */
static void exchange_size(const ff_plan *p, const ff_exchange *x, const ff_box *sb,
                          const ff_box *rb, int *pieces, size_t *packed) {
  *pieces = 0, *packed = 0;
  for (int k = 0; k < x->parts; k++) {
    if (k == x->me) continue;
    const ff_peer_part *q = &x->peer[k];
    size_t elem = p->elem;
    *pieces += cut(NULL, k, NULL, (size_t)q->send.nx * q->send.nz * elem, 0, q->send.ny,
                   q->send_whole || packs_rows(p, &q->send, q->send_whole));
    *pieces += cut(NULL, k, NULL, (size_t)q->recv.nx * q->recv.nz * elem, 0, q->recv.ny,
                   q->recv_whole || packs_rows(p, &q->recv, q->recv_whole));
    *packed += packed_bytes(p, sb, &q->send, q->send_whole) +
               packed_bytes(p, rb, &q->recv, q->recv_whole);
  }
}

/* ---- plan ---- */

int ff_check_sizes(const int n[3], int pe_nx, int pe_ny, int dims, bool r2c, wf_status *st) {
  wf_status_clear(st);
  if (dims < 1 || dims > 3)
    return wf_fail(st, WF_ERR_INPUT, "FFT dimensions must be 1, 2 or 3, not %d", dims);
  if (n[0] < 1 || n[1] < 1 || n[2] < 1)
    return wf_fail(st, WF_ERR_INPUT, "FFT of %dx%dx%d: every size must be at least 1", n[0], n[1],
                   n[2]);
  if (r2c && n[2] < 2)
    return wf_fail(st, WF_ERR_INPUT, "real-to-complex FFT of %dx%dx%d: nz must be at least 2", n[0],
                   n[1], n[2]);
  if (n[0] < pe_nx || n[1] < pe_ny)
    return wf_fail(st, WF_ERR_INPUT,
                   "FFT of %dx%dx%d on a %dx%d PE grid: nx and ny must be at least the PE grid's "
                   "columns and rows (one z-pencil per PE at least)",
                   n[0], n[1], n[2], pe_nx, pe_ny);
  int nz = r2c ? n[2] / 2 + 1 : n[2];
  if (dims >= 2 && nz < pe_nx)
    return wf_fail(st, WF_ERR_INPUT,
                   "FFT of %dx%dx%d on a %dx%d PE grid: %s must be at least the PE grid's %d "
                   "columns (the transpose within PE rows splits z over them)",
                   n[0], n[1], n[2], pe_nx, pe_ny, r2c ? "nz/2 + 1 (real input)" : "nz", pe_nx);
  if (dims == 3 && n[0] < pe_ny)
    return wf_fail(st, WF_ERR_INPUT,
                   "FFT of %dx%dx%d on a %dx%d PE grid: nx must be at least the PE grid's %d rows "
                   "(the transpose within PE columns splits x over them)",
                   n[0], n[1], n[2], pe_nx, pe_ny, pe_ny);
  return WF_OK;
}

/* Whether the transpose from stage s to s + 1 moves data between ranks. */
static bool moves(const ff_plan *p, int s) {
  return s == 0 ? p->row.peer != NULL : p->col.peer != NULL;
}

/* The FFTW plans of stages first..last, between which nothing moves: one
 * multi-dimensional plan over their axes (z for A, x for B, y for C) on
 * the shared array, batched over the others. A length-1 axis is skipped
 * (its DFT is the identity). The forward plan is kept at `first`, the
 * backward one at `last`, where the loops of ff_execute meet them. */
static int plan_group(ff_plan *p, int first, int last, unsigned flags) {
  const ff_box *b = &p->box[first];
  bool real = first == 0 && p->r2c; /* the group starts from real data */
  /* Axes y, x, z: stage C's, B's and A's, strides of the box's [y][x][z].
   * The real array sits in place of the complex one: its strides are twice
   * the complex ones, but along z. */
  const ptrdiff_t len[3] = {b->ny, b->nx, real ? p->n[2] : b->nz};
  const ptrdiff_t stride[3] = {(ptrdiff_t)b->nx * b->nz, b->nz, 1};
  const ptrdiff_t rstride[3] = {2 * stride[0], 2 * stride[1], 1};
  const int stage_of_axis[3] = {2, 1, 0};
  axes fwd = {0}, bwd;
  for (int a = 0; a < 3; a++) {
    /* z is the halved axis of a real transform: listed last, even if 1 long. */
    if (len[a] == 1 && !(real && a == 2)) continue;
    ptrdiff_t in = real ? rstride[a] : stride[a], out = stride[a];
    int s = stage_of_axis[a];
    if (s >= first && s <= last) {
      int k = fwd.rank++;
      fwd.n[k] = len[a], fwd.is[k] = in, fwd.os[k] = out;
    } else {
      int k = fwd.howmany++;
      fwd.hn[k] = len[a], fwd.his[k] = in, fwd.hos[k] = out;
    }
  }
  if (fwd.rank == 0) return 0;
  /* Backward: the same axes, output and input swapped. */
  bwd = fwd;
  for (int k = 0; k < 3; k++) {
    bwd.is[k] = fwd.os[k], bwd.os[k] = fwd.is[k];
    bwd.his[k] = fwd.hos[k], bwd.hos[k] = fwd.his[k];
  }
  p->fwd[first] = plan_axes(p->prec, &fwd, p->data[first], real ? PLAN_R2C : PLAN_FORWARD, flags);
  p->bwd[last] = plan_axes(p->prec, &bwd, p->data[first], real ? PLAN_C2R : PLAN_BACKWARD, flags);
  return p->fwd[first] && p->bwd[last] ? 0 : -1;
}

int ff_plan_create(ff_plan *p, wf_fabric *fab, const int n[3], const ff_opts *o, wf_status *st) {
  const wf_decomp *dc = fab->dc;
  memset(p, 0, sizeof *p);
  wf_status_clear(st);
  if (ff_check_sizes(n, dc->pe_nx, dc->pe_ny, o->dims, o->real_input, st) != WF_OK) return st->code;
  p->prec = o->prec;
  p->elem = o->prec == FF_SINGLE ? sizeof(float complex) : sizeof(double complex);
  memcpy(p->n, n, sizeof p->n);
  memcpy(p->nc, n, sizeof p->nc);
  p->r2c = o->real_input;
  if (p->r2c) p->nc[2] = n[2] / 2 + 1;
  p->dims = p->stages = o->dims;
  p->fab = fab;
  stage_boxes(p->nc, dc, dc->cx, dc->cy, p->box);

  /* Arrays: stage A in buf[0]; a transpose that crosses ranks moves the
   * data to the other buffer, one that does not leaves it where it is. */
  bool row_moves = p->stages >= 2 && dc->px > 1, col_moves = p->stages >= 3 && dc->py > 1;
  size_t cells = 0;
  for (int s = 0; s < p->stages; s++)
    if (ff_box_cells(&p->box[s]) > cells) cells = ff_box_cells(&p->box[s]);
  p->buf_cells = cells;
  p->buf[0] = alloc_array(cells, p->elem);
  if (row_moves || col_moves) p->buf[1] = alloc_array(cells, p->elem);
  int failed = !p->buf[0] || ((row_moves || col_moves) && !p->buf[1]);
  p->data[0] = p->buf[0];
  p->data[1] = row_moves ? p->buf[1] : p->data[0];
  p->data[2] = col_moves ? (p->data[1] == p->buf[0] ? p->buf[1] : p->buf[0]) : p->data[1];

  if (!failed && row_moves) failed = line_exchange(p, dc, 0, &p->row) != 0;
  if (!failed && col_moves) failed = line_exchange(p, dc, 1, &p->col) != 0;
  /* Room for each transpose's messages and the parts it packs. */
  for (int s = 0; !failed && s < 2; s++) {
    ff_exchange *x = s == 0 ? &p->row : &p->col;
    if (!x->peer) continue;
    size_t packed;
    exchange_size(p, x, &p->box[s], &p->box[s + 1], &x->npieces, &packed);
    x->pieces = malloc(((size_t)x->npieces + 1) * sizeof *x->pieces);
    failed = !x->pieces;
    if (packed > p->stage_bytes) p->stage_bytes = packed;
  }
  if (!failed && p->stage_bytes > 0) {
    p->stage = alloc_array(p->stage_bytes, 1);
    failed = !p->stage;
  }
  ff_model m =
      ff_model_transform(fab->hw, fab->grid, dc->pe_nx, dc->pe_ny, p->nc, p->dims, o->wafer_prec);
  p->row_words = m.row_words, p->col_words = m.col_words;
  /* FFTW's planner cannot be interrupted: a signal is looked for between plans. */
  int any[2] = {failed, 0}; /* failed, a signal */
  for (int first = 0, s = 0; !any[0] && !any[1] && s < p->stages; s++)
    if (s == p->stages - 1 || moves(p, s)) {
      any[0] = plan_group(p, first, s, o->fftw_flags) != 0;
      first = s + 1, any[1] = wf_signal_stop();
    }
  MPI_Allreduce(MPI_IN_PLACE, any, 2, MPI_INT, MPI_MAX, dc->comm);
  if (any[0] || any[1]) {
    ff_plan_free(p);
    if (any[1]) return wf_signal_fail(st, any[1], "while planning the FFT (nothing written)");
    return wf_fail(st, WF_ERR_RUNTIME,
                   "could not plan the FFT of %dx%dx%d (out of memory, or FFTW refused a plan)",
                   n[0], n[1], n[2]);
  }
  return WF_OK;
}

void ff_plan_free(ff_plan *p) {
  for (int s = 0; s < 3; s++) {
    ff_fftw_destroy(p->prec, p->fwd[s]);
    ff_fftw_destroy(p->prec, p->bwd[s]);
  }
  free(p->row.peer), free(p->row.pieces);
  free(p->col.peer), free(p->col.pieces);
  if (p->stage) free_array(p->stage, p->stage_bytes, 1);
  for (int i = 0; i < 2; i++)
    if (p->buf[i]) free_array(p->buf[i], p->buf_cells, p->elem);
  memset(p, 0, sizeof *p);
}

/* ---- execution ---- */

/* Copy `region` from array `src` (box a) to `dst` (box b), both stored
 * [y][x][z]: runs along z, in storage order. */
static void copy_box(const ff_box *a, const char *src, const ff_box *b, char *dst,
                     const ff_box *region, size_t elem) {
  size_t run = (size_t)region->nz * elem;
  for (int y = region->y0; y < region->y0 + region->ny; y++)
    for (int x = region->x0; x < region->x0 + region->nx; x++)
      memcpy(dst + ff_index(b, x - b->x0, y - b->y0, region->z0 - b->z0) * elem,
             src + ff_index(a, x - a->x0, y - a->y0, region->z0 - a->z0) * elem, run);
}

/* The messages of `part` on this side: straight from (into) array `a` of
 * box b where the part's rows are contiguous there, else from (into) its
 * packed copy at stage + *off, which is filled now when `pack` (a send), or
 * emptied by the caller after the exchange (a receive). */
static int place(const ff_plan *p, const ff_box *b, char *a, const ff_box *part, bool whole,
                 size_t *off, bool pack, wf_piece *out, int peer) {
  size_t row = (size_t)part->nx * part->nz * p->elem;
  if (packed_bytes(p, b, part, whole) == 0) {
    char *first = a + ff_index(b, part->x0 - b->x0, part->y0 - b->y0, part->z0 - b->z0) * p->elem;
    return cut(out, peer, first, row, (size_t)b->nx * b->nz * p->elem, part->ny, whole);
  }
  char *packed = (char *)p->stage + *off;
  if (pack) copy_box(b, a, part, packed, part, p->elem);
  *off += row * (size_t)part->ny;
  return cut(out, peer, packed, row, row, part->ny, packs_rows(p, part, whole));
}

/* A part a transpose moves and whether both sides hold it whole. */
typedef struct moved {
  const ff_box *part;
  bool whole;
} moved;

/* What this rank sends peer q: the forward transpose's send part, or its
 * receive part when the transpose runs backward. */
static moved outgoing(const ff_peer_part *q, bool back) {
  return back ? (moved){&q->recv, q->recv_whole} : (moved){&q->send, q->send_whole};
}

static moved incoming(const ff_peer_part *q, bool back) { return outgoing(q, !back); }

/* The transpose of exchange x from stage `from` to stage `to` (`back`: the
 * backward one, whose parts are the forward one's, sent the other way). */
static int transpose(ff_plan *p, ff_exchange *x, wf_axis axis, bool back, int from, int to,
                     wf_status *st) {
  double t0 = MPI_Wtime();
  const ff_box *fb = &p->box[from], *tb = &p->box[to];
  char *fa = p->data[from], *ta = p->data[to];
  size_t off = 0;
  int ns = 0, nr = 0;
  for (int k = 0; k < x->parts; k++) {
    moved m = outgoing(&x->peer[k], back);
    if (k != x->me) ns += place(p, fb, fa, m.part, m.whole, &off, true, x->pieces + ns, k);
  }
  wf_piece *recv = x->pieces + ns;
  size_t unpack_from = off;
  for (int k = 0; k < x->parts; k++) {
    moved m = incoming(&x->peer[k], back);
    if (k != x->me) nr += place(p, tb, ta, m.part, m.whole, &off, false, recv + nr, k);
  }
  copy_box(fb, fa, tb, ta, &x->self, p->elem);
  int rc = wf_fabric_alltoall_pieces(p->fab, axis, x->pieces, ns, recv, nr,
                                     ff_box_cells(&x->self) * p->elem,
                                     axis == WF_ALONG_ROWS ? p->row_words : p->col_words, st);
  for (int k = 0; rc == WF_OK && k < x->parts; k++) {
    moved m = incoming(&x->peer[k], back);
    if (k == x->me || packed_bytes(p, tb, m.part, m.whole) == 0) continue;
    copy_box(m.part, (char *)p->stage + unpack_from, tb, ta, m.part, p->elem);
    unpack_from += ff_box_cells(m.part) * p->elem;
  }
  p->transpose_seconds += MPI_Wtime() - t0;
  p->transpose_bytes += 2.0 * (double)ff_box_cells(fb) * (double)p->elem;
  return rc;
}

static void local_fft(ff_plan *p, void *plan) {
  double t0 = MPI_Wtime();
  ff_fftw_execute(p->prec, plan);
  p->fft_seconds += MPI_Wtime() - t0;
}

int ff_execute(ff_plan *p, int sign, wf_status *st) {
  wf_status_clear(st);
  if (sign < 0) {
    for (int s = 0; s < p->stages; s++) {
      local_fft(p, p->fwd[s]);
      if (s + 1 < p->stages && moves(p, s) &&
          transpose(p, s == 0 ? &p->row : &p->col, s == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS,
                    false, s, s + 1, st) != WF_OK)
        return st->code;
    }
  } else {
    for (int s = p->stages - 1; s >= 0; s--) {
      local_fft(p, p->bwd[s]);
      if (s > 0 && moves(p, s - 1) &&
          transpose(p, s == 1 ? &p->row : &p->col, s == 1 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS,
                    true, s, s - 1, st) != WF_OK)
        return st->code;
    }
  }
  return WF_OK;
}

/* ---- redistribution between any two sets of boxes ---- */

int ff_redistribute(MPI_Comm comm, ff_prec prec, const ff_box *from, const void *src,
                    const ff_box *to, void *dst, wf_status *st) {
  int nranks;
  MPI_Comm_size(comm, &nranks);
  wf_status_clear(st);
  ff_box mine[2] = {*from, *to};
  ff_box *all = malloc(2 * (size_t)nranks * sizeof *all);
  MPI_Datatype *types = malloc(2 * (size_t)nranks * sizeof *types);
  int *counts = malloc(3 * (size_t)nranks * sizeof *counts);
  int failed = !all || !types || !counts;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    free(all), free(types), free(counts);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory redistributing an FFT array");
  }
  MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
  MPI_Datatype *stypes = types, *rtypes = types + nranks, elem = ff_mpi_type(prec);
  int *scount = counts, *rcount = counts + nranks, *zeros = counts + 2 * nranks;
  /* What this rank's box shares with each rank's target box goes there; an
   * empty part is zero elements of the plain type. */
  for (int k = 0; k < nranks; k++) {
    ff_box out, in;
    stypes[k] = rtypes[k] = elem;
    scount[k] = rcount[k] = zeros[k] = 0;
    if (intersect(from, &all[2 * k + 1], &out)) {
      sub_box_type(from, &out, elem, &stypes[k]);
      scount[k] = 1;
    }
    if (intersect(to, &all[2 * k], &in)) {
      sub_box_type(to, &in, elem, &rtypes[k]);
      rcount[k] = 1;
    }
  }
  MPI_Alltoallw(src, scount, zeros, stypes, dst, rcount, zeros, rtypes, comm);
  for (int k = 0; k < nranks; k++) {
    if (scount[k]) MPI_Type_free(&stypes[k]);
    if (rcount[k]) MPI_Type_free(&rtypes[k]);
  }
  free(all), free(types), free(counts);
  return WF_OK;
}
