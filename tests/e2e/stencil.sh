#!/usr/bin/env bash
# End-to-end tests of `wafer stencil`: stencil.sh CASE RANKS WAFER_BINARY
# Prints "stencil CASE: N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
stencil() { mpiexec -n "$ranks" "$wafer" stencil --quiet --set stencil.stream=false "$@"; }
# An uneven mesh on an 8x8 PE grid: bricks of 4-5 x 3-4 columns.
MESH="--set wafer.pe_grid=8x8 --set stencil.nx=37 --set stencil.ny=29 --set stencil.nz=13"

case $case_name in
petsc)
  # Against PETSc on the same matrix: CG and PCG step for step, BiCGStab within
  # 20% (PETSc's own count moves by 11% with the rank count; docs/stencil.md).
  for solver in cg pcg bicgstab; do
    for bc in "" "--set stencil.bc_x=periodic --set stencil.bc_z=periodic"; do
      rtol=1e-8; [ $solver = bicgstab ] && rtol=1e-12
      # shellcheck disable=SC2086
      stencil $MESH $bc --set stencil.solver=$solver --set stencil.rhs=random \
          --set stencil.rtol=$rtol --set stencil.crosscheck=petsc --json s.json > /dev/null
      expect "[ $? -eq 0 ]" "$solver $bc: run failed"
      tol=1; [ $solver = bicgstab ] && tol="math.ceil(0.2*j['petsc']['iterations'])"
      expect "json s.json \"j['stencil']['reason'].startswith('converged') and abs(j['stencil']['iterations']-j['petsc']['iterations']) <= $tol\"" \
             "$solver $bc: iterations $(json s.json 'print(j["stencil"]["iterations"], j["petsc"]["iterations"]) or 1' 2>&1)"
      expect "json s.json \"j['petsc']['solution_rel_diff'] <= 1e-8\"" "$solver $bc: solutions differ from PETSc's"
    done
  done
  # Float vectors: against PETSc's double solution to 1e-5; mixed (double
  # sums) within 10% of its iterations.
  for prec in single mixed; do
    for solver in cg pcg; do
      # shellcheck disable=SC2086
      stencil $MESH --set stencil.precision=$prec --set stencil.solver=$solver --set stencil.rhs=random \
          --set stencil.crosscheck=petsc --json f.json > /dev/null
      expect "[ $? -eq 0 ]" "$prec $solver: run failed"
      expect "json f.json \"j['stencil']['precision']=='$prec' and j['stencil']['reason'].startswith('converged') and j['petsc']['solution_rel_diff'] <= 1e-5\"" \
             "$prec $solver: solution differs from PETSc's"
      [ $prec = mixed ] && expect "json f.json \"abs(j['stencil']['iterations']-j['petsc']['iterations']) <= math.ceil(0.1*j['petsc']['iterations'])\"" \
             "$prec $solver: iterations far from PETSc's"
    done
  done
  # The general 7-diagonal operator (per-cell coefficients), symmetric and not.
  for case in "cg 0" "pcg 0" "bicgstab 0" "bicgstab 0.5"; do
    set -- $case
    rtol=1e-8; [ $1 = bicgstab ] && rtol=1e-12
    # shellcheck disable=SC2086
    stencil $MESH --set stencil.operator=variable --set stencil.coefficient=random \
        --set stencil.contrast=30 --set stencil.convection=$2 --set stencil.solver=$1 \
        --set stencil.rtol=$rtol --set stencil.crosscheck=petsc --json v.json > /dev/null
    expect "[ $? -eq 0 ]" "variable operator, $1, convection $2: run failed"
    tol=1; [ $1 = bicgstab ] && tol="math.ceil(0.2*j['petsc']['iterations'])"
    expect "json v.json \"abs(j['stencil']['iterations']-j['petsc']['iterations']) <= $tol and j['petsc']['solution_rel_diff'] <= 1e-8\"" \
           "variable operator, $1, convection $2: differs from PETSc"
  done
  ;;
power)
  # The largest eigenvalue of the 7-point operator, analytic: sum over axes of
  # 2 - 2 cos(n pi / (n + 1)) (Dirichlet) or 4 (periodic, even n).
  stencil --set wafer.pe_grid=4x4 --set stencil.nx=10 --set stencil.ny=7 --set stencil.nz=6 \
      --set stencil.bc_z=periodic --set stencil.solver=power --set stencil.rtol=1e-14 \
      --set stencil.max_iterations=20000 --json p.json > /dev/null
  expect "[ $? -eq 0 ]" "power method run failed"
  expect "json p.json \"abs(j['stencil']['lambda'] - (2-2*math.cos(10*math.pi/11) + 2-2*math.cos(7*math.pi/8) + 4)) <= 1e-6 * j['stencil']['lambda']\"" \
         "power method eigenvalue off"
  ;;
order)
  # Manufactured solution: the error falls 4x when h halves (second order).
  for n in 15 31 63; do
    stencil --set wafer.pe_grid=8x8 --set stencil.nx=$n --set stencil.ny=$n --set stencil.nz=$n \
        --set stencil.rhs=manufactured --set stencil.rtol=1e-12 --set stencil.crosscheck=none --json m$n.json > /dev/null
    expect "[ $? -eq 0 ]" "manufactured n=$n failed"
  done
  for pair in "15 31" "31 63"; do
    set -- $pair
    expect "json m$1.json \"3.6 <= j['stencil']['error_max'] / json.load(open('m$2.json'))['stencil']['error_max'] <= 4.4\"" \
           "error ratio n=$1 -> $2 is not about 4"
  done
  ;;
ranks)
  # The same solution on 1 rank and on $ranks ranks (to round-off).
  for n in 1 "$ranks"; do
    # shellcheck disable=SC2086
    mpiexec -n $n "$wafer" stencil --quiet $MESH --set stencil.rhs=random --set stencil.crosscheck=none \
        --set stencil.stream=false --set output.file=x$n.h5 > /dev/null
    expect "[ $? -eq 0 ] && [ -s x$n.h5 ] && [ -s x$n.xmf ]" "run on $n ranks with output"
  done
  expect "h5same --rtol 1e-11 x1.h5 x$ranks.h5 /solution > diff.txt" "solutions differ between 1 and $ranks ranks: $(tail -2 diff.txt)"
  expect "h5dump -H -d /residual_history x1.h5 > header.txt && grep -q DATASPACE header.txt" "residual history in the output"
  ;;
deck)
  # The example deck runs and agrees with PETSc (smaller mesh, same settings);
  # a build without PETSc runs it unchecked.
  stencil "$inputs/stencil.ini" --set wafer.pe_grid=10x10 --set stencil.nx=20 --set stencil.ny=20 \
      --set stencil.nz=16 --json d.json > /dev/null
  expect "[ $? -eq 0 ] && json d.json \"j['status']==('ok' if $have_petsc else 'unchecked') and j['stencil']['solver']=='bicgstab'\"" "inputs/stencil.ini failed"
  # Without PETSc nothing checks the answer: status unchecked, exit 0.
  stencil --set wafer.pe_grid=4x4 --set stencil.nx=8 --set stencil.ny=8 --set stencil.nz=8 \
      --set stencil.crosscheck=none --json u.json > /dev/null
  expect "[ $? -eq 0 ] && json u.json \"j['status']=='unchecked' and j['checks']['passed']==0\"" \
         "a solve without its cross-check is not ok but unchecked"
  # A solve that stops short of its tolerance failed (exit 1, its JSON and
  # output kept); rtol = 0 asks for a fixed number of iterations.
  small="--set wafer.pe_grid=4x4 --set stencil.nx=8 --set stencil.ny=8 --set stencil.nz=8 --set stencil.crosscheck=none"
  # shellcheck disable=SC2086
  stencil $small --set stencil.max_iterations=1 --set output.file=nc.h5 --json nc.json > /dev/null 2> nc.err
  expect "[ $? -eq 1 ] && grep -q 'did not converge: diverged_max_its after 1 iterations' nc.err && [ -s nc.h5 ]" \
         "an unconverged solve: exit 1 naming it, output kept: $(tail -1 nc.err)"
  # shellcheck disable=SC2086
  stencil $small --set stencil.max_iterations=3 --set stencil.rtol=0 --json fixed.json > /dev/null
  expect "[ $? -eq 0 ] && json fixed.json \"j['stencil']['iterations']==3\"" "rtol = 0: a fixed count of 3 iterations"
  ;;
paraview)
  # The output opens in ParaView with every field as written, on 1 and on
  # $ranks ranks (each writes its own block of the shared file).
  need_paraview
  for n in 1 "$ranks"; do
    # shellcheck disable=SC2086
    mpiexec -n $n "$wafer" stencil --quiet $MESH --set stencil.rhs=random --set stencil.crosscheck=none \
        --set stencil.stream=false --set output.file=p$n.h5 > /dev/null
    expect "[ $? -eq 0 ] && [ -s p$n.xmf ]" "run on $n ranks with output"
    paraview_reads p$n.xmf "stencil on $n ranks"
  done
  ;;
plot)
  stencil --set wafer.pe_grid=4x4 --set stencil.nx=12 --set stencil.ny=12 --set stencil.nz=12 \
      --set stencil.plot=conv.png > /dev/null
  expect "[ $? -eq 0 ]" "run with a plot failed"
  expect "[ \"\$(head -c 4 conv.png | od -An -c | tr -d ' ')\" = '211PNG' ]" "conv.png is not a PNG"
  ;;
bad_input)
  bad() { expect_bad_input stencil "$@"; }
  bad "[stencil] nx = 0: out of range" --set stencil.nx=0
  bad "[stencil] nz = -4: out of range" --set stencil.nz=-4
  bad "is smaller than the 64x64 PE grid in x or y" --set stencil.nx=10
  bad "with every axis periodic the operator is singular" --set stencil.bc_x=periodic --set stencil.bc_y=periodic --set stencil.bc_z=periodic
  bad "[stencil] solver = gmres: not one of cg|pcg|bicgstab|power" --set stencil.solver=gmres
  bad "single and mixed precision are implemented for solver = cg or pcg" \
      --set stencil.precision=single --set stencil.solver=bicgstab
  bad "convection makes the operator non-symmetric, and CG needs a symmetric" \
      --set stencil.operator=variable --set stencil.convection=1 --set stencil.solver=cg
  ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac

finish "stencil $case_name"
