#!/usr/bin/env bash
# Installs the third-party test peers next to this script:
#   node_modules/ (server-everything, server-filesystem, inspector, the MCP conformance
#                 runner, a Node 22 binary)
#   venv/         (the official Python `mcp` SDK, fastmcp, pytest)
# Idempotent: a second run with nothing changed is quick.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
if [ ! -d node_modules ] || [ package.json -nt node_modules ]; then
  npm install --no-audit --no-fund --loglevel=error
  touch node_modules
fi
if [ ! -x venv/bin/python ]; then
  python3 -m venv venv
fi
if [ ! -f venv/.installed ] || [ requirements.txt -nt venv/.installed ]; then
  venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  touch venv/.installed
fi
# PostgreSQL for the PostgreSQL thread-store tests (scripts/test-postgres.sh runs it).
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "PostgreSQL is missing: install the Debian package postgresql (as root: apt-get install postgresql)" >&2
    exit 1
  fi
fi
# A real Secret Service for the MCP OAuth keyring tests (crates/mcp-client/tests/keyring.rs):
# GNOME Keyring under dbus-run-session; dbus-send locks the keyring in one of them.
if ! command -v gnome-keyring-daemon >/dev/null 2>&1 || ! command -v dbus-run-session >/dev/null 2>&1 \
  || ! command -v dbus-send >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnome-keyring dbus-daemon dbus-bin >/dev/null
  else
    echo "GNOME Keyring is missing: install the Debian packages gnome-keyring dbus-daemon dbus-bin (as root: apt-get install gnome-keyring dbus-daemon dbus-bin)" >&2
    exit 1
  fi
fi
echo "peers installed in $here"
