/* `wafer fft`: complex FFT as pencils over the PE grid, checked against FFTW-MPI. */
#ifndef FFT_WORKLOAD_H
#define FFT_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_fft_workload;

#endif
