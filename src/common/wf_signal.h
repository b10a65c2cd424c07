/* SIGINT and SIGTERM (and SIGHUP, SIGUSR1, SIGUSR2: a batch system's
 * warning) end a run cleanly instead of killing it mid-write.
 *
 * The handler only records the signal. Long loops poll at a safe point of
 * every step or iteration; the poll is collective, so every rank learns of a
 * signal that reached any of them at the same step, writes what it must (a
 * checkpoint) and returns wf_signal_fail's status. The exit status is then
 * 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as a shell
 * reports a process the signal ended.
 *
 * mpiexec turns Ctrl-C into SIGTERM for every rank and sends SIGKILL one
 * second later (Open MPI's odls_base_sigkill_timeout); Slurm's scancel waits
 * KillWait (30 s by default). */
#ifndef WF_SIGNAL_H
#define WF_SIGNAL_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"

/* Exit statuses above this are "ended by signal (status - WF_ERR_SIGNAL)". */
enum { WF_ERR_SIGNAL = 128 };

/* Catch SIGINT and SIGTERM from now on (main, once). */
void wf_signal_install(void);

/* Back to the default (the signal ends the process): once everything is
 * written, before MPI_Finalize, which can wait for ranks mpiexec is already
 * tearing down. */
void wf_signal_restore(void);

/* The signal this process caught, 0 if none. */
int wf_signal_caught(void);

/* The stop notice, for phases in which a rank works alone for long (a tile
 * SVD after another, a reference product, LAPACK on a large block, a child
 * such as LAMMPS): no collective to poll, yet a signal that reached one
 * rank must stop them all within a fraction of a second. A rank that
 * catches a signal tells rank 0 the first time it polls, and rank 0 relays
 * it to every rank once (the only messages, and only then: O(N) however
 * many ranks the signal reached); every rank has a receive posted for it. Open after wf_signal_install, close before MPI_Finalize
 * (main; both collective over `comm`, the whole job). */
void wf_signal_notice_open(MPI_Comm comm);
void wf_signal_notice_close(void);
/* Local and cheap (an MPI_Test): the signal this rank caught or any rank's
 * notice reported, 0 if none. Poll it at least every ~100 ms of work, and
 * only to leave loops with no collective inside (a rank that left would
 * miss it): a phase that stopped sets wf_signal_fail's status, and the
 * ranks agree on their statuses at its end (after wf_signal_barrier) as
 * after any failure. */
int wf_signal_stop(void);
/* MPI_Wait that passes this rank's signal on while it waits (polling, then
 * sleeping 0.2 ms between tests): for ranks idle while one rank works
 * alone (rank 0 running LAMMPS), which would otherwise sit in a blocking
 * call with their news unsent. */
void wf_signal_wait(MPI_Request *req);
/* A barrier at the end of a solo phase, during which a rank that finished
 * first passes its signal on (wf_signal_wait). Collective. */
void wf_signal_barrier(MPI_Comm comm);

/* A non-blocking poll, called at a safe point of every step. It reduces
 * only every `interval` calls (a reduction a step would be a global
 * synchronisation a step, which a strong-scaling run cannot afford): each
 * reduction carries the signal and the time its interval took, so every
 * rank gets the same figures and sets the same next interval, about
 * WF_SIGNAL_POLL_SECONDS of steps. A reduction completes at the next
 * reduction's call, so a signal is returned on every rank at the same
 * call, within about two intervals. */
#define WF_SIGNAL_POLL_SECONDS 0.01
typedef struct wf_signal_poll {
  MPI_Comm comm;
  MPI_Request req;
  double mine[2], any[2]; /* signal, seconds a call took over the last interval */
  double started;         /* when this rank started the interval */
  long interval, left;    /* calls between reductions, calls to the next */
} wf_signal_poll;

void wf_signal_poll_start(wf_signal_poll *p, MPI_Comm comm);
/* Collective: the signal some rank caught (0: none). */
int wf_signal_poll_next(wf_signal_poll *p);
/* Completes the outstanding reduction. Collective. */
void wf_signal_poll_end(wf_signal_poll *p);

/* Set `st` to "interrupted by SIG... <where>" with code WF_ERR_SIGNAL + sig. */
int wf_signal_fail(wf_status *st, int sig, const char *where);

/* Between two phases that do not poll (FFTW's planning, a reference
 * computation): a blocking check, and wf_signal_fail's status with `where`
 * if any rank caught a signal. Collective. */
int wf_signal_check(MPI_Comm comm, const char *where, wf_status *st);

/* True for a status code set by wf_signal_fail. */
static inline bool wf_interrupted(int code) { return code > WF_ERR_SIGNAL; }

#endif
