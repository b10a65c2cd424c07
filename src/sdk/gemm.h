/* `wafer gemm` and `wafer gemv`: the SDK's GEMM (collectives_2d, SUMMA)
 * and GEMV (collectives_2d) examples on the PE grid. */
#ifndef GEMM_H
#define GEMM_H

#include "wf_workload.h"

extern const wf_workload wf_gemm_workload;
extern const wf_workload wf_gemv_workload;

#endif
