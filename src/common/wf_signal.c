/* Clean ends on SIGINT and SIGTERM (wf_signal.h): the handler that records the signal, the
 * collective polls long loops make at safe points, and the status that reports it. */
#include "wf_signal.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wf_config.h"

/* The global mutable state outside main, the signal's own: a signal handler
 * has nowhere else to write, and the notice that carries its news to the
 * other ranks is read where no run's state reaches (inside a tile loop, a
 * child's wait). */
static volatile sig_atomic_t caught_signal;
/* The notice travels through rank 0: a rank that caught a signal tells rank
 * 0 (one message), and rank 0 relays it to every other rank once (N - 1):
 * O(N) messages however many ranks the signal reached (srun and mpiexec
 * signal them all). */
enum { TO_ROOT = 1, FROM_ROOT = 2 };
static struct {
  MPI_Comm comm; /* the job's, duplicated; MPI_COMM_NULL: not open */
  int rank, size;
  MPI_Request recv; /* rank 0: a rank's notice; the others: rank 0's relay */
  int incoming;     /* the signal it carries */
  bool received;
  bool told;        /* (not rank 0) this rank's own notice sent to rank 0 */
  int outgoing;     /* the signal sent (rank 0: relayed) */
  MPI_Request *sends; /* rank 0's relay, or the one notice to it */
  int nsends;
} notice = {.comm = MPI_COMM_NULL};

static void record(int sig) { caught_signal = sig; }

/* The signals that stop a run cleanly: Ctrl-C and kill's default; a lost
 * terminal; the two a batch system sends ahead of the end (Slurm's
 * --signal=USR1@120). SIGQUIT keeps its core dump: it asks for one. */
static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

void wf_signal_install(void) {
  /* Simulated (SMPI), every rank is a context of one process with its own
   * copy of this file's globals: a handler would record the signal in one
   * rank's copy, and a hung simulation could not be stopped. The default
   * action ends the simulation at once. */
  if (WAFER_SIMULATED) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = record;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* system calls (MPI, HDF5 writes) carry on */
  for (size_t k = 0; k < sizeof stops / sizeof *stops; k++) sigaction(stops[k], &sa, NULL);
}

void wf_signal_restore(void) {
  for (size_t k = 0; k < sizeof stops / sizeof *stops; k++) signal(stops[k], SIG_DFL);
}

int wf_signal_caught(void) { return caught_signal; }

/* The poll's reduction, started. Simulated (SMPI) no handler records a
 * signal (wf_signal_install), so there is nothing to agree on: no
 * reduction, which also keeps a run-level collective out of a simulated
 * study's per-step costs (and SimGrid 3.32 simulates a nonblocking
 * allreduce at a cost that grows as a high power of the rank count). */
static void poll_reduce(wf_signal_poll *p, double per_call) {
  p->req = MPI_REQUEST_NULL;
  p->mine[0] = wf_signal_caught(), p->mine[1] = per_call;
  p->left = p->interval;
  if (!WAFER_SIMULATED) MPI_Iallreduce(p->mine, p->any, 2, MPI_DOUBLE, MPI_MAX, p->comm, &p->req);
}

void wf_signal_poll_start(wf_signal_poll *p, MPI_Comm comm) {
  *p = (wf_signal_poll){.comm = comm, .interval = 1, .started = MPI_Wtime()};
  poll_reduce(p, -1); /* no interval behind it yet */
}

int wf_signal_poll_next(wf_signal_poll *p) {
  if (--p->left > 0) return 0;
  double now = MPI_Wtime(), per_call = (now - p->started) / (double)p->interval;
  p->started = now;
  int any = 0;
  if (p->req != MPI_REQUEST_NULL) { /* (simulated: nothing to hear) */
    MPI_Wait(&p->req, MPI_STATUS_IGNORE);
    any = (int)p->any[0];
    /* The slowest rank's time a call over the interval before, the same
     * on every rank: so many calls make the next interval about
     * WF_SIGNAL_POLL_SECONDS long (growing at most 8 times at once). */
    double calls = p->any[1] > 0 ? WF_SIGNAL_POLL_SECONDS / p->any[1] : 1;
    double most = fmin(1e3, 8.0 * (double)p->interval); /* a step that slows: late by 2e3 */
    p->interval = calls < 1 ? 1 : calls > most ? (long)most : (long)calls;
  }
  poll_reduce(p, per_call);
  return any;
}

void wf_signal_poll_end(wf_signal_poll *p) {
  if (p->req != MPI_REQUEST_NULL) MPI_Wait(&p->req, MPI_STATUS_IGNORE);
}

int wf_signal_fail(wf_status *st, int sig, const char *where) {
  const char *name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                     : sig == SIGUSR1 ? "SIGUSR1"
                     : sig == SIGUSR2 ? "SIGUSR2"
                                      : "a signal";
  return wf_fail(st, WF_ERR_SIGNAL + sig, "interrupted by %s %s", name, where);
}

int wf_signal_check(MPI_Comm comm, const char *where, wf_status *st) {
  int sig = wf_signal_caught();
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, comm);
  return sig ? wf_signal_fail(st, sig, where) : WF_OK;
}

void wf_signal_notice_open(MPI_Comm comm) {
  MPI_Comm_dup(comm, &notice.comm);
  MPI_Comm_rank(notice.comm, &notice.rank);
  MPI_Comm_size(notice.comm, &notice.size);
  notice.received = notice.told = false;
  notice.sends = NULL, notice.nsends = 0;
  if (notice.rank == 0)
    MPI_Irecv(&notice.incoming, 1, MPI_INT, MPI_ANY_SOURCE, TO_ROOT, notice.comm, &notice.recv);
  else
    MPI_Irecv(&notice.incoming, 1, MPI_INT, 0, FROM_ROOT, notice.comm, &notice.recv);
}

/* This rank's notice of `sig`, once: to rank 0, or (`relay`, rank 0's) to
 * every other rank. */
static void send_notice(int sig, bool relay) {
  int first = relay ? 1 : 0, end = relay ? notice.size : 1;
  notice.outgoing = sig;
  notice.sends = malloc((size_t)(end - first) * sizeof *notice.sends);
  for (int r = first; notice.sends && r < end; r++)
    MPI_Isend(&notice.outgoing, 1, MPI_INT, r, relay ? FROM_ROOT : TO_ROOT, notice.comm,
              &notice.sends[notice.nsends++]);
}

int wf_signal_stop(void) {
  int sig = caught_signal;
  if (notice.comm == MPI_COMM_NULL) return sig;
  if (!notice.received) {
    int done = 0;
    MPI_Test(&notice.recv, &done, MPI_STATUS_IGNORE);
    notice.received = done;
  }
  int heard = notice.received ? notice.incoming : 0;
  if (notice.rank != 0 && sig && !notice.told) {
    send_notice(sig, false);
    notice.told = notice.sends != NULL; /* (out of memory: tried again at the next poll) */
  }
  if (notice.rank == 0 && (sig || heard) && !notice.sends && notice.size > 1)
    send_notice(sig ? sig : heard, true);
  return sig ? sig : heard;
}

void wf_signal_wait(MPI_Request *req) {
  /* Simulated (SMPI), no signal reaches a rank (above), and every test of
   * every waiting rank would be an event of the simulation: at 1,024 ranks
   * a compression's final barrier took minutes of polling. */
  if (WAFER_SIMULATED) {
    MPI_Wait(req, MPI_STATUS_IGNORE);
    return;
  }
  const struct timespec nap = {0, 200 * 1000};
  for (int spin = 0;; spin++) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    wf_signal_stop();
    if (spin > 1000) nanosleep(&nap, NULL);
  }
}

void wf_signal_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  wf_signal_wait(&req);
}

void wf_signal_notice_close(void) {
  if (notice.comm == MPI_COMM_NULL) return;
  /* Every notice sent is received, so that no message outlives the
   * communicator: rank 0 takes one from every rank that told it; the
   * others take rank 0's relay, if it sent one. */
  int mine[2] = {notice.told, notice.rank == 0 && notice.sends != NULL}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_SUM, notice.comm);
  int expected = notice.rank == 0 ? all[0] : all[1];
  if (expected == 0 && !notice.received) {
    MPI_Cancel(&notice.recv);
    MPI_Wait(&notice.recv, MPI_STATUS_IGNORE);
  } else if (!notice.received) {
    MPI_Wait(&notice.recv, MPI_STATUS_IGNORE);
  }
  for (int k = 1; k < expected; k++) {
    int drop;
    MPI_Recv(&drop, 1, MPI_INT, MPI_ANY_SOURCE, TO_ROOT, notice.comm, MPI_STATUS_IGNORE);
  }
  if (notice.sends) MPI_Waitall(notice.nsends, notice.sends, MPI_STATUSES_IGNORE);
  free(notice.sends);
  MPI_Comm_free(&notice.comm);
  notice.comm = MPI_COMM_NULL;
}
