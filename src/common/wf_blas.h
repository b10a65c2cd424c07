/* The linked BLAS's own knobs, whichever BLAS it is (OpenBLAS, MKL, LibSci,
 * a reference BLAS): found through weak references, so nothing here needs
 * one vendor's headers or library at build time. */
#ifndef WF_BLAS_H
#define WF_BLAS_H

#include <stddef.h>

/* One thread per rank (the ranks are the parallelism): OpenBLAS's and MKL's
 * own calls when linked; other BLAS libraries follow OMP_NUM_THREADS. */
void wf_blas_single_thread(void);
/* A line naming the linked BLAS ("OpenBLAS 0.3.21 ...", "MKL ...", or
 * "unknown"), into out[len]. */
const char *wf_blas_describe(char *out, size_t len);

#endif
