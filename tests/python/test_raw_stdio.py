"""The real binary's stdio framing, driven byte by byte (no SDK in between)."""

from __future__ import annotations

import json
import subprocess
import threading

from conftest import text_turn


class Raw:
    def __init__(self, interpreter_bin, setup) -> None:
        import os

        env = {**os.environ, **setup.env()}
        self.proc = subprocess.Popen(
            [str(interpreter_bin), "mcp-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=setup.work,
            env=env,
        )
        self.lines: list[dict] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)  # stdout carries protocol only: every line must parse
            with self._cv:
                self.lines.append(msg)
                self._cv.notify_all()

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, id_, method, params=None) -> dict:
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg).encode() + b"\n")
        return self.wait(lambda m: m.get("id") == id_ and "method" not in m)

    def wait(self, pred, timeout: float = 60) -> dict:
        with self._cv:
            ok = self._cv.wait_for(lambda: any(pred(m) for m in self.lines), timeout=timeout)
            assert ok, f"no matching message; got {self.lines[-5:]}"
            return next(m for m in self.lines if pred(m))


def test_errors_framing_and_clean_exit_on_eof(interpreter_bin, make_setup):
    setup = make_setup([text_turn("done")])
    s = Raw(interpreter_bin, setup)
    # A 2026-07-28 probe without its `_meta` is malformed (a legacy client would fall back on
    # it); the connection goes on either way.
    r = s.request(1, "server/discover", {})
    assert r["error"]["code"] == -32602 and "_meta" in r["error"]["message"], r
    s.send(b"not json at all\n")
    r = s.wait(lambda m: m.get("id", 0) is None)
    assert r["error"]["code"] == -32700
    s.send(b'{"jsonrpc":"2.0","id":2,"method":"p\xffng"}\n')
    assert s.wait(lambda m: m.get("id") is None and "UTF-8" in m["error"]["message"])["error"]["code"] == -32700
    big = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"' + b"a" * (10 * 1024 * 1024) + b'"}}\n'
    s.send(big)
    assert s.wait(lambda m: m.get("id") == 3)["error"]["code"] == -32600
    init = s.request(4, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
    assert init["result"]["protocolVersion"] == "2025-03-26"
    assert s.request(5, "initialize", {"protocolVersion": "2025-03-26"})["error"]["message"] == "initialize called more than once"
    assert s.request(6, "tools/call", {"arguments": {}})["error"]["code"] == -32602
    r = s.request(7, "tools/call", {"name": "codex", "arguments": {"prompt": "hi", "cwd": str(setup.work)}})
    assert r["result"]["content"][0]["text"] == "done"
    events = [m for m in s.lines if m.get("method") == "codex/event"]
    assert events and all(e["params"]["_meta"]["requestId"] == 7 for e in events)
    s.proc.stdin.close()
    assert s.proc.wait(timeout=30) == 0
    err = s.proc.stderr.read().decode(errors="replace")
    assert "panicked" not in err, err


def test_exits_when_the_client_stops_reading_even_with_stdin_open(interpreter_bin, make_setup):
    import os

    setup = make_setup([])
    proc = subprocess.Popen(
        [str(interpreter_bin), "mcp-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **setup.env()},
    )
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()  # the client goes away from our output...
    proc.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')  # ...and the reply fails with EPIPE
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=30) == 0  # stdin is still open: only the failed write ends it
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
