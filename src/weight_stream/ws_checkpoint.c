#include "ws_checkpoint.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "wf_checkpoint.h"
#include "wf_mpi.h"
#include "ws_grid.h"

/* The model's shape: vocab, seq, layers, heads, channels, relu. */
enum { SHAPE = 6 };
static void shape_of(const ws_config *c, int64_t s[SHAPE]) {
  s[0] = c->vocab, s[1] = c->seq, s[2] = c->layers, s[3] = c->heads, s[4] = c->channels;
  s[5] = c->relu;
}

static int write_whole(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                       const wf_ckpt_var *extra, int nextra, wf_status *st);

/* A whole model (activations for one token), its moments zero, on every
 * rank where `want`; agreed over `comm`. */
static int whole_model(ws_gpt *whole, const ws_config *c, bool want, MPI_Comm comm,
                       wf_status *st) {
  *whole = (ws_gpt){0};
  int ok = !want || (ws_gpt_create(whole, c, 1, 1, st) == WF_OK && ws_gpt_moments(whole, st) == WF_OK);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok) return WF_OK;
  ws_gpt_free(whole);
  return st->code != WF_OK ? st->code
                           : wf_fail(st, WF_ERR_RUNTIME, "a rank is out of memory for the model");
}

void ws_checkpoint_assemble(const ws_gpt *m, ws_real *mine, ws_real *whole) {
  memset(whole, 0, ws_param_count(&m->c) * sizeof *whole);
  ws_gpt_tiles_copy(m, mine, whole, false, !m->grid || m->grid->rank == 0);
  if (m->grid) wf_allreduce_inplace(whole, ws_param_count(&m->c), MPI_FLOAT, MPI_SUM, m->grid->wafer);
}

/* A wafer of several ranks: the first wafer's ranks assemble the whole model
 * from their tiles for rank 0 to write. */
static int write_tiles(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                       const wf_ckpt_var *extra, int nextra, wf_status *st) {
  const ws_grid *g = m->grid;
  bool first = g->wafer_id == 0;
  ws_gpt whole;
  int ok = ws_gpt_moments(m, st) == WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) return st->code != WF_OK ? st->code : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  if (whole_model(&whole, &m->c, first, comm, st) != WF_OK) return st->code;
  if (first) {
    ws_real *mine[3] = {m->p.mem, m->m, m->v}, *all[3] = {whole.p.mem, whole.m, whole.v};
    for (int i = 0; i < 3; i++) ws_checkpoint_assemble(m, mine[i], all[i]);
    whole.steps = m->steps;
  }
  /* rank 0 (the first wafer's first) writes; the others only take part */
  int rc = write_whole(comm, path, state, first ? &whole : m, extra, nextra, st);
  ws_gpt_free(&whole);
  return rc;
}

int ws_checkpoint_write(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                        const wf_ckpt_var *extra, int nextra, wf_status *st) {
  return m->grid ? write_tiles(comm, path, state, m, extra, nextra, st)
                 : write_whole(comm, path, state, m, extra, nextra, st);
}

/* Rank 0 of `comm` writes m, whole; the others write nothing. */
static int write_whole(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                       const wf_ckpt_var *extra, int nextra, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int ok = rank != 0 || ws_gpt_moments(m, st) == WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) return rank == 0 ? st->code : wf_fail(st, WF_ERR_RUNTIME, "rank 0 is out of memory");
  unsigned long long n = ws_param_count(&m->c), mine = rank == 0 ? n : 0, six = SHAPE;
  int64_t shape[SHAPE];
  shape_of(&m->c, shape);
  float none = 0; /* what ranks that write nothing point at */
  const wf_ckpt_var v[] = {
      {"shape", WF_I64, shape, six, 0, rank == 0 ? six : 0},
      {"parameters", WF_F32, mine ? m->p.mem : &none, n, 0, mine},
      {"adam_m", WF_F32, mine ? m->m : &none, n, 0, mine},
      {"adam_v", WF_F32, mine ? m->v : &none, n, 0, mine},
  };
  return wf_checkpoint_write_more(comm, path, m->steps, state, v, 4, extra, nextra, st);
}

int ws_checkpoint_shape(MPI_Comm comm, const char *path, ws_config *c, wf_status *st) {
  int64_t shape[SHAPE];
  long long step;
  const wf_ckpt_var v = {"shape", WF_I64, shape, SHAPE, 0, SHAPE};
  if (wf_checkpoint_read(comm, path, &step, &v, 1, st) != WF_OK) return st->code;
  *c = (ws_config){(int)shape[0], (int)shape[1], (int)shape[2],
                   (int)shape[3], (int)shape[4], shape[5] != 0};
  return ws_config_check(c, st) == WF_OK
             ? WF_OK
             : wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' holds an impossible shape", path);
}

/* A wafer of several ranks: every rank reads the whole model and keeps its
 * tiles. */
static int read_tiles(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st) {
  ws_gpt whole;
  if (whole_model(&whole, &m->c, true, comm, st) != WF_OK) return st->code;
  int rc = ws_checkpoint_read(comm, path, &whole, st);
  if (rc == WF_OK) rc = ws_gpt_moments(m, st);
  if (rc == WF_OK) {
    ws_real *mine[3] = {m->p.mem, m->m, m->v}, *all[3] = {whole.p.mem, whole.m, whole.v};
    for (int i = 0; i < 3; i++) ws_gpt_tiles_copy(m, mine[i], all[i], true, true);
    m->steps = whole.steps;
  }
  ws_gpt_free(&whole);
  return rc;
}

int ws_checkpoint_read(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st) {
  if (m->grid && m->p.mem) return read_tiles(comm, path, m, st);
  ws_config c;
  if (ws_checkpoint_shape(comm, path, &c, st) != WF_OK) return st->code;
  if (c.vocab != m->c.vocab || c.seq != m->c.seq || c.layers != m->c.layers ||
      c.heads != m->c.heads || c.channels != m->c.channels || c.relu != m->c.relu)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is of another model (%d layers, %d heads, %d channels, %d "
                   "positions, %s; this run: %d, %d, %d, %d, %s)",
                   path, c.layers, c.heads, c.channels, c.seq, c.relu ? "ReLU" : "GELU",
                   m->c.layers, m->c.heads, m->c.channels, m->c.seq, m->c.relu ? "ReLU" : "GELU");
  /* A model without parameters (a streaming worker) takes only the step. */
  bool whole = m->p.mem != NULL;
  if (whole && ws_gpt_moments(m, st) != WF_OK) return st->code;
  unsigned long long n = ws_param_count(&m->c), mine = whole ? n : 0;
  float none = 0;
  const wf_ckpt_var v[] = {
      {"parameters", WF_F32, whole ? m->p.mem : &none, n, 0, mine},
      {"adam_m", WF_F32, whole ? m->m : &none, n, 0, mine},
      {"adam_v", WF_F32, whole ? m->v : &none, n, 0, mine},
  };
  long long step;
  if (wf_checkpoint_read(comm, path, &step, v, 3, st) != WF_OK) return st->code;
  if (step < 0 || step > 2000000000)
    return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': step %lld is out of range", path, step);
  /* AdamW's second moment is a running mean of squares: a negative entry
   * makes its square root NaN at the next update. (Every rank read every
   * value: the same verdict everywhere.) */
  for (unsigned long long i = 0; i < mine; i++)
    if (!(m->v[i] >= 0))
      return wf_fail(st, WF_ERR_INPUT,
                     "checkpoint '%s': adam_v[%llu] = %g, but AdamW's second moment is a mean of "
                     "squares (>= 0): a damaged file",
                     path, i, (double)m->v[i]);
  m->steps = (int)step;
  return WF_OK;
}
