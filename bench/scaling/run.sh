#!/usr/bin/env bash
# Strong scaling from 1 to 2 ranks on this machine, with the reference
# codes' own scaling from the same runs (slurm/scale.sh, mpiexec):
#   stencil  256^3 CG, 30 iterations (memory-bound), PETSc AIJ beside it;
#            target: wafer's speedup at least 90% of STREAM triad's own
#            1-to-2 speedup, measured in the same runs (two cores share one
#            memory system: that is the limit)
#   eam      Cu, 32,000 atoms, 100 steps (compute-bound); target: at least
#            90% parallel efficiency. The EAM cross-check runs LAMMPS as one
#            process: its time is a serial reference here; LAMMPS's own
#            1-to-2 scaling is in bench/eam (run on as many ranks as wafer)
# Medians of REPEATS studies. Writes bench/scaling/results.md and keeps the
# last study's CSV and plots in bench/scaling/out.
#   bench/scaling/run.sh        (after `make build`; about 3 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
export WAFER
REPEATS=${REPEATS:-3}
out=bench/scaling/out
mkdir -p "$out"
for rep in $(seq "$REPEATS"); do
  slurm/scale.sh --launcher mpiexec --out "$out/stencil-$rep" stencil "1 2" \
      --set stencil.nx=256 --set stencil.ny=256 --set stencil.nz=256 \
      --set stencil.rtol=0 --set stencil.max_iterations=30 > /dev/null
  slurm/scale.sh --launcher mpiexec --out "$out/eam-$rep" eam "1 2" --set eam.cells=20x20x20 > /dev/null
  echo "study $rep of $REPEATS done"
done

$py - "$out" "$REPEATS" <<'PY'
import csv, datetime, json, os, platform, statistics, subprocess, sys
out, reps = sys.argv[1], int(sys.argv[2])
med = statistics.median
def study(kind, rep):
    return list(csv.DictReader(open("%s/%s-%d/scaling.csv" % (out, kind, rep))))
def triad(rep, n):
    return json.load(open("%s/stencil-%d/%d.json" % (out, rep, n)))["stencil"]["stream_triad_GBps"]
rows = []
for kind, ref in (("stencil", "PETSc"), ("eam", "LAMMPS")):
    s = [study(kind, r) for r in range(1, reps + 1)]
    unit = [k for k in s[0][0] if k.startswith("seconds_per_")][0]
    t1, t2 = med(float(x[0][unit]) for x in s), med(float(x[1][unit]) for x in s)
    r1 = med(float(x[0]["reference_seconds_per_unit"]) for x in s)
    r2 = med(float(x[1]["reference_seconds_per_unit"]) for x in s)
    speed = med(float(x[1]["speedup"]) for x in s)
    ref_speed = med(float(x[1]["reference_speedup"]) for x in s) if "reference_speedup" in s[0][1] else None
    row = dict(kind=kind, unit=unit[len("seconds_per_"):], ref=ref, t1=t1, t2=t2, r1=r1, r2=r2,
               speed=speed, ref_speed=ref_speed)
    if kind == "stencil":
        row["triad"] = med(triad(r, 2) / triad(r, 1) for r in range(1, reps + 1))
    rows.append(row)
cpu = os.environ["MACHINE"]  # bench/lib.sh: the CPU, its family and model, its vector ISA, cores
L = ["# Scaling benchmark: 1 to 2 ranks, wafer beside PETSc and LAMMPS", "",
     f"Command: `bench/scaling/run.sh` (medians of {reps} studies, each `slurm/scale.sh` with mpiexec)  ",
     f"Machine: {cpu}, {platform.platform()}  ",
     f"Date: {datetime.date.today().isoformat()}", "",
     "Strong scaling. *stencil*: 256^3 CG, 30 iterations, PETSc AIJ KSPCG in the same runs; STREAM",
     "triad measured in the same runs (its 1-to-2 speedup is the memory system's limit). *eam*:",
     "Cu, 32,000 atoms, 100 steps; its cross-check runs LAMMPS as one process, a serial",
     "reference (LAMMPS's own 1-to-2 scaling: bench/eam/results.md). Targets: the stencil's",
     "speedup at least 90% of triad's; EAM's efficiency at least 90%.", "",
     "| workload | time per unit, 1 rank | 2 ranks | speedup | efficiency | reference 1 rank | 2 ranks | reference speedup | limit |",
     "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for r in rows:
    scale = 1e3 if r["kind"] == "stencil" else 1e3
    limit = ("triad speedup %.2f: wafer reaches %.0f%% of it" % (r["triad"], 100 * r["speed"] / r["triad"])
             if r["kind"] == "stencil" else "efficiency target 90%%: %.0f%%" % (50 * r["speed"]))
    ref_speed = "%.2f" % r["ref_speed"] if r["ref_speed"] else "- (1 process)"
    L.append("| %s (ms/%s) | %.2f | %.2f | %.2f | %.0f%% | %s %.2f | %.2f | %s | %s |" % (
        r["kind"], r["unit"], r["t1"] * scale, r["t2"] * scale, r["speed"], 50 * r["speed"], r["ref"],
        r["r1"] * scale, r["r2"] * scale, ref_speed, limit))
open("bench/scaling/results.md", "w").write("\n".join(L) + "\n")
PY
cat bench/scaling/results.md
