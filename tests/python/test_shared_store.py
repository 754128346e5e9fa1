"""Two `interpreter mcp-server` processes on one PostgreSQL thread store (docs/scale.md): a
thread started on A is continued on B with its history, and B is refused while A runs a turn
on it."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
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


class Alternating(httpx2.AsyncBaseTransport):
    """An HTTP transport that sends each request to the next of `urls` in turn (as a load
    balancer with no stickiness would), and records where each JSON-RPC method went."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = [httpx2.URL(u) for u in urls]
        self.inner = httpx2.AsyncHTTPTransport()
        self.turn = 0
        self.sent: list[tuple[str, int]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        target = self.urls[self.turn % len(self.urls)]
        try:
            method = json.loads(request.content or b"{}").get("method", "")
        except ValueError:
            method = ""
        self.sent.append((method, self.turn % len(self.urls)))
        self.turn += 1
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def next_server(self) -> int:
        return self.turn % len(self.urls)

    def servers_of(self, method: str) -> list[int]:
        return [server for m, server in self.sent if m == method]


async def test_a_fleet_resumes_a_parked_turn_and_answers_for_a_task_on_either_server(make_setup, interpreter_bin, tmp_path):
    """Two `mcp-server --listen` processes on one PostgreSQL, sharing a state key and a token;
    one 2026-07-28 client whose every request goes to the other server than the last (no
    session, no stickiness). A turn parked for approval on one server is resumed by the
    retry the other gets; a task started on one is polled, answered and finished through
    both."""
    from example_client_tasks import Tasks, TaskState, get_task, update_task
    from mcp.client.streamable_http import streamable_http_client
    from test_http import http_server

    url = store_url()
    setup = make_setup(
        [
            shell_call(["touch", "one.txt"]),
            text_turn("first done"),
            shell_call(["touch", "two.txt"]),
            text_turn("second done"),
        ],
        policy="untrusted",
    )
    home_b = tmp_path / "home-b"
    home_b.mkdir()
    shutil.copy(setup.home / "config.toml", home_b / "config.toml")
    token = "fleet-token-" + "x" * 32
    # The fleet shares the store, the token and the key sealing what clients hold.
    fleet = {"OI_THREAD_STORE_URL": url, "OI_MCP_STATE_KEY": "fleet-state-key-" + "k" * 32, "FLEET_TOKEN": token}
    auth = ("--auth-token-env", "FLEET_TOKEN")
    asked: list[str] = []
    seen: list[TaskState] = []

    async def approve(ctx, params):
        import mcp_types as types

        asked.append(params.message)
        return types.ElicitResult(action="accept")

    async def approve_task(params):
        return await approve(None, params)

    with http_server(setup, interpreter_bin, *auth, env=fleet) as (url_a, _), http_server(
        setup, interpreter_bin, *auth, env={**fleet, "OPENINTERPRETER_HOME": str(home_b)}
    ) as (url_b, _):
        alternating = Alternating([url_a, url_b])
        with anyio.fail_after(TIMEOUT):
            async with httpx2.AsyncClient(
                transport=alternating, headers={"authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
            ) as http:
                async with Client(streamable_http_client(url_a, http_client=http), mode="2026-07-28", elicitation_callback=approve) as client:
                    # The call parks on one server; the SDK's retry goes to the other.
                    first = await client.call_tool("codex", {"prompt": "touch one.txt", "cwd": str(setup.work)})
                calls = alternating.servers_of("tools/call")
                assert len(calls) == 2 and calls[0] != calls[1], alternating.sent
                assert first.content[0].text == "first done", first
                assert (setup.work / "one.txt").exists()

                # A task, started on one server; its approval is answered on the other, and
                # both report it.
                async with Client(
                    streamable_http_client(url_a, http_client=http),
                    mode="2026-07-28",
                    elicitation_callback=approve,
                    extensions=[Tasks(approve_task)],
                ) as client:
                    thread = first.structured_content["threadId"]
                    created = await client.session.call_tool(
                        "codex-reply", {"threadId": thread, "prompt": "touch two.txt"}, allow_claimed=True
                    )
                    started_on = alternating.sent[-1][1]
                    while (state := await get_task(client.session, created.task_id)).status != "input_required":
                        assert state.status == "working", state
                        await anyio.sleep(0.05)
                    seen.append(state)
                    if alternating.next_server() == started_on:
                        seen.append(await get_task(client.session, created.task_id))
                    [(key, request)] = state.input_requests.items()
                    await update_task(client.session, created.task_id, {key: await approve_task(request.params)})
                    assert alternating.sent[-1] == ("tasks/update", 1 - started_on), alternating.sent
                    while (state := await get_task(client.session, created.task_id)).status != "completed":
                        assert state.status == "working", state
                        await anyio.sleep(0.05)
                    seen.append(state)
                    seen.append(await get_task(client.session, created.task_id))
    answered_by = {server for method, server in alternating.sent if method == "tasks/get"}
    assert answered_by == {0, 1}, alternating.sent
    assert [s.status for s in seen[-2:]] == ["completed", "completed"], seen
    second = seen[-1].result
    assert second.content[0].text == "second done", second
    assert second.structured_content["threadId"] == thread
    assert (setup.work / "two.txt").exists()
    assert len(asked) == 2, asked
    # The turn's history went with the thread: the last request carried the first turn.
    assert "touch one.txt" in str(setup.requests()[-1])


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
