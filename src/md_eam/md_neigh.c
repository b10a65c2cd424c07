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
  free(nl->bin_start), free(nl->bin_ghosts), free(nl->bin_atoms), free(nl->atom_bin), free(nl->stencil);
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
 * a valid bin: the stencil is a list of linear offsets. */
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
    if (grow_int(&nl->bin_start, (size_t)nbins + 1, st) != WF_OK ||
        grow_int(&nl->bin_ghosts, (size_t)nbins + 1, st) != WF_OK)
      return st->code;
    nl->bin_cap = nbins + 1;
  }
  int span = (2 * reach[0] + 1) * (2 * reach[1] + 1) * (2 * reach[2] + 1);
  if (grow_int(&nl->stencil, (size_t)span, st) != WF_OK) return st->code;
  nl->nstencil = 0;
  for (int k = -reach[2]; k <= reach[2]; k++)
    for (int j = -reach[1]; j <= reach[1]; j++)
      for (int i = -reach[0]; i <= reach[0]; i++) {
        /* closest approach of two points in bins i, j, k apart */
        double gap[3] = {fmax(0, abs(i) - 1) / nl->bin_inv[0], fmax(0, abs(j) - 1) / nl->bin_inv[1],
                         fmax(0, abs(k) - 1) / nl->bin_inv[2]};
        if (gap[0] * gap[0] + gap[1] * gap[1] + gap[2] * gap[2] < nl->cutneigh * nl->cutneigh)
          nl->stencil[nl->nstencil++] = (k * nl->nbin[1] + j) * nl->nbin[0] + i;
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
    if (grow_int(&nl->bin_atoms, (size_t)n, st) != WF_OK ||
        grow_int(&nl->atom_bin, (size_t)n, st) != WF_OK)
      return st->code;
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
  /* within a bin, atoms are in index order: owned first, then ghosts */
  for (int b = 0; b < nbins; b++) {
    int p = nl->bin_start[b];
    while (p < nl->bin_start[b + 1] && nl->bin_atoms[p] < a->nlocal) p++;
    nl->bin_ghosts[b] = p;
  }
  return WF_OK;
}

int md_neigh_sort(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st) {
  int n = a->nlocal;
  if (setup_bins(nl, d, st) != WF_OK || bin_atoms(nl, a, n, st) != WF_OK) return st->code;
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
  int *ghosts = NULL, ghost_cap = 0;
  const double cutsq = nl->cutneigh * nl->cutneigh, oversq = nl->overlap * nl->overlap;
  size_t n = 0;
  for (int i = 0; rc == WF_OK && i < nlocal; i++) {
    nl->first[i] = (int)n;
    const double xi = a->x[i][0], yi = a->x[i][1], zi = a->x[i][2];
    const int bi = nl->atom_bin[i];
    int ng = 0;
    for (int s = 0; s < nl->nstencil && rc == WF_OK; s++) {
      /* Owned atoms are in bin order (md_neigh_sort), so those in bins
       * behind this one have smaller indices: there, only ghosts count. */
      const int off = nl->stencil[s], b = bi + off;
      const int from = off < 0 ? nl->bin_ghosts[b] : nl->bin_start[b];
      for (int p = from; p < nl->bin_start[b + 1]; p++) {
        const int j = nl->bin_atoms[p];
        if (j <= i) continue;
        double dx = xi - a->x[j][0], dy = yi - a->x[j][1], dz = zi - a->x[j][2];
        double rsq = dx * dx + dy * dy + dz * dz;
        if (rsq >= cutsq) continue;
        if (rsq < oversq) {
          rc = wf_fail(st, WF_ERR_INPUT,
                       "atoms %lld and %lld are %.4g A apart, closer than eam.overlap = %g A: "
                       "overlapping atoms",
                       (long long)a->id[i], (long long)a->id[j], sqrt(rsq), nl->overlap);
          break;
        }
        if (j < nlocal) {
          if (list_reserve(nl, n + 1, st) != WF_OK) {
            rc = st->code;
            break;
          }
          nl->list[n++] = j;
        } else {
          if (ng == ghost_cap && grow_int(&ghosts, (size_t)(ghost_cap = 2 * ghost_cap + 64), st)) {
            rc = st->code;
            break;
          }
          ghosts[ng++] = j;
        }
      }
    }
    nl->half_end[i] = (int)n;
    if (rc == WF_OK && list_reserve(nl, n + (size_t)ng, st) != WF_OK) rc = st->code;
    if (rc == WF_OK) memcpy(nl->list + n, ghosts, (size_t)ng * sizeof *ghosts), n += (size_t)ng;
  }
  free(ghosts);
  if (rc == WF_OK) {
    nl->first[nlocal] = (int)n;
    memcpy(nl->x_hold, a->x, (size_t)nlocal * sizeof *a->x);
    nl->builds++;
    nl->pairs = (long long)n;
  }
  wf_status_agree(d->comm, st);
  return st->code;
}

bool md_neigh_stale(const md_neigh *nl, const md_atoms *a, MPI_Comm comm) {
  const double trigger = 0.25 * nl->skin * nl->skin;
  int moved = 0;
  for (int i = 0; i < a->nlocal && !moved; i++) {
    double dx = a->x[i][0] - nl->x_hold[i][0], dy = a->x[i][1] - nl->x_hold[i][1],
           dz = a->x[i][2] - nl->x_hold[i][2];
    moved = dx * dx + dy * dy + dz * dz > trigger;
  }
  int any;
  MPI_Allreduce(&moved, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}
