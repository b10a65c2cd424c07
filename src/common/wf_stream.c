/* STREAM triad (wf_stream.h): this machine's memory bandwidth, which the memory-bound
 * workloads report their fraction of. */
#include "wf_stream.h"

#include <math.h>
#include <stdlib.h>

#include "wf_signal.h"

/* STREAM triad a = b + s c over the rank's share, all ranks at once; the
 * machine's aggregate rate in bytes/s (best of 5). */
double wf_stream_triad(MPI_Comm comm, size_t n, wf_status *st) {
  wf_status_clear(st);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) {
    free(a), free(b), free(c);
    return 0;
  }
  for (size_t i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
  double best = INFINITY;
  for (int rep = 0; rep < 5; rep++) {
    /* Waiting, a rank passes its signal on; then every rank stops measuring
     * alike (a signal to any: 0, unmeasured, and the run's next poll ends it). */
    wf_signal_barrier(comm);
    int stop = wf_signal_stop();
    MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, comm);
    if (stop) {
      wf_signal_fail(st, stop, "while measuring STREAM triad (nothing written)");
      best = INFINITY;
      break;
    }
    double t0 = MPI_Wtime();
    double *restrict ar = a;
    const double *restrict br = b, *restrict cr = c;
#pragma omp simd
    for (size_t i = 0; i < n; i++) ar[i] = br[i] + 3.0 * cr[i];
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (tmax < best) best = tmax;
  }
  double bytes = 3.0 * sizeof(double) * (double)n, total;
  MPI_Allreduce(&bytes, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  volatile double sink = a[n / 2];
  (void)sink;
  free(a), free(b), free(c);
  return isinf(best) ? 0 : total / best;
}
