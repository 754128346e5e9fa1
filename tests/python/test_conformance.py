"""The MCP conformance runner (`@modelcontextprotocol/conformance`, on the Node 22 binary that
tools/peers installs) against `interpreter mcp-server --listen`: the streamable HTTP scenarios
the network transport promises (docs/mcp-server.md, "Network")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_http import http_server

PEERS_BIN = Path(__file__).resolve().parents[2] / "tools" / "peers" / "node_modules" / ".bin"

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(make_setup, interpreter_bin, scenario):
    runner = PEERS_BIN / "conformance"
    assert runner.exists(), f"{runner} is missing: run tools/peers/install.sh"
    setup = make_setup([])
    # The runner sends no token: this checks the protocol, test_http.py checks the token.
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, _):
        # The runner's own `node` (Node 22) comes first on PATH; the system one may be older.
        env = {**os.environ, "PATH": f"{PEERS_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
        run = subprocess.run(
            [str(runner), "server", "--url", url, "--scenario", scenario],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "0 failed" in out, out
    assert "SUCCESS" in out, out
