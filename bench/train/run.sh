#!/usr/bin/env bash
# `wafer train` against PyTorch (Debian's python3-torch: the same model,
# bench/train/torch_train.py, on as many threads as wafer has ranks) on the
# shape llm.c's CPU trainer was measured at on this machine (issue 14: 4
# layers, 4 heads, width 256, sequence 64, batch 4: 759 tokens/s, 14.9
# GFLOP/s on one thread; llm.c is not built here). Medians of REPEATS runs:
#   resident   1 rank: tokens/s, GFLOP/s and the fraction of the sgemm rate
#              wafer measures in the same run (512^3, one thread);
#   streaming  1 MemoryX rank + 1 worker: the same model's weights streamed
#              to the worker each step: tokens/s and the stall;
#   slow link  the same with MemoryX paced to train.memoryx_gbps = SLOW_GBPS,
#              so the no-stall condition fails: the stall measured against
#              the one the link model predicts from the measured compute;
#   one wafer  one replica's step on 1 and 2 ranks of one wafer (its weight
#              matrices in 2D tiles over them, train.wafer_ranks): the
#              speedup and the fraction of the machine's sgemm each rank
#              keeps, at batch GRID_BATCH;
#   relay      16 MB from MemoryX to every worker through the SwarmX tree
#              (point-to-point, ws_relay.h) against MPI_Bcast over the same
#              ranks in the same run: 1 MemoryX + 1 worker (the streamed
#              run), and 1 MemoryX + 1 SwarmX + 2 workers.
# Writes bench/train/results.md.
#   bench/train/run.sh            (after `make build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
REPEATS=${REPEATS:-5}
STEPS=${STEPS:-40}
SLOW_GBPS=${SLOW_GBPS:-0.1}
GRID_BATCH=${GRID_BATCH:-8}
out=bench/train/out
mkdir -p "$out"
SHAPE="--set train.layers=4 --set train.heads=4 --set train.channels=256 --set train.seq=64
       --set train.batch=4 --set train.steps=$STEPS --set train.eval_every=1000"

m() { printf '%s\n' "$@" | median; }
run() { # run NAME RANKS ARGS...: one run, its JSON in $out/NAME.json
  local name=$1 ranks=$2
  shift 2
  # shellcheck disable=SC2086
  mpiexec -n "$ranks" "$WAFER" train --quiet $SHAPE "$@" --json "$out/$name.json" > "$out/$name.txt"
  [ "$(field "$out/$name.json" "j['status']")" = ok ] || { echo "run failed: $out/$name.txt" >&2; exit 1; }
}

tok=() gf=() frac=() sg=() torch=() stok=() sstall=() slow=() slowstall=() slowpred=()
g1=() g2=() g12=() g1frac=() g2frac=() r2=() r4=()
for rep in $(seq "$REPEATS"); do
  run res 1
  tok+=("$(field "$out/res.json" "j['train']['tokens_per_s']")")
  gf+=("$(field "$out/res.json" "j['train']['GFLOPs']")")
  sg+=("$(field "$out/res.json" "j['train']['sgemm_GFLOPs']")")
  frac+=("$(field "$out/res.json" "j['train']['fraction_of_sgemm']")")
  torch+=("$($py bench/train/torch_train.py 4 4 256 64 4 "$STEPS" 1)")
  run str 2 --set wafer.memoryx_ranks=1 --set train.sgemm=false
  stok+=("$(field "$out/str.json" "j['train']['tokens_per_s']")")
  sstall+=("$(field "$out/str.json" "j['train']['streaming']['stall_seconds'] / j['train']['streaming']['step_seconds']")")
  run slow 2 --set wafer.memoryx_ranks=1 --set train.sgemm=false --set train.memoryx_gbps="$SLOW_GBPS"
  slow+=("$(field "$out/slow.json" "j['train']['tokens_per_s']")")
  slowstall+=("$(field "$out/slow.json" "j['train']['streaming']['stall_seconds']")")
  slowpred+=("$(field "$out/slow.json" "j['train']['streaming']['predicted_stall_seconds']")")
  run g1 1 --set train.batch="$GRID_BATCH"
  run g2 2 --set train.batch="$GRID_BATCH"
  g1+=("$(field "$out/g1.json" "j['train']['tokens_per_s']")")
  g2+=("$(field "$out/g2.json" "j['train']['tokens_per_s']")")
  g12+=("$($py -c "print(${g2[-1]} / ${g1[-1]})")")
  g1frac+=("$(field "$out/g1.json" "j['train']['fraction_of_sgemm']")")
  g2frac+=("$(field "$out/g2.json" "j['train']['fraction_of_sgemm']")")
  run relay 4 --set wafer.memoryx_ranks=1 --set wafer.swarmx_ranks=1 --set train.sgemm=false \
      --set train.steps=2
  ratio="j['train']['streaming']['swarmx_tree']['relay_bytes_per_s'] / j['train']['streaming']['swarmx_tree']['bcast_bytes_per_s']"
  r2+=("$(field "$out/str.json" "$ratio")")
  r4+=("$(field "$out/relay.json" "$ratio")")
  echo "run $rep: relay / MPI_Bcast: ${r2[-1]} (MemoryX -> worker), ${r4[-1]} (MemoryX -> SwarmX -> 2 workers)"
  echo "run $rep: one wafer of 1 rank ${g1[-1]} tokens/s, of 2 ranks ${g2[-1]}"
  echo "run $rep: wafer $(m "${tok[-1]}") tokens/s, torch ${torch[-1]}, streamed ${stok[-1]} (stall ${sstall[-1]}), slow link ${slow[-1]} (stall ${slowstall[-1]} s, predicted ${slowpred[-1]} s)"
done

$py - "$out" "$REPEATS" "$STEPS" "$SLOW_GBPS" "$(m "${tok[@]}")" "$(m "${gf[@]}")" "$(m "${sg[@]}")" \
    "$(m "${frac[@]}")" "$(m "${torch[@]}")" "$(m "${stok[@]}")" "$(m "${sstall[@]}")" "$(m "${slow[@]}")" \
    "$(m "${slowstall[@]}")" "$(m "${slowpred[@]}")" "$(m "${g1[@]}")" "$(m "${g2[@]}")" \
    "$(m "${g1frac[@]}")" "$(m "${g2frac[@]}")" "$GRID_BATCH" "$(m "${r2[@]}")" "$(m "${r4[@]}")" "$(m "${g12[@]}")" <<'PY'
import sys, json, datetime, os, platform, subprocess
out, reps, steps, slow_gbps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
tok, gf, sg, frac, torch, stok, sstall, slow, slowstall, slowpred = map(float, sys.argv[5:15])
g1, g2, g1frac, g2frac = map(float, sys.argv[15:19])
grid_batch = sys.argv[19]
r2, r4, g12 = map(float, sys.argv[20:23])
rt = json.load(open(out + "/relay.json"))["train"]["streaming"]["swarmx_tree"]
rs = json.load(open(out + "/str.json"))["train"]["streaming"]["swarmx_tree"]
g = json.load(open(out + "/g2.json"))["train"]
s = json.load(open(out + "/str.json"))["train"]["streaming"]
w = json.load(open(out + "/slow.json"))["train"]["streaming"]
cpu = os.environ["MACHINE"]  # bench/lib.sh: the CPU, its family and model, its vector ISA, cores
torch_version = subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True).stdout.strip()
step = 1e3 * 4 * 64 / slow
text = f"""# bench/train: results

`bench/train/run.sh` on {datetime.date.today()}, {cpu}, {platform.node()},
PyTorch {torch_version}. The shape llm.c's CPU trainer was measured at here (issue 14: 4
layers, 4 heads, width 256, sequence 64, batch 4: 759 tokens/s, 14.9 GFLOP/s on one
thread). Medians of {reps} runs of {steps} steps each.

| run | tokens/s | GFLOP/s | of sgemm | ours / theirs (time) |
| --- | ---: | ---: | ---: | ---: |
| wafer, resident, 1 rank | {tok:.0f} | {gf:.1f} | {100*frac:.0f}% of {sg:.0f} GFLOP/s | |
| PyTorch, same model, 1 thread | {torch:.0f} | | | {torch/tok:.2f} |
| llm.c (issue 14's figure) | 759 | 14.9 | | {759/tok:.2f} |
| wafer, streamed: 1 MemoryX + 1 worker | {stok:.0f} | | | |

Weight streaming, 1 MemoryX rank and 1 worker on the two cores:

| link | tokens a step needed for no stall | this run | stall, share of the step | stall predicted by the link model |
| --- | ---: | ---: | ---: | ---: |
| as fast as MPI ({s['link_bytes_per_s']/1e9:.1f} GB/s measured) | {s['no_stall_tokens_required']:.0f} | {s['tokens_per_replica']:.0f} | {100*sstall:.1f}% | {1e3*s['predicted_stall_seconds']:.2f} ms |
| paced to {slow_gbps} GB/s | {w['no_stall_tokens_required']:.0f} | {w['tokens_per_replica']:.0f} | {1e3*slowstall:.1f} ms of {step:.0f} ms | {1e3*slowpred:.1f} ms |

One replica (batch {grid_batch}) on one wafer of 1 and of 2 ranks, its weight matrices in 2D
tiles over them ({g['wafer_rank_grid'][0]} x {g['wafer_rank_grid'][1]}; a step moves
{g['step_reduce_words']:.3g} words of partial sums, {g['step_multicast_words']:.3g} of
multicast activations and {g['step_head_words']:.3g} of attention heads' columns, each head
computed on one of the two):

| wafer of | tokens/s | speedup (median of the runs' ratios) | of sgemm, each rank |
| --- | ---: | ---: | ---: |
| 1 rank | {g1:.0f} | 1 | {100*g1frac:.0f}% |
| 2 ranks | {g2:.0f} | {g12:.2f} | {100*g2frac:.0f}% |

The SwarmX relay (point-to-point messages in 512 KiB segments that each SwarmX rank
forwards as they arrive) against MPI_Bcast over the same ranks, 16 MB, the best of 3 of
each in the same run (ranks share the two cores: the 4-rank row is oversubscribed):

| tree | relay (last run) | MPI_Bcast (last run) | relay / MPI_Bcast, median |
| --- | ---: | ---: | ---: |
| MemoryX -> 1 worker | {rs['relay_bytes_per_s']/1e9:.2f} GB/s | {rs['bcast_bytes_per_s']/1e9:.2f} GB/s | {r2:.2f} |
| MemoryX -> SwarmX -> 2 workers | {rt['relay_bytes_per_s']/1e9:.2f} GB/s | {rt['bcast_bytes_per_s']/1e9:.2f} GB/s | {r4:.2f} |

The fraction of sgemm is the training step's counted FLOP/s (3 x the forward's
multiply-adds) over the rate of one 512^3 cblas_sgemm on one thread, measured in the
same run. When the link is fast the stall is the first blocks' AdamW update, which
MemoryX applies when the block is next needed (the link model leaves it out); on the
paced link the measured stall is the link model's (a block leaves MemoryX when the link
has carried the earlier ones and arrives once the worker has asked for it).
"""
open("bench/train/results.md", "w").write(text)
print(text)
PY
