#!/usr/bin/env bash
# ensure-services.sh [DATABASE]
#
# Makes sure PostgreSQL answers on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, and that
# postgres://postgres:postgres@127.0.0.1:5432/postgres logs in. A service that does not
# answer is installed from Debian's packages if missing (postgresql, redis-server) and
# started. With a database name (the argument, or STAGEDOOR_CREATE_DB), that database is
# created if missing. Quiet and quick when all is already well; used by make test/bench/run.
#
# Installing and starting need root; run as another user, it prints what to run instead.
# STAGEDOOR_SERVICE_WAIT (seconds, default 60) bounds each wait for a service to answer.
set -euo pipefail

readonly PG_HOST=127.0.0.1 PG_PORT=5432 REDIS_HOST=127.0.0.1 REDIS_PORT=6379
readonly PG_URL="postgres://postgres:postgres@$PG_HOST:$PG_PORT/postgres?sslmode=disable"
readonly REDIS_LOG=/var/log/redis/ci.log
create_db=${1:-${STAGEDOOR_CREATE_DB:-}}
wait_seconds=${STAGEDOOR_SERVICE_WAIT:-60}

say() { printf 'ensure-services: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# need_root COMMAND...: unless root, print the commands to run by hand and exit 1.
need_root() {
  [[ $EUID -eq 0 ]] && return 0
  say "this step needs root; run:"
  printf '    sudo %s\n' "$@" >&2
  say "or run this whole script as root: sudo $0${create_db:+ $create_db}"
  exit 1
}

systemd_running() { [[ -d /run/systemd/system ]]; }

# --- probes -------------------------------------------------------------------

# The bash -c scripts are single-quoted on purpose: the inner bash expands them.
# shellcheck disable=SC2016
pg_answers() {
  if command -v pg_isready >/dev/null; then
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2
  else
    timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$PG_HOST" "$PG_PORT" 2>/dev/null
  fi
}

# shellcheck disable=SC2016
redis_answers() {
  local reply
  reply=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf "PING\r\n" >&3 && IFS= read -r line <&3 && printf %s "$line"' \
    "$REDIS_HOST" "$REDIS_PORT" 2>/dev/null) || return 1
  [[ $reply == +PONG* ]]
}

pg_login() { PGCONNECT_TIMEOUT=5 psql -X -w -q -tA -d "$PG_URL" "$@"; }

# newest PostgreSQL server version installed (15, 16, ...), or nothing
pg_server_version() {
  local dir
  for dir in /usr/lib/postgresql/*/bin/postgres; do
    if [[ -x $dir ]]; then basename "$(dirname "$(dirname "$dir")")"; fi
  done | sort -n | tail -n 1
}

# wait_for NAME PROBE LOGFILE: poll PROBE until it succeeds, at most wait_seconds.
wait_for() {
  local name=$1 probe=$2 log=$3 i
  for ((i = 0; i < wait_seconds * 2; i++)); do
    if "$probe"; then
      say "$name is up"
      return 0
    fi
    if ((i == 0)); then say "waiting for $name (up to ${wait_seconds}s)"; fi
    sleep 0.5
  done
  say "$name did not answer within ${wait_seconds}s; the end of $log:"
  tail -n 20 "$log" >&2 || true
  exit 1
}

# --- install ------------------------------------------------------------------

install_missing() {
  local pkgs=()
  if ! pg_answers && [[ -z $(pg_server_version) ]]; then pkgs+=(postgresql); fi
  # The tests start private redis-servers of their own, so the binary is needed even
  # when a Redis already answers.
  command -v redis-server >/dev/null || pkgs+=(redis-server)
  if ! command -v psql >/dev/null && [[ ${pkgs[*]} != *postgresql* ]]; then pkgs+=(postgresql-client); fi
  ((${#pkgs[@]})) || return 0

  need_root "apt-get update" "apt-get install -y --no-install-recommends ${pkgs[*]}"
  say "installing ${pkgs[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

# --- PostgreSQL ---------------------------------------------------------------

start_postgres() {
  local version cluster status log
  # the cluster configured for our port, if there is one
  read -r version cluster status log < <(pg_lsclusters -h | awk -v p="$PG_PORT" '$3 == p {print $1, $2, $4, $7; exit}') || true
  if [[ -z ${cluster:-} ]]; then
    version=$(pg_server_version)
    cluster=main
    [[ -n $version ]] || die "no PostgreSQL server is installed"
    if [[ -d /etc/postgresql/$version/$cluster ]]; then
      die "PostgreSQL cluster $version/$cluster exists but not on port $PG_PORT (see pg_lsclusters); set its port to $PG_PORT in /etc/postgresql/$version/$cluster/postgresql.conf"
    fi
    need_root "pg_createcluster --port $PG_PORT $version $cluster"
    say "creating PostgreSQL cluster $version/$cluster on port $PG_PORT"
    pg_createcluster --port "$PG_PORT" "$version" "$cluster" >/dev/null
    log=/var/log/postgresql/postgresql-$version-$cluster.log
  fi
  if [[ ${status:-} != online* ]]; then
    need_root "pg_ctlcluster --skip-systemctl-redirect $version $cluster start"
    say "starting PostgreSQL $version/$cluster"
    if ! { systemd_running && systemctl start "postgresql@$version-$cluster"; }; then
      pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
    fi
  fi
  wait_for "PostgreSQL on $PG_HOST:$PG_PORT" pg_answers "$log"
}

# A fresh Debian cluster asks TCP logins for a password (scram) and user postgres has none.
ensure_login() {
  pg_login -c 'select 1' >/dev/null 2>&1 && return 0
  need_root "runuser -u postgres -- psql -p $PG_PORT -c \"ALTER USER postgres PASSWORD 'postgres'\""
  say "setting the password of PostgreSQL user postgres to 'postgres' (through the local socket)"
  (cd / && runuser -u postgres -- psql -X -q -p "$PG_PORT" -c "ALTER USER postgres PASSWORD 'postgres'") ||
    die "could not set the password; is this PostgreSQL local?"
  local err
  err=$(pg_login -c 'select 1' 2>&1 >/dev/null) || die "still cannot log in with $PG_URL: $err"
}

ensure_database() {
  local db=$1
  [[ $db =~ ^[a-z_][a-z0-9_]*$ ]] || die "database name must be lowercase letters, digits and _: '$db'"
  db_exists() { [[ $(pg_login -c "select 1 from pg_database where datname = '$db'") == 1 ]]; }
  db_exists && return 0
  say "creating database $db"
  # A concurrent run may create it first; that is fine.
  pg_login -c "CREATE DATABASE $db" >/dev/null 2>&1 || db_exists || pg_login -c "CREATE DATABASE $db"
}

# --- Redis --------------------------------------------------------------------

start_redis() {
  local cmd=(redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT"
    --save "" --appendonly no --dir /var/lib/redis --logfile "$REDIS_LOG")
  need_root "mkdir -p /var/lib/redis /var/log/redis" "$(printf '%q ' "${cmd[@]}")"
  say "starting Redis"
  if ! { systemd_running && systemctl start redis-server; }; then
    mkdir -p /var/lib/redis /var/log/redis
    "${cmd[@]}"
  fi
  wait_for "Redis on $REDIS_HOST:$REDIS_PORT" redis_answers "$REDIS_LOG"
}

# --- main ---------------------------------------------------------------------

install_missing
pg_answers || start_postgres
ensure_login
if [[ -n $create_db ]]; then ensure_database "$create_db"; fi
redis_answers || start_redis
