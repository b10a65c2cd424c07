#!/usr/bin/env bash
# The scaling driver (slurm/scale.sh) with mpiexec: scale.sh CASE RANKS WAFER_BINARY
# (Under Slurm, tests/slurm/slurm.sh scale runs it with sbatch.)
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
driver="$(cd "$(dirname "$0")/../.." && pwd)/slurm/scale.sh"
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
  expect "csv_ok strong \"[int(x['ranks']) for x in r] == [$(echo "$list" | tr ' ' ',')] and all(x['status'] == 'ok' for x in r) and all(x['reference'] == 'PETSc' and float(x['reference_seconds_per_unit']) > 0 for x in r) and float(r[0]['efficiency']) == 1.0\"" \
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
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish "scale $case_name"
