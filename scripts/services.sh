#!/usr/bin/env bash
# Throwaway test services on 127.0.0.1: a PostgreSQL cluster and a Chroma server.
#
#   scripts/services.sh start    install what is missing (apt-get), start both, wait until they answer,
#                                print the `export ...` lines for the tests on stdout
#   scripts/services.sh stop     stop both (the data stays under /tmp until the next reboot)
#   scripts/services.sh status   say what runs; exit 1 when something is down
#   scripts/services.sh env      print the export lines only
#
# Typical use:  eval "$(scripts/services.sh start)"   then   .venv/bin/python -m pytest tests/scale
# Progress goes to stderr, so stdout is exactly the export lines. Every step is idempotent.
# Tunables (environment): ARCA_PG_DIR (/tmp/arca-pg), ARCA_PG_PORT (55432), ARCA_PG_DB (arca_test),
# ARCA_CHROMA_DIR (/tmp/arca-chroma), ARCA_CHROMA_PORT (8765).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

PG_DIR="${ARCA_PG_DIR:-/tmp/arca-pg}"
PG_PORT="${ARCA_PG_PORT:-55432}"
PG_DB="${ARCA_PG_DB:-arca_test}"
PG_USER=arca
CHROMA_DIR="${ARCA_CHROMA_DIR:-/tmp/arca-chroma}"
CHROMA_PORT="${ARCA_CHROMA_PORT:-8765}"
CHROMA_PIDFILE="$CHROMA_DIR.pid"
CHROMA_LOG="$CHROMA_DIR.log"
PG_LOG="$PG_DIR.log"

say() { echo "services: $*" >&2; }
die() { echo "services: $*" >&2; exit 1; }

pg_url() { echo "postgresql+asyncpg://$PG_USER@127.0.0.1:$PG_PORT/$PG_DB"; }
chroma_url() { echo "http://127.0.0.1:$CHROMA_PORT"; }

print_env() {
  echo "export ARCA_TEST_PG_URL=$(pg_url)"
  echo "export ARCA_TEST_CHROMA_URL=$(chroma_url)"
}

# ---- PostgreSQL -----------------------------------------------------------------------------------

pg_bindir() {
  # The newest installed server version; Debian keeps the binaries out of PATH.
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; fi
}

apt_updated=0
apt_install() {
  [ "$(id -u)" = 0 ] || die "need root to apt-get install $*; install it yourself and re-run"
  if [ "$apt_updated" = 0 ]; then
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    apt_updated=1
  fi
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_pg_installed() {
  if [ -z "$(pg_bindir)" ]; then
    apt_install postgresql
  fi
  [ -n "$(pg_bindir)" ] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin"
}

# initdb and the server refuse to run as root: as root we run them as the `postgres` account the
# Debian package creates (or a created system user when it is missing); otherwise as ourselves.
PG_OS_USER=""
pg_os_user() {
  if [ "$(id -u)" != 0 ]; then PG_OS_USER="$(id -un)"; return; fi
  if ! id postgres >/dev/null 2>&1; then
    say "creating system user postgres"
    useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  fi
  PG_OS_USER=postgres
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    # runuser keeps no controlling terminal requirement (works in CI without stdin)
    runuser -u "$PG_OS_USER" -- "$@"
  else
    "$@"
  fi
}

pg_ready() {
  "$(pg_bindir)/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -d postgres -U "$PG_USER" >/dev/null 2>&1
}

start_pg() {
  ensure_pg_installed
  pg_os_user
  local bin
  bin="$(pg_bindir)"
  if [ ! -f "$PG_DIR/PG_VERSION" ]; then
    say "initdb $PG_DIR (superuser $PG_USER, trust on loopback: a throwaway test cluster)"
    mkdir -p "$PG_DIR"
    chown "$PG_OS_USER" "$PG_DIR"
    chmod 700 "$PG_DIR"
    as_pg "$bin/initdb" -D "$PG_DIR" -U "$PG_USER" -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  touch "$PG_LOG" && chown "$PG_OS_USER" "$PG_LOG"
  if ! as_pg "$bin/pg_ctl" -D "$PG_DIR" status >/dev/null 2>&1; then
    say "starting PostgreSQL $(basename "$(dirname "$bin")") on 127.0.0.1:$PG_PORT"
    # Unix socket in the cluster dir: no write access to /var/run/postgresql needed.
    # max_connections: the concurrency tests open up to ~100 connections from two processes.
    as_pg "$bin/pg_ctl" -D "$PG_DIR" -l "$PG_LOG" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=300 -c fsync=off" \
      start >/dev/null || { tail -n 20 "$PG_LOG" >&2; die "PostgreSQL did not start"; }
  fi
  for _ in $(seq 1 60); do pg_ready && break; sleep 0.5; done
  pg_ready || die "PostgreSQL does not accept connections on 127.0.0.1:$PG_PORT"
  if ! "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q 1; then
    say "creating database $PG_DB"
    "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" "$PG_DB"
  fi
  say "PostgreSQL ready: $(pg_url)"
}

stop_pg() {
  local bin
  bin="$(pg_bindir)"
  if [ -z "$bin" ] || [ ! -f "$PG_DIR/PG_VERSION" ]; then say "PostgreSQL: no cluster at $PG_DIR"; return; fi
  pg_os_user
  if as_pg "$bin/pg_ctl" -D "$PG_DIR" status >/dev/null 2>&1; then
    as_pg "$bin/pg_ctl" -D "$PG_DIR" -m fast -w stop >/dev/null
    say "PostgreSQL stopped"
  else
    say "PostgreSQL was not running"
  fi
}

# ---- Chroma server -------------------------------------------------------------------------------

chroma_bin() {
  if [ -x "$ROOT/.venv/bin/chroma" ]; then echo "$ROOT/.venv/bin/chroma"; return; fi
  command -v chroma 2>/dev/null || true
}

chroma_ready() {
  # The v2 heartbeat; python from the venv so curl need not be installed.
  local py="$ROOT/.venv/bin/python"
  [ -x "$py" ] || py=python3
  "$py" - "$(chroma_url)/api/v2/heartbeat" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
EOF
}

chroma_pid() {
  if [ -f "$CHROMA_PIDFILE" ]; then
    local pid
    pid="$(cat "$CHROMA_PIDFILE")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
  fi
}

start_chroma() {
  local bin
  bin="$(chroma_bin)"
  if [ -z "$bin" ]; then
    say "no chroma CLI: setting up .venv (scripts/bootstrap runtime)"
    scripts/bootstrap runtime >&2
    bin="$(chroma_bin)"
  fi
  [ -n "$bin" ] || die "the chroma CLI (chromadb package) is not installed"
  if chroma_ready; then
    say "Chroma server already answers at $(chroma_url)"
    return
  fi
  if [ -z "$(chroma_pid)" ]; then
    say "starting Chroma server on 127.0.0.1:$CHROMA_PORT ($CHROMA_DIR)"
    mkdir -p "$CHROMA_DIR"
    ANONYMIZED_TELEMETRY=False nohup "$bin" run --path "$CHROMA_DIR" --host 127.0.0.1 --port "$CHROMA_PORT" \
      >"$CHROMA_LOG" 2>&1 </dev/null &
    echo $! >"$CHROMA_PIDFILE"
  fi
  for _ in $(seq 1 120); do chroma_ready && break; sleep 0.5; done
  chroma_ready || { tail -n 20 "$CHROMA_LOG" >&2; die "Chroma server does not answer at $(chroma_url)"; }
  say "Chroma server ready: $(chroma_url)"
}

stop_chroma() {
  local pid
  pid="$(chroma_pid)"
  if [ -z "$pid" ]; then say "Chroma server was not running (no live pid in $CHROMA_PIDFILE)"; return; fi
  kill "$pid"
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$CHROMA_PIDFILE"
  say "Chroma server stopped"
}

# ---- commands ------------------------------------------------------------------------------------

status() {
  local rc=0
  if [ -n "$(pg_bindir)" ] && pg_ready; then
    say "PostgreSQL: up at $(pg_url)"
  else
    say "PostgreSQL: down"; rc=1
  fi
  if chroma_ready; then
    say "Chroma server: up at $(chroma_url)"
  else
    say "Chroma server: down"; rc=1
  fi
  return "$rc"
}

case "${1:-}" in
  start)
    start_pg
    start_chroma
    print_env
    ;;
  stop)
    stop_chroma
    stop_pg
    ;;
  status)
    status
    ;;
  env)
    print_env
    ;;
  *)
    echo "usage: scripts/services.sh start|stop|status|env" >&2
    exit 2
    ;;
esac
