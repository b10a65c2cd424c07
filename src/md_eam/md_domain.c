/* The periodic box on the PE grid (md_domain.h): which rank owns an atom, the migration of
 * atoms that leave a rank's region, and the six swaps that build and refresh the ghost atoms,
 * through the fabric's neighbour exchange. Also the fold mapping's regions. */
#include "md_domain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_memory.h"

static const char axis_name[3] = {'x', 'y', 'z'};

int md_domain_pe_of(const md_domain *d, int axis, double x) {
  int n = d->pe_n[axis];
  double p = floor((x - d->box.lo[axis]) / d->box.len[axis] * n);
  return !(p >= 0) ? 0 : p >= n ? n - 1 : (int)p; /* clamped before the cast: any x is safe */
}

bool md_domain_owns(const md_domain *d, const double x[3]) {
  for (int a = 0; a < 2; a++) {
    int p = md_domain_pe_of(d, a, x[a]);
    if (p < d->pe_lo[a] || p >= d->pe_hi[a]) return false;
  }
  return true;
}

int md_domain_max_atoms_per_pe(const md_domain *d, const md_atoms *a) {
  int nx = d->pe_hi[0] - d->pe_lo[0], ny = d->pe_hi[1] - d->pe_lo[1], most = 0, all;
  int *count = calloc((size_t)nx * ny, sizeof *count);
  for (int i = 0; count && i < a->nlocal; i++) {
    int px, py;
    if (d->fold_mode) {
      md_fold_pe(&d->fold, a->id[i], &px, &py);
    } else {
      px = md_domain_pe_of(d, 0, a->x[i][0]);
      py = md_domain_pe_of(d, 1, a->x[i][1]);
    }
    px -= d->pe_lo[0], py -= d->pe_lo[1];
    if (px >= 0 && px < nx && py >= 0 && py < ny) {
      int c = ++count[(size_t)py * nx + px];
      most = c > most ? c : most;
    }
  }
  free(count);
  MPI_Allreduce(&most, &all, 1, MPI_INT, MPI_MAX, d->comm);
  return all;
}

void md_domain_halo_pes(const md_domain *d, int halo[2]) {
  for (int a = 0; a < 2; a++) halo[a] = (int)ceil(d->cutghost / (d->box.len[a] / d->pe_n[a]));
}

void md_domain_set_fold(md_domain *d, const md_fold *fold) {
  d->fold_mode = true;
  d->fold = *fold;
}

bool md_domain_owns_atom(const md_domain *d, int64_t id, const double x[3]) {
  if (!d->fold_mode) return md_domain_owns(d, x);
  int pe[2];
  md_fold_pe(&d->fold, id, &pe[0], &pe[1]);
  return pe[0] >= d->pe_lo[0] && pe[0] < d->pe_hi[0] && pe[1] >= d->pe_lo[1] && pe[1] < d->pe_hi[1];
}

static int rank_at(const md_domain *d, const wf_decomp *dc, int a, int step) {
  int c[2] = {d->rank_c[0], d->rank_c[1]};
  c[a] = (c[a] + step + d->rank_n[a]) % d->rank_n[a];
  return wf_decomp_rank_of(dc, c[0], c[1]);
}

int md_domain_create(md_domain *d, wf_fabric *fab, const md_box *box, double cutforce,
                     double cutghost, wf_status *st) {
  const wf_decomp *dc = fab->dc;
  memset(d, 0, sizeof *d);
  d->fab = fab;
  d->comm = dc->comm;
  d->rank = dc->rank;
  d->box = *box;
  d->cutghost = cutghost;
  for (int a = 0; a < 3; a++) {
    if (box->len[a] < 2 * cutforce)
      return wf_fail(st, WF_ERR_INPUT,
                     "the box is %.6g A long in %c, shorter than twice the potential's cutoff "
                     "(2 x %.6g A): an atom would interact with its own periodic image",
                     box->len[a], axis_name[a], cutforce);
    if (box->len[a] < cutghost)
      return wf_fail(st, WF_ERR_INPUT,
                     "the box is %.6g A long in %c, shorter than cutoff + skin (%.6g A): reduce "
                     "the skin",
                     box->len[a], axis_name[a], cutghost);
  }
  const int pe_n[2] = {dc->pe_nx, dc->pe_ny}, lo[2] = {dc->x0, dc->y0}, n[2] = {dc->nx, dc->ny};
  const int rn[2] = {dc->px, dc->py}, rc[2] = {dc->cx, dc->cy};
  for (int a = 0; a < 2; a++) {
    d->pe_n[a] = pe_n[a];
    d->pe_lo[a] = lo[a];
    d->pe_hi[a] = lo[a] + n[a];
    d->rank_n[a] = rn[a];
    d->rank_c[a] = rc[a];
    double pe_width = box->len[a] / pe_n[a];
    d->sub_lo[a] = box->lo[a] + d->pe_lo[a] * pe_width;
    d->sub_hi[a] = box->lo[a] + d->pe_hi[a] * pe_width;
    /* The thinnest block: its ghosts must all come from the next rank. */
    double thinnest = (pe_n[a] / rn[a]) * pe_width;
    if (rn[a] > 1 && thinnest < cutghost)
      return wf_fail(st, WF_ERR_INPUT,
                     "with %d ranks along %c, rank blocks are %.4g A wide, thinner than the "
                     "cutoff + skin (%.4g A): use fewer ranks along %c ([wafer] rank_grid) or a "
                     "bigger box",
                     rn[a], axis_name[a], thinnest, cutghost, axis_name[a]);
  }
  d->sub_lo[2] = box->lo[2];
  d->sub_hi[2] = box->lo[2] + box->len[2];

  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      md_swap *s = &d->swap[2 * a + side];
      s->dim = a;
      int step = side == 0 ? -1 : 1; /* side 0 sends down, side 1 up */
      if (a < 2 && d->rank_n[a] > 1) {
        s->send_to = rank_at(d, dc, a, step);
      } else {
        s->send_to = d->rank;
      }
      bool at_lo = a == 2 || d->rank_c[a] == 0, at_hi = a == 2 || d->rank_c[a] == d->rank_n[a] - 1;
      if (side == 0 && at_lo) s->shift[a] = box->len[a];
      if (side == 1 && at_hi) s->shift[a] = -box->len[a];
    }
  return WF_OK;
}

void md_domain_free(md_domain *d) {
  for (int k = 0; k < 6; k++) free(d->swap[k].list);
  wf_buffer_free(&d->local);
  wf_buffer_free(&d->refresh);
  wf_buffer_free(&d->migrate[0]);
  wf_buffer_free(&d->migrate[1]);
  memset(d, 0, sizeof *d);
}

/* One swap of the six: along z (this rank with itself: pack and unpack
 * here), or along x or y (the fabric's neighbour exchange, which also
 * counts and models the words). */
static int swap_run(md_domain *d, const md_swap *s, int side, wf_pack_fn pack,
                    wf_unpack_fn unpack, void *ctx, wf_status *st) {
  if (s->dim < 2) return wf_fabric_exchange(d->fab, s->dim, side, pack, unpack, ctx, st);
  if (st->code != WF_OK) return st->code;
  d->local.len = 0;
  if (pack(ctx, &d->local, st) != WF_OK) return st->code;
  return unpack(ctx, d->local.data, d->local.len, st);
}

/* ---- migration ------------------------------------------------------------ */

enum { MIGRATE_VALUES = 8 }; /* id, type, x[3], v[3] */

static void pack_atom(const md_atoms *a, int i, double *b) {
  b[0] = (double)a->id[i];
  b[1] = a->type[i];
  memcpy(b + 2, a->x[i], sizeof(md_vec));
  memcpy(b + 5, a->v[i], sizeof(md_vec));
}

/* The atoms leaving this rank on one side, packed by the extraction loop. */
typedef struct migration {
  md_domain *d;
  md_atoms *a;
  int side;
} migration;

static int pack_leaving(void *ctx, wf_buffer *out, wf_status *st) {
  migration *m = ctx;
  const wf_buffer *b = &m->d->migrate[m->side];
  return wf_buffer_append(out, b->data, b->len, st);
}

static int unpack_arriving(void *ctx, const char *data, size_t bytes, wf_status *st) {
  migration *m = ctx;
  size_t n = bytes / (MIGRATE_VALUES * sizeof(double));
  for (size_t k = 0; k < n; k++) {
    double b[MIGRATE_VALUES];
    memcpy(b, data + k * sizeof b, sizeof b);
    if (md_atoms_add(m->a, (int64_t)b[0], (int)b[1], b + 2, b + 5, st) != WF_OK) return st->code;
  }
  return WF_OK;
}

/* Periodic wrap, as LAMMPS's Domain::pbc (an atom just below lo can land on
 * hi after += len; it is put on lo). False for an atom that is not finite
 * or more than a box length outside. */
static bool wrap(const md_box *box, double x[3]) {
  for (int a = 0; a < 3; a++) {
    double lo = box->lo[a], hi = lo + box->len[a];
    if (!isfinite(x[a])) return false;
    if (x[a] < lo) {
      x[a] += box->len[a];
      if (x[a] >= hi) x[a] = lo;
    } else if (x[a] >= hi) {
      x[a] -= box->len[a];
      if (x[a] < lo) x[a] = lo;
    }
    if (x[a] < lo || x[a] >= hi) return false;
  }
  return true;
}

/* The extents [lo, hi] along `axis` of the lines of ranks 1 .. hops over
 * on `side` (side 1: below), from this rank's line's `mine` passed along
 * hop by hop; those across the periodic boundary moved by box lengths into
 * this rank's frame. `ext`: hops pairs. */
static void lines_over(md_domain *d, int axis, int side, const double mine[2], int hops,
                       double (*ext)[2]) {
  const int n = d->rank_n[axis], c = d->rank_c[axis], step = side ? -1 : 1;
  const double len = d->box.len[axis];
  for (int k = 0; k < hops; k++)
    wf_fabric_shift(d->fab, axis, side, k ? ext[k - 1] : mine, 2 * sizeof(double), ext[k],
                    2 * sizeof(double));
  for (int k = 1; k <= hops; k++) {
    int to = c + k * step; /* where that line sits, before wrapping */
    double shift = to < 0 ? -len * ((-to + n - 1) / n) : to >= n ? len * (to / n) : 0;
    ext[k - 1][0] += shift, ext[k - 1][1] += shift;
  }
}

/* Fold mapping: this rank's region becomes its atoms' bounding box; each
 * swap learns its partner's region (along x the union over the partner's
 * column of ranks, which it forwards x ghosts to in y; along y the
 * partner's own); and no line of ranks two or more over has atoms within
 * cutghost of this rank's line (ghosts come from neighbours only). The
 * lines' extents travel hop by hop to half the line of ranks: O(sqrt P)
 * numbers a rebuild, no rank gathers every rank's. */
static int fold_regions(md_domain *d, const md_atoms *a, wf_status *st) {
  double mine[6];
  for (int c = 0; c < 3; c++) {
    mine[c] = a->nlocal ? INFINITY : d->sub_lo[c];
    mine[3 + c] = a->nlocal ? -INFINITY : d->sub_hi[c];
  }
  for (int i = 0; i < a->nlocal; i++)
    for (int c = 0; c < 3; c++) {
      mine[c] = fmin(mine[c], a->x[i][c]);
      mine[3 + c] = fmax(mine[3 + c], a->x[i][c]);
    }
  for (int c = 0; c < 3; c++) d->sub_lo[c] = mine[c], d->sub_hi[c] = mine[3 + c];
  wf_status_clear(st);
  for (int ax = 0; ax < 2; ax++) {
    /* The x extent of this rank's column of ranks (y: of its row). */
    double line[2] = {-mine[ax], mine[3 + ax]};
    wf_fabric_allreduce_line(d->fab, ax == 0 ? WF_ALONG_COLUMNS : WF_ALONG_ROWS, line, 2, WF_MAX);
    line[0] = -line[0];
    const double own[2] = {mine[ax], mine[3 + ax]}, L = d->box.len[ax];
    /* Lines two or more over exist (are not neighbours) from 4 ranks a line. */
    const int n = d->rank_n[ax], hops = n >= 4 ? n / 2 : 1;
    double(*ext)[2] = wf_alloc_small((size_t)hops, sizeof *ext, "the lines' extents");
    for (int side = 0; side < 2; side++) {
      double partner[2];
      lines_over(d, ax, side, line, hops, ext);
      /* the partner of swap (ax, side) is the rank toward `side`: what it
       * sent us travelled the other way (side 1 received from below) */
      if (ax == 1) lines_over(d, ax, side, own, 1, &partner);
      else memcpy(partner, ext[0], sizeof partner);
      memcpy(d->partner[2 * ax + !side], partner, sizeof partner);
      for (int k = 2; k <= hops; k++) { /* gap to the nearest periodic image */
        double gap = INFINITY;
        for (int i = -1; i <= 1; i++)
          gap = fmin(gap, fmax(0, fmax(ext[k - 1][0] + i * L - line[1],
                                       line[0] - ext[k - 1][1] - i * L)));
        if (gap < d->cutghost && st->code == WF_OK)
          wf_fail(st, WF_ERR_RUNTIME,
                  "mapping = fold: atoms of the %s of ranks %d over from rank %d's came within "
                  "cutoff + skin of its %s's (the crystal has deformed or melted): use "
                  "mapping = columns, or fewer ranks",
                  ax == 0 ? "column" : "row", k, d->rank, ax == 0 ? "column" : "row");
      }
    }
    free(ext);
  }
  wf_status_agree(d->comm, st);
  return st->code;
}

static int check_finite(md_domain *d, const md_atoms *a, wf_status *st) {
  for (int i = 0; i < a->nlocal && st->code == WF_OK; i++)
    if (!isfinite(a->x[i][0]) || !isfinite(a->x[i][1]) || !isfinite(a->x[i][2]))
      wf_fail(st, WF_ERR_RUNTIME, "atom %lld has a non-finite position: the run has blown up",
              (long long)a->id[i]);
  wf_status_agree(d->comm, st);
  return st->code;
}

int md_domain_migrate(md_domain *d, md_atoms *a, wf_status *st) {
  wf_status_clear(st);
  a->nghost = 0;
  if (d->fold_mode) { /* atoms stay; the regions follow them */
    if (check_finite(d, a, st) == WF_OK) fold_regions(d, a, st);
    return st->code;
  }
  for (int i = 0; i < a->nlocal && st->code == WF_OK; i++)
    if (!wrap(&d->box, a->x[i]))
      wf_fail(st, WF_ERR_RUNTIME,
              "atom %lld is at (%.6g, %.6g, %.6g), not finite or a box length outside the box: "
              "the run has blown up (timestep too large, or overlapping atoms?)",
              (long long)a->id[i], a->x[i][0], a->x[i][1], a->x[i][2]);
  for (int ax = 0; ax < 2; ax++) {
    if (d->rank_n[ax] == 1) continue;
    int n = d->rank_n[ax], c = d->rank_c[ax];
    d->migrate[0].len = d->migrate[1].len = 0; /* 0: down, 1: up */
    for (int i = 0; i < a->nlocal && st->code == WF_OK;) {
      int owner = wf_block_owner(d->pe_n[ax], n, md_domain_pe_of(d, ax, a->x[i][ax]));
      if (owner == c) {
        i++;
        continue;
      }
      int side = owner == (c + 1) % n ? 1 : owner == (c - 1 + n) % n ? 0 : -1;
      if (side < 0) {
        wf_fail(st, WF_ERR_RUNTIME,
                "atom %lld moved further than a rank block in %c between neighbour list builds "
                "(now at %.6g): timestep too large?",
                (long long)a->id[i], axis_name[ax], a->x[i][ax]);
        break;
      }
      double b[MIGRATE_VALUES];
      pack_atom(a, i, b);
      if (wf_buffer_append(&d->migrate[side], b, sizeof b, st) != WF_OK) break;
      md_atoms_copy(a, i, --a->nlocal);
    }
    /* Each rank goes through both exchanges even after a failure (the
     * fabric sends a notice in place of the atoms); one agreement at the
     * end gives every rank the first error. */
    for (int side = 0; side < 2; side++) {
      migration m = {d, a, side};
      wf_fabric_exchange(d->fab, ax, side, pack_leaving, unpack_arriving, &m, st);
    }
  }
  wf_status_agree(d->comm, st);
  return st->code;
}

/* ---- ghosts ---------------------------------------------------------------- */

enum { BORDER_VALUES = 5 }; /* x[3], type, id */

static int list_add(md_swap *s, int i, wf_status *st) {
  if (s->nsend == s->cap) {
    int cap = s->cap ? 2 * s->cap : 1024;
    int *l = realloc(s->list, (size_t)cap * sizeof *l);
    if (!l) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a ghost list");
    s->list = l;
    s->cap = cap;
  }
  s->list[s->nsend++] = i;
  return WF_OK;
}

/* Atoms 0 .. n-1 near the face this swap sends across: within cutghost of
 * this rank's region edge (columns: the partner's region starts there), or
 * of the partner's region (fold). */
static int select_border(const md_domain *d, md_swap *s, int side, const md_atoms *a, int n,
                         wf_status *st) {
  int ax = s->dim;
  s->nsend = 0;
  double lo = d->sub_lo[ax], hi = d->sub_hi[ax];
  if (d->fold_mode && ax < 2) { /* the partner's region, already in this rank's frame */
    lo = d->partner[s - d->swap][0];
    hi = d->partner[s - d->swap][1];
  } else if (d->fold_mode) { /* z: this rank's own, moved by the swap's periodic shift */
    lo -= s->shift[ax];
    hi -= s->shift[ax];
  }
  if (side == 0) {
    double lim = (d->fold_mode ? hi : lo) + d->cutghost;
    for (int i = 0; i < n; i++)
      if (a->x[i][ax] < lim && list_add(s, i, st) != WF_OK) return st->code;
  } else {
    double lim = (d->fold_mode ? lo : hi) - d->cutghost;
    for (int i = 0; i < n; i++)
      if (a->x[i][ax] >= lim && list_add(s, i, st) != WF_OK) return st->code;
  }
  return WF_OK;
}

/* One swap of the ghost build: the candidates near the face go out with
 * their shift; what arrives becomes ghosts after the ones so far. */
typedef struct border {
  md_domain *d;
  md_atoms *a;
  md_swap *s;
  int side, ncand;
} border;

static int pack_border(void *ctx, wf_buffer *out, wf_status *st) {
  border *b = ctx;
  md_swap *s = b->s;
  if (select_border(b->d, s, b->side, b->a, b->ncand, st) != WF_OK ||
      wf_buffer_reserve(out, (size_t)s->nsend * BORDER_VALUES * sizeof(double), st) != WF_OK)
    return st->code;
  double *v = (double *)(void *)out->data;
  for (int m = 0; m < s->nsend; m++, v += BORDER_VALUES) {
    int i = s->list[m];
    for (int c = 0; c < 3; c++) v[c] = b->a->x[i][c] + s->shift[c];
    v[3] = b->a->type[i];
    v[4] = (double)b->a->id[i];
  }
  out->len = (size_t)s->nsend * BORDER_VALUES * sizeof(double);
  return WF_OK;
}

static int unpack_border(void *ctx, const char *data, size_t bytes, wf_status *st) {
  border *b = ctx;
  md_atoms *a = b->a;
  md_swap *s = b->s;
  s->first = a->nlocal + a->nghost;
  s->nrecv = (int)(bytes / (BORDER_VALUES * sizeof(double)));
  if (md_atoms_reserve(a, s->first + s->nrecv, st) != WF_OK) return st->code;
  for (int m = 0; m < s->nrecv; m++) {
    double v[BORDER_VALUES];
    memcpy(v, data + (size_t)m * sizeof v, sizeof v);
    int g = s->first + m;
    memcpy(a->x[g], v, sizeof(md_vec));
    a->type[g] = (int)v[3];
    a->id[g] = (int64_t)v[4];
  }
  a->nghost += s->nrecv;
  return WF_OK;
}

int md_domain_borders(md_domain *d, md_atoms *a, wf_status *st) {
  wf_status_clear(st);
  a->nghost = 0;
  int ncand = 0;
  size_t most = 0; /* the largest refresh a swap sends: three doubles an atom */
  for (int k = 0; k < 6; k++) {
    if (k % 2 == 0) ncand = a->nlocal + a->nghost; /* both sides send the same candidates */
    border b = {d, a, &d->swap[k], k % 2, ncand};
    swap_run(d, b.s, b.side, pack_border, unpack_border, &b, st); /* all six, as migrate's */
    if (b.s->nsend > 0 && (size_t)b.s->nsend * 3 * sizeof(double) > most)
      most = (size_t)b.s->nsend * 3 * sizeof(double);
  }
  if (st->code == WF_OK) wf_buffer_reserve(&d->refresh, most, st);
  wf_status_agree(d->comm, st);
  return st->code;
}

/* Forward communication: each swap packs its list (positions shifted, or
 * one value per atom) and its partner receives them straight into the
 * ghosts' slots, in the order borders built them. Both sides know every
 * size since borders, so each swap is one message each way and nothing
 * can fail: no agreement between ranks, no global step. */
static void forward_all(md_domain *d, md_vec *x, double *value) {
  const size_t per = x ? 3 : 1;
  for (int k = 0; k < 6; k++) {
    const md_swap *s = &d->swap[k];
    double *out = s->dim == 2 ? (x ? x[s->first] : value + s->first) /* z: a copy on this rank */
                              : (double *)(void *)d->refresh.data;
    for (int m = 0; m < s->nsend; m++)
      if (x)
        for (int c = 0; c < 3; c++) *out++ = x[s->list[m]][c] + s->shift[c];
      else
        *out++ = value[s->list[m]];
    if (s->dim == 2) continue;
    wf_fabric_shift(d->fab, s->dim, k % 2, d->refresh.data, (size_t)s->nsend * per * sizeof(double),
                    x ? (void *)x[s->first] : (void *)(value + s->first),
                    (size_t)s->nrecv * per * sizeof(double));
  }
}

void md_domain_forward_x(md_domain *d, md_atoms *a) { forward_all(d, a->x, NULL); }

void md_domain_forward_scalar(md_domain *d, double *value) { forward_all(d, NULL, value); }
