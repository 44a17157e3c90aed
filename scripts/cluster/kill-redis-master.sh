#!/usr/bin/env bash
# kill-redis-master.sh [KEY | --first | --not KEY] [--wait]: kills, with SIGKILL (a
# crash), the master of the local Redis Cluster that serves KEY's slot, by the pid
# up.sh recorded, and says which node it was and which replica should take over.
#
#   KEY       a Redis key, as Stagedoor writes it (prefix included), such as
#             'sd:wr:{<event id>}:q', the queue of an event's waiting room
#   (none)    the demo event's waiting room, sd:wr:{$DEMO_EVENT}:q, with DEMO_EVENT
#             from .env.demo (STAGEDOOR_DEMO_ENV_FILE) and the prefix
#             STAGEDOOR_REDIS_PREFIX (default sd:); without a demo event, --first
#   --first   the master of slot 0
#   --not KEY a master that does not serve KEY's slot (the lowest slot of another
#             master): with KEY a waiting room's queue, the limits of a third of the
#             buyers fail open while that room stays up
#   --wait    then wait (up to 30 s) until a replica has taken over its slots, and
#             say how long that took
#
# With cluster-node-timeout 2000 the replica is promoted a few seconds later;
# meanwhile Stagedoor fails that node's keys by their policies and /readyz says
# "redis":"degraded" with the node "down" in redis_nodes. scripts/cluster/revive.sh
# starts the node again; it rejoins as a replica.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$cluster_root"

key='' first=false wait=false not=false
for arg in "$@"; do
  case $arg in
    --first) first=true ;;
    --not) not=true ;;
    --wait) wait=true ;;
    -*) die "usage: $0 [KEY | --first | --not KEY] [--wait]" ;;
    *) key=$arg ;;
  esac
done
if $not && [[ -z $key ]]; then
  die "usage: $0 --not KEY [--wait]"
fi
if ! $first && [[ -z $key ]]; then
  env_file=${STAGEDOOR_DEMO_ENV_FILE:-.env.demo}
  event=
  if [[ -f $env_file ]]; then
    event=$(sed -n "s/^DEMO_EVENT='\([0-9a-fA-F-]*\)'\$/\1/p" "$env_file" | tail -n 1)
  fi
  if [[ -n $event ]]; then
    key="${STAGEDOOR_REDIS_PREFIX:-sd:}wr:{$event}:q"
  else
    say "no DEMO_EVENT in $env_file: killing the master of slot 0"
    first=true
  fi
fi

port=$(live_redis_port) || die "no node of the local cluster answers (make cluster starts it)"
if $first; then
  slot=0
  what="slot 0"
elif $not; then
  avoid=$(redis_cli "$port" cluster keyslot "$key")
  # The first slot of each live master's ranges, the master serving $avoid left out.
  slot=$(redis_cli "$port" cluster nodes | awk -v avoid="$avoid" '
    $3 ~ /master/ && $3 !~ /fail/ {
      first = ""; serves = 0
      for (i = 9; i <= NF; i++) {
        if ($i ~ /^\[/) continue
        n = split($i, r, "-"); lo = r[1]; hi = (n == 2 ? r[2] : r[1])
        if (first == "") first = lo
        if (avoid + 0 >= lo + 0 && avoid + 0 <= hi + 0) serves = 1
      }
      if (first != "" && !serves) { print first; exit }
    }') || true
  [[ -n $slot ]] || die "no live master other than the one serving slot $avoid (key $key)"
  what="slot $slot (a master that does not serve $key)"
else
  slot=$(redis_cli "$port" cluster keyslot "$key")
  what="slot $slot (key $key)"
fi

# slot_master SLOT [DEAD]: from CLUSTER NODES on stdin (id addr@bus flags master-id
# ping pong epoch link slot-ranges...), "id addr" of the live master (not flagged
# fail, not DEAD) one of whose ranges holds SLOT; false when there is none.
slot_master() {
  awk -v slot="$1" -v dead="${2:-}" '
    $3 ~ /master/ && $3 !~ /fail/ {
      split($2, a, "@")
      if (a[1] == dead) next
      for (i = 9; i <= NF; i++) {
        if ($i ~ /^\[/) continue # a slot being migrated
        n = split($i, r, "-")
        lo = r[1]; hi = (n == 2 ? r[2] : r[1])
        if (slot + 0 >= lo + 0 && slot + 0 <= hi + 0) { print $1, a[1]; found = 1; exit }
      }
    }
    END { exit !found }'
}

nodes=$(redis_cli "$port" cluster nodes)
read -r master_id master_addr < <(slot_master "$slot" <<<"$nodes") ||
  die "no live master serves $what: $(redis_cli "$port" cluster info | grep cluster_state)"
master_port=${master_addr##*:}
name=redis-$master_port
is_running "$name" || die "$master_addr serves $what but is no node up.sh started and recorded ($name)"
replicas=$(awk -v id="$master_id" '$4 == id && $3 !~ /fail/ {split($2, a, "@"); printf "%s ", a[1]}' <<<"$nodes")

pid=$(recorded_pid "$name")
kill -KILL "$pid"
killed_at=$(date +%s.%N)
say "killed $name (pid $pid), the master of $what, with SIGKILL"
if [[ -n $replicas ]]; then
  say "its replica ${replicas% } should take over its slots within a few seconds (cluster-node-timeout 2 s)"
else
  say "it had no live replica: its slots stay unserved until it comes back (scripts/cluster/revive.sh)"
fi
say "watch: curl -s http://$EDGE_ADDR/readyz; redis-cli -p $port cluster nodes"
$wait || exit 0

# new_master: the address of the master serving the slot now, as a live node sees it.
new_master() {
  local p view
  for p in "${REDIS_PORTS[@]}"; do
    [[ $p == "$master_port" ]] && continue
    view=$(redis_cli "$p" cluster nodes 2>/dev/null) || continue
    slot_master "$slot" "$master_addr" <<<"$view" | awk '{print $2}'
    return "${PIPESTATUS[0]}"
  done
  return 1
}
wait_until 30 "a new master for $what" new_master >/dev/null || exit 1
elapsed=$(awk -v t0="$killed_at" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f", t1 - t0 }')
say "$(new_master) serves $what now, ${elapsed} s after the kill"
