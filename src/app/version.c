#include "version.h"

#include <cblas.h>
#include <fftw3.h>
#include <hdf5.h>
#include <mpi.h>
#include <petscversion.h>
#include <string.h>

#include "wf_git_describe.h" /* generated at build time: cmake/git_describe.cmake */

const char *wf_version(void) { return WAFER_VERSION " (git " WAFER_GIT_DESCRIBE ")"; }

void wf_print_versions(FILE *out) {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  char *nl = strchr(mpi, '\n');
  if (nl) *nl = '\0';
  char *comma = strchr(mpi, ',');
  if (comma) *comma = '\0';
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  fprintf(out, "wafer %s\n", wf_version());
  fprintf(out, "  MPI:      %s\n", mpi);
  fprintf(out, "  HDF5:     %u.%u.%u (parallel)\n", maj, min, rel);
  fprintf(out, "  FFTW:     %s\n", fftw_version);
  fprintf(out, "  PETSc:    %d.%d.%d\n", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
          PETSC_VERSION_SUBMINOR);
  fprintf(out, "  OpenBLAS: %s\n", openblas_get_config());
}
