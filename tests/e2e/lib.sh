# Shared by the end-to-end test scripts: source it after setting case_name,
# ranks and wafer. It runs the case in a fresh temporary directory and counts
# checks; finish() prints "NAME (N ranks): N passed, N failed" and sets the
# exit status.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
inputs=$(cd "$here/../../inputs" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/wafer-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
passed=0 failed=0
ok()   { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
expect() { if eval "$1"; then ok; else fail "$2"; fi; }
# json FILE EXPR: a Python expression over the parsed JSON `j` (json, math imported).
json() { /usr/bin/python3 -c "import json,sys,math; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# expect_bad_input WORKLOAD WANT ARGS...: the run exits 2, its message says
# WANT, and no output (final, temporary or sidecar) is left.
expect_bad_input() {
  local workload=$1 want=$2 rc
  shift 2
  mpiexec -n "$ranks" "$wafer" "$workload" "$@" --set output.file=out.h5 > /dev/null 2> err.txt
  rc=$?
  expect "[ $rc -eq 2 ]" "exit status $rc for $*"
  expect "grep -qF -- \"$want\" err.txt" "message lacks '$want': $(cat err.txt)"
  expect "[ ! -e out.h5 ] && [ ! -e out.h5.part ] && [ ! -e out.xmf ]" "output written for bad input $*"
}
finish() {
  echo "$1 ($ranks ranks): $passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
