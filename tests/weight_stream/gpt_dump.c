/* One training step of a small GPT, written out for gpt_torch.py to redo in
 * PyTorch: usage [mpiexec -n K] gpt_dump DIR [V T L NH C B SEED [RELU]].
 * On K > 1 ranks the model is one wafer of K ranks, its weight matrices in
 * tiles over them (ws_grid.h); the tiles are assembled for the files.
 * DIR/meta.txt: the shape, the batch, the loss, the AdamW settings and the
 * gradient norm; DIR/{params,grads,updated}.f32: the parameters before the
 * step, their gradients, the parameters after it (one float32 buffer each,
 * in ws_gpt's order); DIR/{tokens,targets}.i32. */
#include "wf_cblas.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ws_checkpoint.h"
#include "ws_gpt.h"
#include "ws_grid.h"

static int dump(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "gpt_dump: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

static int run(int argc, char **argv);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}

static int run(int argc, char **argv) {
  if (argc != 2 && argc != 9 && argc != 10) {
    fprintf(stderr, "usage: gpt_dump DIR [V T L NH C B SEED [RELU]]\n");
    return 2;
  }
  wf_blas_single_thread();
  ws_config c = {.vocab = 256, .seq = 16, .layers = 2, .heads = 4, .channels = 32};
  int B = 3, seed = 5;
  if (argc >= 9) {
    c = (ws_config){atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]),
                    argc == 10 && atoi(argv[9]) != 0};
    B = atoi(argv[7]), seed = atoi(argv[8]);
  }
  int T = c.seq;
  ws_gpt m;
  wf_status st;
  int K, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &K);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ws_grid grid;
  if (K > 1 && ws_grid_create(&grid, MPI_COMM_WORLD, K, 64, 64, &st) != WF_OK) {
    fprintf(stderr, "gpt_dump: %s\n", st.msg);
    return 2;
  }
  if (ws_gpt_create_on(&m, &c, B, T, K > 1 ? &grid : NULL, &st) != WF_OK) {
    fprintf(stderr, "gpt_dump: %s\n", st.msg);
    return 2;
  }
  ws_gpt_init(&m, (unsigned long long)seed);
  int *tok = malloc((size_t)B * T * sizeof *tok), *tgt = malloc((size_t)B * T * sizeof *tgt);
  for (int i = 0; i < B * T; i++) {
    tok[i] = (int)((i * 2654435761u + (unsigned)seed) % (unsigned)c.vocab);
    tgt[i] = (int)((i * 40503u + 7u * (unsigned)seed) % (unsigned)c.vocab);
  }
  float loss = ws_gpt_forward(&m, tok, tgt);
  ws_gpt_backward(&m, tok, tgt);
  size_t n = ws_param_count(&c), bytes = n * sizeof(float);
  float *whole = malloc(bytes);
  if (!whole) return 1;
  const char *dir = rank == 0 ? argv[1] : NULL; /* rank 0 writes */
#define DUMP(name, data, size) (dir && dump(dir, name, data, size))
  ws_checkpoint_assemble(&m, m.p.mem, whole);
  int rc = DUMP("params.f32", whole, bytes);
  ws_checkpoint_assemble(&m, m.g.mem, whole);
  rc = rc || DUMP("grads.f32", whole, bytes);
  /* A clip below the gradient's norm, so that clipping takes part. eps
   * 1e-6: Adam's first step moves a parameter by lr g / (|g| + eps), so a
   * gradient that is zero but for round-off (the key biases': softmax does
   * not see a shift of every score) would move by round-off times lr / eps,
   * differently in each implementation. */
  ws_adamw o = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-6f, .weight_decay = 0.1f,
                .clip = 0.5f};
  float norm = ws_gpt_update(&m, &o, &st);
  ws_checkpoint_assemble(&m, m.p.mem, whole);
  rc = rc || DUMP("updated.f32", whole, bytes) ||
       DUMP("tokens.i32", tok, (size_t)B * T * sizeof *tok) ||
       DUMP("targets.i32", tgt, (size_t)B * T * sizeof *tgt);
  free(whole);
  if (!dir) {
    free(tok), free(tgt);
    ws_gpt_free(&m);
    if (K > 1) ws_grid_free(&grid);
    return rc;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/meta.txt", argv[1]);
  FILE *f = fopen(path, "w");
  if (!f) return 1;
  fprintf(f, "relu %d\n", c.relu);
  fprintf(f, "vocab %d\nseq %d\nlayers %d\nheads %d\nchannels %d\nbatch %d\n", c.vocab, c.seq,
          c.layers, c.heads, c.channels, B);
  fprintf(f, "loss %.9g\nnorm %.9g\nlr %.9g\nbeta1 %.9g\nbeta2 %.9g\neps %.9g\n", loss, norm, o.lr,
          o.beta1, o.beta2, o.eps);
  fprintf(f, "weight_decay %.9g\nclip %.9g\n", o.weight_decay, o.clip);
  rc = rc || fclose(f) != 0;
  free(tok), free(tgt);
  ws_gpt_free(&m);
  if (K > 1) ws_grid_free(&grid);
  return rc;
}
