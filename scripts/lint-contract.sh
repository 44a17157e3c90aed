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
exec node scripts/lint-contract/run.mjs
