#!/usr/bin/env bash
# wafer's EAM potential tables against LAMMPS: the energy and every force of a
# perturbed crystal, from tests/eam/eam_energy (brute force through wafer's
# reader and splines) and from `lmp` (pair_style eam or eam/alloy) on the same
# data file. usage: eam_lammps.sh CASE EAM_ENERGY_BINARY   (CASE: cu | w | cuta)
set -uo pipefail
case_name=$1 ranks=1 helper=$2
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/../e2e/lib.sh"
pot=/usr/share/lammps/potentials
expect "[ -x \"\$(command -v lmp)\" ] && [ -d $pot ]" "LAMMPS (Debian packages lammps, lammps-data) is not installed: run scripts/setup"

# crystal.py LATTICE A CELLS TYPES: a LAMMPS data file, every atom moved by a
# deterministic pseudo-random displacement of up to 0.15 A; with 2 types,
# atoms alternate pseudo-randomly between them.
cat > crystal.py <<'PY'
import sys, random
lat, a, n, ntypes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
basis = [(0, 0, 0), (.5, .5, 0), (.5, 0, .5), (0, .5, .5)] if lat == "fcc" else [(0, 0, 0), (.5, .5, .5)]
rng = random.Random(12345)
atoms = []
for i in range(n):
    for j in range(n):
        for k in range(n):
            for b in basis:
                x = [(i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a]
                x = [c + rng.uniform(-0.15, 0.15) for c in x]
                atoms.append((rng.randrange(ntypes) + 1, x))
L = n * a
print("perturbed crystal\n\n%d atoms\n%d atom types\n\n0 %.17g xlo xhi\n0 %.17g ylo yhi\n0 %.17g zlo zhi\n\nAtoms # atomic\n" % (len(atoms), ntypes, L, L, L))
for i, (t, x) in enumerate(atoms):
    print("%d %d %.17g %.17g %.17g" % (i + 1, t, x[0] % L, x[1] % L, x[2] % L))
PY

case $case_name in
cu)   style=eam;       file=Cu_u3.eam;        coeff="1 1 $pot/$file";       elems="Cu";    lat="fcc 3.615 3 1" ;;
w)    style=eam/alloy; file=W_zhou.eam.alloy; coeff="* * $pot/$file W";     elems="W";     lat="bcc 3.165 5 1" ;;
cuta) style=eam/alloy; file=CuTa.eam.alloy;   coeff="* * $pot/$file Cu Ta"; elems="Cu Ta"; lat="fcc 3.7 4 2" ;;
*) echo "unknown case $case_name" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
/usr/bin/python3 crystal.py $lat > cfg.data
cat > in.lmp <<IN
units metal
atom_style atomic
boundary p p p
read_data cfg.data
pair_style $style
pair_coeff $coeff
thermo_style custom step pe
run 0
print "WAFER_PE \$(pe:%.17g)"
write_dump all custom forces.txt id fx fy fz modify sort id format float %.17g
IN
lmp -in in.lmp -log none > lmp.out 2>&1
expect "grep -q WAFER_PE lmp.out && [ -s forces.txt ]" "LAMMPS failed: $(tail -3 lmp.out)"
# shellcheck disable=SC2086
"$helper" "$pot/$file" cfg.data $elems > ours.txt
expect "[ $? -eq 0 ]" "eam_energy failed"
cat > compare.py <<'PY'
import sys
ours = open("ours.txt").read().split("\n")
e_ours = float(ours[0].split()[1])
e_lmp = float([l for l in open("lmp.out") if l.startswith("WAFER_PE")][0].split()[1])
f_ours = {int(l.split()[0]): [float(v) for v in l.split()[1:]] for l in ours[1:] if l.strip()}
f_lmp = {}
lines = open("forces.txt").read().split("\n")
start = lines.index([l for l in lines if l.startswith("ITEM: ATOMS")][0]) + 1
for l in lines[start:]:
    if l.strip():
        v = l.split(); f_lmp[int(v[0])] = [float(x) for x in v[1:]]
fmax = max(abs(c) for f in f_lmp.values() for c in f)
df = max(abs(a - b) for i in f_lmp for a, b in zip(f_ours[i], f_lmp[i]))
de = abs(e_ours - e_lmp) / abs(e_lmp)
print("energy ours %.15g LAMMPS %.15g rel diff %.2e; forces max %.3g, max diff %.2e" % (e_ours, e_lmp, de, fmax, df))
sys.exit(0 if de <= 1e-10 and df <= 1e-10 * fmax and len(f_ours) == len(f_lmp) else 1)
PY
expect "/usr/bin/python3 compare.py" "energy or forces differ from LAMMPS"
finish "eam lammps $case_name"
