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

/* Scalar fp32 instructions (one cycle each) of the per-PE step. */
#define MD_OPS_TEST 7     /* per list entry: 3 differences, r^2 (mul, 2 FMAC), compare */
#define MD_OPS_DENSITY 11 /* per neighbour within the cutoff: sqrt (4), spline (6), sum */
#define MD_OPS_FORCE 24   /* per neighbour: 3 splines' derivatives (9), phi = z2/r (4), combine (5), 3 force FMACs, 3 */
#define MD_OPS_ATOM 30    /* per atom: F and F' (9), two half kicks and the drift (9), bookkeeping */

typedef struct md_model_result {
  int pe_x, pe_y;      /* PE grid of the fold */
  int fx, fy;          /* PE tile of one atom column */
  int hx, hy;          /* neighbourhood reach in hops */
  double n_cut;        /* neighbours per atom within the cutoff */
  double n_list;       /* within cutoff + skin: the list */
  double candidates;   /* PEs whose words each PE takes in */
  double words_in;     /* per step */
  double phase_positions, phase_forces; /* cycles: max(work, words in) + latency */
  double cycles;       /* per step */
  double table_bytes;  /* the spline tables a PE holds (fp32) */
} md_model_result;

/* The per-PE step on `hw` for lattice `l` (fold, reach, counts, cycles). */
void md_model_lattice(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                      double skin, const wf_hw *hw);
/* Project a lattice run; fills run->model too. Input errors: a box shorter
 * than twice cutoff + skin along an axis. */
int md_model_project(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                     double skin, wf_run *run, wf_status *st);
/* The projection's JSON object "model" and its line (wf_report_model), with
 * the fold, the reach, the counts and the cycles. */
void md_model_report(const md_model_result *m, const wf_run *run, wf_report *rep);

#endif
