#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying and testing scripts/slurm/run.sh.
#
#   scripts/slurm/local-cluster.sh start    install (Debian packages) if missing, start
#                                           munged, slurmctld and slurmd; wait for the
#                                           node to be idle
#   scripts/slurm/local-cluster.sh status   the daemons this script started, and sinfo
#   scripts/slurm/local-cluster.sh stop     cancel the cluster's jobs and end exactly the
#                                           daemons `start` started
#
# Needs root and apt-get (Debian/Ubuntu), or the packages slurmctld, slurmd,
# slurm-client and munge already installed. It does not use systemd: the daemons run as
# background processes whose PIDs are kept in the state directory,
# $LOOPBENCH_SLURM_STATE (default /var/tmp/loopbench-slurm), beside slurm.conf, the
# controller's state, slurmd's spool and the daemon logs (log/*.log).
#
# The client commands (sbatch, squeue, ...) read /etc/slurm/slurm.conf. When that file
# does not exist, `start` makes it a symlink to the state directory's slurm.conf and
# `stop` removes it again; when it exists (a real cluster's), `start` leaves it alone and
# prints the `export SLURM_CONF=...` that points the client commands here.
#
# Exit codes: 0 ok; 1 the cluster did not come up (status: is not up); 2 bad arguments;
# 5 this machine cannot run it (not root, no apt-get, install failed).
set -euo pipefail

STATE="${LOOPBENCH_SLURM_STATE:-/var/tmp/loopbench-slurm}"
CONF="$STATE/slurm.conf"
ETC_CONF=/etc/slurm/slurm.conf
CTLD_PORT="${LOOPBENCH_SLURMCTLD_PORT:-6817}"
SLURMD_PORT="${LOOPBENCH_SLURMD_PORT:-6818}"
NODE="$(hostname)"

usage() {
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
}

die() { # die CODE MESSAGE
    echo "local-cluster: $2" >&2
    exit "$1"
}

say() { echo "local-cluster: $*"; }

# alive NAME: the daemon NAME started by this script is still running.
alive() {
    local pid
    pid="$(cat "$STATE/pids/$1" 2>/dev/null)" || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null 2>&1 || missing+=(slurmctld)
    command -v slurmd >/dev/null 2>&1 || missing+=(slurmd)
    command -v sbatch >/dev/null 2>&1 || missing+=(slurm-client)
    command -v munged >/dev/null 2>&1 || missing+=(munge)
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || die 5 "cannot install ${missing[*]}: not root"
    command -v apt-get >/dev/null 2>&1 || die 5 "cannot install ${missing[*]}: no apt-get"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$STATE/log/apt.log" 2>&1; then
        say "install failed; running apt-get update and trying again"
        apt-get update -qq >>"$STATE/log/apt.log" 2>&1 || true
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$STATE/log/apt.log" 2>&1 ||
            die 5 "apt-get install ${missing[*]} failed; see $STATE/log/apt.log"
    fi
}

write_conf() {
    local cpus
    cpus="$(nproc)"
    cat >"$CONF" <<EOF
# Written by scripts/slurm/local-cluster.sh: one node, no cgroups, no accounting.
ClusterName=loopbench
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Finished jobs stay visible to squeue/scontrol for 10 minutes.
MinJobAge=600
ReturnToService=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

# spawn NAME COMMAND...: starts a daemon in the background, in the foreground mode of
# the daemon itself, and records its PID.
spawn() {
    local name="$1"
    shift
    "$@" >>"$STATE/log/$name.out" 2>&1 </dev/null &
    echo $! >"$STATE/pids/$name"
    say "started $name (pid $!)"
}

munge_works() {
    command -v munge >/dev/null 2>&1 && munge -n 2>/dev/null | unmunge >/dev/null 2>&1
}

tail_logs() {
    local f
    for f in "$STATE"/log/*.log "$STATE"/log/*.out; do
        [ -s "$f" ] || continue
        echo "--- last lines of $f" >&2
        tail -n 15 "$f" >&2
    done
}

cmd_start() {
    [ "$(id -u)" -eq 0 ] || die 5 "must run as root (the daemons run as root and munge)"
    mkdir -p "$STATE"/{ctld,spool,run,log,pids}
    install_packages
    if alive slurmctld && alive slurmd; then
        say "already running (state in $STATE)"
        return 0
    fi

    local port
    for port in "$CTLD_PORT" "$SLURMD_PORT"; do
        port_in_use "$port" &&
            die 1 "port $port is in use (another Slurm?); set LOOPBENCH_SLURMCTLD_PORT / LOOPBENCH_SLURMD_PORT"
    done

    # munged: its socket directory must exist and belong to munge, and it runs as munge.
    if munge_works; then
        say "munged is already running; using it"
    else
        install -d -o munge -g munge -m 0755 /run/munge
        install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
        [ -f /etc/munge/munge.key ] || die 1 "no /etc/munge/munge.key (the munge package creates it)"
        spawn munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground
        for _ in $(seq 1 50); do
            munge_works && break
            alive munged || { tail_logs; die 1 "munged exited; see /var/log/munge/munged.log"; }
            sleep 0.1
        done
        munge_works || { tail_logs; die 1 "munged does not answer"; }
    fi

    write_conf
    # A dangling link is one an earlier start left behind (killed before its stop).
    if [ ! -e "$ETC_CONF" ]; then
        mkdir -p "$(dirname "$ETC_CONF")"
        ln -sfn "$CONF" "$ETC_CONF"
        touch "$STATE/etc-link"
    elif [ "$(readlink "$ETC_CONF" || true)" != "$CONF" ]; then
        say "$ETC_CONF exists and is not ours; run: export SLURM_CONF=$CONF"
    fi
    export SLURM_CONF="$CONF"

    # -i: start even when the saved state of an earlier start cannot be read.
    spawn slurmctld /usr/sbin/slurmctld -D -i -f "$CONF"
    spawn slurmd /usr/sbin/slurmd -D -N "$NODE" -f "$CONF"

    local state=""
    for _ in $(seq 1 120); do
        alive slurmctld || { tail_logs; die 1 "slurmctld exited; see $STATE/log/slurmctld.log"; }
        alive slurmd || { tail_logs; die 1 "slurmd exited; see $STATE/log/slurmd.log"; }
        state="$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)"
        case "$state" in
        idle | mixed | allocated) break ;;
        esac
        sleep 0.5
    done
    case "$state" in
    idle | mixed | allocated) ;;
    *)
        tail_logs
        die 1 "node $NODE is '${state:-unknown}' after 60 s, not idle"
        ;;
    esac
    say "node $NODE is $state; slurm $(slurmctld -V | awk '{print $2}'), conf $CONF"
}

cmd_status() {
    local name up=0
    for name in munged slurmctld slurmd; do
        if alive "$name"; then
            say "$name running (pid $(cat "$STATE/pids/$name"))"
        elif [ -f "$STATE/pids/$name" ]; then
            say "$name not running"
            up=1
        fi
    done
    alive slurmctld && alive slurmd || up=1
    if [ $up -eq 0 ]; then
        SLURM_CONF="$CONF" sinfo || up=1
    else
        say "the cluster is not up (state in $STATE)"
    fi
    return $up
}

# stop_daemon NAME: SIGTERM, then SIGKILL after 15 s.
stop_daemon() {
    local name="$1" pid
    pid="$(cat "$STATE/pids/$name" 2>/dev/null)" || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.2
        fi
    fi
    if kill -0 "$pid" 2>/dev/null; then
        echo "local-cluster: $name (pid $pid) is still running" >&2
        return 1
    fi
    say "stopped $name (pid $pid)"
    rm -f "$STATE/pids/$name"
}

cmd_stop() {
    export SLURM_CONF="$CONF"
    if alive slurmctld; then
        local jobs
        jobs="$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')"
        if [ -n "${jobs// /}" ]; then
            say "cancelling jobs $jobs"
            # shellcheck disable=SC2086 # one word per job id
            scancel $jobs 2>/dev/null || true
            # Wait for their slurmstepd to end, so nothing of a job outlives slurmd.
            for _ in $(seq 1 60); do
                [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
                sleep 0.5
            done
        fi
    fi
    local status=0
    stop_daemon slurmd || status=1
    stop_daemon slurmctld || status=1
    stop_daemon munged || status=1
    if [ -f "$STATE/etc-link" ]; then
        [ "$(readlink "$ETC_CONF" || true)" = "$CONF" ] && rm -f "$ETC_CONF"
        rm -f "$STATE/etc-link"
    fi
    return $status
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
-h | --help | help) usage ;;
*)
    usage >&2
    echo "local-cluster: expected start, stop or status, got '${1:-}'" >&2
    exit 2
    ;;
esac
