#!/usr/bin/env bash
# The strong-scaling studies of docs/scaling.md, on a simulated cluster: each
# workload on one deck a user would pick for 1,024 ranks (as far as one
# machine's memory and a few minutes of simulation allow; the sizes and why
# are in docs/scaling.md), at 1 to 1,024 simulated ranks, through
# slurm/scale.sh --simulate.
#
#   slurm/sim_studies.sh [--platform P] [--ranks "1 4 16 64 256 1024"] [--out DIR]
#                        [--network-only] [WORKLOAD...]
#
# WAFER names the simulated build (default build-sim/wafer: make build-sim).
# Writes DIR/WORKLOAD/ (each run's JSON and output, scaling.csv, scaling.png).
# About an hour for all seven on one core of this project's machine;
# training stops at 256 ranks unless --ranks says otherwise (1,024 would take
# about an hour alone: docs/scaling.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
platform=ib_hdr_fat_tree ranks="" out=scaling-simulated only=()
while [[ $# -gt 0 && "$1" == --* ]]; do
  case $1 in
    --platform) platform=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --network-only) only=(--network-only); shift ;;
    *) echo "sim_studies.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
all="stencil eam fft wave convection tlrmvm train"
workloads=${*:-$all}

# The deck of each study: workload, then its --set assignments.
deck() {
  case $1 in
    stencil) echo "stencil --set stencil.nx=512 --set stencil.ny=512 --set stencil.nz=512
      --set stencil.rtol=0 --set stencil.max_iterations=20 --set stencil.crosscheck=none
      --set stencil.stream=false" ;;
    eam) echo "eam --set eam.cells=64x64x64 --set eam.steps=20 --set eam.thermo=0
      --set eam.crosscheck=none" ;;
    fft) echo "fft --set fft.nx=256 --set fft.ny=256 --set fft.nz=256 --set fft.repeat=3
      --set fft.crosscheck=none --set fft.stream=false" ;;
    wave) echo "cfd --set cfd.nx=512 --set cfd.ny=512 --set cfd.nz=512 --set cfd.steps=10
      --set cfd.stream=false" ;;
    convection) echo "cfd --set cfd.problem=convection --set cfd.nx=128 --set cfd.ny=128
      --set cfd.nz=32 --set cfd.steps=5 --set cfd.stream=false" ;;
    tlrmvm) echo "tlrmvm --set tlrmvm.src_nx=128 --set tlrmvm.src_ny=128 --set tlrmvm.rec_nx=128
      --set tlrmvm.rec_ny=128 --set tlrmvm.mdd_iterations=0 --set tlrmvm.dense=none
      --set tlrmvm.repeat=10 --set tlrmvm.stream=false" ;;
    train) echo "train --set train.channels=128 --set train.heads=8 --set train.layers=2
      --set train.batch=2 --set train.steps=4 --set train.warmup=0 --set train.eval_every=1000
      --set train.sgemm=false" ;;
    *) echo "sim_studies.sh: no study of '$1' (one of: $all)" >&2; return 2 ;;
  esac
}

for w in $workloads; do
  args=$(deck "$w")
  # shellcheck disable=SC2086
  counts=${ranks:-1 4 16 64 256 1024}
  [[ -z "$ranks" && "$w" == train ]] && counts="1 4 16 64 256"
  "$here/scale.sh" --simulate "$platform" ${only[@]+"${only[@]}"} --out "$out/$w" ${args%% *} \
    "$counts" ${args#* }
done
