#!/usr/bin/env bash
# scripts/bench/refusals.sh: what a refusal costs one real instance, beside the
# HTTP floor, in one run (issue 20's table). It starts `stagedoor serve` on a
# database of its own (stagedoor_bench, dropped first) and a Redis prefix of its
# own, then drives it with wrk (Debian's package) over loopback:
#
#   GET  /healthz                        the HTTP floor
#   POST /v1/holds refused 429           a drained buyer, refused from the denial cache
#   GET  /v1/me                          an authenticated read, by 50 buyers in turn
#   POST /v1/holds refused 409           50 buyers after one taken seat
#
# and prints, for each, requests a second, p50 latency, the server process's CPU
# and the whole machine's CPU per request (µs), PostgreSQL transactions and WAL
# bytes per request, and Redis commands per request.
#
# Needs: PostgreSQL at $BENCH_DATABASE_URL (default the local one), redis-server
# (a private one is started on port 16479, so that its command count is this
# run's alone), wrk, curl, jq. The worker utilization shedder is switched off
# through the admin API first: this measures what requests cost, not how a
# saturated instance sheds them. Run it on an otherwise quiet machine.
# Usage: scripts/bench/refusals.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/../.."

secs=${1:-10}
conns=${BENCH_CONNECTIONS:-50}
pg=${BENCH_DATABASE_URL:-postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable}
redis_port=${BENCH_REDIS_PORT:-16479}
redis_url=redis://127.0.0.1:$redis_port/0
addr=127.0.0.1:${BENCH_PORT:-18480}
base=http://$addr
admin=bench-admin-token-0123456789
for tool in wrk curl jq psql redis-cli redis-server; do
	command -v "$tool" >/dev/null || { echo "refusals.sh: $tool is missing (Debian: apt-get install wrk curl jq postgresql-client redis-tools)" >&2; exit 2; }
done

db=${pg%%\?*}; db=${db%/*}/stagedoor_bench
psql -q "$pg" -c 'DROP DATABASE IF EXISTS stagedoor_bench WITH (FORCE)' -c 'CREATE DATABASE stagedoor_bench'
go build -o bin/stagedoor ./cmd/stagedoor
work=$(mktemp -d)
pid=
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
	--pidfile "$work/redis.pid" --logfile "$work/redis.log" --dir "$work"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; kill "$(cat "$work/redis.pid")" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

DATABASE_URL=$db bin/stagedoor migrate >/dev/null 2>&1
DATABASE_URL=$db REDIS_URL=$redis_url STAGEDOOR_ADDR=$addr STAGEDOOR_ADMIN_TOKEN=$admin \
	STAGEDOOR_REDIS_PREFIX="bench$$:" STAGEDOOR_LOG_LEVEL=warn STAGEDOOR_BCRYPT_COST=4 \
	STAGEDOOR_LIMIT_SIGNUP_ADDRESS=1000/1s STAGEDOOR_LIMIT_LOGIN_ADDRESS=1000/1s \
	bin/stagedoor serve >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -X PUT "$base/v1/admin/limits/worker-utilization" -H "Authorization: Bearer $admin" -d '{"mode":"off"}' >/dev/null

post() { curl -sf "$base$1" -H 'Content-Type: application/json' "${@:3}" -d "$2"; }
account() { # kind email → token
	post "/v1/$1s" "{\"email\":\"$2\",\"password\":\"correct horse\",\"name\":\"Bench\"}" >/dev/null
	post /v1/login "{\"email\":\"$2\",\"password\":\"correct horse\"}" | jq -r .token
}
org=$(account organizer org@bench.test)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ -d '-1 minute'); later=$(date -u +%Y-%m-%dT%H:%M:%SZ -d '+30 days')
event=$(post /v1/events "{\"name\":\"Bench night\",\"venue\":\"Hall\",\"starts_at\":\"$later\",\"on_sale_at\":\"$now\",\"sections\":[{\"name\":\"Floor\",\"rows\":2,\"seats_per_row\":10,\"price_cents\":4500}]}" \
	-H "Authorization: Bearer $org" | jq -r .id)
seat=$(curl -sf "$base/v1/events/$event/seats" | jq -r '.seats[0].id')
hold_body="{\"event_id\":\"$event\",\"seat_ids\":[\"$seat\"]}"
owner=$(account buyer owner@bench.test)
post /v1/holds "$hold_body" -H "Authorization: Bearer $owner" >/dev/null # the seat is taken

# The 429: a buyer whose hold-buyer bucket (10/1m) is drained.
drained=$(account buyer drained@bench.test)
for _ in $(seq 11); do curl -s -o /dev/null "$base/v1/holds" -H 'Content-Type: application/json' -H "Authorization: Bearer $drained" -d "$hold_body"; done
[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/holds" -H 'Content-Type: application/json' -H "Authorization: Bearer $drained" -d "$hold_body")" = 429 ] ||
	{ echo "refusals.sh: the drained buyer is not refused" >&2; exit 1; }

# The 409: 50 buyers, limits out of the way (hold-buyer raised, concurrency off).
tokens=()
for i in $(seq 50); do tokens+=("$(account buyer "b$i@bench.test")"); done
printf '%s\n' "${tokens[@]}" >"$work/tokens"

cat >"$work/hold.lua" <<EOF
wrk.method = "POST"
wrk.body = '$hold_body'
wrk.headers["Content-Type"] = "application/json"
local tokens, n = {}, 0
for line in io.lines("$work/tokens") do tokens[#tokens + 1] = line end
request = function()
  n = n + 1
  wrk.headers["Authorization"] = "Bearer " .. tokens[(n % #tokens) + 1]
  return wrk.format()
end
EOF
cat >"$work/me.lua" <<EOF
local tokens, n = {}, 0
for line in io.lines("$work/tokens") do tokens[#tokens + 1] = line end
request = function()
  n = n + 1
  wrk.headers["Authorization"] = "Bearer " .. tokens[(n % #tokens) + 1]
  return wrk.format("GET", "/v1/me")
end
EOF
cat >"$work/drained.lua" <<EOF
wrk.method = "POST"
wrk.body = '$hold_body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $drained"
EOF
cat >"$work/plain.lua" <<'EOF'
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() codes = {} end
response = function(status) codes[status] = (codes[status] or 0) + 1 end
done = function(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("codes")) do all[k] = (all[k] or 0) + v end
  end
  local s = ""
  for k, v in pairs(all) do s = s .. k .. "=" .. v .. " " end
  io.stderr:write("statuses " .. s .. "\n")
  io.stderr:write(string.format("p50 %.3f\n", latency:percentile(50) / 1000))
end
EOF
for f in hold me drained; do cat "$work/plain.lua" >>"$work/$f.lua"; done

cpu_proc() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
cpu_machine() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
xacts() { psql -Atq "$pg" -c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'stagedoor_bench'"; }
wal() { psql -Atq "$pg" -c "SELECT pg_current_wal_lsn() - '0/0'"; }
rcmds() { redis-cli -u "$redis_url" info stats | awk -F: '/total_commands_processed/{print $2+0}'; }
hz=$(getconf CLK_TCK)

printf '%-34s %9s %8s %12s %13s %8s %9s %9s  %s\n' request req/s p50_ms server_µs/req machine_µs/req pg_tx/req wal_B/req redis/req statuses
run() { # name script url [wrk args…]
	local name=$1 script=$work/$2.lua; shift 2
	wrk -t2 -c"$conns" -d3s -s "$script" "$@" >/dev/null 2>&1 # warm up
	local p0 m0 x0 w0 r0 out
	p0=$(cpu_proc) m0=$(cpu_machine) x0=$(xacts) w0=$(wal) r0=$(rcmds)
	out=$(wrk -t2 -c"$conns" -d"${secs}s" -s "$script" "$@" 2>&1)
	local p1 m1 x1 w1 r1 reqs rate p50 statuses
	p1=$(cpu_proc) m1=$(cpu_machine) x1=$(xacts) w1=$(wal) r1=$(rcmds)
	reqs=$(awk '/requests in/{print $1}' <<<"$out")
	rate=$(awk '/Requests\/sec/{print $2}' <<<"$out")
	p50=$(awk '/^p50/{print $2}' <<<"$out")
	statuses=$(awk '/^statuses/{$1=""; print}' <<<"$out")
	awk -v n="$name" -v r="$rate" -v p50="$p50" -v q="$reqs" -v hz="$hz" -v pc=$((p1 - p0)) -v mc=$((m1 - m0)) \
		-v x=$((x1 - x0)) -v w=$((w1 - w0)) -v rc=$((r1 - r0)) -v s="$statuses" \
		'BEGIN {printf "%-34s %9.0f %8.2f %12.1f %13.1f %8.3f %9.1f %9.3f %s\n", n, r, p50, pc/hz*1e6/q, mc/hz*1e6/q, x/q, w/q, rc/q, s}'
}

run "GET /healthz" plain "$base/healthz"
run "POST /v1/holds 429 (denied)" drained "$base/v1/holds"
run "GET /v1/me (50 buyers)" me "$base/v1/me"
curl -sf -X PUT "$base/v1/admin/limits/hold-buyer" -H "Authorization: Bearer $admin" -d '{"mode":"off"}' >/dev/null
curl -sf -X PUT "$base/v1/admin/limits/hold-organizer" -H "Authorization: Bearer $admin" -d '{"mode":"off"}' >/dev/null
curl -sf -X PUT "$base/v1/admin/limits/buyer-concurrency" -H "Authorization: Bearer $admin" -d '{"mode":"off"}' >/dev/null
run "POST /v1/holds 409 (seat taken)" hold "$base/v1/holds"
