/* Training checkpoints (HDF5, written atomically through wf_checkpoint):
 * the model's shape, its parameters, AdamW's moments and the step count.
 * The replicas hold the same state, so rank 0 writes it alone (with weight
 * streaming, the first MemoryX rank, holding the gathered model); every rank
 * with parameters reads it, the others (streaming workers) only its step. A
 * restart continues bit for bit: the batches and the learning rate depend
 * only on the step. */
#ifndef WS_CHECKPOINT_H
#define WS_CHECKPOINT_H

#include <mpi.h>

#include "wf_checkpoint.h"
#include "wf_error.h"
#include "ws_gpt.h"

/* `state`: the deck's (wf_deck_state), which the file records; `extra`:
 * more datasets to keep (the run's losses so far). */
int ws_checkpoint_write(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                        const wf_ckpt_var *extra, int nextra, wf_status *st);
/* The whole model's numbers (ws_param_count) of a buffer in m's layout
 * (`mine`: tiles on a wafer of several ranks) into `whole`, on every rank
 * of m's wafer: each number from its one holder, zeros elsewhere, so the
 * sums are exact. Collective over the wafer when m has a grid. */
void ws_checkpoint_assemble(const ws_gpt *m, ws_real *mine, ws_real *whole);
/* The model shape a checkpoint holds (input errors: not a checkpoint). */
int ws_checkpoint_shape(MPI_Comm comm, const char *path, ws_config *c, wf_status *st);
/* Parameters, moments and step into m, whose shape must be the file's (an
 * input error names both shapes otherwise). */
int ws_checkpoint_read(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st);

#endif
