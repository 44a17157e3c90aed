#!/usr/bin/env bash
# kill-instance.sh N: kills Stagedoor instance N (1-3) of the local cluster with
# SIGKILL, as a crash: no request in flight finishes. HAProxy routes around it:
# requests whose connection fails are tried again on another instance at once,
# and its health checks mark it down within about 2 s. scripts/cluster/revive.sh
# starts it again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

n=${1:-}
[[ $n =~ ^[1-3]$ ]] || die "usage: $0 N   (N: 1, 2 or 3, the instance on 127.0.0.1:808N)"
name=stagedoor-$n
is_running "$name" || die "$name is not running (make cluster starts the cluster; revive.sh restarts it)"
pid=$(recorded_pid "$name")
kill -KILL "$pid"
say "killed $name (pid $pid, 127.0.0.1:$(instance_port "$n")) with SIGKILL"
say "watch: for i in \$(seq 6); do curl -s -o /dev/null -w '%{http_code} %header{x-served-by}\\n' http://$EDGE_ADDR/healthz; done"
