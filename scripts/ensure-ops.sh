#!/usr/bin/env bash
# ensure-ops.sh: what the operations tests (go test ./deploy) and make cluster need
# besides Go:
#
#   promtool  Debian's prometheus: checks deploy/prometheus/alerts.yml (check rules,
#             test rules) and the Prometheus configuration the cluster renders
#   amtool    Debian's prometheus-alertmanager: checks deploy/alertmanager/alertmanager.yml,
#             and its prometheus-alertmanager receives a test's alert
#   haproxy   Debian's haproxy: checks the HAProxy configuration the cluster renders
#             (haproxy -c)
#   pgbouncer Debian's pgbouncer: the tests of Stagedoor behind a transaction pooler
#             (internal/httpapi's TestThroughPgBouncer) start one of their own, and make
#             cluster puts one in front of PostgreSQL
#   Debian's shellcheck and docker-compose check the scripts and docker-compose.yml
#             (docker-compose config); without them those two tests of deploy/
#             skip, so this installs them too
#
# The tests in deploy/ fail, saying so, when promtool, amtool or haproxy is missing; the
# PgBouncer test, when pgbouncer is. As root, missing
# Debian packages are installed with apt-get (CI, a fresh machine); otherwise the
# script says what to install. make test runs it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

pkgs=()
command -v promtool >/dev/null || pkgs+=(prometheus)
command -v amtool >/dev/null || pkgs+=(prometheus-alertmanager)
command -v haproxy >/dev/null || pkgs+=(haproxy)
# Debian installs it in /usr/sbin, which a user's PATH may lack.
command -v pgbouncer >/dev/null || [[ -x /usr/sbin/pgbouncer ]] || pkgs+=(pgbouncer)
command -v shellcheck >/dev/null || pkgs+=(shellcheck)
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || pkgs+=(docker-compose)
install_debian "${pkgs[@]}"
