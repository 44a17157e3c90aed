#!/usr/bin/env bash
# ensure-browser.sh: what the browser tests (web/e2e) need besides Go.
#
#   Chromium      Debian's chromium, driven headless by chromedp
#   fonts         Debian's fonts-dejavu-core, so that pages render text the same everywhere
#   Node and npm  Debian's nodejs and npm, only to install the npm packages below
#   axe-core      from the npm registry, pinned in package-lock.json (npm ci), the
#                 accessibility check the tests inject into each page
#
# As root, missing Debian packages are installed with apt-get (CI, a fresh machine);
# otherwise the script says what to install. The npm packages are installed when
# node_modules does not match package-lock.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf 'ensure-browser: %s\n' "$*" >&2; }

pkgs=()
command -v chromium >/dev/null || pkgs+=(chromium)
[[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || pkgs+=(fonts-dejavu-core)
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
if ((${#pkgs[@]})); then
  if [[ $EUID -ne 0 ]]; then
    say "missing ${pkgs[*]}; run: sudo apt-get install -y --no-install-recommends ${pkgs[*]}"
    exit 1
  fi
  say "installing ${pkgs[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

# npm ci when nothing is installed yet, or package-lock.json changed since.
if [[ ! -f node_modules/axe-core/axe.min.js || package-lock.json -nt node_modules/.package-lock.json ]]; then
  say "npm ci (package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
