/* What the cfd checkpoints share (cf_rb_checkpoint, cf_wave_checkpoint):
 * a mesh field's owned cells packed column by column, each rank's slice of
 * the packed fields, and every rank's block recorded, then checked on
 * reading (a restart needs the same ranks, rank grid and PE grid). */
#ifndef CF_CHECKPOINT_H
#define CF_CHECKPOINT_H

#include <mpi.h>
#include <stddef.h>

#include "st_mesh.h"
#include "wf_checkpoint.h"
#include "wf_error.h"

/* Owned cells of a field into, or out of, a packed buffer of n_owned. */
void cf_ckpt_pack(const st_mesh *m, const double *f, double *out);
void cf_ckpt_unpack(const st_mesh *m, const double *in, double *f);

/* A packed field as a checkpoint variable: this rank's slice after the
 * lower ranks' (first: cf_ckpt_first_cell). */
wf_ckpt_var cf_ckpt_field_var(const st_mesh *m, const char *name, double *packed,
                              unsigned long long first);
/* This rank's first cell in the packed order (collective). */
unsigned long long cf_ckpt_first_cell(const st_mesh *m, MPI_Comm comm);

/* "blocks": every rank's x0, lnx, y0, lny (as doubles, so that wf_h5_input
 * can size the dataset), `block` the 4 values of this rank. */
wf_ckpt_var cf_ckpt_blocks_var(const st_mesh *m, MPI_Comm comm, double block[4]);
/* Before reading (collective): the checkpoint was written by as many ranks. */
int cf_ckpt_check_ranks(MPI_Comm comm, const char *path, wf_status *st);
/* After reading (collective): every rank's block as it was written. */
int cf_ckpt_check_blocks(MPI_Comm comm, const char *path, const double mine[4],
                         const double read[4], wf_status *st);

/* What a stopped run leaves, for its message: its last good checkpoint
 * (`path` at `last_step`; -1: none written yet), or why there is none
 * (path ""). */
void cf_ckpt_last_good(const char *path, int last_step, char *out, size_t len);

#endif
