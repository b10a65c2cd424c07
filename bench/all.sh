#!/usr/bin/env bash
# Every workload's benchmark, side by side with its reference.
#
#   bench/all.sh --quick [--record]   (after `make build`; about 3 minutes)
#   bench/all.sh                      (every bench/*/run.sh in turn: the
#                                      results pages; about an hour)
#
# Quick mode runs each workload once at a small size REPEATS times (5) with
# its reference in the same loop, and prints one table: the medians of our
# time and the reference's, their ratio (ours / theirs: below 1 is faster)
# and the fraction of the machine's limit the run reaches (STREAM triad for
# what streams memory, OpenBLAS DGEMM or SGEMM for what computes, a plain
# MPI_Sendrecv for the halo), with the CPU model and its vector ISA.
#
# It compares each ratio with bench/quick.md, the table last recorded
# (--record writes it): on the same CPU model, a ratio more than 20% worse
# is printed as a REGRESSION when our own time is also 20% worse (else as a
# note: the reference ran faster). Timings stay out of the tests: this
# reports, it does not fail (exit 0 unless a run fails).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

quick=false record=false
for a in "$@"; do
  case $a in
    --quick) quick=true ;;
    --record) record=true ;;
    *) echo "usage: bench/all.sh [--quick [--record]]" >&2; exit 2 ;;
  esac
done
[ -x "$WAFER" ] || { echo "bench/all.sh: build first (make build)" >&2; exit 1; }

if ! $quick; then
  for s in solvers cfd eam fft halo tlrmvm train scaling build; do
    echo "== bench/$s/run.sh"
    "bench/$s/run.sh"
  done
  exit 0
fi

REPEATS=${REPEATS:-5}
out=bench/out
mkdir -p "$out"
rows="$out/quick_rows.txt"
: > "$rows"
read -ra blas <<< "$(pkg-config --cflags --libs openblas)"
mpicc -O2 -o "$out/dgemm" bench/eam/dgemm.c "${blas[@]}"
mpicc -O2 -o "$out/sendrecv_ref" bench/halo/sendrecv_ref.c
cc -O2 -std=c17 -o "$out/sdk_reference" bench/sdk/reference.c -lm
cc -O2 -std=c17 -o "$out/blas_reference" bench/sdk/blas_reference.c "${blas[@]}" -llapacke
cc -O2 -std=c17 -o "$out/gmp_reference" bench/sdk/gmp_reference.c -lgmp
dgemm=$(OPENBLAS_NUM_THREADS=1 mpiexec -n 1 "$out/dgemm" 1000)

# row NAME CASE RANKS UNIT: the medians of the arrays ours, ref and frac
# (a fraction, or empty where no limit applies), one line of the table.
row() {
  local m_ours m_ref m_frac ratio
  m_ours=$(printf '%s\n' "${ours[@]}" | median)
  m_ref=$(printf '%s\n' "${ref[@]}" | median)
  m_frac=$([ ${#frac[@]} -gt 0 ] && printf '%s\n' "${frac[@]}" | median || echo nan)
  ratio=$($py -c "print($m_ours / $m_ref)") # a failure here stops the script (set -e)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$m_ours" "$m_ref" \
      "$ratio" "$m_frac" "$5" >> "$rows"
  echo "$1 ($2, $3 rank(s)): ours $m_ours, reference $m_ref $4" >&2
}
# ok JSON: the run's status says it checked what it ran.
ok() { case "$(field "$1" "j['status']")" in ok | unchecked) ;; *) echo "bench/all.sh: run failed: $1" >&2; exit 1 ;; esac; }
# measure OURS REF FRAC COMMAND...: REPEATS runs of COMMAND (its JSON summary
# in $out/m.json), each adding the JSON expressions OURS, REF and FRAC (none
# if empty) over its summary `j` to the arrays ours, ref and frac.
measure() {
  local o=$1 r=$2 f=$3
  shift 3
  ours=() ref=() frac=()
  for _ in $(seq "$REPEATS"); do
    "$@" --json "$out/m.json" > "$out/m.txt" 2>&1 || { cat "$out/m.txt" >&2; exit 1; }
    ok "$out/m.json"
    ours+=("$(field "$out/m.json" "$o")")
    ref+=("$(field "$out/m.json" "$r")")
    [ -z "$f" ] || frac+=("$(field "$out/m.json" "$f")")
  done
}

# Stencil CG 128^3 against PETSc AIJ (KSPCG), 50 iterations, 1 rank.
measure "j['stencil']['seconds_per_iteration']" "j['petsc']['seconds_per_iteration']" \
    "j['stencil']['fraction_of_triad']" \
    "$WAFER" stencil --quiet --set wafer.pe_grid=64x64 --set stencil.nx=128 --set stencil.ny=128 \
    --set stencil.nz=128 --set stencil.rtol=0 --set stencil.max_iterations=50 \
    --set stencil.crosscheck=petsc
row "stencil CG" "128^3, vs PETSc AIJ KSPCG" 1 "s/iteration" "STREAM triad"

# The wave stencil 192^3, 20 steps, each kernel this CPU runs, against the
# time STREAM triad takes to move its 24 B a cell.
for kernel in avx512 avx2; do # (generic: the portable C path, for correctness)
  [ "$kernel" = avx512 ] && ! grep -qw avx512f /proc/cpuinfo && continue
  measure "j['cfd']['seconds_per_step']" "24 * 192**3 / (j['cfd']['triad_GBps'] * 1e9)" \
      "j['cfd']['fraction_of_triad']" \
      "$WAFER" cfd --quiet --set wafer.pe_grid=16x16 --set cfd.nx=192 --set cfd.ny=192 \
      --set cfd.nz=192 --set cfd.steps=20 --set cfd.kernel=$kernel
  row "wave ($kernel)" "192^3, vs STREAM triad's time" 1 "s/step" "STREAM triad"
done

# Convection 32 x 32 x 16, PCG pressure solve against PETSc KSPCG + Jacobi.
measure "j['petsc']['our_seconds_per_solve']" "j['petsc']['seconds_per_solve']" "" \
    "$WAFER" cfd --quiet --set cfd.problem=convection --set wafer.pe_grid=8x8 --set cfd.nx=32 \
    --set cfd.ny=32 --set cfd.nz=16 --set cfd.ra=1e4 --set cfd.perturbation=0.1 --set cfd.steps=10 \
    --set cfd.poisson=pcg --set cfd.petsc=jacobi
row "convection solve" "32x32x16, vs PETSc KSPCG+Jacobi" 1 "s/solve" "-"

# EAM: fcc Cu, 32,000 atoms, and bcc W, 16,000, 100 steps, 1 rank, against
# LAMMPS with its OPT package (eam/opt), from the same data file.
pot=/usr/share/lammps/potentials
common="--set eam.temperature=1600 --set eam.dt=0.005 --set eam.skin=1.0 --set eam.neigh_delay=5"
for c in "Cu Cu_u3.eam eam 1 -" "W W_zhou.eam.alloy eam/alloy * W"; do
  read -r name file style types elements <<< "$c"
  [ "$elements" = - ] && elements=""
  # shellcheck disable=SC2086
  "$WAFER" eam --quiet $common --set eam.potential=$file --set eam.cells=20x20x20 --set eam.steps=0 \
      --set eam.crosscheck=none --set eam.write_data="$out/$name.data" --json "$out/e0.json" > /dev/null
  atoms=$(field "$out/e0.json" "j['eam']['atoms']")
  printf 'units metal\natom_style atomic\nread_data %s\npair_style %s\npair_coeff %s %s %s\nneighbor 1.0 bin\nneigh_modify every 1 delay 5 check yes\nfix 1 all nve\ntimestep 0.005\nthermo 50\nrun 100\n' \
      "$out/$name.data" "$style" "$types $types" "$pot/$file" "$elements" > "$out/in.$name"
  ours=() ref=() frac=()
  for _ in $(seq "$REPEATS"); do
    # shellcheck disable=SC2086
    "$WAFER" eam --quiet $common --set eam.potential=$file --set eam.cells=20x20x20 --set eam.steps=100 \
        --set eam.thermo=50 --set eam.crosscheck=none --json "$out/e.json" > /dev/null
    ours+=("$(field "$out/e.json" "j['eam']['us_per_atom_step']")")
    frac+=("$(field "$out/e.json" "j['eam']['gflops'] / $dgemm")")
    lmp -sf opt -in "$out/in.$name" -log "$out/log.lammps" -screen none
    ref+=("$(awk -v n="$atoms" '/^Loop time/ {print $4 / (100 * n) * 1e6}' "$out/log.lammps")")
  done
  row "EAM $name" "$atoms atoms, vs LAMMPS eam/opt" 1 "us/atom-step" "OpenBLAS DGEMM"
done

# FFT 128^3 complex on 2 ranks against FFTW-MPI (FFTW_MEASURE), forward.
measure "j['fft']['forward_seconds']" "j['fftw_mpi']['forward_seconds']" \
    "j['fft']['transpose_fraction_of_triad']" \
    mpiexec -n 2 "$WAFER" fft --quiet --set wafer.pe_grid=128x128 --set fft.nx=128 --set fft.ny=128 \
    --set fft.nz=128 --set fft.field=random --set fft.repeat=5 --set fft.wisdom="$out/wisdom.txt"
row "FFT" "128^3 c2c, vs FFTW-MPI" 2 "s/transform" "STREAM triad (transposes)"

# TLR-MVM, the default deck, against the dense cgemv of the same matrix.
measure "j['tlrmvm']['mvm_seconds']" "j['tlrmvm']['dense_seconds']" "j['tlrmvm']['fraction_of_triad']" \
    "$WAFER" tlrmvm --quiet --set tlrmvm.dense=time --set tlrmvm.repeat=50
row "TLR-MVM" "default deck, vs dense cgemv" 1 "s/product" "STREAM triad"

# Halo exchange of 4 kB cells between 2 ranks against one MPI_Sendrecv of
# the same bytes (its fraction: the Sendrecv's time over ours).
ours=() ref=() frac=()
for _ in $(seq "$REPEATS"); do
  mpiexec -n 2 "$WAFER" halo --quiet --set wafer.pe_grid=64x64 --set halo.elem_bytes=4096 \
      --set halo.iterations=200 --set halo.verify=false --json "$out/h.json" > /dev/null
  t=$(field "$out/h.json" "j['halo']['seconds_per_exchange']")
  inter=$(field "$out/h.json" "int(j['halo']['inter_rank_bytes_per_exchange'])")
  r=$(mpiexec -n 2 "$out/sendrecv_ref" $((inter / 2)) 200)
  ours+=("$t") ref+=("$r") frac+=("$($py -c "print($r / $t)")")
done
row "halo" "64x64 PEs of 4 kB, vs MPI_Sendrecv" 2 "s/exchange" "MPI_Sendrecv"

# Training (4 layers, width 256, sequence 64, batch 4), 1 rank, against
# PyTorch on one thread: time a step from tokens a second.
ours=() ref=() frac=()
if $py -c "import torch" 2> /dev/null; then
  for _ in $(seq "$REPEATS"); do
    "$WAFER" train --quiet --set train.layers=4 --set train.heads=4 --set train.channels=256 \
        --set train.seq=64 --set train.batch=4 --set train.steps=5 --set train.eval_every=1000 \
        --json "$out/tr.json" > /dev/null
    ok "$out/tr.json"
    ours+=("$(field "$out/tr.json" "256 / j['train']['tokens_per_s']")")
    ref+=("$($py -c "print(256 / $($py bench/train/torch_train.py 4 4 256 64 4 5 1))")")
    frac+=("$(field "$out/tr.json" "j['train']['fraction_of_sgemm']")")
  done
  row "train" "4x256, T 64, B 4, vs PyTorch" 1 "s/step" "OpenBLAS SGEMM"
fi

# The SDK's example kernels (bench/sdk/run.sh's cases, smaller), each
# against its plain serial code, BLAS call or GMP on one core.
# sdk_row NAME CASE UNIT FRAC-LIMIT ARGS...: ours from the JSON (OURS_KEY),
# the reference from REF_CMD, the fraction from FRAC_EXPR (empty: none).
sdk_row() {
  local name=$1 case=$2 unit=$3 limit=$4
  shift 4
  ours=() ref=() frac=()
  for _ in $(seq "$REPEATS"); do
    "$WAFER" "$@" --quiet --json "$out/s.json" > /dev/null
    ok "$out/s.json"
    ours+=("$(field "$out/s.json" "$OURS_KEY")")
    ref+=("$(eval "$REF_CMD")")
    [ -z "$FRAC_EXPR" ] || frac+=("$(field "$out/s.json" "$FRAC_EXPR")")
  done
  row "$name" "$case" 1 "$unit" "$limit"
}
export OPENBLAS_NUM_THREADS=1
OURS_KEY="j['mandelbrot']['seconds_per_image']" REF_CMD="$out/sdk_reference mandelbrot 640 480 256 3" \
FRAC_EXPR="10 * j['mandelbrot']['iterations'] / j['mandelbrot']['seconds_per_image'] / ($dgemm * 1e9)" \
  sdk_row mandelbrot "640x480, vs a serial loop" "s/image" "OpenBLAS DGEMM" mandelbrot \
  --set mandelbrot.repeat=3 --set mandelbrot.check=false
OURS_KEY="j['life']['seconds_per_generation']" REF_CMD="$out/sdk_reference life 512 512 20" \
FRAC_EXPR="" sdk_row life "512^2, vs a serial loop" "s/generation" "-" life \
  --set life.generations=400 --set life.check=false
OURS_KEY="j['gemm']['seconds_per_product']" REF_CMD="$out/blas_reference gemm 512 512 512 5" \
FRAC_EXPR="2 * 512**3 / j['gemm']['seconds_per_product'] / ($dgemm * 1e9)" \
  sdk_row gemm "512^3 on 64x64 PEs, vs cblas_dgemm" "s/product" "OpenBLAS DGEMM" gemm \
  --set gemm.repeat=5 --set gemm.check=false
OURS_KEY="j['gemv']['seconds_per_product']" REF_CMD="$out/blas_reference gemv 4096 4096 20" \
FRAC_EXPR="j['gemv']['fraction_of_triad']" \
  sdk_row gemv "4096^2, vs cblas_dgemv" "s/product" "STREAM triad" gemv \
  --set gemv.m=4096 --set gemv.n=4096 --set gemv.repeat=20 --set gemv.check=false
OURS_KEY="j['histogram']['seconds_per_histogram']" REF_CMD="$out/sdk_reference histogram 1048576 65536 4" \
FRAC_EXPR="" sdk_row histogram "64x64 PEs of 256 values, vs a serial count" "s/histogram" "-" \
  histogram --set histogram.check=false
OURS_KEY="j['widemul']['seconds_per_round']" REF_CMD="$out/gmp_reference 16384 64 5" \
FRAC_EXPR="" sdk_row widemul "64 x 16384-bit products, vs GMP" "s/round" "-" widemul \
  --set widemul.repeat=5 --set widemul.check=false
OURS_KEY="j['cholesky']['seconds_per_factorisation']" REF_CMD="$out/blas_reference potrf 1024 5" \
FRAC_EXPR="1024**3 / 3 / j['cholesky']['seconds_per_factorisation'] / ($dgemm * 1e9)" \
  sdk_row cholesky "1024^2 on 64x64 PEs, vs LAPACKE_dpotrf" "s/factorisation" "OpenBLAS DGEMM" \
  cholesky --set cholesky.n=1024 --set cholesky.repeat=5 --set cholesky.check=false
$py scripts/make-matrix rmat 16 16 3 "$out/rmat.mtx"
OURS_KEY="j['spmv']['seconds_per_product']" REF_CMD="field $out/s.json \"j['petsc']['seconds_per_product']\"" \
FRAC_EXPR="j['spmv']['fraction_of_triad']" \
  sdk_row spmv "R-MAT 2^16 x 16, vs PETSc MatMult (in the run)" "s/product" "STREAM triad" \
  spmv --set spmv.matrix="$out/rmat.mtx" --set spmv.repeat=40 --set spmv.check=false \
  --set spmv.crosscheck=petsc

MACHINE=$(machine) $py bench/quick_table.py "$rows" bench/quick.md "$REPEATS" "$record"
