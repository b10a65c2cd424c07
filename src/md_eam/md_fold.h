/* The wafer's own mapping of a crystal: one atom per PE.
 *
 * A crystal seen down z is a grid of atom columns (fcc: 2x2 per unit cell,
 * bcc: 2x1), each holding one atom per cell along z. Column (cx, cy) gets an
 * fx x fy tile of PEs (fx = ceil(sqrt(nz)), fy = ceil(nz / fx)), and layer k
 * of the column sits at PE (cx fx + k mod fx, cy fy + k div fx): atoms that
 * are neighbours in 3D stay a few hops apart. An atom keeps its PE for the
 * whole run, as on the wafer. */
#ifndef MD_FOLD_H
#define MD_FOLD_H

#include <stdint.h>

typedef struct md_fold {
  int nbasis, cells[3];
  int col_dx[4], col_dy[4]; /* column offset of each basis site within a cell */
  int fx, fy;               /* PE tile of one column */
  int pe_x, pe_y;           /* the PE grid: one PE per lattice site (some spare) */
} md_fold;

/* The basis of "fcc" (4 sites) or "bcc" (2), in units of the lattice
 * constant; returns the number of sites. A site's atom id is
 * ((k * cells_y + j) * cells_x + i) * nbasis + b + 1. (Here, not with the
 * lattices of md_system.h, which build on the domain and so on this.) */
int md_lattice_basis(const char *kind, const double (**basis)[3]);
/* The fold of an fcc or bcc crystal of cells[0] x cells[1] x cells[2] unit cells. */
md_fold md_fold_make(const char *kind, const int cells[3]);
/* The PE of the lattice site with this atom id. */
void md_fold_pe(const md_fold *f, int64_t id, int *x, int *y);

#endif
