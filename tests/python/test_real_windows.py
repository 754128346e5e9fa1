"""The context window a real llama-server runs, read before the first request.

The model's name is in the built-in table as a 32,768-token model; the server runs it with
`-c 16384` (the tier's shared server) or `-c 2048` (started here). Both must be picked up
from the server before anything is sent, and a session that outgrows 2,048 tokens must be
compacted before the server refuses a request. Judged from the events and the server's own
log, never from what the model says.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from real_tasks import agent_env, write_config

URL = os.environ.get("OI_REAL_MODEL_URL")
ALIAS = os.environ.get("OI_REAL_MODEL_ALIAS", "qwen2.5-coder-1.5b-instruct")
ROOT = Path(__file__).resolve().parents[2]

if not URL:
    if os.environ.get("OI_REQUIRE_REAL_MODEL") == "1":
        pytest.fail("OI_REAL_MODEL_URL is not set: scripts/test.sh starts the server", pytrace=False)
    pytest.skip("no real model server (OI_REAL_MODEL_URL); scripts/test.sh starts one", allow_module_level=True)

TIMEOUT = 900
# What llama-server logs when it refuses a prompt that does not fit.
REFUSAL = "exceeds the available context size"


@pytest.fixture(scope="module")
def small_server():
    """A second llama-server with the same model and a 2,048-token window."""
    env = dict(os.environ, OI_REAL_MODEL_CTX="2048")
    out = subprocess.run(
        [str(ROOT / "scripts" / "real-model.sh"), "start"],
        env=env, capture_output=True, text=True, timeout=600, check=True,
    ).stdout
    started = dict(
        line.removeprefix("export ").split("=", 1) for line in out.splitlines() if line.startswith("export ")
    )
    started = {k: v.strip("'") for k, v in started.items()}
    try:
        yield started
    finally:
        subprocess.run([str(ROOT / "scripts" / "real-model.sh"), "stop", started["OI_REAL_MODEL_PID"]], check=False)


def run(interpreter: Path, root: Path, home: Path, prompt: str, resume: bool = False):
    """One `exec` (or `resume --last`) turn; returns (exit code, event messages)."""
    root.mkdir(parents=True, exist_ok=True)
    argv = [str(interpreter), *(["resume", "--last"] if resume else ["exec"]), "--json", "-a", "never", prompt]
    proc = subprocess.run(argv, cwd=root, env=agent_env(root, home), capture_output=True, text=True, timeout=TIMEOUT)
    msgs = []
    for line in proc.stdout.splitlines():
        try:
            msgs.append(json.loads(line)["msg"])
        except (ValueError, KeyError, TypeError):
            continue
    return proc.returncode, msgs, proc.stderr


def windows(msgs: list[dict]) -> list[tuple]:
    return [
        (m.get("model_context_window"), m.get("model_context_window_source"))
        for m in msgs
        if m.get("type") == "task_started"
    ]


def test_the_shared_servers_16384_window_is_read_before_the_first_request(tmp_path, interpreter_bin):
    home = tmp_path / "oi-home"
    write_config(home, URL, ALIAS)
    code, msgs, err = run(interpreter_bin, tmp_path / "work", home, "Say hello in one word.")
    assert windows(msgs) == [(16384, "llama.cpp /props n_ctx")], (msgs[:3], err[-500:])
    assert code == 0, err[-500:]


def test_a_2048_window_is_read_and_a_long_session_compacts_before_the_server_refuses(
    tmp_path, small_server, interpreter_bin
):
    home = tmp_path / "oi-home"
    write_config(home, small_server["OI_REAL_MODEL_URL"], small_server["OI_REAL_MODEL_ALIAS"])
    work = tmp_path / "work"
    notes = "\n".join(f"Note {i}: the build on machine {i} passed its tests at step {i * 7}." for i in range(30))
    prompts = [f"Here are my notes, part {part}. Read them and reply with just the word OK.\n{notes}" for part in range(4)]
    all_msgs: list[dict] = []
    for i, prompt in enumerate(prompts):
        code, msgs, err = run(interpreter_bin, work, home, prompt, resume=i > 0)
        all_msgs += msgs
        assert windows(msgs) == [(2048, "llama.cpp /props n_ctx")], (i, windows(msgs), err[-500:])
        errors = [m["message"] for m in msgs if m.get("type") == "error"]
        assert code == 0, (i, errors, err[-500:])
    compacted = [m for m in all_msgs if m.get("type") == "context_compacted"]
    assert compacted, "four turns of ~450 tokens each outgrow 2,048 tokens: the session must compact"
    refused = [m["message"] for m in all_msgs if m.get("type") == "stream_error" and "did not fit" in m["message"]]
    assert not refused, refused
    log = Path(small_server["OI_REAL_MODEL_LOG"]).read_text(errors="replace")
    assert REFUSAL not in log, "the server refused a request: " + next(l for l in log.splitlines() if REFUSAL in l)


class LowCountProxy:
    """A proxy in front of the real server that reports a low prompt-token count in its first
    chat answer (as a misbehaving gateway, or one that counts only uncached tokens, does) and
    passes everything else through unchanged, streaming."""

    def __init__(self, upstream: str):
        import http.client
        import http.server
        import threading
        import urllib.parse

        target = urllib.parse.urlsplit(upstream)
        state = {"rewritten": 0}

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _forward(self, method: str):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=TIMEOUT)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                conn.request(method, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                rewrite = method == "POST" and self.path.endswith("/chat/completions") and state["rewritten"] == 0
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Connection", "close")
                self.end_headers()
                while True:
                    line = resp.readline()
                    if not line:
                        break
                    if rewrite and line.startswith(b"data: {") and b'"usage"' in line:
                        event = json.loads(line[6:])
                        if isinstance(event.get("usage"), dict):
                            event["usage"]["prompt_tokens"] = 200
                            line = b"data: " + json.dumps(event).encode() + b"\n"
                            state["rewritten"] += 1
                    self.wfile.write(line)
                    self.wfile.flush()
                conn.close()
                self.close_connection = True

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.state = state
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{target.path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def remembered_windows(home: Path) -> dict:
    try:
        return json.loads((home / "model-windows.json").read_text()).get("windows", {})
    except FileNotFoundError:
        return {}


def test_a_low_prompt_count_reported_once_teaches_no_window(tmp_path, interpreter_bin):
    """Issue 43 item 4 on the real server: a low count once (here from a proxy) made the
    agent learn a 1,024-token window, compact, and keep it in model-windows.json. The
    server says it runs 16,384 tokens; it did not cut the prompt."""
    proxy = LowCountProxy(URL)
    try:
        home = tmp_path / "oi-home"
        write_config(home, proxy.url, ALIAS, "model_max_output_tokens = 64")
        # ~2,200 prompt tokens: big enough for the agent to compare the count.
        log = "\n".join(f"line {i}: the nightly job finished without errors" for i in range(100))
        code, msgs, err = run(interpreter_bin, tmp_path / "work", home, f"Here is a log.\n{log}\nReply with just the word OK.")
    finally:
        proxy.close()
    assert proxy.state["rewritten"] == 1, "the proxy rewrote the first answer's usage"
    warnings = [m["message"] for m in msgs if m.get("type") == "warning"]
    assert not [w for w in warnings if "cut the conversation" in w], warnings
    assert not [m for m in msgs if m.get("type") == "context_compacted"]
    assert windows(msgs) == [(16384, "llama.cpp /props n_ctx")], windows(msgs)
    assert code == 0, err[-500:]
    assert remembered_windows(home) == {}, remembered_windows(home)


def test_a_refusal_of_a_threads_first_request_is_remembered(tmp_path, interpreter_bin):
    """Issue 43 item 4: a window learned from the server's refusal of a thread's first
    request was not saved. llama-server refuses a prompt over its 16,384 tokens before any
    prefill, so this costs no model time."""
    home = tmp_path / "oi-home"
    write_config(home, URL, ALIAS)
    words = " ".join(f"w{i % 97}" for i in range(20000))
    code, msgs, err = run(interpreter_bin, tmp_path / "work", home, f"Count these words: {words}")
    errors = [m["message"] for m in msgs if m.get("type") == "error"]
    assert code == 1, (errors, err[-500:])
    assert any("does not fit the model's context window" in e for e in errors), errors
    learned = [e["tokens"] for e in remembered_windows(home).values()]
    assert learned == [16384], remembered_windows(home)
