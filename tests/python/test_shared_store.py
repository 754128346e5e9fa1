"""Two `interpreter mcp-server` processes on one PostgreSQL thread store (docs/scale.md): a
thread started on A is continued on B with its history, and B is refused while A runs a turn
on it."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

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


async def test_2026_requests_alternate_between_two_servers_with_no_session(make_setup, interpreter_bin, tmp_path):
    """MCP 2026-07-28 over HTTP: no session ties a client to a server, so requests of one
    client can go to either of two servers on one store. A starts the thread; B shows it as a
    resource and continues it with its history."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from test_http import http_server

    url = store_url()
    setup = make_setup([text_turn("noted: kumquat"), text_turn("the word was kumquat")])
    home_b = tmp_path / "home-b"
    home_b.mkdir()
    shutil.copy(setup.home / "config.toml", home_b / "config.toml")
    store = {"OI_THREAD_STORE_URL": url}
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback", env=store) as (url_a, _), http_server(
        setup, interpreter_bin, "--no-auth-on-loopback", env={**store, "OPENINTERPRETER_HOME": str(home_b)}
    ) as (url_b, _):
        with anyio.fail_after(TIMEOUT):
            async with create_mcp_http_client() as http, Client(
                streamable_http_client(url_a, http_client=http), mode="2026-07-28"
            ) as a, Client(streamable_http_client(url_b, http_client=http), mode="2026-07-28") as b:
                first = await a.call_tool("codex", {"prompt": "remember the word kumquat", "cwd": str(setup.work)})
                assert not first.is_error, first
                thread = first.structured_content["threadId"]
                uri = f"interpreter://threads/{thread}"
                assert uri in [str(r.uri) for r in (await b.list_resources()).resources]
                transcript = (await b.read_resource(uri)).contents[0].text
                assert "remember the word kumquat" in transcript and "noted: kumquat" in transcript, transcript
                second = await b.call_tool("codex-reply", {"threadId": thread, "prompt": "what was the word?"})
                assert not second.is_error, second
                assert "kumquat" in str(second.content)
    # B's request carried the history A wrote.
    assert "remember the word kumquat" in str(setup.requests()[-1])


class PrivatePostgres:
    """A PostgreSQL server of this test's own (scripts/test-postgres.sh start), which the
    test may stop and start again without disturbing the shared one."""

    def __init__(self) -> None:
        repo = Path(__file__).resolve().parents[2]
        self.script = repo / "scripts" / "test-postgres.sh"
        out = subprocess.run([str(self.script), "start"], check=True, capture_output=True, text=True).stdout
        values = dict(re.findall(r"export (\w+)='([^']*)'", out))
        self.url = values["OI_TEST_PG_URL"]
        self.dir = values["OI_TEST_PG_DIR"]
        self.port = urlsplit(self.url).port
        bin_dir = shutil.which("pg_ctl")
        self.pg_ctl = bin_dir or sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))[-1]

    def _as_server_user(self, *argv: str) -> None:
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--reset-env", "--"] if os.getuid() == 0 else []
        subprocess.run([*prefix, *argv], check=True, capture_output=True, cwd=self.dir)

    def stop(self) -> None:
        """Stops at once, as a crash would, and waits until the server is gone."""
        self._as_server_user(self.pg_ctl, "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='{self.dir}' -c fsync=off"
        self._as_server_user(self.pg_ctl, "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", "-w", "-t", "60", "-o", options, "start")

    def remove(self) -> None:
        subprocess.run([str(self.script), "stop", self.dir], check=False, capture_output=True)


@pytest.fixture
def private_pg():
    if not (shutil.which("pg_ctl") or glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")):
        if os.environ.get("OI_REQUIRE_PG") == "1":
            pytest.fail("PostgreSQL is not installed: run tools/peers/install.sh")
        pytest.skip("PostgreSQL is not installed")
    pg = PrivatePostgres()
    try:
        yield pg
    finally:
        pg.remove()


async def wait_for_file(path: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        while not path.exists():
            await anyio.sleep(0.02)


async def test_a_turn_the_database_missed_is_an_error_and_is_saved_when_it_is_back(make_setup, interpreter_bin, tmp_path, private_pg):
    setup = make_setup(
        [
            # The command waits for the test, which stops the database meanwhile.
            shell_call(["sh", "-c", "touch started; while [ ! -e go ]; do sleep 0.05; done"]),
            text_turn("the answer is 42"),
            text_turn("second answer"),
            text_turn("B saw it"),
        ]
    )
    timeouts = "\n[thread_store]\nconnect_timeout_sec = 3\nstatement_timeout_sec = 3\n"
    with open(setup.home / "config.toml", "a") as f:
        f.write(timeouts)
    home_b = tmp_path / "home-b"
    home_b.mkdir()
    shutil.copy(setup.home / "config.toml", home_b / "config.toml")

    def params(home):
        p = server(str(interpreter_bin), env={**setup.env(), "OPENINTERPRETER_HOME": str(home), "OI_THREAD_STORE_URL": private_pg.url})
        p.cwd = str(setup.work)
        return p

    with anyio.fail_after(TIMEOUT * 2):
        async with Client(params(setup.home), mode="legacy") as a:
            results = {}

            async def drive() -> None:
                results["first"] = await a.call_tool("codex", {"prompt": "what is the answer?", "cwd": str(setup.work)})

            async with anyio.create_task_group() as tg:
                tg.start_soon(drive)
                await wait_for_file(setup.work / "started")
                private_pg.stop()
                (setup.work / "go").touch()
            first = results["first"]
            # Not a success: the answer and the turn's end are not in the store. The answer
            # itself still reaches the client.
            assert first.is_error, first
            text = str(first.content)
            assert "not saved completely" in text, text
            assert "the answer is 42" in text, text
            thread = first.structured_content["threadId"]

            # The database comes back: the kept records are written before the next turn's.
            private_pg.start()
            second = await a.call_tool("codex-reply", {"threadId": thread, "prompt": "and now?"})
            assert not second.is_error, second
            assert "second answer" in str(second.content)

        # Another server continues the thread with the whole first turn in its history.
        async with Client(params(home_b), mode="legacy") as b:
            third = await b.call_tool("codex-reply", {"threadId": thread, "prompt": "what did you say first?"})
            assert not third.is_error, third
            seen = str(setup.requests()[-1])
            assert "the answer is 42" in seen, seen
            assert "second answer" in seen, seen
