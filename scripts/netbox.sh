#!/usr/bin/env bash
# Throw-away NetBox servers on loopback, for the tests, the benchmark and for trying the NetBox inventory.
#
#   scripts/netbox.sh install      NetBox (pinned, PyPI) in its own Python 3.12 venv, Redis (Debian) and
#                                  PostgreSQL (scripts/postgres.sh); migrates once into a cached dump; idempotent
#   scripts/netbox.sh start DIR    PostgreSQL + Redis + NetBox for DIR on free loopback ports; writes the API
#                                  token to DIR/token and prints the URL as the only stdout line
#   scripts/netbox.sh stop DIR     stop all three and delete their data
#
# The venv, the migrated database dump and the collected static files live under
# ${XDG_CACHE_HOME:-~/.cache}/fabric-stack/netbox-VERSION (never in the repository). A start restores the
# migrated dump (seconds) instead of running NetBox's ~200 migrations (minutes). NetBox is served as its
# installation guide serves it: gunicorn with NetBox's own contrib/gunicorn.py (threads 3, timeout 120 s,
# max_requests 5000), bound to loopback, --preload (Django and NetBox's URLconf/GraphQL schema load once
# in the master, ~15 CPU-s, and the workers fork from it instead of each loading them again: a start
# under load took 6 min without it), no control socket (gunicorn's default, ~/.gunicorn/gunicorn.ctl,
# is one path for every instance on the machine), with 2n+1 workers for n cores (the guide's rule;
# FABRIC_STACK_NETBOX_WORKERS=N overrides it), Redis for its cache and task queues. One RQ worker (`netbox rqworker`): the
# netbox-branching plugin (enabled, BRANCHING_VERSION below) provisions and merges branches in
# background jobs. Gunicorn serves no static files: the REST API
# needs none; the web UI loads unstyled unless a web server maps /static/ to DIR/root/static (NetBox's
# contrib/nginx.conf does exactly that). Progress goes to stderr.
set -euo pipefail

NETBOX_VERSION=4.7.3
# The netbox-branching plugin (PyPI netboxlabs-netbox-branching), for reviewing a change in a NetBox
# branch before it reaches main (issue #48). 1.2.2: the newest release on PyPI here whose PluginConfig
# declares this NetBox (min_version 4.7.0, max_version 4.7.99; 1.1.x declares 4.4.1-4.6.99, which
# NetBox 4.7 refuses to load; 1.2.0b1 is the beta of the same 4.7 line). No runtime dependencies.
BRANCHING_VERSION=1.2.2
HERE=$(cd "$(dirname "$0")" && pwd)
# The throw-away PostgreSQL's password, from scripts/postgres.sh (one place: see why it is no word
# of our data there).
PG_PASSWORD=$(sed -n 's/^PG_PASSWORD=//p' "$HERE/postgres.sh")
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/fabric-stack/netbox-$NETBOX_VERSION
VENV=$CACHE/venv
DUMP=$CACHE/migrated.dump
# NetBox's dump with the plugin's own migrations applied on top (built from DUMP once, in seconds).
BRANCH_DUMP=$CACHE/migrated-branching-$BRANCHING_VERSION.dump
ADMIN_USER=admin

say() { printf 'netbox: %s\n' "$*" >&2; }
die() {
  local code=$1
  shift
  printf 'netbox: error: %s\n' "$*" >&2
  exit "$code"
}

# A working Python >= 3.12, 3.12 first (the version the issue pins; NetBox 4.7 supports 3.12-3.14):
# NETBOX_PYTHON, pyenv's 3.12.x (its real interpreters, not the shims: a shim without a version
# selected fails), python3.12 on PATH, then newer pyenv versions and python3.13. Each candidate is run.
find_python() {
  local c pyenv=${PYENV_ROOT:-$HOME/.pyenv}/versions
  for c in "${NETBOX_PYTHON:-}" \
    $(ls -d "$pyenv"/3.12*/bin/python3 2>/dev/null | sort -V -r) "$(command -v python3.12 || true)" \
    $(ls -d "$pyenv"/3.1[3-9]*/bin/python3 2>/dev/null | sort -V -r) "$(command -v python3.13 || true)"; do
    if [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      printf '%s\n' "$c"
      return 0
    fi
  done
  return 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_bin() {
  local d best=""
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/pg_restore" ] && best=$d
  done
  [ -n "$best" ] || die 2 "PostgreSQL client tools not found: run 'bash scripts/netbox.sh install'"
  printf '%s\n' "$best"
}

install_venv() {
  if [ -f "$VENV/.installed-$NETBOX_VERSION" ]; then
    say "venv present: $VENV (netbox $NETBOX_VERSION)"
    return 0
  fi
  local py
  py=$(find_python) || die 2 "NetBox $NETBOX_VERSION needs Python >= 3.12: none on PATH or under pyenv;" \
    "set NETBOX_PYTHON=/path/to/python3.12"
  say "creating $VENV with $py ($("$py" --version 2>&1))"
  local t0=$SECONDS
  rm -rf "$VENV"
  mkdir -p "$CACHE"
  "$py" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --no-deps "netbox==$NETBOX_VERSION"
  # NetBox pins psycopg[c], which compiles against libpq headers; the binary wheel of the same
  # version needs no compiler and behaves the same for Django.
  "$VENV/bin/python" - "$CACHE/requirements.txt" <<'EOF'
import sys
from importlib.metadata import requires
reqs = [r.replace("psycopg[c,pool]", "psycopg[binary,pool]") for r in requires("netbox") or []
        if "extra ==" not in r]
open(sys.argv[1], "w").write("\n".join(reqs) + "\n")
EOF
  "$VENV/bin/python" -m pip install --quiet -r "$CACHE/requirements.txt"
  touch "$VENV/.installed-$NETBOX_VERSION"
  say "installed netbox $("$VENV/bin/netbox" version 2>/dev/null) into $VENV in $((SECONDS - t0)) s"
}

# The plugin into NetBox's venv (its own marker: an existing NetBox venv is kept as it is).
install_branching() {
  if [ -f "$VENV/.installed-branching-$BRANCHING_VERSION" ]; then
    say "netbox-branching present: $BRANCHING_VERSION"
    return 0
  fi
  "$VENV/bin/python" -m pip install --quiet --no-deps "netboxlabs-netbox-branching==$BRANCHING_VERSION"
  touch "$VENV/.installed-branching-$BRANCHING_VERSION"
  say "installed netbox-branching $BRANCHING_VERSION into $VENV"
}

install_redis() {
  if command -v redis-server >/dev/null 2>&1; then
    say "redis present: $(redis-server --version | cut -d' ' -f1-3)"
    return 0
  fi
  [ "$(id -u)" = 0 ] || die 2 "redis-server not found; install it as root: sudo apt-get install redis-server"
  command -v apt-get >/dev/null 2>&1 || die 2 "redis-server not found and no apt-get: install Redis"
  say "installing redis-server with apt-get (the service is not started)"
  local policy=/usr/sbin/policy-rc.d added_policy="" rc=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    added_policy=1
  fi
  {
    apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends redis-server
  } >&2 || rc=$?
  [ -z "$added_policy" ] || rm -f "$policy"
  [ "$rc" = 0 ] || die 1 "apt-get install redis-server failed (exit $rc)"
}

# NETBOX_ROOT for DIR: conf/configuration.py (this instance's ports), static/ linked to the cache.
# netbox-branching's settings (its README, "Configuration"): a branch is a PostgreSQL schema the
# router picks per request, so DATABASES must be the plugin's DynamicSchemaDict. "base": none.
branching_config() {
  [ "$1" = base ] && return 0
  printf '%s\n' "from netbox_branching.utilities import DynamicSchemaDict" \
    "DATABASES = DynamicSchemaDict(DATABASES)" \
    'DATABASE_ROUTERS = ["netbox_branching.database.BranchAwareRouter"]' \
    'PLUGINS = ["netbox_branching"]'
}

write_config() { # ROOT PG_PORT REDIS_PORT [base: without the branching plugin]
  local root=$1
  mkdir -p "$root/conf" "$root/media" "$root/reports" "$root/scripts"
  [ -e "$root/static" ] || ln -s "$CACHE/static" "$root/static"
  : >"$root/conf/__init__.py"
  cat >"$root/conf/configuration.py" <<EOF
# Written by fabric-stack scripts/netbox.sh: a throw-away test instance on loopback.
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
DATABASES = {"default": {"NAME": "fabric", "USER": "fabric", "PASSWORD": "$PG_PASSWORD",
                         "HOST": "127.0.0.1", "PORT": "$2", "CONN_MAX_AGE": 300}}
$(branching_config "${4:-}")
REDIS = {
    "tasks": {"HOST": "127.0.0.1", "PORT": $3, "DATABASE": 0, "SSL": False},
    "caching": {"HOST": "127.0.0.1", "PORT": $3, "DATABASE": 1, "SSL": False},
}
SECRET_KEY = "$(head -c 48 /dev/urandom | base64 | tr -d '\n/+=' | head -c 60)"
API_TOKEN_PEPPERS = {1: "$(head -c 48 /dev/urandom | base64 | tr -d '\n/+=' | head -c 60)"}
CENSUS_REPORTING_ENABLED = False
RELEASE_CHECK_URL = None
# The tests and the benchmark page through thousands of objects.
MAX_PAGE_SIZE = 5000
EOF
}

nb() { # ROOT ARGS...: the netbox management command for this instance
  local root=$1
  shift
  NETBOX_ROOT=$root "$VENV/bin/netbox" "$@"
}

# A throw-away database needs no durability: no fsync/synchronous commit (changeable on reload)
# makes NetBox's migrations and bulk writes several times faster on a busy disk.
fast_pg() { # PG_PORT
  PGPASSWORD=$PG_PASSWORD "$(pg_bin)/psql" -h 127.0.0.1 -p "$1" -U fabric -d fabric -qAt \
    -c "ALTER SYSTEM SET fsync = off" -c "ALTER SYSTEM SET synchronous_commit = off" \
    -c "ALTER SYSTEM SET full_page_writes = off" -c "SELECT pg_reload_conf()" >/dev/null
}

start_redis() { # DIR PORT
  redis-server --bind 127.0.0.1 --port "$2" --daemonize yes --pidfile "$1/redis.pid" --dir "$1" \
    --logfile "$1/redis.log" --save '' --appendonly no >/dev/null
  local i
  for i in $(seq 50); do
    [ -s "$1/redis.pid" ] && return 0
    sleep 0.1
  done
  die 1 "redis did not start; log: $1/redis.log"
}

# The migrated database, once: a scratch PostgreSQL, `netbox migrate`, collectstatic, pg_dump.
build_dump() {
  if [ -s "$DUMP" ] && [ -d "$CACHE/static" ]; then
    say "migrated dump present: $DUMP"
    return 0
  fi
  local work url pgport rport
  work=$(mktemp -d "${TMPDIR:-/tmp}/fabric-stack-nb-build.XXXXXX")
  url=$(bash "$HERE/postgres.sh" start "$work/pg")
  pgport=$(cat "$work/pg/port")
  fast_pg "$pgport"
  rport=$(free_port)
  mkdir -p "$CACHE/static"
  write_config "$work/root" "$pgport" "$rport" base
  start_redis "$work" "$rport"
  local rc=0
  {
    say "running NetBox's migrations once (a few minutes)"
    local t0=$SECONDS
    nb "$work/root" migrate --no-input >"$work/migrate.log" 2>&1 &&
      say "migrations: $((SECONDS - t0)) s" && t0=$SECONDS &&
      nb "$work/root" collectstatic --no-input >"$work/static.log" 2>&1 &&
      say "collectstatic: $((SECONDS - t0)) s" &&
      PGPASSWORD=$PG_PASSWORD "$(pg_bin)/pg_dump" -Fc -h 127.0.0.1 -p "$pgport" -U fabric -f "$DUMP.tmp" fabric &&
      mv "$DUMP.tmp" "$DUMP"
  } || rc=$?
  kill "$(cat "$work/redis.pid")" 2>/dev/null || true
  bash "$HERE/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  if [ "$rc" != 0 ]; then
    tail -n 20 "$work"/*.log >&2 || true
    rm -rf "$work"
    die 1 "building the migrated NetBox database failed (exit $rc)"
  fi
  rm -rf "$work"
  say "cached $DUMP ($url migrated)"
}

# DUMP plus the plugin's migrations, once: restore DUMP into a scratch PostgreSQL, migrate (only the
# plugin's are pending), dump again. DUMP itself stays as it was.
build_branch_dump() {
  if [ -s "$BRANCH_DUMP" ]; then
    say "migrated dump with netbox-branching present: $BRANCH_DUMP"
    return 0
  fi
  local work pgport rport rc=0
  work=$(mktemp -d "${TMPDIR:-/tmp}/fabric-stack-nb-branch.XXXXXX")
  bash "$HERE/postgres.sh" start "$work/pg" >/dev/null
  pgport=$(cat "$work/pg/port")
  fast_pg "$pgport"
  rport=$(free_port)
  write_config "$work/root" "$pgport" "$rport"
  start_redis "$work" "$rport"
  {
    say "adding netbox-branching $BRANCHING_VERSION's migrations to the cached dump"
    PGPASSWORD=$PG_PASSWORD "$(pg_bin)/pg_restore" --no-owner -h 127.0.0.1 -p "$pgport" -U fabric -d fabric "$DUMP" &&
      nb "$work/root" migrate --no-input >"$work/migrate.log" 2>&1 &&
      PGPASSWORD=$PG_PASSWORD "$(pg_bin)/pg_dump" -Fc -h 127.0.0.1 -p "$pgport" -U fabric -f "$BRANCH_DUMP.tmp" fabric &&
      mv "$BRANCH_DUMP.tmp" "$BRANCH_DUMP"
  } || rc=$?
  kill "$(cat "$work/redis.pid")" 2>/dev/null || true
  bash "$HERE/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  if [ "$rc" != 0 ]; then
    tail -n 20 "$work"/*.log >&2 || true
    rm -rf "$work"
    die 1 "adding netbox-branching's migrations failed (exit $rc)"
  fi
  rm -rf "$work"
  say "cached $BRANCH_DUMP"
}

cmd_install() {
  bash "$HERE/postgres.sh" install
  install_redis
  install_venv
  install_branching
  build_dump
  build_branch_dump
}

state_dir() {
  [ -n "${1:-}" ] || die 64 "usage: $0 start|stop DIR"
  mkdir -p "$1"
  (cd "$1" && pwd)
}

# Seconds a start waits for NetBox to answer: gunicorn --preload loads NetBox (its URLconf and
# GraphQL schema) before it binds, ~15 CPU-s, which took over 60 s with the machine at load 20.
START_WAIT_S=${FABRIC_STACK_NETBOX_START_S:-420}

wait_http() { # URL LOG PID: 0 when NetBox answers, 1 when it exited (the log says why)
  local until=$((SECONDS + START_WAIT_S))
  while [ "$SECONDS" -lt "$until" ]; do
    if curl -fsS --max-time 30 -o /dev/null "$1/login/" 2>/dev/null; then return 0; fi
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.5
  done
  die 1 "NetBox did not answer on $1 within $START_WAIT_S s (FABRIC_STACK_NETBOX_START_S); log: $2"
}

# Gunicorn workers: FABRIC_STACK_NETBOX_WORKERS, else NetBox's documented 2n+1 for n cores.
workers() {
  local n=${FABRIC_STACK_NETBOX_WORKERS:-}
  if [ -z "$n" ]; then
    n=$((2 * $(nproc 2>/dev/null || echo 1) + 1))
  fi
  case $n in
    '' | *[!0-9]* | 0) die 2 "FABRIC_STACK_NETBOX_WORKERS=$n: expected a whole number of gunicorn workers >= 1" ;;
  esac
  printf '%s\n' "$n"
}

cmd_start() {
  local dir
  dir=$(state_dir "${1:-}")
  if [ -f "$dir/url" ] && [ -f "$dir/netbox.pid" ] && kill -0 "$(cat "$dir/netbox.pid")" 2>/dev/null; then
    say "already running"
    cat "$dir/url"
    return 0
  fi
  [ -f "$VENV/.installed-$NETBOX_VERSION" ] && [ -s "$DUMP" ] ||
    die 2 "NetBox $NETBOX_VERSION is not installed: run 'bash scripts/netbox.sh install' (or 'make netbox')"
  [ -f "$VENV/.installed-branching-$BRANCHING_VERSION" ] && [ -s "$BRANCH_DUMP" ] ||
    die 2 "netbox-branching $BRANCHING_VERSION is not installed: run 'bash scripts/netbox.sh install' (or 'make netbox')"
  command -v redis-server >/dev/null 2>&1 || die 2 "redis-server not found: run 'bash scripts/netbox.sh install'"
  [ -x "$VENV/bin/gunicorn" ] || die 2 "gunicorn missing from $VENV: run 'bash scripts/netbox.sh install'"
  local nworkers gconf
  nworkers=$(workers)
  gconf=$("$VENV/bin/python" -c 'import netbox, os; print(os.path.join(os.path.dirname(netbox.__file__), "_data", "contrib", "gunicorn.py"))')
  [ -f "$gconf" ] || die 2 "NetBox's contrib/gunicorn.py not found at $gconf"

  # A start that fails half-way stops what it started (no server left behind).
  trap 'cmd_stop "$dir" >/dev/null 2>&1' EXIT
  bash "$HERE/postgres.sh" start "$dir/pg" >/dev/null
  local pgport rport port url
  pgport=$(cat "$dir/pg/port")
  fast_pg "$pgport"
  rport=$(free_port)
  start_redis "$dir" "$rport"
  # FABRIC_STACK_NETBOX_BRANCHING=0: a NetBox without the plugin (the plain migrated dump).
  local plain="" dump=$BRANCH_DUMP
  if [ "${FABRIC_STACK_NETBOX_BRANCHING:-1}" = 0 ]; then plain=base dump=$DUMP; fi
  write_config "$dir/root" "$pgport" "$rport" $plain
  say "restoring the migrated database"
  PGPASSWORD=$PG_PASSWORD "$(pg_bin)/pg_restore" --no-owner -h 127.0.0.1 -p "$pgport" -U fabric -d fabric "$dump" ||
    die 1 "pg_restore of $dump failed"
  # One superuser and one v2 API token (write-enabled) for the tests; the token goes to DIR/token only.
  nb "$dir/root" shell --no-imports -c "
from users.models import Token, User
u, _ = User.objects.get_or_create(username='$ADMIN_USER', defaults={'is_superuser': True})
u.set_password('$ADMIN_USER-$ADMIN_USER'); u.is_superuser = True; u.save()
t = Token(user=u, version=2, write_enabled=True, description='fabric-stack scripts/netbox.sh')
t.clean(); t.save()
open('$dir/token', 'w').write(t.get_auth_header_prefix().split()[-1] + t.token + chr(10))
" >"$dir/shell.log" 2>&1 || {
    cat "$dir/shell.log" >&2
    die 1 "creating the API token failed"
  }
  chmod 0600 "$dir/token"
  # The free port may be taken between free_port and gunicorn's bind (other servers start on
  # this machine too): then try another one. Command-line settings override the config file's.
  local attempt
  for attempt in 1 2 3; do
    port=$(free_port)
    url="http://127.0.0.1:$port"
    say "serving on $url (gunicorn, $nworkers workers)"
    NETBOX_ROOT=$dir/root nohup "$VENV/bin/gunicorn" --config "$gconf" --bind "127.0.0.1:$port" \
      --workers "$nworkers" --preload --no-control-socket --chdir "$dir/root" netbox.wsgi >"$dir/netbox.log" 2>&1 </dev/null &
    printf '%s\n' "$!" >"$dir/netbox.pid"
    wait_http "$url" "$dir/netbox.log" "$(cat "$dir/netbox.pid")" && break
    tail -n 20 "$dir/netbox.log" >&2
    grep -q "already in use" "$dir/netbox.log" && [ "$attempt" != 3 ] ||
      die 1 "NetBox exited during start; log: $dir/netbox.log"
  done
  # The plugin provisions, syncs and merges branches in background jobs: one RQ worker runs them.
  NETBOX_ROOT=$dir/root nohup "$VENV/bin/netbox" rqworker >"$dir/rqworker.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$dir/rqworker.pid"
  printf '%s\n' "$url" >"$dir/url"
  trap - EXIT
  printf '%s\n' "$url"
}

cmd_stop() {
  local dir pid
  dir=$(state_dir "${1:-}")
  if [ -f "$dir/netbox.pid" ]; then
    pid=$(cat "$dir/netbox.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  if [ -f "$dir/rqworker.pid" ]; then
    kill "$(cat "$dir/rqworker.pid")" 2>/dev/null || true
  fi
  if [ -f "$dir/redis.pid" ]; then
    kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
  fi
  bash "$HERE/postgres.sh" stop "$dir/pg" >/dev/null 2>&1 || true
  rm -rf "$dir/root" "$dir/pg"
  rm -f "$dir/netbox.pid" "$dir/redis.pid" "$dir/rqworker.pid" "$dir/rqworker.log" "$dir/url" "$dir/token" "$dir/netbox.log" "$dir/redis.log" \
    "$dir/shell.log"
  say "stopped ($dir)"
}

case ${1:-} in
  install) cmd_install ;;
  start) cmd_start "${2:-}" ;;
  stop) cmd_stop "${2:-}" ;;
  *)
    printf 'usage: %s install | start DIR | stop DIR\n' "$0" >&2
    exit 64
    ;;
esac
