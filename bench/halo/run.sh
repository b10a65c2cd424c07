#!/usr/bin/env bash
# Halo bandwidth vs message size, intra-rank (1 rank) vs inter-rank (2 ranks),
# against a plain MPI_Sendrecv of the same bytes (the reference), median of
# REPEATS runs. Writes bench/halo/results.md and bench/halo/halo.png.
#   bench/halo/run.sh            (after `make build`; about two minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-5}
GRID=${GRID:-256x256}
out=bench/halo/out
mkdir -p "$out"
mpicc -O2 -o "$out/sendrecv_ref" bench/halo/sendrecv_ref.c

rows=()
for bytes in 8 64 512 4096; do
  iters=$(( bytes >= 4096 ? 20 : bytes >= 512 ? 50 : 200 ))
  t1=() t2=() tr=()
  for r in $(seq "$REPEATS"); do
    mpiexec -n 1 "$WAFER" halo --quiet --set wafer.pe_grid="$GRID" --set halo.elem_bytes=$bytes \
        --set halo.iterations=$iters --set halo.verify=false --json "$out/h1.json" > /dev/null
    t1+=("$(field "$out/h1.json" "j['halo']['seconds_per_exchange']")")
    mpiexec -n 2 "$WAFER" halo --quiet --set wafer.pe_grid="$GRID" --set halo.elem_bytes=$bytes \
        --set halo.iterations=$iters --set halo.verify=false --json "$out/h2.json" > /dev/null
    t2+=("$(field "$out/h2.json" "j['halo']['seconds_per_exchange']")")
    inter=$(field "$out/h2.json" "int(j['halo']['inter_rank_bytes_per_exchange'])")
    tr+=("$(mpiexec -n 2 "$out/sendrecv_ref" $((inter / 2)) $iters)")
  done
  m1=$(printf '%s\n' "${t1[@]}" | median)
  m2=$(printf '%s\n' "${t2[@]}" | median)
  mr=$(printf '%s\n' "${tr[@]}" | median)
  model=$(field "$out/h2.json" "j['model']['wafer_seconds_per_exchange'][0]")
  rows+=("$bytes $m1 $m2 $mr $inter $model")
  echo "elem $bytes B: 1 rank $m1 s, 2 ranks $m2 s, sendrecv ref $mr s ($inter B between ranks)"
done

printf '%s\n' "${rows[@]}" > "$out/rows.txt"
$py - "$out/rows.txt" "$GRID" "$REPEATS" <<'PY'
import sys, datetime, os, platform, subprocess
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
grid, reps = sys.argv[2], sys.argv[3]
cpu = os.environ["MACHINE"]  # bench/lib.sh: the CPU, its family and model, its vector ISA, cores
lines = [
  "# Halo exchange benchmark", "",
  f"Command: `bench/halo/run.sh` (GRID={grid}, medians of {reps} runs, verification off)  ",
  f"Machine: {cpu}, "
  f"Open MPI shared memory, {platform.platform()}  ",
  f"Date: {datetime.date.today().isoformat()}", "",
  "Each PE holds one element; width 1, corners, periodic. *1 rank*: every PE boundary is",
  "inside the rank (only the periodic wrap is copied). *2 ranks*: a 2x1 rank grid; the",
  "reference is one `MPI_Sendrecv` of the same bytes between the two ranks (no packing,",
  "one message instead of six). Ratio = wafer / reference (lower is better; 1 = at the limit",
  "of the MPI library and the machine).", "",
  "| element B | 1 rank us/exch | 2 ranks us/exch | bytes between ranks | sendrecv ref us | ratio | GB/s between ranks | wafer model us/exch (fast end) |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
]
for b, t1, t2, tr, inter, model in rows:
  lines.append(f"| {int(b)} | {t1*1e6:.2f} | {t2*1e6:.2f} | {int(inter)} | {tr*1e6:.2f} | {t2/tr:.2f} | {inter/t2/1e9:.2f} | {model*1e6:.4f} |")
lines += ["",
  "What limits it: the 2-rank exchange sends six messages (E, W and four corners) whose faces",
  "are strided in memory; Open MPI's shared-memory transport copies derived datatypes through",
  "its own buffers (two copies), while the contiguous reference goes in one copy (CMA). The",
  "periodic N/S wraps stay inside each rank and are plain copies. Small elements are latency",
  "bound (six messages instead of one).", "",
  "![halo exchange time vs element size](halo.png)"]
open("bench/halo/results.md", "w").write("\n".join(lines) + "\n")
try:
  import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
  b = [r[0] for r in rows]
  fig, ax = plt.subplots(figsize=(6, 4))
  ax.loglog(b, [r[1]*1e6 for r in rows], "o-", label="wafer, 1 rank (intra)")
  ax.loglog(b, [r[2]*1e6 for r in rows], "s-", label="wafer, 2 ranks (inter)")
  ax.loglog(b, [r[3]*1e6 for r in rows], "^--", label="MPI_Sendrecv reference")
  ax.loglog(b, [r[5]*1e6 for r in rows], "d:", label="wafer model (WSE-2)")
  ax.set_xlabel("bytes per PE"); ax.set_ylabel("us per exchange"); ax.set_title(f"halo exchange, {grid} PEs")
  ax.grid(True, which="both", alpha=0.3); ax.legend(fontsize=8); fig.tight_layout()
  fig.savefig("bench/halo/halo.png", dpi=100)
except ImportError:
  print("matplotlib missing: no plot")
PY
cat bench/halo/results.md
