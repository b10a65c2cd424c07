/* `wafer train` (train_workload.h): training of ws_gpt on a byte corpus by
 * wafers of ranks (each wafer's weight matrices in 2D tiles over its ranks:
 * ws_grid.h), the wafers data-parallel replicas whose gradients are
 * averaged after each backward pass, AdamW on every replica alike; the validation loss checked
 * to fall; tokens/s, GFLOP/s against this machine's sgemm; the loss curve in
 * HDF5 and a PNG; the step projected onto the wafer. */
#include "train_workload.h"

#include "wf_cblas.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "wf_checkpoint.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_mpi.h"
#include "wf_progress.h"
#include "wf_roles.h"
#include "wf_signal.h"
#include "wf_timing.h"
#include "wf_wafer.h"
#include "ws_check.h"
#include "ws_checkpoint.h"
#include "ws_corpus.h"
#include "ws_gpt.h"
#include "ws_grid.h"
#include "ws_memory.h"
#include "ws_model.h"
#include "ws_stream.h"

/* Debian's jargon-text: the Jargon File, public domain. */
#define DEFAULT_CORPUS "/usr/share/doc/jargon-text/jargon.txt.gz"

static const wf_key train_keys[] = {
    {"corpus", WF_KEY_INPUT, "", 0, 0, NULL,
     "text to train on, plain or gzip ('' = the Jargon File, Debian's jargon-text: " DEFAULT_CORPUS
     ")",
     NULL},
    {"corpus_max_mb", WF_KEY_INT, "256", 1, 2047, NULL, "refuse a corpus larger than this", NULL},
    {"val_fraction", WF_KEY_REAL, "0.1", 0.001, 0.5, NULL,
     "the corpus's last part held out for validation", NULL},
    {"layers", WF_KEY_INT, "2", 1, 1000, NULL, "transformer blocks", NULL},
    {"activation", WF_KEY_CHOICE, "gelu", 0, 0, "gelu|relu",
     "the MLP's nonlinearity: tanh-GELU, or ReLU, whose zeros the wafer model skips", NULL},
    {"heads", WF_KEY_INT, "4", 1, 1024, NULL, "attention heads (channels must split into them)",
     NULL},
    {"channels", WF_KEY_INT, "64", 1, 65536, NULL, "width of the residual stream", NULL},
    {"seq", WF_KEY_INT, "64", 1, 65536, NULL, "tokens (bytes) a sequence", NULL},
    {"batch", WF_KEY_INT, "8", 1, 1e6, NULL,
     "sequences a step, over all replicas (a multiple of their count: train.wafer_ranks)", NULL},
    {"steps", WF_KEY_INT, "60", 1, 1e9, NULL, "optimiser steps", NULL},
    {"lr", WF_KEY_REAL, "3e-3", 0, 10, NULL, "peak learning rate", NULL},
    {"min_lr", WF_KEY_REAL, "3e-4", 0, 10, NULL, "learning rate at the end of the cosine decay",
     NULL},
    {"warmup", WF_KEY_INT, "10", 0, 1e9, NULL, "steps of linear warmup", NULL},
    {"weight_decay", WF_KEY_REAL, "0.1", 0, 10, NULL, "AdamW's decoupled weight decay", NULL},
    {"clip", WF_KEY_REAL, "1.0", 0, 1e6, NULL, "gradient norm clipped to this (0: no clipping)",
     NULL},
    {"seed", WF_KEY_INT, "1", 0, 2147483647, NULL, "initial weights and batches", NULL},
    {"eval_every", WF_KEY_INT, "20", 1, 1e9, NULL, "steps between validation losses", NULL},
    {"eval_batches", WF_KEY_INT, "4", 1, 1e6, NULL, "batches a validation loss averages", NULL},
    {"loss_target", WF_KEY_REAL, "0", 0, 100, NULL,
     "the check: the last validation loss at most this (0: below the first one)", NULL},
    {"checkpoint", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "HDF5 checkpoint written at the end, every checkpoint_every steps and when a signal stops "
     "the run ('' = none)",
     NULL},
    {"checkpoint_every", WF_KEY_INT, "0", 0, 1e9, NULL, "steps between checkpoints (0: the end)",
     NULL},
    {"restart", WF_KEY_INPUT, "", 0, 0, NULL,
     "continue from this checkpoint, bit for bit ('' = start afresh)", NULL},
    {"stop_at", WF_KEY_INT, "0", 0, 1e9, NULL,
     "stop after this step, as if interrupted (checkpoint written), to go on later with "
     "restart (0: run all the steps)",
     NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL, "PNG of the loss curve ('' = none)", NULL},
    {"sgemm", WF_KEY_BOOL, "true", 0, 0, NULL,
     "measure this machine's sgemm rate, to report the fraction of it training reaches", NULL},
    {"wafer_precision", WF_KEY_CHOICE, "fp16", 0, 0, "fp16|fp32",
     "precision of the weights and activations in the wafer model", NULL},
    {"prefetch", WF_KEY_INT, "1", 0, 16, NULL,
     "weight streaming ([wafer] memoryx_ranks > 0): layers fetched ahead of the one computing",
     NULL},
    {"wafer_ranks", WF_KEY_INT, "0", 0, 1e6, NULL,
     "ranks that make up one wafer (a data-parallel replica), its weight matrices in 2D tiles "
     "over them (0: one wafer over all the wafer ranks; with weight streaming, one a rank)",
     NULL},
    {"swarmx_fanout", WF_KEY_INT, "4", 1, 1e6, NULL,
     "weight streaming: ranks each MemoryX or SwarmX rank feeds in the tree that carries the "
     "weights down to the wafers and their gradients' sum back (a worker never relays; "
     "without SwarmX ranks MemoryX feeds every worker itself)",
     NULL},
    {"rank_mb", WF_KEY_REAL, "0", 0, 1e12, NULL,
     "a wafer rank's budget, MB, for the weights, gradients and AdamW moments it holds (0: "
     "none): a mapping that needs more is refused before any work, saying by how much",
     NULL},
    {"memoryx_mb", WF_KEY_REAL, "0", 0, 1e12, NULL,
     "weight streaming: a MemoryX rank's budget, MB, for its blocks and the whole model it "
     "builds the first state (the first: checkpoints) in (0: none)",
     NULL},
    {"swarmx_mb", WF_KEY_REAL, "0", 0, 1e12, NULL,
     "weight streaming: a SwarmX rank's budget, MB, for the blocks it relays down and the "
     "room its children's gradient sums land in on their way up (0: none)",
     NULL},
    {"memoryx_gbps", WF_KEY_REAL, "0", 0, 1e6, NULL,
     "weight streaming: each MemoryX rank sends at most this many GB/s, to play a slower link "
     "(0: as fast as MPI goes)",
     NULL},
};
static const wf_section train_section = {
    "train",
    "A GPT-style decoder trained on bytes of text by wafers of ranks (weight matrices in 2D "
    "tiles over a wafer's ranks; wafers data-parallel); with "
    "[wafer] memoryx_ranks (and swarmx_ranks) the weights stream from MemoryX ranks.",
    train_keys, (int)(sizeof train_keys / sizeof train_keys[0]),
    "restart",
    "stop_at checkpoint_every sgemm wafer_precision prefetch memoryx_gbps loss_target "
    "wafer_ranks swarmx_fanout rank_mb memoryx_mb swarmx_mb"};
static const wf_section *const train_sections[] = {&train_section};

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

static void read_setup(const wf_deck *d, setup *s) {
  s->model = (ws_config){.vocab = 256,
                         .seq = (int)wf_deck_int(d, "train", "seq"),
                         .layers = (int)wf_deck_int(d, "train", "layers"),
                         .heads = (int)wf_deck_int(d, "train", "heads"),
                         .channels = (int)wf_deck_int(d, "train", "channels"),
                         .relu = strcmp(wf_deck_str(d, "train", "activation"), "relu") == 0};
  s->batch = (int)wf_deck_int(d, "train", "batch");
  s->steps = (int)wf_deck_int(d, "train", "steps");
  s->warmup = (int)wf_deck_int(d, "train", "warmup");
  s->eval_every = (int)wf_deck_int(d, "train", "eval_every");
  s->eval_batches = (int)wf_deck_int(d, "train", "eval_batches");
  s->lr = (float)wf_deck_real(d, "train", "lr");
  s->min_lr = (float)wf_deck_real(d, "train", "min_lr");
  s->opt = (ws_adamw){.beta1 = 0.9f,
                      .beta2 = 0.95f,
                      .eps = 1e-8f,
                      .weight_decay = (float)wf_deck_real(d, "train", "weight_decay"),
                      .clip = (float)wf_deck_real(d, "train", "clip")};
  s->val_fraction = wf_deck_real(d, "train", "val_fraction");
  s->loss_target = wf_deck_real(d, "train", "loss_target");
  s->seed = (unsigned long long)wf_deck_int(d, "train", "seed");
  s->wafer_prec =
      strcmp(wf_deck_str(d, "train", "wafer_precision"), "fp32") == 0 ? WF_FP32 : WF_FP16;
  s->checkpoint_every = (int)wf_deck_int(d, "train", "checkpoint_every");
  s->stop_at = (int)wf_deck_int(d, "train", "stop_at");
  s->prefetch = (int)wf_deck_int(d, "train", "prefetch");
  s->fanout = (int)wf_deck_int(d, "train", "swarmx_fanout");
  s->wafer_ranks = (int)wf_deck_int(d, "train", "wafer_ranks");
  s->memoryx_gbps = wf_deck_real(d, "train", "memoryx_gbps");
  s->rank_mb = wf_deck_real(d, "train", "rank_mb");
  s->memoryx_mb = wf_deck_real(d, "train", "memoryx_mb");
  s->swarmx_mb = wf_deck_real(d, "train", "swarmx_mb");
  s->checkpoint = wf_deck_str(d, "train", "checkpoint");
  s->restart = wf_deck_str(d, "train", "restart");
  s->corpus = wf_deck_str(d, "train", "corpus");
  if (!s->corpus[0]) s->corpus = DEFAULT_CORPUS;
}

/* This machine's sgemm rate per rank, GFLOP/s (best of 5, 512^3, one thread). */
static double sgemm_rate(MPI_Comm comm) {
  const int n = 512;
  float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
        *c = malloc((size_t)n * n * sizeof *c);
  double best = 0;
  if (a && b && c) {
    for (size_t i = 0; i < (size_t)n * n; i++)
      a[i] = 1e-3f * (float)(i % 97), b[i] = 1e-3f * (float)(i % 89);
    for (int r = 0; r < 5; r++) {
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
      double t = wf_slowest(comm, MPI_Wtime() - t0);
      best = fmax(best, 2.0 * n * n * n / t / 1e9);
    }
  }
  free(a), free(b), free(c);
  return best;
}

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

static void trainer_free(trainer *t) {
  if (t->tiled) ws_grid_free(&t->grid);
  ws_gpt_free(&t->m);
  ws_gpt_free(&t->whole);
  if (t->streaming) ws_stream_free(&t->ws);
}

/* A fresh model from the seed, or the restart checkpoint's. */
static int initial_model(const trainer *t, ws_gpt *m, MPI_Comm comm, wf_status *st) {
  ws_gpt_init(m, t->s->seed);
  if (t->s->restart[0] && ws_checkpoint_read(comm, t->s->restart, m, st) != WF_OK)
    return wf_deck_blame(t->run->deck, "train", "restart", st);
  return WF_OK;
}

/* What the SwarmX rank with the most children in the relay's tree holds
 * (t->state[2]) against [train] swarmx_mb. */
static int check_swarmx_budget(trainer *t, wf_status *st) {
  const setup *s = t->s;
  const wf_roles *r = t->run->roles;
  int S = r->count[WF_ROLE_SWARMX], W = r->count[WF_ROLE_WAFER] / t->K, busiest = 0, most = -1;
  if (S == 0) return WF_OK;
  wf_status later; /* a tree that does not fit is refused later (swarmx_fanout) */
  if (ws_relay_fits(s->fanout, S, W, &later))
    most = ws_relay_most_children(s->fanout, S, W, &busiest);
  /* the same on every rank (an allocation may fail on one): so is the verdict */
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MIN, t->world);
  if (most < 0) most = 0, busiest = 0; /* ws_stream_create will say why */
  t->state[2] = ws_memory_swarmx(&s->model, s->prefetch, most, t->px, t->py);
  char who[64], what[256];
  snprintf(who, sizeof who, "SwarmX rank %d", busiest);
  snprintf(what, sizeof what,
           "relay buffers (the head and %d layers on their way down, and room for %d sums from "
           "%d children on their way up%s)",
           s->prefetch + 1, WS_UP_WINDOW, most, t->K > 1 ? ", for every rank of a wafer" : "");
  const char *fix = "more SwarmX ranks share the children (a smaller swarmx_fanout) or fewer "
                    "layers fetched ahead (prefetch)";
  if (ws_memory_check(t->state[2], s->swarmx_mb, who, what, fix, st) != WF_OK)
    return wf_deck_blame(t->run->deck, "train", "swarmx_mb", st);
  return WF_OK;
}

/* What a wafer rank and the fullest MemoryX rank will hold of the training
 * state (t->state) against [train] rank_mb and memoryx_mb, and what the
 * busiest SwarmX rank holds to relay against swarmx_mb, before anything is
 * allocated: the same on every rank, so every rank refuses alike. */
static int check_budgets(trainer *t, wf_status *st) {
  const setup *s = t->s;
  const wf_deck *d = t->run->deck;
  int px = t->px, py = t->py;
  int nmemx = t->run->roles->count[WF_ROLE_MEMORYX], L = s->model.layers;
  char what[256];
  if (t->streaming && t->K > 1)
    snprintf(what, sizeof what,
             "training state (its tiles on a %dx%d wafer of the head and %d layer slots with "
             "their gradients, streamed)",
             px, py, s->prefetch + 1);
  else if (t->streaming)
    snprintf(what, sizeof what,
             "training state (the head and %d layer slots with their gradients, streamed)",
             s->prefetch + 1);
  else if (t->tiled)
    snprintf(what, sizeof what,
             "training state (its tiles of the weight matrices on a %dx%d wafer and the "
             "vectors, with their gradients and AdamW moments, resident)",
             px, py);
  else
    snprintf(what, sizeof what,
             "training state (the whole model with its gradients and AdamW moments, resident)");
  t->state[0] = t->streaming ? ws_memory_streamed(&s->model, s->prefetch, px, py)
                             : ws_memory_resident(&s->model, px, py);
  const char *fix = t->streaming ? "fewer layers fetched ahead (prefetch), smaller layers or "
                                   "more ranks a wafer (wafer_ranks)"
                                  : "stream the weights from MemoryX ranks ([wafer] "
                                    "memoryx_ranks) or tile them over more ranks (wafer_ranks)";
  if (ws_memory_check(t->state[0], s->rank_mb, "a wafer rank", what, fix, st) != WF_OK)
    return wf_deck_blame(d, "train", "rank_mb", st);
  if (!t->streaming || nmemx == 0) return WF_OK;
  /* The relay's tree is checked later (swarmx_fanout); a tree that does not
   * fit counts no children here. */
  const wf_roles *r = t->run->roles;
  int kids = 0, S = r->count[WF_ROLE_SWARMX], W = r->count[WF_ROLE_WAFER] / t->K;
  wf_status later;
  if (ws_relay_fits(s->fanout, S, W, &later)) kids = ws_relay_root_children(s->fanout, S, W);
  /* the same on every rank (an allocation inside may fail on one): so is the verdict */
  MPI_Allreduce(MPI_IN_PLACE, &kids, 1, MPI_INT, MPI_MIN, t->world);
  if (kids < 0) kids = 0; /* out of memory: ws_stream_create will say so */
  bool restarts = s->restart[0] != 0;
  int fullest = 0;
  for (int i = 0; i < nmemx; i++)
    if (ws_memory_memoryx(&s->model, nmemx, i, kids, restarts, px, py) >
        ws_memory_memoryx(&s->model, nmemx, fullest, kids, restarts, px, py))
      fullest = i;
  t->state[1] = ws_memory_memoryx(&s->model, nmemx, fullest, kids, restarts, px, py);
  char who[64];
  snprintf(who, sizeof who, "MemoryX rank %d", fullest);
  snprintf(what, sizeof what,
           "training state (%d of %d blocks with their gradients and moments, the whole "
           "model it %s%s, and room for %d sums from %d children)",
           (L + 1 - fullest + nmemx - 1) / nmemx, L + 1,
           fullest == 0 ? "keeps to assemble checkpoints" : "builds the first state in",
           restarts ? " (with the moments a restart reads)" : "", WS_UP_WINDOW, kids);
  fix = "more MemoryX ranks share the blocks ([wafer] memoryx_ranks); the whole model on the "
        "first stays";
  if (ws_memory_check(t->state[1], s->memoryx_mb, who, what, fix, st) != WF_OK)
    return wf_deck_blame(d, "train", "memoryx_mb", st);
  return check_swarmx_budget(t, st);
}

/* The wafer model's cycles of one distributed product on the run's PE grid
 * (ws_grid.cost; the fast end of ws_model_gemm's range). */
static double gemm_cycles(void *ctx, bool forward, int N, int IC, int OC) {
  const trainer *t = ctx;
  const wf_wafer *w = t->run->wafer;
  wf_prec p = t->s->wafer_prec;
  if (forward) return ws_model_gemm(&w->hw, &w->grid, p, WS_GEMM_FORWARD, N, IC, OC).cycles.lo;
  return ws_model_gemm(&w->hw, &w->grid, p, WS_GEMM_INPUT_GRAD, N, IC, OC).cycles.lo +
         ws_model_gemm(&w->hw, &w->grid, p, WS_GEMM_WEIGHT_GRAD, N, IC, OC).cycles.lo;
}

/* The wafers' rank grids, on the wafer ranks (collective over them), and
 * their shape on every rank (MemoryX and SwarmX ranks stream to it). */
static int make_grid(trainer *t, wf_status *st) {
  const wf_roles *r = t->run->roles;
  if (r->role == WF_ROLE_WAFER) {
    const wf_wafer *w = t->run->wafer;
    if (ws_grid_create(&t->grid, t->run->comm, t->K, w->dc.pe_nx, w->dc.pe_ny, st) == WF_OK) {
      t->tiled = true;
      t->grid.cost = gemm_cycles, t->grid.cost_ctx = t;
    } else
      ws_grid_free(&t->grid);
  }
  wf_status_agree(t->world, st);
  int shape[2] = {t->grid.px, t->grid.py};
  MPI_Bcast(shape, 2, MPI_INT, r->first[WF_ROLE_WAFER], t->world);
  t->px = shape[0], t->py = shape[1];
  return st->code;
}

static int trainer_create(trainer *t, wf_run *run, const setup *s, wf_status *st) {
  const wf_roles *r = run->roles;
  *t = (trainer){.run = run, .s = s, .world = run->world};
  t->streaming = r->count[WF_ROLE_MEMORYX] + r->count[WF_ROLE_SWARMX] > 0;
  int workers = r->count[WF_ROLE_WAFER];
  t->K = s->wafer_ranks > 0 ? s->wafer_ranks : t->streaming ? 1 : workers;
  if (workers % t->K != 0)
    return wf_deck_fail(run->deck, "train", "wafer_ranks", st,
                        "%d wafer ranks do not make wafers of %d ranks", workers, t->K);
  t->replicas = workers / t->K;
  t->replica = r->role == WF_ROLE_WAFER ? r->role_rank / t->K : -1;
  t->px = t->py = 1;
  if (t->K > 1 && make_grid(t, st) != WF_OK)
    return wf_deck_blame(run->deck, "train", "wafer_ranks", st);
  if (check_budgets(t, st) != WF_OK) {
    t->streaming = false;
    return st->code;
  }
  if (t->streaming && r->count[WF_ROLE_MEMORYX] > 0 && /* else ws_stream_create says why */
      !ws_relay_fits(s->fanout, r->count[WF_ROLE_SWARMX], t->replicas, st)) {
    t->streaming = false;
    return wf_deck_blame(run->deck, "train", "swarmx_fanout", st);
  }
  if (t->streaming && ws_stream_create(&t->ws, r, t->world, &s->model, t->px, t->py, s->prefetch,
                                       s->fanout, s->memoryx_gbps, st) != WF_OK) {
    t->streaming = false;
    return wf_deck_blame(run->deck, "wafer",
                         r->count[WF_ROLE_MEMORYX] ? "memoryx_ranks" : "swarmx_ranks", st);
  }
  if (s->batch % t->replicas != 0)
    return wf_deck_fail(run->deck, "train", "batch", st,
                        "%d sequences do not split evenly over %d replicas (wafers of %d rank%s)",
                        s->batch, t->replicas, t->K, t->K > 1 ? "s" : "");
  t->B = s->batch / t->replicas;
  int rc = WF_OK;
  if (!t->streaming) {
    rc = ws_gpt_create_on(&t->m, &s->model, t->B, s->model.seq, t->tiled ? &t->grid : NULL, st);
    if (rc != WF_OK && t->tiled && st->code == WF_ERR_INPUT)
      return wf_deck_blame(run->deck, "train", "wafer_ranks", st);
    if (rc != WF_OK) return rc;
    rc = initial_model(t, &t->m, run->comm, st);
    /* AdamW's moments now, agreed: a rank short of memory at the first
     * update would leave its wafer waiting in the gradient norm's gather. */
    if (rc == WF_OK) {
      ws_gpt_moments(&t->m, st);
      wf_status_agree(run->comm, st);
      rc = st->code;
    }
    t->first_step = t->m.steps;
    return rc;
  }
  t->m.c = t->whole.c = s->model;
  if (r->role == WF_ROLE_WAFER) {
    rc = ws_gpt_create_activations_on(&t->m, &s->model, t->B, s->model.seq,
                                      t->tiled ? &t->grid : NULL, st);
  } else if (r->role == WF_ROLE_MEMORYX) {
    rc = ws_gpt_create(&t->whole, &s->model, 1, 1, st);
    if (rc == WF_OK) rc = initial_model(t, &t->whole, r->role_comm, st);
    if (rc == WF_OK) ws_stream_load(&t->ws, &t->whole);
    t->first_step = t->whole.steps;
    /* Only the first keeps a whole model: it assembles checkpoints. */
    if (r->role_rank != 0) ws_gpt_free(&t->whole);
  }
  wf_status_agree(t->world, st);
  MPI_Bcast(&t->first_step, 1, MPI_INT, r->first[WF_ROLE_MEMORYX], t->world);
  return st->code;
}

/* This replica's batch `k` of a split (nothing on MemoryX and SwarmX ranks). */
static void batch(const trainer *t, const ws_corpus *c, int split, int k, int *tok, int *tgt) {
  if (t->replica >= 0)
    ws_corpus_batch(c, split, t->s->seed, k, t->replica * t->B, t->B, t->s->model.seq, tok, tgt);
}

/* The mean validation loss over eval_batches global batches; 0, with the
 * signal in *sig, when one reaches a rank during it (checked after each
 * batch: a long evaluation stops within one batch, not at its end). */
static float validate(trainer *t, const ws_corpus *c, int *tok, int *tgt, int *sig) {
  double sum = 0;
  for (int k = 0; k < t->s->eval_batches; k++) {
    batch(t, c, WS_VAL, k, tok, tgt);
    sum +=
        t->streaming ? ws_stream_forward(&t->ws, &t->m, tok, tgt) : ws_gpt_forward(&t->m, tok, tgt);
    int mine = wf_signal_caught();
    MPI_Allreduce(&mine, sig, 1, MPI_INT, MPI_MAX, t->world);
    if (*sig) return 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, t->world);
  /* every rank of a wafer holds its replica's loss */
  return (float)(sum / ((double)t->s->eval_batches * t->replicas * t->K));
}

/* The replicas' gradients averaged (every replica's batch is the same
 * size): over the ranks at the same place in each wafer. The tensors that
 * are whole on every rank of a wafer are summed once, by its first rank's
 * peers, and broadcast over the wafer: sums over other communicators could
 * differ in the last bit, and a wafer's ranks must hold the same numbers. */
static void average_gradients(trainer *t) {
  ws_gpt *m = &t->m;
  if (t->replicas == 1) return;
  MPI_Comm peers = t->tiled ? t->grid.peers : t->run->comm;
  for (int k = 0; k < WS_NPARAMS; k++) {
    bool shared = t->tiled && !ws_param_tiled(k);
    if (!shared || t->grid.rank == 0)
      wf_allreduce_inplace(m->g.t[k], m->g.size[k], MPI_FLOAT, MPI_SUM, peers);
    if (shared) MPI_Bcast(m->g.t[k], (int)m->g.size[k], MPI_FLOAT, 0, t->grid.wafer);
  }
  float inv = 1.0f / (float)t->replicas;
  for (size_t i = 0; i < m->g.count; i++) m->g.mem[i] *= inv;
}

/* The step's LayerNorm statistics and activations (ws_check_kernels), the
 * workers' worst; the other ranks take part with nothing. */
static void check_kernels(trainer *t) {
  double t0 = MPI_Wtime();
  ws_kernel_check k = {0};
  if (t->replica >= 0) k = ws_check_kernels(&t->m);
  double worst[6] = {k.layernorm, k.activation,        k.activation_slope,
                     k.rows,      (double)k.elements, k.layernorm_grads};
  for (int i = 0; i < 6; i++) worst[i] = isnan(worst[i]) ? INFINITY : worst[i];
  MPI_Allreduce(MPI_IN_PLACE, worst, 6, MPI_DOUBLE, MPI_MAX, t->world);
  ws_kernel_check *w = &t->kernels; /* the worst over the checked steps */
  *w = (ws_kernel_check){wf_worse(w->layernorm, worst[0]), wf_worse(w->activation, worst[1]),
                         wf_worse(w->activation_slope, worst[2]),
                         t->streaming ? -1 : wf_worse(w->layernorm_grads, worst[5]), (int)worst[3],
                         (size_t)worst[4]};
  t->kernels_checked = true;
  t->check_seconds += MPI_Wtime() - t0;
}

/* The words a wafer rank received since `before`. */
static ws_grid_counts words_since(const ws_grid_counts *now, const ws_grid_counts *before) {
  return (ws_grid_counts){.reduce_words = now->reduce_words - before->reduce_words,
                          .multicast_words = now->multicast_words - before->multicast_words,
                          .head_words = now->head_words - before->head_words};
}

/* One optimiser step (0-based `step`); the mean loss over the replicas.
 * With `check`, its kernels are checked, and resident, its gradient and
 * AdamW update. */
static int train_step(trainer *t, const ws_corpus *c, int step, int *tok, int *tgt,
                      const ws_adamw *o, bool check, double *loss, wf_status *st) {
  batch(t, c, WS_TRAIN, step, tok, tgt);
  double l;
  int rc = WF_OK;
  t->m.counting = true; /* ReLU's zeros, in training passes only */
  ws_grid_counts before = t->tiled ? t->grid.counts : (ws_grid_counts){0};
  if (t->streaming) {
    l = ws_stream_train_step(&t->ws, &t->m, tok, tgt, o, step + 1);
    if (t->tiled) t->step_words = words_since(&t->grid.counts, &before);
    if (check) check_kernels(t);
  } else {
    l = ws_gpt_forward(&t->m, tok, tgt);
    ws_gpt_backward(&t->m, tok, tgt);
    if (t->tiled) t->step_words = words_since(&t->grid.counts, &before);
    if (check) check_kernels(t); /* this replica's gradients, before the average */
    average_gradients(t);
    ws_adamw_probe probe;
    ws_grad_check g = {0};
    if (check) {
      double t0 = MPI_Wtime();
      /* From initialisation only: at a trained state a long step along a
       * small slope leaves the loss's Taylor polynomial before the
       * differences resolve it (restarts at steps 30 to 59 of the default
       * deck failed correct gradients by up to 6 times the allowance). */
      if (step == t->first_step && step == 0)
        rc = ws_check_gradient(&t->m, tok, tgt, t->run->comm, true, &g, st);
      if (rc == WF_OK && (rc = ws_gpt_moments(&t->m, st)) == WF_OK) ws_adamw_probe_take(&probe, &t->m);
      t->check_seconds += MPI_Wtime() - t0;
      if (step == 0) t->grad = g;
    }
    if (rc == WF_OK && ws_gpt_update(&t->m, o, st) < 0) rc = st->code;
    if (rc == WF_OK && check) {
      const setup *s = t->s;
      double lr = ws_lr_reference(step, s->warmup, s->steps, s->lr, s->min_lr);
      /* every rank's samples: on a grid, each its own tiles' */
      double worst = ws_adamw_probe_compare(&probe, &t->m, o, lr, t->m.steps);
      worst = isnan(worst) ? INFINITY : worst;
      MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, t->run->comm);
      t->adamw_worst = wf_worse(t->adamw_worst, worst);
      t->step_checked = true;
    }
    if (check) t->last_checked = step + 1;
    if (check && step == 0) t->base_loss = g.base;
  }
  t->m.counting = false;
  MPI_Allreduce(MPI_IN_PLACE, &l, 1, MPI_DOUBLE, MPI_SUM, t->world);
  int holders = t->replicas * t->K; /* every rank of a wafer holds its replica's loss */
  *loss = l / holders;
  if (check && !t->streaming && step == 0) {
    /* the reported loss against the check's own mean over the replicas of
     * the same forward passes: two sums of the same values in double */
    double allowed = 4 * (holders + 1) * 0x1p-53 * fabs(t->base_loss) + 1e-300;
    t->loss_worst = wf_worse(t->loss_worst, fabs(*loss - t->base_loss) / allowed);
  }
  return rc;
}

/* The losses of the first `steps` steps, as a checkpoint keeps them for
 * its restart to go on with: every training loss, and the validation
 * losses a longer run also measures (not one taken only because this run
 * ended at `steps`). Rank 0 of `comm` writes them. */
typedef struct saved_losses {
  wf_ckpt_var v[2];
  double *train, *val;
} saved_losses;

static void saved_losses_make(saved_losses *l, const history *h, int steps, int eval_every,
                              MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned long long n = (unsigned long long)steps, nv = 0;
  l->train = wf_alloc_small(n, sizeof *l->train, "the losses of a checkpoint");
  l->val = wf_alloc_small(2 * (size_t)h->nval, sizeof *l->val, "the losses of a checkpoint");
  for (int i = 0; i < steps; i++) l->train[i] = h->train[i];
  for (int i = 0; i < h->nval; i++)
    if (h->val_step[i] <= steps && h->val_step[i] % eval_every == 0)
      l->val[2 * nv] = h->val_step[i], l->val[2 * nv + 1] = h->val[i], nv++;
  l->v[0] = (wf_ckpt_var){"train_loss", WF_F64, l->train, n, 0, rank == 0 ? n : 0};
  l->v[1] = (wf_ckpt_var){"val_loss", WF_F64, l->val, 2 * nv, 0, rank == 0 ? 2 * nv : 0};
}

/* A checkpoint after `steps` steps: resident, the first replica writes its
 * model; streaming, MemoryX gathers its blocks and writes them. */
static int save(trainer *t, const history *h, int steps, wf_status *st) {
  const char *path = t->s->checkpoint;
  const char *state = t->run->state;
  saved_losses l;
  if (!t->streaming) {
    saved_losses_make(&l, h, steps, t->s->eval_every, t->run->comm);
    ws_checkpoint_write(t->run->comm, path, state, &t->m, l.v, 2, st);
  } else if (t->ws.role == WF_ROLE_MEMORYX && ws_stream_gather(&t->ws, &t->whole, st) == WF_OK) {
    t->whole.steps = steps;
    saved_losses_make(&l, h, steps, t->s->eval_every, t->ws.role_comm);
    ws_checkpoint_write(t->ws.role_comm, path, state, &t->whole, l.v, 2, st);
  } else {
    l = (saved_losses){0};
  }
  free(l.train), free(l.val);
  wf_status_agree(t->world, st);
  return st->code;
}

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

/* The largest peak resident set (MB) of the wafer ranks, of the MemoryX
 * ranks and of the SwarmX ranks (collective over every rank). */
static void peak_rss_by_role(const trainer *t, double rss[3]) {
  struct rusage ru;
  /* ru_maxrss is in KiB on Linux; MB (10^6 bytes) as the state's */
  double mb = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss * 1024 / 1e6 : 0;
  wf_role role = t->run->roles->role;
  double mine[3] = {role == WF_ROLE_WAFER ? mb : 0, role == WF_ROLE_MEMORYX ? mb : 0,
                    role == WF_ROLE_SWARMX ? mb : 0};
  MPI_Allreduce(mine, rss, 3, MPI_DOUBLE, MPI_MAX, t->world);
}

/* Each layer's share of zero ReLU activations over the training passes of
 * all replicas (collective). */
static void zero_fractions(const trainer *t, double *sparsity) {
  int L = t->s->model.layers;
  double *sum = calloc(2 * (size_t)L, sizeof *sum);
  if (!sum) return;
  for (int l = 0; l < L && t->m.zeros; l++) sum[l] = t->m.zeros[l], sum[L + l] = t->m.seen[l];
  MPI_Allreduce(MPI_IN_PLACE, sum, 2 * L, MPI_DOUBLE, MPI_SUM, t->world);
  for (int l = 0; l < L; l++) sparsity[l] = sum[L + l] > 0 ? sum[l] / sum[L + l] : 0;
  free(sum);
}

/* A signal stopped the run before `step`: keep the state when there is a
 * checkpoint to keep it in. */
static int interrupted(trainer *t, const history *h, int step, int sig, wf_status *st) {
  const setup *s = t->s;
  char where[1200];
  if (!s->checkpoint[0]) {
    snprintf(where, sizeof where,
             "after %d of %d steps (no checkpoint: set train.checkpoint to "
             "keep one)",
             step, s->steps);
  } else if (save(t, h, step, st) == WF_OK) {
    snprintf(where, sizeof where,
             "after %d of %d steps; checkpoint written to %s (continue with "
             "--set train.restart=%s and another train.checkpoint)",
             step, s->steps, s->checkpoint, s->checkpoint);
  } else {
    snprintf(where, sizeof where, "after %d of %d steps; writing its checkpoint failed: %s", step,
             s->steps, st->msg);
  }
  return wf_signal_fail(st, sig, where);
}

static int train(trainer *t, const ws_corpus *c, history *h, measured *out, wf_status *st) {
  wf_run *run = t->run;
  const setup *s = t->s;
  int B = t->B, T = s->model.seq;
  int *tok = malloc((size_t)B * T * sizeof *tok), *tgt = malloc((size_t)B * T * sizeof *tgt);
  int failed = !tok || !tgt;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, t->world);
  if (failed) {
    free(tok), free(tgt);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a batch");
  }
  /* The start's validation, unless the run a restart continues measured it
   * (or, off the cadence, an uninterrupted run would not). */
  int rc = WF_OK, sig = 0;
  bool measured = h->nval > 0 && h->val_step[h->nval - 1] == h->first;
  if (!measured && h->first % s->eval_every == 0) {
    float v = validate(t, c, tok, tgt, &sig);
    if (sig)
      rc = interrupted(t, h, h->first, sig, st);
    else
      h->val[h->nval] = v, h->val_step[h->nval++] = h->first;
  }
  wf_progress prog;
  wf_progress_start(&prog, "train", h->end - h->first, run->verbose, stdout);
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, t->world);
  double train_seconds = 0;
  for (int step = h->first; step < h->end && rc == WF_OK; step++) {
    sig = step > h->first ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      rc = interrupted(t, h, step, sig, st);
      break;
    }
    MPI_Barrier(t->world);
    double t0 = MPI_Wtime(), loss;
    ws_adamw o = s->opt;
    o.lr = ws_lr_schedule(step, s->warmup, s->steps, s->lr, s->min_lr);
    /* the first and the last step are checked (the last has moved its
     * parameters off their initial values, and AdamW's moments off zero) */
    rc = train_step(t, c, step, tok, tgt, &o, step == h->first || step + 1 == h->end, &loss, st);
    train_seconds += wf_slowest(t->world, MPI_Wtime() - t0 - t->check_seconds);
    t->check_seconds = 0;
    h->train[step] = (float)loss;
    if (rc == WF_OK && !isfinite(loss)) /* the same on every rank: reduced over them */
      rc = wf_fail(st, WF_ERR_RUNTIME,
                   "the training loss is not finite at step %d: training diverged (a smaller "
                   "train.lr?) or the restart holds values it overflows on; no checkpoint of "
                   "this state is written",
                   step + 1);
    if (rc == WF_OK && ((step + 1) % s->eval_every == 0 || step + 1 == h->end)) {
      float v = validate(t, c, tok, tgt, &sig);
      if (sig) {
        rc = interrupted(t, h, step + 1, sig, st);
        break;
      }
      h->val[h->nval] = v, h->val_step[h->nval++] = step + 1;
      if (run->verbose)
        printf("train: step %d/%d, loss %.4f, validation %.4f, lr %.2e\n", step + 1, s->steps,
               h->train[step], h->val[h->nval - 1], o.lr);
    }
    /* After the validation: the checkpoint keeps the losses up to its step. */
    if (rc == WF_OK && s->checkpoint[0] && s->checkpoint_every > 0 &&
        (step + 1) % s->checkpoint_every == 0 && step + 1 < h->end)
      rc = save(t, h, step + 1, st);
    wf_progress_tick(&prog, step + 1 - h->first);
  }
  wf_signal_poll_end(&poll);
  if (rc == WF_OK && s->checkpoint[0]) rc = save(t, h, h->end, st);
  wf_status_agree(t->world, st);
  if (rc == WF_OK && st->code == WF_OK) {
    int steps = h->end - h->first;
    double tokens = (double)steps * s->batch * T;
    out->seconds = train_seconds;
    out->tokens_per_s = tokens / train_seconds;
    out->gflops = ws_step_flops(&s->model, s->batch, T) * steps / train_seconds / 1e9;
    out->first_val = h->val[0], out->last_val = h->val[h->nval - 1];
    out->first_loss = h->train[h->first], out->last_loss = h->train[h->end - 1];
    if (s->model.relu) zero_fractions(t, out->sparsity);
    if (t->tiled) {
      /* The run's products and exchanges over the wafer's ranks are its fabric traffic. */
      const ws_grid_counts *c = &t->grid.counts;
      double words = c->reduce_words + c->multicast_words + c->head_words;
      wf_fabric_count(&run->wafer->fab, c->products + c->exchanges, c->seconds, c->model_cycles, 0,
                      (long long)(4 * words));
      out->grid_words[0] = t->step_words.reduce_words;
      out->grid_words[1] = t->step_words.multicast_words;
      out->grid_words[2] = t->step_words.head_words;
      MPI_Allreduce(MPI_IN_PLACE, out->grid_words, 3, MPI_DOUBLE, MPI_SUM, t->grid.wafer);
    }
    if (t->K > 1) /* the first wafer's, on every rank (MemoryX and SwarmX hold no grid) */
      MPI_Bcast(out->grid_words, 3, MPI_DOUBLE, t->run->roles->first[WF_ROLE_WAFER], t->world);
    peak_rss_by_role(t, out->peak_rss);
    if (t->streaming) {
      out->stream = t->ws.stats;
      MPI_Allreduce(MPI_IN_PLACE, &out->stream, sizeof out->stream / sizeof(double), MPI_DOUBLE,
                    MPI_MAX, t->world);
      int n = ws_stream_fetches(&s->model);
      if (t->replica >= 0) /* the workers' slowest */
        MPI_Allreduce(MPI_IN_PLACE, t->ws.segment, n, MPI_DOUBLE, MPI_MAX, run->comm);
      ws_stream_hop_bytes(&t->ws, out->hop_bytes);
    }
  }
  free(tok), free(tgt);
  return rc != WF_OK ? rc : st->code;
}

/* The run's first and last steps against references that share none of
 * its code (ws_check.h), and the learning-rate schedule at every step. */
static void check_first_step(wf_run *run, const trainer *t, const setup *s) {
  char what[240];
  if (t->kernels_checked) {
    const ws_kernel_check *k = &t->kernels;
    snprintf(what, sizeof what,
             "LayerNorm mean and 1/sqrt(biased variance + 1e-5) of %d rows against their "
             "definition (worst %.2g of float round-off)",
             k->rows, k->layernorm);
    wf_run_check(run, k->layernorm <= 1, what);
    snprintf(what, sizeof what,
             "%s of %zu activations against its definition, and its slope against central "
             "differences of it (worst %.2g and %.2g of float round-off)",
             s->model.relu ? "ReLU" : "GELU", k->elements, k->activation, k->activation_slope);
    wf_run_check(run, k->activation <= 1 && k->activation_slope <= 1, what);
    if (k->layernorm_grads >= 0) {
      snprintf(what, sizeof what,
               "LayerNorm gain and bias gradients against their sums over the rows from the "
               "definition (worst %.2g of float round-off)",
               k->layernorm_grads);
      wf_run_check(run, k->layernorm_grads <= 1, what);
    }
  }
  bool from_start = t->first_step == 0;
  if (t->step_checked && from_start) {
    snprintf(what, sizeof what,
             "gradient of each of %d pieces (tensor, layer, q/k/v) against central differences "
             "of the loss (worst: %s, %.2g of what truncation and rounding allow)",
             t->grad.pieces, t->grad.worst_piece, t->grad.worst);
    wf_run_check(run, t->grad.pieces > 0 && t->grad.worst <= 1, what);
    snprintf(what, sizeof what,
             "the first step's reported loss against the gradient check's own mean over the "
             "replicas (%.2g of double round-off)",
             t->loss_worst);
    wf_run_check(run, t->loss_worst <= 1, what);
  } else if (t->step_checked) {
    wf_run_unchecked(run, "gradient against central differences of the loss",
                     "a restart starts from a trained state, where float differences do not "
                     "resolve every slope: the run from the start checks it");
  }
  if (t->step_checked) {
    snprintf(what, sizeof what,
             "AdamW update of %d sampled parameters against AdamW's definition at the first "
             "and last steps (worst %.2g of float round-off)",
             WS_PROBES, t->adamw_worst);
    wf_run_check(run, t->adamw_worst <= 1, what);
  } else {
    wf_run_unchecked(run, "gradient and AdamW step against their references",
                     "weight streaming keeps them on the MemoryX ranks: the same deck without "
                     "memoryx_ranks checks them");
  }
  double reductions = t->streaming ? ws_stream_reduction_worst(&t->ws) : NAN;
  if (!isnan(reductions)) {
    snprintf(what, sizeof what,
             "MemoryX's averaged gradient blocks at every step against the workers' checksums "
             "(worst %.2g of float round-off)",
             reductions);
    wf_run_check(run, reductions <= 1, what);
  }
  double lr = ws_lr_schedule_check(s->warmup, s->steps, s->lr, s->min_lr);
  if (run->verbose && t->step_checked && from_start)
    printf("train: step 1 checked: gradient against finite differences %.2g of its allowance "
           "(worst piece %s); steps 1 and %d: AdamW %.2g; schedule %.2g\n",
           t->grad.worst, t->grad.worst_piece, t->last_checked, t->adamw_worst, lr);
  wf_json_begin(run->summary, "train_checks");
  if (t->kernels_checked) {
    wf_json_num(run->summary, "layernorm_worst_of_allowed", t->kernels.layernorm);
    wf_json_num(run->summary, "activation_worst_of_allowed", t->kernels.activation);
    wf_json_num(run->summary, "activation_slope_worst_of_allowed", t->kernels.activation_slope);
    if (t->kernels.layernorm_grads >= 0)
      wf_json_num(run->summary, "layernorm_grads_worst_of_allowed", t->kernels.layernorm_grads);
  }
  if (t->step_checked && from_start) {
    wf_json_num(run->summary, "gradient_worst_of_allowed", t->grad.worst);
    wf_json_num(run->summary, "loss_worst_of_allowed", t->loss_worst);
  }
  if (t->step_checked) wf_json_num(run->summary, "adamw_worst_of_allowed", t->adamw_worst);
  if (!isnan(reductions)) wf_json_num(run->summary, "reductions_worst_of_allowed", reductions);
  wf_json_num(run->summary, "schedule_worst_of_allowed", lr);
  wf_json_end(run->summary);
  snprintf(what, sizeof what,
           "learning rate at each of %d steps against the schedule's definition (worst %.2g of "
           "float round-off)",
           s->steps, lr);
  wf_run_check(run, lr <= 1, what);
}

/* The weight-streaming figures of this run, a step's worth. */
typedef struct stream_report {
  double stall, predicted_stall, reduce_wait, update, step;
  double out_bytes_per_s, in_bytes_per_s, link, tokens_needed, tokens;
} stream_report;

static stream_report stream_figures(const trainer *t, const measured *r, int steps) {
  const setup *s = t->s;
  stream_report f = {0};
  double n = r->stream.steps > 0 ? r->stream.steps : 1;
  int nf = ws_stream_fetches(&s->model);
  double seg[2 * 1000 + 1], compute = 0;
  for (int i = 0; i < nf; i++) seg[i] = t->ws.segment ? t->ws.segment[i] / n : 0, compute += seg[i];
  f.step = r->seconds / steps;
  f.stall = r->stream.stall / n;
  f.reduce_wait = r->stream.reduce_wait / n;
  f.update = r->stream.update / n;
  f.link = s->memoryx_gbps > 0 ? s->memoryx_gbps * 1e9 : r->link;
  f.predicted_stall =
      ws_stream_predicted_stall(&s->model, t->px, t->py, t->ws.nmemx, s->prefetch, seg, f.link,
                                sizeof(ws_real));
  /* a wafer's fetches and gradients a step: every place's part of each block */
  double fetched = 0, model = 0;
  for (int i = 0; i < nf; i++)
    fetched +=
        (double)ws_block_wafer_size(&s->model, ws_stream_fetch_block(&s->model, i), t->px, t->py);
  for (int b = 0; b <= s->model.layers; b++)
    model += (double)ws_block_wafer_size(&s->model, b, t->px, t->py);
  f.out_bytes_per_s = fetched * sizeof(ws_real) / f.step;
  f.in_bytes_per_s = model * sizeof(ws_real) / f.step;
  /* This machine: the replica's FLOP/s while computing, 4-byte weights. */
  double rate = ws_step_flops(&s->model, t->B, s->model.seq) / (compute > 0 ? compute : 1);
  f.tokens_needed = sizeof(ws_real) * rate / (2 * f.link);
  f.tokens = (double)t->B * s->model.seq;
  return f;
}

static void report(trainer *t, const history *h, const measured *r, const ws_wafer_step *w) {
  wf_run *run = t->run;
  const setup *s = t->s;
  int steps = h->end - h->first;
  const wf_projection *p = &run->model;
  stream_report f = {0};
  if (t->streaming) f = stream_figures(t, r, steps);
  const char *prec = s->wafer_prec == WF_FP16 ? "fp16" : "fp32";
  if (run->verbose) {
    printf(
        "train: %d steps of %d x %d tokens on %d replica%s in %.2f s: %.0f tokens/s, %.2f "
        "GFLOP/s",
        steps, s->batch, s->model.seq, t->replicas, t->replicas > 1 ? "s" : "", r->seconds,
        r->tokens_per_s, r->gflops);
    if (r->sgemm > 0)
      printf(" = %.0f%% of sgemm (%.1f GFLOP/s on %d rank%s)", 100 * r->gflops / r->sgemm,
             r->sgemm, t->replicas * t->K, t->replicas * t->K > 1 ? "s" : "");
    printf("\ntrain: loss %.4f -> %.4f, validation %.4f -> %.4f (ln 256 = 5.545)\n", r->first_loss,
           r->last_loss, r->first_val, r->last_val);
    if (t->K > 1)
      printf("train: a wafer is %d ranks as %dx%d, each holding its 2D tiles of the weight "
             "matrices: a step's products move %.4g words of partial sums and %.4g of "
             "multicast activations between them, its attention heads (split over them) "
             "%.4g\n",
             t->K, t->px, t->py, r->grid_words[0], r->grid_words[1], r->grid_words[2]);
    if (t->streaming) {
      printf(
          "train: weight streaming from %d MemoryX rank%s (%d SwarmX), prefetch %d: a step %.2f "
          "ms, of it stall %.2f ms (%.1f%%; the link model predicts %.2f ms), gradient wait %.2f "
          "ms; AdamW on MemoryX %.2f ms\n",
          t->ws.nmemx, t->ws.nmemx > 1 ? "s" : "", t->ws.nswarm, s->prefetch, 1e3 * f.step,
          1e3 * f.stall, 100 * f.stall / f.step, 1e3 * f.predicted_stall, 1e3 * f.reduce_wait,
          1e3 * f.update);
      printf(
          "train: MemoryX sends %.2f GB/s of weights, takes %.2f GB/s of gradients; link %.2f "
          "GB/s (%s)\n",
          f.out_bytes_per_s / 1e9, f.in_bytes_per_s / 1e9, f.link / 1e9,
          s->memoryx_gbps > 0 ? "train.memoryx_gbps" : "measured");
      printf("train: SwarmX tree, fan-out %d, %d hop%s deep: a step sends %.4g MB down from "
             "MemoryX, %.4g MB down and %.4g MB up through SwarmX, %.4g MB up from the workers; "
             "16 MB reach %s at %.2f GB/s through it, %.2f GB/s by MPI_Bcast "
             "(%.2fx)\n",
             s->fanout, ws_relay_depth(&t->ws.relay),
             ws_relay_depth(&t->ws.relay) > 1 ? "s" : "",
             r->hop_bytes[0] / 1e6, r->hop_bytes[1] / 1e6, r->hop_bytes[2] / 1e6,
             r->hop_bytes[3] / 1e6, t->K > 1 ? "the first rank of every wafer" : "every worker",
             r->relay_rate[0] / 1e9, r->relay_rate[1] / 1e9,
             r->relay_rate[1] > 0 ? r->relay_rate[0] / r->relay_rate[1] : 0);
      printf(
          "train: no-stall condition: tokens a step per replica >= 4 B x FLOP/s / (2 x link) = "
          "%.0f; this run: %.0f (%s)\n",
          f.tokens_needed, f.tokens, f.tokens >= f.tokens_needed ? "holds" : "does NOT hold");
    }
    printf("train: a wafer rank holds %.1f MB of weights, gradients and AdamW moments",
           t->state[0] / 1e6);
    if (s->rank_mb > 0) printf(" (train.rank_mb: %g MB)", s->rank_mb);
    printf(", peak resident set %.0f MB", r->peak_rss[0]);
    if (t->streaming)
      printf("; the fullest MemoryX rank %.1f MB, peak resident set %.0f MB", t->state[1] / 1e6,
             r->peak_rss[1]);
    if (t->run->roles->count[WF_ROLE_SWARMX] > 0)
      printf("; the busiest SwarmX rank relays through %.1f MB, peak resident set %.0f MB",
             t->state[2] / 1e6, r->peak_rss[2]);
    printf("\n");
    printf("train: wafer model (%s, %s, %dx%d PEs, batch %d a wafer): %s, [%.3g, %.3g] s/step",
           run->wafer->hw.machine, prec, run->wafer->dc.pe_nx, run->wafer->dc.pe_ny, t->B,
           w->streaming ? "weight streaming" : "resident", p->seconds.lo, p->seconds.hi);
    if (w->streaming)
      printf(" (stall [%.3g, %.3g] s; no stall from %.0f tokens a step, this run %d)", w->stall.lo,
             w->stall.hi, w->tokens_needed, t->B * s->model.seq);
    printf("\n");
    if (s->model.relu) {
      double mean = 0;
      printf("train: ReLU: zero activations by layer:");
      for (int l = 0; l < s->model.layers; l++) {
        printf("%s %.0f%%", l ? "," : "", 100 * r->sparsity[l]);
        mean += r->sparsity[l] / s->model.layers;
      }
      printf(
          " (mean %.0f%%); skipping their multiplications the wafer takes [%.3g, %.3g] s of "
          "compute a step instead of [%.3g, %.3g]\n",
          100 * mean, w->compute.lo, w->compute.hi, w->dense.lo, w->dense.hi);
    }
    printf("train: wafer memory: resident needs %.0f B/PE, streaming %.0f, of %.0f: %s\n",
           w->resident_bytes, w->streaming_bytes, p->sram_for_data,
           !w->streaming ? "the model fits, so it stays on the wafer"
           : w->fits     ? "the weights do not fit, so they stream from MemoryX"
                         : "does NOT fit even streaming (the activations alone are too many)");
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "train");
  long long shape[5] = {s->model.layers, s->model.heads, s->model.channels, s->model.seq, s->batch};
  wf_json_ints(j, "layers_heads_channels_seq_batch", shape, 5);
  wf_json_int(j, "parameters", (long long)ws_param_count(&s->model));
  wf_json_int(j, "first_step", h->first);
  wf_json_int(j, "steps", steps);
  wf_json_int(j, "replicas", t->replicas);
  wf_json_int(j, "wafer_ranks", t->K);
  if (t->K > 1) {
    long long grid[2] = {t->px, t->py};
    wf_json_ints(j, "wafer_rank_grid", grid, 2);
    wf_json_num(j, "step_reduce_words", r->grid_words[0]);
    wf_json_num(j, "step_multicast_words", r->grid_words[1]);
    wf_json_num(j, "step_head_words", r->grid_words[2]);
  }
  wf_json_str(j, "mode", t->streaming ? "streaming" : "resident");
  wf_json_num(j, "seconds", r->seconds);
  wf_json_num(j, "tokens_per_s", r->tokens_per_s);
  wf_json_num(j, "GFLOPs", r->gflops);
  if (r->sgemm > 0) {
    wf_json_num(j, "sgemm_GFLOPs", r->sgemm);
    wf_json_num(j, "fraction_of_sgemm", r->gflops / r->sgemm);
  }
  wf_json_num(j, "first_loss", r->first_loss);
  wf_json_num(j, "last_loss", r->last_loss);
  wf_json_num(j, "first_val_loss", r->first_val);
  wf_json_num(j, "last_val_loss", r->last_val);
  wf_json_str(j, "activation", s->model.relu ? "relu" : "gelu");
  if (s->model.relu) wf_json_nums(j, "relu_zero_fraction", r->sparsity, s->model.layers);
  if (t->streaming) {
    wf_json_begin(j, "streaming");
    wf_json_int(j, "memoryx_ranks", t->ws.nmemx);
    wf_json_int(j, "swarmx_ranks", t->ws.nswarm);
    wf_json_int(j, "prefetch", s->prefetch);
    wf_json_num(j, "step_seconds", f.step);
    wf_json_num(j, "stall_seconds", f.stall);
    wf_json_num(j, "predicted_stall_seconds", f.predicted_stall);
    wf_json_num(j, "gradient_wait_seconds", f.reduce_wait);
    wf_json_num(j, "adamw_seconds", f.update);
    wf_json_num(j, "weights_out_bytes_per_s", f.out_bytes_per_s);
    wf_json_num(j, "gradients_in_bytes_per_s", f.in_bytes_per_s);
    wf_json_num(j, "link_bytes_per_s", f.link);
    wf_json_num(j, "no_stall_tokens_required", f.tokens_needed);
    wf_json_num(j, "tokens_per_replica", f.tokens);
    wf_json_begin(j, "swarmx_tree");
    wf_json_int(j, "fanout", s->fanout);
    wf_json_int(j, "depth", ws_relay_depth(&t->ws.relay));
    wf_json_nums(j, "step_bytes_memoryx_down_swarmx_down_swarmx_up_workers_up", r->hop_bytes, 4);
    wf_json_num(j, "relay_bytes_per_s", r->relay_rate[0]);
    wf_json_num(j, "bcast_bytes_per_s", r->relay_rate[1]);
    wf_json_end(j);
    wf_json_end(j);
  }
  wf_json_end(j);
  wf_json_begin(j, "state_memory");
  wf_json_num(j, "wafer_rank_mb", t->state[0] / 1e6);
  wf_json_num(j, "wafer_rank_budget_mb", s->rank_mb);
  wf_json_num(j, "wafer_rank_peak_rss_mb", r->peak_rss[0]);
  if (t->streaming) {
    wf_json_num(j, "memoryx_rank_mb", t->state[1] / 1e6);
    wf_json_num(j, "memoryx_rank_budget_mb", s->memoryx_mb);
    wf_json_num(j, "memoryx_peak_rss_mb", r->peak_rss[1]);
  }
  if (t->run->roles->count[WF_ROLE_SWARMX] > 0) {
    wf_json_num(j, "swarmx_rank_mb", t->state[2] / 1e6);
    wf_json_num(j, "swarmx_rank_budget_mb", s->swarmx_mb);
    wf_json_num(j, "swarmx_peak_rss_mb", r->peak_rss[2]);
  }
  wf_json_end(j);
  wf_json_begin(j, "model");
  wf_projection_json(p, j);
  wf_json_str(j, "wafer_mode", w->streaming ? "streaming" : "resident");
  wf_json_num(j, "resident_bytes_per_pe", w->resident_bytes);
  wf_json_num(j, "streaming_bytes_per_pe", w->streaming_bytes);
  wf_json_range(j, "stall_seconds", w->stall.lo, w->stall.hi);
  wf_json_num(j, "no_stall_tokens_required", w->tokens_needed);
  wf_json_range(j, "compute_seconds", w->compute.lo, w->compute.hi);
  wf_json_range(j, "dense_compute_seconds", w->dense.lo, w->dense.hi);
  wf_json_num(j, "fabric_link_words", w->links);
  wf_json_end(j);
  snprintf(run->headline, sizeof run->headline, "%d steps, val loss %.3f -> %.3f, %.0f tokens/s",
           steps, r->first_val, r->last_val, r->tokens_per_s);
}

static int write_output(wf_run *run, const history *h, const char *path, wf_status *st) {
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  bool root = run->rank == 0;
  /* The whole run's losses: a restart's include those of the run it continues. */
  unsigned long long zero = 0, n = (unsigned long long)h->end, nv = (unsigned long long)h->nval;
  double *train = malloc(n * sizeof *train), *val = malloc(nv * 2 * sizeof *val);
  int rc = train && val ? WF_OK : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_status_agree(run->comm, st);
  rc = st->code;
  if (rc == WF_OK) {
    for (size_t i = 0; i < n; i++) train[i] = h->train[i];
    for (size_t i = 0; i < nv; i++) val[2 * i] = h->val_step[i], val[2 * i + 1] = h->val[i];
    wf_h5_rows rt = {n, 1, root, &zero, &n}, rv = {nv, 2, root, &zero, &nv};
    if (wf_h5_write_rows(&f, "train_loss", WF_F64, &rt, train, st) != WF_OK ||
        wf_h5_write_rows(&f, "val_loss", WF_F64, &rv, val, st) != WF_OK ||
        wf_h5_attr_int(&f, "first_step", h->first, st) != WF_OK)
      rc = st->code;
  }
  free(train), free(val);
  return wf_h5_finish(&f, rc, st);
}

/* The losses a restart's checkpoint keeps (saved_losses) into h: a loss
 * for each of its steps, and validation losses at rising steps of the
 * cadence up to its own (what the rest of the run appends has room).
 * Collective over `comm`. */
static int read_losses(MPI_Comm comm, const char *path, history *h, int eval_every,
                       wf_status *st) {
  double *train = NULL, *val = NULL;
  unsigned long long n = 0, nv = 0;
  if (wf_checkpoint_read_series(comm, path, "train_loss", &train, &n, st) == WF_OK &&
      wf_checkpoint_read_series(comm, path, "val_loss", &val, &nv, st) == WF_OK) {
    bool ok = n == (unsigned long long)h->first && nv % 2 == 0;
    for (unsigned long long i = 0; ok && i < nv / 2; i++) {
      double step = val[2 * i];
      ok = step == (double)(eval_every * (long long)i) && step <= h->first;
    }
    if (!ok)
      wf_fail(st, WF_ERR_INPUT,
              "checkpoint '%s' holds %llu training losses and %llu validation losses, not those "
              "of its %d steps (a validation every %d): a damaged file",
              path, n, nv / 2, h->first, eval_every);
    for (unsigned long long i = 0; st->code == WF_OK && i < n; i++) h->train[i] = (float)train[i];
    for (unsigned long long i = 0; st->code == WF_OK && i < nv / 2; i++)
      h->val_step[i] = (int)val[2 * i], h->val[i] = (float)val[2 * i + 1];
    if (st->code == WF_OK) h->nval = (int)(nv / 2);
  }
  free(train), free(val);
  return st->code;
}

typedef struct curve {
  const setup *s;
  const history *h;
} curve;

/* "step train" lines, then "val step loss" lines (scripts/plot_loss.py). */
static void write_curve(FILE *f, const void *data) {
  const curve *c = data;
  for (int i = 0; i < c->h->end; i++) fprintf(f, "train %d %.6g\n", i + 1, c->h->train[i]);
  for (int i = 0; i < c->h->nval; i++) fprintf(f, "val %d %.6g\n", c->h->val_step[i], c->h->val[i]);
}

static int train_run(wf_run *run, wf_status *st) {
  wf_blas_single_thread(); /* the ranks are the parallelism */
  const wf_deck *d = run->deck;
  setup s;
  read_setup(d, &s);
  if (ws_config_check(&s.model, st) != WF_OK) return wf_deck_blame(d, "train", "heads", st);
  ws_corpus c;
  size_t max = (size_t)wf_deck_int(d, "train", "corpus_max_mb") << 20;
  if (ws_corpus_load(&c, run->world, s.corpus, max, s.val_fraction, s.model.seq, st) != WF_OK)
    return wf_deck_blame(d, "train", "corpus", st);
  trainer t;
  history h = {0};
  measured r = {0};
  int rc = trainer_create(&t, run, &s, st);
  if (rc == WF_OK) {
    if (t.first_step >= s.steps)
      rc = wf_deck_fail(d, "train", "steps", st,
                        "the checkpoint is at step %d: nothing to run (train.steps counts from the "
                        "start of the first run)",
                        t.first_step);
    h.first = t.first_step;
    h.end = s.stop_at > 0 && s.stop_at < s.steps ? s.stop_at : s.steps;
    if (rc == WF_OK && h.end <= h.first)
      rc = wf_deck_fail(d, "train", "stop_at", st, "step %d is not after the checkpoint's (%d)",
                        s.stop_at, h.first);
  }
  if (rc == WF_OK) {
    int nval = s.steps / s.eval_every + 2;
    h.train = calloc((size_t)s.steps, sizeof *h.train);
    h.val = calloc((size_t)nval, sizeof *h.val);
    h.val_step = calloc((size_t)nval, sizeof *h.val_step);
    int failed = !h.train || !h.val || !h.val_step;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->world);
    if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the loss history");
    if (rc == WF_OK && s.restart[0] &&
        (rc = read_losses(run->world, s.restart, &h, s.eval_every, st)) != WF_OK)
      rc = wf_deck_blame(d, "train", "restart", st);
  }
  if (rc == WF_OK && run->verbose)
    printf(
        "train: %zu parameters (%d layers, %d heads, %d channels), %d-byte sequences, batch "
        "%d over %d replica%s%s; corpus %s (%zu bytes, %.0f%% held out)\n",
        ws_param_count(&s.model), s.model.layers, s.model.heads, s.model.channels, s.model.seq,
        s.batch, t.replicas, t.replicas > 1 ? "s" : "",
        t.streaming ? ", weights streamed from MemoryX" : "", s.corpus, c.len,
        100 * s.val_fraction);
  if (rc == WF_OK && t.streaming) {
    r.link = ws_stream_link_rate(run->world, run->roles);
    ws_relay_rates(&t.ws.relay, run->world, 1 << 22, r.relay_rate);
  }
  if (rc == WF_OK) rc = train(&t, &c, &h, &r, st);
  if (rc == WF_OK) {
    if (wf_deck_bool(d, "train", "sgemm"))
      r.sgemm = sgemm_rate(run->world) * t.replicas * t.K;
    char what[160];
    if (s.loss_target > 0)
      snprintf(what, sizeof what, "validation loss %.4f at most the target %.4f after %d steps",
               r.last_val, s.loss_target, s.steps);
    else
      snprintf(what, sizeof what, "validation loss falls: %.4f -> %.4f", r.first_val, r.last_val);
    wf_run_check(run, s.loss_target > 0 ? r.last_val <= s.loss_target : r.last_val < r.first_val,
                 what);
    check_first_step(run, &t, &s);
    ws_wafer_step w = {0};
    if (run->wafer) { /* the replicas' ranks: the world's first, which reports */
      run->model =
          ws_model_step(run->wafer, &s.model, s.wafer_prec, t.B, s.prefetch, r.sparsity, &w);
      report(&t, &h, &r, &w);
    }
    run->seconds = r.seconds;
    run->wafer_seconds = wf_range_scale(run->model.seconds, h.end - h.first);
  }
  /* Files from the replicas' ranks (all of them, resident), which hold the
   * history like every rank; the others learn how it went. */
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0] && run->wafer) rc = write_output(run, &h, out, st);
  const char *png = wf_deck_str(d, "train", "plot");
  if (rc == WF_OK && png[0] && run->wafer) {
    curve cv = {&s, &h};
    char title[128];
    snprintf(title, sizeof title, "%d layers, %d heads, %d channels; batch %d x %d bytes",
             s.model.layers, s.model.heads, s.model.channels, s.batch, s.model.seq);
    rc = wf_run_plot(run, "plot_loss.py", png, title, write_curve, &cv,
                     st);
  }
  wf_status_agree(run->world, st);
  free(h.train), free(h.val), free(h.val_step);
  trainer_free(&t);
  ws_corpus_free(&c);
  return st->code;
}

const wf_workload wf_train_workload = {
    .name = "train",
    .help = "a GPT-style decoder trained on bytes of text, on wafers of ranks (2D weight tiles)",
    .sections = train_sections,
    .nsections = 1,
    .run = train_run,
    .rank_roles = true,
};
