/* `wafer --version` (version.h): wafer's version and those of the libraries it links (MPI,
 * HDF5, FFTW, BLAS, PETSc), the CPU level the kernels run at, and which optional references
 * this build and machine have. */
#include "version.h"

#include <fftw3.h>
#include "wf_config.h"
#if WAFER_HAVE_HDF5
#include <hdf5.h>
#endif
#include <mpi.h>
#include <string.h>

#include "wf_blas.h"
#include "wf_config.h"
#include "wf_data.h"
#include "wf_git_describe.h" /* generated at build time: cmake/git_describe.cmake */
#include "wf_reference.h"
#if WAFER_HAVE_PETSC
#include <petscversion.h>
#endif

const char *wf_version(void) { return WAFER_VERSION " (git " WAFER_GIT_DESCRIBE ")"; }

/* The instruction set of the build, and of the kernels' clones this CPU runs. */
static void print_arch(FILE *out) {
  if (WAFER_ARCH[0]) {
    fprintf(out, "  CPU:      built for -march=%s\n", WAFER_ARCH);
    return;
  }
  const char *level = "baseline x86-64";
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    level = "x86-64-v4 (AVX-512)";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    level = "x86-64-v3 (AVX2)";
#endif
  fprintf(out, "  CPU:      portable x86-64; hot kernels run their %s clone here\n", level);
}

/* Each optional reference: what this build and machine have, or how to add it. */
static void print_references(FILE *out) {
  char why[512];
  fprintf(out, "references (optional; a check whose reference is absent reports unavailable):\n");
#if WAFER_HAVE_PETSC
  fprintf(out, "  PETSc:    %d.%d.%d\n", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
          PETSC_VERSION_SUBMINOR);
#else
  fprintf(out, "  PETSc:    not built in (%s)\n", wf_ref_petsc_absent());
#endif
  fprintf(out, "  FFTW-MPI: %s\n", WAFER_HAVE_FFTW_MPI ? "built in" : wf_ref_fftw_mpi_absent());
  const char *lmp = wf_ref_command_absent("lmp", why, sizeof why);
  fprintf(out, "  LAMMPS:   %s\n", lmp ? lmp : "`lmp` on PATH");
  fprintf(out, "  plots:    %s\n", wf_plots_available(why, sizeof why) ? wf_python() : why);
  wf_status st;
  char data[4096];
  wf_status_clear(&st);
  if (wf_data_path("inputs", data, sizeof data, &st) == WF_OK)
    fprintf(out, "data:       %s\n", data);
  else
    fprintf(out, "data:       %s\n", st.msg);
}

void wf_print_versions(FILE *out) {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpi, &len);
  char *nl = strchr(mpi, '\n');
  if (nl) *nl = '\0';
  char *comma = strchr(mpi, ',');
  if (comma) *comma = '\0';
  char blas[256];
  fprintf(out, "wafer %s\n", wf_version());
  fprintf(out, "  MPI:      %s\n", mpi);
#if WAFER_HAVE_HDF5
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  fprintf(out, "  HDF5:     %u.%u.%u (parallel)\n", maj, min, rel);
#else
  fprintf(out, "  HDF5:     none (the simulated build)\n");
#endif
  fprintf(out, "  FFTW:     %s\n", fftw_version);
  fprintf(out, "  BLAS:     %s\n", wf_blas_describe(blas, sizeof blas));
  print_arch(out);
  print_references(out);
}
