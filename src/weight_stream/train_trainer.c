/* `wafer train`'s trainer (train_parts.h): who holds what (wafers of ranks,
 * their grids, the model or the streamed blocks), the memory budgets checked
 * before anything is allocated, and one optimiser step with its checks. */
#include "train_parts.h"

#include <math.h>
#include <string.h>

#include "wf_io.h"
#include "wf_memory.h"
#include "wf_mpi.h"
#include "wf_signal.h"
#include "ws_checkpoint.h"
#include "ws_memory.h"

void trainer_free(trainer *t) {
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

/* What each rank will hold against the memory its node has free, before
 * anything is allocated: a model far too large for the machine once met the
 * OOM killer 19 s in. A lower bound, so that a run this refuses could not
 * have fitted: a wafer rank's state (the largest, as check_budgets'), a
 * MemoryX rank's own blocks and what it builds in (no relay children), a
 * SwarmX rank's layers on their way (no sums); no activations. Collective. */
static int check_machine(trainer *t, wf_status *st) {
  const wf_roles *r = t->run->roles;
  const setup *s = t->s;
  int nmemx = r->count[WF_ROLE_MEMORYX];
  double need = r->role == WF_ROLE_MEMORYX
                    ? ws_memory_memoryx(&s->model, nmemx, r->role_rank, 0, s->restart[0] != 0,
                                        t->px, t->py)
                : r->role == WF_ROLE_SWARMX
                    ? ws_memory_swarmx(&s->model, s->prefetch, 0, t->px, t->py)
                    : t->state[0];
  return wf_memory_fits(t->world, need, "the training state",
                        "fewer or smaller layers (train.layers, train.channels), weights streamed "
                        "from MemoryX ranks, or more ranks on more nodes",
                        st);
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
  /* on every rank, before MemoryX holds anything */
  if (st->code == WF_OK) ws_config_check_grid(&t->s->model, t->px, t->py, st);
  return st->code;
}

int trainer_create(trainer *t, wf_run *run, const setup *s, wf_status *st) {
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
  if (check_budgets(t, st) != WF_OK || check_machine(t, st) != WF_OK) {
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
void trainer_batch(const trainer *t, const ws_corpus *c, int split, int k, int *tok, int *tgt) {
  if (t->replica >= 0)
    ws_corpus_batch(c, split, t->s->seed, k, t->replica * t->B, t->B, t->s->model.seq, tok, tgt);
}

/* The mean validation loss over eval_batches global batches; 0, with the
 * signal in *sig, when one reaches a rank during it (checked after each
 * batch: a long evaluation stops within one batch, not at its end). */
float trainer_validate(trainer *t, const ws_corpus *c, int *tok, int *tgt, int *sig) {
  double sum = 0;
  for (int k = 0; k < t->s->eval_batches; k++) {
    trainer_batch(t, c, WS_VAL, k, tok, tgt);
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
int trainer_step(trainer *t, const ws_corpus *c, int step, int *tok, int *tgt,
                      const ws_adamw *o, bool check, double *loss, wf_status *st) {
  trainer_batch(t, c, WS_TRAIN, step, tok, tgt);
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
