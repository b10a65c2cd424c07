# Shared by the end-to-end test scripts: source it after setting case_name,
# ranks and wafer. It runs the case in a fresh temporary directory and counts
# checks; finish() prints "NAME (N ranks): N passed, N failed" and sets the
# exit status.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# A run that exits non-zero (every bad input) makes Open MPI's mpiexec wait
# its SIGTERM-to-SIGKILL grace (1 s, twice) before it returns: 2.5 s a case
# instead of 0.45. wafer's ranks end together (their status agreed), so no
# case here needs the grace; the signal tests (faults.sh), which do, keep it.
export OMPI_MCA_odls_base_sigkill_timeout=0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
inputs=$(cd "$here/../../inputs" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/wafer-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
# The optional references this build has, 0 or 1 (ctest sets them).
have_petsc=${WAFER_HAVE_PETSC:-1} have_fftw_mpi=${WAFER_HAVE_FFTW_MPI:-1} have_gmp=${WAFER_HAVE_GMP:-1}
passed=0 failed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else fail "$2"; fi; }
# no_temporary NAME: no temporary of the output NAME (wf_temp_create's NAME.part.XXXXXX) is left.
no_temporary() { ! compgen -G "$1.part.*" > /dev/null; }
# json FILE EXPR: a Python expression over the parsed JSON `j` (json, math imported).
json() { /usr/bin/python3 -c "import json,sys,math; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# Datasets of two HDF5 files alike in shape and value (h5same.py; h5diff
# passes datasets of different shapes): h5same [--rtol R] A B [DATASET...]
h5same() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/h5same.py" "$@"; }
# expect_bad_input WORKLOAD WANT ARGS...: the run exits 2, its message says
# WANT, and no output (final, temporary or sidecar) is left.
expect_bad_input() {
  local workload=$1 want=$2 rc
  shift 2
  mpiexec -n "$ranks" "$wafer" "$workload" "$@" --set output.file=out.h5 > /dev/null 2> err.txt
  rc=$?
  expect "[ $rc -eq 2 ]" "exit status $rc for $*"
  expect "grep -qF -- \"$want\" err.txt" "message lacks '$want': $(cat err.txt)"
  expect "[ ! -e out.h5 ] && no_temporary out.h5 && [ ! -e out.xmf ]" "output written for bad input $*"
}
# small_deck WORKLOAD RANKS: the --set arguments of a small deck that every
# rank count from 1 to 64 can split (an 8x8 rank grid: EAM's blocks stay
# wider than its cutoff, training's batch splits), running no reference
# code. Training above 4 ranks runs wafers of 4 (2x2 tiles, data-parallel
# over the wafers): one wafer of 64 ranks over a 64-channel model is tiles
# of 24 x 8 and took 10 minutes of collectives on 2 cores. scale.sh and
# two_mpis.sh compare such runs with each other (agree.py).
small_workloads="halo stencil eam fft tlrmvm cfd train"
small_deck() {
  case $1 in
  stencil) echo "--set stencil.crosscheck=none" ;;
  eam) echo "--set eam.crosscheck=none --set eam.cells=24x24x4 --set eam.steps=40" ;;
  fft) echo "--set fft.crosscheck=none --set fft.planner=estimate" ;;
  cfd) echo "--set cfd.stream=false" ;;
  train)
    echo "--set train.batch=64 --set train.steps=20 --set train.sgemm=false"
    if [ "${2:-1}" -gt 4 ]; then echo "--set train.wafer_ranks=4"; fi
    ;;
  esac
}
# demo_workloads WAFER: the workloads `wafer demo` runs, as a Python set
# literal: every one `wafer --help` lists but `generate` (it needs a
# checkpoint), so a new workload is expected in the demo without a count to
# update here.
demo_workloads() {
  "$1" --help | awk '/^workloads:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' |
    grep -vx -e demo -e generate | sed "s/.*/'&'/" | paste -sd, | sed 's/^/{/; s/$/}/'
}
finish() {
  echo "$1 ($ranks ranks): $passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
# need_paraview: skip the case (ctest: 77) unless ParaView's pvbatch and
# xvfb-run are installed (scripts/setup installs them).
need_paraview() {
  if ! command -v pvbatch > /dev/null || ! command -v xvfb-run > /dev/null; then
    echo "SKIP: ParaView (pvbatch) or xvfb-run is missing: XDMF is not tested in ParaView; scripts/setup installs them"
    exit 77
  fi
}
# pvbatch_headless ARGS: pvbatch under a virtual X server. xvfb-run now and
# then hands pvbatch a server that is not yet accepting connections (ParaView
# aborts with "bad X server connection"); that start, and only that, is retried.
pvbatch_headless() {
  local try log
  log=$(mktemp "$work/pvbatch.XXXX")
  for try in 1 2 3; do
    xvfb-run -a pvbatch "$@" > "$log" 2>&1 && { cat "$log"; return 0; }
    grep -q "bad X server connection" "$log" || break
  done
  cat "$log"
  return 1
}

# paraview_reads XMF WHAT: ParaView opens XMF headless, loads every field
# exactly as the HDF5 file holds it, and renders each one.
paraview_reads() {
  local dir
  dir=$(mktemp -d "$work/pv.XXXX")
  if ! pvbatch_headless "$here/xdmf_paraview.py" "$1" "$dir" > "$dir/log.txt" 2>&1; then
    fail "$2: pvbatch failed on $1: $(tail -3 "$dir/log.txt")"
  elif /usr/bin/python3 "$here/xdmf_check.py" "$1" "$dir" > "$dir/check.txt" 2>&1; then
    ok
  else
    fail "$2: $(cat "$dir/check.txt")"
  fi
}
