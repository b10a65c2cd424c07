/* `wafer train` (train_workload.h): training of ws_gpt on a byte corpus by
 * wafers of ranks (each wafer's weight matrices in 2D tiles over its ranks:
 * ws_grid.h), the wafers data-parallel replicas whose gradients are
 * averaged after each backward pass, AdamW on every replica alike; the validation loss checked
 * to fall; tokens/s, GFLOP/s against this machine's sgemm; the loss curve in
 * HDF5 and a PNG; the step projected onto the wafer. */
#include "train_workload.h"
#include "train_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_cblas.h"
#include "wf_io.h"
#include "wf_timing.h"

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
     wf_key_hdf5},
    {"checkpoint_every", WF_KEY_INT, "0", 0, 1e9, NULL, "steps between checkpoints (0: the end)",
     NULL},
    {"restart", WF_KEY_INPUT, "", 0, 0, NULL,
     "continue from this checkpoint, bit for bit ('' = start afresh)", wf_key_hdf5},
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

/* The run's steps, [h->first, h->end), from the checkpoint a restart reads
 * to train.steps (or stop_at); the loss history's room, and a restart's
 * losses in it. */
static int plan_steps(wf_run *run, const setup *s, const trainer *t, history *h, wf_status *st) {
  const wf_deck *d = run->deck;
  if (t->first_step >= s->steps)
    return wf_deck_fail(d, "train", "steps", st,
                        "the checkpoint is at step %d: nothing to run (train.steps counts from the "
                        "start of the first run)",
                        t->first_step);
  h->first = t->first_step;
  h->end = s->stop_at > 0 && s->stop_at < s->steps ? s->stop_at : s->steps;
  if (h->end <= h->first)
    return wf_deck_fail(d, "train", "stop_at", st, "step %d is not after the checkpoint's (%d)",
                        s->stop_at, h->first);
  int nval = s->steps / s->eval_every + 2;
  h->train = calloc((size_t)s->steps, sizeof *h->train);
  h->val = calloc((size_t)nval, sizeof *h->val);
  h->val_step = calloc((size_t)nval, sizeof *h->val_step);
  int failed = !h->train || !h->val || !h->val_step;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->world);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the loss history");
  if (s->restart[0] && train_read_losses(run->world, s->restart, h, s->eval_every, st) != WF_OK)
    return wf_deck_blame(d, "train", "restart", st);
  return WF_OK;
}

static void announce(const wf_run *run, const setup *s, const trainer *t, const ws_corpus *c) {
  if (!run->verbose) return;
  printf("train: %zu parameters (%d layers, %d heads, %d channels), %d-byte sequences, batch "
         "%d over %d replica%s%s; corpus %s (%zu bytes, %.0f%% held out)\n",
         ws_param_count(&s->model), s->model.layers, s->model.heads, s->model.channels,
         s->model.seq, s->batch, t->replicas, t->replicas > 1 ? "s" : "",
         t->streaming ? ", weights streamed from MemoryX" : "", s->corpus, c->len,
         100 * s->val_fraction);
}

/* The links' rates a streamed run reports, measured before the first step. */
static void measure_links(wf_run *run, trainer *t, measured *r) {
  if (!t->streaming) return;
  r->link = ws_stream_link_rate(run->world, run->roles);
  ws_relay_rates(&t->ws.relay, run->world, 1 << 22, r->relay_rate);
}

/* The run's checks (the loss, the first and last steps), the wafer model of
 * a step, and the report from the wafer ranks (the world's first reports). */
static void check_and_report(wf_run *run, const setup *s, trainer *t, const history *h,
                             measured *r) {
  if (wf_deck_bool(run->deck, "train", "sgemm"))
    r->sgemm = sgemm_rate(run->world) * t->replicas * t->K;
  char what[160];
  if (s->loss_target > 0)
    snprintf(what, sizeof what, "validation loss %.4f at most the target %.4f after %d steps",
             r->last_val, s->loss_target, s->steps);
  else
    snprintf(what, sizeof what, "validation loss falls: %.4f -> %.4f", r->first_val, r->last_val);
  wf_run_check(run, s->loss_target > 0 ? r->last_val <= s->loss_target : r->last_val < r->first_val,
               what);
  train_checks(run, t, s);
  ws_wafer_step w = {0};
  if (run->wafer) {
    run->model = ws_model_step(run->wafer, &s->model, s->wafer_prec, t->B, s->prefetch,
                               r->sparsity, &w);
    run->model.systems = t->replicas; /* a step runs on every replica's wafer at once */
    train_report(t, h, r, &w);
  }
  run->seconds = r->seconds;
  run->wafer_seconds = wf_range_scale(run->model.seconds, h->end - h->first);
}

/* The loss history (HDF5) and its plot, from the wafer ranks (all of them,
 * resident), which hold the history like every rank. */
static int write_files(wf_run *run, const setup *s, const history *h, wf_status *st) {
  const char *out = wf_deck_str(run->deck, "output", "file");
  const char *png = wf_deck_str(run->deck, "train", "plot");
  int rc = WF_OK;
  if (out[0] && run->wafer) rc = train_write_output(run, h, out, st);
  if (rc == WF_OK && png[0] && run->wafer) {
    curve cv = {s, h};
    char title[128];
    snprintf(title, sizeof title, "%d layers, %d heads, %d channels; batch %d x %d bytes",
             s->model.layers, s->model.heads, s->model.channels, s->batch, s->model.seq);
    rc = wf_run_plot(run, "plot_loss.py", png, title, write_curve, &cv, st);
  }
  return rc;
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
  if (rc == WF_OK) rc = plan_steps(run, &s, &t, &h, st);
  if (rc == WF_OK) announce(run, &s, &t, &c);
  if (rc == WF_OK) measure_links(run, &t, &r);
  if (rc == WF_OK) rc = train_loop(&t, &c, &h, &r, st);
  if (rc == WF_OK) check_and_report(run, &s, &t, &h, &r);
  if (rc == WF_OK) rc = write_files(run, &s, &h, st);
  wf_status_agree(run->world, st); /* the others learn how it went */
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
