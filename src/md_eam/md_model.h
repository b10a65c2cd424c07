/* The wafer projection of an EAM run: one atom per PE, as the wafer-scale MD
 * work runs it (Santos et al., arXiv 2405.07898). docs/model.md, "EAM".
 *
 * The fold (md_fold.h) puts each lattice site on its own PE. Everything here
 * follows from the lattice, the cutoff and the skin, without a run: the
 * reach (hx, hy) is the largest hop distance between two sites within
 * cutoff + skin on the perfect lattice, so every PE's neighbour list can be
 * fed by a multicast over its (2hx+1) x (2hy+1) neighbourhood.
 *
 * Per timestep each PE takes in the positions (3 fp32 words) and later F'
 * (1 word) of every PE of its neighbourhood through its ramp, one word a
 * cycle; it works through its neighbour list (kept between steps, as the
 * paper does: candidates are tested only when lists are rebuilt, which is
 * not modelled) as the words arrive, one scalar fp32 instruction a cycle. */
#ifndef MD_MODEL_H
#define MD_MODEL_H

#include <stdbool.h>
#include <stdio.h>

#include "eam_potential.h"
#include "md_system.h"
#include "wf_report.h"
#include "wf_wafer.h"
#include "wf_workload.h"

/* Scalar fp32 instructions of the per-PE step, one cycle each, counted from
 * this code's kernel (eam_force.c) as one PE runs it for its own atom over
 * the full list (no Newton's-third-law update of the neighbour, no energy or
 * virial sums). No public kernel of the paper's exists to count from. An
 * operand from SRAM comes with its instruction (a scalar instruction reads
 * at most 8 B and writes 4 B: the ports never bind); a conversion, a min and
 * a comparison are one instruction each, a square root and a division
 * wf_hw's sqrt_cycles and div_cycles (a range: no public figure). node(): r
 * inv + 1 (FMAC), to int, min, back to float, subtract, min = 6; value(): 3
 * FMACs; slope(): 2 FMACs. */
#define MD_OPS_TEST 7     /* per list entry: dx, dy, dz (3), r^2 (a multiply, 2 FMACs), compare */
#define MD_OPS_DENSITY 10 /* per neighbour in the cutoff: node (6), value (3), the sum; and a   \
                             square root */
#define MD_OPS_FORCE 25   /* per neighbour: dx, dy, dz (3), node (6), z2 and z2' (3 + 2),       \
                             phi (1), phi' (2), F'_i + F'_j, rho' (2), psi' (1), fpair (1),     \
                             3 force FMACs; and a division, 1/r */
#define MD_OPS_ATOM 25    /* per atom: F and F' (node 6, value 3, slope 2, the rhomax test 1), \
                             two half kicks and the drift (9 FMACs), rho and the force zeroed (4) */

typedef struct md_model_result {
  int pe_x, pe_y;      /* PE grid of the fold */
  int fx, fy;          /* PE tile of one atom column */
  int hx, hy;          /* neighbourhood reach in hops */
  double n_cut;        /* neighbours per atom within the cutoff */
  double n_list;       /* within cutoff + skin: the list */
  double candidates;   /* PEs whose words each PE takes in */
  double words_in;     /* per step */
  wf_range phase_positions, phase_forces; /* cycles: wf_model_phase + latency */
  wf_range cycles;     /* per step */
  double table_bytes;  /* the spline tables a PE holds (fp32) */
} md_model_result;

/* The per-PE step on `hw` for lattice `l` (fold, reach, counts, cycles); a
 * logical link takes `link_hops` physical hops (more than 1 past dead PEs). */
void md_model_lattice(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                      double skin, const wf_hw *hw, int link_hops);
/* Project a lattice run; fills run->model too. Input errors: a box shorter
 * than twice cutoff + skin along an axis. */
int md_model_project(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                     double skin, wf_run *run, wf_status *st);
/* The projection's JSON object "model" and its line (wf_report_model), with
 * the fold, the reach, the counts and the cycles. */
void md_model_report(const md_model_result *m, const wf_run *run, wf_report *rep);

#endif
