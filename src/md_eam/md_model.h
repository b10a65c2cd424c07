/* The wafer projection of an EAM run: one atom per PE, as the wafer-scale MD
 * work runs it (Santos et al., arXiv 2405.07898).
 *
 * The fold (md_fold.h) puts each atom on its own PE; atoms that are
 * neighbours in 3D stay within (hx, hy) hops, measured here over the run's
 * own pairs.
 *
 * Per timestep each PE receives the positions (3 fp32 words) of every PE in
 * its (2hx+1) x (2hy+1) neighbourhood, tests each as a candidate, evaluates
 * the EAM density and force terms for those within the cutoff, and exchanges
 * F'(rho) (1 word) over the same neighbourhood. Cycle counts: docs/model.md. */
#ifndef MD_MODEL_H
#define MD_MODEL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "md_sim.h"
#include "md_system.h"
#include "wf_json.h"
#include "wf_wafer.h"

/* Published: over 270,000 timesteps/s for about 800k atoms on a WSE-2. */
#define MD_PUBLISHED_STEPS_PER_S 270000.0

typedef struct md_model_result {
  bool valid;        /* lattice runs only: the fold maps lattice sites to PEs */
  int pe_x, pe_y;    /* PE grid of the fold */
  int fx, fy;        /* PE tile of one atom column */
  int hx, hy;        /* neighbourhood reach in hops */
  double neighbours; /* mean atoms within the cutoff per atom */
  double candidates; /* PEs each PE tests per step */
  double compute_cycles, exchange_cycles, cycles;
  double seconds_per_step, steps_per_second;
  bool fits; /* the fold's PE grid fits the wafer */
  const char *hw;
} md_model_result;

/* Collective over the sim's communicator. `lattice` NULL (data-file runs):
 * result->valid is false. */
void md_model_project(md_model_result *m, const md_sim *sim, const md_lattice *lattice,
                      const wf_wafer *w);
void md_model_print(const md_model_result *m, FILE *out);
void md_model_json(const md_model_result *m, wf_json *j);

#endif
