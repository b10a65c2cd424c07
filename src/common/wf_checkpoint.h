/* Checkpoints: named distributed 1D datasets plus a step counter in one HDF5
 * file, written atomically (temporary name, then rename). Reading checks
 * that every dataset has the expected global size and reads each rank's
 * slice back bit for bit. A checkpoint also records the deck values its
 * state depends on, which a restart's deck must repeat (wf_deck_state). */
#ifndef WF_CHECKPOINT_H
#define WF_CHECKPOINT_H

#include <mpi.h>

#include "wf_error.h"
#include "wf_h5.h"

typedef struct wf_ckpt_var {
  const char *name;
  wf_dtype type;
  void *data;                   /* this rank's `count` elements */
  unsigned long long global_n;  /* elements over all ranks */
  unsigned long long offset;    /* this rank's first element */
  unsigned long long count;
} wf_ckpt_var;

/* Where a rank's elements of scattered vars lie (a wafer rank's tiles of a
 * model): the pieces of each var's `data` (`count` elements long; `offset`
 * unused); 0 pieces: none. */
typedef struct wf_ckpt_scatter {
  const wf_h5_piece *pieces;
  int npieces;
} wf_ckpt_scatter;

/* `state` (wf_deck_state of the run's deck; NULL: none) is kept as the
 * attribute "deck_state", for a restart to compare its deck with. A var of
 * global_n 0 is not written: read such a series back with
 * wf_checkpoint_read_series, not wf_checkpoint_read. */
int wf_checkpoint_write(MPI_Comm comm, const char *path, long long step, const char *state,
                        const wf_ckpt_var *vars, int nvars, wf_status *st);
/* The same with a second list of vars (a workload's state, then the series
 * its run keeps for a restart: a caller's own list, not a copy into one). */
int wf_checkpoint_write_more(MPI_Comm comm, const char *path, long long step, const char *state,
                             const wf_ckpt_var *vars, int nvars, const wf_ckpt_var *more,
                             int nmore, wf_status *st);
int wf_checkpoint_read(MPI_Comm comm, const char *path, long long *step, const wf_ckpt_var *vars,
                       int nvars, wf_status *st);
/* The same for `vars` all scattered alike (`scatter`; NULL: not scattered),
 * followed (writing) by the plain `more`. */
int wf_checkpoint_write_scattered(MPI_Comm comm, const char *path, long long step,
                                  const char *state, const wf_ckpt_var *vars, int nvars,
                                  const wf_ckpt_scatter *scatter, const wf_ckpt_var *more,
                                  int nmore, wf_status *st);
int wf_checkpoint_read_scattered(MPI_Comm comm, const char *path, long long *step,
                                 const wf_ckpt_var *vars, int nvars,
                                 const wf_ckpt_scatter *scatter, wf_status *st);

/* A series of doubles rank 0 wrote whole (a var with count = global_n on
 * rank 0 and 0 elsewhere), of a length the file decides: every rank gets
 * it in *data (malloc'ed; NULL when empty), its length in *n. An empty
 * series is not written, and one the file lacks reads as empty. A series
 * declared longer than `max_n` (what the caller's run can have written) is
 * refused before anything is read: a damaged file could declare billions.
 * Collective. */
int wf_checkpoint_read_series(MPI_Comm comm, const char *path, const char *name,
                              unsigned long long max_n, double **data, unsigned long long *n,
                              wf_status *st);
/* The "deck_state" a checkpoint keeps (malloc'ed into *state). One rank,
 * not collective. */
int wf_checkpoint_state(const char *path, char **state, wf_status *st);

#endif
