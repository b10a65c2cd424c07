#!/usr/bin/env bash
# Ranks that share no memory and no scratch folder, as on separate nodes:
#   nodes.sh RANKS WAFER MPI_FAMILY TEST_PROGRAM...
# Shared-memory transports off (Open MPI: the ob1 layer over TCP and self
# only; MPICH ch4:ucx: UCX over TCP and self, no node-local shortcut), and
# each rank given its own TMPDIR (rank_tmpdir.sh): the MPI test programs and
# `wafer demo` must pass as they do over shared memory. Prints
# "nodes: N passed, N failed".
set -uo pipefail
case_name=nodes ranks=$1 wafer=$2 family=$3
shift 3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
case $family in
openmpi) export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp ;;
mpich) export UCX_TLS=tcp,self MPIR_CVAR_NOLOCAL=1 ;; # (not verified here: UCX says little)
*) echo "nodes.sh: unknown MPI family '$family'" >&2; exit 2 ;;
esac
export WAFER_NODE_TMP=$work/node-tmp
apart() { mpiexec -n "$ranks" "$here/rank_tmpdir.sh" "$@"; }

if [ "$family" = openmpi ]; then
  # The transports really are TCP and self: Open MPI says which it starts.
  OMPI_MCA_btl_base_verbose=100 apart "$1" > verbose.txt 2>&1
  started=$(grep -o 'initializing btl component [a-z0-9_]*' verbose.txt | awk '{print $4}' | sort -u | tr '\n' ' ')
  expect "[ '$started' = 'self tcp ' ]" "Open MPI started the transports '$started', not self and tcp alone"
fi
for program in "$@"; do
  apart "$program" > "$(basename "$program").txt" 2>&1
  expect "[ $? -eq 0 ]" "$(basename "$program") over TCP: $(tail -3 "$(basename "$program").txt")"
done
apart "$wafer" demo --quiet --json demo.json > demo.txt 2> demo.err
expect "[ $? -eq 0 ] && json demo.json \"j['checks']['failed'] == 0 and j['checks']['passed'] > 0 and {r['workload'] for r in j['runs']} == $(demo_workloads "$wafer")\"" \
       "wafer demo over TCP with a TMPDIR per rank: $(tail -3 demo.err)"
# Each rank had its own scratch folder (the wrapper made one per rank).
expect "[ \$(ls '$WAFER_NODE_TMP' | wc -l) -eq $ranks ]" "one TMPDIR per rank: $(ls "$WAFER_NODE_TMP")"
finish nodes
