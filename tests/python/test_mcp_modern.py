"""`interpreter mcp-server` driven by the official Python MCP SDK (mcp 2.x) at protocol
2026-07-28 (`mode="2026-07-28"`, and `auto`, which now stays modern), over stdio and streamable
HTTP: no handshake, no session; streamed `codex` turns, cancellation, `codex-reply`, approvals
that fail closed, stored threads as resources a second client can watch, prompt files, and log
messages only for requests that ask."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import Setup, shell_call, text_turn
from example_client import CodexEvent, CodexEvents, server
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_http import http_server

pytestmark = pytest.mark.anyio

TIMEOUT = 60
TRANSPORTS = ["stdio", "http"]
MODERN = "2026-07-28"


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


@asynccontextmanager
async def connect(
    transport: str, setup: Setup, interpreter_bin, mode: str = MODERN, **kwargs: Any
) -> AsyncIterator[Client]:
    """A client of the server over `transport`; over HTTP the server runs for this client alone."""
    if transport == "stdio":
        params = server(str(interpreter_bin), env=setup.env())
        params.cwd = str(setup.work)
        async with Client(params, mode=mode, **kwargs) as client:
            yield client
        return
    with http_server(setup, interpreter_bin) as (url, auth):
        async with create_mcp_http_client(headers=auth) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode, **kwargs
        ) as client:
            yield client


def thread_uri(thread_id: str) -> str:
    return f"interpreter://threads/{thread_id}"


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    return result.contents[0].text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_auto_mode_finds_the_2026_server_and_modern_mode_needs_no_handshake(transport, make_setup, interpreter_bin):
    setup = make_setup([])
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, setup, interpreter_bin, mode="auto") as client:
            assert client.protocol_version == MODERN
            assert client.server_info.name == "openinterpreter-mcp-server"
            assert client.server_capabilities.resources.subscribe
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["codex", "codex-reply"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_streamed_codex_turn_then_codex_reply(transport, make_setup, interpreter_bin):
    setup = make_setup([shell_call(["touch", "made.txt"]), text_turn("File created!"), text_turn("second turn ok")])
    rec = Recorder()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(TIMEOUT):
        async with connect(transport, setup, interpreter_bin, extensions=[CodexEvents(rec)]) as client:
            first = await client.call_tool(
                "codex", {"prompt": "create made.txt", "cwd": str(setup.work)}, progress_callback=on_progress
            )
            assert not first.is_error, first
            thread_id = first.structured_content["threadId"]
            second = await client.call_tool("codex-reply", {"threadId": thread_id, "prompt": "and again"})
    assert first.content[0].text == "File created!"
    assert first.result_type == "complete"
    assert first.meta["io.modelcontextprotocol/serverInfo"]["name"] == "openinterpreter-mcp-server"
    assert (setup.work / "made.txt").exists()
    assert second.content[0].text == "second turn ok"
    assert second.structured_content["threadId"] == thread_id
    kinds = rec.types()
    for kind in ["session_configured", "task_started", "exec_command_begin", "exec_command_end", "task_complete"]:
        assert kind in kinds, kinds
    assert progress and progress == sorted(progress), progress


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_an_approval_comes_back_as_input_required_and_the_retry_resumes_the_turn(
    transport, action, make_setup, interpreter_bin
):
    """Multi round-trip requests: the call answers `input_required` with the approval; the SDK
    asks the elicitation callback and retries the call with the answer and the sealed state."""
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    asked: list[types.ElicitRequestParams] = []
    rec = Recorder()

    async def answer(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p)
        return types.ElicitResult(action=action)

    with anyio.fail_after(TIMEOUT):
        async with connect(
            transport, setup, interpreter_bin, elicitation_callback=answer, extensions=[CodexEvents(rec)]
        ) as client:
            result = await client.call_tool("codex", {"prompt": "touch approved.txt", "cwd": str(setup.work)})
    assert result.content[0].text == "finished", result
    assert result.result_type == "complete"
    # Asked once, with the old era's prompt (its `codex_*` keys are in the raw JSON: see
    # test_the_raw_input_required_result_carries_the_codex_keys).
    assert len(asked) == 1, asked
    assert asked[0].message == f"Allow Open Interpreter to run `touch approved.txt` in `{setup.work}`?", asked[0]
    # The resumed turn streamed its events with the retry, as a call does.
    kinds = rec.types()
    assert "turn_parked" in kinds and kinds[-1] == "task_complete", kinds
    if action == "accept":
        assert (setup.work / "approved.txt").exists()
        assert "exec_command_end" in kinds, kinds
    else:
        assert not (setup.work / "approved.txt").exists()
        assert "the user denied it" in json.dumps(setup.requests()[-1]), setup.requests()[-1]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_approvals_of_a_client_without_elicitation_fail_closed(transport, make_setup, interpreter_bin):
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, setup, interpreter_bin) as client:
            result = await client.call_tool("codex", {"prompt": "touch approved.txt", "cwd": str(setup.work)})
    assert result.content[0].text == "finished", result
    assert not (setup.work / "approved.txt").exists()
    assert "the user denied it" in json.dumps(setup.requests()[-1]), setup.requests()[-1]


async def test_a_state_another_client_got_is_refused(make_setup, interpreter_bin):
    """A requestState is bound to whom it was given: over HTTP, the bearer token. Two servers
    share one state key (as a fleet does) but take different tokens: B refuses A's client's
    state; a changed state is refused; A takes the untouched one."""
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    key = {"OI_MCP_STATE_KEY": "k" * 40}
    token_a, token_b = "a" * 40, "b" * 40
    args = {"prompt": "touch approved.txt", "cwd": str(setup.work)}
    with http_server(setup, interpreter_bin, "--auth-token-env", "T", env={**key, "T": token_a}) as (url_a, _), http_server(
        setup, interpreter_bin, "--auth-token-env", "T", env={**key, "T": token_b}
    ) as (url_b, _), anyio.fail_after(TIMEOUT):
        async with create_mcp_http_client(headers={"authorization": f"Bearer {token_a}"}) as http_a, create_mcp_http_client(
            headers={"authorization": f"Bearer {token_b}"}
        ) as http_b, Client(streamable_http_client(url_a, http_client=http_a), mode=MODERN, elicitation_callback=accept) as a, Client(
            streamable_http_client(url_b, http_client=http_b), mode=MODERN, elicitation_callback=accept
        ) as b:
            first = await a.session.call_tool("codex", args, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            [key_of_approval] = first.input_requests
            answers = {key_of_approval: {"action": "accept"}}
            with pytest.raises(MCPError, match="issued to another client"):
                await b.session.call_tool("codex", args, input_responses=answers, request_state=first.request_state)
            changed = first.request_state[:-4] + ("AAAA" if not first.request_state.endswith("AAAA") else "BBBB")
            with pytest.raises(MCPError, match="not issued by this server"):
                await a.session.call_tool("codex", args, input_responses=answers, request_state=changed)
            with pytest.raises(MCPError, match="belongs to another tool call"):
                await a.session.call_tool(
                    "codex", {**args, "prompt": "other"}, input_responses=answers, request_state=first.request_state
                )
            assert not (setup.work / "approved.txt").exists()
            done = await a.session.call_tool("codex", args, input_responses=answers, request_state=first.request_state)
    assert done.content[0].text == "finished", done
    assert (setup.work / "approved.txt").exists()


async def accept(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept")


def raw_call(url: str, auth: dict[str, str], request_id: int, params: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 `tools/call` sent by hand; its JSON-RPC response (from an SSE stream or a
    JSON body)."""
    from test_http import post

    params = {
        **params,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    }
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()
    headers = {"mcp-method": "tools/call", "mcp-name": params["name"], "mcp-protocol-version": MODERN, **auth}
    status, _, text = post(url, body, headers)
    assert status == 200, (status, text)
    messages = [json.loads(line[5:]) for line in text.decode().splitlines() if line.startswith("data:")]
    messages = messages or [json.loads(text)]
    return next(m for m in messages if m.get("id") == request_id)


def test_the_raw_input_required_result_carries_the_codex_keys(make_setup, interpreter_bin):
    """What the SDK hides from its callback: the approval's `codex_*` correlation keys, as the
    old era's `elicitation/create` has them, and an opaque `requestState`."""
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    call = {"name": "codex", "arguments": {"prompt": "touch approved.txt", "cwd": str(setup.work)}}
    with http_server(setup, interpreter_bin) as (url, auth):
        first = raw_call(url, auth, 1, call)["result"]
        assert first["resultType"] == "input_required", first
        [(key, request)] = first["inputRequests"].items()
        params = request["params"]
        assert request["method"] == "elicitation/create" and params["mode"] == "form", request
        assert params["codex_elicitation"] == "exec-approval"
        assert params["codex_command"] == ["touch", "approved.txt"]
        assert params["codex_cwd"] == str(setup.work)
        assert params["codex_mcp_tool_call_id"] == "1"
        assert params["threadId"] and params["codex_call_id"], params
        retry = {**call, "inputResponses": {key: {"action": "accept"}}, "requestState": first["requestState"]}
        done = raw_call(url, auth, 2, retry)["result"]
    assert done["resultType"] == "complete" and done["content"][0]["text"] == "finished", done
    assert done["structuredContent"]["threadId"] == params["threadId"]
    assert (setup.work / "approved.txt").exists()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cancelling_a_call_interrupts_its_turn_and_the_thread_goes_on(transport, make_setup, interpreter_bin):
    setup = make_setup([text_turn("never finishes", chunk_size=2, stall_after_chunks=2), text_turn("after cancel")])
    rec = Recorder()
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, setup, interpreter_bin, extensions=[CodexEvents(rec)]) as client:
            scope = anyio.CancelScope()

            async def doomed() -> None:
                with scope:
                    await client.call_tool("codex", {"prompt": "long", "cwd": str(setup.work)})
                    pytest.fail("the cancelled call returned")

            async with anyio.create_task_group() as tg:
                tg.start_soon(doomed)
                delta = await rec.wait_for("agent_message_delta")
                thread_id = delta.meta["threadId"]
                uri = thread_uri(thread_id)
                # Watch the thread from here on; cancelling (stdio: notifications/cancelled,
                # HTTP: closing the request's stream) must interrupt its turn.
                async with client.listen(resource_subscriptions=[uri]) as sub:
                    scope.cancel()
                    async for event in sub:
                        items = json.loads(await read_text(client, uri + "/items"))
                        if items["turns"] and items["turns"][-1]["status"] == "interrupted":
                            break
            result = await client.call_tool("codex-reply", {"threadId": thread_id, "prompt": "still there?"})
    assert result.content[0].text == "after cancel", result
    # 2026-07-28: nothing more is sent for a cancelled request.
    assert "turn_aborted" not in rec.types(), rec.types()


async def test_a_second_client_watches_a_turn_the_first_started(make_setup, interpreter_bin):
    setup = make_setup([shell_call(["sleep", "1"]), text_turn("slept well")])
    with http_server(setup, interpreter_bin) as (url, auth), anyio.fail_after(TIMEOUT):
        async with create_mcp_http_client(headers=auth) as http, Client(
            streamable_http_client(url, http_client=http), mode=MODERN
        ) as starter, Client(streamable_http_client(url, http_client=http), mode=MODERN) as watcher:
            async with anyio.create_task_group() as tg:
                async with watcher.listen(resources_list_changed=True) as threads:
                    tg.start_soon(starter.call_tool, "codex", {"prompt": "nap", "cwd": str(setup.work)})
                    async for _ in threads:
                        listed = (await watcher.list_resources()).resources
                        if listed:
                            break
                uri = str(listed[0].uri)
                async with watcher.listen(resource_subscriptions=[uri]) as updates:
                    while True:
                        items = json.loads(await read_text(watcher, uri + "/items"))
                        if items["turns"] and items["turns"][-1]["status"] == "completed":
                            break
                        await updates.__anext__()
            transcript = await read_text(watcher, uri)
    turn = items["turns"][-1]
    kinds = [i["type"] for i in turn["items"]]
    assert kinds[0] == "userMessage" and "command" in kinds and kinds[-1] == "agentMessage", kinds
    command = next(i for i in turn["items"] if i["type"] == "command")
    assert command["command"] == "sleep 1" and command["exitCode"] == 0 and command["cwd"] == ".", command
    assert "**User:**\n\nnap" in transcript and "**Ran** `sleep 1`" in transcript, transcript
    assert "slept well" in transcript
    # No path of the machine leaks: not the project's, not the home's.
    for text in (transcript, json.dumps(items)):
        assert str(setup.work) not in text and str(setup.home) not in text, text
    assert listed[0].name.startswith("thread ") and listed[0].mime_type == "text/markdown"


@pytest.mark.parametrize("mode", [MODERN, "legacy"])
async def test_prompt_files_are_prompts_in_both_eras(mode, make_setup, interpreter_bin):
    setup = make_setup([])
    prompts = setup.home / "prompts"
    prompts.mkdir()
    (prompts / "review.md").write_text("---\ndescription: Review a branch\n---\nReview $BRANCH. $ARGUMENTS\n")
    with anyio.fail_after(TIMEOUT):
        async with connect("stdio", setup, interpreter_bin, mode=mode) as client:
            listed = (await client.list_prompts()).prompts
            assert [(p.name, p.description) for p in listed] == [("review", "Review a branch")]
            assert [(a.name, a.required) for a in listed[0].arguments] == [("BRANCH", True), ("ARGUMENTS", False)]
            got = await client.get_prompt("review", {"BRANCH": "main", "ARGUMENTS": "be brief"})
            assert got.messages[0].content.text == "Review main. be brief\n"
            with pytest.raises(Exception, match="BRANCH"):
                await client.get_prompt("review", {})


async def test_the_old_era_reads_threads_as_resources_too(make_setup, interpreter_bin):
    setup = make_setup([text_turn("hello back")])
    with anyio.fail_after(TIMEOUT):
        async with connect("stdio", setup, interpreter_bin, mode="legacy") as client:
            result = await client.call_tool("codex", {"prompt": "hello", "cwd": str(setup.work)})
            uri = thread_uri(result.structured_content["threadId"])
            assert uri in [str(r.uri) for r in (await client.list_resources()).resources]
            transcript = await read_text(client, uri)
    assert "**Agent:**\n\nhello back" in transcript, transcript


async def test_log_messages_only_for_requests_that_ask(make_setup, interpreter_bin):
    setup = make_setup([text_turn("one"), text_turn("two")])
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    with anyio.fail_after(TIMEOUT):
        async with connect("stdio", setup, interpreter_bin, logging_callback=on_log) as client:
            await client.call_tool("codex", {"prompt": "quiet", "cwd": str(setup.work)})
        assert logs == []
        async with connect("stdio", setup, interpreter_bin, logging_callback=on_log, log_level="info") as client:
            await client.call_tool("codex", {"prompt": "loud", "cwd": str(setup.work)})
    levels = {log.level for log in logs}
    assert "info" in levels and "debug" not in levels, logs
    assert any("turn complete" in str(log.data) for log in logs), logs


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_documented_modern_client_runs(transport, make_setup, interpreter_bin):
    """docs/mcp-server.md shows example_client_modern.py; run it as a user would."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    setup = make_setup([text_turn("hello from the agent"), text_turn("second answer")])
    script = Path(__file__).with_name("example_client_modern.py")
    env = {**os.environ, **setup.env(), "INTERPRETER_BIN": str(interpreter_bin)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(script), *args, "say hello", "and again"],
            cwd=setup.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    if transport == "stdio":
        out = run()
    else:
        with http_server(setup, interpreter_bin) as (url, _):
            out = run("--url", url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["hello from the agent", "second answer"], out
    assert "**User:**\n\nand again" in out.stderr and "**Agent:**\n\nsecond answer" in out.stderr, out.stderr


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
@pytest.mark.filterwarnings("ignore:resources/unsubscribe is removed")
async def test_the_old_era_subscribes_to_a_thread_with_resources_subscribe(make_setup, interpreter_bin):
    setup = make_setup([text_turn("first"), text_turn("second")])
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    with anyio.fail_after(TIMEOUT):
        async with connect("stdio", setup, interpreter_bin, mode="legacy", message_handler=on_message) as client:
            first = await client.call_tool("codex", {"prompt": "one", "cwd": str(setup.work)})
            uri = thread_uri(first.structured_content["threadId"])
            await client.subscribe_resource(uri)
            await client.call_tool("codex-reply", {"threadId": first.structured_content["threadId"], "prompt": "two"})
            while uri not in updates:
                await anyio.sleep(0.01)
            await client.unsubscribe_resource(uri)
            with pytest.raises(Exception, match="Resource not found"):
                await client.subscribe_resource("interpreter://threads/0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11")


async def test_fastmcp_s_client_finds_the_2026_server_and_runs_a_turn(make_setup, interpreter_bin):
    """fastmcp's client (on the SDK's `auto`) as a second client implementation."""
    from fastmcp import Client as FastClient
    from fastmcp.client.transports import StdioTransport

    setup = make_setup([text_turn("fast answer")])
    transport = StdioTransport(command=str(interpreter_bin), args=["mcp-server"], env=setup.env(), cwd=str(setup.work))
    with anyio.fail_after(TIMEOUT):
        async with FastClient(transport) as client:
            assert [t.name for t in await client.list_tools()] == ["codex", "codex-reply"]
            result = await client.call_tool("codex", {"prompt": "hi", "cwd": str(setup.work)})
            assert client.session.protocol_version == MODERN
    assert result.content[0].text == "fast answer"
    assert result.structured_content["threadId"]


# ---------------------------------------------------------------- tasks


async def no_answer(params: types.ElicitRequestParams) -> types.ElicitResult:
    pytest.fail(f"nothing should have been asked: {params.message}")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_polls_to_an_approval_given_with_tasks_update_then_its_result(transport, make_setup, interpreter_bin):
    from example_client_tasks import TaskState, Tasks

    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    seen: list[TaskState] = []
    asked: list[str] = []

    async def on_status(state: TaskState) -> None:
        seen.append(state)

    async def answer(params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept")

    with anyio.fail_after(TIMEOUT):
        async with connect(
            transport, setup, interpreter_bin, extensions=[Tasks(answer, on_status)], elicitation_callback=accept
        ) as client:
            result = await client.call_tool("codex", {"prompt": "touch approved.txt", "cwd": str(setup.work)})
    # The same result a plain call returns.
    assert result.content[0].text == "finished", result
    assert result.structured_content["threadId"]
    assert (setup.work / "approved.txt").exists()
    assert asked == [f"Allow Open Interpreter to run `touch approved.txt` in `{setup.work}`?"], asked
    statuses = [s.status for s in seen]
    assert statuses[-1] == "completed" and "input_required" in statuses, statuses
    waiting = next(s for s in seen if s.status == "input_required")
    assert waiting.status_message == "waiting for approval: `touch approved.txt`", waiting
    assert len({s.task_id for s in seen}) == 1 and seen[0].ttl_ms and seen[0].poll_interval_ms


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tasks_cancel_stops_a_running_task_and_a_parked_one(transport, make_setup, interpreter_bin):
    from example_client_tasks import CreatedTask, cancel_task, get_task

    marker = "31.4159"
    setup = make_setup(
        [
            shell_call(["sh", "-c", f"touch started; sleep {marker}; touch finished"]),
            text_turn("unused"),
        ],
        policy="on-request",
    )
    args = {"prompt": "take your time", "cwd": str(setup.work)}

    async def poll(session: Any, task_id: str, status: str) -> Any:
        while True:
            state = await get_task(session, task_id)
            if state.status == status:
                return state
            assert state.status in ("working", "input_required"), state
            await anyio.sleep(0.05)

    with anyio.fail_after(TIMEOUT):
        from example_client_tasks import Tasks

        async with connect(transport, setup, interpreter_bin, extensions=[Tasks(no_answer)], elicitation_callback=accept) as client:
            created = await client.session.call_tool("codex", args, allow_claimed=True)
            assert isinstance(created, CreatedTask), created
            assert created.status == "working"
            while not (setup.work / "started").exists():
                await anyio.sleep(0.02)
            assert (await get_task(client.session, created.task_id)).status == "working"
            await cancel_task(client.session, created.task_id)
            cancelled = await poll(client.session, created.task_id, "cancelled")
    assert cancelled.status_message == "the turn was interrupted", cancelled
    assert not (setup.work / "finished").exists()
    # No command outlives its cancelled turn.
    with anyio.fail_after(TIMEOUT):
        while any(marker in cmdline for cmdline in process_cmdlines()):
            await anyio.sleep(0.05)


async def test_a_parked_task_is_cancelled_and_nothing_it_asked_for_runs(make_setup, interpreter_bin):
    from example_client_tasks import CreatedTask, Tasks, cancel_task, get_task

    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("unused")], policy="untrusted")
    with anyio.fail_after(TIMEOUT):
        async with connect("stdio", setup, interpreter_bin, extensions=[Tasks(no_answer)], elicitation_callback=accept) as client:
            created = await client.session.call_tool("codex", {"prompt": "touch it", "cwd": str(setup.work)}, allow_claimed=True)
            assert isinstance(created, CreatedTask), created
            while (state := await get_task(client.session, created.task_id)).status != "input_required":
                await anyio.sleep(0.05)
            assert state.input_requests and len(state.input_requests) == 1, state
            await cancel_task(client.session, created.task_id)
            while (state := await get_task(client.session, created.task_id)).status != "cancelled":
                assert state.status == "input_required", state
                await anyio.sleep(0.05)
    assert not (setup.work / "approved.txt").exists()


async def test_a_task_outlives_the_connection_that_started_it(make_setup, interpreter_bin):
    """Over HTTP, another connection (another client process, say) follows the task by its id."""
    from example_client_tasks import CreatedTask, Tasks, follow

    setup = make_setup([shell_call(["sleep", "1"]), text_turn("slept well")])
    with http_server(setup, interpreter_bin) as (url, auth), anyio.fail_after(TIMEOUT):
        async with create_mcp_http_client(headers=auth) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=MODERN, extensions=[Tasks(no_answer)]) as first:
                created = await first.session.call_tool("codex", {"prompt": "nap", "cwd": str(setup.work)}, allow_claimed=True)
            assert isinstance(created, CreatedTask), created
            async with Client(streamable_http_client(url, http_client=http), mode=MODERN, extensions=[Tasks(no_answer)]) as second:
                result = await follow(second.session, created.task_id, no_answer)
    assert result.content[0].text == "slept well", result


def process_cmdlines() -> list[str]:
    from pathlib import Path

    lines = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                lines.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return lines
