#!/usr/bin/env bash
# wafer's pencil FFT against FFTW-MPI (3.3.10, FFTW_MEASURE, in place, both
# output layouts), side by side in the same run (the built-in cross-check),
# complex double 128^3 and 256^3 on 1 and 2 ranks, plus a STREAM triad for
# the transposes' bandwidth; medians of REPEATS runs of 5 transforms each.
# Writes bench/fft/results.md.
#   bench/fft/run.sh                 (after `make build`; about 5 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-3}
SIZES=${SIZES:-"128 256"}
RANKS=${RANKS:-"1 2"}
out=bench/fft/out
mkdir -p "$out"
mpicc -O3 -march=native -o "$out/triad" bench/solvers/triad.c

: > "$out/rows.txt"
for n in $SIZES; do
  for r in $RANKS; do
    ours=() normal=() transposed=() ratio=() frac=() triad=()
    for rep in $(seq "$REPEATS"); do
      # One z-pencil per PE, as ICS23 lays the cube out; rank grid 1 x r (the
      # FFT's default). Wisdom is shared by wafer's plans and FFTW-MPI's.
      mpiexec -n "$r" "$WAFER" fft --quiet --set wafer.pe_grid=${n}x${n} \
          --set fft.nx=$n --set fft.ny=$n --set fft.nz=$n --set fft.field=random \
          --set fft.repeat=5 --set fft.stream=false --set fft.wisdom="$out/wisdom.txt" \
          --json "$out/f.json" > /dev/null
      o=$(field "$out/f.json" "j['fft']['forward_seconds']")
      tn=$(field "$out/f.json" "j['fftw_mpi']['forward_seconds']")
      tt=$(field "$out/f.json" "j['fftw_mpi']['transposed_forward_seconds']")
      tr=$(mpiexec -n "$r" "$out/triad" 512)
      g=$(field "$out/f.json" "j['fft']['transpose_GBps']")
      ours+=("$o") normal+=("$tn") transposed+=("$tt") triad+=("$tr")
      # Paired: against the faster of FFTW-MPI's layouts in the same process.
      ratio+=("$($py -c "print($o / min($tn, $tt))")")
      frac+=("$($py -c "print($g / $tr)")")
    done
    m() { printf '%s\n' "$@" | median; }
    echo "$n $r $(m "${ours[@]}") $(m "${normal[@]}") $(m "${transposed[@]}") $(m "${ratio[@]}") $(m "${frac[@]}") $(m "${triad[@]}") $(field "$out/f.json" "j['model']['seconds_per_unit'][0]")" >> "$out/rows.txt"
    echo "${n}^3 on $r rank(s): wafer $(m "${ours[@]}") s, FFTW-MPI $(m "${normal[@]}") / $(m "${transposed[@]}") s"
  done
done

$py - "$out/rows.txt" "$REPEATS" <<'PY'
import sys, datetime, os, platform, subprocess
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
cpu = os.environ["MACHINE"]  # bench/lib.sh: the CPU, its family and model, its vector ISA, cores
L = ["# FFT benchmark: wafer's pencil FFT vs FFTW-MPI", "",
     f"Command: `bench/fft/run.sh` (medians of {sys.argv[2]} runs of 5 forward transforms each)  ",
     f"Machine: {cpu}, {platform.platform()}  ",
     f"Date: {datetime.date.today().isoformat()}", "",
     "Complex double, n^3 on n x n PEs (one z-pencil a PE, as ICS23), random data, FFTW_MEASURE",
     "with shared wisdom, in place. *FFTW-MPI*: `fftw_mpi_plan_dft_3d` on the same data in the",
     "same run, normal and transposed (FFTW_MPI_TRANSPOSED_OUT) output. The ratio is against",
     "the faster of the two, paired per run (the machine's speed drifts between runs).",
     "*Transposes*: bytes the all-to-alls read and write over their time, against STREAM triad",
     "(`bench/solvers/triad.c`) on the same ranks; on one rank nothing moves. Target: ratio <= 1.0",
     "in every row.", "",
     "| size | ranks | wafer ms | FFTW-MPI ms (normal) | FFTW-MPI ms (transposed) | ratio wafer/FFTW-MPI | transposes % of triad | triad GB/s | wafer model us (fast end) |",
     "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for n, r, o, tn, tt, ratio, frac, tr, model in rows:
    moved = int(r) > 1
    L.append(f"| {n}^3 | {r} | {float(o)*1e3:.1f} | {float(tn)*1e3:.1f} | {float(tt)*1e3:.1f} | "
             f"{float(ratio):.2f} | {f'{100*float(frac):.0f}%' if moved else '-'} | {float(tr):.1f} | {float(model)*1e6:.1f} |")
open("bench/fft/results.md", "w").write("\n".join(L) + "\n")
PY
cat bench/fft/results.md
