#!/usr/bin/env bash
# End-to-end tests of the SDK example kernels (src/sdk/): sdk.sh CASE RANKS WAFER_BINARY
# Prints "sdk CASE (N ranks): N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
sdk() { mpiexec -n "$ranks" "$wafer" "$@" --quiet; }
# Fresh pages are zero: a read of memory never written would pass unseen.
# glibc fills what malloc hands out with this byte instead (a review found
# Cholesky's multicast headers read so on 1 x N rank grids).
export MALLOC_PERTURB_=165
# checks J PASSED: the run's status is ok and it passed PASSED checks, failed
# none (a reference this build lacks is reported apart: `unavailable`).
checks() {
  expect "json $1 \"j['status'] == 'ok' and (j['checks']['passed'], j['checks']['failed']) == ($2, 0)\"" \
         "$1: $(json "$1" 'print(j.get("status"), j.get("checks")) or 1' 2>&1)"
}

case $case_name in
mandelbrot)
  # Every pixel's count against numpy's complex arithmetic (written here,
  # apart from both the kernel and the run's serial reference), on this
  # rank count and on rank grids it allows; the same counts as one rank's.
  grids="auto"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  for g in $grids; do
    # The imaginary range is not symmetric: a kernel that mirrors the image
    # in y would otherwise give the same counts.
    sdk mandelbrot --set mandelbrot.width=203 --set mandelbrot.height=151 --set wafer.pe_grid=13x7 \
        --set wafer.rank_grid=$g --set mandelbrot.max_iters=300 --set mandelbrot.im_min=-1.0 \
        --set mandelbrot.im_max=1.2 --set output.file=m.h5 --set mandelbrot.plot=m.png > m.json
    expect "[ $? -eq 0 ]" "grid $g: run failed"
    checks m.json 1
    # The model from numpy's counts: the busiest PE (bands of floor(N k / n)
    # pixels) at 14 cycles an iteration and 13 a pixel, at WSE-2's 1.1 GHz
    # (the fast end; the slow end a square root at 11 and a division at 8:
    # 24 and 27 at 0.85 GHz; src/sdk/mandelbrot.c, docs/model.md).
    expect "/usr/bin/python3 - <<'PY'
import h5py, json, numpy as np, sys
w, h, n, pex, pey = 203, 151, 300, 13, 7
x = -2.25 + (np.arange(w) + 0.5) * (0.75 + 2.25) / w
y = -1.0 + (np.arange(h) + 0.5) * (1.2 + 1.0) / h
c = x[None, :] + 1j * y[:, None]
z = np.zeros_like(c)
count = np.zeros(c.shape, dtype=np.int64)
live = np.ones(c.shape, dtype=bool)
for _ in range(n):
    live &= z.real * z.real + z.imag * z.imag <= 4.0
    z = np.where(live, z * z + c, z)
    count += live
got = h5py.File('m.h5')['iterations'][...]
if got.shape != (h, w) or (got != count).any():
    sys.exit('counts differ from numpy\'s in %d pixels' % (got != count).sum())
bx = [w * k // pex for k in range(pex + 1)]
by = [h * k // pey for k in range(pey + 1)]
pes = [(count[by[j]:by[j + 1], bx[i]:bx[i + 1]].sum(), (bx[i + 1] - bx[i]) * (by[j + 1] - by[j]))
       for j in range(pey) for i in range(pex)]
lo = max(14 * it + 13 * px for it, px in pes) / 1.1e9
hi = max(24 * it + 27 * px for it, px in pes) / 0.85e9
m = json.load(open('m.json'))['model']['seconds_per_unit']
sys.exit(0 if abs(m[0] / lo - 1) < 1e-8 and abs(m[1] / hi - 1) < 1e-8 else 'model %s, numpy %s' % (m, [lo, hi]))
PY" "grid $g: counts or model differ from numpy's"
    expect "[ -s m.png ]" "grid $g: no plot"
    expect "json m.json \"j['mandelbrot']['pe_imbalance'] > 1\"" \
           "grid $g: no imbalance or model"
  done
  ;;
life)
  # The last generation against numpy's (np.roll on a periodic board, a
  # zero border on a bounded one) from the run's own first generation; the
  # glider's travel; boards whose PE blocks are not square.
  for args in "--set life.periodic=true" "--set life.periodic=false" \
              "--set life.cells_per_pe=3x5 --set wafer.pe_grid=7x5 --set life.density=0.5"; do
    # shellcheck disable=SC2086
    sdk life --set wafer.pe_grid=12x10 --set life.cells_per_pe=6x4 --set life.generations=37 $args \
        --set output.file=l.h5 --set life.plot=l.png > l.json
    expect "[ $? -eq 0 ]" "$args: run failed"
    checks l.json 1
    periodic=$(json l.json "'periodic=false' not in '''$args'''" && echo 1 || echo 0)
    expect "/usr/bin/python3 - $periodic <<'PY'
import h5py, numpy as np, sys
f = h5py.File('l.h5')
g, last = f['initial'][...].astype(np.int64), f['cells'][...]
periodic = sys.argv[1] == '1'
for _ in range(37):
    p = np.pad(g, 1, mode='wrap' if periodic else 'constant')
    n = sum(p[1 + dy:p.shape[0] - 1 + dy, 1 + dx:p.shape[1] - 1 + dx]
            for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy)
    g = ((n == 3) | ((g == 1) & (n == 2))).astype(np.int64)
sys.exit(0 if (g == last).all() and g.sum() > 0 else 1)
PY" "$args: the last generation differs from numpy's"
    expect "[ -s l.png ]" "$args: no plot"
  done
  # A glider on one cell a PE (the SDK's mapping): period 4, one cell diagonally.
  sdk life --set life.pattern=glider --set life.cells_per_pe=1x1 --set wafer.pe_grid=16x12 \
      --set life.generations=100 > g.json
  checks g.json 2
  expect "json g.json \"j['life']['alive_last'] == 5\"" "the glider lost cells"
  # Not a whole period: the travel is not checked, and the run says so.
  sdk life --set life.pattern=glider --set life.generations=41 > g41.json
  expect "json g41.json \"j['checks']['passed'] == 1 and 'glider' in str(j['checks'].get('unchecked', ''))\"" \
         "a glider run out of period claims its travel"
  ;;
gemm)
  # C against numpy's A @ B from the run's own A and B (HDF5), on rank grids
  # these ranks allow, with tiles of unequal sizes; a square grid only.
  grids="auto"
  [ "$ranks" -eq 2 ] && grids="auto 1x2"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  for g in $grids; do
    sdk gemm --set wafer.pe_grid=12x12 --set wafer.rank_grid=$g --set gemm.m=101 --set gemm.n=79 \
        --set gemm.k=53 --set gemm.repeat=2 --set output.file=g.h5 > g.json
    expect "[ $? -eq 0 ]" "grid $g: run failed"
    checks g.json 1
    expect "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, sys
f = h5py.File('g.h5')
a, b, c = f['A'][...], f['B'][...], f['C'][...]
want = a @ b
gamma = 55 * 2.0**-53 / (1 - 55 * 2.0**-53)
ok = a.shape == (101, 53) and b.shape == (53, 79) and np.all(np.abs(c - want) <= 2 * gamma * (np.abs(a) @ np.abs(b)))
ok = ok and abs(a[3, 5]) > 0 and a.std() > 0.5  # entries uniform in [-1, 1): no zeros left unwritten
sys.exit(0 if ok else 1)
PY" "grid $g: C differs from numpy's A @ B"
  done
  ;;
gemv)
  # y against numpy's A @ x + b from the run's own inputs (HDF5), on a
  # grid that is not square.
  grids="auto"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  for g in $grids; do
    sdk gemv --set wafer.pe_grid=9x14 --set wafer.rank_grid=$g --set gemv.m=150 --set gemv.n=61 \
        --set output.file=v.h5 > v.json
    expect "[ $? -eq 0 ]" "grid $g: run failed"
    checks v.json 1
    expect "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, sys
f = h5py.File('v.h5')
a, x, b, y = f['A'][...], f['x'][...], f['b'][...], f['y'][...]
gamma = 64 * 2.0**-53 / (1 - 64 * 2.0**-53)
bound = 2 * gamma * (np.abs(a) @ np.abs(x) + np.abs(b))
ok = a.shape == (150, 61) and y.shape == (150,) and np.all(np.abs(y - (a @ x + b)) <= bound)
sys.exit(0 if ok and np.abs(y).min() > 0 else 1)
PY" "grid $g: y differs from numpy's A @ x + b"
  done
  ;;
histogram)
  # Every bucket against numpy's count of the run's own values (HDF5), and
  # the model's busiest PE against a walk of every value's path round the
  # rings written here; uniform and skewed values, on rank grids these
  # ranks allow.
  grids="auto"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  for g in $grids; do
    for dist in uniform skewed; do
      sdk histogram --set wafer.pe_grid=13x9 --set wafer.rank_grid=$g --set histogram.distribution=$dist \
          --set histogram.values_per_pe=50 --set histogram.buckets_per_pe=3 \
          --set histogram.bucket_width=5 --set output.file=h.h5 > h.json
      expect "[ $? -eq 0 ]" "grid $g, $dist: run failed"
      checks h.json 1
      expect "/usr/bin/python3 - <<'PY'
import h5py, json, numpy as np, sys
f = h5py.File('h.h5')
values, counts = f['values'][...], f['counts'][...]
nx, ny, vpp, bpp, bw = 13, 9, 50, 3, 5
if values.shape != (ny, nx * vpp) or counts.shape != (ny, nx * bpp):
    sys.exit('shapes %s %s' % (values.shape, counts.shape))
want = np.bincount(values.ravel() // bw, minlength=nx * ny * bpp).reshape(ny, nx * bpp)
if (counts != want).any():
    sys.exit('%d buckets differ from numpy' % (counts != want).sum())
# each value's path: along its PE column to the target row, then along the row,
# the shorter way round each ring (ties: upward); every PE on it after the source
load = np.zeros((ny, nx))
def walk(a, b, n):
    up = (b - a) % n
    step = 1 if up <= n // 2 else -1
    return [(a + step * s) % n for s in range(1, (up if step == 1 else n - up) + 1)]
for y in range(ny):
    for x in range(nx):
        for v in values[y, x * vpp:(x + 1) * vpp]:
            pe = v // bw // bpp
            tx, ty = pe % nx, pe // nx
            for yy in walk(y, ty, ny): load[yy, x] += 1
            for xx in walk(x, tx, nx): load[ty, xx] += 1
j = json.load(open('h.json'))
sys.exit(0 if j['histogram']['busiest_pe_wavelets'] == load.max() else 'load %s, numpy %s' % (j['histogram']['busiest_pe_wavelets'], load.max()))
PY" "grid $g, $dist: counts or the busiest PE differ from numpy's"
    done
  done
  ;;
widemul)
  # Every product against Python's own integers from the run's limbs (HDF5:
  # /x, /y, /z), for random operands, all ones (every carry ripples across
  # every rank) and powers of two, with a width that is not a whole number
  # of limbs, on rank grids these ranks allow.
  grids="auto"
  [ "$ranks" -eq 4 ] && grids="auto 2x2 1x4"
  gmp_checks=$((have_gmp ? 2 : 1))
  for g in $grids; do
    for kind in random ones powers; do
      sdk widemul --set wafer.pe_grid=7x5 --set wafer.rank_grid=$g --set widemul.bits=1000 \
          --set widemul.operands=$kind --set output.file=w.h5 > w.json
      expect "[ $? -eq 0 ]" "grid $g, $kind: run failed"
      checks w.json $gmp_checks
      expect "/usr/bin/python3 - $kind <<'PY'
import h5py, sys
f = h5py.File('w.h5')
x, y, z = f['x'][...], f['y'][...], f['z'][...]
def number(limbs):
    return sum(int(v) << (32 * k) for k, v in enumerate(limbs))
ok = x.shape == (5, 32) and z.shape == (5, 64)
for j in range(5):
    a, b, c = number(x[j]), number(y[j]), number(z[j])
    ok = ok and c == a * b and a < 2**1000 and b < 2**1000
    if sys.argv[1] == 'ones':
        ok = ok and a == b == 2**1000 - 1
    if sys.argv[1] == 'powers':
        ok = ok and a == 2**999 and b == 2**(999 - j)
sys.exit(0 if ok else 1)
PY" "grid $g, $kind: a product differs from Python's"
    done
  done
  ;;
cholesky)
  # L against numpy's Cholesky of the run's own A (HDF5), L L' = A, a zero
  # upper triangle and the generated matrix's condition, on rank grids these
  # ranks allow, with tiles of unequal sizes; then a user's Matrix Market
  # file (a 2D Laplacian written here, some entries stored above the
  # diagonal), and an indefinite one refused naming the pivot numpy finds.
  grids="auto"
  [ "$ranks" -eq 2 ] && grids="auto 1x2"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  for g in $grids; do
    sdk cholesky --set wafer.pe_grid=7x7 --set wafer.rank_grid=$g --set cholesky.n=103 \
        --set cholesky.cond=1e5 --set cholesky.repeat=2 --set output.file=c.h5 > c.json
    expect "[ $? -eq 0 ]" "grid $g: run failed"
    checks c.json 2
    expect "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, sys
f = h5py.File('c.h5')
l, a = f['L'][...], f['A'][...]
a = np.tril(a) + np.tril(a, -1).T
want = np.linalg.cholesky(a)
gamma = 105 * 2.0**-53 / (1 - 105 * 2.0**-53)
ok = l.shape == (103, 103) and not np.triu(l, 1).any()
ok = ok and abs(np.linalg.cond(a) / 1e5 - 1) < 1e-6
ok = ok and np.all(np.abs(l @ l.T - a) <= 2 * gamma * (np.abs(l) @ np.abs(l).T))
ok = ok and np.linalg.norm(l - want) <= 1e5 * 1e3 * 2.0**-53 * np.linalg.norm(want)
sys.exit(0 if ok else 1)
PY" "grid $g: L differs from numpy's Cholesky of A"
  done
  /usr/bin/python3 - <<'PY'
k = 12
for name, diag in (('lap.mtx', 4.0), ('indef.mtx', 2.0)):
    ents = []
    for j in range(k):
        for i in range(k):
            r = j * k + i
            ents.append((r, r, diag))
            if i > 0: ents.append((r, r - 1, -1.0))
            if j > 0: ents.append((r - k, r, -1.0))  # the upper triangle: mirrored on reading
    with open(name, 'w') as f:
        f.write('%%%%MatrixMarket matrix coordinate real symmetric\n%% a 2D Laplacian\n%d %d %d\n' % (k * k, k * k, len(ents)))
        f.writelines('%d %d %.17g\n' % (r + 1, c + 1, v) for r, c, v in ents)
PY
  sdk cholesky --set wafer.pe_grid=5x5 --set cholesky.matrix=lap.mtx --set output.file=lap.h5 > lap.json
  expect "[ $? -eq 0 ]" "Laplacian: run failed"
  checks lap.json 2
  expect "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, scipy.io, sys
a = scipy.io.mmread('lap.mtx').toarray()
l = h5py.File('lap.h5')['L'][...]
sys.exit(0 if np.abs(l - np.linalg.cholesky(a)).max() < 1e-13 else 1)
PY" "Laplacian: L differs from numpy's"
  pivot=$(/usr/bin/python3 -c "
import numpy as np, scipy.io
a = scipy.io.mmread('indef.mtx').toarray()
print(next(m for m in range(1, len(a) + 1) if np.linalg.eigvalsh(a[:m, :m]).min() <= 0))")
  mpiexec -n "$ranks" "$wafer" cholesky --quiet --set wafer.pe_grid=5x5 --set cholesky.matrix=indef.mtx \
      --set output.file=indef.h5 > /dev/null 2> err.txt
  rc=$?
  expect "[ $rc -eq 2 ]" "indefinite: exit status $rc"
  expect "grep -q 'not positive definite: the pivot of row and column $pivot ' err.txt" \
         "indefinite: no pivot $pivot named: $(cat err.txt)"
  expect "[ ! -e indef.h5 ]" "indefinite: output written"
  ;;
spmv)
  # y against scipy's A @ x from the run's own x (HDF5) for Matrix Market
  # files written here: a rectangular general one in no order with repeated
  # entries, a symmetric pattern one, an integer one; the imbalance from the
  # file's entries over the bands; the generated Laplacian against scipy's
  # own; balanced bands give the same y as equal ones, and less imbalance.
  # Every run also checks itself against PETSc's MatMult where PETSc is in.
  grids="auto"
  [ "$ranks" -eq 2 ] && grids="auto 1x2"
  [ "$ranks" -eq 4 ] && grids="auto 4x1 1x4"
  /usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(5)
def write(name, head, m, n, ents, fmt):
    with open(name, 'w') as f:
        f.write('%%%%MatrixMarket matrix coordinate %s\n%% made by tests/e2e/sdk.sh\n%d %d %d\n' % (head, m, n, len(ents)))
        f.writelines(fmt % e for e in ents)
# rectangular, general, skewed toward low rows and columns, with repeats
r = (rng.random(900) ** 3 * 150).astype(int); c = (rng.random(900) ** 2 * 97).astype(int)
write('gen.mtx', 'real general', 150, 97, [(a + 1, b + 1, v) for a, b, v in zip(r, c, rng.standard_normal(900))], '%d %d %.17g\n')
r = rng.integers(0, 100, 400); c = rng.integers(0, 100, 400)
write('pat.mtx', 'pattern symmetric', 100, 100, sorted({(max(a, b) + 1, min(a, b) + 1) for a, b in zip(r, c)}), '%d %d\n')
write('int.mtx', 'integer general', 40, 60, [(a + 1, b + 1, int(v)) for a, b, v in zip(rng.integers(0, 40, 200), rng.integers(0, 60, 200), rng.integers(-9, 9, 200))], '%d %d %d\n')
PY
  for g in $grids; do
    for f in gen pat int; do
      sdk spmv --set wafer.pe_grid=9x7 --set wafer.rank_grid=$g --set spmv.matrix=$f.mtx \
          --set spmv.repeat=2 --set output.file=$f.h5 > $f.json
      expect "[ $? -eq 0 ]" "$f grid $g: run failed"
      checks $f.json $((1 + have_petsc)) # and PETSc's MatMult, where PETSc is built in
      expect "/usr/bin/python3 - $f <<'PY'
import h5py, json, numpy as np, scipy.io, sys
f = sys.argv[1]
a = scipy.io.mmread(f + '.mtx').tocsr()
h = h5py.File(f + '.h5')
x, y = h['x'][...], h['y'][...]
want = a @ x
ok = x.shape == (a.shape[1],) and np.abs(x).max() <= 1 and x.std() > 0.3
ok = ok and np.all(np.abs(y - want) <= 1e-13 * (abs(a) @ abs(x)) + 1e-300)
# entries a PE (equal bands: floor(N k / P)): the imbalance
coo = scipy.io.mmread(f + '.mtx').tocoo()  # a symmetric file's both triangles, repeats apart
rows, cols = coo.row, coo.col
by = (rows + 1) * 7 - 1; by //= a.shape[0]
bx = (cols + 1) * 9 - 1; bx //= a.shape[1]
per = np.bincount(by * 9 + bx, minlength=63)
imb = json.load(open(f + '.json'))['spmv']['pe_imbalance']
ok = ok and abs(imb / (per.max() / per.mean()) - 1) < 1e-7  # the JSON keeps 9 digits
sys.exit(0 if ok else 'y or the imbalance differ: %s' % imb)
PY" "$f grid $g: y differs from scipy's A @ x"
    done
  done
  sdk spmv --set wafer.pe_grid=6x6 --set spmv.generate=laplace2d --set spmv.side=13 \
      --set output.file=lap.h5 > lap.json
  expect "[ $? -eq 0 ]" "Laplacian: run failed"
  checks lap.json $((1 + have_petsc))
  expect "/usr/bin/python3 - <<'PY'
import h5py, numpy as np, scipy.sparse as sp, sys
t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(13, 13))
a = sp.kronsum(t, t).tocsr()
h = h5py.File('lap.h5')
sys.exit(0 if np.abs(h['y'][...] - a @ h['x'][...]).max() < 1e-13 else 1)
PY" "Laplacian: y differs from scipy's"
  for b in false true; do
    sdk spmv --set wafer.pe_grid=8x8 --set spmv.scale=11 --set spmv.balance=$b \
        --set output.file=r$b.h5 > r$b.json
    expect "[ $? -eq 0 ]" "rmat balance=$b: run failed"
    checks r$b.json $((1 + have_petsc))
  done
  # the matrices shipped in inputs/matrices (scripts/make-matrix), factored or multiplied
  shipped=$(cd "$(dirname "$0")/../../inputs/matrices" && pwd)
  sdk spmv --set wafer.pe_grid=8x8 --set spmv.matrix="$shipped/rmat9.mtx" > shipped.json
  expect "[ $? -eq 0 ]" "inputs/matrices/rmat9.mtx: run failed"
  checks shipped.json $((1 + have_petsc))
  sdk cholesky --set wafer.pe_grid=8x8 --set cholesky.matrix="$shipped/laplace3d-10.mtx" > shipped.json
  expect "[ $? -eq 0 ]" "inputs/matrices/laplace3d-10.mtx: run failed"
  checks shipped.json 2
  expect "/usr/bin/python3 - <<'PY'
import h5py, json, numpy as np, sys
y0, y1 = (h5py.File('r%s.h5' % b)['y'][...] for b in ('false', 'true'))
i0, i1 = (json.load(open('r%s.json' % b))['spmv']['pe_imbalance'] for b in ('false', 'true'))
sys.exit(0 if np.abs(y0 - y1).max() < 1e-12 and i1 < i0 / 3 and i1 < 2 else 'imbalance %s, %s' % (i0, i1))
PY" "rmat: balanced bands change y or do not balance"
  ;;
bad_input)
  expect_bad_input mandelbrot "each PE needs a pixel" --set mandelbrot.width=50
  expect_bad_input mandelbrot "each PE needs a pixel" --set mandelbrot.height=63
  expect_bad_input mandelbrot "must be above re_min" --set mandelbrot.re_max=-3
  expect_bad_input mandelbrot "must be above im_min" --set mandelbrot.im_max=-1.125
  expect_bad_input mandelbrot "memory" --set mandelbrot.width=100000000 --set mandelbrot.height=100000000
  expect_bad_input life "expected BXxBY" --set life.cells_per_pe=0x4
  expect_bad_input life "expected BXxBY" --set life.cells_per_pe=4
  expect_bad_input life "5 x 5 cells" --set life.pattern=glider --set life.cells_per_pe=1x1 --set wafer.pe_grid=4x4
  expect_bad_input life "memory" --set life.cells_per_pe=65536x65536
  expect_bad_input life "not one of random|glider" --set life.pattern=gun
  expect_bad_input gemm "square grid" --set wafer.pe_grid=8x4
  expect_bad_input gemm "each PE needs a row and a column" --set gemm.k=32
  expect_bad_input gemm "memory" --set gemm.m=1000000 --set gemm.n=1000000 --set gemm.k=1000000
  expect_bad_input gemv "each PE needs a row" --set gemv.m=63
  expect_bad_input gemv "each PE needs a column" --set gemv.n=10
  expect_bad_input gemv "memory" --set gemv.m=10000000 --set gemv.n=10000000
  expect_bad_input histogram "over the 32 bits" --set histogram.bucket_width=1000000 --set histogram.buckets_per_pe=4096
  expect_bad_input histogram "memory" --set histogram.values_per_pe=100000000
  expect_bad_input histogram "not one of uniform|skewed" --set histogram.distribution=zipf
  expect_bad_input widemul "each PE needs a limb" --set widemul.bits=2000
  expect_bad_input widemul "memory" --set widemul.bits=100000000 --set wafer.pe_grid=64x100000
  expect_bad_input cholesky "square grid" --set wafer.pe_grid=8x4
  expect_bad_input cholesky "each PE needs a row" --set cholesky.n=63
  expect_bad_input cholesky "memory" --set cholesky.n=1000000
  printf 'hello\n' > not.mtx
  expect_bad_input cholesky "not a Matrix Market file" --set cholesky.matrix=not.mtx
  printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n' > general.mtx
  expect_bad_input cholesky "symmetric storage" --set cholesky.matrix=general.mtx
  printf '%%%%MatrixMarket matrix coordinate real symmetric\n80 80 2\n1 1 1\n81 1 2\n' > range.mtx
  expect_bad_input cholesky "line 4: the entry's row or column is outside" --set cholesky.matrix=range.mtx
  printf '%%%%MatrixMarket matrix coordinate real symmetric\n80 80 3\n1 1 1\n2 2 2\n' > short.mtx
  expect_bad_input cholesky "ends after 2 of its 3 entries" --set cholesky.matrix=short.mtx
  expect_bad_input spmv "each PE needs a row and a column" --set spmv.generate=laplace2d --set spmv.side=5
  expect_bad_input spmv "memory" --set spmv.scale=30 --set spmv.edge_factor=1024
  expect_bad_input spmv "not a Matrix Market file" --set spmv.matrix=not.mtx
  printf '%%%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n' > complex.mtx
  expect_bad_input spmv "complex is not read" --set spmv.matrix=complex.mtx
  expect_bad_input spmv "line 4: the entry's row or column is outside" --set spmv.matrix=range.mtx
  : > empty.mtx
  expect_bad_input spmv "empty.mtx: the file is empty" --set spmv.matrix=empty.mtx
  printf '%%%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n' > frac.mtx
  expect_bad_input spmv "line 3: an entry of an integer matrix has a value that is not an integer" --set spmv.matrix=frac.mtx --set wafer.pe_grid=2x2
  printf '%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 0x10\n' > hex.mtx
  expect_bad_input spmv "line 3: the entry's value is not a decimal number" --set spmv.matrix=hex.mtx --set wafer.pe_grid=2x2
  printf '%%%%MatrixMarket matrix coordinate real general\n99999999999999999999 2 1\n1 1 1\n' > big.mtx
  expect_bad_input spmv "line 2: a number of the size line is beyond 2^63" --set spmv.matrix=big.mtx
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish "sdk $case_name"
