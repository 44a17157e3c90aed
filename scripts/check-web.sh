#!/usr/bin/env bash
# check-web.sh: the web pages' own JavaScript (web/static/js), checked without a
# build step.
#
#   check-web.sh types  TypeScript's type check: tsc --noEmit over the modules'
#                       JSDoc types (tsconfig.json: checkJs, strict; the API's
#                       shapes in web/static/js/types.js). make lint runs it.
#   check-web.sh tests  Node's test runner (node --test) on the pure modules'
#                       unit tests, web/test/*.test.js, in en-US and UTC so that
#                       formatted dates and money read the same everywhere.
#                       make test runs it.
#
# TypeScript is an npm dev dependency pinned in package-lock.json, installed with
# the rest by scripts/ensure-web.sh (npm ci); the tests need Node alone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/ensure-web.sh
case "${1:-}" in
  types)
    echo "tsc --noEmit -p tsconfig.json (web/static/js)"
    exec node_modules/.bin/tsc --noEmit -p tsconfig.json
    ;;
  tests)
    echo "node --test web/test/*.test.js"
    LC_ALL=en_US.UTF-8 LANG=en_US.UTF-8 TZ=UTC exec node --test web/test/*.test.js
    ;;
  *)
    echo "usage: $0 types|tests" >&2
    exit 2
    ;;
esac
