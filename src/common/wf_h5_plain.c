/* The parts of wf_h5.h that need no HDF5 library, in every build (the
 * simulated one included): the [output] section, where a piece's values
 * lie, and the scan for non-finite values. */
#include <math.h>
#include <stdio.h>

#include "wf_config.h"
#include "wf_h5.h"
#include "wf_key.h"

int wf_key_hdf5(const char *value, char *why, size_t len) {
  if (WAFER_HAVE_HDF5 || !value[0]) return 0;
  snprintf(why, len, "%s", WF_H5_ABSENT);
  return -1;
}

unsigned long long wf_h5_piece_place(const wf_h5_piece *p, unsigned long long j) {
  return p->start + j / p->block * p->stride + j % p->block;
}

long long wf_first_nonfinite(wf_dtype type, const void *data, size_t n) {
  if (type == WF_I64) return -1;
  for (size_t i = 0; i < n; i++) {
    double x = type == WF_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
    if (!isfinite(x)) return (long long)i;
  }
  return -1;
}

static const wf_key output_keys[] = {
    {"file", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "HDF5 file for the run's fields and deck ('' = no file); an XDMF sidecar goes beside it",
     wf_key_hdf5},
};

const wf_section wf_output_section = {"output", "Where a run writes its results.", output_keys,
                                      (int)(sizeof output_keys / sizeof output_keys[0]), NULL, NULL};
