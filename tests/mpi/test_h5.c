/* HDF5 output: a 3D field and a 2D field with halo cells written collectively
 * on N ranks, read back by one process alone and compared value by value;
 * the XDMF sidecar; a checkpoint that round-trips bit for bit. */
#include <glob.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"
#include "wf_checkpoint.h"
#include "wf_decomp.h"
#include "wf_h5.h"

enum { NX = 13, NY = 11, NZ = 5, W = 2 };

static double val3(int i, int j, int k) { return i + 100.0 * j + 1e4 * k + 0.125; }

static void test_fields(checks *ck, const char *path) {
  wf_status st;
  wf_decomp dc;
  int rc = wf_decomp_create(&dc, MPI_COMM_WORLD, NX, NY, 0, 0, &st);
  CHECK(ck, rc == WF_OK, "decomposition: %s", st.msg);
  if (rc != WF_OK) return;
  /* 3D: z in PE memory, x-y over the PE grid. */
  double *f3 = malloc(sizeof(double) * NZ * dc.ny * dc.nx);
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < dc.ny; j++)
      for (int i = 0; i < dc.nx; i++)
        f3[((size_t)k * dc.ny + j) * dc.nx + i] = val3(dc.x0 + i, dc.y0 + j, k);
  /* 2D with a halo of W cells in memory, which must not reach the file. */
  int ldx = dc.nx + 2 * W, ldy = dc.ny + 2 * W;
  float *f2 = malloc(sizeof(float) * ldx * ldy);
  for (int e = 0; e < ldx * ldy; e++) f2[e] = -1.0f;
  for (int j = 0; j < dc.ny; j++)
    for (int i = 0; i < dc.nx; i++) f2[(j + W) * ldx + i + W] = (float)val3(dc.x0 + i, dc.y0 + j, 0);

  unsigned long long g3[3] = {NZ, NY, NX}, o3[3] = {0, dc.y0, dc.x0}, c3[3] = {NZ, dc.ny, dc.nx};
  unsigned long long md[2] = {ldy, ldx}, ms[2] = {W, W};
  wf_h5_block b3 = {.ndim = 3, .global = g3, .offset = o3, .count = c3};
  wf_h5_block b2 = {.ndim = 2, .global = g3 + 1, .offset = o3 + 1, .count = c3 + 1,
                    .mem_dims = md, .mem_start = ms};
  if (dc.rank == 0) remove(path); /* from an earlier run */
  MPI_Barrier(MPI_COMM_WORLD);
  wf_h5file f;
  CHECK(ck, wf_h5_create(&f, MPI_COMM_WORLD, path, &st) == WF_OK, "create: %s", st.msg);
  CHECK(ck, wf_h5_write(&f, "f3d", WF_F64, &b3, f3, true, &st) == WF_OK, "write 3d: %s", st.msg);
  CHECK(ck, wf_h5_write(&f, "f2d", WF_F32, &b2, f2, true, &st) == WF_OK, "write 2d: %s", st.msg);
  CHECK(ck, wf_h5_attr_str(&f, "deck", "[wafer]\npe_grid = 13x11\n", &st) == WF_OK, "attr");
  CHECK(ck, wf_h5_attr_int(&f, "ranks", dc.nranks, &st) == WF_OK, "attr");
  /* Not under the final name before close. */
  CHECK(ck, access(path, F_OK) != 0, "final name exists before close");
  CHECK(ck, wf_h5_close(&f, &st) == WF_OK, "close: %s", st.msg);
  free(f3);
  free(f2);

  /* One process reads the whole file alone. */
  if (dc.rank == 0) {
    char part[600];
    snprintf(part, sizeof part, "%s.part.*", path);
    glob_t g;
    CHECK(ck, glob(part, 0, NULL, &g) == GLOB_NOMATCH, "temporary file left behind");
    globfree(&g);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(ck, file >= 0, "reopen %s", path);
    double *all3 = malloc(sizeof(double) * NZ * NY * NX);
    float *all2 = malloc(sizeof(float) * NY * NX);
    hid_t d3 = H5Dopen2(file, "f3d", H5P_DEFAULT), d2 = H5Dopen2(file, "f2d", H5P_DEFAULT);
    CHECK(ck, H5Dread(d3, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all3) >= 0, "read 3d");
    CHECK(ck, H5Dread(d2, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all2) >= 0, "read 2d");
    long bad = 0;
    for (int k = 0; k < NZ; k++)
      for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
          if (all3[((size_t)k * NY + j) * NX + i] != val3(i, j, k)) bad++;
          if (k == 0 && all2[j * NX + i] != (float)val3(i, j, 0)) bad++;
        }
    CHECK(ck, bad == 0, "%ld values differ after the round trip", bad);
    long long ranks = 0;
    hid_t a = H5Aopen(file, "ranks", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_LLONG, &ranks);
    CHECK(ck, ranks == dc.nranks, "ranks attribute %lld", ranks);
    H5Aclose(a);
    H5Dclose(d3);
    H5Dclose(d2);
    H5Fclose(file);
    free(all3);
    free(all2);

    char xmf[600];
    snprintf(xmf, sizeof xmf, "%.*s.xmf", (int)(strlen(path) - 3), path);
    FILE *x = fopen(xmf, "r");
    CHECK(ck, x != NULL, "no XDMF sidecar %s", xmf);
    if (x) {
      char text[8192];
      size_t n = fread(text, 1, sizeof text - 1, x);
      text[n] = '\0';
      fclose(x);
      CHECK(ck, strstr(text, "3DCoRectMesh\" Dimensions=\"6 12 14\"") != NULL, "xdmf 3d topology");
      CHECK(ck, strstr(text, ":/f3d</DataItem>") != NULL, "xdmf 3d dataset");
      CHECK(ck, strstr(text, "Dimensions=\"11 13\" NumberType=\"Float\" Precision=\"4\"") != NULL,
            "xdmf 2d attribute");
    }
  }
  wf_decomp_free(&dc);
}

/* A block outside the array on one rank (a caller's bug) fails the write
 * on every rank, naming the dataset, and leaves no file: the collective
 * write must not wait for ever for the rank that cannot take part. */
static void test_block_outside(checks *ck, const char *path) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  wf_status st;
  wf_h5file f;
  double v[4] = {1, 2, 3, 4};
  unsigned long long g = 8, off = rank == 0 ? 6 : 0, cnt = 4; /* rank 0's block ends at 10 */
  wf_h5_block b = {.ndim = 1, .global = &g, .offset = &off, .count = &cnt};
  CHECK(ck, wf_h5_create(&f, MPI_COMM_WORLD, path, &st) == WF_OK, "create: %s", st.msg);
  int rc = wf_h5_write(&f, "v", WF_F64, &b, v, false, &st);
  CHECK(ck, rc != WF_OK && strstr(st.msg, "'v'") && strstr(st.msg, "outside the array"),
        "a block outside the array: rc %d, '%s'", rc, st.msg);
  CHECK(ck, wf_h5_finish(&f, rc, &st) != WF_OK, "finish after a failed write");
  CHECK(ck, access(path, F_OK) != 0, "a file left after a failed write");
}

static void test_checkpoint(checks *ck, const char *path) {
  wf_status st;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const unsigned long long n = 101;
  int lo, cnt;
  wf_block_range((int)n, size, rank, &lo, &cnt);
  double *x = malloc(sizeof(double) * (cnt + 1)), *x2 = malloc(sizeof(double) * (cnt + 1));
  long long *id = malloc(sizeof(long long) * (cnt + 1)), *id2 = malloc(sizeof(long long) * (cnt + 1));
  for (int i = 0; i < cnt; i++) {
    int g = lo + i;
    x[i] = g % 3 == 0 ? -0.0 : g % 3 == 1 ? 1.0 / (g + 3) : 4.9e-324 * g; /* signs, denormals */
    id[i] = (long long)g * 1000003LL - 7;
  }
  wf_ckpt_var vars[2] = {{"x", WF_F64, x, n, (unsigned long long)lo, (unsigned long long)cnt},
                         {"id", WF_I64, id, n, (unsigned long long)lo, (unsigned long long)cnt}};
  CHECK(ck, wf_checkpoint_write(MPI_COMM_WORLD, path, 1234, NULL, vars, 2, &st) == WF_OK, "ckpt write: %s",
        st.msg);
  wf_ckpt_var back[2] = {{"x", WF_F64, x2, n, (unsigned long long)lo, (unsigned long long)cnt},
                         {"id", WF_I64, id2, n, (unsigned long long)lo, (unsigned long long)cnt}};
  long long step = -1;
  CHECK(ck, wf_checkpoint_read(MPI_COMM_WORLD, path, &step, back, 2, &st) == WF_OK, "ckpt read: %s",
        st.msg);
  CHECK(ck, step == 1234, "step %lld", step);
  CHECK(ck, memcmp(x, x2, sizeof(double) * cnt) == 0, "doubles not bitwise equal");
  CHECK(ck, memcmp(id, id2, sizeof(long long) * cnt) == 0, "integers differ");
  /* A checkpoint of another size is refused with a message. */
  back[0].global_n = n + 1;
  CHECK(ck, wf_checkpoint_read(MPI_COMM_WORLD, path, &step, back, 1, &st) == WF_ERR_INPUT &&
                strstr(st.msg, "has 101 elements, expected 102"),
        "size mismatch: %s", st.msg);
  CHECK(ck, wf_checkpoint_read(MPI_COMM_WORLD, "no-such-ckpt.h5", &step, back, 1, &st) ==
                WF_ERR_INPUT,
        "missing checkpoint");
  free(x);
  free(x2);
  free(id);
  free(id2);
}

int main(int argc, char **argv) {
  checks ck = checks_start(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[256], ckpt[256];
  snprintf(path, sizeof path, "test_h5_%d.h5", size);
  snprintf(ckpt, sizeof ckpt, "test_ckpt_%d.h5", size);
  test_fields(&ck, path);
  test_checkpoint(&ck, ckpt);
  snprintf(path, sizeof path, "test_h5_outside_%d.h5", size);
  test_block_outside(&ck, path);
  return checks_finish(&ck, "test_h5");
}
