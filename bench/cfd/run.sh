#!/usr/bin/env bash
# `wafer cfd` (the SC22 wave stencil) against this machine's limit: time per
# step, cell updates per second and the fraction of STREAM triad its
# counted bytes reach (24 B a cell update: u^n and u^{n-1} read, u^{n+1}
# written; the neighbours come from cache), at 256^3 on 1 and 2 ranks.
# STREAM triad is measured by the run itself on arrays of its own size.
# Medians of REPEATS runs of STEPS steps. Then Rayleigh-Benard convection
# (3D, RB_N x RB_N x RB_N/2 cells, Ra 10^4) at 1 and 2 ranks with the
# pressure by PCG and by FFT: time a step, cell updates a second, and one
# step's Poisson system solved by ours and by PETSc's KSPCG with Jacobi and
# with GAMG (setup outside the timing), each a median of 3 solves.
# Writes bench/cfd/results.md.
#   bench/cfd/run.sh            (after `make build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-3}
STEPS=${STEPS:-40}
N=${N:-256}
out=bench/cfd/out
mkdir -p "$out"
: > "$out/rows.txt"
for r in 1 2; do
  sec=() mcell=() gbs=() triad=() frac=()
  for rep in $(seq "$REPEATS"); do
    mpiexec -n "$r" "$WAFER" cfd --quiet --set cfd.nx="$N" --set cfd.ny="$N" --set cfd.nz="$N" \
        --set cfd.steps="$STEPS" --json "$out/w.json" > "$out/w.txt"
    [ "$(field "$out/w.json" "j['status'] in ('ok', 'unchecked')")" = True ] || { echo "run failed: $out/w.txt" >&2; exit 1; }
    sec+=("$(field "$out/w.json" "j['cfd']['seconds_per_step']")")
    mcell+=("$(field "$out/w.json" "j['cfd']['cell_updates_per_s'] / 1e6")")
    gbs+=("$(field "$out/w.json" "j['cfd']['GBps']")")
    triad+=("$(field "$out/w.json" "j['cfd']['triad_GBps']")")
    frac+=("$(field "$out/w.json" "j['cfd']['fraction_of_triad']")")
  done
  m() { printf '%s\n' "$@" | median; }
  echo "$r $(m "${sec[@]}") $(m "${mcell[@]}") $(m "${gbs[@]}") $(m "${triad[@]}") $(m "${frac[@]}")" >> "$out/rows.txt"
  echo "$r rank(s): $(m "${sec[@]}") s/step, $(m "${mcell[@]}") Mcell/s, $(m "${frac[@]}") of triad"
done
RB_N=${RB_N:-64}
RB_STEPS=${RB_STEPS:-20}
: > "$out/rb.txt"
for r in 1 2; do
  for solver in pcg fft; do
    step=() mcell=() ours=() jac=() gamg=() its=() jits=() gits=()
    for rep in $(seq "$REPEATS"); do
      for pc in jacobi gamg; do
        mpiexec -n "$r" "$WAFER" cfd --quiet --set cfd.problem=convection --set wafer.pe_grid=8x8 \
            --set cfd.nx="$RB_N" --set cfd.ny="$RB_N" --set cfd.nz=$((RB_N / 2)) --set cfd.ra=1e4 \
            --set cfd.perturbation=0.1 --set cfd.steps="$RB_STEPS" --set cfd.poisson=$solver \
            --set cfd.petsc=$pc --json "$out/c.json" > "$out/c.txt"
        [ "$(field "$out/c.json" "j['status']")" = ok ] || { echo "run failed: $out/c.txt" >&2; exit 1; }
        if [ $pc = jacobi ]; then
          jac+=("$(field "$out/c.json" "j['petsc']['seconds_per_solve']")")
          jits+=("$(field "$out/c.json" "j['petsc']['iterations']")")
        else
          gamg+=("$(field "$out/c.json" "j['petsc']['seconds_per_solve']")")
          gits+=("$(field "$out/c.json" "j['petsc']['iterations']")")
        fi
        step+=("$(field "$out/c.json" "j['cfd']['seconds_per_step']")")
        mcell+=("$(field "$out/c.json" "j['cfd']['cell_updates_per_s'] / 1e6")")
        ours+=("$(field "$out/c.json" "j['petsc']['our_seconds_per_solve']")")
        its+=("$(field "$out/c.json" "j['petsc']['our_iterations']")")
      done
    done
    m() { printf '%s\n' "$@" | median; }
    echo "$r $solver $(m "${step[@]}") $(m "${mcell[@]}") $(m "${ours[@]}") $(m "${its[@]}") $(m "${jac[@]}") $(m "${jits[@]}") $(m "${gamg[@]}") $(m "${gits[@]}")" >> "$out/rb.txt"
    echo "convection, $r rank(s), $solver: $(m "${step[@]}") s/step; a solve $(m "${ours[@]}") s, PETSc Jacobi $(m "${jac[@]}") s, GAMG $(m "${gamg[@]}") s"
  done
done
$py - "$out/rows.txt" "$REPEATS" "$STEPS" "$N" "$out/rb.txt" "$RB_N" "$RB_STEPS" <<'PY'
import sys, datetime, platform, subprocess
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
reps, steps, n = sys.argv[2], sys.argv[3], sys.argv[4]
cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout.strip()
lines = [f"# bench/cfd: results", "",
         f"`bench/cfd/run.sh` on {datetime.date.today()}, {cpu}, {platform.node()} (2 cores).",
         f"The SC22 wave stencil (25 points, leapfrog, double) on {n}^3 cells, {steps} steps a run,",
         f"medians of {reps} runs; STREAM triad measured by each run on arrays of its size.", "",
         "| ranks | s / step | Mcell/s | GB/s counted | STREAM triad GB/s | of triad |",
         "| ---: | ---: | ---: | ---: | ---: | ---: |"]
for r, sec, mc, gb, tr, fr in rows:
    lines.append(f"| {r} | {float(sec):.4f} | {float(mc):.0f} | {float(gb):.2f} | {float(tr):.2f} | {100*float(fr):.0f}% |")
lines += ["", "Target (issue 12): at least 80% of STREAM triad. Counted bytes: 24 a cell update",
          "(u^n and u^{n-1} read, u^{n+1} written over u^{n-1}); the stencil's neighbours are",
          "expected from cache.", "",
          "Short of the target. On an Intel Xeon VM (2026-11-23, first run) the same code gave",
          "329 and 613 Mcell/s, 55% and 53% of triad; on this AMD EPYC VM it reaches a third",
          "of that fraction, with a higher triad. What limits it, from `perf` on the Xeon: the",
          "fused column loop is vectorised and the sweep keeps a strip's 9 rows of columns in",
          "the second-level cache, not the first, so each cell loads its 8 y neighbours from",
          "L2 (64 B a cell); neither FMA contraction nor 512-bit vectors changed the time, so",
          "it is not arithmetic. Next: update 4 rows of columns at once, so a loaded y",
          "neighbour serves up to 4 cells (3 loads a cell instead of 8), and profile on EPYC."]
rb, rbn, rbsteps = [l.split() for l in open(sys.argv[5]) if l.strip()], int(sys.argv[6]), sys.argv[7]
lines += ["", "## Rayleigh-Benard convection", "",
          f"3D, {rbn} x {rbn} x {rbn // 2} cells, Ra 10^4, Pr 0.71, {rbsteps} steps a run (SSP-RK3: three",
          "projections a step), medians of the runs; one step's Poisson system (rtol 1e-10) solved",
          "by ours (PCG from zero, or the FFT) and by PETSc's KSPCG with Jacobi and with GAMG on",
          "the same AIJ matrix (constant null space; KSPSetUp outside the timing).", "",
          "| ranks | pressure | s / step | Mcell/s | our solve s (its) | PETSc Jacobi s (its) | PETSc GAMG s (its) | ours / PETSc's best |",
          "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for r, solver, step, mc, ours, its, jac, jits, gamg, gits in rb:
    best = min(float(jac), float(gamg))
    lines.append(f"| {r} | {solver} | {float(step):.4f} | {float(mc):.2f} | {float(ours):.4f} ({float(its):.0f}) | "
                 f"{float(jac):.4f} ({float(jits):.0f}) | {float(gamg):.4f} ({float(gits):.0f}) | {float(ours) / best:.2f} |")
lines += ["", "Target (issue 12): a Poisson solve no slower than PETSc's PCG, GAMG allowed (ratio <= 1).",
          "The FFT solve is exact (divergence at round-off); PCG stops at the tolerance."]
text = "\n".join(lines) + "\n"
open("bench/cfd/results.md", "w").write(text)
print(text)
PY
