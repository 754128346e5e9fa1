"""Drive `interpreter mcp-server` from the official Python MCP SDK (`pip install mcp`).

Starts a session with the `codex` tool, prints the agent's live events, answers approval
prompts, then continues the same thread with `codex-reply`.

    python example_client.py "create hello.txt containing hi" "now show me the file"

This file is also imported by the test suite (tests/python/test_mcp_server.py), so the
documented code path is the tested one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.client.stdio import StdioServerParameters, get_default_environment
from pydantic import BaseModel, ConfigDict, Field


class CodexEvent(BaseModel):
    """Params of a `codex/event` notification: one engine event of a running turn."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    meta: dict[str, Any] = Field(default_factory=dict, alias="_meta")  # {requestId, threadId}
    id: str = ""  # the turn id ("" for session_configured)
    msg: dict[str, Any]  # {"type": "task_started" | "agent_message_delta" | ..., ...}


class CodexEvents(ClientExtension):
    """Receives the server's `codex/event` notifications (custom, so the SDK needs a binding)."""

    identifier = "ai.openinterpreter/codex-events"

    def __init__(self, on_event: Callable[[CodexEvent], Awaitable[None]]) -> None:
        self._on_event = on_event

    def notifications(self) -> list[NotificationBinding[Any]]:
        return [NotificationBinding(method="codex/event", params_type=CodexEvent, handler=self._on_event)]


async def print_event(event: CodexEvent) -> None:
    kind = event.msg.get("type")
    if kind == "exec_command_begin":
        print("$", " ".join(event.msg["command"]), file=sys.stderr)
    elif kind == "agent_message":
        print("agent:", event.msg["message"], file=sys.stderr)


async def ask_user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Approval prompts arrive as elicitation requests; answer with accept or decline."""
    answer = await anyio.to_thread.run_sync(input, f"{params.message} [y/N] ")
    return types.ElicitResult(action="accept" if answer.strip().lower() == "y" else "decline")


# The SDK starts servers with a minimal environment (PATH, HOME, ...). Without these the server
# would not find your config home or your provider's API key and fall back to local Ollama.
PASS_THROUGH = (
    "OPENINTERPRETER_HOME",
    "OLLAMA_BASE_URL",
    "OPENROUTER_API_KEY",
    "MOONSHOT_API_KEY",
    "ZHIPU_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_API_KEY",
    "RUST_LOG",
)


def server_env() -> dict[str, str]:
    env = get_default_environment()
    env.update({k: v for k in PASS_THROUGH if (v := os.environ.get(k))})
    return env


def server(command: str = "interpreter", env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=command, args=["mcp-server"], env=server_env() if env is None else env)


async def run(
    params: StdioServerParameters,
    prompts: list[str],
    *,
    arguments: dict[str, Any] | None = None,
    approve: Any = ask_user,
    on_event: Callable[[CodexEvent], Awaitable[None]] = print_event,
    mode: str = "legacy",
) -> list[types.CallToolResult]:
    """Runs the first prompt with `codex`, the others with `codex-reply` on the same thread."""
    results: list[types.CallToolResult] = []
    async with Client(params, mode=mode, elicitation_callback=approve, extensions=[CodexEvents(on_event)]) as client:
        first = await client.call_tool("codex", {"prompt": prompts[0], **(arguments or {})})
        results.append(first)
        if first.is_error:
            return results
        thread_id = first.structured_content["threadId"]
        for prompt in prompts[1:]:
            results.append(await client.call_tool("codex-reply", {"threadId": thread_id, "prompt": prompt}))
    return results


async def main() -> None:
    command = os.environ.get("INTERPRETER_BIN", "interpreter")
    for result in await run(server(command), sys.argv[1:] or ["say hello"]):
        print(result.content[0].text)


if __name__ == "__main__":
    anyio.run(main)
