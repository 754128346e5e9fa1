#!/usr/bin/env python3
"""Load benchmark of `interpreter mcp-server --listen` (MCP streamable HTTP): N concurrent
clients, each running T `codex` tool turns one after another, against the zero-latency mock
model (`mock-model`, Chat Completions, a text answer for every request). `--era 2025-06-18`
(the default) opens a session per client with `initialize`; `--era 2026-07-28` sends every
request on its own, with its `_meta` and the standard headers, and no session.

Reports: wall time, turns per second, per-turn latency p50/p95/max as seen by the client,
failed turns, and the server's peak RSS (VmHWM).

Usage (from the repo root, after `cargo build --release --bins`):
  crates/mcp-server/bench/http_load.py --sessions 200 --turns 5 [--era 2026-07-28]
  Options: --bin target/release/interpreter --mock target/release/mock-model

Only the standard library is used; one client thread per session.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def start_mock(mock: str, tmp: Path) -> tuple[subprocess.Popen, str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"fallback": {"type": "turn", "text": "done"}}))
    proc = subprocess.Popen([mock, "--script", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip().split(" ", 1)[1]
    return proc, url


# The bearer token the server generated (`$OPENINTERPRETER_HOME/listen-token`), as a header.
AUTH: dict[str, str] = {}


def start_server(binary: str, home: Path, work: Path, sessions: int) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "OPENINTERPRETER_HOME": str(home)}
    # Every client connects from 127.0.0.1: room for all of them, and for their sessions.
    room = str(max(256, sessions + 16))
    proc = subprocess.Popen(
        [binary, "mcp-server", "--listen", "127.0.0.1:0", "--max-connections-per-peer", room, "--max-sessions", room],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("listening on "):
            port = int(line.rsplit(":", 1)[1].split("/", 1)[0])
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            AUTH["authorization"] = "Bearer " + (home / "listen-token").read_text().strip()
            return proc, port
    raise SystemExit(f"server did not start (exit {proc.poll()})")


MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"},
}


def post(conn: http.client.HTTPConnection, body: dict, session: str | None, modern: bool = False) -> tuple[dict | None, str | None]:
    """POSTs one message; returns the response carrying the request's id (read from JSON or
    from the SSE stream) and the session id header."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", **AUTH}
    if session:
        headers["mcp-session-id"] = session
    if modern:
        body = {**body, "params": {**body.get("params", {}), "_meta": META}}
        headers["mcp-protocol-version"] = MODERN
        headers["mcp-method"] = body["method"]
        if body["method"] == "tools/call":
            headers["mcp-name"] = body["params"]["name"]
    conn.request("POST", "/mcp", json.dumps(body), headers)
    r = conn.getresponse()
    sid = r.getheader("mcp-session-id") or session
    if r.status == 202:
        r.read()
        return None, sid
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {r.read()[:200]!r}")
    if (r.getheader("content-type") or "").startswith("application/json"):
        return json.loads(r.read()), sid
    want = body.get("id")
    found = None
    for raw in r:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data:"):
            msg = json.loads(line[5:].strip())
            if msg.get("id") == want and ("result" in msg or "error" in msg):
                found = msg
    return found, sid


def session(
    port: int, turns: int, work: str, latencies: list[float], failures: list[str], lock: threading.Lock, modern: bool
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        sid = None
        if not modern:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "load", "version": "0"}},
            }
            _, sid = post(conn, init, None)
            post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        for i in range(turns):
            call = {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "codex", "arguments": {"prompt": f"turn {i}", "cwd": work}},
            }
            t0 = time.perf_counter()
            msg, _ = post(conn, call, sid, modern)
            dt = time.perf_counter() - t0
            ok = msg is not None and "result" in msg and not msg["result"].get("isError")
            with lock:
                latencies.append(dt)
                if not ok:
                    failures.append(json.dumps(msg)[:200])
        if sid:
            conn.request("DELETE", "/mcp", headers={"mcp-session-id": sid, **AUTH})
            conn.getresponse().read()
    except Exception as e:  # a failed session is a result, not a crash of the benchmark
        with lock:
            failures.append(f"session: {e}")
    finally:
        conn.close()


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "target/release/interpreter"))
    ap.add_argument("--mock", default=str(REPO / "target/release/mock-model"))
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--era", choices=["2025-06-18", MODERN], default="2025-06-18")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        home, work = tmp / "home", tmp / "work"
        home.mkdir()
        work.mkdir()
        mock, url = start_mock(args.mock, tmp)
        (home / "config.toml").write_text(
            f'model = "mock-model"\nmodel_provider = "mock"\napproval_policy = "never"\n'
            f'[model_providers.mock]\nname = "mock"\nbase_url = "{url}"\nwire_api = "chat"\n'
        )
        server, port = start_server(args.bin, home, work, args.sessions)
        latencies: list[float] = []
        failures: list[str] = []
        lock = threading.Lock()
        t0 = time.perf_counter()
        threads = [
            threading.Thread(
                target=session, args=(port, args.turns, str(work), latencies, failures, lock, args.era == MODERN)
            )
            for _ in range(args.sessions)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        rss = peak_rss_mib(server.pid)
        server.terminate()
        server.wait(timeout=60)
        mock.kill()
        lat = sorted(latencies)
        ms = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")  # noqa: E731
        print(f"era={args.era} clients={args.sessions} turns/client={args.turns} turns={len(lat)} failed={len(failures)}")
        print(f"wall={wall:.2f}s throughput={len(lat) / wall:.1f} turns/s")
        print(f"turn latency p50={ms(0.5):.1f}ms p95={ms(0.95):.1f}ms max={lat[-1] * 1000 if lat else float('nan'):.1f}ms")
        print(f"server peak RSS={rss:.1f} MiB")
        for f in failures[:5]:
            print("failure:", f, file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
