#!/usr/bin/env bash
# run-local.sh: "make run" without Docker.
#
# Makes sure PostgreSQL and Redis answer (scripts/ensure-services.sh), seeds the demo
# data (stagedoor seed, which prints it and writes it to .env.demo, the admin token
# included), then runs MailDev (the mail catcher: an SMTP server and a web inbox, from
# npm, pinned in package-lock.json), Payrail and Stagedoor as children of this script
# until one of them exits or the script is stopped: Ctrl-C, or SIGTERM to make or to
# this script. Either way every child is stopped (SIGTERM: requests in flight finish)
# and waited for, so none is left holding :8080, :8090, :1025 or :1080.
#
# Their logs are short lines of text (STAGEDOOR_LOG_FORMAT=text, unless given). The
# block of what to do next is printed once they start; on a terminal, Ctrl-L clears the
# screen and prints it again (the script reads the keys meanwhile, the terminal in
# non-canonical mode without echo until it ends).
# cmd/stagedoor's TestRunLocal runs this script on a pseudo-terminal (Ctrl-L, Ctrl-C)
# and without one (SIGTERM).
#
# Environment (make passes its command-line variables, such as make run REDIS_URL=...):
#   DATABASE_URL, REDIS_URL   default: the local services, database stagedoor (made to
#                             answer by scripts/ensure-services.sh unless both are given)
#   STAGEDOOR_ADDR            default 127.0.0.1:8080 (this machine only: the demo
#                             password is public)
#   PAYRAIL_ADDR              default 127.0.0.1:8090; PAYRAIL_URL follows it
#   STAGEDOOR_ADMIN_TOKEN     default: the one in .env.demo, else a new random one (kept
#                             in .env.demo by seed, so it stays the same run after run)
#   PAYRAIL_API_KEY           default: a new random one each run (Payrail asks for it,
#                             Stagedoor sends it; both are this script's children)
#   STAGEDOOR_SMTP_URL        default: MailDev, started here, on smtp://127.0.0.1:MAILDEV_SMTP_PORT
#                             (given: that server, and no MailDev)
#   MAILDEV_SMTP_PORT         default 1025; MAILDEV_WEB_PORT (its inbox) default 1080
#   STAGEDOOR_PUBLIC_URL      default http://STAGEDOOR_ADDR (the e-mails' links)
#   STAGEDOOR_DEMO_ENV_FILE   default .env.demo
#   STAGEDOOR_BIN             default bin/stagedoor (make run builds it)
#   STAGEDOOR_LOG_FORMAT      default text (json for machines)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin=${STAGEDOOR_BIN:-bin/stagedoor}
env_file=${STAGEDOOR_DEMO_ENV_FILE:-.env.demo}
say() { printf 'run-local: %s\n' "$*" >&2; }

# --- configuration ------------------------------------------------------------

given_db=${DATABASE_URL:-} given_redis=${REDIS_URL:-}
if [[ -z $given_db || -z $given_redis ]]; then
  services=$(bash scripts/ensure-services.sh --run-env stagedoor)
  eval "$services" # DATABASE_URL and REDIS_URL of the local services
fi
export DATABASE_URL=${given_db:-$DATABASE_URL} REDIS_URL=${given_redis:-$REDIS_URL}
export STAGEDOOR_LOG_FORMAT=${STAGEDOOR_LOG_FORMAT:-text}
export STAGEDOOR_ADDR=${STAGEDOOR_ADDR:-127.0.0.1:8080}
export PAYRAIL_ADDR=${PAYRAIL_ADDR:-127.0.0.1:8090}
payrail_host=${PAYRAIL_ADDR%:*}
case $payrail_host in '' | 0.0.0.0 | '[::]') payrail_host=127.0.0.1 ;; esac
export PAYRAIL_URL=${PAYRAIL_URL:-http://$payrail_host:${PAYRAIL_ADDR##*:}}
export PAYRAIL_DATABASE_URL=${PAYRAIL_DATABASE_URL:-$DATABASE_URL}
# Payrail's API key: as given, else 192 random bits for this run.
export PAYRAIL_API_KEY=${PAYRAIL_API_KEY:-prk_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}
export STAGEDOOR_DEMO_ENV_FILE=$env_file
# E-mail: to MailDev, unless a server is given.
maildev_smtp=${MAILDEV_SMTP_PORT:-1025} maildev_web=${MAILDEV_WEB_PORT:-1080}
run_maildev=
if [[ -z ${STAGEDOOR_SMTP_URL:-} ]]; then
  run_maildev=1
  export STAGEDOOR_SMTP_URL=smtp://127.0.0.1:$maildev_smtp
fi
public_addr=$STAGEDOOR_ADDR
[[ $public_addr == :* ]] && public_addr=127.0.0.1$public_addr
export STAGEDOOR_PUBLIC_URL=${STAGEDOOR_PUBLIC_URL:-http://$public_addr}

# The admin token: as given, else the one seed wrote to the demo file last time
# (the line STAGEDOOR_ADMIN_TOKEN='...'), else 192 random bits.
if [[ -z ${STAGEDOOR_ADMIN_TOKEN:-} && -f $env_file ]]; then
  STAGEDOOR_ADMIN_TOKEN=$(sed -n "s/^STAGEDOOR_ADMIN_TOKEN='\([A-Za-z0-9_-]*\)'\$/\1/p" "$env_file" | tail -n 1)
fi
if [[ -z ${STAGEDOOR_ADMIN_TOKEN:-} ]]; then
  STAGEDOOR_ADMIN_TOKEN=sdadmin_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  say "made a new admin token (kept in $env_file from now on)"
fi
export STAGEDOOR_ADMIN_TOKEN

# --- the demo data --------------------------------------------------------------

"$bin" seed

# --- MailDev, Payrail and Stagedoor, stopped together ------------------------------

pids=() names=()
tty_state= # the terminal's settings while keys are read, restored at the end
# shellcheck disable=SC2317 # run by the traps below
stop_children() {
  trap - INT TERM EXIT
  [[ -n $tty_state ]] && stty "$tty_state" 2>/dev/null
  # Last started first: Stagedoor (its checkouts in flight may still need Payrail),
  # then Payrail, then MailDev.
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  # Once more, now that no child is left to change it.
  [[ -n $tty_state ]] && stty "$tty_state" 2>/dev/null
  return 0
}
# A signal ends "wait" or "read" at once and runs its trap: children stopped, then exit.
trap 'say "stopping Stagedoor, Payrail and MailDev"; stop_children; exit 130' INT
trap 'say "stopping Stagedoor, Payrail and MailDev"; stop_children; exit 143' TERM
trap stop_children EXIT

mail_line="run-local: e-mail:       sent to $(printf %s "$STAGEDOOR_SMTP_URL" | sed 's#//\([^:/@]*\):[^@]*@#//\1:xxxxx@#')"
if [[ -n $run_maildev ]]; then
  # make build ran scripts/ensure-web.sh, which installed it (npm ci).
  node_modules/.bin/maildev --ip 127.0.0.1 --smtp "$maildev_smtp" --web "$maildev_web" --silent &
  pids+=("$!") names+=(MailDev)
  mail_line="run-local: the e-mail:   http://127.0.0.1:$maildev_web/   MailDev's inbox: every message Stagedoor sends (a checkout's tickets, ...)"
fi
"$bin" payrail &
pids+=("$!") names+=(Payrail)
"$bin" serve &
pids+=("$!") names+=(Stagedoor)

# make demo talks to 127.0.0.1:8080 unless told otherwise.
demo_url=""
demo_addr=$STAGEDOOR_ADDR
[[ $demo_addr == :* ]] && demo_addr=127.0.0.1$demo_addr
[[ $demo_addr == 127.0.0.1:8080 ]] || demo_url=" STAGEDOOR_URL=http://$demo_addr"
show=${env_file}
[[ $show == */* ]] || show=./$show
on_terminal=false
[[ -t 0 ]] && on_terminal=true
next_steps() {
  local again=""
  $on_terminal && again="; Ctrl-L shows this again"
  cat >&2 <<EOF

run-local: Stagedoor on http://$STAGEDOOR_ADDR, Payrail on http://$PAYRAIL_ADDR (Ctrl-C stops them$again)
run-local: in a browser: http://$STAGEDOOR_ADDR/       log in as demo-buyer@example.com or
run-local:               demo-organizer@example.com, password stagedoor-demo
run-local: the door:     http://$STAGEDOOR_ADDR/door   with DEMO_SCANNER_KEY of $show
$mail_line
run-local: admin token: $STAGEDOOR_ADMIN_TOKEN
run-local: in another shell: . $show     (the demo data and STAGEDOOR_ADMIN_TOKEN)
run-local:                   make demo$demo_url          (the whole flow, step by step)

EOF
}
next_steps

# Until any child exits; polled five times a second, so that a signal's trap runs at once.
# On a terminal, keys are read as they come: the terminal is put in non-canonical mode
# without echo for the whole wait (Ctrl-C still signals), a key is read only once one is
# waiting (read -t 0 looks without taking), so none is ever lost to a read's timeout;
# Ctrl-L (form feed) clears the screen and prints the block again; at the end of input,
# the plain wait. The terminal's settings are restored when the script ends.
all_running() {
  local pid
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || return 1; done
}
if $on_terminal; then
  tty_state=$(stty -g 2>/dev/null || true)
  if [[ -z $tty_state ]] || ! stty -icanon -echo min 1 time 0 2>/dev/null; then
    on_terminal=false
  fi
fi
while all_running; do
  if $on_terminal && read -t 0; then
    key='' status=0
    # One byte by dd, not bash's read -n/-s: those save the terminal's settings
    # and put them back themselves, which could undo the restore of a Ctrl-C's
    # trap (CI once saw the script leave the terminal without echo).
    key=$(dd bs=1 count=1 2>/dev/null; printf x) || status=$? # x: a newline survives
    key=${key%x}
    [[ -n $key ]] || status=1 # no byte: the end of input
    if ((status == 0)) && [[ $key == $'\f' ]]; then
      printf '\033[H\033[2J' >&2 # what Ctrl-L does in a shell: the screen cleared
      next_steps
    elif ((status != 0 && status <= 128)); then
      on_terminal=false # the end of input (a closed terminal): no more keys
    fi
    continue
  fi
  sleep 0.2 &
  wait "$!" || true
done
for i in "${!pids[@]}"; do
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    status=0
    wait "${pids[$i]}" || status=$?
    say "${names[$i]} exited (status $status); the others are stopped too"
  fi
done
exit 1 # the EXIT trap stops the others
