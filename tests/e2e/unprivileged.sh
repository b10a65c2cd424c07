#!/usr/bin/env bash
# wafer built and tested by an ordinary user, as at a centre:
#   unprivileged.sh RANKS SOURCE_DIR
# A user made for the test (CI runs as root) copies the source tree into a
# folder of its own, builds it with `make build` (nothing installed: setup
# only names what is missing) and runs the quick cases: the unit tests and a
# few MPI and end-to-end ones. Nothing under /root (the user cannot read it)
# and no system folder (it cannot write one) may be needed. Then a missing
# dependency: configure must name it and the variable that points at it.
# Skipped (77) when not root or without useradd/runuser.
set -uo pipefail
case_name=unprivileged ranks=$1 source_dir=$2 wafer=unused
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
user=wafer-test
if [ "$(id -u)" -ne 0 ] || ! command -v useradd > /dev/null || ! command -v runuser > /dev/null; then
  echo "SKIP: needs root to create an unprivileged user (useradd, runuser)"
  exit 77
fi
id "$user" > /dev/null 2>&1 || useradd --no-create-home --shell /bin/bash "$user" || exit 1
chmod 755 "$work"
mkdir -p "$work/src" "$work/home"
# The tree as a fresh clone has it: no build folders.
tar -C "$source_dir" --exclude='./build*' -cf - . | tar -C "$work/src" -xf -
chown -R "$user" "$work/src" "$work/home"
as_user() {
  runuser -u "$user" -- env -i HOME="$work/home" PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$work/home" \
    bash -c "$1"
}
as_user "cd '$work/src' && make build BUILD='$work/home/b' > '$work/home/build.log' 2>&1"
expect "[ $? -eq 0 ]" "make build as $user failed: $(tail -5 "$work/home/build.log")"
as_user "cd '$work/home/b' && ctest -L unit && ctest -R '^(test_halo_np$ranks|test_h5_np$ranks|e2e_halo_np$ranks|e2e_references|stencil_ranks_np$ranks)\$'" \
  > quick.txt 2>&1
expect "[ $? -eq 0 ] && grep -q '100% tests passed' quick.txt" "quick cases as $user: $(grep -E 'Failed|tests passed' quick.txt | tail -4)"
expect "! grep -q '/root' '$work/home/b/CMakeCache.txt'" "the build names a path under /root: $(grep /root "$work/home/b/CMakeCache.txt" | head -2)"
# A dependency the machine lacks (HDF5 hidden from CMake and pkg-config):
# one message naming it and its variable.
as_user "cd '$work/src' && PKG_CONFIG_LIBDIR=/nonexistent make build BUILD='$work/home/b2' CMAKE_FLAGS=-DCMAKE_DISABLE_FIND_PACKAGE_HDF5=ON" \
  > missing.txt 2>&1
expect "[ $? -ne 0 ] && grep -q 'wafer needs parallel HDF5' missing.txt && grep -q 'HDF5_ROOT' missing.txt" \
       "a missing HDF5 as $user: $(grep -A3 'CMake Error' missing.txt | head -6)"
expect "grep -q 'not root, so nothing is installed' missing.txt || ! grep -q 'apt-get install' missing.txt" \
       "setup as $user: $(head -3 missing.txt)"
finish unprivileged
