/* Training checkpoints (ws_checkpoint.h): the model's shape, parameters, AdamW's moments and
 * step in one HDF5 file, written whole by one rank or tile by tile by a wafer's ranks, and
 * read back into a model of the same shape. */
#include "ws_checkpoint.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_checkpoint.h"
#include "wf_mpi.h"
#include "wf_io.h"
#include "ws_grid.h"

/* The model's shape: vocab, seq, layers, heads, channels, relu. */
enum { SHAPE = 6 };
static void shape_of(const ws_config *c, int64_t s[SHAPE]) {
  s[0] = c->vocab, s[1] = c->seq, s[2] = c->layers, s[3] = c->heads, s[4] = c->channels;
  s[5] = c->relu;
}

static int write_whole(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                       const wf_ckpt_var *extra, int nextra, wf_status *st);

/* This rank's tiles as pieces of the whole model's layout: tensor by
 * tensor, layer by layer, a run for each row of its tile (the order
 * ws_gpt_tiles_copy walks them in); the untiled vectors, held whole, only
 * when `vectors`. Into `out` unless NULL; returns how many. */
static int tile_pieces(const ws_gpt *m, bool vectors, wf_h5_piece *out) {
  unsigned long long whole = 0, mine = 0;
  int n = 0;
  for (int k = 0; k < WS_NPARAMS; k++) {
    ws_tile tl = ws_gpt_tile(m, k);
    int slices = ws_param_per_layer(k) ? m->c.layers : 1;
    unsigned long long full = (unsigned long long)tl.full_rows * (unsigned long long)tl.full_cols,
                       tile = (unsigned long long)tl.rows * (unsigned long long)tl.cols;
    for (int l = 0; l < slices && tile > 0 && (ws_param_tiled(k) || vectors); l++, n++)
      if (out)
        out[n] = (wf_h5_piece){
            .start = whole + l * full + (unsigned long long)tl.row0 * tl.full_cols + tl.col0,
            .stride = (unsigned long long)tl.full_cols,
            .count = (unsigned long long)tl.rows,
            .block = (unsigned long long)tl.cols,
            .mem_start = mine + l * tile};
    whole += slices * full;
    mine += m->p.size[k];
  }
  return n;
}

/* Where number `at` of this rank's buffer sits in the file's dataset. */
static unsigned long long file_place(const wf_h5_piece *p, int np, unsigned long long at) {
  for (int k = 0; k < np; k++) {
    unsigned long long n = p[k].count * p[k].block;
    if (at >= p[k].mem_start && at < p[k].mem_start + n)
      return wf_h5_piece_place(&p[k], at - p[k].mem_start);
  }
  return at;
}

/* This rank's pieces (tile_pieces) in a malloc'ed array; agreed over comm. */
static int pieces_of(MPI_Comm comm, const ws_gpt *m, bool vectors, wf_h5_piece **p, int *np,
                     wf_status *st) {
  *np = tile_pieces(m, vectors, NULL);
  *p = malloc(((size_t)*np + 1) * sizeof **p);
  int ok = *p != NULL;
  if (ok) tile_pieces(m, vectors, *p);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  return ok ? WF_OK : wf_fail(st, WF_ERR_RUNTIME, "out of memory for a checkpoint's tiles");
}

void ws_checkpoint_assemble(const ws_gpt *m, ws_real *mine, ws_real *whole) {
  memset(whole, 0, ws_param_count(&m->c) * sizeof *whole);
  ws_gpt_tiles_copy(m, mine, whole, false, !m->grid || m->grid->rank == 0);
  if (m->grid) wf_allreduce_inplace(whole, ws_param_count(&m->c), MPI_FLOAT, MPI_SUM, m->grid->wafer);
}

/* A wafer of several ranks: the first wafer's ranks write their tiles
 * where they sit in the whole model's layout (its first rank the vectors
 * too), so no rank holds more than its own. */
static int write_tiles(MPI_Comm comm, const char *path, const char *state, ws_gpt *m,
                       const wf_ckpt_var *extra, int nextra, wf_status *st) {
  const ws_grid *g = m->grid;
  bool first = g->wafer_id == 0;
  int ok = ws_gpt_moments(m, st) == WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) return st->code != WF_OK ? st->code : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_h5_piece *p;
  int np, rank;
  if (pieces_of(comm, m, g->rank == 0, &p, &np, st) != WF_OK) {
    free(p);
    return st->code;
  }
  if (!first) np = 0;
  MPI_Comm_rank(comm, &rank);
  unsigned long long n = ws_param_count(&m->c), six = SHAPE;
  int64_t shape[SHAPE];
  shape_of(&m->c, shape);
  const wf_ckpt_var v[3] = {{"parameters", WF_F32, m->p.mem, n, 0, m->p.count},
                           {"adam_m", WF_F32, m->m, n, 0, m->p.count},
                           {"adam_v", WF_F32, m->v, n, 0, m->p.count}};
  /* the shape (rank 0's), then the caller's datasets */
  wf_ckpt_var *more = malloc(((size_t)nextra + 1) * sizeof *more);
  if (!more) wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_status_agree(comm, st);
  if (st->code == WF_OK) {
    more[0] = (wf_ckpt_var){"shape", WF_I64, shape, six, 0, rank == 0 ? six : 0};
    for (int i = 0; i < nextra; i++) more[1 + i] = extra[i];
    const wf_ckpt_scatter sc = {p, np};
    wf_checkpoint_write_scattered(comm, path, m->steps, state, v, 3, &sc, more, nextra + 1, st);
  }
  free(p), free(more);
  return st->code;
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
  /* shape[5] is the MLP's activation: 0 GELU, 1 ReLU; any other code is
   * no model this program wrote. Sizes beyond an int are refused whole. */
  static const char *const size_names[] = {"vocab", "seq", "layers", "heads", "channels"};
  for (int k = 0; k < 5; k++)
    if (shape[k] < 1 || shape[k] > 1 << 30)
      return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' holds an impossible shape (%s %lld)",
                     path, size_names[k], (long long)shape[k]);
  if (shape[5] != 0 && shape[5] != 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' holds activation code %lld: 0 (GELU) or 1 (ReLU) expected",
                   path, (long long)shape[5]);
  *c = (ws_config){(int)shape[0], (int)shape[1], (int)shape[2],
                   (int)shape[3], (int)shape[4], shape[5] != 0};
  return ws_config_check(c, st) == WF_OK
             ? WF_OK
             : wf_fail(st, WF_ERR_INPUT, "checkpoint '%s' holds an impossible shape", path);
}

int ws_checkpoint_read(MPI_Comm comm, const char *path, ws_gpt *m, wf_status *st) {
  ws_config c;
  if (ws_checkpoint_shape(comm, path, &c, st) != WF_OK) return st->code;
  if (c.vocab != m->c.vocab || c.seq != m->c.seq || c.layers != m->c.layers ||
      c.heads != m->c.heads || c.channels != m->c.channels || c.relu != m->c.relu)
    return wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is of another model (%d layers, %d heads, %d channels, %d "
                   "positions, %s; this run: %d, %d, %d, %d, %s)",
                   path, c.layers, c.heads, c.channels, c.seq, c.relu ? "ReLU" : "GELU",
                   m->c.layers, m->c.heads, m->c.channels, m->c.seq, m->c.relu ? "ReLU" : "GELU");
  /* A model without parameters (a streaming worker) takes only the step;
   * a wafer rank's tiles (and the vectors) are read where they sit. */
  bool held = m->p.mem != NULL, tiled = held && m->grid;
  int ok = !held || ws_gpt_moments(m, st) == WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) return st->code != WF_OK ? st->code : wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_h5_piece *p = NULL;
  int np = 0;
  if (tiled && pieces_of(comm, m, true, &p, &np, st) != WF_OK) {
    free(p);
    return st->code;
  }
  unsigned long long n = ws_param_count(&m->c), mine = held ? m->p.count : 0;
  float none = 0;
  const wf_ckpt_var v[] = {
      {"parameters", WF_F32, held ? m->p.mem : &none, n, 0, mine},
      {"adam_m", WF_F32, held ? m->m : &none, n, 0, mine},
      {"adam_v", WF_F32, held ? m->v : &none, n, 0, mine},
  };
  const wf_ckpt_scatter sc = {p, np};
  long long step;
  int rc = wf_checkpoint_read_scattered(comm, path, &step, v, 3, tiled ? &sc : NULL, st);
  if (rc != WF_OK) {
    free(p);
    return st->code;
  }
  if (step < 0 || step > 2000000000) { /* the same file on every rank: the same verdict */
    free(p);
    return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': step %lld is out of range", path, step);
  }
  /* AdamW's second moment is a running mean of squares: a negative entry
   * makes its square root NaN at the next update. (A wafer's ranks read
   * different tiles: the verdict is agreed.) */
  for (unsigned long long i = 0; i < mine; i++)
    if (!(m->v[i] >= 0)) {
      wf_fail(st, WF_ERR_INPUT,
              "checkpoint '%s': adam_v[%llu] = %g, but AdamW's second moment is a mean of "
              "squares (>= 0): a damaged file",
              path, tiled ? file_place(p, np, i) : i, (double)m->v[i]);
      break;
    }
  free(p);
  wf_status_agree(comm, st);
  if (st->code == WF_OK) m->steps = (int)step;
  return st->code;
}
