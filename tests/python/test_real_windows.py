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
