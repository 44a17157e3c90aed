#!/usr/bin/env bash
# up.sh: a local multi-instance Stagedoor in one command ("make cluster"), from
# Debian's packages only, no Docker:
#
#   Redis Cluster   3 masters + 3 replicas on 127.0.0.1:7001-7006 (bus ports 17001-17006),
#                   cluster-node-timeout 2 s, cluster-require-full-coverage no, no persistence
#   PgBouncer       127.0.0.1:6433 in front of PostgreSQL, pool_mode=transaction, 20 server
#                   connections for the database: the instances' and Payrail's DATABASE_URL
#   Payrail         127.0.0.1:8090 (bin/stagedoor payrail)
#   Stagedoor       three instances, 127.0.0.1:8081, 8082 and 8083 (bin/stagedoor serve), their
#                   metrics on 127.0.0.1:9101, 9102 and 9103 (STAGEDOOR_METRICS_ADDR), on
#                   the Redis Cluster and the local PostgreSQL (database stagedoor) through
#                   PgBouncer, PostgreSQL itself as STAGEDOOR_DIRECT_DATABASE_URL (migrations,
#                   LISTEN, recovery's lock), trusting only the balancer's X-Forwarded-For
#                   (it connects from 127.0.80.80); the demo data seeded once first
#   HAProxy         127.0.0.1:8080 in front of them: round robin, health checks on /healthz,
#                   dead instances routed around, the edge limit per client address (429
#                   above 50 requests a second, bursts of 100); stats on 127.0.0.1:8404
#   Prometheus      127.0.0.1:9090, scraping the instances' metrics listeners every 5 s with
#                   deploy/prometheus/alerts.yml loaded, sending what fires to
#   Alertmanager    127.0.0.1:9093 (Debian's prometheus-alertmanager, with
#                   deploy/alertmanager/alertmanager.yml: grouped and routed by severity)
#
# Every process runs in the background, recorded under .cluster/ (scripts/cluster/lib.sh
# says what is where); the script returns once all answer. It refuses to start while
# processes of an earlier run are alive: make cluster-down (scripts/cluster/down.sh)
# stops exactly those. If a step fails, what was started is stopped again.
#
# Environment:
#   DATABASE_URL            PostgreSQL itself, postgres://USER:PASSWORD@HOST:PORT/DATABASE
#                           (PgBouncer is put in front of it); default: the local
#                           PostgreSQL, database stagedoor (scripts/ensure-services.sh,
#                           as make run)
#   STAGEDOOR_ADMIN_TOKEN   default: the one in .env.demo, else a new one (as make run)
#   PAYRAIL_API_KEY         default: a new random one (in the state's env file afterwards)
#   STAGEDOOR_*, PAYRAIL_*  passed on to the instances and Payrail (STAGEDOOR_LOG_LEVEL=debug…)
#   STAGEDOOR_BIN           default bin/stagedoor (make cluster builds it)
#   STAGEDOOR_CLUSTER_DIR   default .cluster
#
# Packages (installed when missing, as root; otherwise the script says what to install):
# redis-server and redis-tools, pgbouncer, haproxy, prometheus, prometheus-alertmanager; curl. Go builds the small template
# renderer (scripts/cluster/render).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$cluster_root"

bin=$(realpath "${STAGEDOOR_BIN:-bin/stagedoor}" 2>/dev/null || true)
env_file=${STAGEDOOR_DEMO_ENV_FILE:-.env.demo}

# --- an earlier run ------------------------------------------------------------

mapfile -t alive < <(running_names)
if ((${#alive[@]})); then
  say "a cluster from an earlier run is still up (${alive[*]}); recorded in $state/pids."
  die "stop it first: make cluster-down (scripts/cluster/down.sh)"
fi

# --- packages ------------------------------------------------------------------

pkgs=()
command -v redis-server >/dev/null || pkgs+=(redis-server)
command -v redis-cli >/dev/null || pkgs+=(redis-tools)
command -v pgbouncer >/dev/null || [[ -x /usr/sbin/pgbouncer ]] || pkgs+=(pgbouncer)
command -v haproxy >/dev/null || pkgs+=(haproxy)
command -v prometheus >/dev/null || pkgs+=(prometheus)
command -v prometheus-alertmanager >/dev/null || pkgs+=(prometheus-alertmanager)
command -v curl >/dev/null || pkgs+=(curl)
if ((${#pkgs[@]})); then
  if [[ $EUID -ne 0 ]]; then
    die "missing ${pkgs[*]}; run: sudo apt-get install -y --no-install-recommends ${pkgs[*]}"
  fi
  say "installing ${pkgs[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
command -v go >/dev/null || die "go is not on PATH (it builds scripts/cluster/render)"
[[ -n $bin && -x $bin ]] || die "no ${STAGEDOOR_BIN:-bin/stagedoor}: run make build first (make cluster does)"

# --- ports ---------------------------------------------------------------------

# Something answering on a port the cluster needs (make run on 8080, say) would
# make a process fail later and less clearly.
# shellcheck disable=SC2016 # the inner bash expands $0
port_taken() { timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null; }
taken=()
for port in "${REDIS_PORTS[@]}"; do
  for p in "$port" $((port + BUS_OFFSET)); do
    if port_taken "$p"; then taken+=("$p"); fi
  done
done
for addr in "$EDGE_ADDR" "$STATS_ADDR" "$PAYRAIL_LISTEN" "$PROMETHEUS_ADDR" "$ALERTMANAGER_ADDR" "$PGBOUNCER_ADDR"; do
  if port_taken "${addr##*:}"; then taken+=("${addr##*:}"); fi
done
for i in "${INSTANCES[@]}"; do
  for p in "$(instance_port "$i")" "$(metrics_port "$i")"; do
    if port_taken "$p"; then taken+=("$p"); fi
  done
done
if ((${#taken[@]})); then
  # Debian starts the services of the packages it installs, where systemd runs.
  for unit in prometheus prometheus-alertmanager haproxy pgbouncer; do
    if command -v systemctl >/dev/null && systemctl is-active --quiet "$unit" 2>/dev/null; then
      say "the system's own $unit service runs (Debian starts it when installing the package);" \
        "if this cluster is what you want of it here: sudo systemctl disable --now $unit"
    fi
  done
  die "ports in use on 127.0.0.1: ${taken[*]} (ss -ltnp shows by what; make run uses 8080 and 8090)"
fi

# --- configuration -------------------------------------------------------------

given_db=${DATABASE_URL:-}
services=$(bash scripts/ensure-services.sh --run-env stagedoor)
eval "$services" # DATABASE_URL and REDIS_URL of the local services; only the first is used
DATABASE_URL=${given_db:-$DATABASE_URL}

# PgBouncer logs in to PostgreSQL as DATABASE_URL does, and the clients log in to it
# with the same user and password (md5; trust when there is no password, as
# PostgreSQL itself then trusts this address). The URL's parts, read here:
url_re='^postgres(ql)?://([^:@/?]+)(:([^@/?]*))?@([^:/?]+)(:([0-9]+))?/([^/?]+)(\?.*)?$'
[[ $DATABASE_URL =~ $url_re ]] || die "DATABASE_URL is not of the form postgres://USER:PASSWORD@HOST:PORT/DATABASE," \
  "which PgBouncer's configuration is written from"
pg_user=${BASH_REMATCH[2]} pg_password=${BASH_REMATCH[4]} pg_host=${BASH_REMATCH[5]}
pg_port=${BASH_REMATCH[7]:-5432} pg_db=${BASH_REMATCH[8]}
for part in "$pg_user" "$pg_password" "$pg_host" "$pg_db"; do
  [[ $part != *[\'\\\"%\ ]* ]] || die "DATABASE_URL: quotes, backslashes, spaces or %-escapes in its user, password, host or database" \
    "cannot go into PgBouncer's configuration as they are; use a plain one"
done
pgbouncer_auth=md5
[[ -n $pg_password ]] || pgbouncer_auth=trust
# PostgreSQL itself: the migrations, the LISTEN connections, recovery's lock, the
# simulator's checks. Through PgBouncer: everything else.
direct_url=$DATABASE_URL
pooled_url="postgres://$pg_user${pg_password:+:$pg_password}@$PGBOUNCER_ADDR/$pg_db?sslmode=disable"

# The admin token, as make run finds it (scripts/run-local.sh): as given, else the
# one seed wrote to the demo file last time, else 192 random bits.
if [[ -z ${STAGEDOOR_ADMIN_TOKEN:-} && -f $env_file ]]; then
  STAGEDOOR_ADMIN_TOKEN=$(sed -n "s/^STAGEDOOR_ADMIN_TOKEN='\([A-Za-z0-9_-]*\)'\$/\1/p" "$env_file" | tail -n 1)
fi
if [[ -z ${STAGEDOOR_ADMIN_TOKEN:-} ]]; then
  STAGEDOOR_ADMIN_TOKEN=sdadmin_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  say "made a new admin token (kept in $env_file from now on)"
fi

# Payrail's API key, which the instances send: as given, else 192 random bits
# (kept in the run scripts, so that revive.sh starts them with the same one).
PAYRAIL_API_KEY=${PAYRAIL_API_KEY:-prk_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}

cluster_addrs=()
for port in "${REDIS_PORTS[@]}"; do cluster_addrs+=("127.0.0.1:$port"); done
cluster_url=$(
  IFS=,
  echo "${cluster_addrs[*]}"
)

# What the user set for Stagedoor and Payrail (make cluster STAGEDOOR_LOG_LEVEL=debug)
# goes to every instance, written into its run script so that revive.sh repeats it;
# what the cluster decides is set after it and wins.
passed=()
while IFS= read -r var; do
  case $var in
    STAGEDOOR_ADDR | STAGEDOOR_METRICS_ADDR | STAGEDOOR_TRUSTED_PROXIES | STAGEDOOR_ADMIN_TOKEN | STAGEDOOR_BIN | STAGEDOOR_CLUSTER_DIR | PAYRAIL_ADDR | PAYRAIL_URL | PAYRAIL_API_KEY) ;;
    STAGEDOOR_* | PAYRAIL_*) passed+=("$var=${!var}") ;;
  esac
done < <(compgen -e)

# --- the state directory ----------------------------------------------------------

# Nothing of an earlier run is alive (checked above): start from an empty
# directory, so that no node finds an old nodes.conf of another cluster. Its files
# hold the admin token and the database's password: this user's only.
rm -rf "$state"
umask 077
mkdir -p "$state"/{pids,run,logs,redis,prometheus,alertmanager,bin}

# If anything below fails, stop what was started and keep the logs.
on_exit() {
  local status=$?
  ((status == 0)) && return 0
  say "failed; stopping what was started (the logs stay in $state/logs)"
  stop_all
  exit "$status"
}
trap on_exit EXIT

say "building the template renderer (scripts/cluster/render)"
go build -o "$state/bin/render" ./scripts/cluster/render
render() { "$state/bin/render" -template "$1" -data "$2" -out "$3"; }
# json_string S: S as a JSON string (paths and addresses: backslashes and quotes escaped).
json_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

# --- Redis Cluster -----------------------------------------------------------------

say "starting 6 Redis nodes on 127.0.0.1:${REDIS_PORTS[0]}-${REDIS_PORTS[5]}"
for port in "${REDIS_PORTS[@]}"; do
  dir=$state/redis/$port
  mkdir -p "$dir"
  # No persistence (--save "", no AOF): the cluster lives as long as this run; a
  # node revived by revive.sh rejoins from its nodes.conf and syncs from its master.
  launch "redis-$port" redis-server --port "$port" --bind 127.0.0.1 \
    --cluster-enabled yes --cluster-port $((port + BUS_OFFSET)) \
    --cluster-config-file "$dir/nodes.conf" \
    --cluster-node-timeout 2000 --cluster-require-full-coverage no \
    --save '' --appendonly no --dir "$dir" --daemonize no
done
node_answers() { [[ $(redis_cli "$1" ping 2>/dev/null) == PONG ]]; }
for port in "${REDIS_PORTS[@]}"; do
  wait_until 10 "Redis on 127.0.0.1:$port" node_answers "$port" || {
    log_tail "redis-$port"
    exit 1
  }
done
say "creating the cluster (redis-cli --cluster create, 1 replica per master)"
redis-cli --cluster create "${cluster_addrs[@]}" --cluster-replicas 1 --cluster-yes >"$state/logs/cluster-create.log" 2>&1 || {
  log_tail cluster-create
  exit 1
}
# Every node sees the whole cluster as ok, and every replica has synced, so that
# a master killed right away has a replica ready to take over.
cluster_ok() {
  local port info
  for port in "${REDIS_PORTS[@]}"; do
    info=$(redis_cli "$port" cluster info 2>/dev/null) || return 1
    [[ $info == *cluster_state:ok* && $info == *cluster_known_nodes:6* ]] || return 1
    info=$(redis_cli "$port" info replication 2>/dev/null) || return 1
    [[ $info == *role:master* || $info == *master_link_status:up* ]] || return 1
  done
}
wait_until 30 "the Redis Cluster's cluster_state:ok on every node" cluster_ok || exit 1

# --- PgBouncer ---------------------------------------------------------------------

printf '{"ListenAddr":%s,"ListenPort":%s,"Database":%s,"ServerHost":%s,"ServerPort":%s,"ServerUser":%s,"ServerPassword":%s,"AuthType":%s,"AuthFile":%s,"PoolSize":%d,"MaxClientConn":%d}\n' \
  "$(json_string "${PGBOUNCER_ADDR%:*}")" "${PGBOUNCER_ADDR##*:}" "$(json_string "$pg_db")" "$(json_string "$pg_host")" \
  "$pg_port" "$(json_string "$pg_user")" "$(json_string "$pg_password")" "$(json_string "$pgbouncer_auth")" \
  "$(json_string "$state/userlist.txt")" "$PGBOUNCER_POOL" 1000 >"$state/pgbouncer.json"
render scripts/cluster/pgbouncer.ini.tmpl "$state/pgbouncer.json" "$state/pgbouncer.ini"
printf '"%s" "%s"\n' "$pg_user" "$pg_password" >"$state/userlist.txt"
pgbouncer_bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
# pgbouncer refuses to run as root: as root it reads its files, then becomes nobody.
run_as=()
if [[ $EUID -eq 0 ]]; then run_as=(-u nobody); fi
say "starting PgBouncer on $PGBOUNCER_ADDR (transaction pooling, $PGBOUNCER_POOL server connections)"
launch pgbouncer "$pgbouncer_bin" "${run_as[@]}" "$state/pgbouncer.ini"
wait_until 15 "PgBouncer on $PGBOUNCER_ADDR" port_open "$PGBOUNCER_ADDR" || {
  log_tail pgbouncer
  exit 1
}

# --- the demo data, Payrail, the instances -------------------------------------------

say "seeding the demo data (stagedoor seed, once for all instances)"
env "${passed[@]}" DATABASE_URL="$pooled_url" STAGEDOOR_DIRECT_DATABASE_URL="$direct_url" REDIS_URL="$cluster_url" \
  STAGEDOOR_ADMIN_TOKEN="$STAGEDOOR_ADMIN_TOKEN" STAGEDOOR_DEMO_ENV_FILE="$env_file" \
  "$bin" seed >"$state/logs/seed.log" 2>&1 || {
  log_tail seed
  exit 1
}

say "starting Payrail on $PAYRAIL_LISTEN"
launch payrail env "${passed[@]}" PAYRAIL_ADDR="$PAYRAIL_LISTEN" PAYRAIL_API_KEY="$PAYRAIL_API_KEY" \
  DATABASE_URL="$pooled_url" STAGEDOOR_DIRECT_DATABASE_URL="$direct_url" PAYRAIL_DATABASE_URL="${PAYRAIL_DATABASE_URL:-$pooled_url}" \
  "$bin" payrail

for i in "${INSTANCES[@]}"; do
  say "starting stagedoor-$i on 127.0.0.1:$(instance_port "$i")"
  launch "stagedoor-$i" env "${passed[@]}" STAGEDOOR_ADDR="127.0.0.1:$(instance_port "$i")" \
    STAGEDOOR_METRICS_ADDR="127.0.0.1:$(metrics_port "$i")" \
    DATABASE_URL="$pooled_url" STAGEDOOR_DIRECT_DATABASE_URL="$direct_url" REDIS_URL="$cluster_url" \
    PAYRAIL_URL="http://$PAYRAIL_LISTEN" PAYRAIL_API_KEY="$PAYRAIL_API_KEY" STAGEDOOR_TRUSTED_PROXIES="$BALANCER_CIDR" \
    STAGEDOOR_ADMIN_TOKEN="$STAGEDOOR_ADMIN_TOKEN" "$bin" serve
done

wait_until 30 "Payrail on $PAYRAIL_LISTEN" http_ok "http://$PAYRAIL_LISTEN/healthz" || {
  log_tail payrail
  exit 1
}
for i in "${INSTANCES[@]}"; do
  # readyz: PostgreSQL answers this instance, and it has the cluster's slot map.
  wait_until 60 "stagedoor-$i" http_ok "http://127.0.0.1:$(instance_port "$i")/readyz" || {
    log_tail "stagedoor-$i"
    exit 1
  }
done

# --- HAProxy ------------------------------------------------------------------------

backends=
for i in "${INSTANCES[@]}"; do
  backends+="${backends:+,}{\"Name\":\"stagedoor-$i\",\"Addr\":\"127.0.0.1:$(instance_port "$i")\"}"
done
# 10,000 connections at once (two descriptors each), or what this user's hard limit
# on open files allows: HAProxy raises its own limit and fails when it cannot.
fd_limit=$(ulimit -Hn)
[[ $fd_limit == unlimited ]] && fd_limit=1048576
maxconn=$(((fd_limit - 200) / 2))
((maxconn > 10000)) && maxconn=10000
((maxconn < 5200)) && say "warning: HAProxy can hold only $maxconn connections (ulimit -Hn is $fd_limit); a 5,000-buyer on-sale needs more"
printf '{"Listen":%s,"StatsListen":%s,"MaxConn":%d,"Source":%s,"Resolver":"","Backends":[%s]}\n' \
  "$(json_string "$EDGE_ADDR")" "$(json_string "$STATS_ADDR")" "$maxconn" "$(json_string "$BALANCER_SOURCE")" \
  "$backends" >"$state/haproxy.json"
render scripts/cluster/haproxy.cfg.tmpl "$state/haproxy.json" "$state/haproxy.cfg"
haproxy -c -q -f "$state/haproxy.cfg" || die "haproxy -c refused $state/haproxy.cfg"
say "starting HAProxy on $EDGE_ADDR (stats on $STATS_ADDR)"
# -db: in the foreground (no daemon, no master process), so the pid is HAProxy's.
launch haproxy haproxy -db -f "$state/haproxy.cfg"
wait_until 15 "HAProxy on $EDGE_ADDR" http_ok "http://$EDGE_ADDR/healthz" || {
  log_tail haproxy
  exit 1
}

# --- Alertmanager -------------------------------------------------------------------

if command -v amtool >/dev/null; then
  amtool check-config deploy/alertmanager/alertmanager.yml >"$state/logs/amtool.log" 2>&1 || {
    log_tail amtool
    exit 1
  }
fi
say "starting Alertmanager on $ALERTMANAGER_ADDR"
# One Alertmanager, no gossip with peers (--cluster.listen-address empty).
launch alertmanager prometheus-alertmanager --config.file="$cluster_root/deploy/alertmanager/alertmanager.yml" \
  --storage.path="$state/alertmanager" --web.listen-address="$ALERTMANAGER_ADDR" --cluster.listen-address=
wait_until 30 "Alertmanager on $ALERTMANAGER_ADDR" http_ok "http://$ALERTMANAGER_ADDR/-/ready" || {
  log_tail alertmanager
  exit 1
}

# --- Prometheus ---------------------------------------------------------------------

targets=
for i in "${INSTANCES[@]}"; do targets+="${targets:+,}\"127.0.0.1:$(metrics_port "$i")\""; done
printf '{"ScrapeInterval":"5s","RuleFiles":[%s],"Targets":[%s],"HAProxyTarget":%s,"AlertmanagerTarget":%s}\n' \
  "$(json_string "$cluster_root/deploy/prometheus/alerts.yml")" "$targets" \
  "$(json_string "$STATS_ADDR")" "$(json_string "$ALERTMANAGER_ADDR")" >"$state/prometheus.json"
render scripts/cluster/prometheus.yml.tmpl "$state/prometheus.json" "$state/prometheus.yml"
if command -v promtool >/dev/null; then
  promtool check config "$state/prometheus.yml" >"$state/logs/promtool.log" 2>&1 || {
    log_tail promtool
    exit 1
  }
fi
say "starting Prometheus on $PROMETHEUS_ADDR"
launch prometheus prometheus --config.file="$state/prometheus.yml" \
  --storage.tsdb.path="$state/prometheus" --storage.tsdb.retention.time=2d \
  --web.listen-address="$PROMETHEUS_ADDR"
wait_until 30 "Prometheus on $PROMETHEUS_ADDR" http_ok "http://$PROMETHEUS_ADDR/-/ready" || {
  log_tail prometheus
  exit 1
}

# --- done -------------------------------------------------------------------------

{
  echo "# The local cluster (scripts/cluster/up.sh): . $state/env"
  printf 'export STAGEDOOR_URL=%q\n' "http://$EDGE_ADDR"
  printf 'export STAGEDOOR_INSTANCE_URLS=%q\n' "http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083"
  printf 'export STAGEDOOR_METRICS_URLS=%q\n' "http://127.0.0.1:9101,http://127.0.0.1:9102,http://127.0.0.1:9103"
  printf 'export REDIS_URL=%q\n' "$cluster_url"
  printf 'export DATABASE_URL=%q\n' "$pooled_url"
  printf 'export STAGEDOOR_DIRECT_DATABASE_URL=%q\n' "$direct_url"
  printf 'export PAYRAIL_URL=%q\n' "http://$PAYRAIL_LISTEN"
  printf 'export PAYRAIL_API_KEY=%q\n' "$PAYRAIL_API_KEY"
  printf 'export PROMETHEUS_URL=%q\n' "http://$PROMETHEUS_ADDR"
  printf 'export ALERTMANAGER_URL=%q\n' "http://$ALERTMANAGER_ADDR"
  printf 'export STAGEDOOR_ADMIN_TOKEN=%q\n' "$STAGEDOOR_ADMIN_TOKEN"
} >"$state/env"
trap - EXIT

masters=$(redis_cli "${REDIS_PORTS[0]}" cluster nodes | awk '$3 ~ /master/ {split($2, a, "@"); printf "%s ", a[1]}')
rel_state=${state#"$cluster_root"/}
cat >&2 <<EOF

cluster: up. Everything runs in the background; its pids and logs are in $rel_state/.
  the edge (HAProxy)   http://$EDGE_ADDR      round robin over the three; 429 above 50 req/s
                                              (bursts of 100) per address; X-Served-By names the instance
  the instances        http://127.0.0.1:8081  http://127.0.0.1:8082  http://127.0.0.1:8083
  their metrics        http://127.0.0.1:9101/metrics  …9102/metrics  …9103/metrics
  HAProxy's stats      http://$STATS_ADDR/stats   (its metrics: /metrics)
  Payrail              http://$PAYRAIL_LISTEN
  PgBouncer            $PGBOUNCER_ADDR         transaction pooling in front of PostgreSQL ($pg_host:$pg_port/$pg_db);
                                              DATABASE_URL of the instances and Payrail
  Redis Cluster        127.0.0.1:7001-7006; masters now: ${masters% }
  Prometheus           http://$PROMETHEUS_ADDR    alerts: http://$PROMETHEUS_ADDR/classic/alerts (Debian's UI)
                                              or curl -s $PROMETHEUS_ADDR/api/v1/alerts
  Alertmanager         http://$ALERTMANAGER_ADDR    what fires, grouped: amtool --alertmanager.url=http://$ALERTMANAGER_ADDR alert query
  logs                 $rel_state/logs/NAME.log  (redis-7001…, pgbouncer, payrail, stagedoor-1…3, haproxy, alertmanager, prometheus)
  URLs and token       . $rel_state/env          (the demo data: . $env_file)

  try:   curl -si http://$EDGE_ADDR/readyz | grep -i -e x-served-by -e redis
  break: bash scripts/cluster/kill-instance.sh 2        (SIGKILL to stagedoor-2)
         bash scripts/cluster/kill-redis-master.sh      (SIGKILL to the master of the demo event's waiting room)
         bash scripts/cluster/revive.sh                 (starts again what was killed)
  stop:  make cluster-down                               (scripts/cluster/down.sh)

EOF
