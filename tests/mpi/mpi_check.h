/* A tiny assertion harness for MPI tests: every rank counts its checks; the
 * totals are printed by rank 0 as "NAME: N passed, N failed". */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

#include "wf_io.h"

typedef struct checks {
  long passed, failed;
  int rank;
} checks;

#define CHECK(c, cond, ...)                                                   \
  do {                                                                        \
    if (cond) {                                                               \
      (c)->passed++;                                                          \
    } else {                                                                  \
      if ((c)->failed++ < 20) {                                               \
        fprintf(stderr, "rank %d: %s:%d: ", (c)->rank, __FILE__, __LINE__);   \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
      }                                                                       \
    }                                                                         \
  } while (0)

/* MPI_Init and a fresh set of counters. */
static inline checks checks_start(int *argc, char ***argv) {
  wf_mpi_io_prefer_romio(); /* as the wafer command does */
  MPI_Init(argc, argv);
  checks c = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  return c;
}

/* Sum over ranks, print, MPI_Finalize, return the exit status. */
static inline int checks_finish(checks *c, const char *name) {
  long mine[2] = {c->passed, c->failed}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (c->rank == 0) printf("%s: %ld passed, %ld failed\n", name, all[0], all[1]);
  MPI_Finalize();
  return all[1] || all[0] == 0 ? 1 : 0;
}

#include "wf_decomp.h"
#include "wf_fabric.h"
#include "wf_grid.h"
#include "wf_hw.h"

/* A defect-free wse2 PE grid over MPI_COMM_WORLD, with its fabric. */
typedef struct test_wafer {
  wf_decomp dc;
  wf_grid grid;
  wf_fabric fab;
} test_wafer;

/* A setup that fails is a failed check, never a silent return. The rank
 * grid px x py (0 x 0: automatic). */
static inline int test_wafer_create_ranks(checks *c, test_wafer *t, int nx, int ny, int px,
                                          int py) {
  wf_status st;
  int rc = wf_decomp_create(&t->dc, MPI_COMM_WORLD, nx, ny, px, py, &st);
  if (rc == WF_OK) rc = wf_grid_create(&t->grid, nx, ny, 0, NULL, "", &st);
  if (rc == WF_OK) wf_fabric_create(&t->fab, &t->dc, &t->grid, wf_hw_preset("wse2"));
  CHECK(c, rc == WF_OK, "setup of a %dx%d PE grid: %s", nx, ny, st.msg);
  return rc;
}

static inline int test_wafer_create(checks *c, test_wafer *t, int nx, int ny) {
  return test_wafer_create_ranks(c, t, nx, ny, 0, 0);
}

static inline void test_wafer_free(test_wafer *t) {
  wf_fabric_free(&t->fab);
  wf_grid_free(&t->grid);
  wf_decomp_free(&t->dc);
}

#endif
