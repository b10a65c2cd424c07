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

double ws_memory_streamed(const ws_config *c, int prefetch) {
  double head = (double)ws_block_size(c, c->layers), layer = (double)ws_block_size(c, 0);
  return (2 * head + 2 * (prefetch + 1) * layer) * sizeof(ws_real);
}

double ws_memory_memoryx(const ws_config *c, int nmemx, int index, int children, bool restarts) {
  double own = 0;
  for (int b = index; b <= c->layers; b += nmemx) own += (double)ws_block_size(c, b);
  double whole = (double)ws_param_count(c) * (index == 0 || restarts ? 4 : 2);
  /* ws_stream's pool: children 2.. land there (the first in the gradients) */
  double head = (double)ws_block_size(c, c->layers), layer = (double)ws_block_size(c, 0);
  double pool = WS_UP_WINDOW * (children > 1 ? children - 1 : 0) * (head > layer ? head : layer);
  return (own * 4 + whole + pool) * sizeof(ws_real);
}

double ws_memory_swarmx(const ws_config *c, int prefetch, int children) {
  double head = (double)ws_block_size(c, c->layers), layer = (double)ws_block_size(c, 0);
  double slots = head + (prefetch + 1) * layer; /* blocks on their way down */
  double pool = WS_UP_WINDOW * (children > 1 ? children : 1) * (head > layer ? head : layer);
  return (slots + pool) * sizeof(ws_real);
}

int ws_memory_check(double need, double mb, const char *who, const char *what, const char *fix,
                    wf_status *st) {
  if (mb <= 0 || need <= mb * 1e6) return WF_OK;
  return wf_fail(st, WF_ERR_INPUT,
                 "%s would hold %.1f MB of %s, %.1f MB more than allowed: %s",
                 who, need / 1e6, what, need / 1e6 - mb, fix);
}
