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

/* The passes, inlined into eam_compute's per-CPU clones (WF_HOT). */
#define PASS static inline __attribute__((always_inline))

/* Pairs whose table terms are computed in one go: the terms of a block of
 * atoms stay in the first-level cache until they are summed. */
#define BLOCK_PAIRS 512
#define TERMS_ARRAYS 5

int eam_work_reserve(eam_work *w, const md_neigh *nl, int nlocal, wf_status *st) {
  /* the compaction writes, and the table terms read, whole vectors past the end */
  size_t entries = (size_t)nl->first[nlocal] + EAM_SIMD_PAD;
  int longest = 0; /* a block holds at least one atom's run */
  for (int i = 0; i < nlocal; i++) {
    const int run = nl->first[i + 1] - nl->first[i];
    longest = longest > run ? longest : run;
  }
  const size_t atoms = (size_t)nlocal + 1;
  const int block = (longest > BLOCK_PAIRS ? longest : BLOCK_PAIRS) + EAM_SIMD_PAD;
  if (entries > w->cap) {
    size_t cap = entries + entries / 4;
    if (md_grow((void **)&w->j, cap * sizeof *w->j) || md_grow((void **)&w->r, cap * sizeof *w->r))
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %zu pairs", cap);
    w->cap = cap;
  }
  if (nlocal + 1 > w->atom_cap) {
    if (md_grow((void **)&w->first, atoms * sizeof *w->first) ||
        md_grow((void **)&w->half_end, atoms * sizeof *w->half_end))
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d atoms", nlocal);
    w->atom_cap = nlocal + 1;
  }
  if (block > w->block_cap) {
    if (md_grow((void **)&w->terms, (size_t)block * TERMS_ARRAYS * sizeof *w->terms))
      return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a block of %d pairs", block);
    w->block_cap = block;
  }
  return WF_OK;
}

void eam_work_free(eam_work *w) {
  free(w->j), free(w->r), free(w->first), free(w->half_end), free(w->terms);
  memset(w, 0, sizeof *w);
}

/* The pairs of the neighbour list within the cutoff, with their distance:
 * the list holds pairs out to cutoff + skin, and both passes below would
 * otherwise test them all. */
PASS void compact(const eam_potential *pot, const md_neigh *nl, const md_atoms *a, eam_work *w) {
  const double cutsq = pot->cut * pot->cut;
  int n = 0;
  for (int i = 0; i < a->nlocal; i++) {
    w->first[i] = n;
    n = w->kernel->compact(a->x, a->x[i], nl->list, nl->first[i], nl->half_end[i], cutsq, w->j,
                           w->r, n);
    w->half_end[i] = n;
    n = w->kernel->compact(a->x, a->x[i], nl->list, nl->half_end[i], nl->first[i + 1], cutsq,
                           w->j, w->r, n);
  }
  w->first[a->nlocal] = n;
  w->pairs = n;
  /* read by the last block's whole vectors, results unused: a distance the
   * tables take (junk could index them anywhere) */
  for (int k = n; k < n + EAM_SIMD_PAD; k++) w->r[k] = 1.0;
}

/* The owned atoms [i0, end) whose pairs fit a block of terms (at least one). */
static int block_end(const eam_work *w, int i0, int nlocal) {
  int i1 = i0 + 1;
  while (i1 < nlocal && w->first[i1 + 1] - w->first[i0] <= BLOCK_PAIRS) i1++;
  return i1;
}

static eam_simd_tables one_element(const eam_potential *pot) {
  return (eam_simd_tables){pot->rhor[0].c, pot->z2r[0].c, pot->rhor[0].inv_delta, pot->nr};
}

/* Pass 1 with a terms kernel (one element): host densities of the owned
 * atoms (ghosts' rho is scratch); rho(r) is the same for both atoms of a
 * pair. In every variant the stored r^2 become r, for pass 3. */
PASS void density_one(const eam_potential *pot, md_atoms *a, const eam_work *w) {
  const eam_simd_tables t = one_element(pot);
  const int nlocal = a->nlocal, *restrict cj = w->j;
  double *restrict v = w->terms, *restrict rho = a->rho;
  memset(rho, 0, (size_t)(nlocal + a->nghost) * sizeof *rho);
  for (int i0 = 0, i1; i0 < nlocal; i0 = i1) {
    i1 = block_end(w, i0, nlocal);
    const int base = w->first[i0];
    w->kernel->density(&t, w->r + base, w->first[i1] - base, v);
    for (int i = i0; i < i1; i++) {
      double rhoi = 0;
      for (int k = w->first[i]; k < w->first[i + 1]; k++) {
        rhoi += v[k - base];
        rho[cj[k]] += v[k - base]; /* ghosts: discarded */
      }
      rho[i] += rhoi;
    }
  }
}

/* Pass 1 without a terms kernel: the table looked up pair by pair (the
 * lookups hide the loads' latency).
 * `one_species`: every atom is element 0, so rho_i(r) = rho_j(r) and one
 * table row serves both atoms of a pair. */
PASS void density_fused(const eam_potential *pot, md_atoms *a, eam_work *w,
                        const bool one_species) {
  const int nlocal = a->nlocal, n = pot->nr;
  const double inv = pot->rhor[0].inv_delta;
  const int *restrict type = a->type, *restrict cj = w->j;
  double *restrict cr = w->r, *restrict rho = a->rho;
  memset(rho, 0, (size_t)(nlocal + a->nghost) * sizeof *rho);
  for (int i = 0; i < nlocal; i++) {
    const int ti = type[i];
    double rhoi = 0;
    for (int k = w->first[i]; k < w->first[i + 1]; k++) {
      const int j = cj[k];
      const double r = sqrt(cr[k]);
      cr[k] = r; /* for the force pass */
      double p;
      const int m = node(r, inv, n, &p);
      if (one_species) {
        const double v = value(pot->rhor[0].c[m], p);
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

/* The force of a pair on atom i (and minus it on j) along (dx, dy, dz). */
static inline void kick(double fpair, double dx, double dy, double dz, double *fi, double *fj) {
  fi[0] += dx * fpair, fi[1] += dy * fpair, fi[2] += dz * fpair;
  if (fj) fj[0] -= dx * fpair, fj[1] -= dy * fpair, fj[2] -= dz * fpair;
}

/* Pass 3 with a terms kernel (one element): forces, pair energy and virial; owned-ghost pairs
 * count half. The pair's table terms come from the kernel, a block at a time. */
PASS void forces_one(const eam_potential *pot, md_atoms *a, const eam_work *w, eam_sums *sums) {
  const eam_simd_tables t = one_element(pot);
  const int nlocal = a->nlocal, *restrict cj = w->j, cap = w->block_cap;
  const md_vec *restrict x = a->x;
  md_vec *restrict f = a->f;
  const double *restrict fp = a->fp;
  double *restrict recip = w->terms, *restrict phi = recip + cap, *restrict phip = phi + cap;
  double *restrict rhop = phip + cap, *restrict rr = rhop + cap;
  double epair = 0, virial = 0;
  memset(f, 0, (size_t)nlocal * sizeof *f);
  for (int i0 = 0, i1; i0 < nlocal; i0 = i1) {
    i1 = block_end(w, i0, nlocal);
    const int base = w->first[i0];
    w->kernel->force(&t, w->r + base, w->first[i1] - base, recip, phi, phip, rhop, rr);
    for (int i = i0; i < i1; i++) {
      const double xi = x[i][0], yi = x[i][1], zi = x[i][2], fpi = fp[i];
      double fi[3] = {0, 0, 0};
      for (int half = 0; half < 2; half++) {
        const bool owned = half == 0;
        const int k0 = owned ? w->first[i] : w->half_end[i];
        const int k1 = owned ? w->half_end[i] : w->first[i + 1];
        double e = 0, vir = 0;
        for (int k = k0; k < k1; k++) {
          const int j = cj[k], q = k - base;
          const double psip = (fpi + fp[j]) * rhop[q] + phip[q], fpair = -psip * recip[q];
          kick(fpair, xi - x[j][0], yi - x[j][1], zi - x[j][2], fi, owned ? f[j] : NULL);
          e += phi[q];
          vir += rr[q] * fpair;
        }
        epair += owned ? e : 0.5 * e;
        virial += owned ? vir : 0.5 * vir;
      }
      f[i][0] += fi[0], f[i][1] += fi[1], f[i][2] += fi[2];
    }
  }
  sums->pair = epair;
  sums->virial = virial;
}

/* Pass 3 without a terms kernel, pair by pair. */
PASS void forces_fused(const eam_potential *pot, md_atoms *a, const eam_work *w, eam_sums *sums,
                       const bool one_species) {
  const int nlocal = a->nlocal, n = pot->nr;
  const double inv = pot->rhor[0].inv_delta;
  const md_vec *restrict x = a->x;
  md_vec *restrict f = a->f;
  const int *restrict type = a->type, *restrict cj = w->j;
  const double *restrict cr = w->r, *restrict fp = a->fp;
  double epair = 0, virial = 0;
  memset(f, 0, (size_t)nlocal * sizeof *f);
  for (int i = 0; i < nlocal; i++) {
    const double xi = x[i][0], yi = x[i][1], zi = x[i][2], fpi = fp[i];
    const int ti = type[i];
    double fi[3] = {0, 0, 0};
    for (int half = 0; half < 2; half++) {
      const bool owned = half == 0;
      const int k0 = owned ? w->first[i] : w->half_end[i];
      const int k1 = owned ? w->half_end[i] : w->first[i + 1];
      double e = 0, vir = 0;
      for (int k = k0; k < k1; k++) {
        const int j = cj[k], tj = type[j];
        const double r = cr[k], recip = 1.0 / r;
        double p, psip;
        const int m = node(r, inv, n, &p);
        const double *cz = pot->z2r[one_species ? 0 : eam_pair(ti, tj)].c[m];
        const double z2 = value(cz, p), z2p = slope(cz, p);
        const double phi = z2 * recip, phip = z2p * recip - phi * recip;
        if (one_species) {
          psip = (fpi + fp[j]) * slope(pot->rhor[0].c[m], p) + phip;
        } else {
          const double rhojp = slope(pot->rhor[tj].c[m], p);
          const double rhoip = slope(pot->rhor[ti].c[m], p);
          psip = fpi * rhojp + fp[j] * rhoip + phip;
        }
        const double fpair = -psip * recip;
        kick(fpair, xi - x[j][0], yi - x[j][1], zi - x[j][2], fi, owned ? f[j] : NULL);
        e += phi;
        vir += r * r * fpair;
      }
      epair += owned ? e : 0.5 * e;
      virial += owned ? vir : 0.5 * vir;
    }
    f[i][0] += fi[0], f[i][1] += fi[1], f[i][2] += fi[2];
  }
  sums->pair = epair;
  sums->virial = virial;
}

/* One element with a terms kernel: the pairs' table terms a block at a time,
 * then summed pair by pair; otherwise the fused loops. */
WF_HOT void eam_compute(const eam_potential *pot, const md_neigh *nl, md_domain *d, md_atoms *a,
                        eam_work *w, eam_sums *sums) {
  const bool one = pot->nelements == 1;
  compact(pot, nl, a, w);
  const bool blocks = one && w->kernel->density;
  if (blocks) density_one(pot, a, w);
  else if (one) density_fused(pot, a, w, true);
  else density_fused(pot, a, w, false);

  double embed = 0;
  for (int i = 0; i < a->nlocal; i++) embed += eam_embed(pot, a->type[i], a->rho[i], &a->fp[i]);
  sums->embed = embed;
  md_domain_forward_scalar(d, a->fp);

  if (blocks) forces_one(pot, a, w, sums);
  else if (one) forces_fused(pot, a, w, sums, true);
  else forces_fused(pot, a, w, sums, false);
}
