/* The wafer model of a TLR-MVM (docs/model.md, "TLR-MVM").
 *
 * Mapping (GB23's, as wafer lays it out): tile (i, j) sits on the PEs of
 * its place on the PE grid (tl_layout), both its bases together, so that
 * the reshuffle never leaves a PE. One product of every frequency a system
 * holds:
 *   1. x_j multicast from the middle of the PE columns of tile column j;
 *   2. each PE: yv = W^H x and y += U yv over its share of the bases: four
 *      real multiply-adds per complex base element, at the SIMD rate and
 *      the SRAM ports of the precision (wf_model_vec);
 *   3. the partial y_i reduced along the PE rows of tile row i into their
 *      middles (a tree, wf_model_segment_reduce_cycles).
 * The phases do not overlap (a conservative choice). Frequencies are split
 * evenly over `systems` wafers, which work at once; KAUST's byte count
 * over the modelled time is the bandwidth the wafers sustain. */
#ifndef TL_MODEL_H
#define TL_MODEL_H

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_range.h"

/* One frequency's matrix as the model sees it. */
typedef struct tl_model_case {
  int m, n, nb;    /* matrix and tile size */
  const int *rank; /* [mt * nt] tile ranks; NULL: every tile has rank `uniform_rank` */
  int uniform_rank;
  int frequencies; /* matrices of this shape (and ranks) */
  int systems;     /* wafers sharing them out */
} tl_model_case;

typedef struct tl_model {
  wf_range seconds;                   /* one product of every frequency, [fast, slow] */
  wf_range compute_seconds;           /* of which the busiest PE's multiply-adds */
  double bcast_cycles, reduce_cycles; /* per frequency */
  double pe_elements;                 /* complex base elements of the busiest PE, per frequency */
  double bytes_per_pe;                /* its bases for the system's frequencies, and its vectors */
  double kaust_bytes;                 /* KAUST's byte count of one product of every frequency */
  double flops;                       /* 8 per complex base element, every frequency */
  wf_range bandwidth;                 /* kaust_bytes / seconds: [slow, fast] in bytes/s */
  long long total_rank;               /* R of one frequency */
} tl_model;

/* KAUST's bytes of one MVM: complex float (2 R nb + M + N + 4 R). */
double tl_kaust_bytes(long long R, int nb, int m, int n);

/* The most bandwidth, by KAUST's count of the bases alone, `pes` PEs can
 * sustain: every PE streaming its bases at the multiply-adds' rate, the
 * fabric free. Bytes/s, [at the lowest clock, at the highest]. A ceiling:
 * any real product is slower. */
wf_range tl_model_bound(const wf_hw *hw, double pes, wf_prec p);

tl_model tl_model_mvm(const wf_hw *hw, const wf_grid *g, int pe_nx, int pe_ny,
                      const tl_model_case *c, wf_prec p);

#endif
