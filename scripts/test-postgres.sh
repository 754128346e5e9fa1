#!/usr/bin/env bash
# A private, throw-away PostgreSQL server for the tests (the PostgreSQL thread store).
#
#   eval "$(scripts/test-postgres.sh start)"   # exports OI_TEST_PG_URL and OI_TEST_PG_DIR
#   scripts/test-postgres.sh stop "$OI_TEST_PG_DIR"
#
# `start` runs initdb and pg_ctl in a new temporary directory, listening on 127.0.0.1 only
# on a free port, with trust authentication for the superuser `oi` (nothing else can reach
# it). initdb refuses to run as root, so under root the server runs as `nobody`.
set -euo pipefail

find_bin() {
  if command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
    return
  fi
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/pg_ctl" ]; then
      echo "$d"
      return
    fi
  done
  echo "PostgreSQL is not installed: run tools/peers/install.sh (Debian package postgresql)" >&2
  exit 1
}

as_server_user() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- "$@"
  else
    "$@"
  fi
}

case "${1:-}" in
  start)
    bin="$(find_bin)"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/oi-test-pg.XXXXXX")"
    chmod 755 "$dir"
    if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$dir"; fi
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_server_user "$bin/initdb" -D "$dir/data" -U oi --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir' -c fsync=off -c max_connections=300" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "export OI_TEST_PG_URL='postgresql://oi@127.0.0.1:$port/postgres?sslmode=disable'"
    echo "export OI_TEST_PG_DIR='$dir'"
    ;;
  stop)
    dir="${2:?usage: test-postgres.sh stop DIR}"
    bin="$(find_bin)"
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start | stop DIR" >&2
    exit 2
    ;;
esac
