#!/usr/bin/env bash
# End-to-end tests of `wafer cfd`: cfd.sh CASE RANKS WAFER_BINARY
# Prints "cfd CASE (N ranks): N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
cfd() { mpiexec -n "$ranks" "$wafer" cfd --quiet --set cfd.stream=false "$@"; }
# An uneven mesh on a 4x4 PE grid: rank blocks of 4 columns or more.
MESH="--set wafer.pe_grid=4x4 --set cfd.nx=37 --set cfd.ny=29 --set cfd.nz=21"

case $case_name in
wave)
  # A Ricker source: the direct wave reaches every receiver at distance /
  # velocity (the run's check); the shot gather, the last wavefield (with
  # its XDMF sidecar) and the gather's PNG are written.
  # shellcheck disable=SC2086
  cfd $MESH --set cfd.sponge=6 --set cfd.source_z=10 --set cfd.steps=300 --set output.file=w.h5 \
      --set cfd.gather_plot=g.png --json w.json > /dev/null
  expect "[ $? -eq 0 ] && json w.json \"j['status'] == 'ok' and j['checks'] == {'passed': 1, 'failed': 0} and j['cfd']['arrival_receivers'] >= 4\"" \
         "source run: $(json w.json 'print(j.get("error") or j.get("cfd")) or 1' 2>&1)"
  expect "/usr/bin/python3 -c \"
import h5py, sys
f = h5py.File('w.h5')
sys.exit(0 if f['shot_gather'].shape == (300, 37) and f['u'].shape == (21, 29, 37) and abs(f['shot_gather'][...]).max() > 0 else 1)\"" \
         "the output lacks the shot gather or the wavefield"
  expect "[ -s w.xmf ] && [ \"\$(head -c 4 g.png | tail -c 3)\" = PNG ]" "no XDMF sidecar or no gather plot"
  ;;
order)
  # 8th order in space: the lowest standing mode's eigenvalue, measured from
  # the run (exact in time: leapfrog's phase gives it back), against the
  # continuum's; the error falls 256x when h halves. And against the
  # stencil's closed form to round-off (the run's own check).
  for n in 8 16; do
    cfd --set wafer.pe_grid=2x2 --set cfd.nx=$n --set cfd.ny=$n --set cfd.nz=$n --set cfd.init=mode \
        --set cfd.bc=free --set cfd.steps=100 --json m$n.json > /dev/null
    expect "[ $? -eq 0 ] && json m$n.json \"j['status'] == 'ok' and j['checks']['passed'] == 2\"" "mode n=$n: $(json m$n.json 'print(j.get("error") or j.get("cfd")) or 1' 2>&1)"
  done
  expect "json m8.json \"220 <= j['cfd']['lambda_error'] / json.load(open('m16.json'))['cfd']['lambda_error'] <= 290\"" \
         "the eigenvalue's error does not fall as h^8: $(json m8.json 'print(j["cfd"]["lambda_error"]) or 1' 2>&1)"
  ;;
energy)
  # Free faces, no source: leapfrog's energy is conserved to round-off.
  # shellcheck disable=SC2086
  cfd $MESH --set cfd.init=gaussian --set cfd.bc=free --set cfd.steps=300 --json e.json > /dev/null
  expect "[ $? -eq 0 ] && json e.json \"j['status'] == 'ok' and j['cfd']['energy_drift'] <= 1e-10\"" \
         "energy: $(json e.json 'print(j.get("error") or j.get("cfd")) or 1' 2>&1)"
  ;;
ranks)
  # The same wavefield and shot gather on 1 rank and on $ranks, bit for bit
  # (every cell's sum in the same order).
  for n in 1 "$ranks"; do
    # shellcheck disable=SC2086
    mpiexec -n "$n" "$wafer" cfd --quiet $MESH --set cfd.stream=false --set cfd.sponge=6 \
        --set cfd.steps=60 --set output.file=r$n.h5 > /dev/null
    expect "[ $? -eq 0 ] && [ -s r$n.h5 ]" "run on $n ranks"
  done
  expect "h5diff r1.h5 r$ranks.h5 /u /u > diff.txt && h5diff r1.h5 r$ranks.h5 /shot_gather /shot_gather >> diff.txt" \
         "1 and $ranks ranks differ: $(tail -2 diff.txt)"
  ;;
heat)
  # The explicit heat equation: the slowest mode of each boundary mix decays
  # as the scheme's closed form says (the run's check), and its decay rate
  # approaches the continuum's at second order (dt ~ h^2: the error falls 4x
  # when h halves). At cfl 0.25: at 0.5 the Dirichlet-Neumann-periodic mode's
  # time and space errors cancel at second order (it converges at fourth).
  for bcs in "dirichlet neumann periodic" "mixed periodic neumann"; do
    set -- $bcs
    for n in 8 16; do
      cfd --set cfd.problem=heat --set wafer.pe_grid=2x2 --set cfd.nx=$n --set cfd.ny=$n --set cfd.nz=$n \
          --set cfd.bc_x=$1 --set cfd.bc_y=$2 --set cfd.bc_z=$3 --set cfd.kappa=1 --set cfd.h=$(python3 -c "print(1 / $n)") \
          --set cfd.cfl=0.25 --set cfd.steps=$((n * n)) --json h$n.json > /dev/null
      expect "[ $? -eq 0 ] && json h$n.json \"j['status'] == 'ok' and j['checks'] == {'passed': 1, 'failed': 0}\"" \
             "heat $bcs n=$n: $(json h$n.json 'print(j.get("error") or j.get("cfd")) or 1' 2>&1)"
    done
    expect "json h8.json \"3.6 <= j['cfd']['decay_rate_error'] / json.load(open('h16.json'))['cfd']['decay_rate_error'] <= 4.4\"" \
           "heat $bcs: the decay rate's error does not fall as h^2"
  done
  expect_bad_input cfd "violates the stability limit of the explicit heat scheme" --set cfd.problem=heat --set cfd.dt=1e6
  expect_bad_input cfd "the heat problem has no source" --set cfd.problem=heat --set cfd.init=source
  ;;
blowup)
  # A NaN half way (injected on one rank): every rank stops with the step.
  # shellcheck disable=SC2086
  WAFER_FAULT=cfd_nan@$((ranks - 1)) mpiexec -n "$ranks" -x WAFER_FAULT "$wafer" cfd --quiet $MESH \
      --set cfd.stream=false --set cfd.steps=100 --set output.file=n.h5 > out.txt 2> err.txt
  rc=$?
  expect "[ $rc -eq 1 ] && grep -q 'no longer finite after step 100' err.txt && [ ! -e n.h5 ]" \
         "blow-up: exit $rc, $(tail -2 err.txt)"
  ;;
bad_input)
  bad() { expect_bad_input cfd "$@"; }
  bad "violates the CFL condition" --set cfd.dt=0.01
  bad "reaches 4 cells each way" --set wafer.pe_grid=2x2 --set cfd.nx=6 --set cfd.ny=16 --set cfd.nz=16 \
      --set wafer.rank_grid=2x1
  bad "nz at least 4" --set wafer.pe_grid=2x2 --set cfd.nx=16 --set cfd.ny=16 --set cfd.nz=3
  bad "[cfd] source_x = 64: cell 64 is outside the mesh" --set cfd.source_x=64
  bad "[cfd] velocity = 0: out of range" --set cfd.velocity=0
  ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac
finish "cfd $case_name"
