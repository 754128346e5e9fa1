#!/usr/bin/env bash
# Installs the third-party test peers next to this script:
#   node_modules/ (server-everything, server-filesystem, inspector, a Node 22 binary)
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
echo "peers installed in $here"
