#!/usr/bin/env bash
# wafer eam against LAMMPS, side by side, on LAMMPS's classic EAM benchmark
# (fcc Cu, Cu_u3.eam, 32,000 atoms, 1600 K, dt 0.005 ps, skin 1.0, neighbour
# checks every step after a delay of 5, 100 NVE steps) and on bcc W
# (W_zhou.eam.alloy, 16,000 atoms, same settings), at 1 and 2 ranks. Both
# codes start from the same data file (wafer's lattice and velocities) and
# report their loop time; the table gives microseconds per atom-step, the
# ratio wafer/LAMMPS (median of per-repeat pairs: the machine drifts), and
# wafer's estimated GFLOP/s against OpenBLAS DGEMM on the same ranks.
# Writes bench/eam/results.md.
#   bench/eam/run.sh          (after `make build`; about 5 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-5}
RANKS=${RANKS:-"1 2"}
STEPS=${STEPS:-100}
out=bench/eam/out
mkdir -p "$out"
mpicc -O2 -o "$out/dgemm" bench/eam/dgemm.c $(pkg-config --cflags --libs openblas)
pot=/usr/share/lammps/potentials

# name potential pair_style types elements cells: one system ('-': no element names, funcfl)
cases=("cu Cu_u3.eam eam 1_1 - 20x20x20" "w W_zhou.eam.alloy eam/alloy *_* W 20x20x20")
common="--set eam.temperature=1600 --set eam.dt=0.005 --set eam.skin=1.0 --set eam.neigh_delay=5"

: > "$out/rows.txt"
for c in "${cases[@]}"; do
  read -r name file style types elements cells <<< "$c"
  types=${types//_/ }
  [ "$elements" = - ] && elements=""
  # The shared initial state: wafer's lattice and Maxwell-Boltzmann velocities.
  # shellcheck disable=SC2086
  "$WAFER" eam --quiet $common --set eam.potential=$file --set eam.cells=$cells --set eam.steps=0 \
      --set eam.crosscheck=none --set eam.write_data="$out/$name.data" --json "$out/init.json" > /dev/null
  atoms=$(field "$out/init.json" "j['eam']['atoms']")
  cat > "$out/in.$name" <<IN
units metal
atom_style atomic
read_data $out/$name.data
pair_style $style
pair_coeff $types $pot/$file $elements
neighbor 1.0 bin
neigh_modify every 1 delay 5 check yes
fix 1 all nve
timestep 0.005
thermo 50
run $STEPS
IN
  for r in $RANKS; do
    ours=() theirs=() ratio=() opt=() ratio_opt=() frac=() gf=() ratio_avx2=()
    for rep in $(seq "$REPEATS"); do
      # shellcheck disable=SC2086
      mpiexec -n "$r" "$WAFER" eam --quiet $common --set eam.potential=$file --set eam.cells=$cells \
          --set eam.steps=$STEPS --set eam.thermo=50 --set eam.crosscheck=none --json "$out/w.json" > /dev/null
      o=$(field "$out/w.json" "j['eam']['us_per_atom_step']")
      mpiexec -n "$r" lmp -in "$out/in.$name" -log "$out/log.lammps" -screen none
      loop=$(grep "^Loop time" "$out/log.lammps" | awk '{print $4}')
      t=$($py -c "print($loop / ($STEPS * $atoms) * 1e6)")
      # LAMMPS's OPT package (pair_style eam/opt, eam/alloy/opt) on the same input
      mpiexec -n "$r" lmp -sf opt -in "$out/in.$name" -log "$out/log.opt" -screen none
      loop=$(grep "^Loop time" "$out/log.opt" | awk '{print $4}')
      to=$($py -c "print($loop / ($STEPS * $atoms) * 1e6)")
      opt+=("$to") ratio_opt+=("$($py -c "print($o / $to)")")
      # wafer's AVX2 loops too (the CPUs without AVX-512), where auto picked wider ones
      if [ "$(field "$out/w.json" "j['eam']['kernel']")" = avx512 ]; then
        # shellcheck disable=SC2086
        mpiexec -n "$r" "$WAFER" eam --quiet $common --set eam.potential=$file --set eam.cells=$cells \
            --set eam.steps=$STEPS --set eam.thermo=50 --set eam.crosscheck=none --set eam.kernel=avx2 \
            --json "$out/w2.json" > /dev/null
        ratio_avx2+=("$($py -c "print($(field "$out/w2.json" "j['eam']['us_per_atom_step']") / $to)")")
      fi
      g=$(OPENBLAS_NUM_THREADS=1 mpiexec -n "$r" "$out/dgemm")
      gflops=$(field "$out/w.json" "j['eam']['gflops']")
      ours+=("$o") theirs+=("$t") gf+=("$gflops")
      ratio+=("$($py -c "print($o / $t)")")
      frac+=("$($py -c "print($gflops / $g)")")
    done
    mo=$(printf '%s\n' "${ours[@]}" | median)
    mt=$(printf '%s\n' "${theirs[@]}" | median)
    mr=$(printf '%s\n' "${ratio[@]}" | median)
    mg=$(printf '%s\n' "${gf[@]}" | median)
    mto=$(printf '%s\n' "${opt[@]}" | median)
    mro=$(printf '%s\n' "${ratio_opt[@]}" | median)
    mf=$(printf '%s\n' "${frac[@]}" | median)
    ma=-
    [ ${#ratio_avx2[@]} -gt 0 ] && ma=$(printf '%s\n' "${ratio_avx2[@]}" | median | xargs printf '%.3f')
    kernel=$(field "$out/w.json" "j['eam']['kernel']")
    model=$(field "$out/w.json" "'%.0f-%.0f' % tuple(j['model']['timesteps_per_second'])")
    printf '| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %.2f | %.1f%% | %s |\n' \
        "$file" "$atoms" "$r" "$kernel" "$mo" "$mt" "$mr" "$mto" "$mro" "$ma" "$mg" \
        "$($py -c "print(100 * $mf)")" "$model" | tee -a "$out/rows.txt"
  done
done

machine="$(machine), $($py -c 'import platform; print(platform.platform())')"
{
  echo "# EAM molecular dynamics benchmark: wafer vs LAMMPS"
  echo
  echo "Command: \`bench/eam/run.sh\` (medians of $REPEATS runs, $STEPS steps each)  "
  echo "Machine: $machine  "
  echo "Date: $(date +%Y-%m-%d)  "
  echo "LAMMPS: $(lmp -h | grep -m1 'Large-scale' | tr -d '\r' | sed 's/^ *//; s/ *$//'), Debian package  "
  echo
  echo "LAMMPS's classic EAM benchmark settings (its \`bench/in.eam\`): 1600 K, dt 0.005 ps,"
  echo "\`neighbor 1.0 bin\`, \`neigh_modify every 1 delay 5 check yes\`, \`fix nve\`; both codes"
  echo "start from the same data file and report their loop time (thermo every 50 steps)."
  echo "LAMMPS runs with its defaults (\`newton on\`, sorting every 1000 steps), plain and with its"
  echo "OPT package (\`-sf opt\`: eam/opt, eam/alloy/opt), each on the same input. The ratio is the"
  echo "median of per-repeat pairs (the machine's speed drifts). GFLOP/s are estimated from"
  echo "wafer's pair counts (\`EAM_FLOPS_PER_*\` in src/md_eam/eam_force.h) and compared with"
  echo "OpenBLAS DGEMM on the same ranks (\`bench/eam/dgemm.c\`, OPENBLAS_CORETYPE as set here);"
  echo "the EAM kernels are table look-ups, far from DGEMM's FMA stream. \"loops\" is the variant"
  echo "of wafer's force loops the CPU ran (\`eam.kernel = auto\`; src/md_eam/eam_simd.c); on an"
  echo "AVX-512 CPU the AVX2 variant (the loops of CPUs without AVX-512) is timed too, in the same"
  echo "repeats, as its ratio to OPT. The last column is the wafer model's projection (one atom"
  echo "per PE, WSE-2; docs/model.md)."
  echo "Target: ratio to LAMMPS OPT <= 0.35 for Cu on one rank (issue 52). (../shared/NOTES.md quotes"
  echo "LAMMPS at 0.96 us/atom-step for the Cu case on one rank, on another machine: compare the"
  echo "columns side by side, not with the note.)"
  echo
  echo "| system | atoms | ranks | loops | wafer us/atom-step | LAMMPS us/atom-step | ratio wafer/LAMMPS | LAMMPS OPT us/atom-step | ratio wafer/OPT | ratio avx2/OPT | wafer GFLOP/s | % of DGEMM | model timesteps/s |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  cat "$out/rows.txt"
} > bench/eam/results.md
cat bench/eam/results.md
