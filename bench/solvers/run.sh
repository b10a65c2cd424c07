#!/usr/bin/env bash
# wafer's fused matrix-free CG against PETSc (AIJ, KSPCG, no preconditioner) on
# the 7-point Laplacian, side by side in the same run (the built-in
# cross-check), at 128^3 and 256^3 on 1 and 2 ranks, plus a STREAM triad; medians
# of REPEATS runs. Each run does a fixed ITERS iterations (rtol 0): time per
# iteration is what is compared. Writes bench/solvers/results.md.
#   bench/solvers/run.sh                 (after `make build`; about 15 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-3}
ITERS=${ITERS:-50}
SIZES=${SIZES:-"128 256"}
RANKS=${RANKS:-"1 2"}
out=bench/solvers/out
mkdir -p "$out"
mpicc -O3 -march=native -o "$out/triad" bench/solvers/triad.c

: > "$out/rows.txt"
for n in $SIZES; do
  for r in $RANKS; do
    ours=() theirs=() triad=() ratio=() frac=()
    for rep in $(seq "$REPEATS"); do
      # Exit status 1 is expected: a fixed iteration count ends "diverged_max_its".
      mpiexec -n "$r" "$WAFER" stencil --quiet --set wafer.pe_grid=64x64 \
          --set stencil.nx=$n --set stencil.ny=$n --set stencil.nz=$n \
          --set stencil.rtol=0 --set stencil.max_iterations=$ITERS --set stencil.stream=false \
          --set stencil.crosscheck=petsc --json "$out/s.json" > /dev/null 2>&1 || true
      o=$(field "$out/s.json" "j['stencil']['seconds_per_iteration']")
      t=$(field "$out/s.json" "j['petsc']['seconds_per_iteration']")
      tr=$(mpiexec -n "$r" "$out/triad" 512)
      b=$(field "$out/s.json" "j['stencil']['bytes_per_cell_iteration']")
      ours+=("$o") theirs+=("$t") triad+=("$tr")
      # Paired figures: the machine's speed drifts between runs, so each ratio
      # uses measurements taken moments apart (PETSc in the same process).
      ratio+=("$($py -c "print($o / $t)")")
      frac+=("$($py -c "print($b * $n**3 / $o / 1e9 / $tr)")")
    done
    mo=$(printf '%s\n' "${ours[@]}" | median)
    mt=$(printf '%s\n' "${theirs[@]}" | median)
    mtr=$(printf '%s\n' "${triad[@]}" | median)
    mratio=$(printf '%s\n' "${ratio[@]}" | median)
    mfrac=$(printf '%s\n' "${frac[@]}" | median)
    bytes=$(field "$out/s.json" "j['stencil']['bytes_per_cell_iteration']")
    model=$(field "$out/s.json" "j['model']['wafer_seconds_per_iteration'][0]")
    echo "$n $r $mo $mt $mtr $bytes $model $mratio $mfrac" >> "$out/rows.txt"
    echo "${n}^3 on $r rank(s): wafer $mo s/it, PETSc $mt s/it, triad $mtr GB/s"
  done
done

$py - "$out/rows.txt" "$REPEATS" "$ITERS" <<'PY'
import sys, datetime, platform, subprocess, os
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
reps, iters = sys.argv[2], sys.argv[3]
cpu = os.environ["MACHINE"]  # bench/lib.sh: the CPU, its family and model, its vector ISA, cores
blas = os.environ.get("OPENBLAS_CORETYPE", "unset")
L = ["# Stencil solver benchmark: wafer CG vs PETSc", "",
     f"Command: `bench/solvers/run.sh` (medians of {reps} runs, {iters} CG iterations each)  ",
     f"Machine: {cpu}, {platform.platform()}  ",
     f"Date: {datetime.date.today().isoformat()}", "",
     "7-point Laplacian, Dirichlet, right-hand side of ones, no preconditioner. *wafer*: the",
     "fused matrix-free CG (two sweeps, 64 bytes per cell and iteration). *PETSc*: 3.18 AIJ",
     "matrix, KSPCG, PCNONE, in the same run on the same system (built-in cross-check).",
     "*Triad*: STREAM triad on all ranks at once (`bench/solvers/triad.c`, 24 B/element).",
     "GB/s counts the bytes the fused kernels must move; the target is ratio <= 0.35 and",
     ">= 80% of triad at 256^3. The ratio and the fraction of triad are medians of per-run",
     "pairs (PETSc runs in the same process; the triad right after), since this shared",
     "machine's speed drifts by 20-30% between runs; the times are medians on their own.", "",
     "| mesh | ranks | wafer ms/it | PETSc ms/it | ratio wafer/PETSc | wafer GB/s | triad GB/s | % of triad | wafer model us/it (fast end) |",
     "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for n, r, mo, mt, tr, b, model, ratio, frac in rows:
    n, mo, mt, tr, b, model = int(n), float(mo), float(mt), float(tr), float(b), float(model)
    gbs = b * n**3 / mo / 1e9
    L.append(f"| {n}^3 | {r} | {mo*1e3:.2f} | {mt*1e3:.2f} | {float(ratio):.2f} | {gbs:.1f} | {tr:.1f} | {100*float(frac):.0f}% | {model*1e6:.1f} |")
open("bench/solvers/results.md", "w").write("\n".join(L) + "\n")
PY
cat bench/solvers/results.md
