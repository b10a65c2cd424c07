#include "ws_checkpoint.h"

#include <stdint.h>

#include "wf_checkpoint.h"

static void shape_of(const ws_config *c, int64_t s[5]) {
  s[0] = c->vocab, s[1] = c->seq, s[2] = c->layers, s[3] = c->heads, s[4] = c->channels;
}

int ws_checkpoint_write(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st) {
  if (ws_gpt_moments(m, st) != WF_OK) return st->code;
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned long long n = m->p.count, mine = rank == 0 ? n : 0, five = 5;
  int64_t shape[5];
  shape_of(&m->c, shape);
  const wf_ckpt_var v[] = {
      {"shape", WF_I64, shape, five, 0, rank == 0 ? five : 0},
      {"parameters", WF_F32, m->p.mem, n, 0, mine},
      {"adam_m", WF_F32, m->m, n, 0, mine},
      {"adam_v", WF_F32, m->v, n, 0, mine},
  };
  return wf_checkpoint_write(comm, path, m->steps, v, 4, st);
}

int ws_checkpoint_shape(MPI_Comm comm, const char *path, ws_config *c, wf_status *st) {
  int64_t shape[5];
  long long step;
  const wf_ckpt_var v = {"shape", WF_I64, shape, 5, 0, 5};
  if (wf_checkpoint_read(comm, path, &step, &v, 1, st) != WF_OK) return st->code;
  *c = (ws_config){(int)shape[0], (int)shape[1], (int)shape[2], (int)shape[3], (int)shape[4]};
  return ws_config_check(c, st) == WF_OK
             ? WF_OK
             : wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' holds an impossible shape", path);
}

int ws_checkpoint_read(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st) {
  ws_config c;
  if (ws_checkpoint_shape(comm, path, &c, st) != WF_OK) return st->code;
  if (c.vocab != m->c.vocab || c.seq != m->c.seq || c.layers != m->c.layers ||
      c.heads != m->c.heads || c.channels != m->c.channels)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is of another model (%d layers, %d heads, %d channels, %d "
                   "positions; this run: %d, %d, %d, %d)",
                   path, c.layers, c.heads, c.channels, c.seq, m->c.layers, m->c.heads,
                   m->c.channels, m->c.seq);
  if (ws_gpt_moments(m, st) != WF_OK) return st->code;
  unsigned long long n = m->p.count;
  const wf_ckpt_var v[] = {
      {"parameters", WF_F32, m->p.mem, n, 0, n},
      {"adam_m", WF_F32, m->m, n, 0, n},
      {"adam_v", WF_F32, m->v, n, 0, n},
  };
  long long step;
  if (wf_checkpoint_read(comm, path, &step, v, 3, st) != WF_OK) return st->code;
  if (step < 0 || step > 2000000000)
    return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': step %lld is out of range", path, step);
  m->steps = (int)step;
  return WF_OK;
}
