/* The pencil FFT over the PE grid (ff_pencil.h). */
#include "ff_pencil.h"

#include <complex.h>
#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

#include "ff_model.h"
#include "wf_memory.h"
#include "st_mesh.h"

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
  if (cells * elem < (2u << 20))
    fftw_free(a);
  else
    free(a);
}

/* ---- boxes ---- */

/* The boxes of rank (cx, cy) in the three stages (ff_pencil.h's table);
 * stage C is stored [x][y][z] when it came from other ranks. */
static void stage_boxes(const int n[3], const wf_decomp *dc, int cx, int cy, ff_box b[3]) {
  int xlo, xn, ylo, yn, zlo, zn, cxlo, cxn;
  st_rank_columns(n[0], dc->pe_nx, dc->px, cx, &xlo, &xn);
  st_rank_columns(n[1], dc->pe_ny, dc->py, cy, &ylo, &yn);
  st_rank_columns(n[2], dc->pe_nx, dc->px, cx, &zlo, &zn);
  st_rank_columns(n[0], dc->pe_ny, dc->py, cy, &cxlo, &cxn);
  b[0] = (ff_box){xlo, xn, ylo, yn, 0, n[2], FF_YXZ};
  b[1] = (ff_box){0, n[0], ylo, yn, zlo, zn, FF_YXZ};
  b[2] = (ff_box){cxlo, cxn, 0, n[1], zlo, zn, dc->py > 1 ? FF_XYZ : FF_YXZ};
}

/* The part of `whole` (an array stored as box `whole`) inside box `part`,
 * as an MPI type over that array. Its elements come in the global order
 * (y, then x, then z), whatever the array's order: two ranks whose arrays
 * are stored differently still agree element by element, and the
 * all-to-all transposes as it moves. */
static int sub_box_type(const ff_box *whole, const ff_box *part, MPI_Datatype elem,
                        MPI_Datatype *t) {
  MPI_Aint lb, esize;
  MPI_Type_get_extent(elem, &lb, &esize);
  MPI_Aint sz = esize, sx = (MPI_Aint)whole->nz * esize, sy = sx * whole->nx;
  if (whole->order == FF_XYZ) sy = sx, sx = sy * whole->ny;
  MPI_Datatype z, zx, zxy;
  int x0 = part->x0 - whole->x0, y0 = part->y0 - whole->y0, z0 = part->z0 - whole->z0;
  MPI_Aint first = y0 * sy + x0 * sx + z0 * sz;
  int rc = MPI_Type_contiguous(part->nz, elem, &z);
  rc |= MPI_Type_create_hvector(part->nx, 1, sx, z, &zx);
  rc |= MPI_Type_create_hvector(part->ny, 1, sy, zx, &zxy);
  int one = 1;
  rc |= MPI_Type_create_struct(1, &one, &first, &zxy, t);
  rc |= MPI_Type_commit(t);
  MPI_Type_free(&z), MPI_Type_free(&zx), MPI_Type_free(&zxy);
  return rc == MPI_SUCCESS ? 0 : -1;
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

static void free_types(MPI_Datatype *t, int n) {
  if (!t) return;
  for (int i = 0; i < n; i++)
    if (t[i] != MPI_DATATYPE_NULL) MPI_Type_free(&t[i]);
  free(t);
}

/* The types of one transpose over a line of `parts` ranks: from stage s to
 * stage s + 1, rank k of the line holding boxes from[k] and to[k]. This
 * rank's own part (`self`) is copied, not sent: no type. */
static int transpose_types(const ff_box *from, const ff_box *to, int parts, int me,
                           MPI_Datatype elem, MPI_Datatype **send, MPI_Datatype **recv,
                           ff_box *self) {
  *send = malloc((size_t)parts * sizeof **send);
  *recv = malloc((size_t)parts * sizeof **recv);
  if (!*send || !*recv) {
    free(*send), free(*recv);
    *send = *recv = NULL;
    return -1;
  }
  for (int k = 0; k < parts; k++) (*send)[k] = (*recv)[k] = MPI_DATATYPE_NULL;
  for (int k = 0; k < parts; k++) {
    ff_box out, in;
    /* Every pair of a line shares cells: bricks tile the line's axis. */
    if (!intersect(&from[me], &to[k], &out) || !intersect(&from[k], &to[me], &in)) return -1;
    if (k == me) {
      *self = out;
      continue;
    }
    if (sub_box_type(&from[me], &out, elem, &(*send)[k]) != 0 ||
        sub_box_type(&to[me], &in, elem, &(*recv)[k]) != 0)
      return -1;
  }
  return 0;
}

/* The types of the transpose from stage s to s + 1 (0: within this rank's
 * row of ranks, 1: its column), from the boxes of every rank of that line. */
static int line_types(const ff_plan *p, const wf_decomp *dc, int s, MPI_Datatype **send,
                      MPI_Datatype **recv, ff_box *self) {
  int parts = s == 0 ? dc->px : dc->py, me = s == 0 ? dc->cx : dc->cy;
  ff_box *from = malloc(2 * (size_t)parts * sizeof *from);
  if (!from) return -1;
  ff_box *to = from + parts;
  for (int k = 0; k < parts; k++) {
    ff_box b[3];
    stage_boxes(p->nc, dc, s == 0 ? k : dc->cx, s == 0 ? dc->cy : k, b);
    from[k] = b[s], to[k] = b[s + 1];
  }
  int rc = transpose_types(from, to, parts, me, ff_mpi_type(p->prec), send, recv, self);
  free(from);
  return rc;
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
  return s == 0 ? p->row_send != NULL : p->col_send != NULL;
}

/* The FFTW plans of stages first..last, between which nothing moves: one
 * multi-dimensional plan over their axes (z for A, x for B, y for C) on
 * the shared array, batched over the others. A length-1 axis is skipped
 * (its DFT is the identity). The forward plan is kept at `first`, the
 * backward one at `last`, where the loops of ff_execute meet them. */
static int plan_group(ff_plan *p, int first, int last, unsigned flags) {
  const ff_box *b = &p->box[first];
  bool real = first == 0 && p->r2c; /* the group starts from real data */
  /* Axes y, x, z: stage C's, B's and A's. The real array sits in place of
   * the complex one: its strides are twice the complex ones, but along z. */
  const ptrdiff_t len[3] = {b->ny, b->nx, real ? p->n[2] : b->nz};
  ptrdiff_t stride[3] = {(ptrdiff_t)b->nx * b->nz, b->nz, 1};
  if (b->order == FF_XYZ) stride[0] = b->nz, stride[1] = (ptrdiff_t)b->ny * b->nz;
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

  if (!failed && row_moves)
    failed = line_types(p, dc, 0, &p->row_send, &p->row_recv, &p->row_self);
  if (!failed && col_moves)
    failed = line_types(p, dc, 1, &p->col_send, &p->col_recv, &p->col_self);
  ff_model m =
      ff_model_transform(fab->hw, fab->grid, dc->pe_nx, dc->pe_ny, p->nc, p->dims, o->wafer_prec);
  p->row_words = m.row_words, p->col_words = m.col_words;
  for (int first = 0, s = 0; !failed && s < p->stages; s++)
    if (s == p->stages - 1 || moves(p, s)) {
      failed = plan_group(p, first, s, o->fftw_flags) != 0;
      first = s + 1;
    }
  int any;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, dc->comm);
  if (any) {
    ff_plan_free(p);
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
  const wf_decomp *dc = p->fab ? p->fab->dc : NULL;
  if (dc) {
    free_types(p->row_send, dc->px), free_types(p->row_recv, dc->px);
    free_types(p->col_send, dc->py), free_types(p->col_recv, dc->py);
  }
  for (int i = 0; i < 2; i++)
    if (p->buf[i]) free_array(p->buf[i], p->buf_cells, p->elem);
  memset(p, 0, sizeof *p);
}

/* ---- execution ---- */

/* Copy `region` from stage `from`'s array to stage `to`'s: runs along z,
 * the fastest axis of both, in the destination's order (its writes then
 * stream; measured here: 0.6 ms instead of 1 for 8 MB into [x][y][z]). */
static void copy_region(const ff_plan *p, int from, int to, const ff_box *region) {
  const ff_box *a = &p->box[from], *b = &p->box[to];
  const char *src = p->data[from];
  char *dst = p->data[to];
  size_t run = (size_t)region->nz * p->elem;
  bool x_outer = b->order == FF_XYZ;
  int n_outer = x_outer ? region->nx : region->ny, n_inner = x_outer ? region->ny : region->nx;
  for (int o = 0; o < n_outer; o++)
    for (int i = 0; i < n_inner; i++) {
      int x = region->x0 + (x_outer ? o : i), y = region->y0 + (x_outer ? i : o);
      memcpy(dst + ff_index(b, x - b->x0, y - b->y0, region->z0 - b->z0) * p->elem,
             src + ff_index(a, x - a->x0, y - a->y0, region->z0 - a->z0) * p->elem, run);
    }
}

static int transpose(ff_plan *p, wf_axis axis, int from, int to, const MPI_Datatype *stypes,
                     const MPI_Datatype *rtypes, wf_status *st) {
  double t0 = MPI_Wtime();
  const ff_box *self = axis == WF_ALONG_ROWS ? &p->row_self : &p->col_self;
  copy_region(p, from, to, self);
  int rc = wf_fabric_alltoallw(p->fab, axis, p->data[from], stypes, p->data[to], rtypes,
                               ff_box_cells(self) * p->elem,
                               axis == WF_ALONG_ROWS ? p->row_words : p->col_words, st);
  p->transpose_seconds += MPI_Wtime() - t0;
  p->transpose_bytes += 2.0 * (double)ff_box_cells(&p->box[from]) * (double)p->elem;
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
          transpose(p, s == 0 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS, s, s + 1,
                    s == 0 ? p->row_send : p->col_send, s == 0 ? p->row_recv : p->col_recv,
                    st) != WF_OK)
        return st->code;
    }
  } else {
    for (int s = p->stages - 1; s >= 0; s--) {
      local_fft(p, p->bwd[s]);
      if (s > 0 && moves(p, s - 1) &&
          transpose(p, s == 1 ? WF_ALONG_ROWS : WF_ALONG_COLUMNS, s, s - 1,
                    s == 1 ? p->row_recv : p->col_recv, s == 1 ? p->row_send : p->col_send,
                    st) != WF_OK)
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
      if (sub_box_type(from, &out, elem, &stypes[k]) != 0)
        failed = 1, stypes[k] = elem;
      else
        scount[k] = 1;
    }
    if (intersect(to, &all[2 * k], &in)) {
      if (sub_box_type(to, &in, elem, &rtypes[k]) != 0)
        failed = 1, rtypes[k] = elem;
      else
        rcount[k] = 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (!failed) MPI_Alltoallw(src, scount, zeros, stypes, dst, rcount, zeros, rtypes, comm);
  for (int k = 0; k < nranks; k++) {
    if (scount[k]) MPI_Type_free(&stypes[k]);
    if (rcount[k]) MPI_Type_free(&rtypes[k]);
  }
  free(all), free(types), free(counts);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "could not redistribute an FFT array");
  return WF_OK;
}
