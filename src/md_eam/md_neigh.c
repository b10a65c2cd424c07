/* Neighbour lists (md_neigh.h): bins over the region and its ghosts, the owned atoms sorted
 * by bin, the half list (owned pairs, then owned-ghost pairs), and the test for a stale list. */
#include "md_neigh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"

void md_neigh_init(md_neigh *nl, double cutforce, double skin, double overlap) {
  memset(nl, 0, sizeof *nl);
  nl->cutneigh = cutforce + skin;
  nl->skin = skin;
  nl->overlap = overlap;
}

static void bins_free(md_bins *b) { free(b->start), free(b->atoms), free(b->x); }

void md_neigh_free(md_neigh *nl) {
  bins_free(&nl->owned), bins_free(&nl->ghosts);
  free(nl->atom_bin), free(nl->stencil);
  free(nl->first), free(nl->half_end), free(nl->list), free(nl->x_hold);
  memset(nl, 0, sizeof *nl);
}

static int grow_int(int **p, size_t n, wf_status *st) {
  if (md_grow((void **)p, (n ? n : 1) * sizeof **p))
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for neighbour lists (%zu entries)", n);
  return WF_OK;
}

/* Bins of at least cutneigh / 2 over the region and its ghost shell, padded
 * by the stencil's reach so that every stencil offset of an occupied bin is
 * a valid bin: the stencil is a list of rows of linear offsets. A row of bins
 * along x is one contiguous stretch of a md_bins' atoms. */
static int setup_bins(md_neigh *nl, const md_domain *d, wf_status *st) {
  int reach[3];
  for (int a = 0; a < 3; a++) {
    double lo = d->sub_lo[a] - d->cutghost, extent = d->sub_hi[a] - d->sub_lo[a] + 2 * d->cutghost;
    int core = (int)(extent / (0.5 * nl->cutneigh));
    core = core < 1 ? 1 : core;
    double size = extent / core;
    reach[a] = (int)ceil(nl->cutneigh / size);
    nl->nbin[a] = core + 2 * reach[a];
    nl->bin_inv[a] = 1.0 / size;
    nl->bin_lo[a] = lo - reach[a] * size;
  }
  int nbins = nl->nbin[0] * nl->nbin[1] * nl->nbin[2];
  if (nbins + 1 > nl->bin_cap) {
    if (grow_int(&nl->owned.start, (size_t)nbins + 1, st) != WF_OK ||
        grow_int(&nl->ghosts.start, (size_t)nbins + 1, st) != WF_OK)
      return st->code;
    nl->bin_cap = nbins + 1;
  }
  /* rows of bins along x, for each (dy, dz) within reach: row r covers the
   * linear offsets stencil[2r] .. stencil[2r+1] */
  int span = (2 * reach[1] + 1) * (2 * reach[2] + 1);
  if (grow_int(&nl->stencil, 2 * (size_t)span, st) != WF_OK) return st->code;
  nl->nstencil = 0;
  const double cutsq = nl->cutneigh * nl->cutneigh;
  for (int k = -reach[2]; k <= reach[2]; k++)
    for (int j = -reach[1]; j <= reach[1]; j++) {
      /* closest approach of two points in bins j, k apart (y, z) */
      double gy = fmax(0, abs(j) - 1) / nl->bin_inv[1], gz = fmax(0, abs(k) - 1) / nl->bin_inv[2];
      double left = cutsq - gy * gy - gz * gz;
      if (left <= 0) continue;
      int rx = 0; /* furthest x offset whose gap is inside */
      while (rx < reach[0] && (double)rx * rx / (nl->bin_inv[0] * nl->bin_inv[0]) < left) rx++;
      int row = (k * nl->nbin[1] + j) * nl->nbin[0];
      nl->stencil[2 * nl->nstencil] = row - rx;
      nl->stencil[2 * nl->nstencil + 1] = row + rx;
      nl->nstencil++;
    }
  return WF_OK;
}

static int bin_of(const md_neigh *nl, const double x[3]) {
  int c[3];
  for (int a = 0; a < 3; a++) {
    c[a] = (int)floor((x[a] - nl->bin_lo[a]) * nl->bin_inv[a]);
    c[a] = c[a] < 0 ? 0 : c[a] >= nl->nbin[a] ? nl->nbin[a] - 1 : c[a];
  }
  return (c[2] * nl->nbin[1] + c[1]) * nl->nbin[0] + c[0];
}

/* Counting sort of atoms lo .. hi-1 by bin into b; their bins into
 * nl->atom_bin (which holds n atoms). */
static int bin_atoms(md_neigh *nl, md_bins *b, const md_atoms *a, int lo, int hi, int n,
                     wf_status *st) {
  if (n > nl->bin_of_cap) {
    if (grow_int(&nl->atom_bin, (size_t)n, st) != WF_OK) return st->code;
    nl->bin_of_cap = n;
  }
  const int count = hi - lo;
  if (count > b->atom_cap) {
    md_vec *xs = realloc(b->x, (size_t)count * sizeof *xs);
    if (xs) b->x = xs;
    if (!xs || grow_int(&b->atoms, (size_t)count, st) != WF_OK)
      return st->code ? st->code : wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d atoms", count);
    b->atom_cap = count;
  }
  int nbins = nl->nbin[0] * nl->nbin[1] * nl->nbin[2];
  memset(b->start, 0, ((size_t)nbins + 1) * sizeof *b->start);
  for (int i = lo; i < hi; i++) {
    nl->atom_bin[i] = bin_of(nl, a->x[i]);
    b->start[nl->atom_bin[i] + 1]++;
  }
  for (int k = 0; k < nbins; k++) b->start[k + 1] += b->start[k];
  for (int i = lo; i < hi; i++) b->atoms[b->start[nl->atom_bin[i]]++] = i;
  for (int k = nbins; k > 0; k--) b->start[k] = b->start[k - 1];
  b->start[0] = 0;
  for (int p = 0; p < count; p++) memcpy(b->x[p], a->x[b->atoms[p]], sizeof(md_vec));
  return WF_OK;
}

int md_neigh_sort(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st) {
  int n = a->nlocal;
  if (setup_bins(nl, d, st) != WF_OK || bin_atoms(nl, &nl->owned, a, 0, n, n, st) != WF_OK)
    return st->code;
  if (n == 0) return WF_OK;
  int *order = nl->owned.atoms;
  const int *bin_start = nl->owned.start;
  /* ties within a bin by id: insertion sort, bins hold a few atoms */
  int nbins = nl->nbin[0] * nl->nbin[1] * nl->nbin[2];
  for (int b = 0; b < nbins; b++)
    for (int p = bin_start[b] + 1; p < bin_start[b + 1]; p++) {
      int v = order[p], q = p;
      while (q > bin_start[b] && a->id[order[q - 1]] > a->id[v]) order[q] = order[q - 1], q--;
      order[q] = v;
    }
  /* permute id, type, x, v through the force and density arrays' space */
  int64_t *id = malloc((size_t)n * sizeof *id + 1);
  int *type = malloc((size_t)n * sizeof *type + 1);
  md_vec *x = malloc((size_t)n * sizeof *x + 1), *v = malloc((size_t)n * sizeof *v + 1);
  if (!id || !type || !x || !v) {
    free(id), free(type), free(x), free(v);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory sorting %d atoms", n);
  }
  for (int p = 0; p < n; p++) {
    int i = order[p];
    id[p] = a->id[i];
    type[p] = a->type[i];
    memcpy(x[p], a->x[i], sizeof(md_vec));
    memcpy(v[p], a->v[i], sizeof(md_vec));
  }
  memcpy(a->id, id, (size_t)n * sizeof *id);
  memcpy(a->type, type, (size_t)n * sizeof *type);
  memcpy(a->x, x, (size_t)n * sizeof *x);
  memcpy(a->v, v, (size_t)n * sizeof *v);
  free(id), free(type), free(x), free(v);
  return WF_OK;
}

static int list_reserve(md_neigh *nl, size_t n, wf_status *st) {
  if (n <= nl->list_cap) return WF_OK;
  size_t cap = n + n / 2 + 4096;
  if (grow_int(&nl->list, cap, st) != WF_OK) return st->code;
  nl->list_cap = cap;
  return WF_OK;
}

/* Grow a candidate array to hold n entries. */
static int cand_reserve(int **c, int *cap, int n, wf_status *st) {
  if (n <= *cap) return WF_OK;
  *cap = 2 * n + 256;
  return grow_int(c, (size_t)*cap, st);
}

/* The atoms of bins' positions [from, to) of b within the cutoff of (xi,
 * yi, zi) and, of those, the ones above `after`, appended to cand from nc:
 * the new count. Branch-free: every atom is written, the count advances
 * only for those kept. */
static int scan(const md_bins *b, int from, int to, double xi, double yi, double zi,
                double cutsq, int after, int *restrict cand, int nc) {
  const md_vec *restrict xb = b->x;
  const int *restrict ba = b->atoms;
  for (int p = from; p < to; p++) {
    const double dx = xi - xb[p][0], dy = yi - xb[p][1], dz = zi - xb[p][2];
    const double rsq = dx * dx + dy * dy + dz * dz;
    cand[nc] = ba[p];
    nc += (rsq < cutsq) & (ba[p] > after);
  }
  return nc;
}

/* The first of cand[0 .. nc) closer to atom i than the overlap: an error
 * naming both. */
static int overlap_check(const md_neigh *nl, const md_atoms *a, int i, const int *cand, int nc,
                         wf_status *st) {
  const double oversq = nl->overlap * nl->overlap;
  for (int c = 0; c < nc; c++) {
    const int j = cand[c];
    const double dx = a->x[i][0] - a->x[j][0], dy = a->x[i][1] - a->x[j][1],
                 dz = a->x[i][2] - a->x[j][2];
    if (dx * dx + dy * dy + dz * dz < oversq)
      return wf_fail(st, WF_ERR_INPUT,
                     "atoms %lld and %lld are %.4g A apart, closer than eam.overlap = %g A: "
                     "overlapping atoms",
                     (long long)a->id[i], (long long)a->id[j], sqrt(dx * dx + dy * dy + dz * dz),
                     nl->overlap);
  }
  return WF_OK;
}

int md_neigh_build(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st) {
  wf_status_clear(st);
  int nlocal = a->nlocal, nall = a->nlocal + a->nghost;
  int rc = setup_bins(nl, d, st);
  if (rc == WF_OK) rc = bin_atoms(nl, &nl->owned, a, 0, nlocal, nall, st);
  if (rc == WF_OK) rc = bin_atoms(nl, &nl->ghosts, a, nlocal, nall, nall, st);
  if (rc == WF_OK && (grow_int(&nl->first, (size_t)nlocal + 1, st) != WF_OK ||
                      grow_int(&nl->half_end, (size_t)nlocal + 1, st) != WF_OK))
    rc = st->code;
  if (rc == WF_OK && nlocal > nl->hold_cap) {
    md_vec *h = realloc(nl->x_hold, (size_t)nlocal * sizeof *h);
    if (!h) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d positions", nlocal);
    else nl->x_hold = h, nl->hold_cap = nlocal;
  }
  /* md_neigh_sort left owned atom p at bin position p: then the owned
   * atoms after i in a row of bins are those past position i, and a scan
   * starts there (half the owned candidates). Any other order is scanned
   * whole, keeping j > i. */
  bool sorted = rc == WF_OK;
  for (int p = 0; sorted && p < nlocal; p++) sorted = nl->owned.atoms[p] == p;
  /* candidates of one atom within the cutoff: owned ones and ghosts */
  int *cand_o = NULL, *cand_g = NULL, cap_o = 0, cap_g = 0;
  const double cutsq = nl->cutneigh * nl->cutneigh;
  const int *os = nl->owned.start, *gs = nl->ghosts.start;
  size_t n = 0;
  for (int i = 0; rc == WF_OK && i < nlocal; i++) {
    nl->first[i] = (int)n;
    const double xi = a->x[i][0], yi = a->x[i][1], zi = a->x[i][2];
    const int bi = nl->atom_bin[i];
    int no = 0, ng = 0;
    for (int s = 0; s < nl->nstencil; s++) { /* a row of bins is one stretch of each */
      const int lo = bi + nl->stencil[2 * s], hi = bi + nl->stencil[2 * s + 1] + 1;
      int from = os[lo];
      if (sorted && from <= i) from = i + 1;
      if (cand_reserve(&cand_o, &cap_o, no + os[hi] - from, st) != WF_OK ||
          cand_reserve(&cand_g, &cap_g, ng + gs[hi] - gs[lo], st) != WF_OK) {
        rc = st->code;
        break;
      }
      no = scan(&nl->owned, from, os[hi], xi, yi, zi, cutsq, i, cand_o, no);
      ng = scan(&nl->ghosts, gs[lo], gs[hi], xi, yi, zi, cutsq, -1, cand_g, ng);
    }
    if (rc == WF_OK) rc = overlap_check(nl, a, i, cand_o, no, st);
    if (rc == WF_OK) rc = overlap_check(nl, a, i, cand_g, ng, st);
    if (rc == WF_OK && list_reserve(nl, n + (size_t)no + (size_t)ng, st) != WF_OK) rc = st->code;
    if (rc != WF_OK) break;
    /* owned neighbours first, then the ghosts */
    if (no > 0) memcpy(nl->list + n, cand_o, (size_t)no * sizeof *cand_o);
    n += (size_t)no;
    nl->half_end[i] = (int)n;
    if (ng > 0) memcpy(nl->list + n, cand_g, (size_t)ng * sizeof *cand_g);
    n += (size_t)ng;
  }
  free(cand_o), free(cand_g);
  if (rc == WF_OK) {
    nl->first[nlocal] = (int)n;
    if (nlocal > 0) memcpy(nl->x_hold, a->x, (size_t)nlocal * sizeof *a->x);
    nl->builds++;
    nl->pairs = (long long)n;
  }
  wf_status_agree(d->comm, st);
  return st->code;
}

bool md_neigh_stale(const md_neigh *nl, const md_atoms *a, wf_fabric *fab) {
  const double trigger = 0.25 * nl->skin * nl->skin;
  int moved = 0;
  for (int i = 0; i < a->nlocal && !moved; i++) {
    double dx = a->x[i][0] - nl->x_hold[i][0], dy = a->x[i][1] - nl->x_hold[i][1],
           dz = a->x[i][2] - nl->x_hold[i][2];
    moved = dx * dx + dy * dy + dz * dz > trigger;
  }
  double any = moved;
  wf_fabric_allreduce(fab, &any, 1, WF_MAX);
  return any > 0;
}
