#!/usr/bin/env bash
# A real single-node Slurm for the tests: slurmctld and slurmd on 127.0.0.1,
# munge, in a private directory with its own ports, so that a test can
# sbatch and srun as on a cluster. Sourced by tests/slurm/slurm.sh.
#   slurm_start DIR    start (returns 77 with a message when it cannot: not
#                      root, Slurm not installed); sets SLURM_CONF
#   slurm_stop         stop everything slurm_start started
# The facts that make it work here are in ../shared/NOTES.md ("Slurm on one
# machine"): munged as the munge user, cgroup v1 without automount,
# linuxproc tracking, PMIx for Debian's Open MPI.

slurm_started_munge=0

# Two free ports, distinct: both held open while the kernel picks them. (Two
# calls picking one each may return the same port; a port may also be taken
# between the pick and slurmd's bind: slurm_start then tries again.)
free_ports() {
  /usr/bin/python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))'
}

slurm_start() {
  local dir=$1 c
  if [ "$(id -u)" -ne 0 ]; then
    echo "Slurm test skipped: starting slurmctld and slurmd needs root"
    return 77
  fi
  for c in slurmctld slurmd sbatch scontrol munged; do
    if ! command -v "$c" > /dev/null; then
      echo "Slurm test skipped: $c not found (Debian packages slurmctld slurmd slurm-client: scripts/setup)"
      return 77
    fi
  done
  mkdir -p "$dir/state" "$dir/spool"
  # munge: one daemon for the machine, as the munge user.
  if ! munge -n 2> /dev/null | unmunge > /dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- /usr/sbin/munged || { echo "munged does not start"; return 1; }
    slurm_started_munge=1
  fi
  local rc
  for _ in 1 2 3; do
    slurm_daemons "$dir"
    rc=$?
    [ $rc -eq 0 ] && return 0
    # a port taken between its pick and the bind: stop, new ports, again
    grep -q "Address already in use" "$dir/slurmd.log" "$dir/slurmctld.log" 2> /dev/null || return $rc
    slurm_stop_daemons "$dir"
    rm -f "$dir/slurmd.log" "$dir/slurmctld.log"
  done
  return $rc
}

# One start of slurmctld and slurmd on two fresh ports (slurm_start).
slurm_daemons() {
  local dir=$1 cpus ports
  cpus=$(nproc)
  read -r -a ports <<< "$(free_ports)"
  cat > "$dir/slurm.conf" <<CONF
ClusterName=wafertest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$((cpus > 4 ? cpus : 4)) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\n' > "$dir/cgroup.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -i || { echo "slurmctld does not start: $(tail -3 "$dir/slurmctld.log")"; return 1; }
  slurmd -N localhost || { echo "slurmd does not start: $(tail -3 "$dir/slurmd.log")"; return 1; }
  local i state
  for ((i = 0; i < 100; i++)); do
    state=$(sinfo -h -o %T 2> /dev/null || true)
    [[ "$state" == idle* ]] && return 0
    sleep 0.2
  done
  echo "the Slurm node did not come up (state '$state'): $(tail -3 "$dir/slurmd.log")"
  return 1
}

# Stop the daemons of DIR (their pid files).
slurm_stop_daemons() {
  local dir=$1 pid
  for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -s "$pid" ] && kill "$(cat "$pid")" 2> /dev/null
  done
  sleep 0.5
  for pid in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -s "$pid" ] && kill -9 "$(cat "$pid")" 2> /dev/null
  done
  rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid"
}

slurm_stop() {
  [ -n "${SLURM_CONF:-}" ] || return 0
  slurm_stop_daemons "$(dirname "$SLURM_CONF")"
  if [ "$slurm_started_munge" -eq 1 ]; then
    pkill -u munge munged 2> /dev/null || true
  fi
  unset SLURM_CONF
  return 0
}

# slurm_wait JOBID [SECONDS]: until the job ends; prints its final state.
slurm_wait() {
  local id=$1 limit=${2:-180} i state
  for ((i = 0; i < limit * 5; i++)); do
    state=$(scontrol show job "$id" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case $state in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
        echo "$state"
        return 0
        ;;
    esac
    sleep 0.2
  done
  echo "TIMEOUT_WAITING"
}
