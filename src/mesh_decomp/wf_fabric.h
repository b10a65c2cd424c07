/* The fabric: counters of every word moved between PEs, and the fabric's
 * collectives (row/column broadcast, grid-wide reductions), each measured on
 * the cluster and projected onto the wafer by the cost model.
 *
 * Per-PE data passed to the collectives is a rank's block of nx*ny elements,
 * x fastest, without halo cells. */
#ifndef WF_FABRIC_H
#define WF_FABRIC_H

#include <mpi.h>
#include <stddef.h>

#include "wf_decomp.h"
#include "wf_grid.h"
#include "wf_hw.h"

typedef struct wf_fabric_counters {
  long long ops;              /* halo exchanges and collectives */
  long long words_intra;      /* 32-bit words between PEs of this rank: free, but counted */
  long long words_inter;      /* words this rank's PEs received from other ranks */
  long long mpi_bytes;        /* bytes this rank received through MPI from other ranks */
  double model_cycles;        /* projected wafer cycles of all these operations */
  double seconds;             /* wall time spent in fabric calls on this rank */
} wf_fabric_counters;

typedef struct wf_fabric {
  const wf_decomp *dc;
  const wf_grid *grid;
  const wf_hw *hw;
  MPI_Comm row_comm; /* ranks sharing this rank's band of PE rows (rank = cx) */
  MPI_Comm col_comm; /* ranks sharing this rank's band of PE columns (rank = cy) */
  wf_fabric_counters c;
} wf_fabric;

typedef enum { WF_SUM, WF_MAX } wf_reduce_op;

void wf_fabric_create(wf_fabric *f, const wf_decomp *dc, const wf_grid *grid, const wf_hw *hw);
void wf_fabric_free(wf_fabric *f);

/* `vals`: this rank's partial results (already reduced over its PEs); on
 * return, the grid-wide result, on every rank. */
void wf_fabric_allreduce(wf_fabric *f, double *vals, int n, wf_reduce_op op);
/* As allreduce, but the result is defined only on the rank owning PE (0, 0). */
void wf_fabric_reduce(wf_fabric *f, double *vals, int n, wf_reduce_op op);
/* Every PE (i, j) gets the element of PE (root_x, j) of its row. */
void wf_fabric_bcast_row(wf_fabric *f, void *block, size_t elem_bytes, int root_x);
/* Every PE (i, j) gets the element of PE (i, root_y) of its column. */
void wf_fabric_bcast_col(wf_fabric *f, void *block, size_t elem_bytes, int root_y);

/* Sum the counters over all ranks (collective). */
wf_fabric_counters wf_fabric_totals(const wf_fabric *f);

#endif
