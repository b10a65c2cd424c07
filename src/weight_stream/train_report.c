/* `wafer train`'s checks and report (train_parts.h): the first and last
 * steps against their references, the text lines and the JSON summary, and
 * the loss history written as HDF5. */
#include "train_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_io.h"
#include "ws_checkpoint.h"

/* The run's first and last steps against references that share none of
 * its code (ws_check.h), and the learning-rate schedule at every step. */
void train_checks(wf_run *run, const trainer *t, const setup *s) {
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

/* Throughput, losses and a wafer's grid traffic. */
static void text_run(const trainer *t, const history *h, const measured *r) {
  const setup *s = t->s;
  int steps = h->end - h->first;
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
}

/* Weight streaming: the stall, the links, the SwarmX tree, the no-stall condition. */
static void text_stream(const trainer *t, const measured *r, const stream_report *f) {
  const setup *s = t->s;
  printf(
      "train: weight streaming from %d MemoryX rank%s (%d SwarmX), prefetch %d: a step %.2f "
      "ms, of it stall %.2f ms (%.1f%%; the link model predicts %.2f ms), gradient wait %.2f "
      "ms; AdamW on MemoryX %.2f ms\n",
      t->ws.nmemx, t->ws.nmemx > 1 ? "s" : "", t->ws.nswarm, s->prefetch, 1e3 * f->step,
      1e3 * f->stall, 100 * f->stall / f->step, 1e3 * f->predicted_stall, 1e3 * f->reduce_wait,
      1e3 * f->update);
  printf(
      "train: MemoryX sends %.2f GB/s of weights, takes %.2f GB/s of gradients; link %.2f "
      "GB/s (%s)\n",
      f->out_bytes_per_s / 1e9, f->in_bytes_per_s / 1e9, f->link / 1e9,
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
      f->tokens_needed, f->tokens, f->tokens >= f->tokens_needed ? "holds" : "does NOT hold");
}

/* What each role holds against its budget, and its peak resident set. */
static void text_memory(const trainer *t, const measured *r) {
  const setup *s = t->s;
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
}

/* The wafer model: the step's time, ReLU's skipped work, where the weights live. */
static void text_model(const trainer *t, const measured *r, const ws_wafer_step *w) {
  const wf_run *run = t->run;
  const setup *s = t->s;
  const wf_projection *p = &run->model;
  const char *prec = s->wafer_prec == WF_FP16 ? "fp16" : "fp32";
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

static void json_train(const trainer *t, const history *h, const measured *r,
                       const stream_report *f, wf_json *j) {
  const setup *s = t->s;
  int steps = h->end - h->first;
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
    wf_json_num(j, "step_seconds", f->step);
    wf_json_num(j, "stall_seconds", f->stall);
    wf_json_num(j, "predicted_stall_seconds", f->predicted_stall);
    wf_json_num(j, "gradient_wait_seconds", f->reduce_wait);
    wf_json_num(j, "adamw_seconds", f->update);
    wf_json_num(j, "weights_out_bytes_per_s", f->out_bytes_per_s);
    wf_json_num(j, "gradients_in_bytes_per_s", f->in_bytes_per_s);
    wf_json_num(j, "link_bytes_per_s", f->link);
    wf_json_num(j, "no_stall_tokens_required", f->tokens_needed);
    wf_json_num(j, "tokens_per_replica", f->tokens);
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
}

static void json_memory(const trainer *t, const measured *r, wf_json *j) {
  const setup *s = t->s;
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
}

static void json_model(const wf_projection *p, const ws_wafer_step *w, wf_json *j) {
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
}

void train_report(const trainer *t, const history *h, const measured *r, const ws_wafer_step *w) {
  wf_run *run = t->run;
  stream_report f = {0};
  if (t->streaming) f = stream_figures(t, r, h->end - h->first);
  if (run->verbose) {
    text_run(t, h, r);
    if (t->streaming) text_stream(t, r, &f);
    text_memory(t, r);
    text_model(t, r, w);
  }
  json_train(t, h, r, &f, run->summary);
  json_memory(t, r, run->summary);
  json_model(&run->model, w, run->summary);
  int steps = h->end - h->first;
  snprintf(run->headline, sizeof run->headline, "%d steps, val loss %.3f -> %.3f, %.0f tokens/s",
           steps, r->first_val, r->last_val, r->tokens_per_s);
}

int train_write_output(wf_run *run, const history *h, const char *path, wf_status *st) {
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
