#!/usr/bin/env bash
# The SDK example kernels against plain serial codes (bench/sdk/reference.c),
# side by side in one loop, medians of REPEATS runs on 1 rank; with the
# fraction of the machine's limit: for Mandelbrot (compute, no memory
# traffic) its 10 double-precision operations an iteration against OpenBLAS
# DGEMM's rate on one core; for life the bytes of its cells a second (a
# read and a write a cell), which stay in cache. Writes
# bench/sdk/results.md.
#   bench/sdk/run.sh            (after `make build`; about a minute)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-5}
out=bench/sdk/out
mkdir -p "$out"
cc -O2 -std=c17 -o "$out/reference" bench/sdk/reference.c -lm
read -ra blas <<< "$(pkg-config --cflags --libs openblas)"
mpicc -O2 -o "$out/dgemm" bench/eam/dgemm.c "${blas[@]}"
dgemm=$(OPENBLAS_NUM_THREADS=1 mpiexec -n 1 "$out/dgemm" 1000)

W=1280 H=960 IT=256 MB_REP=3
CELLS=16x16 GRID=64x64 GENS=400 # a 1024 x 1024 board
mo=() mr=() mf=() lo=() lr=()
for r in $(seq "$REPEATS"); do
  mpiexec -n 1 "$WAFER" mandelbrot --quiet --set mandelbrot.width=$W --set mandelbrot.height=$H \
      --set mandelbrot.max_iters=$IT --set mandelbrot.repeat=$MB_REP --set mandelbrot.check=false \
      --json "$out/m.json" > /dev/null
  t=$(field "$out/m.json" "j['mandelbrot']['seconds_per_image']")
  mo+=("$t")
  mr+=("$("$out/reference" mandelbrot $W $H $IT $MB_REP 2> /dev/null)")
  mf+=("$(field "$out/m.json" "10 * j['mandelbrot']['iterations'] / $t / ($dgemm * 1e9)")")
  mpiexec -n 1 "$WAFER" life --quiet --set wafer.pe_grid=$GRID --set life.cells_per_pe=$CELLS \
      --set life.generations=$GENS --set life.check=false --json "$out/l.json" > /dev/null
  t=$(field "$out/l.json" "j['life']['seconds_per_generation']")
  lo+=("$t")
  lr+=("$("$out/reference" life 1024 1024 $((GENS / 8)) 2> /dev/null)")
done
med() { printf '%s\n' "$@" | median; }
m_o=$(med "${mo[@]}") m_r=$(med "${mr[@]}") m_f=$(med "${mf[@]}")
l_o=$(med "${lo[@]}") l_r=$(med "${lr[@]}")
echo "mandelbrot ${W}x${H}: ours $m_o s, reference $m_r s, $m_f of DGEMM"
echo "life 1024^2: ours $l_o s, reference $l_r s"
$py - "$m_o" "$m_r" "$m_f" "$l_o" "$l_r" "$dgemm" "$REPEATS" <<'PY'
import sys, datetime, os
m_o, m_r, m_f, l_o, l_r, dgemm = map(float, sys.argv[1:7])
reps = sys.argv[7]
cpu = os.environ["MACHINE"]
lines = [
  "# SDK example kernels: benchmark", "",
  f"Command: `bench/sdk/run.sh` (medians of {reps} runs, 1 rank, checks off)  ",
  f"Machine: {cpu}  ",
  f"Date: {datetime.date.today().isoformat()}", "",
  "The reference is a plain serial code (bench/sdk/reference.c: what a user would write,",
  "C's complex type for Mandelbrot, a byte board with wrapped indices for life), built",
  "with `cc -O2`. Ratio = wafer / reference (below 1: wafer is faster).", "",
  "| kernel | case | wafer s | reference s | ratio | fraction of limit |",
  "| --- | --- | --- | --- | --- | --- |",
  f"| mandelbrot | 1280 x 960, 256 iterations at most | {m_o:.4g} /image | {m_r:.4g} /image | {m_o/m_r:.3f} | "
  f"{m_f:.1%} of DGEMM's {dgemm:.1f} GFLOP/s (10 flops an iteration) |",
  f"| life | 1024 x 1024 periodic, random | {l_o:.4g} /generation | {l_r:.4g} /generation | {l_o/l_r:.3f} | "
  f"{2 * 1024 * 1024 / l_o / 1e9:.1f} GB/s of cell bytes (a read and a write a cell) |",
  ""]
open("bench/sdk/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
