#!/usr/bin/env bash
# revive.sh [NAME...]: starts again, exactly as up.sh started them (.cluster/run/NAME.sh),
# the recorded processes of the local cluster that are not running: every one, or
# the NAMEs given (redis-7002, stagedoor-2, …). A Redis node rejoins the cluster
# from its nodes.conf, as a replica when its slots were taken over meanwhile, and
# revive.sh returns once it has synced with its master (as up.sh waits for every
# replica), so that a master killed next finds a replica ready to take over; an
# instance is back in HAProxy's rotation after 2 good health checks.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -d $state/run ]] || die "no cluster recorded in $state (make cluster starts one)"
if (($#)); then names=("$@"); else mapfile -t names < <(all_names); fi
started=()
for name in "${names[@]}"; do
  [[ -f $state/run/$name.sh ]] || die "$name: no $state/run/$name.sh (names: $(all_names | tr '\n' ' '))"
  if is_running "$name"; then continue; fi
  start_recorded "$name"
  started+=("$name")
  say "started $name again (pid $(recorded_pid "$name")); its log: $state/logs/$name.log"
done
((${#started[@]})) || {
  say "everything recorded is running"
  exit 0
}
# Wait until each answers again.
for name in "${started[@]}"; do
  case $name in
    redis-*)
      port=${name#redis-}
      # The cluster is ok as this node sees it, and the node is either a master
      # serving slots (revived before its replica took over) or a replica whose
      # link to its master is up, its first sync done. A revived master whose
      # slots were taken over first says role:master for a moment, until it
      # hears of the newer epoch and turns replica: a master without slots is
      # not yet rejoined.
      check() {
        local info
        [[ $(redis_cli "$port" cluster info 2>/dev/null) == *cluster_state:ok* ]] || return 1
        info=$(redis_cli "$port" info replication 2>/dev/null) || return 1
        if [[ $info == *role:slave* ]]; then
          [[ $info == *master_link_status:up* && $info != *master_sync_in_progress:1* ]]
          return
        fi
        redis_cli "$port" cluster nodes 2>/dev/null | awk '$3 ~ /myself/ && $3 ~ /master/ && NF >= 9 { found = 1 } END { exit !found }'
      }
      ;;
    stagedoor-*) check() { http_ok "http://127.0.0.1:$(instance_port "${name#stagedoor-}")/readyz"; } ;;
    pgbouncer) check() { port_open "$PGBOUNCER_ADDR"; } ;;
    payrail) check() { http_ok "http://$PAYRAIL_LISTEN/healthz"; } ;;
    haproxy) check() { http_ok "http://$EDGE_ADDR/healthz"; } ;;
    prometheus) check() { http_ok "http://$PROMETHEUS_ADDR/-/ready"; } ;;
  esac
  if wait_until 60 "$name" check; then say "$name answers"; else log_tail "$name"; fi
done
