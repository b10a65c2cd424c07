/* `wafer train`'s checks and report (train_parts.h): the first and last
 * steps against their references, the text lines and the JSON summary, and
 * the loss history written as HDF5. */
#include "train_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_io.h"
#include "wf_report.h"
#include "ws_checkpoint.h"

/* Each check's worst as a fraction of what it allows: a line, and the
 * JSON object "train_checks". */
static void report_checks(wf_run *run, const trainer *t, double reductions, double lr) {
  bool from_start = t->first_step == 0;
  wf_report rep;
  wf_report_open(&rep, run, "train");
  wf_report_begin(&rep, "train_checks");
  wf_report_line(&rep, "checked");
  if (t->kernels_checked) {
    wf_report_num(&rep, "layernorm_worst_of_allowed", t->kernels.layernorm, "LayerNorm %.2g");
    wf_report_num(&rep, "activation_worst_of_allowed", t->kernels.activation, "activation %.2g");
    wf_report_num(&rep, "activation_slope_worst_of_allowed", t->kernels.activation_slope,
                  "its slope %.2g");
    if (t->kernels.layernorm_grads >= 0)
      wf_report_num(&rep, "layernorm_grads_worst_of_allowed", t->kernels.layernorm_grads,
                    "LayerNorm's gradients %.2g");
  }
  if (t->step_checked && from_start) {
    wf_report_num(&rep, "gradient_worst_of_allowed", t->grad.worst,
                  "step 1's gradient against finite differences %.2g");
    wf_report_str(&rep, NULL, t->grad.worst_piece, "worst piece %s");
    wf_report_num(&rep, "loss_worst_of_allowed", t->loss_worst, "loss %.2g");
  }
  if (t->step_checked) {
    wf_report_num(&rep, "adamw_worst_of_allowed", t->adamw_worst, "AdamW %.2g");
    wf_report_int(&rep, NULL, t->last_checked, "(steps 1 and %d)");
  }
  if (!isnan(reductions))
    wf_report_num(&rep, "reductions_worst_of_allowed", reductions, "reductions %.2g");
  wf_report_num(&rep, "schedule_worst_of_allowed", lr, "schedule %.2g of what each allows");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

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
  report_checks(run, t, reductions, lr);
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
static void report_run(wf_report *rep, const trainer *t, const history *h, const measured *r) {
  const setup *s = t->s;
  wf_report_line(rep, NULL);
  long long shape[5] = {s->model.layers, s->model.heads, s->model.channels, s->model.seq, s->batch};
  wf_report_ints(rep, "layers_heads_channels_seq_batch", shape, 5, NULL);
  wf_report_int(rep, "parameters", (long long)ws_param_count(&s->model), "%d parameters");
  wf_report_str(rep, "activation", s->model.relu ? "relu" : "gelu", "%s");
  wf_report_int(rep, "first_step", h->first, "from step %d");
  wf_report_int(rep, "steps", h->end - h->first, "%d steps");
  wf_report_note(rep, "of %d x %d tokens", s->batch, s->model.seq);
  wf_report_int(rep, "replicas", t->replicas, "on %d replicas");
  wf_report_str(rep, "mode", t->streaming ? "streaming" : "resident", "%s");
  wf_report_num(rep, "seconds", r->seconds, "in %.2f s");
  wf_report_num(rep, "tokens_per_s", r->tokens_per_s, "%.0f tokens/s");
  wf_report_num(rep, "GFLOPs", r->gflops, "%.2f GFLOP/s");
  if (r->sgemm > 0) {
    wf_report_num(rep, "sgemm_GFLOPs", r->sgemm, "sgemm %.1f GFLOP/s");
    wf_report_note(rep, "on %d ranks", t->replicas * t->K);
    wf_report_scaled(rep, "fraction_of_sgemm", r->gflops / r->sgemm, 100, "%.0f%% of it");
  }
  wf_report_line(rep, "loss");
  wf_report_num(rep, "first_loss", r->first_loss, "first %.4f");
  wf_report_num(rep, "last_loss", r->last_loss, "last %.4f");
  wf_report_num(rep, "first_val_loss", r->first_val, "validation first %.4f");
  wf_report_num(rep, "last_val_loss", r->last_val, "last %.4f (ln 256 = 5.545)");
  if (s->model.relu) {
    double mean = 0;
    for (int l = 0; l < s->model.layers; l++) mean += r->sparsity[l] / s->model.layers;
    wf_report_line(rep, "ReLU");
    wf_report_nums(rep, "relu_zero_fraction", r->sparsity, s->model.layers,
                   "zero activations by layer %.2f");
    wf_report_scaled(rep, NULL, mean, 100, "mean %.0f%%");
  }
  wf_report_line(rep, "a wafer");
  wf_report_int(rep, "wafer_ranks", t->K, "%d ranks");
  if (t->K > 1) {
    long long grid[2] = {t->px, t->py};
    wf_report_ints(rep, "wafer_rank_grid", grid, 2, "as %d, each holding its 2D tiles of the weight "
                   "matrices");
    wf_report_num(rep, "step_reduce_words", r->grid_words[0],
                  "a step's products move %.4g words of partial sums");
    wf_report_num(rep, "step_multicast_words", r->grid_words[1],
                  "%.4g of multicast activations");
    wf_report_num(rep, "step_head_words", r->grid_words[2], "its attention heads' %.4g");
  }
}

/* Weight streaming: the stall, the links, the SwarmX tree, the no-stall condition. */
static void report_stream(wf_report *rep, const trainer *t, const measured *r,
                          const stream_report *f) {
  const setup *s = t->s;
  int depth = ws_relay_depth(&t->ws.relay);
  wf_report_begin(rep, "streaming");
  wf_report_line(rep, "weight streaming");
  wf_report_int(rep, "memoryx_ranks", t->ws.nmemx, "from %d MemoryX ranks");
  wf_report_int(rep, "swarmx_ranks", t->ws.nswarm, "%d SwarmX");
  wf_report_int(rep, "prefetch", s->prefetch, "prefetch %d");
  wf_report_scaled(rep, "step_seconds", f->step, 1e3, "a step %.2f ms");
  wf_report_scaled(rep, "stall_seconds", f->stall, 1e3, "of it stall %.2f ms");
  wf_report_scaled(rep, NULL, f->stall / f->step, 100, "%.1f%%");
  wf_report_scaled(rep, "predicted_stall_seconds", f->predicted_stall, 1e3,
                   "the link model predicts %.2f ms");
  wf_report_scaled(rep, "gradient_wait_seconds", f->reduce_wait, 1e3, "gradient wait %.2f ms");
  wf_report_scaled(rep, "adamw_seconds", f->update, 1e3, "AdamW on MemoryX %.2f ms");
  wf_report_line(rep, "MemoryX");
  wf_report_scaled(rep, "weights_out_bytes_per_s", f->out_bytes_per_s, 1e-9,
                   "sends %.2f GB/s of weights");
  wf_report_scaled(rep, "gradients_in_bytes_per_s", f->in_bytes_per_s, 1e-9,
                   "takes %.2f GB/s of gradients");
  wf_report_scaled(rep, "link_bytes_per_s", f->link, 1e-9, "link %.2f GB/s");
  wf_report_note(rep, "%s", s->memoryx_gbps > 0 ? "train.memoryx_gbps" : "measured");
  wf_report_line(rep, "no-stall condition");
  wf_report_num(rep, "no_stall_tokens_required", f->tokens_needed,
                "tokens a step per replica >= 4 B x FLOP/s / (2 x link) = %.0f");
  wf_report_num(rep, "tokens_per_replica", f->tokens, "this run %.0f");
  wf_report_note(rep, "%s", f->tokens >= f->tokens_needed ? "holds" : "does NOT hold");
  wf_report_begin(rep, "swarmx_tree");
  wf_report_line(rep, "SwarmX tree");
  wf_report_int(rep, "fanout", s->fanout, "fan-out %d");
  wf_report_int(rep, "depth", depth, "%d hops deep");
  wf_report_nums(rep, "step_bytes_memoryx_down_swarmx_down_swarmx_up_workers_up", r->hop_bytes, 4,
                 NULL);
  wf_report_note(rep,
                 "a step sends %.4g MB down from MemoryX, %.4g MB down and %.4g MB up through "
                 "SwarmX, %.4g MB up from the workers",
                 r->hop_bytes[0] / 1e6, r->hop_bytes[1] / 1e6, r->hop_bytes[2] / 1e6,
                 r->hop_bytes[3] / 1e6);
  wf_report_note(rep, "16 MB reach %s", t->K > 1 ? "the first rank of every wafer" : "every worker");
  wf_report_scaled(rep, "relay_bytes_per_s", r->relay_rate[0], 1e-9, "at %.2f GB/s through it");
  wf_report_scaled(rep, "bcast_bytes_per_s", r->relay_rate[1], 1e-9, "%.2f GB/s by MPI_Bcast");
  wf_report_end(rep);
  wf_report_end(rep);
}

/* What each role holds against its budget, and its peak resident set. */
static void report_memory(wf_report *rep, const trainer *t, const measured *r) {
  const setup *s = t->s;
  wf_report_begin(rep, "state_memory");
  wf_report_line(rep, "a wafer rank");
  wf_report_num(rep, "wafer_rank_mb", t->state[0] / 1e6,
                "holds %.1f MB of weights, gradients and AdamW moments");
  wf_report_num(rep, "wafer_rank_budget_mb", s->rank_mb,
                s->rank_mb > 0 ? "train.rank_mb %g MB" : NULL);
  wf_report_num(rep, "wafer_rank_peak_rss_mb", r->peak_rss[0], "peak resident set %.0f MB");
  if (t->streaming) {
    wf_report_line(rep, "the fullest MemoryX rank");
    wf_report_num(rep, "memoryx_rank_mb", t->state[1] / 1e6, "%.1f MB");
    wf_report_num(rep, "memoryx_rank_budget_mb", s->memoryx_mb, NULL);
    wf_report_num(rep, "memoryx_peak_rss_mb", r->peak_rss[1], "peak resident set %.0f MB");
  }
  if (t->run->roles->count[WF_ROLE_SWARMX] > 0) {
    wf_report_line(rep, "the busiest SwarmX rank");
    wf_report_num(rep, "swarmx_rank_mb", t->state[2] / 1e6, "relays through %.1f MB");
    wf_report_num(rep, "swarmx_rank_budget_mb", s->swarmx_mb, NULL);
    wf_report_num(rep, "swarmx_peak_rss_mb", r->peak_rss[2], "peak resident set %.0f MB");
  }
  wf_report_end(rep);
}

/* The wafer model: the step's time, ReLU's skipped work, where the weights live. */
static void report_model(wf_report *rep, const trainer *t, const ws_wafer_step *w) {
  const setup *s = t->s;
  const wf_projection *p = &t->run->model;
  wf_report_model(rep, p);
  wf_report_note(rep, "%s, batch %d a wafer", s->wafer_prec == WF_FP16 ? "fp16" : "fp32", t->B);
  wf_report_str(rep, "wafer_mode", w->streaming ? "streaming" : "resident", "%s");
  wf_report_range(rep, "stall_seconds", w->stall.lo, w->stall.hi, 1,
                  w->streaming ? "stall %.3g s" : NULL);
  wf_report_num(rep, "no_stall_tokens_required", w->tokens_needed,
                w->streaming ? "no stall from %.0f tokens a step" : NULL);
  wf_report_range(rep, "compute_seconds", w->compute.lo, w->compute.hi, 1,
                  s->model.relu ? "skipping the zeros' multiplications %.3g s of compute" : NULL);
  wf_report_range(rep, "dense_compute_seconds", w->dense.lo, w->dense.hi, 1,
                  s->model.relu ? "instead of %.3g" : NULL);
  wf_report_num(rep, "fabric_link_words", w->links, "%.4g words on the fabric's links");
  wf_report_num(rep, "resident_bytes_per_pe", w->resident_bytes, "resident needs %.0f B/PE");
  wf_report_num(rep, "streaming_bytes_per_pe", w->streaming_bytes, "streaming %.0f");
  wf_report_note(rep, "%s",
                 !w->streaming ? "the model fits, so it stays on the wafer"
                 : w->fits     ? "the weights do not fit, so they stream from MemoryX"
                               : "does NOT fit even streaming (the activations alone are too many)");
  wf_report_end(rep);
}

void train_report(const trainer *t, const history *h, const measured *r, const ws_wafer_step *w) {
  wf_run *run = t->run;
  wf_report rep;
  wf_report_open(&rep, run, "train");
  wf_report_begin(&rep, "train");
  report_run(&rep, t, h, r);
  if (t->streaming) {
    stream_report f = stream_figures(t, r, h->end - h->first);
    report_stream(&rep, t, r, &f);
  }
  wf_report_end(&rep);
  report_memory(&rep, t, r);
  report_model(&rep, t, w);
  wf_report_close(&rep);
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
