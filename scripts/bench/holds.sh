#!/usr/bin/env bash
# holds.sh BINARY ADDR DATABASE_URL REDIS_URL: serves a Stagedoor build (this
# one's binary, or an older build's) with the settings of the hold benchmark,
# the same whichever build: the hold limits, login-address, login-email and
# signup-address out of the way, bcrypt at cost 4, the production pool of 24
# connections. Settings an older build does not know are ignored by it. Then,
# in another shell, the load (the same harness for every build):
#
#   go run ./scripts/bench/holds -url http://ADDR -buyers 100 -seats 10000 -holds 20000
#
# Side by side with commit e06d8a8's build (docs/design.md, "Holds a second,
# beside an earlier build"): git worktree add /tmp/e06 e06d8a8, build its
# cmd/stagedoor, serve each on a fresh database of its own (a database that
# stored the limits' settings keeps them: these variables apply at the first
# start) and a Redis prefix of its own, one at a time (each pool holds 26
# PostgreSQL connections), and run the harness against each in turn.
set -euo pipefail
bin=${1:?usage: holds.sh BINARY ADDR DATABASE_URL REDIS_URL}
addr=${2:?} db=${3:?} redis=${4:?}
export DATABASE_URL=$db REDIS_URL=$redis STAGEDOOR_ADDR=$addr
export STAGEDOOR_REDIS_PREFIX="bench:${addr//[^0-9]/}:" STAGEDOOR_DB_POOL=24 STAGEDOOR_BCRYPT_COST=4 STAGEDOOR_LOG_LEVEL=warn
# Redis given 2 s, as the tests do: on a saturated machine the 50 ms default
# would fail decisions open (or leave leases counted), which is not what is measured.
export STAGEDOOR_REDIS_TIMEOUT=2s
export STAGEDOOR_LIMIT_HOLD_BUYER=1000000/1s STAGEDOOR_LIMIT_HOLD_ORGANIZER=1000000/1s
export STAGEDOOR_LIMIT_LOGIN_ADDRESS=100000/1s STAGEDOOR_LIMIT_LOGIN_EMAIL=100000/1s STAGEDOOR_LIMIT_SIGNUP_ADDRESS=100000/1s
export STAGEDOOR_LIMIT_EVENT_CREATE=100000/1s STAGEDOOR_REHOLD_COOLDOWN=0
# The worker utilization shedder off (older builds have none): the load is to
# be served, not shed, so that holds a second are what is measured.
export STAGEDOOR_WORKER_UTILIZATION=off
# The metrics listener of builds that have one, on a port of its own.
export STAGEDOOR_METRICS_ADDR=127.0.0.1:$(( ${addr##*:} + 1000 ))
exec "$bin" serve
