#!/usr/bin/env bash
# wafer's GPT against PyTorch: gpt_torch.sh GPT_DUMP_BINARY
# One step on three shapes (the second with one head per 8 channels and a
# sequence shorter than the model's, the third with a ReLU MLP), on one rank
# and on wafers of 2, 3 and 4 ranks (the weight matrices in tiles over them),
# compared by gpt_torch.py.
# Exit 77 (skipped) where PyTorch is not installed.
set -uo pipefail
dump=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
for run in "1 256 16 2 4 32 3 5" "1 64 12 3 2 16 2 9" "1 64 12 2 2 16 2 4 1" \
           "2 256 16 2 4 32 3 5" "3 64 12 3 2 16 2 9" "4 64 12 2 2 16 2 4 1"; do
  read -r ranks shape <<< "$run"
  rm -f "$work"/*
  # shellcheck disable=SC2086
  mpiexec -n "$ranks" "$dump" "$work" $shape || exit 1
  /usr/bin/python3 "$here/gpt_torch.py" "$work"
  r=$?
  [ $r -eq 77 ] && exit 77
  [ $r -ne 0 ] && rc=1
done
exit $rc
