/* A compressed operator in HDF5, so that a compression (minutes at scale)
 * is done once and reused, by any number of ranks.
 *
 * Per matrix `tag` (one per frequency): `ranks_<tag>` [mt][nt] int64, every
 * tile's rank; `U_<tag>` [.][2] float32, the U bases of the tiles in tile-row
 * order (tile (0,0), (0,1), ...), each m_i x k_ij column-major, as (re, im)
 * pairs (numpy: .view(np.complex64)); `W_<tag>` the same for the W bases in
 * tile-column order ((0,0), (1,0), ...), each n_j x k_ij; the attribute
 * `norm_<tag>` (||A||_F). Each rank's stacked bases are contiguous pieces
 * of those orders, so it reads and writes them as ranges of rows. The
 * workload adds `sources` and `receivers` ([N][3], [M][3] float64: each
 * column's and row's position in matrix order) for survey operators. */
#ifndef TL_IO_H
#define TL_IO_H

#include "tl_matrix.h"
#include "wf_error.h"
#include "wf_h5.h"

/* Collective. `a` is unchanged afterwards (its U bases are put in the
 * files' order for the write, and back). */
int tl_io_write(wf_h5file *f, const char *tag, tl_matrix *a, double norm, wf_status *st);
/* Reads matrix `tag` of `path` for layout `l` into `a` (allocated here).
 * Input errors: missing or mis-shaped datasets, ranks out of range. */
int tl_io_read(MPI_Comm comm, const char *path, const char *tag, const tl_layout *l, tl_matrix *a,
               double *norm, wf_status *st);

#endif
