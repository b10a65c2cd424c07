/* A tiny assertion harness for MPI tests: every rank counts its checks; the
 * totals are printed by rank 0 as "NAME: N passed, N failed". */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>

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

/* Sum over ranks, print, return the exit status. */
static inline int checks_finish(checks *c, const char *name) {
  long mine[2] = {c->passed, c->failed}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (c->rank == 0) printf("%s: %ld passed, %ld failed\n", name, all[0], all[1]);
  return all[1] || all[0] == 0 ? 1 : 0;
}

#endif
