/* `wafer generate` (generate_workload.h): bytes sampled one at a time from
 * a trained model, each from the softmax of its logits over the preceding
 * bytes (at most the model's sequence length of them) divided by the
 * temperature, restricted to the top_k most likely; the draws come from a
 * counter-based generator, so a seed gives the same draws on any rank count
 * (the same text unless a draw falls within round-off of a boundary between
 * two bytes: a wafer's tiles add in another order than one rank).
 * The ranks form wafers of [generate] wafer_ranks (default: one over all of
 * them), the weight matrices in 2D tiles over a wafer's ranks (ws_grid.h),
 * as `wafer train` runs them; the products' sums add in a fixed order, so
 * every rank holds the same logits and draws the same byte. Every wafer
 * computes the same text; rank 0 prints it. Nothing is checked: the run
 * says "unchecked". */
#include "generate_workload.h"

#include "wf_cblas.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_random.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "ws_checkpoint.h"
#include "wf_wafer.h"
#include "ws_gpt.h"
#include "ws_grid.h"

static const wf_key generate_keys[] = {
    {"checkpoint", WF_KEY_INPUT, "", 0, 0, NULL, "a `wafer train` checkpoint (needed)", wf_key_hdf5},
    {"prompt", WF_KEY_STRING, "The ", 0, 0, NULL, "the text the sample continues", NULL},
    {"length", WF_KEY_INT, "200", 1, 1e6, NULL, "bytes to sample", NULL},
    {"temperature", WF_KEY_REAL, "1.0", 1e-3, 100, NULL,
     "logits divided by this: lower is more likely text, higher more varied", NULL},
    {"top_k", WF_KEY_INT, "0", 0, 256, NULL, "sample among the k most likely bytes (0: all)", NULL},
    {"seed", WF_KEY_INT, "1", 0, 2147483647, NULL, "the draws", NULL},
    {"wafer_ranks", WF_KEY_INT, "0", 0, 1e6, NULL,
     "ranks that make up one wafer, the weight matrices in 2D tiles over them (0: one wafer "
     "over all the ranks); each wafer samples the same text",
     NULL},
};
static const wf_section generate_section = {
    "generate", "Text sampled from a `wafer train` checkpoint.", generate_keys,
    (int)(sizeof generate_keys / sizeof generate_keys[0]), NULL, NULL};
static const wf_section *const generate_sections[] = {&generate_section};

/* One byte from the logits at one position: temperature, top-k, a draw. */
static int sample(const float *logits, int V, double temperature, int top_k, double u) {
  double p[256], most = -INFINITY, sum = 0;
  for (int v = 0; v < V; v++) most = fmax(most, logits[v]);
  for (int v = 0; v < V; v++) p[v] = exp((logits[v] - most) / temperature);
  if (top_k > 0 && top_k < V) {
    /* Keep the k largest: zero what lies below the k-th largest value. */
    double sorted[256];
    memcpy(sorted, p, (size_t)V * sizeof *p);
    for (int i = 0; i < top_k; i++)
      for (int j = i + 1; j < V; j++)
        if (sorted[j] > sorted[i]) {
          double t = sorted[i];
          sorted[i] = sorted[j], sorted[j] = t;
        }
    for (int v = 0; v < V; v++)
      if (p[v] < sorted[top_k - 1]) p[v] = 0;
  }
  for (int v = 0; v < V; v++) sum += p[v];
  double at = u * sum;
  for (int v = 0; v < V; v++) {
    at -= p[v];
    if (at < 0) return v;
  }
  return V - 1;
}

/* The checkpoint's model on this rank: whole, or its tiles on a wafer of
 * [generate] wafer_ranks ranks (`grid`, freed with the model). */
static int load_model(wf_run *run, const char *path, const ws_config *c, ws_gpt *m, ws_grid *grid,
                      wf_status *st) {
  const wf_deck *d = run->deck;
  int ranks, K = (int)wf_deck_int(d, "generate", "wafer_ranks");
  MPI_Comm_size(run->comm, &ranks);
  if (K == 0) K = ranks;
  bool tiled = K > 1;
  if (tiled && ws_grid_create(grid, run->comm, K, run->wafer->dc.pe_nx, run->wafer->dc.pe_ny,
                              st) != WF_OK) {
    ws_grid_free(grid);
    return wf_deck_blame(d, "generate", "wafer_ranks", st);
  }
  if (ws_gpt_create_on(m, c, 1, c->seq, tiled ? grid : NULL, st) != WF_OK) {
    if (tiled) ws_grid_free(grid);
    return st->code == WF_ERR_INPUT ? wf_deck_blame(d, "generate", "wafer_ranks", st) : st->code;
  }
  if (ws_checkpoint_read(run->comm, path, m, st) != WF_OK) {
    ws_gpt_free(m);
    if (tiled) ws_grid_free(grid);
    return wf_deck_blame(d, "generate", "checkpoint", st);
  }
  return WF_OK;
}

static void unload_model(ws_gpt *m, ws_grid *grid) {
  bool tiled = m->grid != NULL;
  ws_gpt_free(m);
  if (tiled) ws_grid_free(grid);
}

/* The deck's [generate] settings. */
typedef struct sampling {
  const char *path, *prompt;
  int length, top_k;
  double temperature;
  unsigned long long seed;
} sampling;

static int read_sampling(const wf_deck *d, sampling *p, wf_status *st) {
  p->path = wf_deck_str(d, "generate", "checkpoint");
  if (!p->path[0])
    return wf_deck_fail(d, "generate", "checkpoint", st,
                        "name a checkpoint written by `wafer train --set train.checkpoint=FILE`");
  p->prompt = wf_deck_str(d, "generate", "prompt");
  p->length = (int)wf_deck_int(d, "generate", "length");
  p->top_k = (int)wf_deck_int(d, "generate", "top_k");
  p->temperature = wf_deck_real(d, "generate", "temperature");
  p->seed = (unsigned long long)wf_deck_int(d, "generate", "seed");
  return WF_OK;
}

/* text[plen .. total) drawn one byte at a time after the prompt in
 * text[0 .. plen); a signal stops it between two bytes. Collective. */
static int draw(const wf_run *run, ws_gpt *m, const sampling *p, unsigned char *text, size_t plen,
                size_t total, wf_status *st) {
  const ws_config *c = &m->c;
  int *window = calloc((size_t)c->seq, sizeof *window);
  if (!window) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  int rc = WF_OK;
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  for (size_t n = plen; n < total && rc == WF_OK; n++) {
    int sig = wf_signal_poll_next(&poll);
    if (sig) {
      char where[64];
      snprintf(where, sizeof where, "after %zu of %d bytes", n - plen, p->length);
      rc = wf_signal_fail(st, sig, where);
      break;
    }
    /* The last (at most seq) bytes; causal attention ignores the padding after them. */
    size_t from = n > (size_t)c->seq ? n - (size_t)c->seq : 0, len = n - from;
    for (int t = 0; t < c->seq; t++) window[t] = (size_t)t < len ? text[from + t] : 0;
    ws_gpt_forward(m, window, NULL);
    const float *logits = m->a.t[WS_LOGITS] + (len > 0 ? len - 1 : 0) * (size_t)c->vocab;
    /* Finite parameters can still overflow single precision (a damaged or
     * edited checkpoint): no byte is drawn from NaN probabilities. */
    for (int v = 0; v < c->vocab && rc == WF_OK; v++)
      if (!isfinite(logits[v]))
        rc = wf_fail(st, WF_ERR_RUNTIME,
                     "the model's logits are not finite at byte %zu: the checkpoint '%s' holds "
                     "values its single-precision forward pass overflows on (damaged?)",
                     n - plen, p->path);
    if (rc == WF_OK)
      text[n] = (unsigned char)sample(logits, c->vocab, p->temperature, p->top_k,
                                      wf_uniform(p->seed, n));
  }
  wf_signal_poll_end(&poll);
  free(window);
  return rc;
}

/* The settings and the text: on stdout as drawn, in the JSON as ASCII
 * ('?' for the other bytes, which need not be UTF-8: text is changed). */
static void report(wf_run *run, const ws_gpt *m, const sampling *p, unsigned char *text,
                   size_t total, double seconds) {
  const ws_config *c = &m->c;
  wf_report rep;
  wf_report_open(&rep, run, "generate");
  wf_report_begin(&rep, "generate");
  wf_report_line(&rep, NULL);
  wf_report_int(&rep, "length", p->length, "%d bytes");
  wf_report_note(&rep, "from %s (%d layers, %d heads, %d channels)", p->path, c->layers, c->heads,
                 c->channels);
  wf_report_int(&rep, "trained_steps", m->steps, "after %d steps");
  wf_report_note(&rep, "temperature %g, top_k %d, seed %llu", p->temperature, p->top_k, p->seed);
  wf_report_num(&rep, "bytes_per_s", p->length / seconds, "%.0f bytes/s");
  wf_report_int(&rep, "wafer_ranks", m->grid ? m->grid->ranks : 1, "on wafers of %d ranks");
  if (m->grid)
    wf_report_note(&rep, "as %dx%d (2D tiles of the weight matrices)", m->grid->px, m->grid->py);
  wf_report_flush(&rep);
  if (run->verbose) {
    fwrite(text, 1, total, stdout);
    printf("\n");
  }
  for (size_t n = 0; n < total; n++)
    if (text[n] >= 0x80) text[n] = '?';
  wf_report_str(&rep, "text", (const char *)text, NULL);
  wf_report_end(&rep);
  wf_report_close(&rep);
}

static int generate_run(wf_run *run, wf_status *st) {
  wf_blas_single_thread();
  sampling p = {0};
  if (read_sampling(run->deck, &p, st) != WF_OK) return st->code;
  ws_config c;
  if (ws_checkpoint_shape(run->comm, p.path, &c, st) != WF_OK)
    return wf_deck_blame(run->deck, "generate", "checkpoint", st);
  ws_gpt m;
  ws_grid grid;
  if (load_model(run, p.path, &c, &m, &grid, st) != WF_OK) return st->code;
  size_t plen = strlen(p.prompt), total = plen + (size_t)p.length;
  unsigned char *text = malloc(total + 1);
  if (!text) {
    unload_model(&m, &grid);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  }
  memcpy(text, p.prompt, plen);
  text[total] = '\0';
  double t0 = MPI_Wtime();
  int rc = draw(run, &m, &p, text, plen, total, st);
  double seconds = MPI_Wtime() - t0;
  if (rc == WF_OK) {
    report(run, &m, &p, text, total, seconds);
    run->seconds = seconds;
    snprintf(run->headline, sizeof run->headline, "%d bytes sampled", p.length);
  }
  free(text);
  unload_model(&m, &grid);
  return rc;
}

const wf_workload wf_generate_workload = {
    .name = "generate",
    .help = "text sampled from a `wafer train` checkpoint (temperature, top-k, seed)",
    .sections = generate_sections,
    .nsections = 1,
    .run = generate_run,
    .not_in_demo = true,
};
