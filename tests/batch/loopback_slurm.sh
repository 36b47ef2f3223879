#!/usr/bin/env bash
# A one-node Slurm cluster on loopback for tests, everything in one folder: munged with its own key and socket,
# slurmctld and slurmd (as root, without systemd or cgroups: proctrack/linuxproc, task/none) on free ports.
#   loopback_slurm.sh start DIR [SECONDS]  starts it (DIR/slurm.conf is the SLURM_CONF of its commands) and a
#                                           watchdog that stops it after SECONDS (default 600) whatever happens
#   loopback_slurm.sh stop DIR             stops it: cancels the jobs, ends every process started with DIR's
#                                           slurm.conf in its environment (daemons, job steps, their children)
# Needs slurm-wlm and munge (scripts/setup.sh installs them) and root (slurmd starts jobs as their user). Exits 77
# (skipped) when not root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command=${1:-} dir=${2:-}
[ -n "$dir" ] || { echo "usage: loopback_slurm.sh start|stop DIR [SECONDS]" >&2; exit 2; }
dir=$(realpath -m "$dir")
conf="$dir/slurm.conf"

stop() {
  if [ -f "$conf" ]; then SLURM_CONF="$conf" timeout 10 scancel --quiet --user=root 2>/dev/null || true; fi
  local pids=() pid
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    [ "$pid" = $$ ] || [ "$pid" = "$PPID" ] && continue
    if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$conf"; then pids+=("$pid"); fi
  done
  [ -f "$dir/munge/munged.pid" ] && pids+=("$(cat "$dir/munge/munged.pid")")
  if [ ${#pids[@]} -gt 0 ]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    sleep 1
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  # The watchdog leads its own process group (setsid): end it with its sleep, unless this is the watchdog.
  if [ -f "$dir/watchdog.pid" ]; then
    pid=$(cat "$dir/watchdog.pid")
    [ "$pid" = $$ ] || kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$dir/watchdog.pid"
}

free_port() {  # the first port from $1 on that nothing listens on (bash's /dev/tcp connects, or fails)
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

case $command in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: loopback_slurm.sh start|stop DIR [SECONDS]" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "loopback_slurm.sh: needs root (slurmd runs jobs as their user)" >&2; exit 77; }
for tool in munged mungekey slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || { echo "loopback_slurm.sh: $tool is missing: run scripts/setup.sh" >&2; exit 1; }
done
mkdir -p "$dir"
chmod 700 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 700 "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"

mungekey --create --keyfile="$dir/munge/munge.key" --bits=1024 --force
chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" --pid-file="$dir/munge/munged.pid" \
  --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" --force

ctld_port=$(free_port $((20000 + $$ % 20000)))
slurmd_port=$(free_port $((ctld_port + 1)))
# cred_expire=5: a requeued job may start again after 6 s instead of Slurm's 121, and the schedulers look at pending
# jobs every second instead of every 60 and 30; config_overrides: the node has the CPUs this file says, whatever
# the machine has, so three tasks run at once on a 2-core machine.
cat >"$conf" <<CONF
ClusterName=nmcloopback
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket,cred_expire=5
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=1,bf_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=loopback NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=loopback Nodes=loopback Default=YES MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$conf"
# The watchdog first, without SLURM_CONF in its environment (stop() must not end it before it calls stop).
env -u SLURM_CONF setsid bash -c "sleep ${3:-600}; exec '$here/loopback_slurm.sh' stop '$dir'" </dev/null \
  >/dev/null 2>&1 &
echo $! >"$dir/watchdog.pid"
slurmctld -i
slurmd -N loopback
for _ in $(seq 1 150); do
  if [ "$(sinfo -h -n loopback -o %T 2>/dev/null)" = idle ]; then exit 0; fi
  sleep 0.2
done
echo "loopback_slurm.sh: the node did not come up in 30 s; slurmctld and slurmd logs:" >&2
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
