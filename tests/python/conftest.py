"""Shared fixtures: the built binaries, a per-test mock model and home directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _bin(env_var: str, default: str) -> Path:
    path = Path(os.environ.get(env_var, REPO / default))
    if not path.is_absolute():
        path = REPO / path
    if not path.exists():
        pytest.fail(f"{path} does not exist: build the workspace first (cargo build) or set {env_var}")
    return path


@pytest.fixture(scope="session")
def interpreter_bin() -> Path:
    return _bin("INTERPRETER_BIN", "target/debug/interpreter")


@pytest.fixture(scope="session")
def conformance_host_bin() -> Path:
    """The conformance host (crates/mcp-server/examples/conformance-host.rs): our MCP server with
    the conformance suite's fixtures added. A test program, built by `cargo test` (or
    `cargo build -p oi-mcp-server --example conformance-host`), never shipped."""
    return _bin("CONFORMANCE_HOST_BIN", "target/debug/examples/conformance-host")


@pytest.fixture(scope="session")
def mock_model_bin() -> Path:
    return _bin("MOCK_MODEL_BIN", "target/debug/mock-model")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Setup:
    home: Path
    work: Path
    model_url: str
    model: subprocess.Popen

    def env(self) -> dict[str, str]:
        return {"OPENINTERPRETER_HOME": str(self.home), "RUST_LOG": "warn"}

    def requests(self) -> list[dict[str, Any]]:
        import urllib.request

        base = self.model_url.rsplit("/v1", 1)[0]
        with urllib.request.urlopen(f"{base}/__mock/requests", timeout=10) as r:
            return json.load(r)


@pytest.fixture
def make_setup(tmp_path: Path, mock_model_bin: Path):
    """`make_setup(responses, policy=...)`: a mock model serving `responses` and a home whose
    config.toml points at it."""
    started: list[subprocess.Popen] = []

    def make(responses: list[dict[str, Any]], policy: str = "never", extra: str = "") -> Setup:
        home = tmp_path / "home"
        work = tmp_path / "work"
        home.mkdir(exist_ok=True)
        work.mkdir(exist_ok=True)
        script = tmp_path / "script.json"
        script.write_text(json.dumps({"responses": responses}))
        proc = subprocess.Popen(
            [str(mock_model_bin), "--script", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        line = proc.stdout.readline().strip()
        assert line.startswith("listening "), f"mock-model said {line!r}"
        url = line.split(" ", 1)[1]
        (home / "config.toml").write_text(
            f"""{extra}
model = "mock-model"
model_provider = "mock"
approval_policy = "{policy}"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "{url}"
wire_api = "chat"
request_max_retries = 0
stream_max_retries = 0
"""
        )
        return Setup(home=home, work=work, model_url=url, model=proc)

    yield make
    for proc in started:
        if proc.stdin:
            proc.stdin.close()  # mock-model exits when its stdin closes
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def shell_call(argv: list[str]) -> dict[str, Any]:
    return {"type": "turn", "tool_calls": [{"name": "shell", "arguments": json.dumps({"command": argv})}]}


def text_turn(text: str, **knobs: Any) -> dict[str, Any]:
    return {"type": "turn", "text": text, **knobs}
