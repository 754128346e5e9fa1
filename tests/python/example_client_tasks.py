"""Run `interpreter mcp-server` turns as tasks (MCP 2026-07-28, the Tasks extension
`io.modelcontextprotocol/tasks`) from the official Python MCP SDK.

A client that declares the extension gets a task at once from `codex` / `codex-reply`, and
polls it with `tasks/get`: `working` (the status message says what runs), `input_required`
(an approval, answered with `tasks/update`), then `completed` with the same result a plain
call returns (or `cancelled`, `failed`). The task outlives the connection: keep its id and
poll it later, from any server of the fleet.

The SDK has no Tasks client of its own; `Tasks` below is one (a `ClientExtension` that claims
`resultType: "task"`), so `client.call_tool` still returns the final `CallToolResult`.

    python example_client_tasks.py "run the test suite and fix what fails"

Tested by tests/python/test_mcp_modern.py (over stdio and HTTP) and
tests/python/test_shared_store.py (two servers, one client alternating between them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import mcp_types as types
from example_client import server
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession

TASKS = "io.modelcontextprotocol/tasks"


class CreatedTask(types.Result):
    """`resultType: "task"`: the call runs on as a task."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskState(types.Result):
    """What `tasks/get` says about a task."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, types.ElicitRequest] | None = None
    result: types.CallToolResult | None = None
    error: dict[str, Any] | None = None


class TaskRef(types.RequestParams):
    task_id: str


class TaskAnswers(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskRef, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskRef
    name_param = "taskId"  # the Mcp-Name header the extension requires over HTTP


class UpdateTask(types.Request[TaskAnswers, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: TaskAnswers
    name_param = "taskId"


class CancelTask(types.Request[TaskRef, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskRef
    name_param = "taskId"


class Ack(types.Result):
    """The empty answer of `tasks/update` and `tasks/cancel`."""


async def get_task(session: ClientSession, task_id: str) -> TaskState:
    return await session.send_request(GetTask(params=TaskRef(task_id=task_id)), TaskState)


async def update_task(session: ClientSession, task_id: str, answers: dict[str, types.ElicitResult]) -> None:
    responses = {key: answer.model_dump(by_alias=True, exclude_none=True) for key, answer in answers.items()}
    await session.send_request(UpdateTask(params=TaskAnswers(task_id=task_id, input_responses=responses)), Ack)


async def cancel_task(session: ClientSession, task_id: str) -> None:
    await session.send_request(CancelTask(params=TaskRef(task_id=task_id)), Ack)


Answer = Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]]


async def follow(
    session: ClientSession,
    task_id: str,
    answer: Answer,
    on_status: Callable[[TaskState], Awaitable[None]] | None = None,
) -> types.CallToolResult:
    """Polls the task until it ends, answering its approvals with `answer`."""
    answered: set[str] = set()
    while True:
        state = await get_task(session, task_id)
        if on_status is not None:
            await on_status(state)
        if state.status == "completed" and state.result is not None:
            return state.result
        if state.status == "failed":
            raise RuntimeError(f"task {task_id} failed: {state.error}")
        if state.status == "cancelled":
            return types.CallToolResult(content=[types.TextContent(text=state.status_message or "cancelled")], is_error=True)
        # Each approval has its own key for the task's whole life: answer each one once.
        waiting = {k: r for k, r in (state.input_requests or {}).items() if k not in answered}
        if waiting:
            answers = {key: await answer(request.params) for key, request in waiting.items()}
            await update_task(session, task_id, answers)
            answered.update(answers)
            continue
        await anyio.sleep((state.poll_interval_ms or 1000) / 1000)


class Tasks(ClientExtension):
    """Declares the Tasks extension and follows the tasks the server returns to the end."""

    identifier = TASKS

    def __init__(self, answer: Answer, on_status: Callable[[TaskState], Awaitable[None]] | None = None) -> None:
        self._answer = answer
        self._on_status = on_status

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        return await follow(ctx.session, created.task_id, self._answer, self._on_status)


async def ask(params: types.ElicitRequestParams) -> types.ElicitResult:
    answer = await anyio.to_thread.run_sync(input, f"{params.message} [y/N] ")
    return types.ElicitResult(action="accept" if answer.strip().lower() == "y" else "decline")


async def show(state: TaskState) -> None:
    print(f"[{state.status}] {state.status_message or ''}", file=sys.stderr)


async def main() -> None:
    prompt = " ".join(sys.argv[1:]) or "say hello"
    target = server(os.environ.get("INTERPRETER_BIN", "interpreter"))

    async def approve(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await ask(params)

    # Declaring elicitation too lets the task stop at approvals (else they are denied).
    async with Client(target, mode="2026-07-28", extensions=[Tasks(ask, show)], elicitation_callback=approve) as client:
        result = await client.call_tool("codex", {"prompt": prompt})
    print(result.content[0].text)


if __name__ == "__main__":
    anyio.run(main)
