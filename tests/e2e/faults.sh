#!/usr/bin/env bash
# Faults: faults.sh CASE RANKS WAFER_BINARY [TRIALS]
#   signals  SIGTERM to one rank, SIGINT to mpiexec: every rank ends within
#            2 s with the message, the exit status a shell expects and (EAM)
#            a checkpoint that a restart continues from.
#   inject   an I/O failure on one rank only (WAFER_FAULT=SITE@RANK, see
#            src/common/wf_fault.h) on every collective I/O path: every rank
#            exits with the same status, one message, no hang, no file left.
#   kill9    kill -9 of one rank, or of all, at random moments, then restart
#            from the last checkpoint, until the run completes: the final
#            state equals the uninterrupted run's bit for bit, and every file
#            under a final name opens. TRIALS kills (default 4;
#            docs/reliability.md's figures come from TRIALS=20).
set -uo pipefail
case_name=$1 ranks=$2 wafer=$(realpath "$3") trials=${4:-4}
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# mpiexec's SIGTERM-to-SIGKILL grace is what a signalled run writes its
# checkpoint in: Open MPI's default here (lib.sh sets it to 0).
unset OMPI_MCA_odls_base_sigkill_timeout

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# launch ARGS...: start wafer on $ranks ranks in the background ($job: the
# mpiexec pid).
launch() {
  mpiexec -n "$ranks" "$wafer" "$@" > run.out 2> run.err &
  job=$!
}

# The job's ranks, one pid per line: mpiexec's children (Open MPI) or its
# grandchildren (MPICH's Hydra starts them from a proxy).
rank_pids() {
  local name proxy
  name=$(basename "$wafer")
  pgrep -P "$job" -x "$name"
  for proxy in $(pgrep -P "$job"); do pgrep -P "$proxy" -x "$name"; done
}

# A process that exists and has not exited (an exited rank stays a zombie
# until mpiexec collects it, which may take seconds).
running() { [ -r /proc/$1/stat ] && [ "$(awk '{print $3}' /proc/$1/stat 2> /dev/null)" != Z ]; }

# signal_ms SIGNAL WHO: send SIGNAL to one rank (WHO = rank), to every rank
# (all) or to mpiexec (mpiexec); print how many ms later the last rank had
# ended (10000: still running then).
signal_ms() {
  local pids t0 i p alive
  pids=$(rank_pids)
  t0=$(now_ms)
  case $2 in
    rank) kill -"$1" "$(echo "$pids" | tail -1)" ;;
    all) kill -"$1" $pids ;;
    mpiexec) kill -"$1" "$job" ;;
  esac
  for ((i = 0; i < 1000; i++)); do
    alive=0
    for p in $pids; do running "$p" && alive=1; done
    ((alive)) || break
    sleep 0.01
  done
  echo $(($(now_ms) - t0))
}

# wait_for FILE SECONDS: until FILE exists (false after SECONDS, or when
# the job has ended).
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ -e "$1" ] && return 0
    kill -0 $job 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}

ck_step() { h5dump -a step "$1" 2> /dev/null | awk '/\(0\)/ {print $2}'; }

# stopped_at_checkpoint NAME CK OF MORE ARGS...: SIGTERM to one rank of the
# launched `wafer ARGS` (a cfd run writing checkpoint CK): every rank ends
# within 2 s with 143, the message names the step it stopped at ("at step
# N<OF> (last good checkpoint: CK, step N ..."), CK is a checkpoint of that
# step, and a restart from it runs MORE steps more.
stopped_at_checkpoint() {
  local name=$1 ck=$2 of=$3 more=$4 step
  shift 4
  ms=$(signal_ms TERM rank)
  wait $job
  rc=$?
  expect "[ $ms -le 2000 ] && [ $rc -eq 143 ]" "$name: the ranks ended after $ms ms, exit status $rc"
  step=$(sed -n "s/.*interrupted by SIGTERM at step \([0-9]*\)$of (last good checkpoint: $ck, step \1 .*/\1/p" run.err)
  expect "[ -n \"$step\" ] && [ \"$(ck_step "$ck")\" = \"$step\" ]" \
         "$name: no checkpoint of the step it stopped at: $(grep wafer: run.err), checkpoint at step $(ck_step "$ck")"
  mpiexec -n "$ranks" "$wafer" "$@" --set cfd.checkpoint="${ck%.h5}2.h5" --set cfd.restart="$ck" \
    --set cfd.steps=$((step + more)) --json r.json > /dev/null 2> r.err
  expect "[ $? -eq 0 ] && json r.json \"j['cfd']['first_step'] == $step and j['cfd']['steps'] == $more\"" \
         "$name: restart from the signal's checkpoint failed: $(grep wafer: r.err)"
}

# interrupted NAME SIGNAL MESSAGE OUTPUT ARGS...: wafer ARGS on $ranks ranks,
# SIGNAL (TERM or INT) to one rank after 3 s: every rank ends within 2 s
# with the signal's exit status (128 + its number), run.err matches MESSAGE
# (a grep pattern), and OUTPUT was not written.
interrupted() {
  local name=$1 sig=$2 message=$3 output=$4 status
  shift 4
  status=$((128 + $(kill -l "$sig")))
  launch "$@"
  sleep 3
  ms=$(signal_ms "$sig" rank)
  wait $job
  rc=$?
  expect "[ $ms -le 2000 ] && [ $rc -eq $status ]" "$name: the ranks ended after $ms ms, exit status $rc"
  expect "grep -q '$message' run.err" "$name: no message: $(cat run.err)"
  expect "[ ! -e $output ]" "$name: an interrupted run left its output"
}

eam_args=(eam --quiet --set eam.cells=10x10x10 --set eam.crosscheck=none --set eam.thermo=0)

case $case_name in
signals)
  # EAM, SIGTERM to one rank once the first checkpoint is there.
  launch "${eam_args[@]}" --set eam.steps=1000000 --set eam.checkpoint=ck.h5 \
         --set eam.checkpoint_every=50 --set output.file=traj.h5 --set eam.dump_every=100 --json s.json
  wait_for ck.h5 60
  sleep 0.5
  ms=$(signal_ms TERM rank)
  wait $job
  rc=$?
  expect "[ $ms -le 2000 ] && [ $rc -eq 143 ]" "SIGTERM to one rank: the ranks ended after $ms ms, exit status $rc (want <= 2000 ms, 143)"
  step=$(sed -n 's/.*interrupted by SIGTERM at step \([0-9]*\); checkpoint written to ck.h5.*/\1/p' run.err)
  expect "[ -n \"$step\" ]" "no 'interrupted by SIGTERM at step N; checkpoint written' message: $(cat run.err)"
  expect "[ \"$(ck_step ck.h5)\" = \"$step\" ]" "the checkpoint is at step $(ck_step ck.h5), the message says $step"
  expect "json s.json \"j['status'] == 'interrupted'\"" "JSON status is not 'interrupted'"
  expect "grep -q 'trajectory up to step .* is kept in traj.h5' run.err && h5ls traj.h5/particles/all/position > /dev/null" \
         "the trajectory was not kept"
  # The checkpoint continues: 20 more steps, a clean finish, bit for bit the
  # run that was never stopped (the same list rebuilds, at each checkpoint's step).
  mpiexec -n "$ranks" "$wafer" "${eam_args[@]}" --set eam.restart=ck.h5 --set eam.steps=$((step + 20)) \
    --set eam.checkpoint_every=50 --set eam.write_data=r.data --json r.json > /dev/null 2> r.err
  expect "[ $? -eq 0 ] && json r.json \"j['eam']['first_step'] == $step and j['status'] == 'unchecked'\"" \
         "restart from the signal's checkpoint failed: $(cat r.err)"
  mpiexec -n "$ranks" "$wafer" "${eam_args[@]}" --set eam.steps=$((step + 20)) \
    --set eam.checkpoint_every=50 --set eam.write_data=u.data > /dev/null 2>&1
  expect "cmp -s r.data u.data" "the restart from the signal's checkpoint (step $step) is not bit for bit the uninterrupted run"

  # EAM, SIGINT to every rank at once (a terminal's Ctrl-C reaches the whole
  # process group), then SIGINT to mpiexec alone: Open MPI's mpiexec passes
  # it on as SIGTERM a second later (and sends SIGKILL a second after that):
  # 2 s from the ranks' signal.
  for who in all mpiexec; do
    limit=2000
    [ $who = mpiexec ] && limit=3000
    rm -f ck.h5 s.json
    launch "${eam_args[@]}" --set eam.steps=1000000 --set eam.checkpoint=ck.h5 \
           --set eam.checkpoint_every=50 --json s.json
    wait_for ck.h5 60
    sleep 0.5
    ms=$(signal_ms INT $who)
    wait $job
    expect "[ $ms -le $limit ]" "SIGINT to $who: the ranks ended after $ms ms"
    expect "grep -q 'interrupted by SIG[A-Z]* at step' run.err && [ -n \"$(ck_step ck.h5)\" ] && json s.json \"j['status'] == 'interrupted'\"" \
           "SIGINT to $who: no message, checkpoint or summary: $(cat run.err)"
  done

  # A batch system's warnings (Slurm's --signal=USR1@120) and a lost
  # terminal stop a run the same way, with its checkpoint (they ended it at
  # once, nothing kept).
  for sig in USR1 HUP; do
    rm -f ck.h5 s.json
    launch "${eam_args[@]}" --set eam.steps=1000000 --set eam.checkpoint=ck.h5 \
           --set eam.checkpoint_every=50 --json s.json
    wait_for ck.h5 60
    sleep 0.5
    ms=$(signal_ms $sig all)
    wait $job
    rc=$?
    want=$((128 + $(kill -l $sig)))
    expect "[ $ms -le 2000 ] && [ $rc -eq $want ] && grep -q 'interrupted by SIG$sig at step .*; checkpoint written' run.err" \
           "SIG$sig: exit $rc (want $want) after $ms ms: $(grep wafer: run.err | tail -1)"
  done

  # Stencil, SIGTERM to one rank during a long solve: ends, writes nothing.
  interrupted stencil TERM 'interrupted by SIGTERM at iteration' field.h5 \
    stencil --quiet --set stencil.nx=128 --set stencil.ny=128 --set stencil.nz=128 \
    --set stencil.crosscheck=none --set stencil.rtol=0 --set stencil.atol=0 \
    --set stencil.max_iterations=1000000000 --set output.file=field.h5

  # FFT, SIGTERM to one rank during many transforms: ends between two, writes nothing.
  interrupted fft TERM 'interrupted by SIGTERM after [0-9]* of 1000000 transform pairs' spectrum.h5 \
    fft --quiet --set fft.repeat=1000000 --set fft.crosscheck=none --set fft.stream=false \
    --set output.file=spectrum.h5
  # FFT, SIGTERM during FFTW's planning (a plan cannot be interrupted: the
  # run checks between its plans, 0.3 s here): ends then, writes nothing.
  launch fft --quiet --set fft.planner=patient --set fft.nx=48 --set fft.ny=48 --set fft.nz=48 \
    --set wafer.pe_grid=4x4 --set fft.crosscheck=none --set fft.stream=false --set output.file=planned.h5
  sleep 1.2
  ms=$(signal_ms TERM rank)
  wait $job
  rc=$?
  expect "[ $ms -le 8000 ] && [ $rc -eq 143 ] && grep -q 'interrupted by SIGTERM \(while\|after\) planning.*(nothing written)' run.err && [ ! -e planned.h5 ]" \
         "fft during planning: the ranks ended after $ms ms, exit status $rc: $(grep wafer: run.err)"

  # CFD wave, SIGTERM to one rank between checkpoints: a checkpoint of the
  # step it stopped at, named in the message, from which a restart finishes.
  rm -f ck.h5
  wave_args=(cfd --quiet --set cfd.stream=false --set wafer.pe_grid=8x8 --set cfd.nx=48 --set cfd.ny=48
             --set cfd.nz=48 --set cfd.init=gaussian --set cfd.checkpoint=ck.h5)
  launch "${wave_args[@]}" --set cfd.steps=100000 --set cfd.checkpoint_every=200
  wait_for ck.h5 60
  sleep 0.5
  stopped_at_checkpoint cfd ck.h5 " of 100000" 20 "${wave_args[@]}"

  # Convection with the PCG pressure solve (which polls no signal: the step
  # loop owns the stop), SIGTERM to one rank: a checkpoint of the step it
  # stopped at, from which a restart goes on.
  rm -f cck.h5
  conv_args=(cfd --quiet --set cfd.stream=false --set cfd.problem=convection --set wafer.pe_grid=4x1
             --set cfd.nx=64 --set cfd.ny=1 --set cfd.nz=32 --set cfd.perturbation=0.1
             --set cfd.poisson=pcg --set cfd.checkpoint=cck.h5)
  launch "${conv_args[@]}" --set cfd.steps=1000000
  sleep 2
  stopped_at_checkpoint convection cck.h5 "" 5 "${conv_args[@]}"

  # TLR-MVM, SIGINT to one rank during many products: ends between two, writes nothing.
  interrupted tlrmvm INT 'interrupted by SIGINT after [0-9]* of 1000000 products' products.h5 \
    tlrmvm --quiet --set tlrmvm.repeat=1000000 --set tlrmvm.stream=false \
    --set tlrmvm.mdd_iterations=0 --set output.file=products.h5

  # Training, SIGTERM to the last rank: ends between two steps with a
  # checkpoint; resident, then streamed (the last rank is a MemoryX rank,
  # which gathers the model and writes the checkpoint).
  for mode in resident streamed; do
    roles=""
    [ $mode = streamed ] && roles="--set wafer.memoryx_ranks=1"
    rm -f train.h5
    # shellcheck disable=SC2086
    launch train --quiet $roles --set train.steps=1000000 --set train.sgemm=false \
           --set train.checkpoint=train.h5 --set output.file=curve.h5
    sleep 3
    ms=$(signal_ms TERM rank)
    wait $job
    rc=$?
    expect "[ $ms -le 2000 ] && [ $rc -eq 143 ]" "$mode train: the ranks ended after $ms ms, exit status $rc"
    expect "grep -q 'interrupted by SIGTERM after [0-9]* of 1000000 steps; checkpoint written' run.err" \
           "$mode train: no message: $(cat run.err)"
    expect "[ -s train.h5 ] && [ ! -e curve.h5 ]" "$mode train: no checkpoint, or an interrupted run left its output"
  done
  # The streamed run's checkpoint restarts a streamed run, for two more
  # steps of the same schedule (stop_at; two steps need not lower the loss:
  # the target asks nothing).
  done_steps=$(/usr/bin/python3 -c "import h5py; print(int(h5py.File('train.h5').attrs['step']))")
  mpiexec -n "$ranks" "$wafer" train --quiet --set wafer.memoryx_ranks=1 --set train.sgemm=false \
      --set train.steps=1000000 --set train.stop_at=$((done_steps + 2)) --set train.loss_target=99 --set train.restart=train.h5 \
      --json again.json > /dev/null
  expect "[ $? -eq 0 ] && json again.json \"j['train']['first_step'] == $done_steps\"" \
         "streamed train: no restart from the interrupted run's checkpoint"
  # A long validation (it ran to its end before the next step's poll: 72 s
  # once) stops within a batch, and the checkpoint of the step before it is
  # kept.
  rm -f ev.h5
  launch train --quiet --set train.eval_batches=1000000 --set train.sgemm=false \
         --set train.checkpoint=ev.h5
  sleep 3
  ms=$(signal_ms TERM rank)
  wait $job
  rc=$?
  expect "[ $ms -le 2000 ] && [ $rc -eq 143 ] && grep -q 'after 0 of 60 steps; checkpoint written to ev.h5' run.err" \
         "train during its validation: the ranks ended after $ms ms, exit status $rc: $(grep wafer: run.err)"
  ;;
inject)
  # inject SITE STATUS TEXT ARGS...: with the failure at SITE on each rank in
  # turn, every rank exits with STATUS within 60 s, the error says TEXT, and
  # no output is left under its name or as a temporary file.
  inject() {
    local site=$1 status=$2 text=$3 r k
    shift 3
    for ((r = 0; r < ranks; r++)); do
      rm -f status.* ./*.h5 ./*.part.*
      cp keep/* . 2> /dev/null
      # shellcheck disable=SC2016
      WAFER_FAULT=$site@$r timeout 60 mpiexec -n "$ranks" \
        sh -c '"$0" "$@"; echo $? > status.${OMPI_COMM_WORLD_RANK:-$PMI_RANK}' "$wafer" "$@" --quiet > out.txt 2> err.txt
      local rc=$?
      local statuses
      statuses=$(cat status.* 2> /dev/null | sort -u | tr '\n' ' ')
      expect "[ $rc -ne 124 ] && [ \"$statuses\" = \"$status \" ] && [ \$(ls status.* | wc -l) -eq $ranks ]" \
             "$site@$r: mpiexec $rc (124: hung), rank statuses '$statuses', wanted $status on all"
      expect "[ \$(grep -c 'wafer: error:' err.txt) -eq 1 ] && grep -q -- \"$text\" err.txt" \
             "$site@$r: wanted one error saying '$text': $(grep -v WAFER_FAULT err.txt | head -3)"
      local left
      left=$(ls ./*.h5 ./*.part.* 2> /dev/null | grep -v -x -F -f <(ls keep 2> /dev/null | sed 's|^|./|'))
      expect "[ -z \"$left\" ]" "$site@$r: left $left"
    done
  }
  st=(stencil --set wafer.pe_grid=8x8 --set stencil.nx=16 --set stencil.ny=16 --set stencil.nz=8
      --set stencil.crosscheck=none)
  inject h5_create 2 "cannot create HDF5 file 's.h5.part." "${st[@]}" --set output.file=s.h5
  inject h5_write 1 "collective write failed for 's.h5'" "${st[@]}" --set output.file=s.h5
  inject h5_attr 1 "cannot write attribute 'workload' in 'h.h5'" halo --set wafer.pe_grid=8x8 \
         --set halo.iterations=2 --set output.file=h.h5
  inject h5_close 1 "closing 's.h5.part.[a-zA-Z0-9]*' failed" "${st[@]}" --set output.file=s.h5
  md=("${eam_args[@]}" --set eam.steps=20)
  inject h5_write 1 "checkpoint 'ck.h5'" "${md[@]}" --set eam.checkpoint=ck.h5
  inject h5md_create 1 "writing the H5MD layout of 't.h5' failed" "${md[@]}" --set output.file=t.h5
  inject h5md_frame 1 "writing frame 0 of 't.h5' failed" "${md[@]}" --set output.file=t.h5 --set eam.dump_every=5
  inject h5md_close 1 "closing the H5MD datasets of 't.h5' failed" "${md[@]}" --set output.file=t.h5
  mkdir -p keep
  mpiexec -n "$ranks" "$wafer" "${md[@]}" --set eam.checkpoint=keep/good.h5 > /dev/null 2>&1
  inject ckpt_read 1 "checkpoint 'keep/good.h5': reading 'box' failed" "${md[@]}" --set eam.restart=keep/good.h5 --set eam.steps=30
  ;;
kill9)
  # The trajectory of a run killed after some frames: its temporary file
  # holds them, readable (flushed after every frame).
  launch "${eam_args[@]}" --set eam.steps=1000000 --set eam.checkpoint=ck.h5 \
         --set eam.checkpoint_every=200 --set output.file=t.h5 --set eam.dump_every=100
  wait_for ck.h5 60
  sleep 0.3
  signal_ms KILL all > /dev/null
  wait $job
  expect "/usr/bin/python3 $here/frames_ok.py t.h5.part.* 3" "the killed run's trajectory t.h5.part.* is unreadable or lost frames"
  rm -f ck.h5 t.h5.part.*

  steps=400
  common=("${eam_args[@]}" --set eam.steps=$steps --set eam.checkpoint_every=25)
  mpiexec -n "$ranks" "$wafer" "${common[@]}" --set eam.checkpoint=ref.h5 > /dev/null
  expect "[ $? -eq 0 ]" "the uninterrupted run failed"
  t0=$(now_ms)
  mpiexec -n "$ranks" "$wafer" "${common[@]}" --set eam.checkpoint=tmp.h5 > /dev/null
  run_ms=$(($(now_ms) - t0))
  kills=0 restarts=0 bad_files=0
  # A restart may not overwrite the checkpoint it reads: the segments
  # alternate between two names, each continuing from the newer one.
  for ((trial = 0; trial < trials; trial++)); do
    rm -f a.h5 b.h5 a.h5.part.* b.h5.part.*
    # one kill per trial, at a random moment of the run, alternately of one
    # rank and of all of them; then restarts until the run is complete
    killed=0 from="" to=a.h5
    while :; do
      restart=()
      [ -n "$from" ] && restart=(--set eam.restart=$from)
      launch "${common[@]}" --set eam.checkpoint=$to "${restart[@]}"
      if ((killed == 0)); then
        sleep "$(awk -v s=$RANDOM -v ms=$run_ms 'BEGIN {printf "%.3f", (0.1 + 0.8 * s / 32768) * ms / 1000}')"
        if ((trial % 2 == 0)); then signal_ms KILL rank > /dev/null; else signal_ms KILL all > /dev/null; fi
        killed=1 kills=$((kills + 1))
      fi
      wait $job
      rc=$?
      # a file under its final name is whole: it opens, it has a step
      for f in a.h5 b.h5; do
        [ -e $f ] && [ -z "$(ck_step $f)" ] && bad_files=$((bad_files + 1))
      done
      [ "$rc" -eq 0 ] && break
      sa=$(ck_step a.h5) sb=$(ck_step b.h5)
      if [ "${sa:--1}" -ge "${sb:--1}" ]; then from=a.h5 to=b.h5 newest=${sa:--1}; else from=b.h5 to=a.h5 newest=$sb; fi
      [ "$newest" -lt 0 ] && from="" to=a.h5
      [ "$newest" = "$steps" ] && { to=$from; break; } # killed after the last checkpoint
      restarts=$((restarts + 1))
      ((restarts > 10 * trials)) && break
    done
    expect "h5same ref.h5 $to > diff.txt" "trial $trial: the final state differs from the uninterrupted run's"
  done
  expect "[ $bad_files -eq 0 ]" "$bad_files checkpoint(s) under the final name did not open"
  echo "kill9: $kills kills ($((trials / 2 + trials % 2)) of one rank), $restarts restarts, $bad_files broken files, run ${run_ms} ms"
  ;;
*)
  echo "unknown case $case_name" >&2; exit 2 ;;
esac

finish "$case_name"
