#!/usr/bin/env python3
"""Side-by-side benchmark: `interpreter mcp-server` vs the reference `codex mcp-server`
(Codex 0.153), both against the same zero-latency mock model (`mock-model`, Responses API).

Measures, per server:
  * spawn → `initialize` result (fresh process each time)
  * a one-request text turn: `tools/call codex` → result (each call starts a new thread)
  * a turn streaming 200 deltas: `tools/call codex` → result, all 200 deltas relayed
  * peak RSS of the server process (VmHWM) after all turns

Usage (from the repo root):
  crates/mcp-server/bench/bench.py --reference /work/bench-ref/package/vendor/x86_64-unknown-linux-musl/bin/codex
  Options: --ours "target/release/interpreter mcp-server" --mock target/release/mock-model --runs 20

Only the standard library is used. Nothing is timed inside the servers; every number is
wall-clock time seen by a client on the other end of the pipes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


class Server:
    """One server process and a line reader thread."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env
        )
        self.cv = threading.Condition()
        self.responses: dict[object, tuple[float, dict]] = {}
        self.notifications = 0
        self.deltas = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            now = time.perf_counter()
            msg = json.loads(line)
            with self.cv:
                if "method" in msg:
                    self.notifications += 1
                    t = msg.get("params", {}).get("msg", {}).get("type", "")
                    if t in ("agent_message_delta", "agent_message_content_delta"):
                        self.deltas += 1
                elif "id" in msg:
                    self.responses[msg["id"]] = (now, msg)
                self.cv.notify_all()

    def send(self, msg: dict) -> float:
        data = json.dumps(msg).encode() + b"\n"
        t = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t

    def wait(self, id_: object, timeout: float = 60) -> tuple[float, dict]:
        with self.cv:
            if not self.cv.wait_for(lambda: id_ in self.responses, timeout=timeout):
                raise TimeoutError(f"no response to {id_}")
            return self.responses.pop(id_)

    def peak_rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)
        except Exception:
            self.proc.kill()
            self.proc.wait()


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"elicitation": {}},
    "clientInfo": {"name": "bench", "version": "0"},
}


def set_script(base: str, script: dict) -> None:
    req = urllib.request.Request(f"{base}/__mock/script", data=json.dumps(script).encode(), method="POST")
    req.add_header("content-type", "application/json")
    urllib.request.urlopen(req, timeout=10).read()


def bench_server(name: str, argv: list[str], env: dict[str, str], cwd: str, mock_base: str, runs: int) -> dict:
    out: dict[str, object] = {"name": name}
    # 1. spawn → initialize result
    init_times = []
    for _ in range(runs):
        s = Server(argv, env, cwd)
        s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
        t, msg = s.wait(1)
        assert "result" in msg, msg
        init_times.append(t - s.t0)
        s.close()
    out["init"] = init_times

    s = Server(argv, env, cwd)
    s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    s.wait(1)
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    next_id = 10

    def turn(prompt: str) -> float:
        nonlocal next_id
        next_id += 1
        call = {
            "jsonrpc": "2.0",
            "id": next_id,
            "method": "tools/call",
            "params": {"name": "codex", "arguments": {"prompt": prompt, "cwd": cwd}},
        }
        t0 = s.send(call)
        t1, msg = s.wait(next_id)
        res = msg.get("result", {})
        if res.get("isError") or "error" in msg:
            raise RuntimeError(f"{name}: turn failed: {msg}")
        return t1 - t0

    # 2. one-request text turns
    set_script(mock_base, {"fallback": {"type": "turn", "text": "pong"}})
    for _ in range(2):
        turn("warm up")
    out["text_turn"] = [turn("ping") for _ in range(runs)]

    # 3. 200 streamed deltas
    text = "".join(f"t{i:06} " for i in range(200))
    set_script(mock_base, {"fallback": {"type": "turn", "text": text, "chunk_size": 8}})
    turn("warm up")
    before = s.deltas
    out["delta_turn"] = [turn("stream") for _ in range(runs)]
    out["deltas_per_turn"] = (s.deltas - before) / runs
    out["peak_rss_kb"] = s.peak_rss_kb()
    s.close()
    return out


def write_configs(root: Path, mock_url: str) -> tuple[Path, Path]:
    provider = f"""name = "mock"
base_url = "{mock_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
    common = 'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
    ours = root / "oi-home"
    ref = root / "codex-home"
    ours.mkdir()
    ref.mkdir()
    (ours / "config.toml").write_text(common + 'model_provider = "mock"\n\n[model_providers.mock]\n' + provider)
    (ref / "config.toml").write_text(
        common + 'model_provider = "mock_provider"\n\n[model_providers.mock_provider]\n' + provider
    )
    return ours, ref


def fmt_ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.1f} ms (p90 {sorted(xs)[int(len(xs) * 0.9) - 1] * 1000:.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", default=str(REPO / "target/debug/interpreter") + " mcp-server")
    ap.add_argument("--reference", help="path to the codex 0.153 binary (omit to measure ours only)")
    ap.add_argument("--mock", default=str(REPO / "target/debug/mock-model"))
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "script.json"
        script.write_text(json.dumps({"fallback": {"type": "turn", "text": "pong"}}))
        mock = subprocess.Popen([args.mock, "--script", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            url = mock.stdout.readline().split(" ", 1)[1].strip()
            base = url.rsplit("/v1", 1)[0]
            ours_home, ref_home = write_configs(root, url)
            work = root / "work"
            work.mkdir()
            clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX", "OPENINTERPRETER"))}
            results = [
                bench_server(
                    "openinterpreter",
                    [str(Path(shlex.split(args.ours)[0]).resolve()), *shlex.split(args.ours)[1:]],
                    {**clean, "OPENINTERPRETER_HOME": str(ours_home), "RUST_LOG": "error"},
                    str(work),
                    base,
                    args.runs,
                ),
            ]
            if args.reference:
                results.append(bench_server(
                    "codex 0.153",
                    [args.reference, "mcp-server"],
                    {**clean, "CODEX_HOME": str(ref_home), "RUST_LOG": "error"},
                    str(work),
                    base,
                    args.runs,
                ))
        finally:
            mock.stdin.close()
            mock.wait(timeout=10)

    ours = results[0]
    rows = [
        ("spawn → initialize", "init"),
        ("text turn (tools/call → result)", "text_turn"),
        ("200-delta turn", "delta_turn"),
    ]
    if len(results) == 1:
        print(f"| metric (median of {args.runs}) | {ours['name']} |")
        print("|---|---|")
        for label, key in rows:
            print(f"| {label} | {fmt_ms(ours[key])} |")
        print(f"| peak RSS | {ours['peak_rss_kb'] / 1024:.1f} MiB |")
        print(f"| deltas relayed per 200-delta turn | {ours['deltas_per_turn']:.0f} |")
        return 0
    ref = results[1]
    print(f"| metric (median of {args.runs}) | {ours['name']} | {ref['name']} | ratio |")
    print("|---|---|---|---|")
    for label, key in rows:
        a, b = statistics.median(ours[key]), statistics.median(ref[key])
        print(f"| {label} | {fmt_ms(ours[key])} | {fmt_ms(ref[key])} | {b / a:.1f}× faster |")
    print(
        f"| peak RSS | {ours['peak_rss_kb'] / 1024:.1f} MiB | {ref['peak_rss_kb'] / 1024:.1f} MiB | "
        f"{ref['peak_rss_kb'] / max(ours['peak_rss_kb'], 1):.1f}× smaller |"
    )
    print(f"| deltas relayed per 200-delta turn | {ours['deltas_per_turn']:.0f} | {ref['deltas_per_turn']:.0f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
