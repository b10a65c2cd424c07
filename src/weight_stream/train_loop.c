/* `wafer train`'s loop (train_parts.h): the training steps, validations,
 * checkpoints (with the losses so far) and signals, and what the run
 * measured; a restart's losses read back. */
#include "train_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "wf_io.h"
#include "wf_memory.h"
#include "wf_progress.h"
#include "wf_signal.h"
#include "wf_timing.h"
#include "ws_checkpoint.h"

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

/* What the run measured, from the training steps' `seconds` (the slowest
 * rank's) and every rank's counts (collective over every rank). */
static void take_measures(trainer *t, const history *h, double train_seconds, measured *out) {
  wf_run *run = t->run;
  const setup *s = t->s;
  int T = s->model.seq;
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
    /* The grid's collectives, and 3 a step over every rank of the run: the
     * loop's barrier and slowest time (train_loop) and the loss's sum
     * (trainer_step). */
    wf_fabric_counters d = {.ops = c->products + c->exchanges,
                            .line_collectives = c->line_collectives,
                            .collectives = c->collectives + 3LL * steps,
                            .seconds = c->seconds, .model_cycles = c->model_cycles,
                            .mpi_bytes = (long long)(4 * words)};
    wf_fabric_main_begin(&run->wafer->fab); /* counted in bulk: all of it the steps' */
    wf_fabric_count(&run->wafer->fab, &d);
    wf_fabric_main_end(&run->wafer->fab, steps);
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

int train_loop(trainer *t, const ws_corpus *c, history *h, measured *out, wf_status *st) {
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
    float v = trainer_validate(t, c, tok, tgt, &sig);
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
    rc = trainer_step(t, c, step, tok, tgt, &o, step == h->first || step + 1 == h->end, &loss, st);
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
      float v = trainer_validate(t, c, tok, tgt, &sig);
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
  if (rc == WF_OK && st->code == WF_OK) take_measures(t, h, train_seconds, out);
  free(tok), free(tgt);
  return rc != WF_OK ? rc : st->code;
}

/* The losses a restart's checkpoint keeps (saved_losses) into h: a loss
 * for each of its steps, and validation losses at rising steps of the
 * cadence up to its own (what the rest of the run appends has room).
 * Collective over `comm`. */
int train_read_losses(MPI_Comm comm, const char *path, history *h, int eval_every,
                       wf_status *st) {
  double *train = NULL, *val = NULL;
  unsigned long long n = 0, nv = 0;
  /* a loss a step, and (step, loss) pairs a validation, up to its step */
  unsigned long long steps = (unsigned long long)h->first;
  unsigned long long vals = 2 * (steps / (unsigned long long)eval_every + 1);
  if (wf_checkpoint_read_series(comm, path, "train_loss", steps, &train, &n, st) == WF_OK &&
      wf_checkpoint_read_series(comm, path, "val_loss", vals, &val, &nv, st) == WF_OK) {
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
