"""The client configurations docs/mcp-server.md gives, run as written (the doc's blocks are
parsed here, so they cannot drift), with the clients themselves where they run here:

* Codex as an MCP client of `interpreter mcp-server`: `codex exec` (0.171, and 0.153 from
  tools/peers/package.json's `codex-0153` alias) with the doc's `[mcp_servers.openinterpreter]`
  table in a temporary CODEX_HOME. Both models are our scripted mock: Codex's model (Responses
  wire) calls our `codex` tool; our server runs a turn against its own script, which writes a
  file. Judged by the file, by the tool call Codex reports (`codex exec --json`: an
  `mcp_tool_call` item whose result carries our turn's answer), and by what Codex gave its model
  next (our answer as the call's output).
* Claude Code: the doc's `claude mcp add` command lines and its `.mcp.json`. Each command line is
  launched exactly as configured (only `interpreter` replaced by the built binary, the `$VAR`s
  filled in) and driven by the official Python SDK through a `codex` turn; Claude Code itself
  (`@anthropic-ai/claude-code`, offline) runs the `claude mcp add` line and `claude mcp list`
  connects to the server. Claude Code's own turns need Anthropic's API (no mock of that wire
  here), so no Claude Code turn calls the tool.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import REPO, shell_call, text_turn
from mcp import Client
from mcp.client.stdio import StdioServerParameters

DOC = REPO / "docs" / "mcp-server.md"

PEERS = Path(__file__).resolve().parents[2] / "tools" / "peers" / "node_modules"
VENDOR = "vendor/x86_64-unknown-linux-musl/bin/codex"
CODEX = {
    "0.171": Path(os.environ.get("CODEX_BIN", PEERS / "@openai" / "codex" / VENDOR)),
    "0.153": Path(os.environ.get("CODEX_0153_BIN", PEERS / "codex-0153" / VENDOR)),
}
ANSWER = "Our turn wrote made-by-interpreter.txt"
NAME = "openinterpreter"


def doc_block(lang: str, after: str) -> str:
    """The first ```lang block of docs/mcp-server.md after the line `after`."""
    text = DOC.read_text()
    start = text.index(after)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert m, f"no {lang} block after {after!r} in {DOC}"
    return m.group(1)


def doc_codex_table() -> dict[str, Any]:
    return tomllib.loads(doc_block("toml", "**Codex**"))["mcp_servers"][NAME]


def codex_bin(version: str) -> Path:
    path = CODEX[version]
    if not path.exists():
        message = f"Codex {version} is missing at {path}: run tools/peers/install.sh"
        if os.environ.get("OI_REQUIRE_PEERS") or os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def codex_model(tmp_path: Path, mock_model_bin: Path) -> Iterator[Any]:
    """`codex_model(responses)`: a second mock model (Codex's), its base URL and its requests."""
    started: list[subprocess.Popen] = []

    def start(responses: list[dict[str, Any]]) -> str:
        script = tmp_path / "codex-script.json"
        script.write_text(json.dumps({"responses": responses}))
        proc = subprocess.Popen(
            [str(mock_model_bin), "--script", str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening "), f"mock-model said {line!r}"
        return line.split(" ", 1)[1]

    yield start
    for proc in started:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def requests_of(url: str) -> list[dict[str, Any]]:
    import urllib.request

    base = url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(f"{base}/__mock/requests", timeout=10) as r:
        return json.load(r)


@pytest.mark.parametrize("version", ["0.171", "0.153"])
def test_codex_exec_runs_a_turn_through_our_codex_tool(version, make_setup, codex_model, interpreter_bin, tmp_path):
    codex = codex_bin(version)
    setup = make_setup([shell_call(["bash", "-c", "printf from-our-turn > made-by-interpreter.txt"]), text_turn(ANSWER)])
    arguments = {"prompt": "write made-by-interpreter.txt", "cwd": str(setup.work)}
    # Codex lists each MCP server's tools as a namespace tool (`mcp__<server>`) and routes a
    # call by namespace and name.
    codex_url = codex_model(
        [
            {
                "type": "turn",
                "tool_calls": [{"name": "codex", "namespace": f"mcp__{NAME}", "arguments": json.dumps(arguments)}],
            },
            text_turn("Codex is done."),
        ]
    )
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    # The doc's table, as written but for the binary's path and the home.
    server = doc_codex_table()
    assert server["command"] == "interpreter" and server["args"] == ["mcp-server"], server
    server["command"] = str(interpreter_bin)
    server["env"] = {**server["env"], "OPENINTERPRETER_HOME": str(setup.home)}
    (codex_home / "config.toml").write_text(
        f"""model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "{codex_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.{NAME}]
command = {json.dumps(server["command"])}
args = {json.dumps(server["args"])}
env = {{ {", ".join(f"{k} = {json.dumps(v)}" for k, v in server["env"].items())} }}
tool_timeout_sec = {server["tool_timeout_sec"]}
"""
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "RUST_LOG")}
    run = subprocess.run(
        [str(codex), "exec", "--json", "--skip-git-repo-check", "use the interpreter to write the file"],
        cwd=setup.work,
        env={**env, "CODEX_HOME": str(codex_home)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # Judged by the file first: our server really ran the turn.
    assert (setup.work / "made-by-interpreter.txt").read_text() == "from-our-turn", run.stdout + run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    calls = [
        e["item"] for e in events if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"
    ]
    assert len(calls) == 1, run.stdout + run.stderr
    call = calls[0]
    assert call["server"] == NAME and call["tool"] == "codex" and call["status"] == "completed", call
    assert ANSWER in json.dumps(call["result"]), call
    # Codex gave our answer to its model as the call's output, then finished.
    followup = json.dumps(requests_of(codex_url)[-1]["body"])
    assert ANSWER in followup, followup[:2000]
    messages = [e["item"]["text"] for e in events if e.get("item", {}).get("type") == "agent_message"]
    assert messages[-1:] == ["Codex is done."], run.stdout


CLAUDE = Path(os.environ.get("CLAUDE_BIN", PEERS / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"))


def claude_code_configs() -> list[dict[str, Any]]:
    """Each Claude Code configuration the doc gives: its `claude mcp add` lines (as written) and
    its `.mcp.json`, as the command line and environment they configure (`$VAR`s unexpanded)."""
    configs = []
    block = doc_block("bash", "**Claude Code**").replace("\\\n", " ")
    for line in block.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line)
        assert words[:3] == ["claude", "mcp", "add"], line
        cut = words.index("--")
        options, command = iter(words[3:cut]), words[cut + 1 :]
        env, names = {}, []
        for word in options:
            if word in ("-e", "--env"):
                key, value = next(options).split("=", 1)
                env[key] = value
            elif word in ("-s", "--scope", "-t", "--transport"):
                next(options)
            else:
                names.append(word)
        assert names == [NAME], line
        configs.append({"id": f"claude-mcp-add-{len(configs) + 1}", "line": line, "command": command, "env": env})
    project = json.loads(doc_block("json", "shared with everyone who works on a project"))["mcpServers"][NAME]
    assert project["type"] == "stdio", project
    configs.append({"id": "mcp-json", "line": None, "command": [project["command"], *project["args"]], "env": project["env"]})
    return configs


CLAUDE_CONFIGS = claude_code_configs()


def expand(value: str, variables: dict[str, str]) -> str:
    """`$VAR` and `${VAR}` filled in, as the shell (or Claude Code for .mcp.json) does."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables[m.group(1) or m.group(2)], value)


def user_home(setup, tmp_path: Path) -> dict[str, str]:
    """A user whose `~/.openinterpreter` is a home with the setup's config; the variables the
    documented configurations name."""
    home = tmp_path / "user"
    (home / ".openinterpreter").mkdir(parents=True)
    (home / ".openinterpreter" / "config.toml").write_text((setup.home / "config.toml").read_text())
    return {"HOME": str(home), "DEEPSEEK_API_KEY": "sk-test-not-used"}


@pytest.mark.anyio
@pytest.mark.parametrize("config", CLAUDE_CONFIGS, ids=[c["id"] for c in CLAUDE_CONFIGS])
async def test_the_documented_claude_code_configs_start_a_working_server(config, make_setup, interpreter_bin, tmp_path):
    setup = make_setup([text_turn("configured as documented")])
    variables = user_home(setup, tmp_path)
    command = [expand(word, variables) for word in config["command"]]
    assert command[:2] == ["interpreter", "mcp-server"], command
    env = {key: expand(value, variables) for key, value in config["env"].items()}
    assert env["OPENINTERPRETER_HOME"] == f"{variables['HOME']}/.openinterpreter", env
    params = StdioServerParameters(command=str(interpreter_bin), args=command[1:], env=env, cwd=str(setup.work))
    with anyio.fail_after(60):
        async with Client(params) as client:
            result = await client.call_tool("codex", {"prompt": "hello"})
    assert not result.is_error and result.content[0].text == "configured as documented", result
    # The server read the configured home: the model it names answered, and the thread is there.
    stored = list((Path(variables["HOME"]) / ".openinterpreter" / "sessions").rglob("*.jsonl"))
    assert stored, "no thread was stored under the configured OPENINTERPRETER_HOME"


def test_claude_code_adds_the_documented_server_and_connects(make_setup, interpreter_bin, tmp_path):
    """Claude Code itself (offline: no model turn) runs the doc's first `claude mcp add` line and
    `claude mcp list` starts the server and completes the MCP handshake with it."""
    if not CLAUDE.exists():
        message = f"Claude Code is missing at {CLAUDE}: run tools/peers/install.sh"
        if os.environ.get("OI_REQUIRE_PEERS") or os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    setup = make_setup([])
    variables = user_home(setup, tmp_path)
    line = CLAUDE_CONFIGS[0]["line"]
    words = [expand(w, variables) for w in shlex.split(line)]
    cut = words.index("--")
    assert words[cut + 1] == "interpreter"
    words[cut + 1] = str(interpreter_bin)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **variables,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def claude(*args: str) -> str:
        run = subprocess.run(
            [str(CLAUDE), *args], cwd=setup.work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stdout + run.stderr

    claude(*words[1:])
    shown = claude("mcp", "get", NAME)
    assert f"Command: {interpreter_bin}" in shown and "Args: mcp-server" in shown, shown
    assert f"OPENINTERPRETER_HOME={variables['HOME']}/.openinterpreter" in shown, shown
    listed = claude("mcp", "list")
    assert re.search(rf"{NAME}: .*interpreter mcp-server - ✔ Connected", listed), listed
