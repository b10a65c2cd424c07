#!/usr/bin/env bash
# End-to-end tests of the `wafer` command: cli.sh CASE RANKS WAFER_BINARY [HELPER]
# Each case runs the real command under mpiexec and checks its exit status,
# messages, JSON summary and files. Prints "CASE: N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3 helper=${4:-}
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
run() { mpiexec -n "$ranks" "$wafer" "$@"; }

# Run with a bad input: exit 2, message on stderr, no output files.
expect_input_error() {
  local want=$1; shift
  run "$@" --set output.file=out.h5 --json err.json > stdout.txt 2> stderr.txt
  local rc=$?
  expect "[ $rc -eq 2 ]" "exit status $rc, wanted 2 for: $*"
  expect "grep -qF -- \"$want\" stderr.txt" "message lacks '$want': $(cat stderr.txt)"
  expect "[ ! -e out.h5 ] && no_temporary out.h5 && [ ! -e err.json ]" "files written for a bad input"
}

case $case_name in
references)
  # The optional references: present, each run compares with it; absent
  # (WAFER_HAVE_*=0 from ctest: a build without it), the default run says
  # the check is unavailable and a deck that names it is bad input (exit 2).
  small="--set wafer.pe_grid=8x8"
  run stencil $small --set stencil.nx=16 --set stencil.ny=16 --set stencil.nz=16 --json s.json > s.txt
  if [ "${WAFER_HAVE_PETSC:-1}" = 1 ]; then
    expect "json s.json \"j['status']=='ok' and 'petsc' in j and 'unavailable' not in j['checks']\"" "stencil with PETSc"
  else
    expect "json s.json \"j['status']=='unchecked' and j['checks']['unavailable']=='PETSc cross-check' and 'petsc' not in j\"" "stencil without PETSc: unavailable, unchecked"
    expect "grep -q 'PETSc cross-check: unavailable' s.txt" "stencil without PETSc says so"
    expect_input_error "is not available: this wafer was built without PETSc" stencil $small --set stencil.crosscheck=petsc
    expect_input_error "is not available: this wafer was built without PETSc" cfd --set cfd.problem=convection --set cfd.petsc=gamg
  fi
  run fft $small --set fft.nx=16 --set fft.ny=16 --set fft.nz=16 --set fft.planner=estimate --json f.json > f.txt
  if [ "${WAFER_HAVE_FFTW_MPI:-1}" = 1 ]; then
    expect "json f.json \"j['status']=='ok' and 'fftw_mpi' in j and 'unavailable' not in j['checks']\"" "fft with FFTW-MPI"
  else
    expect "json f.json \"j['status']=='ok' and j['checks']['unavailable']=='FFTW-MPI reference' and 'fftw_mpi' not in j\"" "fft without FFTW-MPI: its own checks only"
    expect_input_error "fftw-mpi is not available" fft $small --set fft.nx=16 --set fft.ny=16 --set fft.nz=16 --set fft.crosscheck=fftw-mpi
  fi
  # 1D and 2D compare with serial FFTW, which every build has.
  run fft $small --set fft.nx=16 --set fft.ny=16 --set fft.nz=16 --set fft.dims=2 --set fft.planner=estimate --json f2.json > /dev/null
  expect "json f2.json \"j['status']=='ok' and 'fftw' in j and 'unavailable' not in j['checks']\"" "2D fft: serial FFTW"
  # LAMMPS is a command: a missing one is the same case on any build.
  eam_small="--set eam.cells=4x4x4 --set eam.steps=10 --set eam.thermo=5"
  run eam $small $eam_small --set eam.lmp=/nonexistent/lmp --json e.json > /dev/null
  expect "json e.json \"j['checks']['unavailable']=='LAMMPS cross-check' and 'lammps' not in j and j['status'] != 'ok'\"" "eam without lmp: unavailable"
  expect_input_error "lammps is not available" eam $small $eam_small --set eam.lmp=/nonexistent/lmp --set eam.crosscheck=lammps
  # Plots need a Python with matplotlib: without one, asking for a plot is bad input.
  WAFER_PYTHON=/nonexistent/python3 expect_input_error "cannot draw plots" stencil $small --set stencil.nx=16 --set stencil.ny=16 --set stencil.nz=16 --set stencil.plot=p.png
  # `wafer --version` lists what was built in.
  "$wafer" --version > v.txt
  expect "grep -q '^  PETSc: ' v.txt && grep -q '^  FFTW-MPI: ' v.txt && grep -q '^  LAMMPS: ' v.txt && grep -q '^  plots: ' v.txt" "--version lists the references"
  if [ "${WAFER_HAVE_PETSC:-1}" = 1 ]; then
    expect "grep -q '^  PETSc:    [0-9]' v.txt" "--version: PETSc's version"
  else
    expect "grep -q '^  PETSc:    not built in' v.txt" "--version: PETSc not built in"
  fi
  # The data folder: one that does not exist, or lacks the decks, is bad input.
  WAFER_DATA_DIR=/nonexistent run fidelity --quiet > /dev/null 2> d1.txt
  expect "[ $? -eq 2 ] && grep -q 'WAFER_DATA_DIR=/nonexistent: no such folder' d1.txt" "missing WAFER_DATA_DIR: $(cat d1.txt)"
  mkdir -p empty
  WAFER_DATA_DIR=$PWD/empty run fidelity --quiet > /dev/null 2> d2.txt
  expect "[ $? -eq 2 ] && grep -q 'lacks wafer' d2.txt" "WAFER_DATA_DIR without the decks: $(cat d2.txt)"
  ;;
halo)
  for opts in "--set halo.width=1" \
              "--set halo.width=2 --set halo.corners=false --set halo.periodic=false --set halo.elem_bytes=3"; do
    # shellcheck disable=SC2086
    run halo --set wafer.pe_grid=13x11 --set halo.iterations=20 $opts \
        --set output.file=halo.h5 --json s.json > stdout.txt
    expect "[ $? -eq 0 ]" "wafer halo $opts failed"
    expect "[ \"\$(tail -n 1 stdout.txt)\" = \"\$(cat s.json)\" ]" "last stdout line is not the JSON summary"
    expect "json s.json \"j['status']=='ok' and j['checks']['failed']==0 and j['checks']['passed']==3\"" "checks in summary (verified exchanges, allreduce, traffic counts)"
    expect "json s.json \"j['ranks']==$ranks and j['pe_grid']==[13,11] and j['halo']['bad_elements']==0\"" "grid in summary"
    expect "[ -s halo.h5 ] && [ -s halo.xmf ] && no_temporary halo.h5" "HDF5 output and XDMF sidecar"
  done
  # (Through files: with pipefail, `h5dump | grep -q` fails when grep stops
  # reading early and h5dump gets SIGPIPE.)
  expect "h5dump -a /pe_grid halo.h5 > attr.txt && grep -q '\"13x11\"' attr.txt && h5dump -a /deck halo.h5 > deck.txt && grep -q 'elem_bytes = 3' deck.txt" "HDF5 attributes"
  expect "json s.json \"j['fabric']['words_between_ranks'] > 0 if $ranks > 1 else j['fabric']['words_between_ranks'] == 0\"" "fabric counters"
  run halo "$inputs/halo.ini" --set wafer.pe_grid=40x30 --set halo.iterations=3 --json ini.json > /dev/null
  expect "json ini.json \"j['status']=='ok' and j['halo']['elem_bytes']==4096 and j['halo']['width']==2\"" "example deck inputs/halo.ini"
  # Model figures of the documented formulas (docs/model.md). Faces, w=2, 3 B
  # (1 word): links max(2, 2), ramp in 8 words (moved into SRAM, 2 a cycle)
  # and the PE's own 1 out each way (fast the largest, slow all but the
  # moves), latency 2 ramps (4) + 2 hops.
  expect "json s.json \"j['model']['cycles_per_exchange']==[max(2, 4, 8, 4)+4+2, 8+4+4+2]\"" "model cycles (faces, w=2, 3 B)"
  # Corners, w=1, 8 B (2 words): links 2 + 6, ramp in 16 (moves 8), out 2
  # words east and west and the row of 3 north and south (16), latency 4 + 2.
  run halo --set wafer.pe_grid=13x11 --set halo.iterations=5 --json s1.json > /dev/null
  expect "json s1.json \"j['model']['cycles_per_exchange']==[max(2+6, 8, 16, 16)+4+2, 16+16+4+2]\"" "model cycles (corners, w=1, 8 B)"
  # Without verification only the allreduce is checked.
  run halo --set wafer.pe_grid=13x11 --set halo.iterations=5 --set halo.verify=false --json nv.json > /dev/null
  expect "json nv.json \"j['status']=='ok' and j['checks']['passed']==2\"" "unverified halo run: the allreduce and the traffic counts"
  ;;
defects)
  # What every PE sees is the same on 1 rank and on $ranks ranks, with and without defects.
  mpiexec -n 1 "$wafer" halo --set wafer.pe_grid=16x8 --set halo.iterations=10 --set halo.width=2 \
      --set halo.corners=false --json one.json > /dev/null
  run halo --set wafer.pe_grid=16x8 --set halo.iterations=10 --set halo.width=2 --set halo.corners=false \
      --json many.json > /dev/null
  expect "json one.json \"j['halo']['checksum']==json.load(open('many.json'))['halo']['checksum']\"" \
         "what PEs see depends on the rank count"
  run halo --set wafer.pe_grid=16x8 --set halo.iterations=10 --json plain.json --set output.file=plain.h5 > /dev/null
  expect "[ $? -eq 0 ]" "halo without defects"
  run halo --set wafer.pe_grid=16x8 --set halo.iterations=10 --json dead.json --set output.file=dead.h5 \
      --set wafer.defects="$inputs/defects-sample.txt" --set wafer.spare_columns=2 > stdout.txt
  expect "[ $? -eq 0 ]" "halo with defects"
  expect "grep -q 'dead PEs' stdout.txt" "header mentions the dead PEs"
  expect "json dead.json \"j['dead_pes']==4 and j['checks']['failed']==0\"" "defect run checks"
  expect "json plain.json \"j['halo']['checksum']==json.load(open('dead.json'))['halo']['checksum']\"" \
         "halo data differ with and without defects"
  expect "json dead.json \"j['model']['cycles_per_exchange'][0] > json.load(open('plain.json'))['model']['cycles_per_exchange'][0]\"" \
         "detours cost nothing in the model"
  expect "cmp -s <(h5dump -d /owner_rank plain.h5 | tail -n +2) <(h5dump -d /owner_rank dead.h5 | tail -n +2)" \
         "owner map differs"
  ;;
demo)
  run demo --json s.json > stdout.txt
  expect "[ $? -eq 0 ]" "wafer demo failed"
  expect "grep -q '== demo summary' stdout.txt" "no summary table"
  expect "[ \"\$(tail -n 1 stdout.txt)\" = \"\$(cat s.json)\" ]" "last stdout line is not the JSON summary"
  expect "json s.json \"j['status']=='ok' and j['checks']['failed']==0 and j['checks']['passed']>0\"" "demo checks"
  # A run whose reference this build lacks (stencil without PETSc) is unchecked and says why.
  expect "json s.json \"'halo' in [r['workload'] for r in j['runs']] and all(r['status']=='ok' or (r['status']=='unchecked' and 'unavailable' in r['checks']) for r in j['runs'])\"" "demo runs"
  expect "json s.json \"('unavailable' in j['checks']) == any('unavailable' in r['checks'] for r in j['runs'])\"" "demo lists the unavailable checks"
  expect "json s.json \"j['checks']['passed']==sum(r['checks']['passed'] for r in j['runs'])\"" "demo check total"
  expect "json s.json \"all(len(r['wafer_seconds'])==2 and 0 < r['wafer_seconds'][0] <= r['wafer_seconds'][1] for r in j['runs'])\"" \
         "every projection a range"
  # The table's status column is each run's JSON status.
  expect "python3 -c \"import json,sys; runs=json.load(open('s.json'))['runs']; names=[r['workload'] for r in runs]; rows=[l.split() for l in open('stdout.txt') if l.split()[:1] and l.split()[0] in names]; sys.exit(0 if [r[1] for r in rows[-len(runs):]]==[r['status'] for r in runs] else 1)\"" \
         "demo table status column"
  # cfd twice: the wave on its default deck, then the convection variant.
  expect "json s.json \"[r['workload'] for r in j['runs']] == ['halo', 'stencil', 'eam', 'fft', 'tlrmvm', 'cfd', 'cfd', 'train', 'mandelbrot', 'life', 'gemm', 'gemv', 'histogram', 'widemul', 'cholesky', 'spmv'] and j['runs'][6]['cfd']['problem'] == 'convection' and j['runs'][6]['checks']['passed'] >= 1\"" "demo runs every workload"
  # Runs that fail (an output that cannot be created) say error in the table too.
  run demo --set output.file=/nonexistent-dir/x.h5 --json bad.json > bad.txt 2> /dev/null
  expect "[ $? -ne 0 ] && json bad.json \"j['status'] == 'error' and all(r['status'] == 'error' for r in j['runs'])\"" \
         "demo with an unwritable output: not an error"
  expect "[ \$(grep -cE '^(halo|stencil|eam|fft|tlrmvm|cfd|train|mandelbrot|life|gemm|gemv|histogram|widemul|cholesky|spmv) +error ' bad.txt) -eq 16 ]" "demo table says ok for failed runs"
  ;;
bad_input)
  printf '[halo]\nwidth = 2\nwidht = 3\n' > typo.ini
  expect_input_error "typo.ini:3: [halo] unknown key 'widht'" halo typo.ini
  printf '[halo]\nwidth = 0\n' > range.ini
  expect_input_error "range.ini:2: [halo] width = 0: out of range [1, 64]" halo range.ini
  printf '[halo]\niterations = many\n' > type.ini
  expect_input_error "type.ini:2: [halo] iterations = many: not an integer" halo type.ini
  printf '[hallo]\nwidth = 1\n' > section.ini
  expect_input_error "section.ini:1: unknown section [hallo]" halo section.ini
  expect_input_error "cannot open deck 'missing.ini'" halo missing.ini
  # Every input is read with a size bound: an endless or huge file is an
  # input error, not an attempt to hold it all.
  head -c 2000000 /dev/zero | tr '\0' '#' > big.ini
  expect_input_error "deck 'big.ini' is larger than the 1.05 MB this reader accepts" halo big.ini
  expect_input_error "the deck /dev/zero: it is a named pipe or a device" halo /dev/zero
  expect_input_error "defects = /dev/zero: it is a named pipe or a device" halo --set wafer.defects=/dev/zero
  printf '[wafer]\npe_grid = 1x1\n' > small.ini
  if [ "$ranks" -gt 1 ]; then
    expect_input_error "small.ini:2: [wafer] pe_grid = 1x1: the PE grid 1x1 has 1 PEs, fewer than the $ranks MPI ranks" halo small.ini
    expect_input_error "halo width 3 PEs is wider than the thinnest rank block" halo --set wafer.pe_grid=4x4 --set halo.width=3
  fi
  expect_input_error "[wafer] pe_grid = 12y3: expected 'hardware' or NXxNY" halo --set wafer.pe_grid=12y3
  expect_input_error "cannot open defect map 'nope.txt'" halo --set wafer.defects=nope.txt
  expect_input_error "unknown workload or command 'hallo'" hallo
  expect_input_error "unknown option '--bogus'" halo --bogus
  # Outputs are checked before any work starts: a directory that does not
  # exist, or one this process cannot create files in.
  for case in "nodir/x.h5|its directory nodir does not exist" "/proc/x.h5|cannot create files in /proc"; do
    path=${case%%|*} want=${case#*|}
    run halo --set output.file=$path --json o.json > /dev/null 2> stderr.txt
    rc=$?
    expect "[ $rc -eq 2 ] && grep -qF -- \"[output] file = $path: $want\" stderr.txt && [ ! -e o.json ]" \
           "output $path: exit $rc, $(cat stderr.txt)"
  done
  # An output that exists as a directory or a device is refused before any
  # work (as root, renaming the finished file over /dev/null replaced it);
  # --json to a device writes to it.
  mkdir -p adir
  for case in "--set output.file=adir|[output] file = adir: it is a directory: outputs are files" \
              "--set output.file=/dev/null|[output] file = /dev/null: it is a device or pipe" \
              "--json adir|--json adir: it is a directory"; do
    # shellcheck disable=SC2086
    run halo --quiet ${case%%|*} > /dev/null 2> stderr.txt
    rc=$?
    expect "[ $rc -eq 2 ] && grep -qF -- \"${case#*|}\" stderr.txt && [ -z \"\$(ls adir)\" ] && no_temporary adir" \
           "${case%%|*}: exit $rc, $(cat stderr.txt)"
  done
  run halo --quiet --json /dev/null > /dev/null
  expect "[ $? -eq 0 ] && [ -c /dev/null ]" "--json /dev/null failed or replaced /dev/null"
  # Numbers never wrap: 4294967312 is not 16, 4294967299 not 3.
  expect_input_error "[wafer] pe_grid = 4294967312x16: expected 'hardware' or NXxNY" halo --set wafer.pe_grid=4294967312x16
  expect_input_error "[wafer] rank_grid = 1x4294967297: expected 'auto' or PXxPY" halo --set wafer.rank_grid=1x4294967297
  printf '4294967299 0\n' > wrap.txt
  expect_input_error "wrap.txt:1: expected 'x y'" halo --set wafer.defects=wrap.txt
  expect_input_error "[halo] iterations = 99999999999999999999: not an integer" halo --set halo.iterations=99999999999999999999
  # A line too long for the reader is an error, not a value cut short.
  printf '[halo]\nwidth = 1%0300d\n' 0 | tr 0 ' ' > long.ini
  expect_input_error "long.ini:2: [halo] width: line longer than" halo long.ini
  # Any number of --set arguments, the last of each key winning.
  sets=(); for i in $(seq 300); do sets+=(--set halo.iterations=$i); done
  run halo "${sets[@]}" --set wafer.pe_grid=8x8 --json many.json > /dev/null
  expect "json many.json \"j['halo']['iterations'] == 300\"" "300 --set arguments: the last one did not win"
  ;;
info)
  printf '[halo]\nwidth = 2\n' > deck.ini
  run info deck.ini --set halo.iterations=7 > info.txt
  expect "[ $? -eq 0 ]" "wafer info failed"
  expect "grep -Eq '^halo.width +2 +1 +deck.ini:2' info.txt" "info shows deck value and source"
  expect "grep -Eq '^halo.iterations +7 +200 +--set' info.txt" "info shows --set value and source"
  expect "grep -Eq '^wafer.pe_grid +64x64 +64x64 +default' info.txt" "info shows defaults"
  run --version > version.txt
  expect "grep -q HDF5 version.txt && grep -q PETSc version.txt && grep -q FFTW version.txt" "--version lists libraries"
  run --help > help.txt
  expect "[ $? -eq 0 ] && grep -q halo help.txt" "--help lists the workloads"
  run halo --help > halo_help.txt
  expect "[ $? -eq 0 ] && grep -q '| \`elem_bytes\` | integer | \`8\` | 1 .. 65536 |' halo_help.txt && grep -q '#### \[wafer\]' halo_help.txt" \
         "wafer halo --help shows the key tables"
  ;;
readme)
  # The generated docs are what the code prints: the deck reference (docs/decks.md,
  # `wafer keys`) and the README's fidelity table (`wafer fidelity --markdown`).
  root=$(cd "$here/../.." && pwd)
  sed '1,/^Any key can be set/d' "$root/docs/decks.md" | sed '/./,$!d' > doc_keys.md
  "$wafer" keys | sed '/./,$!d' > keys.md
  expect "diff -u keys.md doc_keys.md" "docs/decks.md is stale: run scripts/update-docs"
  sed -n '/<!-- fidelity:begin/,/<!-- fidelity:end -->/p' "$root/README.md" | sed '1d;$d' > readme_fid.md
  "$wafer" fidelity --markdown "$root/inputs/fidelity" > fid.md
  expect "[ -s fid.md ] && diff -u fid.md readme_fid.md" "README fidelity table is stale: run scripts/update-docs"
  ;;
fidelity)
  # The published cases (inputs/fidelity/): a change to the model is seen,
  # since each row must agree with docs/model.md's formulas.
  root=$(cd "$here/../.." && pwd)
  run fidelity "$root/inputs/fidelity" --json f.json > f.txt
  expect "[ $? -eq 0 ]" "wafer fidelity failed"
  expect "json f.json \"j['status'] == ('ok' if j['inside'] == j['count'] else 'outside')\"" "fidelity status"
  # Every row recomputed from docs/model.md's formulas with literal hardware
  # figures, not by the model's code (tests/model/fidelity_rows.py).
  /usr/bin/python3 "$root/tests/model/fidelity_rows.py" f.json > rows.txt
  expect "[ $? -eq 0 ]" "a fidelity row differs from docs/model.md's formulas: $(tail -1 rows.txt)"
  expect "json f.json \"[c['case'] for c in j['cases'] if c['bound']] == ['GB23 TLR-MVM bound']\"" \
         "GB23's row is the model's ceiling, and only it"
  expect "json f.json \"all(c['ratio'][0] <= c['ratio'][1] for c in j['cases'])\"" "a model range upside down"
  # A kernel case of the test's own, not square (rows and columns not
  # interchangeable), its range and its busiest PE's bytes recomputed too.
  mkdir -p own
  printf '[fidelity]\ncase = GEMV 3000 x 1000 on 20 x 10\nkernel = gemv\nrows = 3000\ncols = 1000\npublished = 1e-6\n[wafer]\nhardware = wse2\npe_grid = 20x10\n' > own/gemv.ini
  run fidelity own --json own.json > own.txt
  /usr/bin/python3 "$root/tests/model/fidelity_rows.py" --checks own.json > own_rows.txt
  expect "[ $? -eq 0 ]" "the GEMV kernel differs from docs/model.md's formulas: $(tail -1 own_rows.txt)"
  # A bad fidelity deck: exit 2, naming the key.
  printf '[fidelity]\ncase = x\nworkload = nosuch\npublished = 1\n' > bad.ini
  expect_input_error "[fidelity] workload = nosuch: no such workload" fidelity bad.ini
  printf '[fidelity]\ncase = x\nworkload = fft\nkernel = gemv\npublished = 1\n' > both.ini
  expect_input_error "[fidelity] kernel = gemv: a case is a workload or a kernel, not both" fidelity both.ini
  printf '[fidelity]\ncase = x\nkernel = tlrmvm_bound\npublished = 1\n' > bound.ini
  expect_input_error "[fidelity] quantity = seconds: a bandwidth ceiling is a rate" fidelity bound.ini
  # Verdicts: inside or outside only for a range at most 1.5x wide; the
  # cycle-based rows compare in cycles at the source's own clock.
  expect "json f.json \"all(c['verdict'] == ('outside' if not c['inside'] else 'undetermined' if c['ratio'][1] > 1.5 * c['ratio'][0] else 'inside') for c in j['cases'])\"" "a verdict disagrees with its range's width"
  # The published figure stands for what rounds to it: WaferLLM's 1.2 us
  # (two digits) for 1.15 - 1.25 us.
  expect "json f.json \"[c['published_rounding'] for c in j['cases'] if c['case'] == 'WaferLLM GEMV 16K'] == [[1.15e-6, 1.25e-6]]\"" "WaferLLM's figure to its two digits"
  expect "json f.json \"[c['clock_hz'] for c in j['cases'] if c['case'] == 'WaferLLM GEMV 16K'] == [1.1e9]\"" "WaferLLM's row is not in its own time base"
  expect "json f.json \"j['undetermined'] <= 2\"" "more than 2 rows undetermined"
  printf '[fidelity]\ncase = x\nkernel = gemv\npublished = 1\ntime_base = cycles\n' > noclock.ini
  expect_input_error "[fidelity] clock_ghz = 0: time_base = cycles needs the clock" fidelity noclock.ini
  printf '[fidelity]\ncase = x\nkernel = gemv\npublished = 1\ntime_base = cycles\nclock_ghz = 11\n' > fastclock.ini
  expect_input_error "[fidelity] clock_ghz = 11: outside the hardware's clock range" fidelity fastclock.ini
  printf '[fidelity]\ncase = x\nworkload = train\npublished = 1\ntime_base = cycles\nclock_ghz = 1\n' > trainclock.ini
  expect_input_error "[fidelity] time_base = cycles: the train projection has I/O seconds" fidelity trainclock.ini
  # Energy to solution: the wafer's at its system's published power (CS-2:
  # 15 - 23 kW, docs/model.md), the cluster's only from a node power given.
  run halo --set halo.iterations=20 --json e0.json > e0.txt
  expect "json e0.json \"abs(j['energy']['wafer_joules'][0] / (15e3 * j['wafer_seconds'][0]) - 1) < 1e-8 and abs(j['energy']['wafer_joules'][1] / (23e3 * j['wafer_seconds'][1]) - 1) < 1e-8 and j['energy']['cluster_joules'] is None\" && grep -q 'cluster not claimed' e0.txt" "energy without a node power"
  run halo --set halo.iterations=20 --set energy.node_watts=350 --json e1.json > e1.txt
  expect "json e1.json \"abs(j['energy']['cluster_joules'] / (350 * j['binding']['hosts'] * j['seconds']) - 1) < 1e-8\"" "cluster energy is not node power x hosts x seconds"
  expect_input_error "[energy] node_watts = -5" halo --set energy.node_watts=-5
  # Several wafers at once draw several systems' power (TLR-MVM's systems).
  # A model-only run measured nothing on the cluster, and says so.
  run tlrmvm --set tlrmvm.systems=3 --set tlrmvm.model_only=true --set tlrmvm.frequencies=3 \
      --set tlrmvm.model_rank=8 --set energy.node_watts=300 --json e3.json > e3.txt
  expect "json e3.json \"j['energy']['systems'] == 3 and abs(j['energy']['wafer_joules'][1] / (3 * 23e3 * j['wafer_seconds'][1]) - 1) < 1e-8 and j['energy']['cluster_joules'] is None\" && grep -q 'cluster: nothing measured' e3.txt" "energy of 3 systems"
  # Ordinary runs print no ratio to a published figure: only the fidelity decks carry one.
  run stencil --set wafer.pe_grid=8x8 --set stencil.nx=8 --set stencil.ny=8 --set stencil.nz=8 > s.txt
  run eam --set eam.cells=4x4x4 --set eam.steps=5 --set eam.crosscheck=none > e.txt
  expect "! grep -qi 'published' s.txt e.txt" "an ordinary run compares itself with a published figure"
  ;;
binding)
  # Each rank's CPUs as the OS reports them for the same launch
  # (/proc/self/status), and the warning when ranks share a core.
  run halo --quiet --json b.json > /dev/null
  # The JSON summarises per host (hosts alike counted once): one host here,
  # its CPUs the union of the ranks' lists.
  want=$(mpiexec -n "$ranks" grep Cpus_allowed_list /proc/self/status | awk '{print $2}' | tr '\n' ' ')
  expect "/usr/bin/python3 - b.json '$want' <<'PY'
import json, sys
def cpus(text):
    out = set()
    for part in text.split(','):
        lo, _, hi = part.partition('-')
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out
b = json.load(open(sys.argv[1]))['binding']
union = set().union(*(cpus(t) for t in sys.argv[2].split()))
kinds = b['host_kinds']
sys.exit(0 if b['hosts'] == 1 and b['ranks'] == $ranks and len(kinds) == 1 and kinds[0]['hosts'] == 1
         and kinds[0]['ranks_per_host'] == $ranks and cpus(kinds[0]['cpus']) == union else 1)
PY" "binding: the JSON's host summary differs from the OS's CPUs ($want): $(cat b.json | tail -c 300)"
  mpiexec -n "$ranks" --bind-to none "$wafer" halo --json u.json > out.txt
  expect "json u.json \"j['binding']['shared_core'] == True and j['binding']['host_kinds'][0]['shared_core'] == True\" && grep -q 'warning: ranks 0 and 1 share a core' out.txt" \
         "unbound ranks on one host: no shared-core warning"
  ;;
outputs)
  # Outputs as a hostile user names them (docs/reliability.md).
  # --json into a named pipe nobody reads: an error at once, no hang.
  mkfifo nobody
  t0=$(date +%s)
  timeout 60 mpiexec -n "$ranks" "$wafer" halo --quiet --set halo.iterations=5 --json nobody > /dev/null 2> fifo.err
  rc=$?
  expect "[ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q 'a named pipe that nobody reads' fifo.err" \
         "--json into an unread pipe: exit $rc after $(($(date +%s) - t0)) s: $(tail -1 fifo.err)"
  # Names whose temporary (NAME.part.XXXXXX) would not fit: refused before any work.
  long=$(printf 'n%.0s' $(seq 1 248))
  for opt in "--set output.file=$long.h5" "--json $long"; do
    # shellcheck disable=SC2086
    run halo --quiet --set halo.iterations=5 $opt > /dev/null 2> long.err
    rc=$?
    expect "[ $rc -eq 2 ] && grep -q 'too long for its temporary file' long.err && [ -z \"\$(ls | grep nnnn)\" ]" \
           "${opt:0:20}... (248 characters): exit $rc, $(tail -1 long.err)"
  done
  # A finished HDF5 file keeps no disk past its end (its reservation was
  # given back: 1,096 KB on disk for a 71 KB file before).
  run halo --quiet --set halo.iterations=2 --set output.file=small.h5 > /dev/null
  expect "[ \$(du -k small.h5 | cut -f1) -le \$(( \$(stat -c %s small.h5) / 1024 + 64 )) ]" \
         "small.h5 takes $(du -k small.h5 | cut -f1) KB on disk for $(stat -c %s small.h5) bytes"
  # A second --json is refused, not silently the one that wins.
  run halo --quiet --set halo.iterations=5 --json a.json --json b.json > /dev/null 2> twice.err
  expect "[ $? -eq 2 ] && grep -q -- \"--json given twice ('a.json' and 'b.json')\" twice.err && [ ! -e a.json ] && [ ! -e b.json ]" \
         "a second --json: $(tail -1 twice.err)"
  # A name with XML's special characters: the sidecar is valid XML naming the file.
  name="a&b<c>'d\".h5"
  run halo --quiet --set wafer.pe_grid=8x8 --set halo.iterations=2 --set "output.file=$name" > /dev/null
  rc=$?
  /usr/bin/python3 - "$name" <<'PY'
import sys, xml.etree.ElementTree as T
name = sys.argv[1]
items = [e.text for e in T.parse(name[:-3] + ".xmf").iter("DataItem") if e.get("Format") == "HDF"]
sys.exit(0 if items and all(t.startswith(name + ":/") for t in items) else 1)
PY
  ok=$?
  expect "[ $rc -eq 0 ] && [ $ok -eq 0 ]" "an output with & < > ' \" in its name: its XDMF sidecar is not valid XML naming it"
  # Two runs writing one name at once: the file left is one run's, whole.
  cfd=(cfd --quiet --set cfd.nx=64 --set cfd.ny=64 --set cfd.nz=64 --set wafer.pe_grid=16x16
       --set cfd.sponge=4 --set output.file=same.h5)
  for try in 1 2 3 4; do
    rm -f same.h5 same.xmf
    mpiexec -n "$ranks" "$wafer" "${cfd[@]}" --set cfd.steps=5 > /dev/null 2> a.err &
    first=$!
    mpiexec -n "$ranks" "$wafer" "${cfd[@]}" --set cfd.steps=6 > /dev/null 2> b.err
    rc_b=$?
    wait $first
    rc_a=$?
    expect "[ $rc_a -eq 0 ] && [ $rc_b -eq 0 ]" "two runs on one name (try $try): exits $rc_a and $rc_b: $(tail -1 a.err) $(tail -1 b.err)"
    expect "/usr/bin/python3 -c \"import h5py,sys; f=h5py.File('same.h5','r'); sys.exit(0 if f['u'].shape==(64,64,64) and f['shot_gather'].shape[0] in (5,6) and len(f['energy']) > 0 else 1)\"" \
           "two runs on one name (try $try): same.h5 is no whole file of either run"
    expect "no_temporary same.h5" "two runs on one name (try $try): temporaries left: $(ls)"
  done
  ;;
h5_repeat)
  # Regression: Open MPI 4.1's OMPIO lost parts of these collective writes in
  # about 1 run in 10 (see wf_mpi_io_prefer_romio). Every run must write the
  # same owner map.
  for i in 1 2 3 4 5 6 7 8; do
    run halo --quiet --set wafer.pe_grid=16x8 --set halo.iterations=2 --set output.file=r$i.h5 \
        --set wafer.defects="$inputs/defects-sample.txt" --set wafer.spare_columns=2 > /dev/null
    h5dump -d /owner_rank r$i.h5 | tail -n +2 > r$i.txt
    expect "[ -s r$i.txt ] && cmp -s r1.txt r$i.txt" "run $i wrote a different owner map"
  done
  ;;
h5_crash)
  mpiexec -n "$ranks" "$helper" crashed.h5 > /dev/null 2>&1
  expect "[ $? -ne 0 ]" "the crashing writer did not crash"
  expect "[ ! -e crashed.h5 ]" "a crashed write left a file under the final name"
  expect "ls crashed.h5.part.* > /dev/null 2>&1" "the crashed writer never wrote its temporary file"
  ;;
*)
  echo "unknown case $case_name" >&2; exit 2 ;;
esac

finish "$case_name"
