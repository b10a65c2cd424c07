#!/usr/bin/env bash
# End-to-end tests of `wafer fft`: fft.sh CASE RANKS WAFER_BINARY
# Prints "fft CASE (N ranks): N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
fft() { mpiexec -n "$ranks" "$wafer" fft --quiet --set fft.stream=false --set fft.planner=estimate "$@"; }
# Uneven sizes (primes) on a 7x5 PE grid: bricks of 5-6 x 5-6 pencils.
UNEVEN="--set wafer.pe_grid=7x5 --set fft.nx=37 --set fft.ny=29 --set fft.nz=23"

# A transform with transposes (2D, 3D) also checks the wafer model's
# all-to-all words against the array: one check more.
MODEL="(j['fft']['dims'] >= 2)"
# A run agrees with its reference and every check passed: `checks` of them
# (and the model's).
agrees() {
  local what=$1 checks=$2 tol=$3; shift 3
  fft "$@" --json f.json > /dev/null
  expect "[ $? -eq 0 ]" "$what: run failed"
  expect "json f.json \"j['status'] == 'ok' and j['checks']['failed'] == 0 and j['checks']['passed'] == $checks + $MODEL\"" \
         "$what: checks $(json f.json 'print(j["checks"]) or 1' 2>&1)"
  local ref=fftw_mpi; [[ "$*" == *dims=[12]* ]] && ref=fftw
  expect "json f.json \"j['$ref']['rel_diff'] <= $tol and j['$ref'].get('transposed_rel_diff', 0) <= $tol\"" \
         "$what: differs from FFTW"
}

case $case_name in
fftw)
  # Against FFTW-MPI on the same data (both output layouts), FFTW on y-slabs
  # for 1D and 2D; with the plane waves also the analytic transform. Every
  # rank grid this rank count allows: 1 x ranks (the FFT's default), the
  # compact one, and the pencils of 2x2.
  grids="auto"
  [ "$ranks" -eq 2 ] && grids="auto 2x1"
  [ "$ranks" -eq 4 ] && grids="auto 2x2 4x1"
  for g in $grids; do
    # shellcheck disable=SC2086
    agrees "64^3 waves, ranks $g" 5 1e-12 --set wafer.rank_grid=$g
    # shellcheck disable=SC2086
    agrees "uneven waves, ranks $g" 5 1e-12 $UNEVEN --set wafer.rank_grid=$g
    # shellcheck disable=SC2086
    agrees "uneven random single, ranks $g" 4 1e-5 $UNEVEN --set wafer.rank_grid=$g \
        --set fft.field=random --set fft.precision=single
    for d in 1 2; do
      # shellcheck disable=SC2086
      agrees "uneven waves ${d}D, ranks $g" 4 1e-12 $UNEVEN --set wafer.rank_grid=$g --set fft.dims=$d
    done
    # Real data: the half spectrum (nz/2 + 1 = 12 along z, even nz 22 too).
    for d in 1 2 3; do
      # shellcheck disable=SC2086
      agrees "uneven r2c waves ${d}D, ranks $g" $((d == 3 ? 5 : 4)) 1e-12 $UNEVEN \
          --set wafer.rank_grid=$g --set fft.transform=r2c --set fft.dims=$d
    done
    # shellcheck disable=SC2086
    agrees "uneven r2c single random, ranks $g" 4 1e-5 $UNEVEN --set fft.nz=22 \
        --set wafer.rank_grid=$g --set fft.transform=r2c --set fft.field=random --set fft.precision=single
  done
  # The layout the transform ran on, as the report says.
  fft $UNEVEN --set wafer.rank_grid=auto --json g.json > /dev/null
  expect "json g.json \"j['rank_grid'] == [1, $ranks]\"" "the FFT's auto rank grid is not 1 x ranks"
  expect "json g.json \"j['fft']['transform'] == 'c2c'\"" "the transform is not named in the JSON"
  ;;
output)
  # An HDF5 input (h5py's complex compound, and real float32) transformed and
  # written as nz x ny x nx; the output against numpy's FFT of the same data.
  /usr/bin/python3 - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(7)
a = rng.standard_normal((9, 8, 11)) + 1j * rng.standard_normal((9, 8, 11))  # nz, ny, nx
with h5py.File("in.h5", "w") as f:
    f["field"] = a
    f["real32"] = a.real.astype(np.float32)
np.save("a.npy", a)
PY
  SIZE="--set wafer.pe_grid=4x3 --set fft.nx=11 --set fft.ny=8 --set fft.nz=9 --set fft.input=in.h5"
  for ds in field real32; do
    for d in 2 3; do
      # shellcheck disable=SC2086
      fft $SIZE --set fft.input_dataset=$ds --set fft.dims=$d --set output.file=o.h5 --json o.json > /dev/null
      expect "[ $? -eq 0 ] && [ -s o.h5 ] && [ -s o.xmf ]" "$ds ${d}D: no output"
      # Parseval, round trip, FFTW (3D: both of FFTW-MPI's layouts).
      expect "json o.json \"j['status'] == 'ok' and j['checks']['failed'] == 0 and j['checks']['passed'] == ((4 if $have_fftw_mpi else 2) if $d == 3 else 3) + $MODEL\"" "$ds ${d}D: checks"
      cat > cmp.py <<PY
import h5py, numpy as np, sys
a = np.load("a.npy")
if "$ds" == "real32": a = a.real.astype(np.float32).astype(float)
F = np.fft.fftn(a) if $d == 3 else np.fft.fftn(a, axes=(0, 2))  # z, then x
with h5py.File("o.h5") as f:
    G = f["forward_re"][...] + 1j * f["forward_im"][...]
sys.exit(0 if G.shape == F.shape and np.abs(G - F).max() <= 1e-12 * np.abs(F).max() else 1)
PY
      expect "/usr/bin/python3 cmp.py" "$ds ${d}D: output differs from numpy's FFT"
      expect "grep -q 'forward_re' o.xmf && grep -q 'forward_im' o.xmf && grep -q 'Dimensions=\"9 8 11\"' o.xmf" \
             "$ds ${d}D: XDMF sidecar lacks the fields: $(cat o.xmf)"
      # ParaView, where installed, reads both fields as written (once: the
      # sidecar's shape and fields are the same for every input and rank).
      if [ $ds$d = field3 ] && command -v pvbatch > /dev/null && command -v xvfb-run > /dev/null; then
        paraview_reads o.xmf "$ds ${d}D"
      fi
      rm -f o.h5 o.xmf
    done
  done
  # An all-zero input: every check compares 0 with 0 and passes (not NaN).
  /usr/bin/python3 -c "import h5py, numpy as np; h5py.File('zero.h5', 'w')['field'] = np.zeros((9, 8, 11), complex)"
  # shellcheck disable=SC2086
  fft $SIZE --set fft.input=zero.h5 --set fft.input_dataset=field --json z.json > /dev/null
  expect "[ $? -eq 0 ] && json z.json \"j['status'] == 'ok' and j['checks']['failed'] == 0 and j['fft']['parseval_rel_error'] == 0\"" \
         "all-zero input: $(cat z.json)"
  # Values of 1e-160: their squares underflow unless scaled first (Parseval
  # failed, and the round trip compared 0 with 0).
  /usr/bin/python3 -c "import h5py, numpy as np; h5py.File('tiny.h5', 'w')['field'] = np.random.default_rng(3).standard_normal((9, 8, 11)) * 1e-160 + 0j"
  # shellcheck disable=SC2086
  fft $SIZE --set fft.input=tiny.h5 --set fft.input_dataset=field --json t.json > /dev/null
  expect "[ $? -eq 0 ] && json t.json \"j['status'] == 'ok' and j['checks']['failed'] == 0 and 0 < j['fft']['roundtrip_rel_error'] < 1e-13\"" \
         "tiny input: $(cat t.json)"
  # docs/running.md's example (128^3 on 128 x 128 PEs): its checks' tolerances
  # follow the size (a fixed 1e-12 failed Parseval here).
  fft --set wafer.pe_grid=128x128 --set fft.nx=128 --set fft.ny=128 --set fft.nz=128 --json big.json > /dev/null
  expect "[ $? -eq 0 ] && json big.json \"j['status'] == 'ok' and j['checks']['failed'] == 0\"" \
         "128^3: $(json big.json 'print(j[\"fft\"], j[\"checks\"]) or 1' 2>&1)"
  # Real data (r2c): numpy's rfftn, the nz/2 + 1 = 5 non-negative frequencies along z.
  # shellcheck disable=SC2086
  fft $SIZE --set fft.input_dataset=real32 --set fft.transform=r2c --set output.file=r.h5 --json r.json > /dev/null
  expect "[ $? -eq 0 ] && json r.json \"j['status'] == 'ok' and j['checks']['passed'] == (4 if $have_fftw_mpi else 2) + $MODEL\"" "r2c: run or checks"
  cat > rcmp.py <<'PY'
import h5py, numpy as np, sys
a = np.load("a.npy").real.astype(np.float32).astype(float)
F = np.fft.rfftn(a, axes=(1, 2, 0))  # the last axis listed is halved: z
with h5py.File("r.h5") as f:
    G = f["forward_re"][...] + 1j * f["forward_im"][...]
sys.exit(0 if G.shape == F.shape == (5, 8, 11) and np.abs(G - F).max() <= 1e-12 * np.abs(F).max() else 1)
PY
  expect "/usr/bin/python3 rcmp.py" "r2c: output differs from numpy's rfftn"
  # Wisdom: written after planning, read by the next run; a file that is not
  # wisdom is a warning (planning from scratch), not an error.
  fft --set fft.planner=measure --set fft.nx=32 --set fft.ny=32 --set fft.nz=32 \
      --set wafer.pe_grid=8x8 --set fft.wisdom=w.txt > /dev/null
  expect "[ $? -eq 0 ] && grep -q 'fftw_wisdom' w.txt" "no wisdom written"
  fft --set fft.planner=measure --set fft.nx=32 --set fft.ny=32 --set fft.nz=32 \
      --set wafer.pe_grid=8x8 --set fft.wisdom=w.txt > /dev/null 2> w.err
  expect "[ $? -eq 0 ] && [ ! -s w.err ]" "a run reading wisdom failed or complained: $(cat w.err)"
  echo "not wisdom" > bad.txt
  fft --set fft.nx=32 --set fft.ny=32 --set fft.nz=32 --set wafer.pe_grid=8x8 \
      --set fft.wisdom=bad.txt > /dev/null 2> b.err
  # A file that is not wisdom would be rewritten: refused before any work,
  # and left as it was.
  expect "[ $? -eq 2 ] && grep -q 'is not FFTW double-precision wisdom, and the run would rewrite it' b.err && [ \"\$(cat bad.txt)\" = 'not wisdom' ]" \
         "bad wisdom: $(cat b.err)"
  # A wisdom file is written as every output is: a missing directory is bad input.
  fft --set fft.nx=32 --set fft.ny=32 --set fft.nz=32 --set wafer.pe_grid=8x8 \
      --set fft.wisdom=/nonexistent-dir/w.txt --json nw.json > /dev/null 2> nw.err
  expect "[ $? -eq 2 ] && grep -q 'wisdom = /nonexistent-dir/w.txt: its directory /nonexistent-dir does not exist' nw.err && [ ! -e nw.json ]" \
         "unwritable wisdom: $(cat nw.err)"
  ;;
bad_input)
  bad() { expect_bad_input fft "$@"; }
  bad "[fft] nx = 0: out of range" --set fft.nx=0
  bad "[fft] nz = -8: out of range" --set fft.nz=-8
  bad "[fft] dims = 4: out of range" --set fft.dims=4
  bad "nx and ny must be at least the PE grid's columns and rows" --set fft.nx=32
  bad "nz must be at least the PE grid's 64 columns" --set fft.nz=16
  bad "nx must be at least the PE grid's 80 rows" --set wafer.pe_grid=64x80 --set fft.ny=80
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('in.h5', 'w') as f:
    f['flat'] = np.zeros((64, 64))
    f['ints'] = np.zeros((64, 64, 64), dtype=np.int32)
    f['field'] = np.zeros((64, 64, 32))
"
  bad "[fft] input = in.h5: dataset 'flat' has shape 64 x 64; [fft] nx, ny, nz ask for nz x ny x nx = 64 x 64 x 64" \
      --set fft.input=in.h5 --set fft.input_dataset=flat
  bad "dataset 'field' has shape 64 x 64 x 32" --set fft.input=in.h5
  bad "dataset 'ints' holds neither floating-point values nor complex ones" \
      --set fft.input=in.h5 --set fft.input_dataset=ints
  bad "'in.h5' has no dataset 'nosuch'" --set fft.input=in.h5 --set fft.input_dataset=nosuch
  echo "not hdf5" > junk.h5
  bad "cannot open 'junk.h5' as an HDF5 file" --set fft.input=junk.h5
  bad "[fft] input = missing.h5" --set fft.input=missing.h5
  bad "nz/2 + 1 (real input) must be at least the PE grid's 64 columns" --set fft.transform=r2c
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('c.h5', 'w') as f: f['field'] = np.zeros((130, 64, 64), dtype=complex)
"
  bad "dataset 'field' holds complex values; a real-to-complex transform (fft.transform = r2c) needs real ones" \
      --set fft.transform=r2c --set fft.nz=130 --set fft.input=c.h5
  # Values below the precision's smallest normal number: flushed to 0 in
  # single (all zeros, and every check passed), subnormal in double.
  /usr/bin/python3 -c "
import h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File('tiny.h5', 'w') as f:
    f['field'] = 1e-50 * (rng.standard_normal((64, 64, 64)) + 1j * rng.standard_normal((64, 64, 64)))
    f['sub'] = 1e-310 * (1 + rng.random((64, 64, 64)))
    t = rng.standard_normal((64, 64, 64)); t[0, 0, :8] = 1e-40
    f['tails'] = t
"
  bad "below 1.18e-38, the smallest normal number of single precision" \
      --set fft.input=tiny.h5 --set fft.precision=single
  bad "below 2.23e-308, the smallest normal number of double precision" \
      --set fft.input=tiny.h5 --set fft.input_dataset=sub
  mpiexec -n "$ranks" "$wafer" fft --quiet --set fft.input=tiny.h5 --set fft.crosscheck=none \
      --set fft.planner=estimate --json tiny.json > /dev/null
  expect "[ $? -eq 0 ] && json tiny.json \"j['status'] == 'ok'\"" "1e-50 in double: transformed and checked"
  # Parts below single's smallest normal beside values near 1: below the
  # rounding of the field, flushed harmlessly.
  mpiexec -n "$ranks" "$wafer" fft --quiet --set fft.input=tiny.h5 --set fft.input_dataset=tails \
      --set fft.precision=single --set fft.crosscheck=none --set fft.planner=estimate --json tails.json > /dev/null
  expect "[ $? -eq 0 ] && json tails.json \"j['status'] == 'ok'\"" "1e-40 tails beside values near 1 in single: refused or failed"
  ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac

finish "fft $case_name"
