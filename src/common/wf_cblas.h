/* CBLAS under whichever header the linked BLAS provides (cblas.h, or MKL's
 * mkl_cblas.h: wf_config.h), and the BLAS's own knobs (wf_blas.h). */
#ifndef WF_CBLAS_H
#define WF_CBLAS_H

#include "wf_config.h"

#include WAFER_CBLAS_HEADER

#include "wf_blas.h"

#endif
