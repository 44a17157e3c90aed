#!/usr/bin/env bash
# go-test.sh: every Go test, as make test runs them (Redis's URL, and PostgreSQL's
# when the tests are to use a given server, already exported by
# scripts/ensure-services.sh --test-env).
#
# PostgreSQL: a cluster of the tests' own (scripts/test-postgres.sh: 500
# connections, no fsync), stopped when the tests end, unless
# STAGEDOOR_TEST_POSTGRES=given, which keeps STAGEDOOR_TEST_DATABASE_URL as set (or
# testcontainers' when unset). On the machine's server (100 connections) the
# packages could not run side by side with the browser tests.
#
# Two runs side by side: every package but the browser tests with -race, and the
# browser tests (web/e2e) without it (they wait on Chromium, and the server code
# they drive is raced by the packages' own tests; under -race they took 330 s, without
# it about half). Most tests wait (on PostgreSQL, Redis, Payrail, a browser, a
# clock), not on a core: -p runs that many test binaries at once (go test's default
# is one a core, 2 here, which left a core idle for much of the run), -parallel that
# many parallel tests in each.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

if [[ ${STAGEDOOR_TEST_POSTGRES:-private} != given ]]; then
  pg_env=$(bash scripts/test-postgres.sh start) || exit 1
  eval "$pg_env"
  if [[ -n ${test_pg_dir:-} ]]; then
    trap 'bash scripts/test-postgres.sh stop "$test_pg_dir"' EXIT
  fi
fi

flags=(-count=1 -p "${STAGEDOOR_TEST_P:-3}" -parallel 4 -timeout 15m)
mapfile -t packages < <(go list ./... | grep -v '/web/e2e$')

# The browser tests' lines are marked "web/e2e| " so that the two runs' output
# can be told apart.
echo "go test -race ${flags[*]} <every package but web/e2e>, beside: go test ${flags[*]} ./web/e2e"
(
  go test "${flags[@]}" ./web/e2e 2>&1 | sed -u 's/^/web\/e2e| /'
  exit "${PIPESTATUS[0]}"
) &
e2e_pid=$!
status=0
go test -race "${flags[@]}" "${packages[@]}" 2>&1 || status=1
wait "$e2e_pid" || status=1
exit "$status"
