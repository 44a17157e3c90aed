#!/usr/bin/env bash
# ensure-mail.sh: the tests' mail server besides Go.
#
#   aiosmtpd  Debian's python3-aiosmtpd, a real SMTP server, run by Debian's own
#             python3 (/usr/bin/python3; a python3 of pyenv or a venv first on PATH
#             does not have it): internal/testenv's StartSMTP runs it with
#             internal/testenv/smtpd.py, delivering into a maildir, for the tests of
#             internal/mail and of the checkout's confirmation
#
# As root, missing Debian packages are installed with apt-get (CI, a fresh machine);
# otherwise the script says what to install. make test runs it. (make run's mail
# catcher with a web inbox is MailDev, from npm: scripts/ensure-web.sh.)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian.sh"

if ! /usr/bin/python3 -c 'import aiosmtpd' 2>/dev/null; then
  install_debian python3-aiosmtpd
fi
