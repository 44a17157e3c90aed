#!/usr/bin/env bash
# go-test.sh: every Go test, as make test runs them (the services' URLs already
# exported by scripts/ensure-services.sh --test-env). Two runs at once:
#
#   - the browser tests (web/e2e), without the race detector: they spend their
#     time waiting on Chromium, and the server code they drive is raced by the
#     packages' own tests;
#   - every other package with -race.
#
# On this 2-core machine one run after the other left a core idle for most of
# the run (user time about equal to real time), and the browser tests, last in
# the list, ran alone at the end. Their output is printed once the other run
# has finished, so that the two do not interleave.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

# -parallel 4: most tests wait on PostgreSQL, Redis, Payrail or a browser, not on
# a core; the default (GOMAXPROCS, 2 here) ran internal/httpapi's parallel tests
# two at a time. Not more: each test holds up to about 8 PostgreSQL connections,
# and the machine's PostgreSQL allows 100 in all.
flags=(-count=1 -parallel 4 -timeout 15m)

e2e_log=$(mktemp)
trap 'rm -f "$e2e_log"' EXIT
echo "go test ${flags[*]} ./web/e2e (beside the rest; its output follows theirs)"
go test "${flags[@]}" ./web/e2e >"$e2e_log" 2>&1 &
e2e=$!

mapfile -t packages < <(go list ./... | grep -v '/web/e2e$')
echo "go test -race ${flags[*]} <every other package>"
status=0
go test -race "${flags[@]}" "${packages[@]}" || status=$?

e2e_status=0
wait "$e2e" || e2e_status=$?
cat "$e2e_log"
if ((status != 0 || e2e_status != 0)); then
  echo "go-test: failed (the packages: status $status; web/e2e: status $e2e_status)" >&2
  exit 1
fi
