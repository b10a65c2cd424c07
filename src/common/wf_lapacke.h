/* LAPACKE under whichever header the linked LAPACK provides (lapacke.h, or
 * MKL's mkl_lapacke.h: wf_config.h). */
#ifndef WF_LAPACKE_H
#define WF_LAPACKE_H

#include "wf_config.h"

#include WAFER_LAPACKE_HEADER

#endif
