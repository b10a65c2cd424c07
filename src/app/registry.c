/* The workload registry (registry.h): the list of workloads the `wafer` command knows, and
 * lookup by name. To add a workload, add one line here. */
#include "registry.h"

#include <string.h>

#include "cfd_workload.h"
#include "cholesky.h"
#include "eam_workload.h"
#include "fft_workload.h"
#include "gemm.h"
#include "halo_workload.h"
#include "histogram.h"
#include "life.h"
#include "mandelbrot.h"
#include "spmv.h"
#include "stencil_workload.h"
#include "widemul.h"
#include "tlrmvm_workload.h"
#include "train_workload.h"
#include "generate_workload.h"

/* To add a workload: include its header and add one line here. */
const wf_workload *const wf_workloads[] = {
    &wf_halo_workload,
    &wf_stencil_workload,
    &wf_eam_workload,
    &wf_fft_workload,
    &wf_tlrmvm_workload,
    &wf_cfd_workload,
    &wf_train_workload,
    &wf_generate_workload,
    &wf_mandelbrot_workload,
    &wf_life_workload,
    &wf_gemm_workload,
    &wf_gemv_workload,
    &wf_histogram_workload,
    &wf_widemul_workload,
    &wf_cholesky_workload,
    &wf_spmv_workload,
};
const int wf_nworkloads = (int)(sizeof wf_workloads / sizeof wf_workloads[0]);

const wf_workload *wf_find_workload(const char *name) {
  for (int i = 0; i < wf_nworkloads; i++)
    if (strcmp(wf_workloads[i]->name, name) == 0) return wf_workloads[i];
  return NULL;
}

void wf_finalize_workloads(void) {
  for (int i = 0; i < wf_nworkloads; i++)
    if (wf_workloads[i]->finalize) wf_workloads[i]->finalize();
}
