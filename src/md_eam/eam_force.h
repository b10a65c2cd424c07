/* EAM forces in three passes, as LAMMPS's pair_style eam:
 *  1. host density rho_i = sum_j rho_j(r_ij) over the neighbour list;
 *  2. embedding energy F(rho_i) and F'(rho_i), sent to the ghosts (the one
 *     fabric exchange inside a force evaluation);
 *  3. forces from phi(r) and F'(rho) rho'(r) of both atoms of a pair.
 * Owned pairs are computed once and act on both atoms; an owned-ghost pair is
 * computed here for the owned atom only and counts half of its pair energy
 * and virial (the other half is the ghost's owner's). */
#ifndef EAM_FORCE_H
#define EAM_FORCE_H

#include "eam_potential.h"
#include "md_atoms.h"
#include "md_domain.h"
#include "md_neigh.h"
#include "eam_simd.h"

/* This rank's share of the potential energy and virial (sum of r . f over
 * pairs, eV), for the owned atoms. */
typedef struct eam_sums {
  double embed, pair, virial;
} eam_sums;

/* Floating-point operations of one force evaluation, counted from the code
 * (a square root or a division as one): a distance test per list entry; per
 * pair within the cutoff, the density term (table position, one cubic) and
 * the force term (1/r, two cubics and a slope, phi', the three components
 * on both atoms, energy and virial); per atom the embedding cubic and the two
 * half kicks. For the fraction of the machine's DGEMM rate in bench/eam. */
#define EAM_FLOPS_PER_ENTRY 8.0
#define EAM_FLOPS_PER_PAIR 58.0
#define EAM_FLOPS_PER_ATOM 30.0

/* Scratch of a force evaluation: the list's pairs within the cutoff (j and
 * r^2), per owned atom in the list's two runs; the table terms of a block of
 * them; the variant of the loops that compute those (eam_simd.h, set by the
 * caller). */
typedef struct eam_work {
  int *j;
  double *r; /* r^2, made r by the density pass; EAM_SIMD_PAD readable past the last */
  size_t cap;
  int *first, *half_end, atom_cap;
  long long pairs;
  double *terms;
  int block_cap;
  const eam_simd_kernel *kernel;
} eam_work;

/* Size the scratch for a freshly built list. */
int eam_work_reserve(eam_work *w, const md_neigh *nl, int nlocal, wf_status *st);
void eam_work_free(eam_work *w);

/* Forces into a->f (owned atoms), rho and fp on owned and ghost atoms.
 * Collective over the neighbours (the F' exchange); cannot fail. */
void eam_compute(const eam_potential *p, const md_neigh *nl, md_domain *d, md_atoms *a,
                 eam_work *w, eam_sums *sums);

#endif
