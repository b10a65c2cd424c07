/* A census of the MPI calls a program makes, through the MPI profiling
 * interface (each MPI_X here counts, then calls PMPI_X): loaded with
 * LD_PRELOAD, it shares nothing with wafer's own fabric counters, so the
 * tests can hold those counters and the code's structure against what
 * really went to MPI. At MPI_Finalize each rank writes one JSON line to
 * $WAFER_CENSUS.RANK:
 *   {"global": n, "partial": n, "sends": n, "by_call": {...}}
 * global: collectives over a communicator of every rank (size of
 * MPI_COMM_WORLD, more than one rank); partial: over fewer (a row, a
 * column); sends: point-to-point messages started (Send, Isend, Sendrecv,
 * and persistent sends when started). Test code only. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CALLS = 40, MAX_PERSISTENT = 4096 };

static struct {
  const char *name[MAX_CALLS];
  long long count[MAX_CALLS];
  int ncalls;
  long long global, partial, sends;
  MPI_Request persistent[MAX_PERSISTENT]; /* persistent send requests */
  int npersistent;
} census;

static void tally(const char *name) {
  for (int k = 0; k < census.ncalls; k++)
    if (strcmp(census.name[k], name) == 0) {
      census.count[k]++;
      return;
    }
  if (census.ncalls < MAX_CALLS) {
    census.name[census.ncalls] = name;
    census.count[census.ncalls++] = 1;
  }
}

static void collective(const char *name, MPI_Comm comm) {
  int n, world;
  PMPI_Comm_size(comm, &n);
  PMPI_Comm_size(MPI_COMM_WORLD, &world);
  tally(name);
  if (n > 1 && n == world) census.global++;
  else if (n > 1) census.partial++;
}

static void send(const char *name) {
  tally(name);
  census.sends++;
}

static int is_persistent_send(MPI_Request r) {
  for (int k = 0; k < census.npersistent; k++)
    if (census.persistent[k] == r) return 1;
  return 0;
}

static void forget(MPI_Request r) {
  for (int k = 0; k < census.npersistent; k++)
    if (census.persistent[k] == r) census.persistent[k] = census.persistent[--census.npersistent];
}

/* ---- collectives ---- */

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  collective("Allreduce", c);
  return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q) {
  collective("Iallreduce", c);
  return PMPI_Iallreduce(s, r, n, t, op, c, q);
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  collective("Reduce", c);
  return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  collective("Bcast", c);
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q) {
  collective("Ibcast", c);
  return PMPI_Ibcast(b, n, t, root, c, q);
}
int MPI_Barrier(MPI_Comm c) {
  collective("Barrier", c);
  return PMPI_Barrier(c);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *q) {
  collective("Ibarrier", c);
  return PMPI_Ibarrier(c, q);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
  collective("Allgather", c);
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Allgatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d,
                   MPI_Datatype rt, MPI_Comm c) {
  collective("Allgatherv", c);
  return PMPI_Allgatherv(s, sn, st, r, rn, d, rt, c);
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm c) {
  collective("Gather", c);
  return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}
int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d,
                MPI_Datatype rt, int root, MPI_Comm c) {
  collective("Gatherv", c);
  return PMPI_Gatherv(s, sn, st, r, rn, d, rt, root, c);
}
int MPI_Scatterv(const void *s, const int *sn, const int *d, MPI_Datatype st, void *r, int rn,
                 MPI_Datatype rt, int root, MPI_Comm c) {
  collective("Scatterv", c);
  return PMPI_Scatterv(s, sn, d, st, r, rn, rt, root, c);
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
  collective("Alltoall", c);
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Alltoallv(const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r,
                  const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c) {
  collective("Alltoallv", c);
  return PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c);
}
int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  collective("Exscan", c);
  return PMPI_Exscan(s, r, n, t, op, c);
}
int MPI_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  collective("Scan", c);
  return PMPI_Scan(s, r, n, t, op, c);
}

/* ---- point to point ---- */

int MPI_Send(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c) {
  send("Send");
  return PMPI_Send(b, n, t, to, tag, c);
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *q) {
  send("Isend");
  return PMPI_Isend(b, n, t, to, tag, c, q);
}
int MPI_Sendrecv(const void *s, int sn, MPI_Datatype st, int to, int stag, void *r, int rn,
                 MPI_Datatype rt, int from, int rtag, MPI_Comm c, MPI_Status *status) {
  send("Sendrecv");
  return PMPI_Sendrecv(s, sn, st, to, stag, r, rn, rt, from, rtag, c, status);
}
int MPI_Send_init(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c,
                  MPI_Request *q) {
  int rc = PMPI_Send_init(b, n, t, to, tag, c, q);
  if (census.npersistent < MAX_PERSISTENT) census.persistent[census.npersistent++] = *q;
  return rc;
}
int MPI_Recv_init(void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request *q) {
  int rc = PMPI_Recv_init(b, n, t, from, tag, c, q);
  forget(*q); /* a handle a freed send request had */
  return rc;
}
int MPI_Request_free(MPI_Request *q) {
  forget(*q);
  return PMPI_Request_free(q);
}
int MPI_Start(MPI_Request *q) {
  if (is_persistent_send(*q)) send("Start");
  return PMPI_Start(q);
}
int MPI_Startall(int n, MPI_Request *q) {
  for (int k = 0; k < n; k++)
    if (is_persistent_send(q[k])) send("Startall");
  return PMPI_Startall(n, q);
}

/* ---- the report ---- */

int MPI_Finalize(void) {
  const char *prefix = getenv("WAFER_CENSUS");
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (prefix && prefix[0]) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "{\"global\": %lld, \"partial\": %lld, \"sends\": %lld, \"by_call\": {",
              census.global, census.partial, census.sends);
      for (int k = 0; k < census.ncalls; k++)
        fprintf(f, "%s\"%s\": %lld", k ? ", " : "", census.name[k], census.count[k]);
      fprintf(f, "}}\n");
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
