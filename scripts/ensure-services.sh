#!/usr/bin/env bash
# ensure-services.sh [--test-env | --run-env] [DATABASE]
#
# Makes sure PostgreSQL answers on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, and that
# this script can log in to PostgreSQL (see "Logging in" below). A service that does not
# answer is installed from Debian's packages if missing (postgresql, redis-server) and
# started. With a database name (the argument, or STAGEDOOR_CREATE_DB), that database is
# created if missing. Quiet and quick when all is already well; used by make test/bench/run.
#
#   (no option)  just that; prints nothing on stdout.
#   --run-env    that, for make run: prints DATABASE_URL=... and REDIS_URL=... (shell
#                assignments for eval) of the local services, DATABASE (default stagedoor)
#                created.
#   --test-env   for make test and make bench: prints "export STAGEDOOR_TEST_..." lines
#                (for eval) when the tests are to use the local services, nothing when
#                they are not. The rule, first match wins:
#                  1. STAGEDOOR_TEST_DATABASE_URL and STAGEDOOR_TEST_REDIS_URL both set:
#                     the tests use those; nothing is done or printed.
#                  2. STAGEDOOR_TEST_SERVICES=local: the local services (3.), even when
#                     a Docker engine answers.
#                  3. a Docker engine answers ("docker info"), or STAGEDOOR_TEST_SERVICES=
#                     docker: it prints only an export of GOFLAGS with -tags=testcontainers,
#                     and internal/testenv starts PostgreSQL and Redis containers
#                     (testcontainers-go, linked into the tests only with that tag).
#                  4. otherwise (no Docker: CI, this kind of machine): the local services
#                     are made to answer (installed, started) and their URLs exported.
#
# Logging in: the URLs log in as postgres:postgres when that works already (trust
# authentication, or that password set), as before; otherwise as a role of this script's
# own, stagedoor (password stagedoor, LOGIN CREATEDB: enough to create and drop the test
# databases), created through the local socket when missing. The password of an existing
# role is never changed.
#
# Installing, starting and creating the role need root; run as another user, it prints
# what to run instead. STAGEDOOR_SERVICE_WAIT (seconds, default 60) bounds each wait for
# a service to answer; STAGEDOOR_PG_PORT (default 5432) is PostgreSQL's port.
set -euo pipefail

readonly PG_HOST=127.0.0.1 PG_PORT=${STAGEDOOR_PG_PORT:-5432} REDIS_HOST=127.0.0.1 REDIS_PORT=6379
readonly OWN_ROLE=stagedoor OWN_PASSWORD=stagedoor
readonly REDIS_LOG=/var/log/redis/ci.log
mode=
case ${1:-} in
  --test-env | --run-env) mode=${1#--}; shift ;;
  -*) printf 'usage: %s [--test-env | --run-env] [DATABASE]\n' "$0" >&2; exit 2 ;;
esac
create_db=${1:-${STAGEDOOR_CREATE_DB:-}}
if [[ $mode == run-env ]]; then create_db=${create_db:-stagedoor}; fi
wait_seconds=${STAGEDOOR_SERVICE_WAIT:-60}
# The role the URLs log in as (set by choose_login).
pg_user= pg_password=

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

# pg_url [DATABASE]: the URL of DATABASE (default postgres) as the chosen role.
pg_url() {
  printf 'postgres://%s:%s@%s:%s/%s?sslmode=disable' "$pg_user" "$pg_password" "$PG_HOST" "$PG_PORT" "${1:-postgres}"
}

pg_login() { PGCONNECT_TIMEOUT=5 psql -X -w -q -tA -d "$(pg_url)" "$@"; }

# can_login USER PASSWORD: that role logs in over TCP (quietly).
can_login() {
  PGCONNECT_TIMEOUT=5 psql -X -w -q -tA -c 'select 1' \
    -d "postgres://$1:$2@$PG_HOST:$PG_PORT/postgres?sslmode=disable" >/dev/null 2>&1
}

docker_answers() { command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; }

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
  # The test that runs docs/walkthrough.md as written needs curl and jq.
  command -v curl >/dev/null || pkgs+=(curl)
  command -v jq >/dev/null || pkgs+=(jq)
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

# choose_login sets pg_user and pg_password: postgres:postgres when it logs in already
# (trust, or that password), else this script's own role, made when missing. No
# existing role's password is changed.
choose_login() {
  if can_login postgres postgres; then
    pg_user=postgres pg_password=postgres
    return 0
  fi
  pg_user=$OWN_ROLE pg_password=$OWN_PASSWORD
  can_login "$OWN_ROLE" "$OWN_PASSWORD" && return 0

  local as_postgres=(runuser -u postgres -- psql -X -q -tA -p "$PG_PORT")
  need_root "runuser -u postgres -- psql -p $PG_PORT -c \"CREATE ROLE $OWN_ROLE LOGIN CREATEDB PASSWORD '$OWN_PASSWORD'\""
  local exists
  exists=$(cd / && "${as_postgres[@]}" -c "select 1 from pg_roles where rolname = '$OWN_ROLE'") ||
    die "could not reach PostgreSQL through its local socket as user postgres; is this PostgreSQL local?"
  if [[ $exists == 1 ]]; then
    die "PostgreSQL role $OWN_ROLE exists but does not log in over TCP with password '$OWN_PASSWORD'," \
      "and this script changes no existing role's password. Set STAGEDOOR_TEST_DATABASE_URL" \
      "(make test) or DATABASE_URL (make run) to a URL that logs in, or drop that role."
  fi
  say "creating PostgreSQL role $OWN_ROLE (password '$OWN_PASSWORD', LOGIN CREATEDB) through the local socket"
  (cd / && "${as_postgres[@]}" -c "CREATE ROLE $OWN_ROLE LOGIN CREATEDB PASSWORD '$OWN_PASSWORD'") >/dev/null ||
    die "could not create role $OWN_ROLE"
  local err
  err=$(pg_login -c 'select 1' 2>&1 >/dev/null) ||
    die "role $OWN_ROLE was made but cannot log in with $(pg_url): $err (see pg_hba.conf)"
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

# ensure_local: the local services answer, this script logs in, the database exists.
ensure_local() {
  install_missing
  pg_answers || start_postgres
  choose_login
  if [[ -n $create_db ]]; then ensure_database "$create_db"; fi
  redis_answers || start_redis
}

# test_env applies the rule of --test-env (see the top of this file).
test_env() {
  if [[ -n ${STAGEDOOR_TEST_DATABASE_URL:-} && -n ${STAGEDOOR_TEST_REDIS_URL:-} ]]; then
    return 0
  fi
  local services=${STAGEDOOR_TEST_SERVICES:-}
  case $services in
    '' | local | docker) ;;
    *) die "STAGEDOOR_TEST_SERVICES must be local or docker, not '$services'" ;;
  esac
  if [[ $services == docker ]] || { [[ -z $services ]] && docker_answers; }; then
    say "the tests start PostgreSQL and Redis in Docker (testcontainers); STAGEDOOR_TEST_SERVICES=local uses local ones"
    command -v redis-server >/dev/null ||
      say "note: the tests that stop Redis start a redis-server of their own: put one on PATH (Debian: redis-server)"
    printf 'export GOFLAGS=%q\n' "${GOFLAGS:+$GOFLAGS }-tags=testcontainers"
    return 0
  fi
  ensure_local
  if [[ -z ${STAGEDOOR_TEST_DATABASE_URL:-} ]]; then
    printf 'export STAGEDOOR_TEST_DATABASE_URL=%q\n' "$(pg_url postgres)"
  fi
  if [[ -z ${STAGEDOOR_TEST_REDIS_URL:-} ]]; then
    printf 'export STAGEDOOR_TEST_REDIS_URL=%q\n' "redis://$REDIS_HOST:$REDIS_PORT/0"
  fi
}

case $mode in
  test-env) test_env ;;
  run-env)
    ensure_local
    printf 'DATABASE_URL=%q\nREDIS_URL=%q\n' "$(pg_url "$create_db")" "redis://$REDIS_HOST:$REDIS_PORT/0"
    ;;
  *) ensure_local ;;
esac
