/* The vectorised loops of an EAM force evaluation: the neighbour list's
 * pairs within the cutoff, and the per-pair table terms of a one-element
 * potential over a block of distances at a time (everything of a pair that
 * depends on r alone: the table position, the cubics, 1/r). eam_force.c
 * sums the terms per atom in the list's order, so every variant gives the
 * scalar code's bits. */
#ifndef EAM_SIMD_H
#define EAM_SIMD_H

#include "md_atoms.h" /* md_vec */

/* Distances and outputs are padded to a multiple of this many entries: a
 * variant reads and writes whole vectors past `count` (the entries past it
 * are readable, their results ignored). */
#define EAM_SIMD_PAD 8

/* One element's tables: rho(r) and r phi(r) on the same r grid of n nodes. */
typedef struct eam_simd_tables {
  const double (*rho)[7], (*z2r)[7];
  double inv_delta;
  int n;
} eam_simd_tables;

/* Of the pairs k < count: pass 1, r[k] = sqrt(r[k]) (r^2 in, r out) and
 * v[k] = rho(r); */
typedef void eam_density_terms_fn(const eam_simd_tables *t, double *r, int count, double *v);
/* pass 3, recip = 1/r, phi = r phi(r) / r, phip = phi'(r), rhop = rho'(r)
 * and rr = r * r (not rsq: the virial's r r f, to the bit). */
typedef void eam_force_terms_fn(const eam_simd_tables *t, const double *r, int count,
                                double *recip, double *phi, double *phip, double *rhop,
                                double *rr);

/* The list entries k0 <= k < k1 of atom i (at xi) within the cutoff, from
 * entry n on: j in cj, r^2 in crsq, in the list's order; returns the new n.
 * Writes up to EAM_SIMD_PAD entries past the returned n (junk). */
typedef int eam_compact_fn(const md_vec *x, const double xi[3], const int *list, int k0, int k1,
                           double cutsq, int *cj, double *crsq, int n);

typedef struct eam_simd_kernel {
  const char *name; /* "avx512", "avx2" or "scalar" */
  eam_compact_fn *compact;
  eam_density_terms_fn *density; /* NULL: none (the scalar variant) */
  eam_force_terms_fn *force;
} eam_simd_kernel;

/* The widest variant this CPU runs, or the one named (NULL if it is unknown
 * or this CPU lacks it). `want` NULL or "auto": the widest. */
const eam_simd_kernel *eam_simd_pick(const char *want);

#endif
