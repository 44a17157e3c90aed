#!/usr/bin/env bash
# lint-contract.sh: docs/openapi.yaml passes Spectral (spectral:oas and the OWASP
# API Security ruleset, .spectral.mjs) and Redocly (recommended, redocly.yaml)
# with no error and no warning but those the document justifies with an x-lint
# note (scripts/lint-contract/notes.mjs). Both tools are npm dev dependencies,
# pinned in package-lock.json and installed by scripts/ensure-web.sh (npm ci);
# they run offline. make lint (and so make test) runs this script.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/ensure-web.sh
# Redocly's CLI needs Node 20.19 or later (Debian 12's own nodejs is 18).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "lint-contract: Node $(node --version) is too old for @redocly/cli; install Node 20.19 or later" >&2
  exit 1
fi
exec node scripts/lint-contract/run.mjs
