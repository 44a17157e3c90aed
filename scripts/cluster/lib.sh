# shellcheck shell=bash disable=SC2034  # (its variables are used by the scripts that source it)
# lib.sh: what the scripts of scripts/cluster share. Sourced, not run.
#
# Everything up.sh starts is recorded under the state directory, .cluster/ at the
# top of the repository (STAGEDOOR_CLUSTER_DIR to put it elsewhere):
#
#   pids/NAME.pid     the pid of each process (down.sh and the kill scripts signal
#                     exactly these, and only while the pid still runs the program
#                     it was started as)
#   run/NAME.sh       how it was started: revive.sh starts it again the same way
#   logs/NAME.log     its output
#   redis/PORT/       a Redis node's data (its nodes.conf)
#   prometheus/       Prometheus's data
#   haproxy.cfg, prometheus.yml, pgbouncer.ini, render.json files: the rendered
#                     configurations (and PgBouncer's userlist.txt)
#   env               the cluster's URLs and admin token, for ". .cluster/env"
#
# NAME is one of: redis-7001 … redis-7006, pgbouncer, payrail, stagedoor-1 …
# stagedoor-3, haproxy, prometheus.

cluster_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${STAGEDOOR_CLUSTER_DIR:-$cluster_root/.cluster}
# The state directory is removed and made again by up.sh: refuse a path that
# could be anything else.
case $state in
  '' | / | "$HOME" | "$cluster_root") printf 'cluster: refusing state directory "%s"\n' "$state" >&2; exit 2 ;;
esac

readonly REDIS_PORTS=(7001 7002 7003 7004 7005 7006)
# A node's cluster bus port: its port + 10000, given explicitly (--cluster-port).
readonly BUS_OFFSET=10000
readonly INSTANCES=(1 2 3)
readonly EDGE_ADDR=127.0.0.1:8080
# HAProxy's stats page and metrics: STAGEDOOR_CLUSTER_STATS_ADDR (host:port) moves
# them off 8404, for a machine where something else has it.
readonly STATS_ADDR=${STAGEDOOR_CLUSTER_STATS_ADDR:-127.0.0.1:8404}
if [[ ! $STATS_ADDR =~ ^[0-9A-Za-z.:-]+:[0-9]{1,5}$ ]]; then
  printf 'cluster: STAGEDOOR_CLUSTER_STATS_ADDR must be host:port, not "%s"\n' "$STATS_ADDR" >&2
  exit 2
fi
readonly PAYRAIL_LISTEN=127.0.0.1:8090 PROMETHEUS_ADDR=127.0.0.1:9090 ALERTMANAGER_ADDR=127.0.0.1:9093
# PgBouncer in front of PostgreSQL: clear of 6432, where Debian's own pgbouncer
# service listens once the package is installed (on a machine with systemd).
# Its server connections for the database, shared by every instance and Payrail.
readonly PGBOUNCER_ADDR=127.0.0.1:6433 PGBOUNCER_POOL=20
# HAProxy connects to the instances from an address of its own (any of 127.0.0.0/8
# is this machine's), the only proxy they trust: clients on this machine connect
# from 127.0.0.1, and an X-Forwarded-For they write is never believed.
readonly BALANCER_SOURCE=127.0.80.80
readonly BALANCER_CIDR=$BALANCER_SOURCE/32

script_name=$(basename "${BASH_SOURCE[1]:-cluster}" .sh)
say() { printf 'cluster %s: %s\n' "$script_name" "$*" >&2; }
die() {
  say "$*"
  exit 1
}

instance_port() { printf '%s' $((8080 + $1)); }
# metrics_port N: where instance N answers GET /metrics (STAGEDOOR_METRICS_ADDR),
# apart from its API; Prometheus scrapes it there.
metrics_port() { printf '%s' $((9100 + $1)); }

# all_names: every process up.sh starts, in start order (down.sh stops them in
# the reverse order: the balancer first, Redis last; PgBouncer after every
# process that uses it).
all_names() {
  local p i
  for p in "${REDIS_PORTS[@]}"; do echo "redis-$p"; done
  echo pgbouncer
  echo payrail
  for i in "${INSTANCES[@]}"; do echo "stagedoor-$i"; done
  echo haproxy
  echo alertmanager
  echo prometheus
}

# expected_comm NAME: the program NAME runs (ps -o comm=). A pid is signalled
# only while it runs that program: a pid reused by another process since is
# left alone.
expected_comm() {
  case $1 in
    redis-*) echo redis-server ;;
    pgbouncer) echo pgbouncer ;;
    payrail | stagedoor-*) echo stagedoor ;;
    haproxy) echo haproxy ;;
    prometheus) echo prometheus ;;
    alertmanager) echo prometheus-aler ;; # comm is cut at 15 characters
    *) return 1 ;;
  esac
}

# recorded_pid NAME: the pid up.sh recorded, if any.
recorded_pid() {
  local file=$state/pids/$1.pid pid
  [[ -f $file ]] || return 1
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  printf '%s' "$pid"
}

# is_running NAME: its recorded pid is alive (not a zombie) and runs the
# program NAME was started as.
is_running() {
  local pid stat comm
  pid=$(recorded_pid "$1") || return 1
  read -r stat comm < <(ps -o stat=,comm= -p "$pid" 2>/dev/null) || return 1
  [[ $stat != Z* && $comm == "$(expected_comm "$1")" ]]
}

# running_names: the recorded processes that still run.
running_names() {
  local name
  for name in $(all_names); do
    if is_running "$name"; then echo "$name"; fi
  done
}

# launch NAME COMMAND...: writes run/NAME.sh (the command, exec'd from the
# repository's top) and starts it in the background in a session of its own
# (setsid: a Ctrl-C or a closed terminal later does not reach it), its output
# appended to logs/NAME.log, its pid recorded in pids/NAME.pid.
launch() {
  local name=$1
  shift
  mkdir -p "$state/run" "$state/logs" "$state/pids"
  {
    echo '#!/usr/bin/env bash'
    echo "# $name, as scripts/cluster/up.sh started it (scripts/cluster/revive.sh runs it again)."
    printf 'cd %q\n' "$cluster_root"
    printf 'exec'
    printf ' %q' "$@"
    echo
  } >"$state/run/$name.sh"
  start_recorded "$name"
}

# start_recorded NAME: starts run/NAME.sh as launch does. bash execs the
# command and setsid does not fork (this shell has no job control, so the
# background child is no process group leader): the pid is the program's.
start_recorded() {
  local name=$1
  printf -- '--- %s: started by scripts/cluster\n' "$(date -u +%FT%TZ)" >>"$state/logs/$name.log"
  setsid bash "$state/run/$name.sh" >>"$state/logs/$name.log" 2>&1 </dev/null &
  echo "$!" >"$state/pids/$name.pid"
}

# stop_process NAME SECONDS: SIGTERM to NAME's recorded pid, SIGKILL if it has
# not exited within SECONDS; then its pid file is removed.
stop_process() {
  local name=$1 seconds=$2 pid i
  pid=$(recorded_pid "$name") || return 0
  if is_running "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < seconds * 10; i++)); do
      is_running "$name" || break
      sleep 0.1
    done
    if is_running "$name"; then
      say "$name (pid $pid) did not stop within ${seconds}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    else
      say "stopped $name (pid $pid)"
    fi
  elif kill -0 "$pid" 2>/dev/null && ! ps -o stat= -p "$pid" | grep -q '^Z'; then
    say "$name: pid $pid now runs $(ps -o comm= -p "$pid"), not $(expected_comm "$name"): left alone"
  else
    say "$name (pid $pid) was not running"
  fi
  rm -f "$state/pids/$name.pid"
}

# stop_all: stops every recorded process, the last started first. Stagedoor
# gets 25 s: requests in flight finish (STAGEDOOR_SHUTDOWN_TIMEOUT, 20 s).
stop_all() {
  local name
  for name in $(all_names | tac); do
    case $name in
      stagedoor-* | payrail) stop_process "$name" 25 ;;
      *) stop_process "$name" 10 ;;
    esac
  done
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s until it
# succeeds; false after SECONDS, saying what it waited for.
wait_until() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 5; i++)); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  say "$what: not after ${seconds}s"
  return 1
}

# http_ok URL: URL answers 2xx within 2 s.
http_ok() { curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; }

# redis_cli PORT ARGS...: redis-cli against a node of the cluster.
redis_cli() {
  local port=$1
  shift
  redis-cli -h 127.0.0.1 -p "$port" "$@"
}

# port_open ADDR: something accepts TCP connections on ADDR (host:port).
# shellcheck disable=SC2016 # the inner bash expands $0 and $1
port_open() { timeout 1 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "${1%:*}" "${1##*:}" 2>/dev/null; }

# live_redis_port: the port of a node that is up (the first one recorded).
live_redis_port() {
  local p
  for p in "${REDIS_PORTS[@]}"; do
    if is_running "redis-$p" && [[ $(redis_cli "$p" ping 2>/dev/null) == PONG ]]; then
      printf '%s' "$p"
      return 0
    fi
  done
  return 1
}

# log_tail NAME: the end of NAME's log, to show why it failed.
log_tail() {
  say "the end of $state/logs/$1.log:"
  tail -n 15 "$state/logs/$1.log" >&2 2>/dev/null || true
}
