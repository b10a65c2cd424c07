#!/usr/bin/env bash
# Runs its arguments with TMPDIR=$WAFER_NODE_TMP/rank<N>, N this process's
# MPI rank as the launcher tells it (Open MPI, MPICH/PMI, Slurm): a scratch
# folder no other rank sees, as on a node-local disk.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}
export TMPDIR=$WAFER_NODE_TMP/rank$rank
mkdir -p "$TMPDIR" || exit 1
exec "$@"
