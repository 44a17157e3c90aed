#!/usr/bin/env bash
# down.sh [--purge]: stops what scripts/cluster/up.sh started ("make cluster-down"):
# exactly the processes recorded in .cluster/pids, by pid, and only while each pid
# still runs the program it was started as (SIGTERM, then SIGKILL after 10 s, 25 s
# for Stagedoor and Payrail, whose requests in flight finish first). The machine's
# own Redis (6379) and PostgreSQL are never touched: up.sh records neither.
#
# The logs and data stay in .cluster/ for a look afterwards (up.sh starts from an
# empty directory anyway); --purge removes the whole directory.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

purge=false
case ${1:-} in
  --purge) purge=true ;;
  '') ;;
  *) die "usage: $0 [--purge]" ;;
esac

if [[ ! -d $state/pids ]] || [[ -z $(ls -A "$state/pids") ]]; then
  say "nothing recorded in $state/pids: no cluster to stop"
else
  stop_all
  rmdir "$state/pids" 2>/dev/null || true
  say "stopped; the logs stay in $state/logs"
fi
if $purge && [[ -d $state ]]; then
  rm -rf "$state"
  say "removed $state"
fi
