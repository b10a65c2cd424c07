# wafer's dependencies, found the way HPC centres provide them: modules and
# Spack prefixes (CMAKE_PREFIX_PATH, <Pkg>_ROOT), compiler wrappers, CMake's
# own Find modules; pkg-config only as a fallback. Nothing here knows a
# distribution's package names: scripts/setup installs Debian's, and a
# missing dependency's message names the variable that points at it.
#
# Required: MPI, parallel HDF5 (built with the same MPI), FFTW (double and
# single), BLAS with CBLAS, LAPACKE, inih, zlib.
# Optional references, each WAFER_WITH_<X> = AUTO (use when found), ON
# (required) or OFF: PETSC (stencil and convection cross-checks), FFTW_MPI
# (the FFT's 3D reference), GMP (the wide multiplication's reference).
# wf_config.h says which were built in.
include(CheckCSourceCompiles)
include(CMakePushCheckState)
find_package(PkgConfig QUIET)

# The message for a required dependency that is missing: what it is, and
# the knob that points CMake at it.
function(wafer_missing what knob)
  message(FATAL_ERROR
    "wafer needs ${what}, which was not found.\n"
    "  Point CMake at it with ${knob} (or add its prefix to CMAKE_PREFIX_PATH;\n"
    "  at a centre: `module load` it first). On Debian, scripts/setup installs it.\n"
    "  docs/building.md gives the configure lines for modules and Spack.")
endfunction()

# ---- MPI -------------------------------------------------------------------
# WAFER_SIMULATE: SimGrid's SMPI (CC=smpicc) is the MPI. The wrapper brings
# its own mpi.h and library and runs every rank in one process under
# smpirun; libraries built for a real MPI (parallel HDF5, PETSc, FFTW-MPI)
# cannot join it, so the simulated build has none of them (docs/scaling.md).
if(WAFER_SIMULATE)
  include(${CMAKE_CURRENT_LIST_DIR}/WaferSimulate.cmake)
else()
  find_package(MPI COMPONENTS C QUIET)
  if(NOT MPI_C_FOUND)
    wafer_missing("MPI (a C compiler wrapper such as mpicc, or the library and mpi.h)"
                  "-DMPI_C_COMPILER=/path/to/mpicc or MPI_HOME")
  endif()

  # MPICH's mpi.h declares MPI_Waitall's statuses as an array and defines
  # MPI_STATUSES_IGNORE as (MPI_Status *)1: GCC 11 and later then warn at every
  # call that ignores the statuses (-Wstringop-overflow), a false alarm.
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles("#include <mpi.h>
  #ifndef MPICH_VERSION
  #error not MPICH
  #endif
  int main(void) { return 0; }" WAFER_MPI_IS_MPICH)
  cmake_pop_check_state()
  if(WAFER_MPI_IS_MPICH AND CMAKE_C_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-stringop-overflow)
  endif()

  # The shared-object names of the MPI library we link (libmpi.so.40,
  # libmpich.so.12, ...): a dependency that needs another MPI's library was
  # built with another MPI and would crash at run time. Learned from a probe
  # linked with the compiler and flags in use, not from MPI_C_LIBRARIES: with
  # the wrapper as the compiler (CC=mpicc, Cray's cc) FindMPI names no library,
  # yet the wrapper links one.
  set(WAFER_MPI_SONAMES "")
  set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/wafer_mpi_probe)
  file(WRITE ${_probe}/probe.c
       "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n")
  try_compile(_probe_linked ${_probe}/build SOURCES ${_probe}/probe.c
              LINK_LIBRARIES MPI::MPI_C COPY_FILE ${_probe}/probe OUTPUT_VARIABLE _probe_log)
  if(_probe_linked AND CMAKE_OBJDUMP)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${_probe}/probe OUTPUT_VARIABLE dump ERROR_QUIET)
    string(REGEX MATCHALL "NEEDED +(libmpi|libmpich|libmpi_cray)\\.so[.0-9]*" needs "${dump}")
    foreach(need IN LISTS needs)
      string(REGEX REPLACE "NEEDED +" "" need "${need}")
      list(APPEND WAFER_MPI_SONAMES ${need})
    endforeach()
  endif()
  if(NOT _probe_linked)
    message(FATAL_ERROR "An MPI program does not link with this compiler and MPI "
      "(${CMAKE_C_COMPILER}, ${MPI_C_LIBRARIES}):\n${_probe_log}")
  elseif(WAFER_MPI_SONAMES)
    message(STATUS "wafer: MPI library: ${WAFER_MPI_SONAMES}")
  else()
    message(WARNING "wafer: could not learn which MPI library this build links (a static MPI, "
      "or no objdump): libraries built with another MPI (HDF5, FFTW-MPI, PETSc) cannot be "
      "recognised here, so check that they were built with this MPI.")
  endif()
  # MPICH's ABI: libmpi.so.12 and libmpich.so.12 are the same library.
  if(WAFER_MPI_SONAMES MATCHES "libmpich\\.so\\.12|libmpi\\.so\\.12")
    list(APPEND WAFER_MPI_SONAMES libmpich.so.12 libmpi.so.12)
  endif()

  # wafer_mpi_mismatch(<out> <libraries...>): sets <out> to the MPI library one
  # of the shared libraries needs when it is not ours, "" otherwise (static
  # libraries, and MPIs whose library we could not name, are trusted: the
  # configure warned of that above).
  function(wafer_mpi_mismatch out)
    set(${out} "" PARENT_SCOPE)
    if(NOT CMAKE_OBJDUMP OR NOT WAFER_MPI_SONAMES)
      return()
    endif()
    foreach(lib IN LISTS ARGN)
      if(NOT lib MATCHES "\\.so" OR NOT EXISTS "${lib}")
        continue()
      endif()
      execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${lib} OUTPUT_VARIABLE dump ERROR_QUIET)
      # The core C library only: libmpi_mpifh, libmpicxx (bindings) follow it.
      string(REGEX MATCHALL "NEEDED +(libmpi|libmpich|libmpi_cray)\\.so[.0-9]*" needs "${dump}")
      foreach(need IN LISTS needs)
        string(REGEX REPLACE "NEEDED +" "" need "${need}")
        if(NOT need IN_LIST WAFER_MPI_SONAMES)
          set(${out} "${need} (${lib})" PARENT_SCOPE)
          return()
        endif()
      endforeach()
    endforeach()
  endfunction()
endif()

# ---- optional references: AUTO / ON / OFF ------------------------------------
macro(wafer_option name help)
  set(WAFER_WITH_${name} AUTO CACHE STRING "${help}: AUTO (when found), ON or OFF")
  set_property(CACHE WAFER_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  # Any of CMake's spellings of true and false (on, 1, yes, off, 0, no...).
  string(TOUPPER "${WAFER_WITH_${name}}" _want)
  if(_want STREQUAL "AUTO")
  elseif(_want MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(WAFER_WITH_${name} ON)
  elseif(_want MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(WAFER_WITH_${name} OFF)
  else()
    message(FATAL_ERROR "WAFER_WITH_${name}=${WAFER_WITH_${name}}: AUTO, ON or OFF")
  endif()
endmacro()
# wafer_optional(<NAME> <found> <why-not> <how>): decides WAFER_HAVE_<NAME>.
function(wafer_optional name found why how)
  set(want ${WAFER_WITH_${name}})
  if(found AND NOT want STREQUAL "OFF")
    set(WAFER_HAVE_${name} 1 PARENT_SCOPE)
    message(STATUS "wafer: ${name}: yes")
    return()
  endif()
  set(WAFER_HAVE_${name} 0 PARENT_SCOPE)
  if(want STREQUAL "OFF")
    message(STATUS "wafer: ${name}: no (WAFER_WITH_${name}=OFF)")
  elseif(want STREQUAL "ON")
    message(FATAL_ERROR "WAFER_WITH_${name}=ON, but ${why}.\n  ${how}")
  else()
    message(STATUS "wafer: ${name}: no (${why}; ${how})")
  endif()
endfunction()

# ---- parallel HDF5 ------------------------------------------------------------
if(WAFER_SIMULATE)
  add_library(wafer_hdf5 INTERFACE IMPORTED GLOBAL) # none: src/common/wf_h5_absent.c
  set(WAFER_HAVE_HDF5 0)
  message(STATUS "wafer: HDF5: no (a simulated build: files in HDF5 are refused)")
else()
  # FindHDF5 (the h5pcc wrapper, or HDF5_ROOT, or hdf5-config.cmake); then
  # pkg-config (hdf5-openmpi, hdf5-mpich, hdf5) when it found nothing usable.
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 COMPONENTS C QUIET)
  set(_hdf5_ok FALSE)
  if(HDF5_FOUND AND HDF5_IS_PARALLEL)
    wafer_mpi_mismatch(_hdf5_mpi ${HDF5_C_LIBRARIES})
    if(NOT _hdf5_mpi)
      add_library(wafer_hdf5 INTERFACE IMPORTED GLOBAL)
      target_include_directories(wafer_hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS})
      target_compile_definitions(wafer_hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
      target_link_libraries(wafer_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
      set(_hdf5_ok TRUE)
      set(_hdf5_how "FindHDF5: ${HDF5_C_LIBRARIES}")
    endif()
  endif()
  if(NOT _hdf5_ok AND PKG_CONFIG_FOUND)
    # A prefix (and so an imported target) per module: a rejected module's
    # paths must not carry over to the next.
    foreach(module hdf5-openmpi hdf5-mpich hdf5)
      string(MAKE_C_IDENTIFIER "PC_${module}" pc)
      unset(__pkg_config_checked_${pc} CACHE)
      pkg_check_modules(${pc} QUIET IMPORTED_TARGET GLOBAL ${module})
      if(${pc}_FOUND)
        wafer_mpi_mismatch(_hdf5_mpi ${${pc}_LINK_LIBRARIES})
        if(NOT _hdf5_mpi)
          add_library(wafer_hdf5 INTERFACE IMPORTED GLOBAL)
          target_link_libraries(wafer_hdf5 INTERFACE PkgConfig::${pc})
          set(_hdf5_ok TRUE)
          set(_hdf5_how "pkg-config ${module}")
          break()
        endif()
      endif()
    endforeach()
  endif()
  if(NOT _hdf5_ok)
    if(_hdf5_mpi)
      message(FATAL_ERROR "The HDF5 found was built with another MPI: it needs ${_hdf5_mpi}, and "
        "wafer links ${WAFER_MPI_SONAMES}.\n  Point CMake at the parallel HDF5 built with this MPI: "
        "-DHDF5_ROOT=<prefix> or -DHDF5_C_COMPILER_EXECUTABLE=<its h5pcc>.")
    endif()
    wafer_missing("parallel HDF5 (built with MPI, same MPI as wafer's)"
                  "-DHDF5_ROOT=<prefix> or -DHDF5_C_COMPILER_EXECUTABLE=/path/to/h5pcc")
  endif()
  # Parallel, with this MPI: H5Pset_fapl_mpio must compile and link.
  # (Every check of this file runs again at each configure: a cached failure
  # would outlive the fix its message asks for.)
  unset(WAFER_HDF5_PARALLEL CACHE)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_LIBRARIES wafer_hdf5 MPI::MPI_C)
  check_c_source_compiles("
  #include <hdf5.h>
  #include <mpi.h>
  int main(void) { hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    return (int)H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL); }" WAFER_HDF5_PARALLEL)
  cmake_pop_check_state()
  if(NOT WAFER_HDF5_PARALLEL)
    message(FATAL_ERROR "The HDF5 found (${_hdf5_how}) is not a parallel build usable with this "
      "MPI (H5Pset_fapl_mpio does not compile and link).\n  Point CMake at a parallel HDF5: "
      "-DHDF5_ROOT=<prefix> or -DHDF5_C_COMPILER_EXECUTABLE=/path/to/h5pcc.")
  endif()
  message(STATUS "wafer: HDF5: ${_hdf5_how}")
  set(WAFER_HAVE_HDF5 1)
endif()

# ---- FFTW ---------------------------------------------------------------------
# FFTW_ROOT (or the FFTW_DIR/FFTW_INC that Cray's cray-fftw sets), then the
# prefixes pkg-config knows, then the default paths.
set(_fftw_hints ${FFTW_ROOT} $ENV{FFTW_ROOT} $ENV{FFTW_DIR}/.. $ENV{FFTW_INC}/..)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_FFTW QUIET fftw3)
  list(APPEND _fftw_hints ${PC_FFTW_PREFIX})
endif()
find_path(FFTW_INCLUDE_DIR fftw3.h HINTS ${_fftw_hints} PATH_SUFFIXES include)
find_library(FFTW_LIBRARY fftw3 HINTS ${_fftw_hints} PATH_SUFFIXES lib lib64)
find_library(FFTWF_LIBRARY fftw3f HINTS ${_fftw_hints} PATH_SUFFIXES lib lib64)
if(NOT FFTW_INCLUDE_DIR OR NOT FFTW_LIBRARY OR NOT FFTWF_LIBRARY)
  wafer_missing("FFTW 3 in double and single precision (fftw3.h, libfftw3, libfftw3f)"
                "-DFFTW_ROOT=<prefix>")
endif()
add_library(wafer_fftw INTERFACE IMPORTED GLOBAL)
target_include_directories(wafer_fftw INTERFACE ${FFTW_INCLUDE_DIR})
target_link_libraries(wafer_fftw INTERFACE ${FFTW_LIBRARY} ${FFTWF_LIBRARY})

wafer_option(FFTW_MPI "FFTW-MPI, the FFT's 3D reference")
find_library(FFTW_MPI_LIBRARY fftw3_mpi HINTS ${_fftw_hints} PATH_SUFFIXES lib lib64)
find_library(FFTWF_MPI_LIBRARY fftw3f_mpi HINTS ${_fftw_hints} PATH_SUFFIXES lib lib64)
set(_why "")
if(NOT FFTW_MPI_LIBRARY OR NOT FFTWF_MPI_LIBRARY OR NOT EXISTS ${FFTW_INCLUDE_DIR}/fftw3-mpi.h)
  set(_why "FFTW's MPI library (libfftw3_mpi, libfftw3f_mpi, fftw3-mpi.h) was not found")
else()
  wafer_mpi_mismatch(_fftw_mpi ${FFTW_MPI_LIBRARY} ${FFTWF_MPI_LIBRARY})
  if(_fftw_mpi)
    set(_why "the FFTW-MPI found was built with another MPI: it needs ${_fftw_mpi}")
  endif()
endif()
if(_why STREQUAL "")
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
wafer_optional(FFTW_MPI ${_found} "${_why}"
               "point FFTW_ROOT at an FFTW built with --enable-mpi and this MPI")
add_library(wafer_fftw_mpi INTERFACE IMPORTED GLOBAL)
if(WAFER_HAVE_FFTW_MPI)
  target_link_libraries(wafer_fftw_mpi INTERFACE ${FFTW_MPI_LIBRARY} ${FFTWF_MPI_LIBRARY})
endif()
target_link_libraries(wafer_fftw_mpi INTERFACE wafer_fftw MPI::MPI_C)

# ---- BLAS (with CBLAS) and LAPACKE -----------------------------------------------
# FindBLAS/FindLAPACK honour BLA_VENDOR (OpenBLAS, Intel10_64lp_seq, ...) and
# CMAKE_PREFIX_PATH. The headers: cblas.h / lapacke.h, or MKL's mkl_*.h.
find_package(BLAS QUIET)
if(NOT BLAS_FOUND)
  wafer_missing("BLAS (OpenBLAS, MKL, LibSci, ...)"
                "-DBLA_VENDOR=<vendor> and CMAKE_PREFIX_PATH=<its prefix>")
endif()
find_package(LAPACK QUIET)
if(NOT LAPACK_FOUND)
  wafer_missing("LAPACK" "-DBLA_VENDOR=<vendor> and CMAKE_PREFIX_PATH=<its prefix>")
endif()
set(_blas_hints "")
foreach(lib IN LISTS BLAS_LIBRARIES)
  if(IS_ABSOLUTE "${lib}")
    get_filename_component(dir ${lib} DIRECTORY)
    list(APPEND _blas_hints ${dir}/.. ${dir}/../..)
  endif()
endforeach()
# (Cray's compiler wrapper links LibSci itself: FindBLAS accepts that, and
# its headers are under CRAY_LIBSCI_PREFIX_DIR.)
list(APPEND _blas_hints $ENV{MKLROOT} $ENV{CRAY_LIBSCI_PREFIX_DIR})
find_path(CBLAS_INCLUDE_DIR NAMES cblas.h mkl_cblas.h HINTS ${_blas_hints}
          PATH_SUFFIXES include include/openblas include/x86_64-linux-gnu/openblas-pthread)
find_path(LAPACKE_INCLUDE_DIR NAMES lapacke.h mkl_lapacke.h HINTS ${_blas_hints}
          PATH_SUFFIXES include include/openblas)
if(NOT CBLAS_INCLUDE_DIR)
  wafer_missing("the CBLAS header (cblas.h) of your BLAS" "-DCBLAS_INCLUDE_DIR=<dir>")
endif()
if(NOT LAPACKE_INCLUDE_DIR)
  wafer_missing("the LAPACKE header (lapacke.h)" "-DLAPACKE_INCLUDE_DIR=<dir>")
endif()
if(EXISTS ${CBLAS_INCLUDE_DIR}/cblas.h)
  set(WAFER_CBLAS_HEADER "<cblas.h>")
else()
  set(WAFER_CBLAS_HEADER "<mkl_cblas.h>")
endif()
if(EXISTS ${LAPACKE_INCLUDE_DIR}/lapacke.h)
  set(WAFER_LAPACKE_HEADER "<lapacke.h>")
else()
  set(WAFER_LAPACKE_HEADER "<mkl_lapacke.h>")
endif()
add_library(wafer_blas INTERFACE IMPORTED GLOBAL)
target_include_directories(wafer_blas INTERFACE ${CBLAS_INCLUDE_DIR})
target_link_libraries(wafer_blas INTERFACE ${BLAS_LIBRARIES})
# CBLAS and LAPACKE may live in the BLAS/LAPACK libraries (OpenBLAS, MKL) or
# beside them (Netlib's libcblas, liblapacke).
unset(WAFER_BLAS_HAS_CBLAS CACHE)
unset(WAFER_LAPACK_HAS_LAPACKE CACHE)
cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_LIBRARIES ${BLAS_LIBRARIES})
check_c_source_compiles("void cblas_sgemm(void); int main(void) { cblas_sgemm(); return 0; }"
                        WAFER_BLAS_HAS_CBLAS)
set(CMAKE_REQUIRED_LIBRARIES ${LAPACK_LIBRARIES} ${BLAS_LIBRARIES})
check_c_source_compiles("void LAPACKE_cgesdd(void); int main(void) { LAPACKE_cgesdd(); return 0; }"
                        WAFER_LAPACK_HAS_LAPACKE)
cmake_pop_check_state()
if(NOT WAFER_BLAS_HAS_CBLAS)
  find_library(CBLAS_LIBRARY cblas HINTS ${_blas_hints} PATH_SUFFIXES lib lib64)
  if(NOT CBLAS_LIBRARY)
    wafer_missing("CBLAS (cblas_sgemm: not in ${BLAS_LIBRARIES})" "-DCBLAS_LIBRARY=<libcblas>")
  endif()
  target_link_libraries(wafer_blas INTERFACE ${CBLAS_LIBRARY})
endif()
add_library(wafer_lapacke INTERFACE IMPORTED GLOBAL)
target_include_directories(wafer_lapacke INTERFACE ${LAPACKE_INCLUDE_DIR})
if(NOT WAFER_LAPACK_HAS_LAPACKE)
  find_library(LAPACKE_LIBRARY lapacke HINTS ${_blas_hints} PATH_SUFFIXES lib lib64)
  if(NOT LAPACKE_LIBRARY)
    wafer_missing("LAPACKE (LAPACKE_cgesdd: not in ${LAPACK_LIBRARIES})"
                  "-DLAPACKE_LIBRARY=<liblapacke>")
  endif()
  target_link_libraries(wafer_lapacke INTERFACE ${LAPACKE_LIBRARY})
endif()
target_link_libraries(wafer_lapacke INTERFACE ${LAPACK_LIBRARIES} wafer_blas)
message(STATUS "wafer: BLAS: ${BLAS_LIBRARIES}")

# ---- inih, zlib ---------------------------------------------------------------------
set(_inih_hints ${INIH_ROOT} $ENV{INIH_ROOT})
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_INIH QUIET inih)
  list(APPEND _inih_hints ${PC_INIH_PREFIX})
endif()
find_path(INIH_INCLUDE_DIR ini.h HINTS ${_inih_hints} PATH_SUFFIXES include)
find_library(INIH_LIBRARY inih HINTS ${_inih_hints} PATH_SUFFIXES lib lib64)
if(NOT INIH_INCLUDE_DIR OR NOT INIH_LIBRARY)
  wafer_missing("inih, the INI parser (ini.h, libinih; Spack: inih)" "-DINIH_ROOT=<prefix>")
endif()
add_library(wafer_inih INTERFACE IMPORTED GLOBAL)
target_include_directories(wafer_inih INTERFACE ${INIH_INCLUDE_DIR})
target_link_libraries(wafer_inih INTERFACE ${INIH_LIBRARY})

# GMP: the wide multiplication's reference (mpz_mul), optional. A plain C
# library with no MPI in it, so the simulated build has it too.
wafer_option(GMP "GMP, the wide multiplication's reference")
set(_gmp_hints ${GMP_ROOT} $ENV{GMP_ROOT})
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_GMP QUIET gmp)
  list(APPEND _gmp_hints ${PC_GMP_PREFIX})
endif()
find_path(GMP_INCLUDE_DIR gmp.h HINTS ${_gmp_hints} ${PC_GMP_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(GMP_LIBRARY gmp HINTS ${_gmp_hints} ${PC_GMP_LIBRARY_DIRS} PATH_SUFFIXES lib lib64)
if(GMP_INCLUDE_DIR AND GMP_LIBRARY)
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
wafer_optional(GMP ${_found} "GMP (gmp.h, libgmp) was not found" "point GMP_ROOT at its prefix")
add_library(wafer_gmp INTERFACE IMPORTED GLOBAL)
if(WAFER_HAVE_GMP)
  target_include_directories(wafer_gmp INTERFACE ${GMP_INCLUDE_DIR})
  target_link_libraries(wafer_gmp INTERFACE ${GMP_LIBRARY})
endif()

find_package(ZLIB QUIET)
if(NOT ZLIB_FOUND)
  wafer_missing("zlib" "-DZLIB_ROOT=<prefix>")
endif()
find_library(MATH_LIB m REQUIRED)

# ---- PETSc (optional) -----------------------------------------------------------------
# PETSC_DIR/PETSC_ARCH (variables or environment, as PETSc's own docs say),
# else pkg-config's PETSc/petsc. It must have been built with this MPI:
# petscsys.h refuses another MPI's mpi.h, and its library must need ours.
wafer_option(PETSC "PETSc, the stencil and convection cross-checks")
if(NOT PETSC_DIR AND DEFINED ENV{PETSC_DIR})
  set(PETSC_DIR $ENV{PETSC_DIR})
endif()
if(NOT PETSC_ARCH AND DEFINED ENV{PETSC_ARCH})
  set(PETSC_ARCH $ENV{PETSC_ARCH})
endif()
set(_why "")
if(NOT WAFER_WITH_PETSC STREQUAL "OFF")
  # PETSC_DIR, when given, must hold a PETSc: a wrong one is not replaced
  # by whatever pkg-config finds elsewhere.
  if(PETSC_DIR AND NOT EXISTS ${PETSC_DIR}/${PETSC_ARCH}/include/petscversion.h
     AND NOT EXISTS ${PETSC_DIR}/include/petscversion.h)
    set(_why "PETSC_DIR=${PETSC_DIR} (PETSC_ARCH=${PETSC_ARCH}) holds no PETSc (include/petscversion.h)")
  endif()
  if(PETSC_DIR AND PKG_CONFIG_FOUND)
    set(ENV{PKG_CONFIG_PATH}
        "${PETSC_DIR}/${PETSC_ARCH}/lib/pkgconfig:${PETSC_DIR}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
  endif()
  if(PKG_CONFIG_FOUND AND NOT _why)
    unset(__pkg_config_checked_PETSC CACHE) # PETSC_DIR may have changed
    pkg_search_module(PETSC QUIET IMPORTED_TARGET GLOBAL PETSc petsc)
  endif()
  if(_why)
  elseif(NOT PETSC_FOUND)
    set(_why "PETSc was not found")
  else()
    wafer_mpi_mismatch(_petsc_mpi ${PETSC_LINK_LIBRARIES})
    unset(WAFER_PETSC_COMPILES CACHE)
    cmake_push_check_state(RESET)
    set(CMAKE_REQUIRED_LIBRARIES PkgConfig::PETSC MPI::MPI_C)
    set(CMAKE_REQUIRED_QUIET ON)
    check_c_source_compiles("#include <mpi.h>
#include <petscksp.h>
int main(void) { KSP k; return (int)KSPCreate(PETSC_COMM_WORLD, &k); }" WAFER_PETSC_COMPILES)
    cmake_pop_check_state()
    if(_petsc_mpi)
      set(_why "the PETSc found was built with another MPI: it needs ${_petsc_mpi}")
    elseif(NOT WAFER_PETSC_COMPILES)
      set(_why "the PETSc found (${PETSC_PREFIX}) does not compile with this MPI")
    endif()
  endif()
endif()
if(_why STREQUAL "" AND NOT WAFER_WITH_PETSC STREQUAL "OFF")
  set(_found TRUE)
else()
  set(_found FALSE)
endif()
wafer_optional(PETSC ${_found} "${_why}" "set PETSC_DIR and PETSC_ARCH to a PETSc built with this MPI")
add_library(wafer_petsc INTERFACE IMPORTED GLOBAL)
if(WAFER_HAVE_PETSC)
  target_link_libraries(wafer_petsc INTERFACE PkgConfig::PETSC)
endif()

# ---- CUnit (the unit tests only) -----------------------------------------------------
if(BUILD_TESTING)
  set(_cunit_hints ${CUNIT_ROOT} $ENV{CUNIT_ROOT})
  find_path(CUNIT_INCLUDE_DIR CUnit/CUnit.h HINTS ${_cunit_hints} PATH_SUFFIXES include)
  find_library(CUNIT_LIBRARY cunit HINTS ${_cunit_hints} PATH_SUFFIXES lib lib64)
  if(CUNIT_INCLUDE_DIR AND CUNIT_LIBRARY)
    add_library(wafer_cunit INTERFACE IMPORTED GLOBAL)
    target_include_directories(wafer_cunit INTERFACE ${CUNIT_INCLUDE_DIR})
    target_link_libraries(wafer_cunit INTERFACE ${CUNIT_LIBRARY})
    set(WAFER_HAVE_CUNIT 1)
    message(STATUS "wafer: CUnit: yes (unit tests built)")
  else()
    set(WAFER_HAVE_CUNIT 0)
    message(STATUS "wafer: CUnit: no (the unit tests are not built; -DCUNIT_ROOT=<prefix>)")
  endif()
endif()

# ---- one MPI in the whole link -----------------------------------------------------
# Every library chosen above linked together into a probe, and the MPI
# libraries it loads listed (ldd follows the dependencies' own NEEDED): two
# MPIs in one process crash at the first collective, so they are refused
# here, not found by a user's job.
find_program(WAFER_LDD ldd)
if(WAFER_LDD AND CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT WAFER_SIMULATE)
  set(_all MPI::MPI_C wafer_hdf5 wafer_fftw_mpi wafer_petsc wafer_lapacke wafer_inih)
  try_compile(_all_linked ${_probe}/all SOURCES ${_probe}/probe.c LINK_LIBRARIES ${_all}
              LINK_OPTIONS -Wl,--no-as-needed COPY_FILE ${_probe}/probe_all
              OUTPUT_VARIABLE _probe_log)
  if(NOT _all_linked)
    message(FATAL_ERROR "MPI, HDF5, FFTW, PETSc and BLAS as found do not link together:\n"
      "${_probe_log}")
  endif()
  execute_process(COMMAND ${WAFER_LDD} ${_probe}/probe_all OUTPUT_VARIABLE _loads ERROR_QUIET)
  string(REGEX MATCHALL "(libmpi|libmpich|libmpi_cray)\\.so[.0-9]*" _mpis "${_loads}")
  list(REMOVE_DUPLICATES _mpis)
  set(_others ${_mpis})
  if(WAFER_MPI_SONAMES)
    list(REMOVE_ITEM _others ${WAFER_MPI_SONAMES})
  else() # our own not learned: two distinct MPIs are still two (MPICH's two names are one)
    list(REMOVE_ITEM _others libmpi.so.12)
    list(LENGTH _others _count)
    if(_count LESS 2)
      set(_others "")
    endif()
  endif()
  if(_others)
    message(FATAL_ERROR "wafer would load two MPI libraries: ${_mpis} (it links "
      "${WAFER_MPI_SONAMES}).\n  A dependency was built with another MPI; `ldd` on "
      "${_probe}/probe_all shows which. Point CMake at the one built with this MPI, or leave "
      "the optional reference out (-DWAFER_WITH_PETSC=OFF, -DWAFER_WITH_FFTW_MPI=OFF).")
  endif()
  message(STATUS "wafer: MPI libraries loaded: ${_mpis} (one MPI)")
endif()
