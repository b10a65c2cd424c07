#!/usr/bin/env bash
# `cmake --install` and a relocated prefix: install.sh RANKS BUILD_DIR SOURCE_DIR
# Installs the build into a temporary prefix, moves the prefix elsewhere,
# and runs `wafer --version`, `wafer fidelity` and `wafer demo` from it with
# the source and build trees hidden (a private mount namespace with empty
# folders over them: needs root, as CI has; elsewhere only the relocation is
# tested). Prints "install: N passed, N failed".
set -uo pipefail
case_name=install ranks=$1 build=$2 source_dir=$3 wafer=unused
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

cmake --install "$build" --prefix "$work/first" > install.log 2>&1
expect "[ $? -eq 0 ]" "cmake --install failed: $(tail -3 install.log)"
mv "$work/first" "$work/moved" # relocatable: nothing may remember the first prefix
prefix=$work/moved
expect "[ -x $prefix/bin/wafer ] && [ -d $prefix/share/wafer/inputs/fidelity ] && [ -f $prefix/share/wafer/scripts/plot_loss.py ] && [ -f $prefix/share/doc/wafer/README.md ]" \
       "installed layout (bin/wafer, share/wafer/{inputs,scripts}, share/doc/wafer)"
expect "[ ! -L $prefix/share/wafer/inputs ] && [ ! -L $prefix/share/wafer/scripts ]" "installed data are copies, not links"

# The build's own launcher (test-bin/mpiexec: this MPI's), copied out of the
# build tree that is about to be hidden.
mkdir -p "$work/bin" && cp "$build/test-bin/mpiexec" "$work/bin/mpiexec"
# The commands, run from the prefix; their outputs land in $work.
cat > from_prefix.sh <<SCRIPT
set -u
cd "$work"
export PATH="$work/bin:\$PATH"
"$prefix/bin/wafer" --version > version.txt 2>&1 || exit 11
mpiexec -n 1 "$prefix/bin/wafer" fidelity --quiet --json fidelity.json > /dev/null 2> fidelity.err || exit 12
mpiexec -n $ranks "$prefix/bin/wafer" demo --quiet --json demo.json > demo.txt 2> demo.err || exit 13
SCRIPT
hidden=no
if [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null &&
   unshare -m true 2> /dev/null; then
  # Empty folders over the source and build trees, for these commands alone.
  # (The build tree first: it may lie inside the source tree.)
  unshare -m bash -c "mount -t tmpfs none '$build' && mount -t tmpfs none '$source_dir' && bash from_prefix.sh"
  rc=$?
  hidden=yes
else
  bash from_prefix.sh
  rc=$?
fi
expect "[ $rc -eq 0 ]" "a command from the prefix failed ($rc; hidden trees: $hidden): $(cat fidelity.err demo.err 2>/dev/null | tail -5)"
expect "grep -q \"^data: *$prefix/share/wafer\" version.txt" "--version names the prefix's data: $(grep data: version.txt)"
decks=$(ls "$source_dir"/inputs/fidelity/*.ini | wc -l)
expect "json fidelity.json \"j['count'] == $decks and len(j['cases']) == $decks\"" "fidelity from the prefix's $decks decks"
expect "json demo.json \"j['checks']['failed'] == 0 and {r['workload'] for r in j['runs']} == $(demo_workloads "$build/wafer") and j['ranks'] == $ranks\"" "demo from the prefix on $ranks ranks"
echo "source and build trees hidden: $hidden"
finish install
