/* Halo exchange of per-PE data (wf_halo.h): the messages between rank blocks as MPI subarray
 * types on persistent requests, periodic wraps onto the same rank as plain copies, and the
 * non-blocking begin and end. */
#include "wf_halo.h"

#include <stdlib.h>
#include <string.h>

#include "wf_model.h"

/* Origin and extent along one axis of the region sent toward `d` (-1, 0, +1)
 * and of the halo region received from that side. */
static void axis_regions(int n, int w, int d, int *send0, int *recv0, int *extent) {
  if (d > 0) *send0 = n - w, *recv0 = n, *extent = w;
  else if (d < 0) *send0 = 0, *recv0 = -w, *extent = w;
  else *send0 = 0, *recv0 = 0, *extent = n;
}

/* Words delivered between PEs of the same block in one exchange. */
static long long intra_pairs(int nx, int ny, int w, bool corners) {
  long long pairs = 0;
  for (int dy = -w; dy <= w; dy++)
    for (int dx = -w; dx <= w; dx++) {
      if ((dx == 0 && dy == 0) || (!corners && dx != 0 && dy != 0)) continue;
      long long a = nx - abs(dx), b = ny - abs(dy);
      if (a > 0 && b > 0) pairs += a * b;
    }
  return pairs;
}

/* The region (x0, y0, cx, cy) of a field as an MPI datatype. */
static MPI_Datatype region_type(const wf_halo *h, MPI_Datatype elem, int x0, int y0, int cx,
                                int cy) {
  int sizes[2] = {h->ny + 2 * h->w, h->ld}, sub[2] = {cy, cx}, start[2] = {y0 + h->w, x0 + h->w};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, elem, &t);
  MPI_Type_commit(&t);
  return t;
}

static void unbind(wf_halo *h) {
  if (!h->bound) return;
  for (int k = 0; k < 2 * h->nmsg; k++) MPI_Request_free(&h->req[k]);
  h->bound = NULL;
}

/* Point the persistent requests at `field`. Tag = direction of travel, so
 * two messages between the same pair of ranks (a periodic axis of one or two
 * ranks) never mix. */
static void bind(wf_halo *h, void *field) {
  unbind(h);
  MPI_Comm comm = h->fab->dc->comm;
  for (int k = 0; k < h->nmsg; k++) {
    wf_halo_msg *m = &h->msg[k];
    MPI_Send_init(field, 1, m->send_type, m->peer, m->dir, comm, &h->req[2 * k]);
    MPI_Recv_init(field, 1, m->recv_type, m->peer, wf_dir_opposite(m->dir), comm,
                  &h->req[2 * k + 1]);
  }
  h->bound = field;
}

int wf_halo_create(wf_halo *h, wf_fabric *fab, size_t elem_bytes, int width, bool corners,
                   bool periodic_x, bool periodic_y, wf_status *st) {
  const wf_decomp *dc = fab->dc;
  /* The thinnest block is the same arithmetic on every rank: all agree. */
  wf_halo_shape pes = {.nx = dc->nx, .ny = dc->ny, .min_nx = dc->pe_nx / dc->px,
                       .min_ny = dc->pe_ny / dc->py, .unit = "PEs"};
  if (wf_halo_create_shape(h, fab, &pes, elem_bytes, width, corners, periodic_x, periodic_y,
                           st) != WF_OK)
    return st->code;
  /* a run's fabric count is one figure: the fast reading's */
  h->model_cycles = wf_model_halo_cycles(fab->hw, fab->grid, elem_bytes, width, corners).lo;
  return WF_OK;
}

int wf_halo_create_shape(wf_halo *h, wf_fabric *fab, const wf_halo_shape *shape,
                         size_t elem_bytes, int width, bool corners, bool periodic_x,
                         bool periodic_y, wf_status *st) {
  const wf_decomp *dc = fab->dc;
  memset(h, 0, sizeof *h);
  if (width < 1) return wf_fail(st, WF_ERR_INPUT, "halo width %d: must be at least 1", width);
  if (elem_bytes < 1) return wf_fail(st, WF_ERR_INPUT, "halo element size must be positive");
  if (shape->elem_payload && shape->elem_offset + shape->elem_payload > elem_bytes)
    return wf_fail(st, WF_ERR_INPUT,
                   "halo element payload (%zu bytes from byte %zu) past the element's %zu bytes",
                   shape->elem_payload, shape->elem_offset, elem_bytes);
  if (width > shape->min_nx || width > shape->min_ny)
    return wf_fail(st, WF_ERR_INPUT,
                   "halo width %d %s is wider than the thinnest rank block (%dx%d %s on %dx%d "
                   "ranks): data would have to come from ranks further away; use fewer ranks or "
                   "a larger grid",
                   width, shape->unit, shape->min_nx, shape->min_ny, shape->unit, dc->px, dc->py);
  h->fab = fab;
  h->esz = elem_bytes;
  h->w = width;
  h->nx = shape->nx;
  h->ny = shape->ny;
  h->ld = shape->nx + 2 * width;
  h->corners = corners;
  h->periodic_x = periodic_x;
  h->periodic_y = periodic_y;

  size_t payload = shape->elem_payload ? shape->elem_payload : elem_bytes;
  MPI_Aint offset = shape->elem_payload ? (MPI_Aint)shape->elem_offset : 0;
  MPI_Datatype data;
  MPI_Type_create_hindexed_block(1, (int)payload, &offset, MPI_BYTE, &data);
  MPI_Type_create_resized(data, 0, (MPI_Aint)elem_bytes, &h->elem_type);
  MPI_Type_free(&data);
  MPI_Type_commit(&h->elem_type);
  double words = wf_model_words(fab->hw, payload);
  int ndirs = corners ? WF_NDIRS : 4;
  for (int d = 0; d < ndirs; d++) {
    int peer = wf_decomp_neighbor(dc, d, periodic_x, periodic_y);
    if (peer == MPI_PROC_NULL) continue;
    wf_halo_msg *m = &h->msg[h->nmsg];
    int cx, cy;
    m->dir = d;
    m->peer = peer;
    axis_regions(h->nx, width, wf_dir_dx[d], &m->send_x, &m->recv_x, &cx);
    axis_regions(h->ny, width, wf_dir_dy[d], &m->send_y, &m->recv_y, &cy);
    m->cx = cx;
    m->cy = cy;
    m->bytes = (size_t)cx * cy * payload;
    long long elems = (long long)cx * cy;
    if (peer == dc->rank) {
      /* A periodic wrap inside this rank: a copy within the field, no MPI. */
      h->local[h->nlocal++] = *m;
      h->words_intra += (long long)(elems * words);
      continue;
    }
    m->send_type = region_type(h, h->elem_type, m->send_x, m->send_y, cx, cy);
    m->recv_type = region_type(h, h->elem_type, m->recv_x, m->recv_y, cx, cy);
    h->words_inter += (long long)(elems * words);
    h->mpi_bytes += (long long)m->bytes;
    h->nmsg++;
  }
  h->words_intra += (long long)(intra_pairs(h->nx, h->ny, width, corners) * words);
  return WF_OK;
}

void wf_halo_free(wf_halo *h) {
  unbind(h);
  for (int k = 0; k < h->nmsg; k++) {
    MPI_Type_free(&h->msg[k].send_type);
    MPI_Type_free(&h->msg[k].recv_type);
  }
  if (h->fab) MPI_Type_free(&h->elem_type);
  memset(h, 0, sizeof *h);
}

void wf_halo_begin(wf_halo *h, void *field) {
  h->t_begin = MPI_Wtime();
  if (h->nmsg && field != h->bound) bind(h, field);
  if (h->nmsg) MPI_Startall(2 * h->nmsg, h->req);
  /* What this rank sends toward d it also receives from the opposite side. */
  for (int k = 0; k < h->nlocal; k++) {
    const wf_halo_msg *m = &h->local[k];
    int unused, rx, ry;
    axis_regions(h->nx, h->w, -wf_dir_dx[m->dir], &unused, &rx, &unused);
    axis_regions(h->ny, h->w, -wf_dir_dy[m->dir], &unused, &ry, &unused);
    size_t run = (size_t)m->cx * h->esz;
    char *f = field;
    for (int j = 0; j < m->cy; j++)
      memcpy(f + wf_halo_index(h, rx, ry + j) * h->esz,
             f + wf_halo_index(h, m->send_x, m->send_y + j) * h->esz, run);
  }
}

void wf_halo_end(wf_halo *h, void *field) {
  (void)field; /* MPI wrote straight into it */
  if (h->nmsg) MPI_Waitall(2 * h->nmsg, h->req, MPI_STATUSES_IGNORE);
  wf_fabric_counters *c = &h->fab->c;
  c->ops++;
  c->messages += h->nmsg;
  c->words_intra += h->words_intra;
  c->words_inter += h->words_inter;
  c->mpi_bytes += h->mpi_bytes;
  c->model_cycles += h->model_cycles;
  c->seconds += MPI_Wtime() - h->t_begin;
}

void wf_halo_exchange(wf_halo *h, void *field) {
  wf_halo_begin(h, field);
  wf_halo_end(h, field);
}
