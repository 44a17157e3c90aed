#!/usr/bin/env bash
# revive.sh [NAME...]: starts again, exactly as up.sh started them (.cluster/run/NAME.sh),
# the recorded processes of the local cluster that are not running: every one, or
# the NAMEs given (redis-7002, stagedoor-2, …). A Redis node rejoins the cluster
# from its nodes.conf, as a replica when its slots were taken over meanwhile; an
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
      check() { [[ $(redis_cli "$port" cluster info 2>/dev/null) == *cluster_state:ok* ]]; }
      ;;
    stagedoor-*) check() { http_ok "http://127.0.0.1:$(instance_port "${name#stagedoor-}")/readyz"; } ;;
    pgbouncer) check() { port_open "$PGBOUNCER_ADDR"; } ;;
    payrail) check() { http_ok "http://$PAYRAIL_LISTEN/healthz"; } ;;
    haproxy) check() { http_ok "http://$EDGE_ADDR/healthz"; } ;;
    prometheus) check() { http_ok "http://$PROMETHEUS_ADDR/-/ready"; } ;;
  esac
  if wait_until 60 "$name" check; then say "$name answers"; else log_tail "$name"; fi
done
