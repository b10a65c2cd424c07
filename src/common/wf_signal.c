/* Clean ends on SIGINT and SIGTERM (wf_signal.h): the handler that records the signal, the
 * collective polls long loops make at safe points, and the status that reports it. */
#include "wf_signal.h"

#include <signal.h>
#include <string.h>

/* The one piece of global mutable state outside main: a signal handler has
 * nowhere else to write. */
static volatile sig_atomic_t caught_signal;

static void record(int sig) { caught_signal = sig; }

void wf_signal_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = record;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART; /* system calls (MPI, HDF5 writes) carry on */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void wf_signal_restore(void) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

int wf_signal_caught(void) { return caught_signal; }

void wf_signal_poll_start(wf_signal_poll *p, MPI_Comm comm) {
  p->comm = comm;
  p->mine = wf_signal_caught();
  p->any = 0;
  MPI_Iallreduce(&p->mine, &p->any, 1, MPI_INT, MPI_MAX, comm, &p->req);
}

int wf_signal_poll_next(wf_signal_poll *p) {
  MPI_Wait(&p->req, MPI_STATUS_IGNORE);
  int any = p->any;
  p->mine = wf_signal_caught();
  MPI_Iallreduce(&p->mine, &p->any, 1, MPI_INT, MPI_MAX, p->comm, &p->req);
  return any;
}

void wf_signal_poll_end(wf_signal_poll *p) {
  if (p->req != MPI_REQUEST_NULL) MPI_Wait(&p->req, MPI_STATUS_IGNORE);
}

int wf_signal_fail(wf_status *st, int sig, const char *where) {
  const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
  return wf_fail(st, WF_ERR_SIGNAL + sig, "interrupted by %s %s", name, where);
}

int wf_signal_check(MPI_Comm comm, const char *where, wf_status *st) {
  int sig = wf_signal_caught();
  MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, comm);
  return sig ? wf_signal_fail(st, sig, where) : WF_OK;
}
