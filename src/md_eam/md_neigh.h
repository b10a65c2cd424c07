/* Neighbour lists: for each owned atom i, its neighbours within cutoff + skin
 * in two runs: owned atoms j > i (each owned pair once, a half list), then
 * ghosts (each owned-ghost pair from this side only: the ghost's owner
 * computes its own half, so no forces travel back between ranks). Built
 * from bins of half the neighbour cutoff, as LAMMPS's `neighbor bin`, scanned
 * a row of bins at a time with a branch-free distance test; the owned atoms
 * are first sorted by bin so that neighbours sit close in memory, and so
 * that the owned atoms after i are the ones after it in the bins (a half
 * list scans only those).
 * A list stays valid until some atom has moved more than half the skin. */
#ifndef MD_NEIGH_H
#define MD_NEIGH_H

#include <mpi.h>
#include <stdbool.h>

#include "md_atoms.h"
#include "md_domain.h"
#include "wf_error.h"

/* Some atoms by bin: bin b holds atoms[start[b] .. start[b + 1]), in index
 * order, at positions x[start[b] ..] (streamed by the build). */
typedef struct md_bins {
  int *start, *atoms;
  md_vec *x;
  int atom_cap;
} md_bins;

typedef struct md_neigh {
  double cutneigh, skin, overlap;
  /* bins over the region plus its ghost shell, of the owned atoms and of
   * the ghosts apart: the owned atoms sorted by bin, a half list takes from
   * each row of bins the owned atoms after i, and every ghost */
  double bin_lo[3], bin_inv[3];
  int nbin[3];
  md_bins owned, ghosts;
  int *atom_bin, bin_of_cap; /* every atom's bin */
  int nstencil, *stencil; /* rows: first and last linear bin offset */
  int bin_cap;
  /* the list: owned atom i's neighbours are list[first[i] .. first[i+1]),
   * the owned ones first, up to half_end[i] */
  int *first, *half_end, *list;
  size_t list_cap;
  md_vec *x_hold; /* owned positions at the last build */
  int hold_cap;
  long builds;
  long long pairs; /* entries in the last list */
} md_neigh;

void md_neigh_init(md_neigh *nl, double cutforce, double skin, double overlap);
void md_neigh_free(md_neigh *nl);

/* Reorder the owned atoms by bin (ties by id), so that the order depends on
 * the atoms alone, not on their history. Call between migrate and borders. */
int md_neigh_sort(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st);
/* Build the lists from owned and ghost atoms. Two atoms closer than
 * `overlap` are an error naming both. Collective (agrees on errors). */
int md_neigh_build(md_neigh *nl, const md_domain *d, md_atoms *a, wf_status *st);
/* True on every rank if some atom moved more than skin / 2 since the build:
 * the step's one global reduction between builds (the fabric's). */
bool md_neigh_stale(const md_neigh *nl, const md_atoms *a, wf_fabric *fab);

#endif
