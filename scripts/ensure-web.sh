#!/usr/bin/env bash
# ensure-web.sh: what the binary's web pages take from npm, in place before a build.
#
#   Node and npm  Debian's nodejs and npm, only to install the packages below
#   npm packages  from the npm registry, pinned in package-lock.json (npm ci): zxing-wasm,
#                 the door page's QR decoder, copied into web/vendor (scripts/vendor-web.sh)
#                 for the binary to embed; axe-core, for the browser tests; Lighthouse,
#                 for the pages' scores (scripts/lighthouse.sh); and the contract's
#                 linters, Spectral and Redocly (scripts/lint-contract.sh)
#
# As root, missing Debian packages are installed with apt-get (CI, a fresh machine);
# otherwise the script says what to install. npm ci runs when node_modules does not
# match package-lock.json. make build, make run and make test run this script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

install_missing node:nodejs npm:npm

# npm ci when nothing is installed yet, or package-lock.json changed since.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  say "npm ci (package-lock.json)"
  # SCARF_ANALYTICS=false: a dependency of Spectral would report its install over the network.
  SCARF_ANALYTICS=false npm ci --no-audit --no-fund --loglevel=error >&2
fi
bash scripts/vendor-web.sh
