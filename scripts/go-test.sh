#!/usr/bin/env bash
# go-test.sh: every Go test, as make test runs them (Redis's URL, and PostgreSQL's
# when the tests are to use a given server, already exported by
# scripts/ensure-services.sh --test-env).
#
# PostgreSQL: a cluster of the tests' own (scripts/test-postgres.sh: 500
# connections, no fsync), stopped when the tests end, unless
# STAGEDOOR_TEST_POSTGRES=given, which keeps STAGEDOOR_TEST_DATABASE_URL as set (or
# testcontainers' when unset): each test makes and drops a database of its own,
# and the machine's server makes every commit and CREATE/DROP DATABASE durable,
# and allows 100 connections (which a busy run of the packages reached: 53300).
#
# Every package but the browser tests with -race, then the browser tests (web/e2e)
# without it: they wait on Chromium, and the server code they drive is raced by
# the packages' own tests (under -race they took 330 s here, without it about half).
# One after the other, not side by side: this 2-core machine is busy throughout the
# first run. With the browser tests beside it, at -p 3, the two took 13 min 41 s
# (one after the other, about 12 min 45 s) and eight tests with real deadlines
# failed for want of CPU: payment deadlines missed, Redis dials timed out, a
# camera's frame decoded too late.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

if [[ ${STAGEDOOR_TEST_POSTGRES:-private} != given ]]; then
  pg_env=$(bash scripts/test-postgres.sh start) || exit 1
  eval "$pg_env"
  if [[ -n ${test_pg_dir:-} ]]; then
    trap 'bash scripts/test-postgres.sh stop "$test_pg_dir"' EXIT
  fi
fi

flags=(-count=1 -parallel 4 -timeout 15m)
mapfile -t packages < <(go list ./... | grep -v '/web/e2e$')
echo "go test -race ${flags[*]} <every package but web/e2e>"
status=0
SECONDS=0
go test -race "${flags[@]}" "${packages[@]}" || status=$?
echo "go-test: the race-detected packages took ${SECONDS} s"
echo "go test ${flags[*]} ./web/e2e"
SECONDS=0
go test "${flags[@]}" ./web/e2e || status=1
echo "go-test: the browser tests took ${SECONDS} s (building them included)"
exit "$status"
