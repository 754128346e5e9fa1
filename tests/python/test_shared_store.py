"""Two `interpreter mcp-server` processes on one PostgreSQL thread store (docs/scale.md): a
thread started on A is continued on B with its history, and B is refused while A runs a turn
on it."""

from __future__ import annotations

import os
import shutil

import anyio
import pytest
from conftest import shell_call, text_turn
from example_client import server
from mcp import Client

pytestmark = pytest.mark.anyio
TIMEOUT = 60


def store_url() -> str:
    url = os.environ.get("OI_TEST_PG_URL")
    if not url:
        if os.environ.get("OI_REQUIRE_PG") == "1":
            pytest.fail("OI_TEST_PG_URL is not set: scripts/test.sh starts a private PostgreSQL")
        pytest.skip("no PostgreSQL: run under scripts/test.sh (or eval \"$(scripts/test-postgres.sh start)\")")
    return url


async def test_a_thread_moves_between_servers_and_is_busy_while_one_drives_it(make_setup, interpreter_bin, tmp_path):
    url = store_url()
    setup = make_setup(
        [
            text_turn("noted: kumquat"),
            text_turn("the word was kumquat"),
            shell_call(["sleep", "3"]),
            text_turn("slept"),
        ]
    )
    home_b = tmp_path / "home-b"
    home_b.mkdir()
    shutil.copy(setup.home / "config.toml", home_b / "config.toml")

    def params(home):
        p = server(str(interpreter_bin), env={**setup.env(), "OPENINTERPRETER_HOME": str(home), "OI_THREAD_STORE_URL": url})
        p.cwd = str(setup.work)
        return p

    with anyio.fail_after(TIMEOUT):
        async with Client(params(setup.home), mode="legacy") as a, Client(params(home_b), mode="legacy") as b:
            first = await a.call_tool("codex", {"prompt": "remember the word kumquat", "cwd": str(setup.work)})
            assert not first.is_error, first
            thread = first.structured_content["threadId"]

            second = await b.call_tool("codex-reply", {"threadId": thread, "prompt": "what was the word?"})
            assert not second.is_error, second
            assert "kumquat" in str(second.content)
            # B's request carried the history A wrote.
            assert "remember the word kumquat" in str(setup.requests()[-1])

            # A drives the thread again (a 3 s command); meanwhile B is told it is busy.
            async with anyio.create_task_group() as tg:
                results = {}

                async def drive() -> None:
                    results["a"] = await a.call_tool("codex-reply", {"threadId": thread, "prompt": "sleep a bit"})

                tg.start_soon(drive)
                with anyio.fail_after(TIMEOUT):
                    while len(setup.requests()) < 3:
                        await anyio.sleep(0.02)
                refused = await b.call_tool("codex-reply", {"threadId": thread, "prompt": "me too"})
                assert refused.is_error, refused
                assert "another session" in str(refused.content), refused
            assert not results["a"].is_error, results["a"]
