/* EAM forces (eam_force.h): the three passes of LAMMPS's pair_style eam over the neighbour
 * list (host densities, embedding terms sent to the ghosts, pair forces), the energy and
 * virial sums, and the scratch of pairs within the cutoff. */
#include "eam_force.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wf_config.h" /* WF_HOT */

/* Where r falls in a table of n nodes: node m (1-based, LAMMPS's) and the
 * fraction p in [0, 1] within it, with LAMMPS's clamping at the table's end.
 * r >= 0, so m >= 1. Every r-table of a potential has the same grid. */
static inline int node(double r, double inv_delta, int n, double *p) {
  double q = r * inv_delta + 1.0;
  int m = (int)q;
  m = m < n - 1 ? m : n - 1;
  q -= m;
  *p = q < 1.0 ? q : 1.0;
  return m;
}

static inline double value(const double *c, double p) {
  return ((c[3] * p + c[4]) * p + c[5]) * p + c[6];
}
static inline double slope(const double *c, double p) { return (c[0] * p + c[1]) * p + c[2]; }

int eam_work_reserve(eam_work *w, const md_neigh *nl, int nlocal, wf_status *st) {
  size_t entries = (size_t)nl->first[nlocal] + 1; /* +1: the compaction writes one past */
  if (entries > w->cap) {
    size_t cap = entries + entries / 4;
    int *j = realloc(w->j, cap * sizeof *j);
    double *r = j ? realloc(w->r, cap * sizeof *r) : NULL;
    if (j) w->j = j;
    if (r) w->r = r;
    if (!j || !r) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %zu pairs", cap);
    w->cap = cap;
  }
  if (nlocal + 1 > w->atom_cap) {
    int *f = realloc(w->first, ((size_t)nlocal + 1) * sizeof *f);
    int *h = f ? realloc(w->half_end, ((size_t)nlocal + 1) * sizeof *h) : NULL;
    if (f) w->first = f;
    if (h) w->half_end = h;
    if (!f || !h) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d atoms", nlocal);
    w->atom_cap = nlocal + 1;
  }
  return WF_OK;
}

void eam_work_free(eam_work *w) {
  free(w->j), free(w->r), free(w->first), free(w->half_end);
  memset(w, 0, sizeof *w);
}

/* The pairs of the neighbour list within the cutoff, with their distance:
 * the list holds pairs out to cutoff + skin, and both passes below would
 * otherwise test them all. Branch-free: every entry is written, the count
 * advances only for those inside. */
static inline int compact_run(const md_vec *restrict x, const double xi[3], const int *restrict list,
                              int k0, int k1, double cutsq, int *restrict cj, double *restrict cr,
                              int n) {
  for (int k = k0; k < k1; k++) {
    const int j = list[k];
    const double dx = xi[0] - x[j][0], dy = xi[1] - x[j][1], dz = xi[2] - x[j][2];
    const double rsq = dx * dx + dy * dy + dz * dz;
    cj[n] = j;
    cr[n] = rsq;
    n += rsq < cutsq;
  }
  return n;
}

static void compact(const eam_potential *pot, const md_neigh *nl, const md_atoms *a,
                    eam_work *w) {
  const double cutsq = pot->cut * pot->cut;
  int n = 0;
  for (int i = 0; i < a->nlocal; i++) {
    w->first[i] = n;
    n = compact_run(a->x, a->x[i], nl->list, nl->first[i], nl->half_end[i], cutsq, w->j, w->r, n);
    w->half_end[i] = n;
    n = compact_run(a->x, a->x[i], nl->list, nl->half_end[i], nl->first[i + 1], cutsq, w->j, w->r,
                    n);
  }
  w->first[a->nlocal] = n;
  w->pairs = n;
}

/* Pass 1: host densities of the owned atoms (ghosts' rho is scratch); the
 * stored r^2 become r. `one_species`: every atom is element 0, so
 * rho_i(r) = rho_j(r) and one table row serves both atoms of a pair. */
static inline __attribute__((always_inline)) void density(const eam_potential *pot, md_atoms *a,
                                                          eam_work *w, const bool one_species) {
  const int nlocal = a->nlocal, n = pot->nr;
  const double inv = pot->rhor[0].inv_delta;
  const int *restrict type = a->type, *restrict cj = w->j;
  double *restrict cr = w->r, *restrict rho = a->rho;
  const double(*rho0)[7] = pot->rhor[0].c;
  memset(rho, 0, (size_t)(nlocal + a->nghost) * sizeof *rho);
  for (int i = 0; i < nlocal; i++) {
    const int ti = type[i];
    double rhoi = 0;
    for (int k = w->first[i]; k < w->first[i + 1]; k++) {
      const int j = cj[k];
      const double r = sqrt(cr[k]);
      cr[k] = r;
      double p;
      const int m = node(r, inv, n, &p);
      if (one_species) {
        const double v = value(rho0[m], p);
        rhoi += v;
        rho[j] += v; /* ghosts: discarded */
      } else {
        rhoi += value(pot->rhor[type[j]].c[m], p);
        rho[j] += value(pot->rhor[ti].c[m], p);
      }
    }
    rho[i] += rhoi;
  }
}

/* Pass 3: forces, pair energy and virial; owned-ghost pairs count half. */
static inline __attribute__((always_inline)) void forces(const eam_potential *pot, md_atoms *a,
                                                         const eam_work *w, eam_sums *sums,
                                                         const bool one_species) {
  const int nlocal = a->nlocal, n = pot->nr;
  const double inv = pot->rhor[0].inv_delta;
  const md_vec *restrict x = a->x;
  md_vec *restrict f = a->f;
  const int *restrict type = a->type, *restrict cj = w->j;
  const double *restrict cr = w->r, *restrict fp = a->fp;
  const double(*rho0)[7] = pot->rhor[0].c, (*z2r0)[7] = pot->z2r[0].c;
  double epair = 0, virial = 0;
  memset(f, 0, (size_t)nlocal * sizeof *f);
  for (int i = 0; i < nlocal; i++) {
    const double xi = x[i][0], yi = x[i][1], zi = x[i][2], fpi = fp[i];
    const int ti = type[i];
    double fxi = 0, fyi = 0, fzi = 0;
    for (int half = 0; half < 2; half++) {
      const bool owned = half == 0;
      const int k0 = owned ? w->first[i] : w->half_end[i];
      const int k1 = owned ? w->half_end[i] : w->first[i + 1];
      double e = 0, vir = 0;
      for (int k = k0; k < k1; k++) {
        const int j = cj[k];
        const double r = cr[k], recip = 1.0 / r;
        const double dx = xi - x[j][0], dy = yi - x[j][1], dz = zi - x[j][2];
        double p, psip;
        const int m = node(r, inv, n, &p);
        const int tj = type[j];
        const double *cz = one_species ? z2r0[m] : pot->z2r[eam_pair(ti, tj)].c[m];
        const double z2 = value(cz, p), z2p = slope(cz, p);
        const double phi = z2 * recip, phip = z2p * recip - phi * recip;
        if (one_species) {
          psip = (fpi + fp[j]) * slope(rho0[m], p) + phip;
        } else {
          const double rhojp = slope(pot->rhor[tj].c[m], p), rhoip = slope(pot->rhor[ti].c[m], p);
          psip = fpi * rhojp + fp[j] * rhoip + phip;
        }
        const double fpair = -psip * recip;
        fxi += dx * fpair, fyi += dy * fpair, fzi += dz * fpair;
        if (owned) f[j][0] -= dx * fpair, f[j][1] -= dy * fpair, f[j][2] -= dz * fpair;
        e += phi;
        vir += r * r * fpair;
      }
      epair += owned ? e : 0.5 * e;
      virial += owned ? vir : 0.5 * vir;
    }
    f[i][0] += fxi, f[i][1] += fyi, f[i][2] += fzi;
  }
  sums->pair = epair;
  sums->virial = virial;
}

WF_HOT void eam_compute(const eam_potential *pot, const md_neigh *nl, md_domain *d, md_atoms *a,
                        eam_work *w, eam_sums *sums) {
  const bool one = pot->nelements == 1;
  compact(pot, nl, a, w);
  if (one) density(pot, a, w, true);
  else density(pot, a, w, false);

  double embed = 0;
  for (int i = 0; i < a->nlocal; i++) embed += eam_embed(pot, a->type[i], a->rho[i], &a->fp[i]);
  sums->embed = embed;
  md_domain_forward_scalar(d, a->fp);

  if (one) forces(pot, a, w, sums, true);
  else forces(pot, a, w, sums, false);
}
