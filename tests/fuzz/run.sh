#!/usr/bin/env bash
# Fuzz wafer's input readers with libFuzzer (clang, ASan + UBSan):
#   tests/fuzz/run.sh [--seconds S | --runs N] [BUILD_DIR]
# Each harness runs S seconds (default 15: a minute for the four, as CI does)
# or N executions, from the seeds in tests/fuzz/corpus (and, for the deck
# parser, every deck in inputs/), growing a working corpus in
# BUILD_DIR/corpus (default build-fuzz). A crash, a sanitizer report or a
# failed invariant fails the run; the input is kept in BUILD_DIR/crashes.
# Prints one row per harness: executions, executions/s, result.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
limit=(-max_total_time=15)
build=$root/build-fuzz
while (($#)); do
  case $1 in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) build=$(realpath -m "$1"); shift ;;
  esac
done
harnesses=(deck potential data checkpoint)

if ! command -v clang > /dev/null; then
  echo "fuzz: clang is not installed (Debian packages clang libclang-rt-14-dev: run scripts/setup)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DWAFER_FUZZ=ON \
    ${CMAKE_FLAGS:-} > "$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
fi
cmake --build "$build" -j "$(nproc)" --target "${harnesses[@]/#/fuzz_}" > "$build.build.log" 2>&1 ||
  { cat "$build.build.log"; exit 1; }

mkdir -p "$build/crashes"
failed=0
printf "%-11s %12s %10s  %s\n" harness executions "exec/s" result
for h in "${harnesses[@]}"; do
  corpus=$build/corpus/$h
  mkdir -p "$corpus"
  seeds=("$here/corpus/$h")
  [ $h = deck ] && seeds+=("$root/inputs" "$root/inputs/fidelity")
  log=$build/fuzz_$h.log
  set +e
  "$build/tests/fuzz/fuzz_$h" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$h-" "$corpus" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  result="ok (0 crashes, 0 sanitizer reports)"
  if [ $rc -ne 0 ]; then
    failed=1
    result="FAILED: $(grep -m1 -E 'ERROR|runtime error|deadly' "$log" || echo "exit $rc") (log: $log)"
  fi
  printf "%-11s %12s %10s  %s\n" "$h" "${execs:-?}" "${rate:-?}" "$result"
done
exit $failed
