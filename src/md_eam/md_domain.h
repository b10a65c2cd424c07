/* The periodic box laid on the PE grid, and the atoms' traffic between ranks.
 *
 * The PE grid tiles the box in x and y; a PE owns the atoms of its column
 * (all z). A rank owns the atoms of its block of PEs, so its region is a
 * rectangle in x-y times the whole box in z. Ownership is decided by the PE
 * column index floor((x - lo) / len * pe_n), the same integer test on every
 * rank, so an atom on a boundary belongs to exactly one rank.
 *
 * Each rank keeps ghost copies of the atoms within `cutghost` (force cutoff
 * + skin) of its region, received in six swaps as LAMMPS's Comm::borders
 * does: low and high in x, then y (forwarding x ghosts, which covers the
 * corners), then z (always from itself: z is not split). A swap whose
 * partner is this rank is a copy with a periodic shift. Between neighbour
 * list builds the same swaps refresh the ghosts' positions and carry
 * per-atom values (the EAM embedding derivative). Every x and y swap, and
 * every migration, is the fabric's neighbour exchange (wf_fabric_exchange),
 * so its words are counted and modelled as all fabric traffic is. */
#ifndef MD_DOMAIN_H
#define MD_DOMAIN_H

#include <mpi.h>
#include <stdbool.h>

#include "md_atoms.h"
#include "md_fold.h"
#include "wf_decomp.h"
#include "wf_error.h"
#include "wf_fabric.h"

typedef struct md_box {
  double lo[3], len[3];
} md_box;

typedef struct md_swap {
  int dim;               /* 0, 1, 2 */
  int send_to;           /* rank; this rank for a self swap */
  double shift[3];       /* added to positions as they are sent */
  int *list, nsend, cap; /* local indices sent */
  int first, nrecv;      /* ghosts received: first .. first+nrecv-1 */
} md_swap;

typedef struct md_domain {
  MPI_Comm comm; /* the wafer's Cartesian communicator */
  int rank;
  md_box box;
  int pe_n[2];          /* PE grid */
  int pe_lo[2], pe_hi[2]; /* this rank's PE block, [lo, hi) */
  int rank_n[2], rank_c[2];
  double sub_lo[3], sub_hi[3]; /* this rank's region */
  double cutghost;
  md_swap swap[6];
  wf_fabric *fab;       /* the wafer's fabric: all traffic between ranks */
  wf_buffer local;      /* z swaps: packed and unpacked on this rank */
  wf_buffer refresh;    /* a forward swap's packed values (room made by borders) */
  wf_buffer migrate[2]; /* atoms leaving down (0) and up (1) one axis */
  /* mapping = fold: an atom stays on the PE the fold gives its lattice site,
   * so a rank's atoms are not a rectangle of space: its region is the
   * bounding box of its atoms, and what each swap sends is chosen against
   * the region of the atoms its partner needs (partner[k]: lo, hi along the
   * swap's axis, learnt from the neighbours at each rebuild) */
  bool fold_mode;
  md_fold fold;
  double partner[6][2];
} md_domain;

/* Check the box against the cutoffs and the rank blocks, and set up the
 * swaps. Errors are input errors with the numbers that fail. Collective. */
int md_domain_create(md_domain *d, wf_fabric *fab, const md_box *box, double cutforce,
                     double cutghost, wf_status *st);
void md_domain_free(md_domain *d);

/* Switch to the fold mapping (before the atoms are placed). */
void md_domain_set_fold(md_domain *d, const md_fold *fold);

/* PE column (axis 0) or row (axis 1) holding coordinate x. */
int md_domain_pe_of(const md_domain *d, int axis, double x);
/* True if this rank owns a point at x (PE test above). */
bool md_domain_owns(const md_domain *d, const double x[3]);
/* True if this rank owns atom `id` at x: by position, or by its folded PE. */
bool md_domain_owns_atom(const md_domain *d, int64_t id, const double x[3]);

/* Atoms per PE column: the largest count over the grid (collective), and the
 * fabric halo a PE needs, in PEs along x and y: ceil(cutghost / PE width). */
int md_domain_max_atoms_per_pe(const md_domain *d, const md_atoms *a);
void md_domain_halo_pes(const md_domain *d, int halo[2]);

/* Wrap owned atoms into the box and send those that left this rank's region
 * to the neighbour that owns them now. Ghosts are dropped. An atom that
 * moved further than one rank block is an error. (Fold mapping: atoms stay
 * where they are, unwrapped; every rank's region becomes the bounding box of
 * its atoms, learnt by its neighbours; a column or row of ranks two or more
 * over whose atoms come within cutghost of this rank's column's or row's is
 * an error. The lines' extents travel hop by hop (O(sqrt P) numbers): no
 * rank holds every rank's.)
 * Collective. */
int md_domain_migrate(md_domain *d, md_atoms *a, wf_status *st);
/* Build the ghosts (the six swaps' lists) from the owned atoms. Collective. */
int md_domain_borders(md_domain *d, md_atoms *a, wf_status *st);
/* Refresh the ghosts' positions from their owners (same lists): one
 * message each way per x and y swap, no global step, cannot fail.
 * Collective over the neighbours. */
void md_domain_forward_x(md_domain *d, md_atoms *a);
/* Copy a per-atom value (one double) from owners to ghosts, likewise. */
void md_domain_forward_scalar(md_domain *d, double *value);

#endif
