"""`interpreter mcp-server` driven by the official Python MCP SDK (mcp 2.x) in the `initialize`
era (`legacy` mode: what clients of 2025-11-25 and earlier do), and where the two eras behave
alike, in `auto` mode too (which finds our `server/discover` and stays at 2026-07-28; the
2026-07-28 behaviour itself is test_mcp_modern.py's)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import Setup, shell_call, text_turn
from example_client import CodexEvent, CodexEvents, run, server
from mcp import Client

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
# What only the `initialize` era has: approvals asked with elicitation/create, and a cancelled
# call's last events.
LEGACY = ["legacy"]
TIMEOUT = 60


class Recorder:
    """Collects codex/event notifications; waits for one with a deadline."""

    def __init__(self) -> None:
        self.events: list[CodexEvent] = []

    async def __call__(self, event: CodexEvent) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.msg.get("type", "") for e in self.events]

    async def wait_for(self, kind: str) -> CodexEvent:
        with anyio.fail_after(TIMEOUT):
            while True:
                for e in self.events:
                    if e.msg.get("type") == kind:
                        return e
                await anyio.sleep(0.01)


def params(setup: Setup, interpreter_bin) -> Any:
    p = server(str(interpreter_bin), env=setup.env())
    p.cwd = str(setup.work)
    return p


@pytest.mark.filterwarnings("ignore:ping is removed")
@pytest.mark.parametrize("mode", MODES)
async def test_connects_and_lists_the_two_tools(mode, make_setup, interpreter_bin):
    setup = make_setup([])
    with anyio.fail_after(TIMEOUT):
        async with Client(params(setup, interpreter_bin), mode=mode) as client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["codex", "codex-reply"]
            codex = tools[0]
            assert codex.input_schema["required"] == ["prompt"]
            assert codex.input_schema["properties"]["approval-policy"]["enum"] == [
                "untrusted",
                "on-failure",
                "on-request",
                "never",
            ]
            assert codex.output_schema["required"] == ["threadId", "content"]
            assert "threadId" in tools[1].input_schema["properties"]
            # Never silence: empty catalogs (no threads yet, no prompt files), and in the old
            # era a live ping.
            assert (await client.list_resources()).resources == []
            assert (await client.list_prompts()).prompts == []
            if mode == "legacy":
                await client.send_ping()


@pytest.mark.parametrize("mode", MODES)
async def test_codex_runs_a_shell_call_then_codex_reply_continues(mode, make_setup, interpreter_bin):
    setup = make_setup([shell_call(["touch", "made.txt"]), text_turn("File created!"), text_turn("second turn ok")])
    rec = Recorder()
    with anyio.fail_after(TIMEOUT):
        first, second = await run(
            params(setup, interpreter_bin),
            ["create made.txt", "and again"],
            arguments={"cwd": str(setup.work)},
            on_event=rec,
            mode=mode,
        )
    assert not first.is_error, first
    assert first.content[0].text == "File created!"
    assert first.structured_content["content"] == "File created!"
    thread_id = first.structured_content["threadId"]
    assert (setup.work / "made.txt").exists()
    assert second.content[0].text == "second turn ok"
    assert second.structured_content["threadId"] == thread_id
    kinds = rec.types()
    for kind in ["session_configured", "task_started", "exec_command_begin", "exec_command_end", "task_complete"]:
        assert kind in kinds, kinds
    assert all(e.meta["threadId"] == thread_id for e in rec.events)
    # The model saw the first turn when answering the second.
    last = str(setup.requests()[-1])
    assert "create made.txt" in last and "and again" in last


@pytest.mark.parametrize("mode", LEGACY)
@pytest.mark.parametrize("action,created", [("accept", True), ("decline", False)])
async def test_approval_elicitation_is_honoured(mode, action, created, make_setup, interpreter_bin):
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    asked: list[str] = []

    async def answer(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p.message)
        return types.ElicitResult(action=action)

    with anyio.fail_after(TIMEOUT):
        (result,) = await run(
            params(setup, interpreter_bin),
            ["touch approved.txt"],
            arguments={"cwd": str(setup.work)},
            approve=answer,
            on_event=Recorder(),
            mode=mode,
        )
    assert not result.is_error, result
    assert result.content[0].text == "finished"
    assert len(asked) == 1 and "touch approved.txt" in asked[0], asked
    assert (setup.work / "approved.txt").exists() == created


@pytest.mark.parametrize("mode", LEGACY)
async def test_cancelling_a_call_interrupts_the_turn_and_keeps_the_thread(mode, make_setup, interpreter_bin):
    setup = make_setup(
        [text_turn("never finishes", chunk_size=2, stall_after_chunks=2), text_turn("after cancel")]
    )
    rec = Recorder()
    with anyio.fail_after(TIMEOUT):
        async with Client(params(setup, interpreter_bin), mode=mode, extensions=[CodexEvents(rec)]) as client:
            async with anyio.create_task_group() as tg:

                async def doomed() -> None:
                    await client.call_tool("codex", {"prompt": "long", "cwd": str(setup.work)})
                    pytest.fail("the cancelled call returned")

                scope = anyio.CancelScope()

                async def runner() -> None:
                    with scope:
                        await doomed()

                tg.start_soon(runner)
                await rec.wait_for("agent_message_delta")
                scope.cancel()  # the SDK sends notifications/cancelled
            aborted = await rec.wait_for("turn_aborted")
            thread_id = aborted.meta["threadId"]
            result = await client.call_tool("codex-reply", {"threadId": thread_id, "prompt": "still there?"})
            assert result.content[0].text == "after cancel", result


async def test_progress_and_bad_arguments(make_setup, interpreter_bin):
    setup = make_setup([text_turn("x" * 400, chunk_size=2)])
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    with anyio.fail_after(TIMEOUT):
        async with Client(params(setup, interpreter_bin), mode="legacy", extensions=[CodexEvents(Recorder())]) as client:
            ok = await client.call_tool("codex", {"prompt": "go", "cwd": str(setup.work)}, progress_callback=on_progress)
            assert ok.content[0].text == "x" * 400
            bad = await client.call_tool("codex", {"prompt": 5})
            assert bad.is_error
            assert "`prompt` must be a string" in bad.content[0].text
            missing = await client.call_tool(
                "codex-reply", {"threadId": "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11", "prompt": "hi"}
            )
            assert missing.is_error and "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11" in missing.content[0].text
    values = [v for v, _ in progress]
    assert values and values == sorted(values) and len(set(values)) == len(values), progress
    assert all(m for _, m in progress)


@pytest.mark.parametrize("action,deleted", [("accept", True), ("decline", False)])
async def test_a_downstream_servers_confirmation_is_passed_up_and_honoured(
    action, deleted, make_setup, interpreter_bin, tmp_path
):
    """A tool of a 2026-07-28 MCP server that we use asks to confirm (a multi round-trip
    request); under `interpreter mcp-server` the question goes up to the client driving us as
    `elicitation/create`, and its answer decides (the file is gone only when it accepted)."""
    import json
    import sys
    from pathlib import Path

    victim = tmp_path / "work" / "old-notes.txt"
    setup = make_setup(
        [
            {
                "type": "turn",
                "tool_calls": [
                    {"name": "mcp__files__delete_file", "arguments": json.dumps({"path": str(victim)})}
                ],
            },
            text_turn("done with the files"),
        ],
        policy="on-request",
    )
    victim.write_text("keep me")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "sdk_server.py"
    with open(setup.home / "config.toml", "a") as config:
        config.write(
            f"""
[mcp_servers.files]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(fixture))}, "--modern-only", "--marks", {json.dumps(str(setup.work))}]
required = true

[mcp_servers.files.tools.delete_file]
approval_mode = "approve"
"""
        )
    asked: list[str] = []

    async def answer(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p.message)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    with anyio.fail_after(TIMEOUT):
        (result,) = await run(
            params(setup, interpreter_bin),
            ["tidy up my notes"],
            arguments={"cwd": str(setup.work)},
            approve=answer,
            on_event=Recorder(),
            mode="legacy",
        )
    assert not result.is_error, result
    assert result.content[0].text == "done with the files"
    assert asked == [f"Delete {victim}?"], asked
    assert victim.exists() != deleted
