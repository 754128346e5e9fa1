#!/usr/bin/env bash
# Builds the release binary and reports its size against the project's target (issue 31:
# at most 30 MB, stripped). Exit 1 when it is over. Usage: scripts/binary-size.sh [LIMIT_BYTES]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
limit="${1:-30000000}"
cargo build --release -p oi-cli --bin interpreter >&2
bin="${CARGO_TARGET_DIR:-$root/target}/release/interpreter"
bytes=$(stat -c %s "$bin")
awk -v b="$bytes" -v l="$limit" \
  'BEGIN { printf "interpreter (release, stripped): %d bytes = %.1f MB (target <= %.1f MB)\n", b, b / 1e6, l / 1e6 }'
if [ "$bytes" -gt "$limit" ]; then
  echo "over the target by $((bytes - limit)) bytes" >&2
  exit 1
fi
