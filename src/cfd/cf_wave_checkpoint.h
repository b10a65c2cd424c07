/* Checkpoints of a wave run (cf_wave.h): HDF5, written atomically
 * (wf_checkpoint). The two time levels (settled: no sponge owed), the
 * energies measured so far, the receivers' traces and a standing mode's
 * amplitudes, the step. A restart needs the same ranks, rank grid and PE
 * grid (checked: the file records every rank's block) and continues bit for
 * bit. */
#ifndef CF_WAVE_CHECKPOINT_H
#define CF_WAVE_CHECKPOINT_H

#include <mpi.h>

#include "st_mesh.h"
#include "wf_error.h"

/* What a wave run carries from step to step, after `step` steps. */
typedef struct cf_wave_state {
  const st_mesh *m;
  double *cur, *prev; /* u^n and u^{n-1} */
  double *energy;     /* [nenergy][2], room for max_energy: as on rank 0 */
  int nenergy, max_energy;
  int energy_every;   /* steps between energies: a checkpoint after k steps keeps those of
                         steps 0, every, ... < k (not one measured only because a run ended) */
  double *trace; /* [step][trace_cols] (NULL: this rank holds no receivers) */
  int trace_cols;
  double *amplitude; /* [step + 1] (NULL: none) */
  int max_steps;     /* room in trace and amplitude */
} cf_wave_state;

/* Collective; `state`: the deck's (wf_deck_state), which the file records. */
int cf_wave_checkpoint_write(const cf_wave_state *s, MPI_Comm comm, const char *path,
                             const char *state, int step, wf_status *st);
/* Collective: the state and its step from `path`. Errors (input): no such
 * file, a mesh of another size, other rank blocks, more steps or energies
 * than the run has room for. */
int cf_wave_checkpoint_read(cf_wave_state *s, MPI_Comm comm, const char *path, int *step,
                            wf_status *st);

#endif
