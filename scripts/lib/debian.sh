# shellcheck shell=bash
# debian.sh: sourced by the ensure-*.sh scripts, not run.

# say MESSAGE...: a line on stderr, named after the script that sources this.
say() { printf '%s: %s\n' "$(basename "$0" .sh)" "$*" >&2; }

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

# install_missing WHAT:PKG...: install_debian of each PKG whose WHAT is missing:
# a command on PATH, or, when WHAT is a path, that file.
install_missing() {
  local pkgs=() want what
  for want in "$@"; do
    what=${want%%:*}
    if [[ $what == /* ]]; then
      [[ -e $what ]] || pkgs+=("${want#*:}")
    else
      command -v "$what" >/dev/null || pkgs+=("${want#*:}")
    fi
  done
  install_debian "${pkgs[@]}"
}
