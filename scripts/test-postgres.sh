#!/usr/bin/env bash
# test-postgres.sh start | stop DIR
#
# A PostgreSQL cluster of the tests' own, from the server binaries Debian's
# postgresql package installs (/usr/lib/postgresql/N/bin), for make test
# (scripts/go-test.sh starts it and stops it when the tests end):
#
#   start  initialises a cluster in a new temporary folder and starts it on a free
#          loopback port; prints two lines for eval: the folder (test_pg_dir=...)
#          and export STAGEDOOR_TEST_DATABASE_URL=... Prints nothing, and exits 0,
#          when no server binaries are installed (the tests then use the URL given).
#   stop   stops that cluster (its postmaster, by the pid in its own folder) and
#          removes the folder.
#
# Why not the machine's PostgreSQL: every test creates and drops a database of its
# own, and the packages and the browser tests run side by side; the machine's
# server allows 100 connections and makes each commit and each CREATE/DROP
# DATABASE durable on disk. This one allows 500 connections and skips fsync
# (fsync, synchronous_commit and full_page_writes off): a test database that a
# crash of the machine would lose is of no worth anyway. It is still PostgreSQL,
# the same version as the machine's; no test sees a difference but speed.
#
# As root (CI), initdb and the server run as the postgres user, as they must.
set -euo pipefail

say() { printf 'test-postgres: %s\n' "$*" >&2; }

bindir() {
  local dir newest=
  for dir in /usr/lib/postgresql/*/bin; do
    [[ -x $dir/initdb && -x $dir/pg_ctl ]] && newest=$dir
  done
  printf '%s' "$newest"
}

# as_owner CMD...: run CMD as the cluster's owner (postgres when we are root).
as_owner() {
  if [[ $EUID -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local bin dir port
  bin=$(bindir)
  if [[ -z $bin ]]; then
    say "no PostgreSQL server binaries under /usr/lib/postgresql; the tests use the URL given"
    return 0
  fi
  dir=$(mktemp -d /tmp/stagedoor-test-pg.XXXXXX)
  chmod 755 "$dir"
  if [[ $EUID -eq 0 ]]; then chown postgres: "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync \
    >"$dir/initdb.log" 2>&1 || {
    say "initdb failed:"
    cat "$dir/initdb.log" >&2
    exit 1
  }
  port=$(free_port)
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o "$(printf '%s ' \
    -c listen_addresses=127.0.0.1 -c port="$port" -c unix_socket_directories="$dir" \
    -c max_connections=500 -c shared_buffers=256MB \
    -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c TimeZone=Etc/UTC)" >/dev/null || {
    say "the server did not start; the end of its log:"
    tail -n 20 "$dir/server.log" >&2
    exit 1
  }
  say "PostgreSQL $(basename "$(dirname "$bin")") for the tests on 127.0.0.1:$port ($dir)"
  printf 'test_pg_dir=%q\n' "$dir"
  printf 'export STAGEDOOR_TEST_DATABASE_URL=%q\n' "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
}

stop() {
  local dir=$1 pid
  [[ -f $dir/data/postmaster.pid ]] || { rm -rf "$dir"; return 0; }
  pid=$(head -n 1 "$dir/data/postmaster.pid")
  # SIGQUIT: immediate shutdown; nothing in it needs to be kept.
  kill -QUIT "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  rm -rf "$dir"
}

case ${1:-} in
  start) start ;;
  stop) [[ -n ${2:-} ]] || { say "usage: $0 stop DIR"; exit 2; }; stop "$2" ;;
  *) printf 'usage: %s start | stop DIR\n' "$0" >&2; exit 2 ;;
esac
