#!/usr/bin/env bash
# End-to-end tests of `wafer tlrmvm`: tlrmvm.sh CASE RANKS WAFER_BINARY
# Prints "tlrmvm CASE (N ranks): N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
tlr() { mpiexec -n "$ranks" "$wafer" tlrmvm --quiet --set tlrmvm.stream=false "$@"; }
# A survey run checks its dense operator against the Green's function and
# the compression's ||A - A_tlr||_F against the dense operator; a run with
# MDD checks LSQR's residuals against their recomputation and, on more than
# one rank, that every rank's copies of the solutions hold the same bits.
same=$((ranks > 1 ? 1 : 0))
# 20 x 20 grids (400 x 400 operators, 7 x 7 ragged tiles of 60), two frequencies.
SMALL="--set tlrmvm.src_nx=20 --set tlrmvm.src_ny=20 --set tlrmvm.rec_nx=20 --set tlrmvm.rec_ny=20
       --set tlrmvm.nb=60 --set tlrmvm.frequencies=10,25 --set tlrmvm.repeat=3"

case $case_name in
numpy)
  # wafer's compressed bases and products against numpy's dense operator,
  # built independently (its own Hilbert curve), on every rank grid these
  # ranks allow; the products the same as on one rank.
  grids="auto"
  [ "$ranks" -eq 2 ] && grids="auto 2x1"
  [ "$ranks" -eq 4 ] && grids="auto 2x2 4x1"
  mpiexec -n 1 "$wafer" tlrmvm --quiet --set tlrmvm.stream=false $SMALL --set output.file=one.h5 > /dev/null
  for g in $grids; do
    rm -f c.h5 o.h5
    # shellcheck disable=SC2086
    tlr $SMALL --set wafer.rank_grid=$g --set tlrmvm.compressed=c.h5 --set output.file=o.h5 \
        --set tlrmvm.plot=ranks.png --set tlrmvm.mdd_plot=mdd.png --json j.json > /dev/null
    expect "[ $? -eq 0 ]" "ranks $g: run failed"
    expect "json j.json \"j['status'] == 'ok' and j['checks'] == {'passed': $((8 + same)), 'failed': 0}\"" \
           "ranks $g: checks $(json j.json 'print(j["checks"]) or 1' 2>&1)"
    expect "/usr/bin/python3 $here/tlr_numpy.py c.h5 o.h5 20 20 500 60 1e-4 > numpy.txt" \
           "ranks $g: numpy disagrees: $(cat numpy.txt)"
    expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('one.h5'), h5py.File('o.h5')
d = max(np.abs(a[k][...] - b[k][...]).max() / np.abs(a[k][...]).max() for k in ('y_0', 'y_1'))
sys.exit(0 if d <= 1e-5 else 1)\"" "ranks $g: y differs from the 1-rank run's"
    expect "[ -s ranks.png ] && [ -s mdd.png ]" "no rank map or MDD plot"
    expect "grep -q 'MDD dense: residual' numpy.txt" "numpy saw no MDD"
  done
  # Each tile's own norm and ranks rounded to multiples of 8: still within acc.
  rm -f c.h5 o.h5
  # shellcheck disable=SC2086
  tlr $SMALL --set tlrmvm.norm=tile --set tlrmvm.rank_multiple=8 --set tlrmvm.compressed=c.h5 \
      --set output.file=o.h5 --json t.json > /dev/null
  expect "json t.json \"j['checks']['failed'] == 0 and j['tlrmvm']['error'] <= 1e-4 + 1e-5\"" "tile norm"
  # Undamped MDD: LSQR's iteration count regularises; the difference is
  # reported, not counted as a check.
  # shellcheck disable=SC2086
  tlr $SMALL --set tlrmvm.mdd_damp=0 --set tlrmvm.mdd_iterations=15 --json u.json > u.txt
  expect "json u.json \"j['checks'] == {'passed': $((7 + same)), 'failed': 0} and j['mdd']['iterations'] == 15 and 'misfit_bound' not in j['mdd']\"" \
         "undamped MDD"
  expect "/usr/bin/python3 -c \"
import h5py, sys; r = h5py.File('c.h5')['ranks_0'][...]
sys.exit(0 if ((r % 8 == 0) | (r == 60) | (r == 40)).all() else 1)\"" "ranks not multiples of 8"
  ;;
systems)
  # Frequencies shared out over systems (groups of ranks, a wafer each), as
  # GB23 over its CS-2s: the same products as one rank's, and MDD.
  # shellcheck disable=SC2086
  mpiexec -n 1 "$wafer" tlrmvm --quiet --set tlrmvm.stream=false $SMALL --set tlrmvm.frequencies=10,25,40,55 \
      --set output.file=one.h5 > /dev/null
  for k in 2 4; do
    [ $((ranks % k)) -eq 0 ] || continue
    rm -f c.h5
    # shellcheck disable=SC2086
    tlr $SMALL --set tlrmvm.frequencies=10,25,40,55 --set tlrmvm.systems=$k --set tlrmvm.compressed=c.h5 \
        --set output.file=o.h5 --json j.json > /dev/null
    expect "json j.json \"j['status'] == 'ok' and j['checks'] == {'passed': 9, 'failed': 0} and j['model']['systems'] == $k\"" \
           "$k systems: checks $(json j.json 'print(j["checks"]) or 1' 2>&1)"
    expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('one.h5'), h5py.File('o.h5')
d = max(np.abs(a[k][...] - b[k][...]).max() / np.abs(a[k][...]).max() for k in ('y_0', 'y_1', 'y_2', 'y_3'))
m = max(np.abs(a[k][...] - b[k][...]).max() / np.abs(a[k][...]).max() for k in ('mdd_tlr_0', 'mdd_tlr_3'))
sys.exit(0 if d <= 1e-5 and m <= 1e-3 else 1)\"" "$k systems: products or MDD differ from one rank's"
    expect "/usr/bin/python3 $here/tlr_numpy.py c.h5 o.h5 20 20 500 60 1e-4 > numpy.txt" \
           "$k systems: numpy disagrees: $(cat numpy.txt)"
  done
  ;;
reuse)
  # A compressed file is reused: same products, bitwise; another deck's is refused.
  rm -f c.h5
  # shellcheck disable=SC2086
  tlr $SMALL --set tlrmvm.compressed=c.h5 --set output.file=a.h5 --json a.json > /dev/null
  # shellcheck disable=SC2086
  tlr $SMALL --set tlrmvm.compressed=c.h5 --set output.file=b.h5 --json b.json > /dev/null
  expect "json a.json \"not j['tlrmvm']['loaded']\" && json b.json \"j['tlrmvm']['loaded'] and j['status'] == 'ok'\"" \
         "second run did not read the compressed file"
  expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('a.h5'), h5py.File('b.h5')
sys.exit(0 if all((a[k][...] == b[k][...]).all() for k in ('y_0', 'y_1')) else 1)\"" \
         "products from the reused file differ"
  # shellcheck disable=SC2086
  expect_bad_input tlrmvm "holds another operator" $SMALL --set tlrmvm.compressed=c.h5 \
      --set tlrmvm.acc=1e-3
  ;;
input)
  # The operators as dense HDF5 input (h5py's complex values, built by numpy):
  # the same products as from the survey, and numpy agrees with the bases.
  /usr/bin/python3 - "$here" <<'PY'
import sys
import h5py, numpy as np
sys.path.insert(0, sys.argv[1])
import tlr_numpy
src, rec = tlr_numpy.points(20, 20, 0.0), tlr_numpy.points(20, 20, 500.0)
r = np.sqrt(((rec[:, None, :] - src[None, :, :]) ** 2).sum(-1))
with h5py.File("dense.h5", "w") as f:
    for q, hz in enumerate((10.0, 25.0)):
        f["A_%d" % q] = (np.exp(-1j * 2 * np.pi * hz / 2000.0 * r) / (4 * np.pi * r)).astype(np.complex64)
PY
  rm -f c.h5
  # shellcheck disable=SC2086
  tlr $SMALL --set output.file=s.h5 > /dev/null
  # shellcheck disable=SC2086
  tlr $SMALL --set tlrmvm.input=dense.h5 --set tlrmvm.compressed=c.h5 --set output.file=d.h5 \
      --json d.json > /dev/null
  expect "json d.json \"j['status'] == 'ok' and j['checks'] == {'passed': 5, 'failed': 0}\"" \
         "dense input: checks $(json d.json 'print(j["checks"]) or 1' 2>&1)"
  expect "/usr/bin/python3 $here/tlr_numpy.py c.h5 d.h5 20 20 500 60 1e-4 dense.h5 > numpy.txt" \
         "dense input: numpy disagrees: $(cat numpy.txt)"
  expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('s.h5'), h5py.File('d.h5')
d = max(np.abs(a[k][...] - b[k][...]).max() / np.abs(a[k][...]).max() for k in ('y_0', 'y_1'))
sys.exit(0 if d <= 1e-4 else 1)\"" "dense input: products differ from the survey's"
  # An operator that is zero everywhere, or too small for single precision
  # to keep its digits: input errors naming the dataset (every check is
  # relative to ||A||_F; they failed on NaN before).
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('zero.h5', 'w') as f:
    f['A_0'] = np.zeros((400, 400), np.complex64); f['A_1'] = np.ones((400, 400), np.complex64)"
  # shellcheck disable=SC2086
  expect_bad_input tlrmvm "dataset 'A_0' is zero everywhere" $SMALL --set tlrmvm.input=zero.h5
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('tiny.h5', 'w') as f:
    f['A_0'] = np.full((400, 400), 1e-170, np.complex128); f['A_1'] = np.ones((400, 400), np.complex64)"
  # shellcheck disable=SC2086
  expect_bad_input tlrmvm "below the 9.86e-32 that single precision keeps" $SMALL --set tlrmvm.input=tiny.h5
  # The cache is keyed by the input's content, not its name: a changed input
  # under the same name is refused with the old cache named (it ran on the
  # old operator, status ok, before).
  /usr/bin/python3 -c "
import h5py
with h5py.File('dense.h5', 'r+') as f: f['A_0'][0, 0] = 2 * f['A_0'][0, 0]"
  expect_bad_input tlrmvm "[tlrmvm] compressed = c.h5" $SMALL --set tlrmvm.input=dense.h5 \
      --set tlrmvm.compressed=c.h5 --set tlrmvm.dense=none
  expect "grep -q 'holds another operator' err.txt && grep -q 'input_content=size=' err.txt" \
         "a changed input: $(cat err.txt)"
  ;;
bad_input)
  expect_bad_input tlrmvm "tile size 2000 is larger than the 1600 x 1600 matrix" --set tlrmvm.nb=2000
  expect_bad_input tlrmvm "must lie strictly between 0 and 1" --set tlrmvm.acc=0
  expect_bad_input tlrmvm "must lie strictly between 0 and 1" --set tlrmvm.acc=1
  expect_bad_input tlrmvm "expected positive frequencies" --set tlrmvm.frequencies=
  expect_bad_input tlrmvm "expected positive frequencies" --set tlrmvm.frequencies=0
  expect_bad_input tlrmvm "expected positive frequencies" --set tlrmvm.frequencies=5:1:3
  expect_bad_input tlrmvm "meet" --set tlrmvm.rec_depth=0
  expect_bad_input tlrmvm "give the tiles' rank" --set tlrmvm.model_only=true
  expect_bad_input tlrmvm "a tile of 64 x 64 has rank at most 64" --set tlrmvm.model_only=true \
      --set tlrmvm.model_rank=65
  expect_bad_input tlrmvm "[tlrmvm] frequencies = 1e308: 1e+308 Hz turns the kernel's phase" \
      --set tlrmvm.frequencies=1e308
  # the depth the user gave is the one named
  expect_bad_input tlrmvm "[tlrmvm] src_depth = 500: sources and receivers at the same depth" \
      --set tlrmvm.src_depth=500
  # A model-only run of a 10,000 x 10,000 survey each way (2.4e12 tiles of
  # 64): the model's closed form takes well under a second, not days.
  timeout 60 mpiexec -n "$ranks" "$wafer" tlrmvm --set tlrmvm.model_only=true --set tlrmvm.model_rank=8 \
      --set tlrmvm.src_nx=10000 --set tlrmvm.src_ny=10000 --set tlrmvm.rec_nx=10000 \
      --set tlrmvm.rec_ny=10000 --quiet --json big.json > /dev/null
  # 8 flops a complex element, rank 8, 1562500 tiles of 64 each way: 8 x 8 x 2 x 1562500 x 10^8
  expect "[ $? -eq 0 ] && json big.json \"abs(j['model']['flops_per_unit'] / 2e16 - 1) < 1e-8\"" \
         "model-only 10^8 x 10^8: $(cat big.json 2>/dev/null | tail -c 200)"
  expect_bad_input tlrmvm "3 systems need a multiple of 3 ranks" --set tlrmvm.systems=3 \
      --set tlrmvm.frequencies=5,10,20
  expect_bad_input tlrmvm "at most one system a frequency" --set tlrmvm.systems=2
  head -c 5000 /dev/urandom > junk.h5
  expect_bad_input tlrmvm "cannot open 'junk.h5' as an HDF5 file" --set tlrmvm.compressed=junk.h5
  expect_bad_input tlrmvm "cannot open 'junk.h5' as an HDF5 file" --set tlrmvm.input=junk.h5
  # A compressed file cut short (U loses rows), or with an impossible rank.
  rm -f c.h5
  tlr --set tlrmvm.compressed=c.h5 > /dev/null
  /usr/bin/python3 - <<'PY'
import h5py
for name, edit in (("short.h5", "U"), ("rank.h5", "ranks"), ("nan.h5", "W")):
    src, dst = h5py.File("c.h5"), h5py.File(name, "w")
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    for k in src:
        data = src[k][...]
        if k == edit + "_0" and edit == "U":
            data = data[:-7]
        if k == edit + "_0" and edit == "ranks":
            data[1, 2] = 999
        if k == edit + "_0" and edit == "W":
            data[5, 1] = float("nan")
        dst[k] = data
PY
  expect_bad_input tlrmvm "'U_0' is not" --set tlrmvm.compressed=short.h5
  expect_bad_input tlrmvm "has rank 999" --set tlrmvm.compressed=rank.h5
  expect_bad_input tlrmvm "'nan.h5': dataset 'W_0' holds NaN: inputs must be finite" --set tlrmvm.compressed=nan.h5
  # Dense input of the wrong kind or shape.
  /usr/bin/python3 -c "
import h5py, numpy as np
f = h5py.File('real.h5', 'w'); f['A_0'] = np.ones((30, 40))
g = h5py.File('shape.h5', 'w'); g['A_0'] = np.ones((30, 40), np.complex64); g['A_1'] = np.ones((30, 41), np.complex64)
h = h5py.File('one.h5', 'w'); h['A_0'] = np.ones((30, 40), np.complex64)
a = np.ones((30, 40), np.complex64); a[3, 4] = np.inf; n = h5py.File('inf.h5', 'w'); n['A_0'] = a"
  expect_bad_input tlrmvm "is not a complex matrix" --set tlrmvm.input=real.h5 --set tlrmvm.nb=10
  expect_bad_input tlrmvm "'A_1' is 30 x 41" --set tlrmvm.input=shape.h5 --set tlrmvm.nb=10 \
      --set tlrmvm.frequencies=5,10
  expect_bad_input tlrmvm "'inf.h5': dataset 'A_0' holds an infinite value" --set tlrmvm.input=inf.h5 --set tlrmvm.nb=10
  expect_bad_input tlrmvm "has no dataset 'A_1'" --set tlrmvm.input=one.h5 --set tlrmvm.nb=10 --set tlrmvm.frequencies=5,10
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish "tlrmvm $case_name"
