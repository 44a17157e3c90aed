#!/usr/bin/env bash
# vendor-web.sh: copy the browser code the pages load from node_modules (npm ci,
# pinned in package-lock.json) into web/vendor, which the binary embeds. Run by
# make run, make build, make test and the Dockerfile; nothing it writes is committed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
src=node_modules/zxing-wasm
if [[ ! -f $src/dist/iife/reader/index.js ]]; then
  echo "vendor-web: $src is missing: run npm ci (make does)" >&2
  exit 1
fi
mkdir -p web/vendor/zxing-wasm
cp "$src/dist/iife/reader/index.js" web/vendor/zxing-wasm/reader.js
cp "$src/dist/reader/zxing_reader.wasm" web/vendor/zxing-wasm/zxing_reader.wasm
cp "$src/LICENSE" web/vendor/zxing-wasm/LICENSE
