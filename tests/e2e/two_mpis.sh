#!/usr/bin/env bash
# The same decks under two MPI libraries agree:
#   two_mpis.sh BUILD_A BUILD_B      (e.g. build build-mpich)
# Each build's wafer runs with its own launcher (BUILD/test-bin/mpiexec) on
# 1 and 2 ranks, every workload's small deck (lib.sh), and the figures that must
# agree (tests/e2e/agree.py) agree between the two. `make test-mpich` runs it
# after the MPICH suite. Prints "two MPIs: N passed, N failed".
set -uo pipefail
case_name=two_mpis ranks=2 wafer=unused
build_a=$(cd "$1" && pwd) build_b=$(cd "$2" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# Each binary loads one MPI library (two crash at the first collective).
for dir in "$build_a" "$build_b"; do
  mpis=$(ldd "$dir/wafer" | grep -Eo 'lib(mpi|mpich|mpi_cray)\.so[.0-9]*' | sort -u | tr '\n' ' ')
  expect "[ \$(echo $mpis | wc -w) -eq 1 ]" "$dir/wafer loads more than one MPI library: $mpis"
done
for w in $small_workloads; do
  for n in 1 "$ranks"; do
    for b in a b; do
      dir=$([ $b = a ] && echo "$build_a" || echo "$build_b")
      # shellcheck disable=SC2086
      timeout 600 "$dir/test-bin/mpiexec" -n "$n" "$dir/wafer" "$w" --quiet $(small_deck $w $n) \
        --json "$w$n$b.json" > /dev/null 2> "$w$n$b.err"
      expect "[ $? -eq 0 ]" "$w on $n ranks ($dir): $(tail -2 "$w$n$b.err")"
    done
    /usr/bin/python3 "$here/agree.py" "$w${n}b.json" "$w${n}a.json" > agree.txt 2>&1
    expect "[ $? -eq 0 ]" "$w on $n ranks: the two MPIs differ: $(cat agree.txt)"
  done
done
finish "two MPIs"
