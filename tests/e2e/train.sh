#!/usr/bin/env bash
# End-to-end tests of `wafer train`: train.sh CASE RANKS WAFER_BINARY
# Prints "train CASE (N ranks): N passed, N failed".
set -uo pipefail
case_name=$1 ranks=$2 wafer=$3
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
train() { mpiexec -n "$ranks" "$wafer" train --quiet --set train.sgemm=false "$@"; }

case $case_name in
replicas)
  # N data-parallel replicas with the global batch B equal one replica with
  # batch B: the same loss curve to 1e-6 (the gradient sums' order differs).
  mpiexec -n 1 "$wafer" train --quiet --set train.sgemm=false --set train.steps=20 \
      --set output.file=one.h5 > /dev/null
  train --set train.steps=20 --set output.file=many.h5 --set train.wafer_ranks=1 \
      --json j.json > /dev/null
  expect "json j.json \"j['status'] == 'ok' and j['train']['replicas'] == $ranks\"" "run on $ranks ranks"
  expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('one.h5')['train_loss'][...], h5py.File('many.h5')['train_loss'][...]
sys.exit(0 if a.shape == b.shape and np.abs(a - b).max() <= 1e-6 * np.abs(a).max() else 1)\"" \
         "$ranks replicas differ from one"
  ;;
streaming)
  # Weights streamed from MemoryX ranks give the resident data-parallel run's
  # bits: the same loss curve and the same checkpoint (parameters, AdamW's
  # moments), for 1 replica (2 ranks) or 2 (4 ranks: with 2 MemoryX ranks,
  # and with 1 MemoryX and 1 SwarmX rank and a deeper prefetch), and a
  # streamed run stopped and restarted continues bit for bit.
  replicas=$((ranks / 2))
  mpiexec -n $replicas "$wafer" train --quiet --set train.sgemm=false --set train.steps=12 \
      --set train.wafer_ranks=1 --set train.checkpoint=res.ck.h5 --set output.file=res.h5 > /dev/null
  expect "[ $? -eq 0 ]" "resident run on $replicas ranks"
  same() { # same NAME: NAME.h5 and NAME.ck.h5 hold the resident run's bits
    /usr/bin/python3 -c "
import h5py, numpy as np, sys
a, b, ca, cb = h5py.File('res.h5'), h5py.File('$1.h5'), h5py.File('res.ck.h5'), h5py.File('$1.ck.h5')
sys.exit(0 if np.array_equal(a['train_loss'][...], b['train_loss'][...]) and ca.attrs['step'] == cb.attrs['step'] == 12
         and all(np.array_equal(ca[k][...], cb[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)"
  }
  streamed() { # streamed NAME ARGS...
    train --set train.steps=12 --set train.checkpoint="$1.ck.h5" --set output.file="$1.h5" \
        --json "$1.json" "${@:2}" > /dev/null
  }
  streamed mx --set wafer.memoryx_ranks=$((ranks - replicas))
  expect "[ $? -eq 0 ] && json mx.json \"j['status'] == 'ok' and j['train']['mode'] == 'streaming' and j['train']['replicas'] == $replicas and j['train']['streaming']['memoryx_ranks'] == $((ranks - replicas))\"" \
         "streamed run: $(json mx.json 'print(j.get("error") or j.get("train")) or 1' 2>&1)"
  # Streaming checks the kernels and every step's reductions (not the
  # gradient and AdamW, which MemoryX holds: said so).
  expect "json mx.json \"j['checks'] == {'passed': 5, 'failed': 0, 'unchecked': 'gradient and AdamW step against their references'} and max(j['train_checks'].values()) <= 1 and 'reductions_worst_of_allowed' in j['train_checks']\"" \
         "streamed run's checks: $(json mx.json 'print(j["checks"], j["train_checks"]) or 1' 2>&1)"
  expect "same mx" "streamed from $((ranks - replicas)) MemoryX rank(s): not the resident run's bits"
  expect "json mx.json \"0 <= j['train']['streaming']['stall_seconds'] < j['train']['streaming']['step_seconds'] and j['train']['streaming']['weights_out_bytes_per_s'] > 0\"" \
         "streaming figures missing"
  if [ "$ranks" -ge 4 ]; then
    # Through a SwarmX rank that relays the blocks to both workers and adds
    # their gradients (ws_relay.h), the bytes of each hop counted by hand: the
    # default deck's layer is 12 x 64^2 + 13 x 64 = 49,984 floats, its head
    # (embeddings, final LayerNorm) 256 x 64 + 64 x 64 + 2 x 64 = 20,608; a
    # step's 5 fetches (head, 2 layers forward, 2 back) are 882,176 bytes, a
    # model 482,304: MemoryX sends the fetches to the SwarmX rank, which sends
    # them to 2 workers; each worker sends a model up, the SwarmX rank one sum.
    streamed sx --set wafer.memoryx_ranks=1 --set wafer.swarmx_ranks=1 --set train.prefetch=2
    expect "[ $? -eq 0 ] && same sx" "through a SwarmX rank, prefetch 2: not the resident run's bits"
    expect "json sx.json \"j['train']['streaming']['swarmx_tree']['depth'] == 2 and j['train']['streaming']['swarmx_tree']['step_bytes_memoryx_down_swarmx_down_swarmx_up_workers_up'] == [882176, 1764352, 482304, 964608]\"" \
           "SwarmX hop bytes: $(json sx.json 'print(j["train"]["streaming"]["swarmx_tree"]) or 1' 2>&1)"
    # What the SwarmX rank holds to relay, by hand: the head and 3 layers on
    # their way down (prefetch 2), 20,608 + 3 x 49,984, and room for 2 sums
    # of its 2 children's layers, 2 x 2 x 49,984: 370,496 floats, 1.481984
    # MB. A budget below it is refused.
    expect "json sx.json \"j['state_memory']['swarmx_rank_mb'] == 1.481984 and j['state_memory']['swarmx_peak_rss_mb'] > 0\"" \
           "SwarmX budget: $(json sx.json 'print(j["state_memory"]) or 1' 2>&1)"
    expect_bad_input train "swarmx_mb = 1: SwarmX rank 0 would hold 1.5 MB of relay buffers" \
        --set wafer.memoryx_ranks=1 --set wafer.swarmx_ranks=1 --set train.prefetch=2 \
        --set train.swarmx_mb=1
    # A chain MemoryX -> SwarmX -> SwarmX -> worker (fan-out 1) gives the
    # one-rank resident run's bits.
    mpiexec -n 1 "$wafer" train --quiet --set train.sgemm=false --set train.steps=12 \
        --set train.checkpoint=one.ck.h5 --set output.file=one.h5 > /dev/null
    train --set train.steps=12 --set train.checkpoint=chain.ck.h5 --set output.file=chain.h5 \
        --json chain.json --set wafer.memoryx_ranks=1 --set wafer.swarmx_ranks=2 \
        --set train.swarmx_fanout=1 > /dev/null
    expect "[ $? -eq 0 ] && json chain.json \"j['train']['streaming']['swarmx_tree']['depth'] == 3\" && /usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('one.ck.h5'), h5py.File('chain.ck.h5')
sys.exit(0 if all(np.array_equal(a[k][...], b[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
           "a chain of two SwarmX ranks: not the one-rank run's bits"
    # Two MemoryX ranks, each block down its owner's tree through the one
    # SwarmX rank (and its gradients up it), to one worker: the same bits.
    train --set train.steps=12 --set train.checkpoint=mx2.ck.h5 --set output.file=mx2.h5 \
        --json mx2.json --set wafer.memoryx_ranks=2 --set wafer.swarmx_ranks=1 > /dev/null
    expect "[ $? -eq 0 ] && json mx2.json \"j['train']['streaming']['swarmx_tree']['depth'] == 2\" && /usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('one.ck.h5'), h5py.File('mx2.ck.h5')
sys.exit(0 if all(np.array_equal(a[k][...], b[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
           "two MemoryX ranks through a SwarmX rank: not the one-rank run's bits"
    expect_bad_input train "swarmx_fanout = 1: a fan-out of 1 through 1 SwarmX rank reaches 1 worker" \
        --set wafer.memoryx_ranks=1 --set wafer.swarmx_ranks=1 --set train.swarmx_fanout=1
  fi
  # Without SwarmX ranks MemoryX feeds every worker itself: the fan-out
  # bounds relays only (fan-out 1 and 2 workers on 4 ranks).
  streamed p0 --set wafer.memoryx_ranks=$((ranks - replicas)) --set train.prefetch=0 \
      --set train.swarmx_fanout=1
  expect "[ $? -eq 0 ] && same p0" "prefetch 0, fan-out 1 without SwarmX: not the resident run's bits"
  # Stopped at step 5 with a checkpoint (written by MemoryX), restarted.
  train --set wafer.memoryx_ranks=$((ranks - replicas)) --set train.steps=12 --set train.stop_at=5 \
      --set train.checkpoint=half.h5 > /dev/null
  streamed re --set wafer.memoryx_ranks=$((ranks - replicas)) --set train.restart=half.h5
  expect "[ $? -eq 0 ] && json re.json \"j['train']['first_step'] == 5\"" "streamed restart failed"
  expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('res.ck.h5'), h5py.File('re.ck.h5')
sys.exit(0 if all(np.array_equal(a[k][...], b[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
         "a streamed run restarted from its checkpoint differs from the uninterrupted one"
  # Roles that cannot stream: clear errors, exit 2.
  [ "$ranks" -ge 4 ] && expect_bad_input train "3 MemoryX ranks for 2 blocks" \
      --set wafer.memoryx_ranks=3 --set train.layers=1
  expect_bad_input train "needs at least one MemoryX rank" --set wafer.swarmx_ranks=1
  expect_bad_input train "swarmx_fanout" --set wafer.memoryx_ranks=1 --set train.swarmx_fanout=0
  ;;
grid)
  # One wafer over all the ranks (the default), its weight matrices in 2D
  # tiles over them (ws_grid.h): the 1-rank run's loss curve to 1e-6 and its
  # parameters to float round-off, every check passing (the gradient through
  # the distributed products against finite differences); on 4 ranks also
  # two wafers of two against one rank.
  mpiexec -n 1 "$wafer" train --quiet --set train.sgemm=false --set train.steps=20 \
      --set output.file=one.h5 --set train.checkpoint=one.ck.h5 > /dev/null
  close() { # close NAME: NAME.h5 and NAME.ck.h5 are the 1-rank run's to round-off
    /usr/bin/python3 -c "
import h5py, numpy as np, sys
a, b = h5py.File('one.h5')['train_loss'][...], h5py.File('$1.h5')['train_loss'][...]
p, q = h5py.File('one.ck.h5')['parameters'][...], h5py.File('$1.ck.h5')['parameters'][...]
dl, dp = np.abs(a - b).max() / np.abs(a).max(), np.abs(p - q).max() / np.abs(p).max()
print('$1: loss curve %.2g, parameters %.2g apart (relative)' % (dl, dp))
sys.exit(0 if a.shape == b.shape and dl <= 1e-6 and dp <= 1e-4 else 1)"
  }
  on_grid() { # on_grid NAME ARGS...
    train --set train.steps=20 --set output.file="$1.h5" --set train.checkpoint="$1.ck.h5" \
        --json "$1.json" "${@:2}" > /dev/null
  }
  on_grid g
  expect "[ $? -eq 0 ] && json g.json \"j['status'] == 'ok' and j['checks'] == {'passed': 8, 'failed': 0} and j['train']['replicas'] == 1 and j['train']['wafer_ranks'] == $ranks\"" \
         "one wafer of $ranks ranks: $(json g.json 'print(j.get("error") or j.get("checks")) or 1' 2>&1)"
  expect "close g" "one wafer of $ranks ranks differs from one rank"
  # A step's words between the ranks, by hand (batch 8 x 64 = 512 tokens on
  # one wafer; C = 64, V = 256, 2 layers). Forward, each product's block of
  # partial sums is reduced along a grid row (a reduce-scatter: each rank
  # receives its piece of the others' blocks; then an allgather of the
  # reduced pieces) and the reduced blocks go to the other ranks of a
  # column; backward the same with rows and columns swapped. 2 ranks (2 x
  # 1): forward each rank receives half of the other's partial sums, 512 x
  # (2 x (192 + 64 + 256 + 64) + 256) / 2 = 360448 words a rank, 720896 over
  # the two ranks, and as many of reduced halves; backward each rank takes the
  # other's half of every din: 512 x (2 x (64 + 64 + 64 + 256) + 64) =
  # 491520, plus the embedding's rows from their holders, 512 x 64 = 32768:
  # 720896 + 524288 = 1245184 multicast. Attention's 4 heads of 16 go 2 to
  # each rank, which takes the other's: forward their outputs, 512 x 32
  # words a rank, backward their q, k and v gradients, 3 x that: 2 ranks x
  # 2 layers x 4 x 16384 = 262144 head words.
  [ "$ranks" -eq 2 ] && expect "json g.json \"j['train']['step_reduce_words'] == 720896 and j['train']['step_multicast_words'] == 1245184 and j['train']['step_head_words'] == 262144\"" \
      "words a step on 2 ranks: $(json g.json 'print(j["train"].get("step_reduce_words"), j["train"].get("step_multicast_words"), j["train"].get("step_head_words")) or 1' 2>&1)"
  if [ "$ranks" -eq 2 ]; then
    # The same traffic in the run's fabric counts (every product and
    # exchange, the first step's gradient check's passes too): one more
    # step adds the step's 720896 + 1245184 + 262144 = 2228224 words over
    # the two ranks, and on each rank 23 operations (9 products forward: 4
    # a layer and the LM head; 9 backward; the embedding lookup; 2 head
    # shares a layer).
    for n in 3 4; do
      train --set train.steps=$n --set train.eval_every=1000 --set train.eval_batches=1 \
          --json "f$n.json" > /dev/null
    done
    expect "/usr/bin/python3 -c \"
import json, sys
a, b = json.load(open('f3.json'))['fabric'], json.load(open('f4.json'))['fabric']
sys.exit(0 if b['words_between_ranks'] - a['words_between_ranks'] == 2228224 and b['mpi_bytes'] == 4 * b['words_between_ranks']
         and b['operations'] - a['operations'] == 23 and b['model_cycles'] > a['model_cycles'] > 0 else 1)\"" \
           "fabric counts a step: $(json f4.json 'print(j["fabric"]) or 1' 2>&1) after $(json f3.json 'print(j["fabric"]) or 1' 2>&1)"
  fi
  if [ "$ranks" -eq 4 ]; then
    on_grid w2 --set train.wafer_ranks=2
    expect "[ $? -eq 0 ] && json w2.json \"j['status'] == 'ok' and j['train']['replicas'] == 2 and j['train']['wafer_rank_grid'] == [2, 1]\"" \
           "two wafers of two: $(json w2.json 'print(j.get("error") or j.get("checks")) or 1' 2>&1)"
    expect "close w2" "two wafers of two ranks differ from one rank"
  fi
  # Stopped and restarted on the same wafer: bit for bit; its checkpoint (the
  # tiles assembled) restarts a run on one rank.
  train --set train.steps=20 --set train.stop_at=8 --set train.checkpoint=half.h5 > /dev/null
  on_grid re --set train.restart=half.h5
  expect "[ $? -eq 0 ] && /usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('g.ck.h5'), h5py.File('re.ck.h5')
sys.exit(0 if all(np.array_equal(a[k][...], b[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
         "a wafer of $ranks ranks restarted differs from its uninterrupted run"
  mpiexec -n 1 "$wafer" train --quiet --set train.sgemm=false --set train.steps=20 \
      --set train.restart=half.h5 --json one_re.json > /dev/null
  expect "[ $? -eq 0 ] && json one_re.json \"j['train']['first_step'] == 8 and abs(j['train']['last_loss'] - json.load(open('g.json'))['train']['last_loss']) < 1e-5\"" \
         "the wafer's checkpoint does not restart one rank"
  # One token a sequence: each softmax is over one score, so q and k have
  # exactly no gradient, and the gradient check leaves them out.
  train --set train.seq=1 --set train.steps=3 --json s1.json > /dev/null
  expect "[ $? -eq 0 ] && json s1.json \"j['status'] == 'ok' and j['checks']['failed'] == 0\"" \
         "sequences of one token: $(json s1.json 'print(j.get("error") or j.get("checks")) or 1' 2>&1)"
  # Bad input: wafers that do not divide the ranks, a grid finer than a layer.
  expect_bad_input train "wafer_ranks = $((ranks + 1)): $ranks wafer ranks do not make wafers of $((ranks + 1)) ranks" \
      --set train.wafer_ranks=$((ranks + 1))
  expect_bad_input train "wafer_ranks = 0: wte (256 x 1 a layer) has fewer rows or columns than the wafer's" \
      --set train.channels=1 --set train.heads=1
  ;;
relu)
  # The ReLU MLP: the loss falls; each layer's share of zero activations is
  # counted (over the replicas' training passes) and the wafer model's step,
  # skipping their multiplications, is shorter than the dense one; a GELU
  # checkpoint does not restart a ReLU run; generate reads the activation
  # from the checkpoint.
  train --set train.activation=relu --set train.steps=30 --set train.checkpoint=relu.h5 \
      --json r.json > /dev/null
  expect "[ $? -eq 0 ] && json r.json \"j['status'] == 'ok' and j['train']['activation'] == 'relu' and all(0.05 < z < 0.95 for z in j['train']['relu_zero_fraction'])\"" \
         "ReLU run: $(json r.json 'print(j.get("error") or j.get("train")) or 1' 2>&1)"
  # Skipping saves a share of the step below the mean zero share (the
  # skipped products are part of every layer's work, not all of it).
  expect "json r.json \"0 < 1 - j['model']['compute_seconds'][0] / j['model']['dense_compute_seconds'][0] < sum(j['train']['relu_zero_fraction']) / 2\"" \
         "the skipped work is not a share of the step below the zeros' share"
  train --set train.steps=5 --set train.checkpoint=gelu.h5 > /dev/null
  expect_bad_input train "activation = relu: checkpoint 'gelu.h5' was written by a run with activation = gelu" --set train.activation=relu --set train.restart=gelu.h5
  mpiexec -n "$ranks" "$wafer" generate --quiet --set generate.checkpoint=relu.h5 --set generate.length=20 \
      --json g.json > /dev/null
  expect "[ $? -eq 0 ] && json g.json \"j['generate']['trained_steps'] == 30\"" "generate from a ReLU checkpoint"
  # An activation code that is neither GELU (0) nor ReLU (1) is no model.
  for code in -5 7; do
    cp relu.h5 bad$code.h5
    /usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f['shape'][5]=int(sys.argv[2])" bad$code.h5 $code
    mpiexec -n "$ranks" "$wafer" generate --quiet --set generate.checkpoint=bad$code.h5 > /dev/null 2> bad.err
    expect "[ $? -eq 2 ] && grep -q 'activation code $code: 0 (GELU) or 1 (ReLU) expected' bad.err" \
           "generate from a checkpoint with activation code $code: $(tail -1 bad.err)"
  done
  ;;
loss)
  # On the Jargon File the default model's validation loss falls below 3.6
  # nats a byte in 60 steps (5.55 at the start: uniform over 256 bytes).
  train --set train.loss_target=3.6 --set train.plot=loss.png --set output.file=loss.h5 \
      --json j.json > /dev/null
  # And the first step against its references (ws_check.h): LayerNorm's
  # statistics and GELU against their definitions, the gradient against
  # finite differences, AdamW against its definition, the schedule.
  expect "[ $? -eq 0 ] && json j.json \"j['status'] == 'ok' and j['checks'] == {'passed': 8, 'failed': 0} and max(j['train_checks'].values()) <= 1\"" \
         "loss target: $(json j.json 'print(j["train"], j["checks"]) or 1' 2>&1)"
  expect "json j.json \"abs(j['train']['first_val_loss'] - 5.545) < 0.1\"" "the untrained model is not near uniform"
  expect "[ \"\$(head -c 4 loss.png | tail -c 3)\" = PNG ]" "no loss plot"
  # A target the run cannot reach is a failed check, exit 1.
  train --set train.steps=5 --set train.loss_target=2.0 --json f.json > /dev/null
  expect "[ $? -eq 1 ] && json f.json \"j['status'] == 'failed'\"" "an unreachable loss target passed"
  ;;
restart)
  # Stopped at step 15 with a checkpoint, restarted to 30: bit for bit the
  # uninterrupted run's parameters and AdamW state (same ranks, same sums).
  train --set train.steps=30 --set train.stop_at=15 --set train.checkpoint=half.h5 > /dev/null
  train --set train.steps=30 --set train.restart=half.h5 --set train.checkpoint=resumed.h5 \
      --set output.file=resumed_out.h5 --json r.json > /dev/null
  train --set train.steps=30 --set train.checkpoint=full.h5 --set output.file=full_out.h5 --json f.json > /dev/null
  # The losses written are the whole run's (validation every 20 steps: the
  # first part's at step 15 is not one the whole run measures).
  expect "h5same full_out.h5 resumed_out.h5 /train_loss /val_loss" \
         "the restarted run's losses differ from the uninterrupted one's"
  expect "/usr/bin/python3 -c \"
import h5py, sys
a, b = h5py.File('resumed.h5'), h5py.File('full.h5')
sys.exit(0 if a.attrs['step'] == b.attrs['step'] == 30 and all((a[k][...] == b[k][...]).all() for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
         "the restarted run differs from the uninterrupted one"
  expect "json r.json \"j['train']['first_step'] == 15 and j['train']['steps'] == 15 and j['train']['last_val_loss'] == json.load(open('f.json'))['train']['last_val_loss']\"" \
         "restart summary"
  # A restart starts trained: the kernels and AdamW are checked, the
  # gradient's differences are not (they failed correct gradients there).
  expect "json r.json \"j['status'] == 'ok' and j['checks']['failed'] == 0 and j['checks']['unchecked'] == 'gradient against central differences of the loss'\"" \
         "restart checks: $(json r.json 'print(j["checks"]) or 1' 2>&1)"
  expect_bad_input train "channels = 32: checkpoint 'half.h5' was written by a run with channels = 64" --set train.channels=32 --set train.restart=half.h5
  expect_bad_input train "nothing to run" --set train.steps=30 --set train.restart=full.h5
  # Losses that are not those of the checkpoint's steps (more validation
  # rows than its steps had: the rest of the run would write past them).
  cp half.h5 forged.h5
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('forged.h5', 'r+') as f:
    del f['val_loss']; f['val_loss'] = np.array([0, 1, 1, 2, 2, 3, 3, 4, 15, 5], dtype=float)"
  expect_bad_input train "checkpoint 'forged.h5': its series 'val_loss' declares 10 values, more than the 2 its run can have written" \
      --set train.steps=30 --set train.restart=forged.h5
  # One validation row too many, within that bound: its steps are checked.
  /usr/bin/python3 -c "
import h5py, numpy as np
with h5py.File('forged.h5', 'r+') as f:
    del f['val_loss']; f['val_loss'] = np.array([3, 5], dtype=float)"
  expect_bad_input train "checkpoint 'forged.h5' holds 15 training losses and 1 validation losses, not those of its 15 steps" \
      --set train.steps=30 --set train.restart=forged.h5
  # A series declared huge (2^28 values, chunked, never written) is refused
  # before it is read (it was read whole: 2.1 GB, 13 s).
  cp half.h5 huge.h5
  /usr/bin/python3 -c "
import h5py
with h5py.File('huge.h5', 'r+') as f:
    del f['train_loss']; f.create_dataset('train_loss', shape=(2**28,), dtype='f8', chunks=(4096,))"
  expect_bad_input train "its series 'train_loss' declares 268435456 values, more than the 15" \
      --set train.steps=30 --set train.restart=huge.h5
  head -c 3000 /dev/urandom > junk.h5
  expect_bad_input train "junk.h5" --set train.restart=junk.h5
  ;;
streamed_grid)
  # Weights streamed to wafers of 2 ranks, each rank receiving only its
  # tiles (its lane of the relay: ws_stream.h) give the resident wafers' bits:
  # the same loss curve and checkpoint. 3 ranks: a MemoryX rank and one
  # wafer; 6: a MemoryX rank, a SwarmX rank and two wafers.
  wafers=$(( ranks == 6 ? 2 : 1 )) roles=(--set wafer.memoryx_ranks=1)
  [ "$ranks" -eq 6 ] && roles+=(--set wafer.swarmx_ranks=1)
  mpiexec -n $((2 * wafers)) "$wafer" train --quiet --set train.sgemm=false --set train.steps=12 \
      --set train.wafer_ranks=2 --set train.checkpoint=res.ck.h5 --set output.file=res.h5 > /dev/null
  expect "[ $? -eq 0 ]" "resident wafers of 2 ranks on $((2 * wafers)) ranks"
  train --set train.steps=12 --set train.wafer_ranks=2 "${roles[@]}" --set train.checkpoint=st.ck.h5 \
      --set output.file=st.h5 --json st.json > /dev/null
  expect "[ $? -eq 0 ] && json st.json \"j['train']['mode'] == 'streaming' and j['train']['replicas'] == $wafers and j['train']['wafer_rank_grid'] == [2, 1] and j['checks'] == {'passed': 5, 'failed': 0, 'unchecked': 'gradient and AdamW step against their references'}\"" \
         "streamed to wafers of 2: $(json st.json 'print(j.get("error") or j.get("checks")) or 1' 2>&1)"
  # A wafer's products move the resident wafer's words (train_grid_np2's hand
  # count, for batch 8 a wafer; two wafers take 4 sequences each: half).
  expect "json st.json \"j['train']['step_reduce_words'] == 720896 / $wafers and j['train']['step_multicast_words'] == 1245184 / $wafers and j['train']['step_head_words'] == 262144 / $wafers\"" \
         "words a step, streamed: $(json st.json 'print(j["train"].get("step_reduce_words"), j["train"].get("step_multicast_words"), j["train"].get("step_head_words")) or 1' 2>&1)"
  expect "/usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b, ca, cb = h5py.File('res.h5'), h5py.File('st.h5'), h5py.File('res.ck.h5'), h5py.File('st.ck.h5')
sys.exit(0 if np.array_equal(a['train_loss'][...], b['train_loss'][...])
         and all(np.array_equal(ca[k][...], cb[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
         "streamed to wafers of 2 ranks: not the resident wafers' bits"
  # The bytes of each hop, by hand: a place (2 x 1 grid: half the columns of
  # every weight matrix) holds 12 x 64^2 / 2 + 13 x 64 = 25,408 floats of a
  # layer and 256 x 64 / 2 + 64 x 64 + 2 x 64 = 12,416 of the head; MemoryX
  # keeps both places': 50,816 and 24,832. A step's 5 fetches (head, 2
  # layers forward, 2 back) leave MemoryX as 228,096 floats (912,384 bytes);
  # a worker receives its place's 114,048 and sends its place's model up,
  # 63,232 (252,928 bytes).
  # With a SwarmX rank, it receives MemoryX's and sends each worker its
  # place's; it sends one sum of its 2 children's up each lane.
  hops="912384, 0, 0, 505856"
  [ "$ranks" -eq 6 ] && hops="912384, 1824768, 505856, 1011712"
  expect "json st.json \"j['train']['streaming']['swarmx_tree']['step_bytes_memoryx_down_swarmx_down_swarmx_up_workers_up'] == [$hops]\"" \
         "hop bytes to wafers of 2: $(json st.json 'print(j["train"]["streaming"]["swarmx_tree"]) or 1' 2>&1)"
  if [ "$ranks" -eq 6 ]; then
    # What the SwarmX rank holds: the head and 2 layers on their way down
    # (prefetch 1), both places', 24,832 + 2 x 50,816, and room for 2 sums
    # of its 2 children's (a wafer each, in each lane) layers, 2 x 2 x
    # 50,816: 329,728 floats, 1.318912 MB.
    expect "json st.json \"j['state_memory']['swarmx_rank_mb'] == 1.318912\"" \
           "SwarmX budget, wafers of 2: $(json st.json 'print(j["state_memory"]) or 1' 2>&1)"
    # Uneven tiles on a 2 x 2 wafer (45 channels: column blocks of 23 and 22,
    # 135 qkv rows: 68 and 67), 3 blocks over 2 MemoryX ranks, prefetch 3.
    shape=(--set train.channels=45 --set train.heads=5 --set train.layers=3 --set train.steps=6
           --set train.wafer_ranks=4)
    mpiexec -n 4 "$wafer" train --quiet --set train.sgemm=false "${shape[@]}" \
        --set train.checkpoint=res4.ck.h5 --set output.file=res4.h5 > /dev/null
    train "${shape[@]}" --set wafer.memoryx_ranks=2 --set train.prefetch=3 \
        --set train.checkpoint=st4.ck.h5 --set output.file=st4.h5 --json st4.json > /dev/null
    expect "[ $? -eq 0 ] && json st4.json \"j['train']['wafer_rank_grid'] == [2, 2] and j['checks']['failed'] == 0\" && /usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b, ca, cb = h5py.File('res4.h5'), h5py.File('st4.h5'), h5py.File('res4.ck.h5'), h5py.File('st4.ck.h5')
sys.exit(0 if np.array_equal(a['train_loss'][...], b['train_loss'][...])
         and all(np.array_equal(ca[k][...], cb[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
           "uneven tiles on a 2 x 2 wafer from 2 MemoryX ranks: not the resident wafer's bits"
    # Its bytes: the places' tiles make up each matrix (12 x 45^2 = 24,300 a
    # layer), the vectors come once a place (4 x 13 x 45): 26,640 a layer;
    # the head 256 x 45 + 4 x (64 x 45 + 2 x 45) = 23,400. A step's 7 fetches
    # 183,240 floats down, a model of 103,320 up.
    expect "json st4.json \"j['train']['streaming']['swarmx_tree']['step_bytes_memoryx_down_swarmx_down_swarmx_up_workers_up'] == [732960, 0, 0, 413280]\"" \
           "hop bytes of uneven tiles: $(json st4.json 'print(j["train"]["streaming"]["swarmx_tree"]) or 1' 2>&1)"
  else
    # A grid finer than a layer, refused before MemoryX holds anything.
    expect_bad_input train "wafer_ranks = 2: wte (256 x 1 a layer) has fewer rows or columns than the wafer's" \
        "${roles[@]}" --set train.wafer_ranks=2 --set train.channels=1 --set train.heads=1
    # Stopped at step 5 with a checkpoint, restarted: bit for bit.
    train --set train.wafer_ranks=2 "${roles[@]}" --set train.steps=12 --set train.stop_at=5 \
        --set train.checkpoint=half.h5 > /dev/null
    train --set train.wafer_ranks=2 "${roles[@]}" --set train.steps=12 --set train.restart=half.h5 \
        --set train.checkpoint=re.ck.h5 > /dev/null
    expect "[ $? -eq 0 ] && /usr/bin/python3 -c \"
import h5py, numpy as np, sys
a, b = h5py.File('st.ck.h5'), h5py.File('re.ck.h5')
sys.exit(0 if all(np.array_equal(a[k][...], b[k][...]) for k in ('parameters', 'adam_m', 'adam_v')) else 1)\"" \
           "streamed to a wafer of 2, restarted, differs from the uninterrupted run"
  fi
  ;;
memory)
  # Needs 3 ranks. A model whose weights, gradients and AdamW moments (4
  # floats a parameter: 12,749,824 parameters, 204.0 MB) exceed a wafer
  # rank's budget of 100 MB: refused resident, saying by how much; streamed
  # from a MemoryX rank to 2 workers it trains, each worker holding 51.6 MB
  # (the head and 2 layer slots with their gradients: (2 x 140,288 + 4 x
  # 3,152,384) x 4 bytes) and its peak resident set within the budget of a
  # small streamed run's; the MemoryX rank holds the model (its blocks with
  # gradients and moments, and the whole model for checkpoints: 407.99 MB)
  # and room for its 2 children's gradient sums, 2 at once (2 x 1 x
  # 3,152,384 x 4 bytes = 25.22 MB): 433.21 MB counted, its peak resident
  # set above the model's 204 MB. A MemoryX budget below that is refused.
  big=(--set train.channels=512 --set train.layers=4 --set train.heads=4 --set train.seq=16
       --set train.batch=2 --set train.steps=2 --set train.eval_batches=1)
  expect_bad_input train "rank_mb = 100: a wafer rank would hold 204.0 MB of training state (the whole model with its gradients and AdamW moments, resident), 104.0 MB more than allowed" \
      "${big[@]}" --set train.rank_mb=100 --set train.wafer_ranks=1
  expect_bad_input train "memoryx_mb = 300: MemoryX rank 0 would hold 433.2 MB" \
      "${big[@]}" --set wafer.memoryx_ranks=1 --set train.memoryx_mb=300
  train --set wafer.memoryx_ranks=1 --set train.steps=2 --json small.json > /dev/null
  train "${big[@]}" --set wafer.memoryx_ranks=1 --set train.rank_mb=100 --json big.json > /dev/null
  expect "[ $? -eq 0 ] && json big.json \"j['status'] == 'ok' and j['state_memory']['wafer_rank_mb'] == 51.560448 and j['state_memory']['memoryx_rank_mb'] == 433.21344 and j['state_memory']['memoryx_peak_rss_mb'] > 204\"" \
         "the streamed model: $(json big.json 'print(j.get("error") or j.get("state_memory")) or 1' 2>&1)"
  expect "json big.json \"j['state_memory']['wafer_rank_peak_rss_mb'] <= json.load(open('small.json'))['state_memory']['wafer_rank_peak_rss_mb'] + 100\"" \
         "a worker's peak resident set beyond the budget: $(json big.json 'print(j["state_memory"]) or 1' 2>&1), small run $(json small.json 'print(j["state_memory"]) or 1' 2>&1)"
  # A budget of 30 MB is too small for a worker holding whole blocks
  # (51.6 MB), and enough for a rank of a wafer of 2 holding its tiles (half
  # the columns of every weight matrix, the vectors whole): a layer 12 x
  # 512^2 / 2 + 13 x 512 = 1,579,520 floats, the head 256 x 512 / 2 + 16 x
  # 512 + 2 x 512 = 74,752; (2 x 74,752 + 4 x 1,579,520) x 4 bytes = 25.87 MB.
  # MemoryX keeps both places' parts of each block (the vectors twice):
  # (4 x 3,159,040 + 149,504) x 4 numbers and the whole model x 2, with one
  # child a lane no room for sums: 408.57 MB.
  expect_bad_input train "rank_mb = 30: a wafer rank would hold 51.6 MB of training state (the head and 2 layer slots with their gradients, streamed), 21.6 MB more than allowed: fewer layers fetched ahead (prefetch), smaller layers or more ranks a wafer (wafer_ranks)" \
      "${big[@]}" --set wafer.memoryx_ranks=1 --set train.rank_mb=30
  train --set wafer.memoryx_ranks=1 --set train.wafer_ranks=2 --set train.steps=2 \
      --json small_tiles.json > /dev/null
  train "${big[@]}" --set wafer.memoryx_ranks=1 --set train.wafer_ranks=2 --set train.rank_mb=30 \
      --json tiles.json > /dev/null
  expect "[ $? -eq 0 ] && json tiles.json \"j['status'] == 'ok' and j['train']['wafer_rank_grid'] == [2, 1] and j['state_memory']['wafer_rank_mb'] == 25.870336 and j['state_memory']['memoryx_rank_mb'] == 408.567808\"" \
         "streamed to a wafer of 2: $(json tiles.json 'print(j.get("error") or j.get("state_memory")) or 1' 2>&1)"
  # The slots are written when allocated (ws_stream.c, held), so a worker's
  # peak resident set shows them: at most a small run's on the same wafer
  # plus the state counted (a worker holding both places' blocks, 25.9 MB
  # more, fails this).
  expect "json tiles.json \"j['state_memory']['wafer_rank_peak_rss_mb'] <= json.load(open('small_tiles.json'))['state_memory']['wafer_rank_peak_rss_mb'] + j['state_memory']['wafer_rank_mb']\"" \
         "a wafer rank's peak resident set beyond the budget: $(json tiles.json 'print(j["state_memory"]) or 1' 2>&1)"
  expect_bad_input train "rank_mb" --set train.rank_mb=-1
  ;;
generate)
  # Samples from a checkpoint: the same for a seed (on 1 or N ranks), others
  # for another seed; top_k 1 is greedy, the same whatever the seed.
  train --set train.steps=40 --set train.checkpoint=model.h5 > /dev/null
  gen() { mpiexec -n "$1" "$wafer" generate --quiet --set generate.checkpoint=model.h5 \
            --set generate.length=80 "${@:2}"; }
  gen "$ranks" --set generate.seed=3 --json a.json > /dev/null
  gen 1 --set generate.seed=3 --json b.json > /dev/null
  gen "$ranks" --set generate.seed=4 --json c.json > /dev/null
  expect "json a.json \"j['status'] == 'unchecked' and len(j['generate']['text']) == 84 and j['generate']['text'].startswith('The ') and j['generate']['trained_steps'] == 40\"" \
         "generate: $(json a.json 'print(j.get("generate")) or 1' 2>&1)"
  expect "json a.json \"j['generate']['text'] == json.load(open('b.json'))['generate']['text'] != json.load(open('c.json'))['generate']['text']\"" \
         "a seed does not give the same text, or two seeds give the same"
  # On one wafer of all the ranks (the default: its weight matrices in 2D
  # tiles) and on wafers of one rank each: the one-rank text.
  gen "$ranks" --set generate.seed=3 --set generate.wafer_ranks=1 --json w1.json > /dev/null
  expect "json a.json \"j['generate']['wafer_ranks'] == $ranks and json.load(open('w1.json'))['generate']['wafer_ranks'] == 1 and json.load(open('w1.json'))['generate']['text'] == j['generate']['text']\"" \
         "generate on wafers of 1 and of $ranks ranks"
  expect_bad_input generate "wafer_ranks" --set generate.checkpoint=model.h5 \
      --set generate.wafer_ranks=$((ranks + 1))
  gen "$ranks" --set generate.seed=5 --set generate.top_k=1 --json g5.json > /dev/null
  gen "$ranks" --set generate.seed=6 --set generate.top_k=1 --json g6.json > /dev/null
  expect "json g5.json \"j['generate']['text'] == json.load(open('g6.json'))['generate']['text']\"" \
         "greedy sampling depends on the seed"
  expect_bad_input generate "name a checkpoint written by"
  head -c 3000 /dev/urandom > junk.h5
  expect_bad_input generate "junk.h5" --set generate.checkpoint=junk.h5
  ;;
bad_input)
  printf 'tiny' > tiny.txt
  expect_bad_input train "is too short" --set train.corpus=tiny.txt
  expect_bad_input train "cannot open corpus" --set train.corpus=missing.txt
  expect_bad_input train "heads = 0: out of range" --set train.heads=0
  expect_bad_input train "64 channels do not split into 3 heads" --set train.heads=3
  [ "$ranks" -gt 1 ] && expect_bad_input train "do not split evenly over $ranks replicas" \
      --set train.batch=$((ranks + 1)) --set train.wafer_ranks=1
  # A checkpoint whose AdamW second moment went negative (edited, damaged):
  # the next update would take its square root.
  mpiexec -n "$ranks" "$wafer" train --set train.steps=4 --set train.stop_at=2 --set train.eval_every=1 \
      --set train.sgemm=false --set train.checkpoint=ck.h5 --quiet > /dev/null
  /usr/bin/python3 -c "
import h5py
with h5py.File('ck.h5', 'r+') as f:
    v = f['adam_v'][...]; v[7] = -1.0; f['adam_v'][...] = v"
  expect_bad_input train "checkpoint 'ck.h5': adam_v[7] = -1" --set train.restart=ck.h5 \
      --set train.steps=4 --set train.eval_every=1 --set train.sgemm=false
  expect_bad_input generate "checkpoint 'ck.h5': adam_v[7] = -1" --set generate.checkpoint=ck.h5
  # Read by a wafer of ranks, each its own tiles, the damage is named by its
  # place in the file: on a 2 x 1 wafer (64 channels, 32 a rank) the
  # second rank holds the embeddings' channels 32..63, so element 63 (row 0)
  # is its 32nd number and element 64 x 64 + 40 (row 64) its 2,057th.
  if [ "$ranks" -eq 2 ]; then
    /usr/bin/python3 -c "
import h5py
with h5py.File('ck.h5', 'r+') as f:
    v = f['adam_v'][...]; v[7] = 0.0; v[63] = -1.0; f['adam_v'][...] = v
    p = f['parameters'][...]; p[64 * 64 + 40] = float('nan'); f['parameters'][...] = p"
    expect_bad_input train "checkpoint 'ck.h5': dataset 'parameters' holds NaN at element 4136" \
        --set train.restart=ck.h5 --set train.steps=4 --set train.eval_every=1 --set train.sgemm=false
    /usr/bin/python3 -c "
import h5py
with h5py.File('ck.h5', 'r+') as f:
    p = f['parameters'][...]; p[64 * 64 + 40] = 0.0; f['parameters'][...] = p"
    expect_bad_input train "checkpoint 'ck.h5': adam_v[63] = -1" --set train.restart=ck.h5 \
        --set train.steps=4 --set train.eval_every=1 --set train.sgemm=false
  fi
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
finish "train $case_name"
