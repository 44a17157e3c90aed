#!/usr/bin/env bash
# go-test.sh: every Go test, as make test runs them (the services' URLs already
# exported by scripts/ensure-services.sh --test-env): every package but the
# browser tests with -race, then the browser tests (web/e2e) without it. They
# spend their time waiting on Chromium, and the server code they drive is raced
# by the packages' own tests; under -race they took 330 s here, without it about
# half. (Run beside the other packages instead, the two runs slowed each other
# as much as they overlapped, and passed the machine's PostgreSQL's
# max_connections: 15 min 15 s against 15 to 16 one after the other.)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

# -parallel 4: most tests wait on PostgreSQL, Redis, Payrail or a browser, not on
# a core; the default (GOMAXPROCS, 2 here) ran internal/httpapi's parallel tests
# two at a time. Not more: each test holds up to about 8 PostgreSQL connections,
# and the machine's PostgreSQL allows 100 in all.
flags=(-count=1 -parallel 4 -timeout 15m)

mapfile -t packages < <(go list ./... | grep -v '/web/e2e$')
echo "go test -race ${flags[*]} <every package but web/e2e>"
status=0
go test -race "${flags[@]}" "${packages[@]}" || status=$?
echo "go test ${flags[*]} ./web/e2e"
go test "${flags[@]}" ./web/e2e || status=1
exit "$status"
