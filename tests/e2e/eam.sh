#!/usr/bin/env bash
# End-to-end tests of `wafer eam`: eam.sh CASE RANKS WAFER_BINARY
# Every reference is independent of wafer: LAMMPS (lmp, run by the built-in
# cross-check from the same data file), or wafer itself on another rank count
# or without interruption.
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
eam() { mpiexec -n "$ranks" "$wafer" eam --quiet "$@"; }
expect "[ -x \"\$(command -v lmp)\" ]" "LAMMPS (Debian package lammps) is not installed: run scripts/setup"

# lammps_ok FILE WHAT [CHECKS]: the cross-check ran and every check passed:
# thermo rows to 1e-8, forces to 1e-10 of the largest (which must not be ~0),
# (NVE) the energy drift and (velocities drawn here) LAMMPS's temperature of
# them: CHECKS = 4, the default.
lammps_ok() {
  expect "json $1 \"j['status'] == 'ok' and j['checks']['failed'] == 0 and j['checks']['passed'] == ${3:-4}\"" "$2: checks failed"
  expect "json $1 \"j['lammps']['rows_compared'] >= 2 and j['lammps']['thermo_rel_diff'] <= 1e-8\"" \
         "$2: thermo differs from LAMMPS ($(json "$1" "print(j['lammps']['thermo_rel_diff']) or 1" 2>&1))"
  expect "json $1 \"j['lammps']['force_max'] > 0.5 and j['lammps']['force_diff'] <= 1e-10 * j['lammps']['force_max']\"" \
         "$2: forces differ from LAMMPS"
}

# data_max_diff A B: largest difference of positions (minimum image) and
# velocities between two LAMMPS data files written by wafer.
cat > datadiff.py <<'PY'
import sys
def read(path):
    lines = open(path).read().split("\n")
    box = [float(l.split()[1]) - float(l.split()[0]) for l in lines if l.endswith("hi")]
    a, v = lines.index("Atoms # atomic"), lines.index("Velocities")
    x = {int(l.split()[0]): [float(c) for c in l.split()[2:5]] for l in lines[a + 2:v] if l.strip()}
    u = {int(l.split()[0]): [float(c) for c in l.split()[1:4]] for l in lines[v + 2:] if l.strip()}
    return box, x, u
(box, xa, va), (_, xb, vb) = read(sys.argv[1]), read(sys.argv[2])
assert xa.keys() == xb.keys()
dx = max(abs((p - q) - L * round((p - q) / L)) for i in xa for p, q, L in zip(xa[i], xb[i], box))
dv = max(abs(p - q) for i in va for p, q in zip(va[i], vb[i]))
print("%.3g %.3g" % (dx, dv))
PY

case $case_name in
lammps)
  # Cu fcc (funcfl), W bcc (setfl), a random Cu-Ta mix (setfl, two species):
  # 100 NVE steps, every thermo row and the forces of step 100 against LAMMPS.
  eam --json cu.json > /dev/null
  expect "[ $? -eq 0 ]" "Cu run failed"
  lammps_ok cu.json "Cu_u3.eam"
  eam --set eam.potential=W_zhou.eam.alloy --set eam.cells=7x7x7 --set eam.thermo=10 --json w.json > /dev/null
  expect "[ $? -eq 0 ]" "W run failed"
  lammps_ok w.json "W_zhou.eam.alloy"
  expect "json w.json \"j['eam']['atoms'] == 686 and j['lammps']['rows_compared'] == 11\"" "W: wrong system or rows"
  eam --set eam.potential=CuTa.eam.alloy --set "eam.elements=Cu Ta" --set "eam.fractions=0.75 0.25" \
      --set eam.cells=6x6x6 --set eam.steps=60 --set eam.thermo=20 --json cuta.json > /dev/null
  expect "[ $? -eq 0 ]" "Cu-Ta run failed"
  lammps_ok cuta.json "CuTa.eam.alloy"
  ;;
conservation)
  # 1000 NVE steps: the energy drift no worse than LAMMPS's on the same case
  # (rows compared value by value over the first 100 steps only: beyond,
  # chaos amplifies round-off).
  eam --set eam.steps=1000 --set eam.thermo=50 --set eam.crosscheck_steps=100 --json c.json > /dev/null
  expect "[ $? -eq 0 ]" "1000-step run failed"
  lammps_ok c.json "1000 steps"
  expect "json c.json \"0 < j['eam']['energy_drift_per_atom'] <= 1.5 * j['lammps']['energy_drift_per_atom'] + 1e-12\"" \
         "energy drift worse than LAMMPS's"
  ;;
berendsen)
  # The thermostat as LAMMPS's fix temp/berendsen: same rows; heading to 1000 K.
  eam --set eam.thermostat=berendsen --set eam.temperature=1000 --set eam.damp=0.05 \
      --set eam.steps=200 --set eam.thermo=20 --set eam.crosscheck_steps=200 --json b.json > /dev/null
  expect "[ $? -eq 0 ]" "Berendsen run failed"
  lammps_ok b.json "Berendsen" 3  # a thermostat conserves no energy: no drift check
  expect "json b.json \"abs(j['eam']['temp_final'] - 1000) < 100\"" "temperature not near 1000 K"
  ;;
ranks)
  # The same trajectory on 1, 2 and 4 ranks (2x2 blocks, atoms migrating
  # between ranks), to round-off.
  for n in 1 2 4; do
    mpiexec -n $n "$wafer" eam --quiet --set eam.crosscheck=none --set eam.steps=200 \
        --set eam.write_data=final$n.data --json r$n.json > /dev/null
    expect "[ $? -eq 0 ]" "$n-rank run failed"
  done
  # Every variant of the force loops this CPU runs gives the default's bits
  # (the data file holds 17 digits; the energy and pressure as printed); one
  # it lacks is refused by name. On the default crystal; on one squeezed to
  # 770 pairs an atom (blocks of one atom past 512 pairs); with two elements.
  variants() { # NAME ARGS...: each variant against the default's run
    local name=$1 k rc
    shift
    "$wafer" eam --quiet --set eam.crosscheck=none "$@" --set eam.write_data=${name}_auto.data \
        --json ${name}_auto.json > /dev/null 2> ${name}_auto.err
    expect "[ $? -eq 0 ]" "$name: $(tail -2 ${name}_auto.err)"
    for k in avx512 avx2 scalar; do
      "$wafer" eam --quiet --set eam.crosscheck=none "$@" --set eam.kernel=$k \
          --set eam.write_data=${name}_$k.data --json ${name}_$k.json > /dev/null 2> ${name}_$k.err
      rc=$?
      if [ $rc -ne 0 ] && grep -q "does not run the $k kernel" ${name}_$k.err; then
        echo "note: this CPU does not run the $k kernel"
        continue
      fi
      expect "[ $rc -eq 0 ] && json ${name}_$k.json \"j['eam']['kernel'] == '$k'\"" \
             "$name, $k kernel: $(tail -2 ${name}_$k.err)"
      expect "cmp -s ${name}_auto.data ${name}_$k.data" "$name: the $k kernel changes the trajectory"
      expect "json ${name}_$k.json \"all(j['eam'][q] == json.load(open('${name}_auto.json'))['eam'][q] for q in ('pe_final', 'press_final'))\"" \
             "$name: the $k kernel changes the energy or pressure"
    done
  }
  variants cu --set eam.steps=200
  expect "cmp -s final1.data cu_auto.data" "1 rank with and without mpiexec differ"
  variants squeezed --set eam.lattice_constant=1.1 --set eam.cells=10x10x10 --set eam.dt=1e-4 \
      --set eam.temperature=50 --set eam.steps=3
  variants cuta --set eam.potential=CuTa.eam.alloy --set "eam.elements=Cu Ta" \
      --set "eam.fractions=0.75 0.25" --set eam.cells=6x6x6 --set eam.steps=60
  # Nothing was compared with a reference: the run says so.
  expect "json r1.json \"j['status'] == 'unchecked' and j['checks']['passed'] == 0\"" \
         "a run without its cross-check is not ok but unchecked"
  for n in 2 4; do
    read -r dx dv < <(/usr/bin/python3 datadiff.py final1.data final$n.data)
    expect "/usr/bin/python3 -c 'import sys; sys.exit(0 if $dx <= 1e-9 and $dv <= 1e-8 else 1)'" \
           "1 vs $n ranks: positions differ by $dx A, velocities by $dv A/ps"
    expect "json r$n.json \"abs(j['eam']['etotal_final'] - json.load(open('r1.json'))['eam']['etotal_final']) <= 1e-9 * abs(j['eam']['etotal_final'])\"" \
           "1 vs $n ranks: energies differ"
  done
  # The wafer's own mapping (one lattice site per PE, the crystal folded onto
  # a 48x48 PE grid, atoms never change PE): the same trajectory.
  for n in 1 2 4; do
    mpiexec -n $n "$wafer" eam --quiet --set eam.crosscheck=none --set eam.steps=200 \
        --set eam.mapping=fold --set wafer.pe_grid=48x48 --set eam.write_data=fold$n.data > /dev/null
    expect "[ $? -eq 0 ]" "fold mapping, $n ranks: run failed"
    read -r dx dv < <(/usr/bin/python3 datadiff.py final1.data fold$n.data)
    expect "/usr/bin/python3 -c 'import sys; sys.exit(0 if $dx <= 1e-9 and $dv <= 1e-8 else 1)'" \
           "columns vs fold mapping on $n ranks: positions differ by $dx A, velocities by $dv A/ps"
  done
  mpiexec -n 4 "$wafer" eam --quiet --set eam.mapping=fold --set wafer.pe_grid=48x48 --json f.json > /dev/null
  expect "[ $? -eq 0 ]" "fold mapping with the LAMMPS cross-check failed"
  lammps_ok f.json "fold mapping"
  # Four columns of ranks: the column two over is not a neighbour. A solid
  # runs; a crystal melted at 60,000 K is stopped when the columns' atoms
  # meet (learnt from the neighbours, two hops: no rank gathers them all).
  {
    fold4="--set eam.cells=16x8x4 --set wafer.rank_grid=4x1 --set eam.mapping=fold
           --set wafer.pe_grid=64x32 --set eam.crosscheck=none --set eam.steps=300"
    # shellcheck disable=SC2086
    mpiexec -n 4 "$wafer" eam --quiet $fold4 > /dev/null 2> solid.err
    expect "[ $? -eq 0 ]" "fold mapping on 4x1 ranks: $(tail -2 solid.err)"
    # shellcheck disable=SC2086
    mpiexec -n 4 "$wafer" eam --quiet $fold4 --set eam.temperature=60000 --set eam.dt=0.001 \
        > /dev/null 2> melt.err
    expect "[ $? -eq 1 ] && grep -q 'column of ranks [0-9]* over' melt.err" \
           "a melted crystal on the fold mapping: $(grep wafer: melt.err | tail -1)"
  }
  ;;
restart)
  # Checkpoint at 60, restart, run to 150: bit for bit the uninterrupted run.
  common="--set eam.crosscheck=none --set eam.checkpoint_every=60 --set eam.thermo=30"
  # shellcheck disable=SC2086
  eam $common --set eam.steps=150 --set eam.checkpoint=full.h5 --set eam.write_data=full.data > /dev/null
  expect "[ $? -eq 0 ]" "uninterrupted run failed"
  # shellcheck disable=SC2086
  eam $common --set eam.steps=60 --set eam.checkpoint=first.h5 > /dev/null
  expect "[ $? -eq 0 ]" "first part failed"
  # shellcheck disable=SC2086
  eam $common --set eam.steps=150 --set eam.restart=first.h5 --set eam.checkpoint=second.h5 \
      --set eam.write_data=second.data --json r.json > /dev/null
  expect "[ $? -eq 0 ]" "restarted run failed"
  expect "json r.json \"j['eam']['first_step'] == 60 and j['eam']['steps'] == 90\"" "restart did not continue from step 60"
  expect "cmp -s full.data second.data" "restarted final state differs from the uninterrupted one"
  expect "h5same full.h5 second.h5" "final checkpoints differ"
  # A checkpoint between list builds (a run's last step, or a signal's): the
  # restart rebuilds the lists where the run last built them, so it too
  # continues bit for bit.
  # shellcheck disable=SC2086
  eam $common --set eam.steps=75 --set eam.checkpoint=mid.h5 > /dev/null &&
  eam $common --set eam.steps=150 --set eam.restart=mid.h5 --set eam.checkpoint=third.h5 \
      --set eam.write_data=third.data > /dev/null
  expect "[ $? -eq 0 ] && cmp -s full.data third.data" \
         "restart from between list builds differs ($(/usr/bin/python3 datadiff.py full.data third.data 2>&1))"
  expect "h5same full.h5 third.h5" "final checkpoints differ (restart from between builds)"
  # A periodic checkpoint (taken at a list build) restarts from its
  # positions: an atom moved in it moves the restart.
  cp first.h5 moved.h5
  /usr/bin/python3 -c "import h5py; f = h5py.File('moved.h5', 'r+'); f['position'][0] += 0.3"
  # shellcheck disable=SC2086
  eam $common --set eam.steps=150 --set eam.restart=moved.h5 --set eam.write_data=moved.data > /dev/null
  expect "[ $? -eq 0 ] && ! cmp -s moved.data second.data" "an atom moved in a periodic checkpoint did not move the restart"
  # The same with the fold mapping (atoms unwrapped, regions from the atoms).
  fold="--set eam.mapping=fold --set wafer.pe_grid=48x48"
  # shellcheck disable=SC2086
  eam $common $fold --set eam.steps=150 --set eam.checkpoint=ffull.h5 --set eam.write_data=ffull.data > /dev/null &&
  eam $common $fold --set eam.steps=60 --set eam.checkpoint=ffirst.h5 > /dev/null &&
  eam $common $fold --set eam.steps=150 --set eam.restart=ffirst.h5 --set eam.checkpoint=fsecond.h5 \
      --set eam.write_data=fsecond.data > /dev/null
  expect "[ $? -eq 0 ] && cmp -s ffull.data fsecond.data" "fold mapping: restarted final state differs"
  # A restart with the cross-check: LAMMPS continues from the checkpoint's state.
  eam --set eam.steps=100 --set eam.restart=first.h5 --json x.json > /dev/null
  expect "[ $? -eq 0 ]" "restart with the LAMMPS cross-check failed"
  lammps_ok x.json "restart" 3  # the velocities are the checkpoint's
  ;;
output)
  # H5MD output read by h5py: frames, ids, observables; and a data file
  # round trip (run on from the written state with its velocities).
  eam --set eam.crosscheck=none --set eam.dump_every=40 --set output.file=traj.h5 \
      --set eam.write_data=end.data --json o.json > /dev/null
  expect "[ $? -eq 0 ]" "run with output failed"
  cat > check.py <<'PY'
import h5py, json, sys
f, j = h5py.File("traj.h5", "r"), json.load(open("o.json"))
pos = f["particles/all/position"]
lines = open("end.data").read().split("\n")
a = lines.index("Atoms # atomic")
end = [[float(c) for c in l.split()[2:5]] for l in lines[a + 2:a + 2 + 2048]]
ok = (list(f["h5md"].attrs["version"]) == [1, 1]
      and list(pos["step"][:]) == [0, 40, 80, 100]
      and pos["value"].shape == (4, 2048, 3)
      and list(f["particles/all/id"][:]) == list(range(1, 2049))
      and (pos["value"][3] == end).all()
      and abs(f["observables/total_energy/value"][-1] - j["eam"]["etotal_final"]) <= 1e-9 * 7000
      and list(f["particles/all/box/edges/step"][:]) == [0, 40, 80, 100]
      and f["particles/all/box/edges/value"][-1].tolist() == [[8 * 3.615, 0, 0], [0, 8 * 3.615, 0], [0, 0, 8 * 3.615]]
      and f["particles/all/velocity/value"].attrs["unit"] == "Angstrom ps-1")
sys.exit(0 if ok else 1)
PY
  expect "/usr/bin/python3 check.py" "H5MD file content wrong"
  # The same file through MDAnalysis's H5MD reader (units, box, time,
  # positions, velocities and observables of every frame).
  cat > check_mda.py <<'PY'
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
from MDAnalysis.coordinates.H5MD import H5MDReader
r, j = H5MDReader("traj.h5"), json.load(open("o.json"))
f = __import__("h5py").File("traj.h5", "r")
ok = len(r) == 4 and r.units == {"time": "ps", "length": "Angstrom", "velocity": "Angstrom/ps", "force": None}
for i, ts in enumerate(r):
    ok = ok and ts.data["step"] == [0, 40, 80, 100][i] and abs(ts.time - 0.005 * ts.data["step"]) < 1e-12
    ok = ok and np.allclose(ts.dimensions, [8 * 3.615] * 3 + [90] * 3)
    ok = ok and np.allclose(ts.positions, f["particles/all/position/value"][i], atol=1e-4)
    ok = ok and np.allclose(ts.velocities, f["particles/all/velocity/value"][i], atol=1e-4)
    last = ts.data["total_energy"] # (the reader rewinds after the last frame)
ok = ok and abs(last - j["eam"]["etotal_final"]) <= 1e-9 * 7000
sys.exit(0 if ok else 1)
PY
  expect "/usr/bin/python3 check_mda.py" "MDAnalysis does not read the H5MD file as written"
  eam --set eam.data=end.data --set eam.velocities=data --set eam.thermo=20 --set eam.plot=thermo.png \
      --json d.json > /dev/null
  expect "[ $? -eq 0 ]" "run from the written data file failed"
  lammps_ok d.json "from a data file" 3  # the velocities are the file's
  expect "[ \"\$(head -c 4 thermo.png | tail -c 3)\" = PNG ]" "no thermo plot written"
  expect "json d.json \"abs(j['eam']['etotal_first'] - json.load(open('o.json'))['eam']['etotal_final']) <= 1e-10 * 7000\"" \
         "the run from the data file does not start where the first one ended"
  ;;
bad_input)
  # msg CODE TEXT ARGS...: the run exits with CODE and says TEXT.
  msg() {
    local code=$1 text=$2
    shift 2
    eam --set eam.crosscheck=none "$@" > out.txt 2>&1
    local rc=$?
    expect "[ $rc -eq $code ] && grep -q -- \"$text\" out.txt" "$* -> exit $rc, wanted $code and '$text': $(tail -2 out.txt)"
  }
  msg 2 "shorter than twice the potential's cutoff" --set eam.cells=2x8x8
  msg 2 "must be > 0" --set eam.dt=0
  msg 2 "out of range" --set eam.dt=-0.001
  msg 2 "stencil.ini:[0-9]*: " --set eam.potential="$inputs/stencil.ini"
  msg 2 "cannot open\|No such file\|cannot read" --set eam.potential=no_such.eam
  msg 2 "EAM potential '/dev/zero' is a named pipe or a device, not a file" --set eam.potential=/dev/zero
  msg 2 "element 'Xx' is not in" --set eam.elements=Xx
  msg 2 "expected NXxNYxNZ" --set eam.cells=8x8
  msg 2 "set \[wafer\] pe_grid = 48x48" --set eam.mapping=fold
  msg 2 "shares summing to 1" --set eam.potential=CuTa.eam.alloy --set "eam.elements=Cu Ta" --set "eam.fractions=0.5 0.6"
  printf 'two atoms\n\n2 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n1 1 5 5 5\n2 1 5.1 5 5\n' > overlap.data
  msg 2 "overlapping atoms" --set eam.data=overlap.data
  msg 2 "it needs a lattice" --set eam.mapping=fold --set eam.data=overlap.data
  printf 'short\n\n3 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n1 1 5 5 5\n2 1 8 5 5\n' > short.data
  msg 2 "short.data:[0-9]*: the Atoms section ends after 2 of 3" --set eam.data=short.data
  printf 'bad\n\n1 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n1 1 5 x 5\n' > nan.data
  msg 2 "nan.data:12: expected 5 numbers" --set eam.data=nan.data
  msg 2 "has no Velocities section" --set eam.data=overlap.data --set eam.velocities=data
  printf 'dup\n\n2 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n7 1 5 5 5\n7 1 8 5 5\n' > dup.data
  msg 2 "dup.data: atom id 7 appears twice" --set eam.data=dup.data
  # A Masses section is checked (the masses themselves come from the potential).
  printf 'm\n\n2 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nMasses\n\n1 -5\n\nAtoms # atomic\n\n1 1 5 5 5\n2 1 8 5 5\n' > mass.data
  msg 2 "mass.data:12: a mass line is 'type mass' with type one of 1..1 and a positive mass (got '1 -5')" --set eam.data=mass.data
  # Velocities listed in another order than Atoms reach the right atoms.
  printf 'v\n\n3 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n7 1 5 5 5\n3 1 8 5 5\n5 1 5 8 5\n\nVelocities\n\n5 1 2 3\n7 4 5 6\n3 7 8 9\n' > v.data
  eam --set eam.crosscheck=none --set eam.data=v.data --set eam.velocities=data --set eam.steps=0 \
      --set eam.write_data=v_out.data > /dev/null 2>&1
  expect "[ \"\$(sed -n '/^Velocities/,\$p' v_out.data | tr -s ' \n' ' ')\" = 'Velocities 3 7 8 9 5 1 2 3 7 4 5 6 ' ]" \
         "velocities not matched to their atoms by id"
  # A timestep far too large: the run blows up, stops with a message, and
  # its last checkpoint is good (a restart from it with a sane timestep runs).
  msg 1 "blown up" --set eam.dt=0.025 --set eam.steps=2000 --set eam.checkpoint=ck.h5 \
      --set eam.checkpoint_every=10 --set output.file=blow.h5 --set eam.dump_every=10
  expect "grep -q 'last good checkpoint: ck.h5, step [1-9][0-9]*0)' out.txt" "no last good checkpoint named"
  # The trajectory written before the blow-up is kept, cut to its frames, and named.
  expect "grep -q 'trajectory up to step [1-9][0-9]*0 is kept in blow.h5' out.txt" "blow-up: trajectory not named"
  expect "/usr/bin/python3 -c \"import h5py,sys; p=h5py.File('blow.h5')['particles/all/position']; s=p['step'][:]; sys.exit(0 if len(s) > 2 and s[0] == 0 and all(s[1:] > 0) and len(p['value']) == len(s) else 1)\"" \
         "blow-up: the frames written before it are lost or padded"
  # A checkpoint was asked for but not due yet: the message says so, not 'set one'.
  msg 1 "no checkpoint written yet to ck2.h5: the first was due at step 1000" --set eam.dt=0.025 \
      --set eam.steps=2000 --set eam.checkpoint=ck2.h5 --set eam.checkpoint_every=1000
  eam --set eam.crosscheck=none --set eam.restart=ck.h5 --set eam.dt=0.001 --set eam.steps=300 > /dev/null 2>&1
  expect "[ $? -eq 0 ]" "restart from the last good checkpoint failed"
  # A checkpoint that does not describe a state this run can continue is an
  # input error, not a crash: species out of range, a negative step, an id twice.
  eam --set eam.crosscheck=none --set eam.steps=10 --set eam.checkpoint=good.h5 > /dev/null 2>&1
  for what in species step id; do
    cp good.h5 bad_$what.h5
    /usr/bin/python3 - bad_$what.h5 $what <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    if sys.argv[2] == "species": f["species"][5] = 9
    elif sys.argv[2] == "step": f.attrs["step"] = -3
    else: f["id"][7] = f["id"][3]
PY
  done
  msg 2 "has species 9, the potential has 1 element" --set eam.restart=bad_species.h5 --set eam.steps=20
  msg 2 "step -3 is negative" --set eam.restart=bad_step.h5 --set eam.steps=20
  msg 2 "appears twice" --set eam.restart=bad_id.h5 --set eam.steps=20
  cp good.h5 bad_x.h5
  /usr/bin/python3 -c "import h5py; f = h5py.File('bad_x.h5', 'r+'); f['position'][4] = 1e300"  # an atom's y
  msg 2 "is at y = 1e+300, a box length outside the box" --set eam.restart=bad_x.h5 --set eam.steps=20
  # good.h5 was taken between list builds: its positions at the last build
  # must be a state the run could have left (inside the box, no atom since
  # moved past half the skin), and its build step a step.
  for what in moved outside huge; do
    cp good.h5 bad_$what.h5
    /usr/bin/python3 - bad_$what.h5 $what <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    x, b = f["position"][...], f["position_at_build"]
    if sys.argv[2] == "moved":
        i = int(np.argmin(np.abs(x[0::3] - 0.5 * f["box"][3])))  # an atom mid-box in x
        b[3 * i] = x[3 * i] + 0.6  # the skin is 1 A
    elif sys.argv[2] == "outside":
        b[0] = f["box"][0] - 0.5
    else:
        f["last_build"][0] = 1e300
PY
  done
  msg 2 "more than half the skin (1 A): the run would have rebuilt its lists" --set eam.restart=bad_moved.h5 --set eam.steps=20
  msg 2 "position at the last list build is outside the box" --set eam.restart=bad_outside.h5 --set eam.steps=20
  msg 2 "last_build 1e+300 is not a step" --set eam.restart=bad_huge.h5 --set eam.steps=20
  # What fuzzing found (tests/fuzz): each an input error, none a crash.
  head='h\n\n1 atoms\n1 atom types\n\n0 20 xlo xhi\n0 20 ylo yhi\n0 20 zlo zhi\n\nAtoms # atomic\n\n'
  # One atom: no degree of freedom once the centre of mass is fixed, so
  # temperature 0, as LAMMPS says (not a NaN "blow-up").
  printf "${head}1 1 5 5 5\n" > one.data
  eam --set eam.data=one.data --set eam.steps=10 --json one.json > /dev/null 2>&1
  expect "json one.json \"j['status'] == 'ok' and j['eam']['temp_final'] == 0 and j['lammps']['thermo_rel_diff'] == 0\"" \
         "a one-atom data file: $(json one.json 'print(j.get("error") or j.get("eam")) or 1' 2>&1)"
  printf "${head}1e70 1 5 5 5\n" > bigid.data
  msg 2 "bigid.data:12: atom id must be an integer in 1..2^53" --set eam.data=bigid.data
  printf "${head}1 1 5 5 5\n\n2 atom types\n" > late.data
  msg 2 "late.data:14: '2 atom types': the header ends at the first section" --set eam.data=late.data
  printf 'h\n\n1000000000000000000 atoms\n1 atom types\n' > many.data
  msg 2 "many.data:3: 1000000000000000000 atoms, but the file has only 1 more lines" --set eam.data=many.data
  printf 'h\n\n1 atoms\n1 atom types\n-inf inf xlo xhi\n' > inf.data
  msg 2 "inf.data:5: expected 'lo hi xlo xhi' with finite lo < hi" --set eam.data=inf.data
  pot() { printf 'fuzz\n%s\n%s\n0 1 2 3 4\n5 4 3 2 1\n1 1 1 1 1\n' "$1" "$2" > p.eam; }
  pot "1e24 63.55" "5 0.1 5 1.0 4.0"
  msg 2 "p.eam:2: atomic number = 1e+24: expected an integer in \[0, 999\]" --set eam.potential=./p.eam
  pot "29 0" "5 0.1 5 1.0 4.0"
  msg 2 "p.eam:2: mass 0: expected a positive mass" --set eam.potential=./p.eam
  pot "29 63.55" "5 1e-300 5 1.0 4.0"
  msg 2 "p.eam:3: drho, dr and the cutoff must be positive (between 1e-30 and 1e30)" --set eam.potential=./p.eam
  printf 'fuzz\n29 63.55\n5 0.1 5 1.0 4.0\n0 1 2 3 1e200\n5 4 3 2 1\n1 1 1 1 1\n' > p.eam
  msg 2 "p.eam:4: F(rho) value 1e+200 is beyond" --set eam.potential=./p.eam
  # No output may overwrite an input or another output ("./x" is "x").
  msg 2 "file = good.h5: the same file as .eam. restart, which the run reads" --set eam.restart=good.h5 --set output.file=good.h5 --set eam.steps=20
  msg 2 "file = run.h5: the same file as .eam. checkpoint, which the run writes too" --set eam.checkpoint=./run.h5 --set output.file=run.h5
  msg 2 "checkpoint = good.h5: the same file as .eam. restart" --set eam.restart=good.h5 --set eam.checkpoint=good.h5 --set eam.steps=20
  msg 2 "write_data = overlap.data: the same file as .eam. data" --set eam.data=overlap.data --set eam.write_data=overlap.data
  expect "[ ! -e run.h5 ] && [ -s good.h5 ]" "a refused run wrote or touched a file"
  # Cell counts never wrap (2^32 + 4 is not 4).
  msg 2 "cells = 4294967300x4x4: each axis 1 .. 100000 cells" --set eam.cells=4294967300x4x4
  ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac
finish "eam $case_name"
