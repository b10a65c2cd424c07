/* `wafer train` (train_workload.h): data-parallel training of ws_gpt on a
 * byte corpus, the gradients averaged over the replicas after each
 * backward pass, AdamW on every replica alike; the validation loss checked
 * to fall; tokens/s, GFLOP/s against this machine's sgemm; the loss curve in
 * HDF5 and a PNG; the step projected onto the wafer. */
#include "train_workload.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_io.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_signal.h"
#include "wf_timing.h"
#include "wf_wafer.h"
#include "ws_checkpoint.h"
#include "ws_corpus.h"
#include "ws_gpt.h"

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
    {"heads", WF_KEY_INT, "4", 1, 1024, NULL, "attention heads (channels must split into them)",
     NULL},
    {"channels", WF_KEY_INT, "64", 1, 65536, NULL, "width of the residual stream", NULL},
    {"seq", WF_KEY_INT, "64", 1, 65536, NULL, "tokens (bytes) a sequence", NULL},
    {"batch", WF_KEY_INT, "8", 1, 1e6, NULL,
     "sequences a step, over all replicas (a multiple of the rank count)", NULL},
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
};
static const wf_section train_section = {
    "train", "A GPT-style decoder trained on bytes of text, data-parallel over the ranks.",
    train_keys, (int)(sizeof train_keys / sizeof train_keys[0])};
static const wf_section *const train_sections[] = {&train_section};

typedef struct setup {
  ws_config model;
  int batch, steps, warmup, eval_every, eval_batches, checkpoint_every, stop_at;
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
                         .channels = (int)wf_deck_int(d, "train", "channels")};
  s->batch = (int)wf_deck_int(d, "train", "batch");
  s->steps = (int)wf_deck_int(d, "train", "steps");
  s->warmup = (int)wf_deck_int(d, "train", "warmup");
  s->eval_every = (int)wf_deck_int(d, "train", "eval_every");
  s->eval_batches = (int)wf_deck_int(d, "train", "eval_batches");
  s->lr = (float)wf_deck_real(d, "train", "lr");
  s->min_lr = (float)wf_deck_real(d, "train", "min_lr");
  s->opt = (ws_adamw){.beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                      .weight_decay = (float)wf_deck_real(d, "train", "weight_decay"),
                      .clip = (float)wf_deck_real(d, "train", "clip")};
  s->val_fraction = wf_deck_real(d, "train", "val_fraction");
  s->loss_target = wf_deck_real(d, "train", "loss_target");
  s->seed = (unsigned long long)wf_deck_int(d, "train", "seed");
  s->wafer_prec = strcmp(wf_deck_str(d, "train", "wafer_precision"), "fp32") == 0 ? WF_FP32 : WF_FP16;
  s->checkpoint_every = (int)wf_deck_int(d, "train", "checkpoint_every");
  s->stop_at = (int)wf_deck_int(d, "train", "stop_at");
  s->checkpoint = wf_deck_str(d, "train", "checkpoint");
  s->restart = wf_deck_str(d, "train", "restart");
  s->corpus = wf_deck_str(d, "train", "corpus");
  if (!s->corpus[0]) s->corpus = DEFAULT_CORPUS;
}

/* Multiply-adds of one forward pass over B x T tokens, counted from the
 * matmuls and the attention (causal: T (T + 1) / 2 scores a head). */
static double forward_flops(const ws_config *c, int B, int T) {
  double C = c->channels, L = c->layers, V = c->vocab, N = (double)B * T;
  double matmuls = N * (L * (3 * C * C + C * C + 8 * C * C) + V * C);
  double attention = L * B * (double)T * (T + 1) / 2 * 2 * C; /* scores and the weighted sum */
  return 2 * (matmuls + attention);
}

/* This machine's sgemm rate per rank, GFLOP/s (best of 5, 512^3, one thread). */
static double sgemm_rate(MPI_Comm comm) {
  const int n = 512;
  float *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * n * sizeof *b),
        *c = malloc((size_t)n * n * sizeof *c);
  double best = 0;
  if (a && b && c) {
    for (size_t i = 0; i < (size_t)n * n; i++) a[i] = 1e-3f * (float)(i % 97), b[i] = 1e-3f * (float)(i % 89);
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
  int first, end;          /* the steps this run did: [first, end) */
  float *train;            /* loss of each step (of all the run's steps) */
  int *val_step, nval;     /* validation losses and their steps */
  float *val;
} history;

/* The mean validation loss over eval_batches global batches. */
static float validate(wf_run *run, const setup *s, ws_gpt *m, const ws_corpus *c, int *tok,
                      int *tgt) {
  double sum = 0;
  int B = m->B, T = m->T;
  for (int k = 0; k < s->eval_batches; k++) {
    ws_corpus_batch(c, WS_VAL, s->seed, k, run->rank * B, B, T, tok, tgt);
    sum += ws_gpt_forward(m, tok, tgt);
  }
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, run->comm);
  return (float)(sum / ((double)s->eval_batches * run->nranks));
}

/* The replicas' gradients averaged (every replica's batch is the same size). */
static void average_gradients(wf_run *run, ws_gpt *m) {
  if (run->nranks == 1) return;
  MPI_Allreduce(MPI_IN_PLACE, m->g.mem, (int)m->g.count, MPI_FLOAT, MPI_SUM, run->comm);
  float inv = 1.0f / (float)run->nranks;
  for (size_t i = 0; i < m->g.count; i++) m->g.mem[i] *= inv;
}

typedef struct measured {
  double seconds;          /* the training steps, slowest rank */
  double tokens_per_s, gflops, sgemm;
  float first_val, last_val, first_loss, last_loss;
} measured;

/* A signal stopped the run before `step`: keep the state when there is a
 * checkpoint to keep it in. */
static int interrupted(wf_run *run, const setup *s, ws_gpt *m, int step, int sig, wf_status *st) {
  char where[1200];
  if (!s->checkpoint[0]) {
    snprintf(where, sizeof where, "after %d of %d steps (no checkpoint: set train.checkpoint to "
             "keep one)", step, s->steps);
  } else if (ws_checkpoint_write(run->comm, s->checkpoint, m, st) == WF_OK) {
    snprintf(where, sizeof where, "after %d of %d steps; checkpoint written to %s (continue with "
             "--set train.restart=%s and another train.checkpoint)", step, s->steps, s->checkpoint,
             s->checkpoint);
  } else {
    snprintf(where, sizeof where, "after %d of %d steps; writing its checkpoint failed: %s", step,
             s->steps, st->msg);
  }
  return wf_signal_fail(st, sig, where);
}

static int train(wf_run *run, const setup *s, ws_gpt *m, const ws_corpus *c, history *h,
                 measured *out, wf_status *st) {
  int B = m->B, T = m->T;
  int *tok = malloc((size_t)B * T * sizeof *tok), *tgt = malloc((size_t)B * T * sizeof *tgt);
  int failed = !tok || !tgt;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(tok), free(tgt);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a batch");
  }
  h->val[h->nval] = validate(run, s, m, c, tok, tgt);
  h->val_step[h->nval++] = h->first;
  wf_progress prog;
  wf_progress_start(&prog, "train", h->end - h->first, run->verbose, stdout);
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  int rc = WF_OK;
  double train_seconds = 0;
  for (int step = h->first; step < h->end && rc == WF_OK; step++) {
    int sig = step > h->first ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      rc = interrupted(run, s, m, step, sig, st);
      break;
    }
    MPI_Barrier(run->comm);
    double t0 = MPI_Wtime();
    ws_corpus_batch(c, WS_TRAIN, s->seed, step, run->rank * B, B, T, tok, tgt);
    double loss = ws_gpt_forward(m, tok, tgt);
    ws_gpt_backward(m, tok, tgt);
    average_gradients(run, m);
    MPI_Allreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, run->comm);
    ws_adamw o = s->opt;
    o.lr = ws_lr_schedule(step, s->warmup, s->steps, s->lr, s->min_lr);
    if (ws_gpt_update(m, &o, st) < 0) rc = st->code;
    train_seconds += wf_slowest(run->comm, MPI_Wtime() - t0);
    h->train[step] = (float)(loss / run->nranks);
    if (rc == WF_OK && s->checkpoint[0] && s->checkpoint_every > 0 &&
        (step + 1) % s->checkpoint_every == 0 && step + 1 < h->end)
      rc = ws_checkpoint_write(run->comm, s->checkpoint, m, st);
    if ((step + 1) % s->eval_every == 0 || step + 1 == h->end) {
      h->val[h->nval] = validate(run, s, m, c, tok, tgt);
      h->val_step[h->nval++] = step + 1;
      if (run->verbose)
        printf("train: step %d/%d, loss %.4f, validation %.4f, lr %.2e\n", step + 1, s->steps,
               h->train[step], h->val[h->nval - 1], o.lr);
    }
    wf_progress_tick(&prog, step + 1 - h->first);
  }
  wf_signal_poll_end(&poll);
  if (rc == WF_OK && s->checkpoint[0]) rc = ws_checkpoint_write(run->comm, s->checkpoint, m, st);
  wf_status_agree(run->comm, st);
  if (rc == WF_OK && st->code == WF_OK) {
    int steps = h->end - h->first;
    double tokens = (double)steps * s->batch * T;
    out->seconds = train_seconds;
    out->tokens_per_s = tokens / train_seconds;
    out->gflops = 3 * forward_flops(&s->model, s->batch, T) * steps / train_seconds / 1e9;
    out->first_val = h->val[0], out->last_val = h->val[h->nval - 1];
    out->first_loss = h->train[h->first], out->last_loss = h->train[h->end - 1];
  }
  free(tok), free(tgt);
  return rc != WF_OK ? rc : st->code;
}

/* The resident step on the wafer: its multiply-adds spread evenly over the
 * PE grid at the precision's FMAC rate and SRAM ports; weights, gradients,
 * AdamW's moments and the activations must fit the PEs' memory. The
 * weight-streaming terms (MemoryX, SwarmX) come with the streaming mode. */
static void project(wf_run *run, const setup *s, const ws_gpt *m) {
  const wf_wafer *w = run->wafer;
  double pes = (double)w->dc.pe_nx * w->dc.pe_ny;
  double flops = 3 * forward_flops(&s->model, s->batch, s->model.seq);
  wf_range cycles = wf_model_vec(&w->hw, WF_OP_FMAC, s->wafer_prec, flops / 2 / pes, 2, 1);
  double value = wf_prec_bytes(s->wafer_prec);
  double bytes = (double)m->p.count * (2 * value + 8) + (double)m->a.count / run->nranks *
                 s->batch / m->B * value;
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(&w->hw, cycles),
                               .flops = flops,
                               .bytes_per_pe = bytes / pes,
                               .sram_for_data = wf_model_sram_for_data(&w->hw),
                               .pes_needed = pes,
                               .pes_offered = (double)w->hw.pe_nx * w->hw.pe_ny};
}

static void report(wf_run *run, const setup *s, const ws_gpt *m, const history *h,
                   const measured *r) {
  int steps = h->end - h->first;
  const wf_projection *p = &run->model;
  if (run->verbose) {
    printf("train: %d steps of %d x %d tokens on %d replica%s in %.2f s: %.0f tokens/s, %.2f "
           "GFLOP/s",
           steps, s->batch, s->model.seq, run->nranks, run->nranks > 1 ? "s" : "", r->seconds,
           r->tokens_per_s, r->gflops);
    if (r->sgemm > 0)
      printf(" = %.0f%% of sgemm (%.1f GFLOP/s on %d rank%s)", 100 * r->gflops / r->sgemm,
             r->sgemm, run->nranks, run->nranks > 1 ? "s" : "");
    printf("\ntrain: loss %.4f -> %.4f, validation %.4f -> %.4f (ln 256 = 5.545)\n", r->first_loss,
           r->last_loss, r->first_val, r->last_val);
    printf("train: wafer model (%s, %s, %dx%d PEs, resident): [%.3g, %.3g] s/step; %.0f B/PE of "
           "%.0f (%s)\n",
           run->wafer->hw.machine, s->wafer_prec == WF_FP16 ? "fp16" : "fp32", run->wafer->dc.pe_nx,
           run->wafer->dc.pe_ny, p->seconds.lo, p->seconds.hi, p->bytes_per_pe, p->sram_for_data,
           p->bytes_per_pe <= p->sram_for_data ? "fits" : "does NOT fit");
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "train");
  long long shape[5] = {s->model.layers, s->model.heads, s->model.channels, s->model.seq,
                        s->batch};
  wf_json_ints(j, "layers_heads_channels_seq_batch", shape, 5);
  wf_json_int(j, "parameters", (long long)m->p.count);
  wf_json_int(j, "first_step", h->first);
  wf_json_int(j, "steps", steps);
  wf_json_int(j, "replicas", run->nranks);
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
  wf_json_end(j);
  wf_json_begin(j, "model");
  wf_projection_json(p, j);
  wf_json_end(j);
  snprintf(run->headline, sizeof run->headline, "%d steps, val loss %.3f -> %.3f, %.0f tokens/s",
           steps, r->first_val, r->last_val, r->tokens_per_s);
}

static int write_output(wf_run *run, const history *h, const char *path, wf_status *st) {
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  bool root = run->rank == 0;
  unsigned long long zero = 0, n = (unsigned long long)(h->end - h->first),
                     nv = (unsigned long long)h->nval;
  double *train = malloc(n * sizeof *train), *val = malloc(nv * 2 * sizeof *val);
  int rc = train && val ? WF_OK : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_status_agree(run->comm, st);
  rc = st->code;
  if (rc == WF_OK) {
    for (size_t i = 0; i < n; i++) train[i] = h->train[h->first + i];
    for (size_t i = 0; i < nv; i++) val[2 * i] = h->val_step[i], val[2 * i + 1] = h->val[i];
    wf_h5_rows rt = {n, 1, root, &zero, &n}, rv = {nv, 2, root, &zero, &nv};
    if (wf_h5_write_rows(&f, "train_loss", WF_F64, &rt, train, st) != WF_OK ||
        wf_h5_write_rows(&f, "val_loss", WF_F64, &rv, val, st) != WF_OK ||
        wf_h5_attr_int(&f, "first_step", h->first, st) != WF_OK)
      rc = st->code;
  }
  free(train), free(val);
  if (rc != WF_OK) {
    wf_h5_discard(&f);
    return rc;
  }
  return wf_h5_close(&f, st);
}

typedef struct curve {
  const setup *s;
  const history *h;
} curve;

/* "step train" lines, then "val step loss" lines (scripts/plot_loss.py). */
static void write_curve(FILE *f, const void *data) {
  const curve *c = data;
  for (int i = c->h->first; i < c->h->end; i++) fprintf(f, "train %d %.6g\n", i + 1, c->h->train[i]);
  for (int i = 0; i < c->h->nval; i++) fprintf(f, "val %d %.6g\n", c->h->val_step[i], c->h->val[i]);
}

static int train_run(wf_run *run, wf_status *st) {
  openblas_set_num_threads(1); /* the ranks are the parallelism */
  const wf_deck *d = run->deck;
  setup s;
  read_setup(d, &s);
  if (ws_config_check(&s.model, st) != WF_OK) return wf_deck_blame(d, "train", "heads", st);
  if (s.batch % run->nranks != 0)
    return wf_deck_fail(d, "train", "batch", st,
                        "%d sequences do not split evenly over %d replicas (ranks)", s.batch,
                        run->nranks);
  ws_corpus c;
  size_t max = (size_t)wf_deck_int(d, "train", "corpus_max_mb") << 20;
  if (ws_corpus_load(&c, run->comm, s.corpus, max, s.val_fraction, s.model.seq, st) != WF_OK)
    return wf_deck_blame(d, "train", "corpus", st);
  ws_gpt m;
  history h = {0};
  measured r = {0};
  int rc = ws_gpt_create(&m, &s.model, s.batch / run->nranks, s.model.seq, st);
  if (rc == WF_OK) {
    ws_gpt_init(&m, s.seed);
    if (s.restart[0] && ws_checkpoint_read(run->comm, s.restart, &m, st) != WF_OK)
      rc = wf_deck_blame(d, "train", "restart", st);
    else if (m.steps >= s.steps)
      rc = wf_deck_fail(d, "train", "steps", st,
                        "the checkpoint is at step %d: nothing to run (train.steps counts from the "
                        "start of the first run)",
                        m.steps);
    h.first = m.steps;
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
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
    if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the loss history");
  }
  if (rc == WF_OK && run->verbose)
    printf("train: %zu parameters (%d layers, %d heads, %d channels), %d-byte sequences, batch "
           "%d over %d replica%s; corpus %s (%zu bytes, %.0f%% held out)\n",
           m.p.count, s.model.layers, s.model.heads, s.model.channels, s.model.seq, s.batch,
           run->nranks, run->nranks > 1 ? "s" : "", s.corpus, c.len, 100 * s.val_fraction);
  if (rc == WF_OK) rc = train(run, &s, &m, &c, &h, &r, st);
  if (rc == WF_OK) {
    if (wf_deck_bool(d, "train", "sgemm")) r.sgemm = sgemm_rate(run->comm) * run->nranks;
    char what[160];
    if (s.loss_target > 0)
      snprintf(what, sizeof what, "validation loss %.4f at most the target %.4f after %d steps",
               r.last_val, s.loss_target, s.steps);
    else
      snprintf(what, sizeof what, "validation loss falls: %.4f -> %.4f", r.first_val, r.last_val);
    wf_run_check(run, s.loss_target > 0 ? r.last_val <= s.loss_target : r.last_val < r.first_val,
                 what);
    project(run, &s, &m);
    report(run, &s, &m, &h, &r);
    run->seconds = r.seconds;
    run->wafer_seconds = wf_range_scale(run->model.seconds, h.end - h.first);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &h, out, st);
  const char *png = wf_deck_str(d, "train", "plot");
  if (rc == WF_OK && png[0]) {
    curve cv = {&s, &h};
    char title[128];
    snprintf(title, sizeof title, "%d layers, %d heads, %d channels; batch %d x %d bytes",
             s.model.layers, s.model.heads, s.model.channels, s.batch, s.model.seq);
    rc = wf_run_plot(run, WAFER_SOURCE_DIR "/scripts/plot_loss.py", png, title, write_curve, &cv,
                     st);
  }
  free(h.train), free(h.val), free(h.val_step);
  ws_gpt_free(&m);
  ws_corpus_free(&c);
  return rc;
}

const wf_workload wf_train_workload = {
    .name = "train",
    .help = "a GPT-style decoder trained on bytes of text, data-parallel over the ranks",
    .sections = train_sections,
    .nsections = 1,
    .run = train_run,
};
