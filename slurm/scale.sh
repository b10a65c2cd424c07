#!/usr/bin/env bash
# A scaling study: one deck at several rank counts, every run's JSON summary
# collected into a CSV and a plot (speedup, parallel efficiency, measured
# against modelled time; PETSc's or LAMMPS's own times beside wafer's when
# the workload runs them, as stencil and eam do in the same run).
#
#   slurm/scale.sh [options] WORKLOAD "RANKS..." [DECK] [--set ...]
#     --launcher auto|mpiexec|sbatch   how runs start (auto: sbatch when a
#                                      Slurm controller answers, else mpiexec)
#     --weak KEY=BASE                  weak scaling: KEY = BASE x ranks
#                                      (e.g. stencil.nz=64); default strong
#     --out DIR                        results (default scaling-WORKLOAD)
#     --sbatch-args "..."              extra sbatch options (-N, --ntasks-per-node, ...)
#     --simulate PLATFORM              a simulated cluster: SimGrid's smpirun runs the
#                                      simulated build (make build-sim) on PLATFORM, a
#                                      file or a name in inputs/platforms (e.g.
#                                      ib_hdr_fat_tree); times are the simulation's.
#                                      Collectives run Open MPI's algorithms (SMPI's
#                                      ompi selector): SMPI's default ones post every
#                                      message at once, which at 1,024 ranks takes the
#                                      simulator tens of minutes; reduce is SMPI's
#                                      binomial (SimGrid 3.32's Open MPI binary-tree
#                                      reduce aborts on a communicator of one rank)
#     --network-only                   simulated, charge no computing (SMPI's
#                                      simulate-computation off): the communication alone
#   e.g. slurm/scale.sh stencil "1 2 4 8" inputs/stencil.ini --set stencil.nx=256
#        slurm/scale.sh --simulate ib_hdr_fat_tree stencil "1 16 256 1024" --set stencil.nx=512
#
# Writes DIR/N.json per rank count, DIR/scaling.csv and DIR/scaling.png.
# WAFER names the binary (default build/wafer; simulated, build-sim/wafer).
# Runs above the machine's core count (mpiexec) oversubscribe: their times
# test the mechanics only. docs/scaling.md explains the simulated studies.
set -euo pipefail
launcher=auto weak="" out="" sbatch_args="" platform="" sim_cfg=""
while [[ $# -gt 0 && "$1" == --* ]]; do
  case $1 in
    --launcher) launcher=$2; shift 2 ;;
    --weak) weak=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --sbatch-args) sbatch_args=$2; shift 2 ;;
    --simulate) platform=$2 launcher=smpirun; shift 2 ;;
    --network-only) sim_cfg=--cfg=smpi/simulate-computation:no; shift ;;
    *) echo "scale.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $# -lt 2 ]]; then
  sed -n '2,/^[^#]/p' "$0" | sed '$d' >&2
  exit 2
fi
workload=$1 ranks=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
if [[ -n "$platform" ]]; then
  [[ -f "$platform" ]] || platform="$here/../inputs/platforms/${platform%.xml}.xml"
  [[ -f "$platform" ]] || { echo "scale.sh: no platform file $platform (see inputs/platforms)" >&2; exit 2; }
  command -v smpirun > /dev/null || { echo "scale.sh: --simulate needs SimGrid's smpirun (scripts/setup)" >&2; exit 2; }
  WAFER=${WAFER:-build-sim/wafer}
fi
WAFER=${WAFER:-build/wafer}
[[ -x "$WAFER" ]] || command -v "$WAFER" > /dev/null || { echo "scale.sh: no $WAFER (make build${platform:+-sim})" >&2; exit 2; }
out=${out:-scaling-$workload}
mkdir -p "$out"
if [[ "$launcher" == auto ]]; then
  launcher=mpiexec
  command -v sbatch > /dev/null && scontrol ping 2> /dev/null | grep -q UP && launcher=sbatch
fi
for n in $ranks; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "scale.sh: '$n' is not a rank count" >&2; exit 2; }
done
if [[ -n "$weak" && ! "$weak" =~ ^[a-z_]+\.[a-z_]+=[0-9]+$ ]]; then
  echo "scale.sh: --weak wants KEY=BASE, e.g. stencil.nz=64 (got '$weak')" >&2
  exit 2
fi

# The run at n ranks: its extra arguments.
run_args() {
  local n=$1
  if [[ -n "$weak" ]]; then echo "--set ${weak%%=*}=$(( ${weak##*=} * n ))"; fi
}

declare -A job
for n in $ranks; do
  rm -f "$out/$n.json"
  # shellcheck disable=SC2046
  if [[ "$launcher" == sbatch ]]; then
    # shellcheck disable=SC2086
    job[$n]=$(WAFER_ARGS="$(run_args "$n") --quiet" sbatch --parsable -n "$n" $sbatch_args \
              -o "$out/$n.out" "$here/wafer.sbatch" "$workload" "$@")
    echo "scale.sh: $workload on $n ranks: job ${job[$n]}"
  elif [[ "$launcher" == smpirun ]]; then
    echo "scale.sh: $workload on $n simulated ranks ($(basename "$platform"))"
    # shellcheck disable=SC2046
    smpirun -np "$n" -platform "$platform" --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi \
        --cfg=smpi/reduce:binomial \
        $sim_cfg --log=root.thresh:warning \
        "$WAFER" "$workload" "$@" $(run_args "$n") --quiet --json "$out/$n.json" > "$out/$n.out" 2>&1 ||
      echo "scale.sh: the simulated run on $n ranks failed: $out/$n.out"
  else
    extra=()
    (( n > $(nproc) )) && extra=(--oversubscribe)
    echo "scale.sh: $workload on $n ranks (mpiexec)"
    # shellcheck disable=SC2046
    mpiexec "${extra[@]}" -n "$n" "$WAFER" "$workload" "$@" $(run_args "$n") --quiet \
        --json "$out/$n.json" > "$out/$n.out" 2>&1 || echo "scale.sh: the run on $n ranks failed: $out/$n.out"
  fi
done
if [[ "$launcher" == sbatch ]]; then
  for n in $ranks; do
    while :; do
      state=$(scontrol show job "${job[$n]}" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
      [[ -z "$state" || "$state" =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]] && break
      sleep 1
    done
    mv -f "wafer-$workload-${job[$n]}.json" "$out/$n.json" 2> /dev/null ||
      echo "scale.sh: job ${job[$n]} ($n ranks) ended ${state:-unknown} without a summary: $out/$n.out"
  done
fi
SCALE_PLATFORM=$(basename "${platform%.xml}") /usr/bin/python3 "$here/scale_report.py" "$out" \
    "$workload" "${weak:+weak}" $ranks
