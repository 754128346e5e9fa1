"""Drive `interpreter mcp-server` at MCP 2026-07-28 from the official Python MCP SDK.

No handshake and no session: every request says what it is. Starts a session with `codex`,
prints its live events, continues it with `codex-reply`, then reads the stored thread as a
resource (a Markdown transcript). Approvals come back as multi round-trip results: the call
answers `input_required` with the approval as an elicitation request, the SDK asks
`ask_user`, and retries the call with the answer, which resumes the agent's turn.

    python example_client_modern.py "create hello.txt containing hi" "now show me the file"
    python example_client_modern.py --url http://127.0.0.1:8765/mcp "what does this repo do?"

Tested by tests/python/test_mcp_modern.py, over stdio and HTTP.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from example_client import CodexEvents, ask_user, print_event, server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def run(client: Client, prompts: list[str], arguments: dict[str, Any] | None = None) -> tuple[list[types.CallToolResult], str]:
    """Runs the first prompt with `codex`, the others with `codex-reply`; returns the results and
    the thread's transcript."""
    first = await client.call_tool("codex", {"prompt": prompts[0], **(arguments or {})})
    if first.is_error:
        return [first], ""
    thread_id = first.structured_content["threadId"]
    results = [first]
    for prompt in prompts[1:]:
        results.append(await client.call_tool("codex-reply", {"threadId": thread_id, "prompt": prompt}))
    transcript = await client.read_resource(f"interpreter://threads/{thread_id}")
    return results, transcript.contents[0].text


async def main() -> None:
    args = sys.argv[1:]
    url = None
    if args[:1] == ["--url"]:
        url, args = args[1], args[2:]
    prompts = args or ["say hello"]
    # Declaring elicitation (by giving a callback) is what lets the server ask for approvals.
    options: dict[str, Any] = {"mode": "2026-07-28", "extensions": [CodexEvents(print_event)], "elicitation_callback": ask_user}
    if url is None:
        # stdio: the server is started for this client.
        target = server(os.environ.get("INTERPRETER_BIN", "interpreter"))
        async with Client(target, **options) as client:
            results, transcript = await run(client, prompts)
    else:
        # `interpreter mcp-server --listen 127.0.0.1:8765`: send the token it keeps.
        home = Path(os.environ.get("OPENINTERPRETER_HOME", Path.home() / ".openinterpreter"))
        token = (home / "listen-token").read_text().strip()
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, Client(
            streamable_http_client(url, http_client=http), **options
        ) as client:
            results, transcript = await run(client, prompts)
    for result in results:
        print(result.content[0].text)
    print(transcript, file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
