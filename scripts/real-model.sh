#!/usr/bin/env bash
# A real llama.cpp `llama-server` with Qwen2.5-Coder-1.5B-Instruct on loopback, for the
# real-model test tier and the task benchmark (installed by tools/peers/install-model.sh).
#
#   eval "$(scripts/real-model.sh start)"          # greedy: --temp 0 --seed 42 (tests)
#   eval "$(scripts/real-model.sh start sampled)"  # the model's default sampling (benchmarks)
#   scripts/real-model.sh stop "$OI_REAL_MODEL_PID"
#
# `start` prints OI_REAL_MODEL_URL (the OpenAI-compatible base URL), OI_REAL_MODEL_ALIAS
# (the model name to send), OI_REAL_MODEL_PID and OI_REAL_MODEL_LOG, and returns once the
# server answers /health (loading takes a few seconds). One slot, 16384 tokens (OI_REAL_MODEL_CTX
# sets another window), 2 threads:
# what this machine runs well; the tests run one task at a time and share its prompt cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

case "${1:-}" in
  start)
    mode="${2:-greedy}"
    eval "$("$root/tools/peers/install-model.sh")"
    bin_dir="$(dirname "$OI_LLAMA_SERVER")"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    log="$(mktemp "${TMPDIR:-/tmp}/oi-llama-server.XXXXXX.log")"
    alias="qwen2.5-coder-1.5b-instruct"
    sampling=()
    if [ "$mode" = greedy ]; then sampling=(--temp 0 --seed 42); fi
    # setsid: the server is its own process group, so `stop` ends it and nothing else.
    LD_LIBRARY_PATH="$bin_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" setsid "$OI_LLAMA_SERVER" \
      -m "$OI_REAL_MODEL" -a "$alias" --host 127.0.0.1 --port "$port" \
      -c "${OI_REAL_MODEL_CTX:-16384}" -t "${OI_REAL_MODEL_THREADS:-2}" -np 1 --jinja --no-webui "${sampling[@]}" \
      >"$log" 2>&1 </dev/null &
    pid=$!
    # Wait for the event (the health endpoint answering), bounded by the server's life.
    for _ in $(seq 1 600); do
      if ! kill -0 "$pid" 2>/dev/null; then
        echo "llama-server exited while loading; its log ($log):" >&2
        tail -20 "$log" >&2
        exit 1
      fi
      if python3 - "$port" <<'PY' 2>/dev/null; then break; fi
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
    sys.exit(0 if r.status == 200 else 1)
PY
      sleep 0.5
    done
    echo "export OI_REAL_MODEL_URL='http://127.0.0.1:$port/v1'"
    echo "export OI_REAL_MODEL_ALIAS='$alias'"
    echo "export OI_REAL_MODEL_PID='$pid'"
    echo "export OI_REAL_MODEL_LOG='$log'"
    ;;
  stop)
    pid="${2:?usage: real-model.sh stop PID}"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 start [greedy|sampled] | stop PID" >&2
    exit 2
    ;;
esac
