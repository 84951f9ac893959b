#!/usr/bin/env bash
# Throw-away PostgreSQL servers on loopback, for the tests and for trying the PostgreSQL inventory.
#
#   scripts/postgres.sh install            server binaries from Debian (apt) if missing; idempotent
#   scripts/postgres.sh start DIR [PORT]   init (first time) and start a cluster for DIR; prints its URL
#   scripts/postgres.sh stop DIR           stop it and delete its data
#   scripts/postgres.sh status DIR         print the URL if it runs, else exit 1
#   scripts/postgres.sh restart DIR [MODE] [DOWN]  stop (pg_ctl -m MODE: fast, or immediate = a
#                                          crash), stay down DOWN seconds (default 0), start
#                                          again on the same port, keeping the data
#
# DIR holds the state files (url, port, datadir). The server listens on 127.0.0.1 only (no Unix socket), with
# password (scram) authentication for user fabric / password fabric, database fabric; PORT defaults
# to a free port. PostgreSQL refuses to run as root: as root the server runs as the Debian `postgres`
# user (created if missing) and its data lives in a private directory under ${TMPDIR:-/tmp}, because
# DIR may sit below directories only root can enter (pytest's tmp_path does). `start` prints exactly
# one line on stdout, the URL; progress goes to stderr.
# PG_BINDIR=/path/to/postgresql/bin overrides where initdb/pg_ctl/postgres are looked up.
set -euo pipefail

PG_USER=fabric
# Not a word that occurs in our data: Pulumi redacts the backend URL's password wherever it
# appears in its JSON output ("fabric" turned every `fabric` key of a recorded spec into
# "[credential]").
PG_PASSWORD=fs-local-pg-pw
PG_DB=fabric

say() { printf 'postgres: %s\n' "$*" >&2; }
die() {
  local code=$1
  shift
  printf 'postgres: error: %s\n' "$*" >&2
  exit "$code"
}

# The newest installed server's bin directory, or "" if none.
pg_bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then
    if [ -x "$PG_BINDIR/postgres" ]; then printf '%s\n' "$PG_BINDIR"; fi
    return 0
  fi
  local d best=""
  for d in /usr/lib/postgresql/*/bin; do
    if [ ! -x "$d/postgres" ] || [ ! -x "$d/initdb" ] || [ ! -x "$d/pg_ctl" ]; then continue; fi
    best=$(printf '%s\n%s\n' "$best" "$d" | sed '/^$/d' | sort -V | tail -n 1)
  done
  printf '%s\n' "$best"
}

need_bindir() {
  BIN=$(pg_bindir)
  [ -n "$BIN" ] || die 2 "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/postgres):" \
    "run 'make postgres' as root (apt-get install postgresql), or set PG_BINDIR"
}

cmd_install() {
  local bin
  bin=$(pg_bindir)
  if [ -n "$bin" ]; then
    say "server binaries present: $bin ($("$bin/postgres" --version))"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    die 2 "PostgreSQL server binaries not found; install them as root: sudo apt-get install postgresql" \
      "(Debian/Ubuntu) or set PG_BINDIR to a directory holding postgres, initdb and pg_ctl"
  fi
  command -v apt-get >/dev/null 2>&1 ||
    die 2 "PostgreSQL server binaries not found and no apt-get: install PostgreSQL and set PG_BINDIR"

  say "installing PostgreSQL server binaries with apt-get (no cluster, no service)"
  # Debian would create and start a 'main' cluster: we only want the binaries.
  mkdir -p /etc/postgresql-common
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    printf '# Written by fabric-stack scripts/postgres.sh: binaries only, no main cluster.\n' \
      >/etc/postgresql-common/createcluster.conf
    printf 'create_main_cluster = false\n' >>/etc/postgresql-common/createcluster.conf
  fi
  local policy=/usr/sbin/policy-rc.d added_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" # 101: invoke-rc.d must not start services
    chmod 0755 "$policy"
    added_policy=1
  fi
  local log rc=0
  log=$(mktemp)
  {
    apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql
  } >"$log" 2>&1 || rc=$?
  [ -z "$added_policy" ] || rm -f "$policy"
  if [ "$rc" != 0 ]; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    die 1 "apt-get install postgresql failed (exit $rc)"
  fi
  rm -f "$log"
  bin=$(pg_bindir)
  [ -n "$bin" ] || die 1 "apt-get installed postgresql but no /usr/lib/postgresql/*/bin/postgres appeared"
  say "installed: $bin ($("$bin/postgres" --version))"
}

# Run a server command as the account that owns the cluster.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$OWNER" -- "$@"
  else
    "$@"
  fi
}

setup_owner() {
  if [ "$(id -u)" != 0 ]; then
    OWNER=$(id -un)
    return 0
  fi
  OWNER=postgres
  if ! id "$OWNER" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$OWNER"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

state_dir() {
  [ -n "${1:-}" ] || die 64 "usage: $0 start|stop|status DIR [PORT]"
  mkdir -p "$1"
  (cd "$1" && pwd)
}

running() { # DATA
  [ -f "$1/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$1" status >/dev/null 2>&1
}

cmd_start() {
  local dir port data url
  dir=$(state_dir "${1:-}")
  port=${2:-}
  need_bindir
  setup_owner

  data=""
  [ -f "$dir/datadir" ] && data=$(cat "$dir/datadir")
  if [ -n "$data" ] && [ -f "$data/PG_VERSION" ] && running "$data"; then
    if [ -z "$port" ] || [ "$port" = "$(cat "$dir/port")" ]; then
      say "already running ($data)"
      cat "$dir/url"
      return 0
    fi
    say "running on port $(cat "$dir/port"), restarting on $port"
    as_owner "$BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
  fi
  if [ -z "$port" ]; then
    if [ -f "$dir/port" ]; then port=$(cat "$dir/port"); else port=$(free_port); fi
  fi
  case $port in '' | *[!0-9]*) die 64 "PORT must be a number, got '$port'" ;; esac

  if [ -z "$data" ] || [ ! -f "$data/PG_VERSION" ]; then
    if [ "$(id -u)" = 0 ]; then
      data=$(mktemp -d "${TMPDIR:-/tmp}/fabric-stack-pg.XXXXXX")
      chown "$OWNER" "$data"
    else
      data=$dir/data
      rm -rf "$data"
      mkdir -p "$data"
    fi
    chmod 0700 "$data"
    local pwfile
    pwfile=$(mktemp)
    printf '%s\n' "$PG_PASSWORD" >"$pwfile"
    chmod 0644 "$pwfile" # readable by the owner account for initdb, removed right after
    say "initdb $data ($("$BIN/postgres" --version))"
    if ! as_owner "$BIN/initdb" -D "$data" -U "$PG_USER" --pwfile="$pwfile" --auth-host=scram-sha-256 \
      --auth-local=trust --encoding=UTF8 --locale=C.UTF-8 --no-instructions >"$dir/initdb.log" 2>&1; then
      rm -f "$pwfile"
      cat "$dir/initdb.log" >&2
      die 1 "initdb failed"
    fi
    rm -f "$pwfile"
    printf '%s\n' "$data" >"$dir/datadir"
  fi

  say "starting on 127.0.0.1:$port"
  if ! as_owner "$BIN/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=''" start >/dev/null; then
    tail -n 20 "$data/server.log" >&2 || true
    die 1 "the server did not start (port $port in use?); log: $data/server.log"
  fi
  printf '%s\n' "$port" >"$dir/port"

  # The database, once per cluster (over TCP: no Unix socket, whose path length is limited).
  if ! PGPASSWORD=$PG_PASSWORD "$BIN/psql" -h 127.0.0.1 -p "$port" -U "$PG_USER" -d postgres -tAq \
    -c "select 1 from pg_database where datname = '$PG_DB'" | grep -q 1; then
    PGPASSWORD=$PG_PASSWORD "$BIN/createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER" "$PG_DB"
  fi
  url="postgresql://$PG_USER:$PG_PASSWORD@127.0.0.1:$port/$PG_DB"
  printf '%s\n' "$url" >"$dir/url"
  printf '%s\n' "$url"
}

cmd_stop() {
  local dir data
  dir=$(state_dir "${1:-}")
  if [ ! -f "$dir/datadir" ]; then
    say "nothing to stop in $dir"
    return 0
  fi
  data=$(cat "$dir/datadir")
  need_bindir
  setup_owner
  if [ -f "$data/PG_VERSION" ] && running "$data"; then
    as_owner "$BIN/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null
    say "stopped ($data)"
  else
    say "not running ($data)"
  fi
  case $data in
    "$dir"/data | */fabric-stack-pg.*) rm -rf "$data" ;;
    *) say "left $data in place (not a directory this script created)" ;;
  esac
  rm -f "$dir/datadir" "$dir/port" "$dir/url" "$dir/initdb.log"
}

cmd_status() {
  local dir data
  dir=$(state_dir "${1:-}")
  need_bindir
  setup_owner
  data=$(cat "$dir/datadir" 2>/dev/null || true)
  if [ -n "$data" ] && running "$data"; then
    cat "$dir/url"
  else
    say "not running"
    return 1
  fi
}

cmd_restart() {
  local dir data mode=${2:-fast} down=${3:-0}
  dir=$(state_dir "${1:-}")
  case $mode in smart | fast | immediate) ;; *) die 64 "MODE must be smart, fast or immediate" ;; esac
  data=$(cat "$dir/datadir" 2>/dev/null || true)
  [ -n "$data" ] || die 1 "no server in $dir (start it first)"
  need_bindir
  setup_owner
  if running "$data"; then
    as_owner "$BIN/pg_ctl" -D "$data" -m "$mode" -w -t 60 stop >/dev/null
    say "stopped ($mode)"
  fi
  case $down in '' | *[!0-9.]*) die 64 "DOWN must be a number of seconds, got '$down'" ;; esac
  sleep "$down"
  cmd_start "$dir" "$(cat "$dir/port")"
}

case ${1:-} in
  install) cmd_install ;;
  restart) cmd_restart "${2:-}" "${3:-}" "${4:-}" ;;
  start) cmd_start "${2:-}" "${3:-}" ;;
  stop) cmd_stop "${2:-}" ;;
  status) cmd_status "${2:-}" ;;
  *)
    printf 'usage: %s install | start DIR [PORT] | stop DIR | status DIR | restart DIR [MODE] [DOWN]\n' "$0" >&2
    exit 64
    ;;
esac
