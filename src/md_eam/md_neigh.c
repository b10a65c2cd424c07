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

void md_neigh_free(md_neigh *nl) {
  free(nl->bin_start), free(nl->bin_atoms), free(nl->atom_bin), free(nl->x_binned);
  free(nl->stencil);
  free(nl->first), free(nl->half_end), free(nl->list), free(nl->x_hold);
  memset(nl, 0, sizeof *nl);
}

static int grow_int(int **p, size_t n, wf_status *st) {
  int *q = realloc(*p, (n ? n : 1) * sizeof *q);
  if (!q) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for neighbour lists (%zu entries)", n);
  *p = q;
  return WF_OK;
}

/* Bins of at least cutneigh / 2 over the region and its ghost shell, padded
 * by the stencil's reach so that every stencil offset of an occupied bin is
 * a valid bin: the stencil is a list of rows of linear offsets. A row of bins
 * along x is one contiguous stretch of bin_atoms. */
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
    if (grow_int(&nl->bin_start, (size_t)nbins + 1, st) != WF_OK) return st->code;
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

/* Counting sort of atoms 0 .. n-1 by bin: bin b holds
 * bin_atoms[bin_start[b] .. bin_start[b+1]), in index order. */
static int bin_atoms(md_neigh *nl, const md_atoms *a, int n, wf_status *st) {
  if (n > nl->atom_cap) {
    md_vec *xs = realloc(nl->x_binned, (size_t)n * sizeof *xs);
    if (xs) nl->x_binned = xs;
    if (!xs || grow_int(&nl->bin_atoms, (size_t)n, st) != WF_OK ||
        grow_int(&nl->atom_bin, (size_t)n, st) != WF_OK)
      return st->code ? st->code : wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d atoms", n);
    nl->atom_cap = n;
  }
  int nbins = nl->nbin[0] * nl->nbin[1] * nl->nbin[2];
  memset(nl->bin_start, 0, ((size_t)nbins + 1) * sizeof *nl->bin_start);
  for (int i = 0; i < n; i++) {
    nl->atom_bin[i] = bin_of(nl, a->x[i]);
    nl->bin_start[nl->atom_bin[i] + 1]++;
  }
  for (int b = 0; b < nbins; b++) nl->bin_start[b + 1] += nl->bin_start[b];
  for (int i = 0; i < n; i++) nl->bin_atoms[nl->bin_start[nl->atom_bin[i]]++] = i;
  for (int b = nbins; b > 0; b--) nl->bin_start[b] = nl->bin_start[b - 1];
  nl->bin_start[0] = 0;
  for (int p = 0; p < n; p++) memcpy(nl->x_binned[p], a->x[nl->bin_atoms[p]], sizeof(md_vec));
  return WF_OK;
}

int md_neigh_sort(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st) {
  int n = a->nlocal;
  if (setup_bins(nl, d, st) != WF_OK || bin_atoms(nl, a, n, st) != WF_OK) return st->code;
  if (n == 0) return WF_OK;
  int *order = nl->bin_atoms;
  /* ties within a bin by id: insertion sort, bins hold a few atoms */
  int nbins = nl->nbin[0] * nl->nbin[1] * nl->nbin[2];
  for (int b = 0; b < nbins; b++)
    for (int p = nl->bin_start[b] + 1; p < nl->bin_start[b + 1]; p++) {
      int v = order[p], q = p;
      while (q > nl->bin_start[b] && a->id[order[q - 1]] > a->id[v]) order[q] = order[q - 1], q--;
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

int md_neigh_build(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st) {
  wf_status_clear(st);
  int nlocal = a->nlocal, nall = a->nlocal + a->nghost;
  int rc = setup_bins(nl, d, st);
  if (rc == WF_OK) rc = bin_atoms(nl, a, nall, st);
  if (rc == WF_OK && (grow_int(&nl->first, (size_t)nlocal + 1, st) != WF_OK ||
                      grow_int(&nl->half_end, (size_t)nlocal + 1, st) != WF_OK))
    rc = st->code;
  if (rc == WF_OK && nlocal > nl->hold_cap) {
    md_vec *h = realloc(nl->x_hold, (size_t)nlocal * sizeof *h);
    if (!h) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d positions", nlocal);
    else nl->x_hold = h, nl->hold_cap = nlocal;
  }
  /* candidates of one atom: places in bin_atoms within the cutoff */
  int *cand = NULL, cand_cap = 0;
  const double cutsq = nl->cutneigh * nl->cutneigh, oversq = nl->overlap * nl->overlap;
  const md_vec *xb = nl->x_binned;
  const int *ba = nl->bin_atoms;
  size_t n = 0;
  for (int i = 0; rc == WF_OK && i < nlocal; i++) {
    nl->first[i] = (int)n;
    const double xi = a->x[i][0], yi = a->x[i][1], zi = a->x[i][2];
    const int bi = nl->atom_bin[i];
    int nc = 0;
    for (int s = 0; s < nl->nstencil; s++) {
      /* one contiguous stretch per row; the half list keeps j > i */
      const int from = nl->bin_start[bi + nl->stencil[2 * s]];
      const int to = nl->bin_start[bi + nl->stencil[2 * s + 1] + 1];
      if (nc + (to - from) > cand_cap) {
        cand_cap = 2 * (nc + (to - from)) + 256;
        if (grow_int(&cand, (size_t)cand_cap, st) != WF_OK) { rc = st->code; break; }
      }
      for (int p = from; p < to; p++) { /* branch-free: keep p when inside */
        const double dx = xi - xb[p][0], dy = yi - xb[p][1], dz = zi - xb[p][2];
        const double rsq = dx * dx + dy * dy + dz * dz;
        cand[nc] = p;
        nc += (rsq < cutsq) & (ba[p] > i);
      }
    }
    for (int c = 0; rc == WF_OK && c < nc; c++) {
      const int p = cand[c];
      const double dx = xi - xb[p][0], dy = yi - xb[p][1], dz = zi - xb[p][2];
      if (dx * dx + dy * dy + dz * dz < oversq)
        rc = wf_fail(st, WF_ERR_INPUT,
                     "atoms %lld and %lld are %.4g A apart, closer than eam.overlap = %g A: "
                     "overlapping atoms",
                     (long long)a->id[i], (long long)a->id[ba[p]],
                     sqrt(dx * dx + dy * dy + dz * dz), nl->overlap);
    }
    if (rc == WF_OK && list_reserve(nl, n + (size_t)nc, st) != WF_OK) rc = st->code;
    if (rc != WF_OK) break;
    /* owned neighbours first, then the ghosts */
    for (int c = 0; c < nc; c++) {
      const int j = nl->bin_atoms[cand[c]];
      if (j < nlocal) nl->list[n++] = j;
    }
    nl->half_end[i] = (int)n;
    for (int c = 0; c < nc; c++) {
      const int j = nl->bin_atoms[cand[c]];
      if (j >= nlocal) nl->list[n++] = j;
    }
  }
  free(cand);
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
