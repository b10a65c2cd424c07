#!/usr/bin/env bash
# Configured as centres do: mpi_wrappers.sh SOURCE_DIR
# The MPI compiler wrapper as the compiler (CC=mpicc, as Cray's cc always
# is), and the MPI_C_COMPILER form, for each MPI installed here (Open MPI,
# MPICH). Each configure must learn the MPI library it links, leave out an
# optional reference built with the other MPI (reported unavailable), and
# find one MPI in the whole link (its probe of every library chosen). Where
# only one MPI is installed, only its forms run. Prints "mpi wrappers: N
# passed, N failed".
set -uo pipefail
case_name=mpi_wrappers ranks=1 source_dir=$1 wafer=unused
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

# configure NAME ENV... -- CMAKE_ARGS...: configure into NAME, log in NAME.log.
configure() {
  local name=$1
  shift
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" cmake -S "$source_dir" -B "$name" "$@" > "$name.log" 2>&1
}
# check NAME SONAME REFERENCES: the configure of NAME passed, learned SONAME,
# loads one MPI, and has the optional references (yes|no) as given.
check() {
  local name=$1 soname=$2 refs=$3
  expect "grep -q 'wafer: MPI library: $soname' $name.log" "$name: the MPI library it links ($soname) not learned: $(grep 'wafer: MPI\|Error' $name.log)"
  expect "grep -q 'wafer: MPI libraries loaded: .*(one MPI)' $name.log" "$name: not one MPI in the link: $(grep -A3 'two MPI' $name.log)"
  expect "grep -q 'wafer: FFTW_MPI: $refs' $name.log && grep -q 'wafer: PETSC: $refs' $name.log" \
         "$name: FFTW-MPI and PETSc should be '$refs': $(grep 'wafer: \(FFTW_MPI\|PETSC\)' $name.log)"
}

hdf5_mpich=(-DHDF5_ROOT=/usr/lib/x86_64-linux-gnu/hdf5/mpich -DHDF5_C_COMPILER_EXECUTABLE=/usr/bin/h5pcc.mpich -DHDF5_PREFER_PARALLEL=ON)
tried=0
if command -v mpicc.mpich > /dev/null; then
  # Debian builds FFTW-MPI and PETSc with Open MPI: an MPICH build leaves both out.
  configure mpich_cc CC=mpicc.mpich -- -DMPI_C_COMPILER=mpicc.mpich "${hdf5_mpich[@]}"
  check mpich_cc libmpich.so.12 no
  configure mpich_cc_only CC=mpicc.mpich -- "${hdf5_mpich[@]}"
  check mpich_cc_only libmpich.so.12 no
  configure mpich_wrapper -- -DMPI_C_COMPILER=mpicc.mpich "${hdf5_mpich[@]}"
  check mpich_wrapper libmpich.so.12 no
  tried=1
fi
if command -v mpicc.openmpi > /dev/null; then
  configure openmpi_cc CC=mpicc.openmpi --
  check openmpi_cc libmpi.so.40 yes
  configure openmpi_wrapper -- -DMPI_C_COMPILER=mpicc.openmpi
  check openmpi_wrapper libmpi.so.40 yes
  tried=1
fi
[ $tried = 1 ] || { echo "mpi wrappers: neither mpicc.mpich nor mpicc.openmpi here (Debian's names)"; exit 77; }
finish "mpi wrappers"
