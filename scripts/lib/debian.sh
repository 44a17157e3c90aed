# shellcheck shell=bash
# debian.sh: sourced by the ensure-*.sh scripts (each defines say), not run.

# install_debian PKG...: the missing Debian packages PKG... As root (CI, a fresh
# machine) they are installed with apt-get; otherwise it says what to install and
# exits 1. Without PKG it does nothing.
install_debian() {
  (($#)) || return 0
  if [[ $EUID -ne 0 ]]; then
    say "missing $*; run: sudo apt-get install -y --no-install-recommends $*"
    exit 1
  fi
  say "installing $* with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
