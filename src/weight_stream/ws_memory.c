/* What a rank holds of the training state or relays, and the budgets (ws_memory.h). */
#include "ws_memory.h"

#include "ws_gpt.h"

/* Weight, gradient and two AdamW moments, each a ws_real. */
#define STATE_BYTES (4.0 * sizeof(ws_real))

double ws_memory_resident(const ws_config *c, int px, int py) {
  double numbers = 0;
  for (int b = 0; b <= c->layers; b++) numbers += ws_block_held(c, b, px, py);
  return numbers * STATE_BYTES;
}

/* Block b as MemoryX keeps it: every place's part of a px x py wafer. */
static double packed(const ws_config *c, int b, int px, int py) {
  return (double)ws_block_wafer_size(c, b, px, py);
}

static double larger(double a, double b) { return a > b ? a : b; }

double ws_memory_streamed(const ws_config *c, int prefetch, int px, int py) {
  double head = ws_block_held(c, c->layers, px, py), layer = ws_block_held(c, 0, px, py);
  return (2 * head + 2 * (prefetch + 1) * layer) * sizeof(ws_real);
}

double ws_memory_memoryx(const ws_config *c, int nmemx, int index, int children, bool restarts,
                         int px, int py) {
  double own = 0;
  for (int b = index; b <= c->layers; b += nmemx) own += packed(c, b, px, py);
  double whole = (double)ws_param_count(c) * (index == 0 || restarts ? 4 : 2);
  /* ws_stream's pool: children 2.. land there (the first in the gradients) */
  double head = packed(c, c->layers, px, py), layer = packed(c, 0, px, py);
  double pool = WS_UP_WINDOW * (children > 1 ? children - 1 : 0) * larger(head, layer);
  return (own * 4 + whole + pool) * sizeof(ws_real);
}

double ws_memory_swarmx(const ws_config *c, int prefetch, int children, int px, int py) {
  double head = packed(c, c->layers, px, py), layer = packed(c, 0, px, py);
  double slots = head + (prefetch + 1) * layer; /* blocks on their way down */
  double pool = WS_UP_WINDOW * (children > 1 ? children : 1) * larger(head, layer);
  return (slots + pool) * sizeof(ws_real);
}

int ws_memory_check(double need, double mb, const char *who, const char *what, const char *fix,
                    wf_status *st) {
  if (mb <= 0 || need <= mb * 1e6) return WF_OK;
  return wf_fail(st, WF_ERR_INPUT,
                 "%s would hold %.1f MB of %s, %.1f MB more than allowed: %s",
                 who, need / 1e6, what, need / 1e6 - mb, fix);
}
