#!/usr/bin/env bash
# scale.sh CASE RANKS WAFER_BINARY
#   mpiexec  the scaling driver (slurm/scale.sh) with mpiexec (under Slurm,
#            tests/slurm/slurm.sh scale runs it with sbatch)
#   ranks    every workload's small deck on 1, 16 and RANKS (64) ranks,
#            oversubscribed: the results agree with 1 rank's, and the largest
#            rank's peak memory does not grow with the rank count (ctest
#            label `scale`, not in the default run: `make test-scale`)
#   simulated  every small deck on 1 and RANKS ranks simulated by SimGrid's
#            SMPI (WAFER_BINARY: build-sim/wafer, `make build-sim`): the
#            results agree with 1 rank's (`make test-sim`)
#   calibration  scale.sh calibration 2 build-sim/wafer build/wafer: each
#            workload's calibration deck at 1 and 2 ranks, measured (Open MPI,
#            this machine) and simulated on inputs/platforms/this_machine.xml
#            in the same test: the simulated time of the main computation
#            within 25% of the measured one, the best of 3 each (of up to 15,
#            spaced out, where 3 fall outside) (`make test-sim`)
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3 real=${4:-}
# smpirun's options, as slurm/scale.sh --simulate sets them (why: there)
SMPI_CFG=(--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/reduce:binomial
          --log=root.thresh:warning)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
driver="$here/../../slurm/scale.sh" # (lib.sh has moved to a work folder: $here is absolute)
export WAFER=$wafer OMPI_MCA_rmaps_base_oversubscribe=1

# csv_ok DIR PYTHON-CONDITION: over the rows `r` of DIR/scaling.csv.
csv_ok() {
  /usr/bin/python3 -c "import csv, sys; r = list(csv.DictReader(open('$1/scaling.csv'))); sys.exit(0 if ($2) else 1)"
}

case $case_name in
mpiexec)
  # Strong scaling of the stencil (PETSc beside it) over 1 .. ranks.
  list=$(seq -s ' ' 1 "$ranks")
  "$driver" --launcher mpiexec --out strong stencil "$list" --set stencil.nz=32 > strong.txt 2>&1
  expect "[ $? -eq 0 ]" "driver failed: $(tail -3 strong.txt)"
  # Without PETSc (a build without it) the runs are unchecked and the
  # reference columns empty.
  if [ "$have_petsc" = 1 ]; then
    ref="all(x['status'] == 'ok' and x['reference'] == 'PETSc' and float(x['reference_seconds_per_unit']) > 0 for x in r)"
  else
    ref="all(x['status'] == 'unchecked' and x['reference'] == '' and x['reference_seconds_per_unit'] == '' for x in r)"
  fi
  expect "csv_ok strong \"[int(x['ranks']) for x in r] == [$(echo "$list" | tr ' ' ',')] and $ref and float(r[0]['efficiency']) == 1.0\"" \
         "strong CSV: $(cat strong/scaling.csv)"
  expect "[ \"\$(head -c 4 strong/scaling.png | tail -c 3)\" = PNG ]" "no strong scaling plot"
  # Weak scaling: nz grows with the ranks.
  "$driver" --launcher mpiexec --out weak --weak stencil.nz=16 stencil "1 $ranks" > weak.txt 2>&1
  expect "[ $? -eq 0 ] && json weak/$ranks.json \"j['stencil']['mesh'][2] == 16 * $ranks\"" "weak run's mesh: $(tail -3 weak.txt)"
  expect "csv_ok weak \"len(r) == 2 and abs(float(r[1]['speedup']) - $ranks * float(r[1]['efficiency'])) < 1e-9\"" \
         "weak CSV: $(cat weak/scaling.csv)"
  # Bad arguments.
  "$driver" --launcher mpiexec stencil "1 x" > bad.txt 2>&1
  expect "[ $? -eq 2 ] && grep -q \"'x' is not a rank count\" bad.txt" "a bad rank list: $(cat bad.txt)"
  "$driver" --launcher mpiexec --weak nz stencil "1 2" > bad.txt 2>&1
  expect "[ $? -eq 2 ] && grep -q 'wants KEY=BASE' bad.txt" "a bad --weak: $(cat bad.txt)"
  ;;
ranks)
  for w in $small_workloads; do
    for n in 1 16 "$ranks"; do
      # shellcheck disable=SC2086
      timeout 600 mpiexec -n "$n" "$wafer" "$w" --quiet $(small_deck $w $n) --json "$w$n.json" > /dev/null 2> "$w$n.err"
      expect "[ $? -eq 0 ]" "$w on $n ranks: $(tail -2 "$w$n.err")"
    done
    for n in 16 "$ranks"; do
      # The results agree with 1 rank's (agree.py), and the largest rank's
      # peak memory does not grow with the ranks (a little for MPI's own
      # buffers: 1.5x and 40 MB).
      /usr/bin/python3 "$here/agree.py" "$w$n.json" "${w}1.json" > agree.txt 2>&1
      expect "[ $? -eq 0 ]" "$w on $n ranks differs from 1 rank: $(cat agree.txt)"
      mem1=$(/usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['memory']['peak_rss_mb'][1])" \
             "${w}1.json" 2> /dev/null || echo 0)
      expect "json $w$n.json \"j['ranks'] == $n and j['memory']['peak_rss_mb'][1] <= 1.5 * $mem1 + 40\"" \
             "$w on $n ranks: memory per rank grew to $(json $w$n.json "print(j['memory']) or 1" 2>&1), 1 rank $mem1 MB"
    done
  done
  ;;
simulated)
  # The simulated build (make build-sim; WAFER_BINARY is build-sim/wafer)
  # under SimGrid's smpirun: every workload's small deck on 1 and RANKS
  # simulated ranks of the InfiniBand HDR fat tree agrees with 1 rank's, as
  # real ranks do. An HDF5 file is refused before any work (exit 2).
  [ -x "$wafer" ] || { echo "SKIP: no simulated build $wafer (make build-sim)"; exit 77; }
  platform="$here/../../inputs/platforms/ib_hdr_fat_tree.xml"
  sim() {
    local n=$1
    shift
    timeout 900 smpirun -np "$n" -platform "$platform" "${SMPI_CFG[@]}" "$wafer" "$@"
  }
  for w in $small_workloads; do
    for n in 1 "$ranks"; do
      # shellcheck disable=SC2086
      sim "$n" "$w" --quiet $(small_deck $w $n) --json "$w$n.json" > /dev/null 2> "$w$n.err"
      expect "[ $? -eq 0 ] && json $w$n.json \"j['ranks'] == $n\"" "$w on $n simulated ranks: $(tail -2 "$w$n.err")"
    done
    /usr/bin/python3 "$here/agree.py" "$w$ranks.json" "${w}1.json" > agree.txt 2>&1
    expect "[ $? -eq 0 ]" "$w on $ranks simulated ranks differs from 1: $(cat agree.txt)"
  done
  sim 2 halo --set output.file=x.h5 > /dev/null 2> h5.err
  expect "[ $? -eq 2 ] && grep -q 'this build has no HDF5' h5.err && [ ! -e x.h5 ]" \
         "an HDF5 output in the simulated build: $(grep -v smpi h5.err | tail -2)"
  # The communication structure (the fabric's counts a unit of work, the
  # busiest rank's): at 16 ranks and at RANKS, the same messages and the
  # same collectives a step or iteration, whatever the rank count; EAM at
  # most one global reduction a step (decks at least 4x4 PEs a rank at
  # RANKS, so that every rank has its four neighbours).
  counts_deck() {
    case $1 in
      eam) echo "eam --set eam.crosscheck=none --set eam.cells=64x64x4 --set eam.temperature=10
        --set eam.steps=20 --set eam.thermo=0" ;;
      stencil) echo "stencil --set stencil.crosscheck=none --set stencil.stream=false
        --set stencil.rtol=0 --set stencil.max_iterations=20" ;;
      cfd) echo "cfd --set cfd.stream=false --set cfd.nx=128 --set cfd.ny=128 --set cfd.nz=32 --set cfd.sponge=4
        --set cfd.steps=20 --set cfd.init=source" ;;
      halo) echo "halo --set halo.iterations=20" ;;
    esac
  }
  for w in eam stencil cfd halo; do
    for n in 16 "$ranks"; do
      # shellcheck disable=SC2046
      sim "$n" $(counts_deck $w) --quiet --json "c$w$n.json" > /dev/null 2> "c$w$n.err"
      expect "[ $? -eq 0 ]" "$w counts on $n simulated ranks: $(tail -2 "c$w$n.err")"
    done
    /usr/bin/python3 - "c${w}16.json" "c$w$ranks.json" > counts.txt 2>&1 <<'PY'
import json, sys
a, b = (json.load(open(f))["fabric"]["per_unit"] for f in sys.argv[1:])
bad = [k for k in ("collectives", "line_collectives", "messages") if abs(a[k] - b[k]) > 1e-9]
print("per %s at 16 / more ranks: %s" % (a["unit"], ", ".join(
    "%s %g / %g" % (k, a[k], b[k]) for k in ("collectives", "line_collectives", "messages"))))
sys.exit(1 if bad else 0)
PY
    expect "[ $? -eq 0 ]" "$w: the counts a unit of work change with the ranks: $(cat counts.txt)"
  done
  expect "json ceam$ranks.json \"j['fabric']['per_unit']['collectives'] <= 1\"" \
         "EAM: more than one global reduction a step at $ranks simulated ranks"
  ;;
calibration)
  # Decks of 0.1 to 1 s of main computation whose data fit this machine's
  # last-level cache at 2 ranks: simulated, the two ranks compute one after
  # the other on one core; measured, side by side on two, sharing that
  # cache and the memory bus. The `seconds` of the JSON (the main
  # computation, the slowest rank's; simulated: the simulation's clock).
  platform="$here/../../inputs/platforms/this_machine.xml"
  # SMPI's own collective algorithms, with which the platform's links were
  # fitted: its Open MPI two-process barrier is one message, where Open
  # MPI's on this machine's shared memory costs about two (the halo deck's
  # barrier an exchange ran 0.58 of the measured time with it).
  SMPI_CFG=(--cfg=smpi/host-speed:1Gf --log=root.thresh:warning)
  calib_deck() {  # WORKLOAD RANKS
    case $1 in
      # one rank: the exchange is copies inside the rank (4 kB cells, so that
      # they, not SMPI's own cost of a call, decide); two: small messages,
      # where the platform's latency decides
      halo) if [ "$2" = 1 ]; then echo "--set halo.iterations=500 --set halo.elem_bytes=4096"
            else echo "--set halo.iterations=4000 --set halo.elem_bytes=64"; fi ;;
      stencil) echo "--set stencil.nx=48 --set stencil.ny=48 --set stencil.nz=48 --set wafer.pe_grid=16x16
        --set stencil.rtol=0 --set stencil.max_iterations=300 --set stencil.crosscheck=none
        --set stencil.stream=false" ;;
      eam) echo "--set eam.steps=300 --set eam.crosscheck=none" ;;
      fft) echo "--set fft.nx=32 --set fft.ny=32 --set fft.nz=32 --set wafer.pe_grid=16x16
        --set fft.repeat=30 --set fft.crosscheck=none --set fft.stream=false" ;;
      cfd) echo "--set cfd.nx=64 --set cfd.ny=64 --set cfd.nz=64 --set wafer.pe_grid=32x32
        --set cfd.steps=100 --set cfd.stream=false" ;;
      tlrmvm) echo "--set tlrmvm.repeat=60 --set tlrmvm.mdd_iterations=0 --set tlrmvm.stream=false" ;;
    esac
  }
  # The best of the runs on either side: on this shared machine noise only
  # adds time, to the measured runs and to the computing SMPI charges alike
  # (a two-rank halo ran 0.020 s, then 0.065-0.071 s for a minute).
  best_seconds() {  # least `seconds` of the JSON files given
    /usr/bin/python3 -c "import json, sys; print(min(json.load(open(f))['seconds'] for f in sys.argv[1:]))" "$@"
  }
  calib_run() {  # WORKLOAD RANKS K: the K-th measured and simulated run
    # shellcheck disable=SC2046
    mpiexec --bind-to core -n "$2" "$real" "$1" --quiet $(calib_deck "$1" "$2") --json "m$1$2.$3.json" > /dev/null 2> "m$1$2.err"
    expect "[ $? -eq 0 ]" "$1 on $2 measured ranks: $(tail -2 "m$1$2.err")"
    # shellcheck disable=SC2046
    timeout 600 smpirun -np "$2" -platform "$platform" "${SMPI_CFG[@]}" "$wafer" "$1" --quiet \
      $(calib_deck "$1" "$2") --json "s$1$2.$3.json" > /dev/null 2> "s$1$2.err"
    expect "[ $? -eq 0 ]" "$1 on $2 simulated ranks: $(tail -2 "s$1$2.err")"
  }
  calib_ratio() {  # WORKLOAD RANKS: simulated / measured, the best of the runs so far
    local m s
    m=$(best_seconds m$1$2.*.json 2> /dev/null || echo nan)
    s=$(best_seconds s$1$2.*.json 2> /dev/null || echo nan)
    echo "$m $s $(/usr/bin/python3 -c "print('%.3f' % ($s / $m))" 2> /dev/null || echo nan)"
  }
  in_band() { /usr/bin/python3 -c "import sys; sys.exit(0 if 0.75 <= $1 <= 1.25 else 1)" 2> /dev/null; }
  printf "%-8s %5s %12s %12s %7s\n" workload ranks measured simulated ratio > calib.txt
  for w in halo stencil eam fft cfd tlrmvm; do
    for n in 1 2; do
      for k in 1 2 3; do calib_run $w $n $k; done
      read -r m s r <<< "$(calib_ratio $w $n)"
      # Outside the band, up to four rounds of three runs more of each, 20 s
      # apart: CI runs of unchanged code gave the halo 0.56 and 0.63 at 2
      # ranks and the FFT 0.73, each inside the band on the run before, the
      # two-rank halo measured at 2-6x its usual time for a minute or more
      # (two virtual cores not running at once); a model that is wrong
      # stays outside.
      for round in 1 2 3 4; do
        in_band "$r" && break
        [ "$round" -gt 1 ] && sleep 20
        for k in 1 2 3; do calib_run $w $n "$round.$k"; done
        read -r m s r <<< "$(calib_ratio $w $n)"
      done
      printf "%-8s %5d %12.6g %12.6g %7s\n" "$w" "$n" "$m" "$s" "$r" >> calib.txt
      expect "in_band $r" "$w on $n ranks: simulated / measured $r (want 0.75 to 1.25)"
    done
  done
  cat calib.txt
  [ -n "${CALIBRATION_OUT:-}" ] && cp calib.txt "$CALIBRATION_OUT"
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish "scale $case_name"
