# shellcheck shell=bash disable=SC2034,SC2154
# A one-host Slurm cluster of a test's own (tests/test_farm_slurm.sh), from Debian's slurm-wlm and
# munge. Sourced first, so the test can call slurm_reexec before tests/support/farm_test.sh makes its
# scratch directory:
#
#   source "$2/tests/support/slurm.sh"; slurm_reexec "$0" "$@"
#   source "$2/tests/support/farm_test.sh" "$1" "$2"; slurm_require; slurm_trap; slurm_start
#
# slurm_start makes a private directory $SLURM_DIR holding a MUNGE key, munged's socket, a generated
# slurm.conf (this host as the only node, its CPUs and memory from `slurmd -C`, ports nobody uses),
# state, spool and logs, starts munged, slurmctld and slurmd in the foreground of background jobs,
# exports SLURM_CONF so sbatch, srun and scontrol talk to this cluster only, and waits for the node to
# be idle. slurm_cleanup (the EXIT trap slurm_trap installs, before farm_test.sh's own cleanup)
# cancels the cluster's jobs, stops the daemons and whatever job step they left, and removes the
# directory. Skipped (exit 77, ctest SKIP) with the reason when Slurm cannot be installed or started.
SLURM_SKIP=77
SLURM_DIR=
SLURM_PIDS=()

s_slurm_skip() {
  echo "SKIP: Slurm cannot run here: $*" >&2
  exit $SLURM_SKIP
}

# slurm_reexec "$0" "$@": as a user with passwordless sudo, runs the test again as root (installing
# packages and running slurmd need it); otherwise does nothing (slurm_require skips with the reason).
slurm_reexec() {
  local self=$1
  shift
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n bash "$self" "$@"
  fi
}

s_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# Installs slurm-wlm and munge when missing, without starting the system's own daemons (a
# policy-rc.d that refuses, for the install only, unless the machine has one already).
slurm_require() {
  [ "$(id -u)" -eq 0 ] || s_slurm_skip "not root and no passwordless sudo (slurmd runs job steps as their user)"
  local missing=() p out made_policy=0
  for p in slurm-wlm munge; do s_installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "slurm: installing ${missing[*]}" >&2
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod 755 /usr/sbin/policy-rc.d
      made_policy=1
    fi
    out=$({ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"; } 2>&1) || {
      [ $made_policy = 0 ] || rm -f /usr/sbin/policy-rc.d
      s_slurm_skip "cannot install ${missing[*]} from Debian: $(tail -3 <<<"$out")"
    }
    [ $made_policy = 0 ] || rm -f /usr/sbin/policy-rc.d
  fi
  for p in munged slurmctld slurmd sbatch srun scontrol sinfo; do
    command -v "$p" >/dev/null || s_slurm_skip "$p is not installed"
  done
}

# s_free_port: a TCP port nothing listens on now.
s_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}

# s_kill_cluster DIR: kills whatever still runs of the cluster in DIR (daemons and tasks name DIR in
# their command line; job steps carry its slurm.conf in their environment).
s_kill_cluster() {
  local dir=$1 p
  for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
    if tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
      kill -9 "$p" 2>/dev/null || true
    fi
  done
  for p in $(pgrep -f -- "$dir" 2>/dev/null || true); do
    kill -9 "$p" 2>/dev/null || true
  done
}

slurm_cleanup() {
  local p i k
  [ -n "$SLURM_DIR" ] || return 0
  if [ -n "${SLURM_CONF:-}" ] && [ ${#SLURM_PIDS[@]} -gt 0 ]; then
    timeout 10 scancel --quiet --full "--user=$(id -un)" 2>/dev/null || true
  fi
  # The daemons, in reverse order of starting (slurmd, slurmctld, munged): asked, then told.
  for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
    p=${SLURM_PIDS[i]}
    kill "$p" 2>/dev/null || continue
    for ((k = 0; k < 60; k++)); do # they are this shell's children: exited = a zombie
      case $(ps -o stat= -p "$p" 2>/dev/null) in Z* | "") break ;; esac
      sleep 0.05
    done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  # Job steps outlive a killed slurmd, and so may their tasks.
  s_kill_cluster "$SLURM_DIR"
  rm -rf "$SLURM_DIR"
  SLURM_DIR=
}

slurm_trap() {
  trap 'rc=$?; slurm_cleanup; s_cleanup; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# s_slurm_fail_start WHAT: the cluster did not come up; skip, saying exactly what its logs say.
s_slurm_fail_start() {
  local f
  echo "slurm: $1; the cluster's logs:" >&2
  for f in "$SLURM_DIR"/log/*; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -15 "$f" >&2; }
  done
  s_slurm_skip "$1 (logs above)"
}

slurm_start() {
  local node line i state d owner
  # Clusters of a run killed with SIGKILL (a ctest timeout), whose trap never ran.
  for d in /tmp/tbslurm-*; do
    [ -f "$d/owner" ] || continue
    owner=$(cat "$d/owner")
    ! kill -0 "$owner" 2>/dev/null || continue
    s_kill_cluster "$d"
    rm -rf "$d"
    echo "slurm: removed $d, left by a killed run" >&2
  done
  # munged wants every directory above its socket searchable by all, so not under the 0700 $T.
  SLURM_DIR=$(mktemp -d "/tmp/tbslurm-XXXXXX")
  chmod 755 "$SLURM_DIR"
  echo $$ >"$SLURM_DIR/owner"
  mkdir -p "$SLURM_DIR"/{munge,state,spool,log}
  mkdir -m 700 "$SLURM_DIR/munge-key"
  dd if=/dev/urandom of="$SLURM_DIR/munge-key/munge.key" bs=1024 count=1 status=none
  chmod 400 "$SLURM_DIR/munge-key/munge.key"
  munged -F --socket="$SLURM_DIR/munge/munge.socket" --key-file="$SLURM_DIR/munge-key/munge.key" \
    --pid-file="$SLURM_DIR/munge/munged.pid" --seed-file="$SLURM_DIR/munge/munged.seed" \
    --log-file="$SLURM_DIR/log/munged.log" >"$SLURM_DIR/log/munged.out" 2>&1 &
  SLURM_PIDS+=($!)
  for ((i = 0; i < 200; i++)); do
    [ -S "$SLURM_DIR/munge/munge.socket" ] && break
    kill -0 "${SLURM_PIDS[0]}" 2>/dev/null || s_slurm_fail_start "munged exited"
    sleep 0.05
  done
  [ -S "$SLURM_DIR/munge/munge.socket" ] || s_slurm_fail_start "munged made no socket in 10 s"

  node=$(hostname -s)
  # `slurmd -C` prints this host as a node line: NodeName=... CPUs=... RealMemory=...
  line=$(slurmd -C | head -1) || s_slurm_fail_start "slurmd -C failed"
  line=${line#NodeName=* }
  cat >"$SLURM_DIR/slurm.conf" <<EOF
# Generated by tests/support/slurm.sh: a one-host cluster private to one test run.
ClusterName=tbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(s_free_port)
SlurmdPort=$(s_free_port)
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.socket
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
PlugStackConfig=$SLURM_DIR/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 $line State=UNKNOWN
PartitionName=tb Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$SLURM_DIR/plugstack.conf"
  export SLURM_CONF=$SLURM_DIR/slurm.conf
  slurmctld -D -c -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  slurmd -D -N "$node" -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmd.out" 2>&1 &
  SLURM_PIDS+=($!)
  for ((i = 0; i < 600; i++)); do
    state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.05
  done
  [ "$state" = idle ] || s_slurm_fail_start "node $node is '${state:-unknown}', not idle, after 30 s"
  SLURM_NODE=$node
}

# slurm_wait_job ID SECONDS: waits for job ID to end; prints its final state and exit code
# ("COMPLETED 0:0"). The job steps seen while it ran, as "ID.STEP NAME", are in $SLURM_DIR/steps.
slurm_wait_job() {
  local id=$1 secs=$2 i info state
  for ((i = 0; i < secs * 4; i++)); do
    squeue -h -s -j "$id" -o '%i %j' >>"$SLURM_DIR/steps" 2>/dev/null || true
    info=$(scontrol -o show job "$id" 2>/dev/null || true)
    state=$(grep -oE 'JobState=[A-Z_]+' <<<"$info" | cut -d= -f2)
    case $state in
    PENDING | RUNNING | CONFIGURING | COMPLETING | "") sleep 0.25 ;;
    *)
      echo "$state $(grep -oE ' ExitCode=[0-9:]+' <<<"$info" | cut -d= -f2)"
      return 0
      ;;
    esac
  done
  echo "TIMEOUT after $secs s: $state"
}
