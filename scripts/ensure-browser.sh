#!/usr/bin/env bash
# ensure-browser.sh: what the browser tests (web/e2e) need besides Go.
#
#   Chromium  Debian's chromium, driven headless by chromedp
#   fonts     Debian's fonts-dejavu-core, so that pages render text the same everywhere
#   ffmpeg    Debian's ffmpeg, to make the fake camera's video of a ticket's QR code
#   npm       what scripts/ensure-web.sh installs (axe-core, the door's decoder)
#
# As root, missing Debian packages are installed with apt-get (CI, a fresh machine);
# otherwise the script says what to install. make test runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

install_missing chromium:chromium /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core ffmpeg:ffmpeg
bash scripts/ensure-web.sh
