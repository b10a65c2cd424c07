/* Timings as the benchmarks report them: a run's time is its slowest
 * rank's, and repeated timings are summarised by their median (the machine
 * is shared and noisy). */
#ifndef WF_TIMING_H
#define WF_TIMING_H

#include <mpi.h>

/* The median of v[0 .. n) (n >= 1); sorts v. */
double wf_median(double *v, int n);
/* The largest of every rank's `seconds` (collective). */
double wf_slowest(MPI_Comm comm, double seconds);

#endif
