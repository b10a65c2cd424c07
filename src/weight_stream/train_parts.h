/* The parts of `wafer train` (train_workload.c) shared by its files: what
 * a run is set up with (setup), the loss history, who holds what (trainer:
 * train_trainer.c), what the run measured (measured), and the steps of a
 * run: a trainer (train_trainer.c), the training loop and its checkpoints
 * (train_loop.c), the checks and the report (train_report.c). */
#ifndef TRAIN_PARTS_H
#define TRAIN_PARTS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

#include "wf_hw.h"
#include "wf_workload.h"
#include "ws_check.h"
#include "ws_corpus.h"
#include "ws_gpt.h"
#include "ws_grid.h"
#include "ws_model.h"
#include "ws_stream.h"


typedef struct setup {
  ws_config model;
  int batch, steps, warmup, eval_every, eval_batches, checkpoint_every, stop_at, prefetch;
  int fanout;      /* of the SwarmX trees */
  int wafer_ranks; /* 0: the default (one wafer resident, one a rank streaming) */
  double memoryx_gbps;
  double rank_mb, memoryx_mb, swarmx_mb; /* budgets, MB (0: none) */
  ws_adamw opt;
  float lr, min_lr;
  double val_fraction, loss_target;
  unsigned long long seed;
  wf_prec wafer_prec;
  const char *corpus, *checkpoint, *restart;
} setup;


typedef struct history {
  int first, end;      /* the steps this run did: [first, end) */
  float *train;        /* loss of each step (of all the run's steps) */
  int *val_step, nval; /* validation losses and their steps */
  float *val;
} history;


/* Who holds what. The wafer ranks make wafers of K ranks, each a
 * data-parallel replica; with K > 1 a wafer's weight matrices are in 2D
 * tiles over its ranks (ws_grid.h). Resident: the ranks hold them.
 * Weight streaming (MemoryX ranks in [wafer]): the wafer ranks hold
 * activations, MemoryX ranks the weights, and each wafer rank receives its
 * tiles block by block (ws_stream). */
typedef struct trainer {
  wf_run *run;
  const setup *s;
  bool streaming;
  MPI_Comm world;        /* every rank */
  int K;                 /* ranks a wafer */
  int px, py;            /* its rank grid (every rank knows it) */
  ws_grid grid;          /* the wafers' rank grids, on wafer ranks when `tiled` (K > 1) */
  bool tiled;
  int replicas, replica; /* this rank's replica, -1 on MemoryX and SwarmX ranks */
  int B;                 /* sequences a replica's batch */
  ws_gpt m;              /* resident: the model; streaming: a worker's activations */
  ws_gpt whole;          /* streaming, the first MemoryX rank: the model, for checkpoints */
  ws_stream ws;
  int first_step; /* steps done before this run (a restart's) */
  /* The run's first step against the references (ws_check.h; resident). */
  bool step_checked;
  bool kernels_checked; /* every worker's, resident or streaming */
  ws_kernel_check kernels;
  ws_grad_check grad;   /* the first step's, from initialisation */
  double adamw_worst;
  double base_loss, loss_worst; /* the reported loss against the check's mean */
  int last_checked;             /* 1-based */
  double check_seconds; /* spent checking: not training time */
  ws_grid_counts step_words; /* tiled: this rank's words in the last training step's passes */
  double state[3]; /* bytes a wafer rank, the fullest MemoryX and SwarmX ranks hold */
} trainer;


typedef struct measured {
  double seconds; /* the training steps, slowest rank */
  double tokens_per_s, gflops, sgemm;
  float first_val, last_val, first_loss, last_loss;
  ws_stream_stats stream; /* summed over the steps, the slowest rank's */
  double link;            /* bytes/s a MemoryX link moves (streaming) */
  double relay_rate[2];   /* bytes/s to every worker: through the SwarmX tree, by MPI_Bcast */
  double hop_bytes[4];    /* a step's: MemoryX down, SwarmX down, SwarmX up, workers up */
  double peak_rss[3]; /* MB, the largest of the wafer ranks', the MemoryX and SwarmX ranks' */
  double sparsity[1000];  /* ReLU: each layer's share of zero MLP activations */
  double grid_words[3]; /* tiled: a step's reduce, multicast and head words, summed over a wafer */
} measured;

/* train_trainer.c: the wafers, the model or its streamed blocks, the
 * budgets checked before any of it is allocated (input errors name the
 * key); freed by trainer_free. Collective over every rank. */
int trainer_create(trainer *t, wf_run *run, const setup *s, wf_status *st);
void trainer_free(trainer *t);
/* This replica's batch `k` of a split (nothing on MemoryX and SwarmX ranks). */
void trainer_batch(const trainer *t, const ws_corpus *c, int split, int k, int *tok, int *tgt);
/* The mean validation loss over eval_batches global batches; 0, with the
 * signal in *sig, when one reaches a rank during it. */
float trainer_validate(trainer *t, const ws_corpus *c, int *tok, int *tgt, int *sig);
/* One optimiser step (0-based `step`); the mean loss over the replicas in
 * *loss. With `check`, its kernels are checked, and resident, its gradient
 * and AdamW update. */
int trainer_step(trainer *t, const ws_corpus *c, int step, int *tok, int *tgt, const ws_adamw *o,
                 bool check, double *loss, wf_status *st);

/* train_loop.c: the steps [h->first, h->end), validations, checkpoints
 * and signals; what they measured into *out. */
int train_loop(trainer *t, const ws_corpus *c, history *h, measured *out, wf_status *st);
/* A restart's losses, up to its step, into h. */
int train_read_losses(MPI_Comm comm, const char *path, history *h, int eval_every, wf_status *st);

/* train_report.c: the checks of the run's first and last steps; the text
 * lines and the JSON; the loss history as HDF5. */
void train_checks(wf_run *run, const trainer *t, const setup *s);
void train_report(const trainer *t, const history *h, const measured *r, const ws_wafer_step *w);
int train_write_output(wf_run *run, const history *h, const char *path, wf_status *st);

#endif
