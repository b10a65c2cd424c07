/* The linked BLAS's knobs (wf_blas.h): one thread a rank, and a line naming the BLAS. Weak
 * references, so that no vendor's headers are needed to build. */
#include "wf_blas.h"

#include <stdio.h>

/* Defined by the BLAS that was linked, if it is that one; NULL otherwise. */
extern void openblas_set_num_threads(int) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));
extern void MKL_Set_Num_Threads(int) __attribute__((weak));
extern void MKL_Get_Version_String(char *, int) __attribute__((weak));

void wf_blas_single_thread(void) {
  if (openblas_set_num_threads) openblas_set_num_threads(1);
  if (MKL_Set_Num_Threads) MKL_Set_Num_Threads(1);
}

const char *wf_blas_describe(char *out, size_t len) {
  if (openblas_get_config)
    snprintf(out, len, "OpenBLAS %s", openblas_get_config());
  else if (MKL_Get_Version_String && len > 1)
    MKL_Get_Version_String(out, (int)len);
  else
    snprintf(out, len, "unknown (not OpenBLAS or MKL)");
  return out;
}
