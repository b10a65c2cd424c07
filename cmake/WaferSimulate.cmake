# The simulated build (WAFER_SIMULATE=ON, CC=smpicc): SimGrid's SMPI is the
# MPI. smpicc compiles against SimGrid's mpi.h and links libsimgrid; the
# program then runs under smpirun, every simulated rank in one process, on
# a platform file that describes the cluster (inputs/platforms/). Nothing
# here may add a real MPI: no FindMPI (it would add Open MPI's headers and
# library), and the references built for a real MPI are off.
include(CheckCSourceCompiles)
include(CMakePushCheckState)

cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_QUIET ON)
unset(WAFER_IS_SMPI CACHE)
check_c_source_compiles("#include <mpi.h>
#include <smpi/smpi.h>
int main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }" WAFER_IS_SMPI)
cmake_pop_check_state()
if(NOT WAFER_IS_SMPI)
  message(FATAL_ERROR "WAFER_SIMULATE=ON needs SimGrid's SMPI compiler wrapper as the C "
    "compiler (CC=smpicc; `make build-sim` sets it): ${CMAKE_C_COMPILER} does not compile "
    "against SMPI's mpi.h. On Debian, scripts/setup installs it (libsimgrid-dev).")
endif()
find_program(WAFER_SMPIRUN smpirun)
if(NOT WAFER_SMPIRUN)
  message(FATAL_ERROR "WAFER_SIMULATE=ON: smpirun (SimGrid's launcher) was not found on PATH")
endif()
add_library(MPI::MPI_C INTERFACE IMPORTED GLOBAL) # the wrapper is the MPI
set(WAFER_MPI_SONAMES "")
message(STATUS "wafer: MPI: SimGrid SMPI (simulated ranks; launch with ${WAFER_SMPIRUN})")

# Built for a real MPI: never in this build (FORCE: a build directory is of
# one kind; build-sim stays simulated).
foreach(ref PETSC FFTW_MPI)
  set(WAFER_WITH_${ref} OFF CACHE STRING "off in the simulated build" FORCE)
endforeach()
function(wafer_mpi_mismatch out)
  set(${out} "" PARENT_SCOPE)
endfunction()
