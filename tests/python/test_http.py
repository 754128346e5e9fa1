"""`interpreter mcp-server --listen` (MCP streamable HTTP) driven by the official Python MCP SDK's
streamable HTTP client, and hostile requests sent by hand."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import Setup, shell_call, text_turn
from example_client import CodexEvent, CodexEvents
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TIMEOUT = 60
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


@contextmanager
def http_server(
    setup: Setup, interpreter_bin, *extra: str, env: dict[str, str] | None = None, command: str = "mcp-server"
) -> Iterator[tuple[str, dict[str, str]]]:
    """Starts `interpreter mcp-server --listen 127.0.0.1:0`, yields its /mcp URL and the headers
    that authenticate to it (the token the server generated in the home's `listen-token`, unless
    `extra` says otherwise), then stops it with SIGTERM and checks that it shut down cleanly
    (exit code 143)."""
    proc = subprocess.Popen(
        [str(interpreter_bin), command, "--listen", "127.0.0.1:0", *extra],
        cwd=setup.work,
        env={**os.environ, **setup.env(), **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = None
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("listening on "):
                url = line.split(" ", 2)[2].strip()
                break
        assert url, f"the server did not report its address (exit {proc.poll()})"
        auth: dict[str, str] = {}
        if "--auth-token-env" not in extra and "--no-auth-on-loopback" not in extra:
            token = (setup.home / "listen-token").read_text().strip()
            assert len(token) >= 32 and (setup.home / "listen-token").stat().st_mode & 0o077 == 0
            auth = {"authorization": f"Bearer {token}"}
        yield url, auth
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert code == 143, f"exit code {code} after SIGTERM"


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("content-type", "application/json")
    req.add_header("accept", "application/json, text/event-stream")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.mark.anyio
async def test_sdk_runs_codex_with_an_approval_over_http(make_setup, interpreter_bin):
    setup = make_setup([shell_call(["touch", "approved.txt"]), text_turn("finished")], policy="untrusted")
    asked: list[str] = []
    events: list[CodexEvent] = []

    async def answer(ctx: Any, p: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(p.message)
        return types.ElicitResult(action="accept")

    async def on_event(e: CodexEvent) -> None:
        events.append(e)

    with http_server(setup, interpreter_bin) as (url, auth):
        with anyio.fail_after(TIMEOUT):
            async with create_mcp_http_client(headers=auth) as http, Client(
                streamable_http_client(url, http_client=http),
                mode="legacy",
                elicitation_callback=answer,
                extensions=[CodexEvents(on_event)],
            ) as client:
                tools = await client.list_tools()
                assert {t.name for t in tools.tools} == {"codex", "codex-reply"}
                result = await client.call_tool("codex", {"prompt": "touch approved.txt", "cwd": str(setup.work)})
    assert not result.is_error, result
    assert result.content[0].text == "finished"
    assert len(asked) == 1 and "touch approved.txt" in asked[0], asked
    assert (setup.work / "approved.txt").exists()
    kinds = [e.msg.get("type") for e in events]
    assert "exec_command_begin" in kinds and "task_complete" in kinds, kinds


def test_hostile_requests_are_refused(make_setup, interpreter_bin):
    setup = make_setup([text_turn("unused")])
    body = json.dumps(INIT).encode()
    with http_server(setup, interpreter_bin) as (url, auth):
        status, headers, text = post(url, body)
        assert status == 401 and b"Authorization: Bearer" in text, (status, text)
        status, _, text = post(url, body, {"origin": "http://evil.example", **auth})
        assert status == 403 and b"--allowed-origin" in text, (status, text)
        status, _, text = post(url, b"{" + b" " * (5 * 1024 * 1024) + b"}", auth)
        assert status == 413, (status, text[:200])
        status, _, text = post(url, body, {"mcp-session-id": "no-such-session", **auth})
        assert status == 404 and b"unknown session" in text, (status, text)
        status, headers, _ = post(url, body, auth)
        assert status == 200
        session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
        ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
        status, _, text = post(url, ping, {"mcp-session-id": session, **auth})
        assert status == 200 and b'"result":{}' in text, (status, text)
        req = urllib.request.Request(url, method="DELETE", headers={"mcp-session-id": session, **auth})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 204
        status, _, _ = post(url, ping, {"mcp-session-id": session, **auth})
        assert status == 404


def test_a_token_is_required_when_configured(make_setup, interpreter_bin):
    setup = make_setup([text_turn("unused")])
    body = json.dumps(INIT).encode()
    extra = ("--auth-token-env", "OI_TEST_TOKEN")
    with http_server(setup, interpreter_bin, *extra, env={"OI_TEST_TOKEN": "s3cret"}) as (url, _):
        status, headers, _ = post(url, body)
        assert status == 401 and headers.get("www-authenticate", headers.get("WWW-Authenticate")) == "Bearer"
        status, _, _ = post(url, body, {"authorization": "Bearer wrong"})
        assert status == 401
        status, _, _ = post(url, body, {"authorization": "Bearer s3cret"})
        assert status == 200
        # The scheme is case-insensitive (RFC 6750).
        status, _, _ = post(url, body, {"authorization": "bearer s3cret"})
        assert status == 200
    # An explicit token: nothing generated.
    assert not (setup.home / "listen-token").exists()


def test_the_opt_out_serves_loopback_clients_without_a_token(make_setup, interpreter_bin):
    setup = make_setup([text_turn("unused")])
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, auth):
        assert auth == {}
        status, _, text = post(url, json.dumps(INIT).encode())
        assert status == 200, (status, text)


def test_a_public_address_without_a_token_is_refused(interpreter_bin, tmp_path):
    out = subprocess.run(
        [str(interpreter_bin), "mcp-server", "--listen", "0.0.0.0:0"],
        env={**os.environ, "OPENINTERPRETER_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "--auth-token-env" in out.stderr, out
    # A short token is refused there too.
    out = subprocess.run(
        [str(interpreter_bin), "mcp-server", "--listen", "0.0.0.0:0", "--auth-token-env", "OI_T"],
        env={**os.environ, "OPENINTERPRETER_HOME": str(tmp_path), "OI_T": "s3cret"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "at least 32" in out.stderr, out


def _sse_events(resp) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event id, message) pairs of an SSE response, as they arrive."""
    event_id, data = "", []
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            yield event_id, json.loads("\n".join(data))
            event_id, data = "", []


def test_a_dropped_stream_resumes_with_last_event_id(make_setup, interpreter_bin):
    """The client loses the request's SSE stream after its first event; a GET with
    Last-Event-ID replays what it missed, in order, and continues live to the response."""
    import http.client
    import urllib.parse

    setup = make_setup([shell_call(["sleep", "1"]), text_turn("resumed fine")])
    with http_server(setup, interpreter_bin) as (url, auth):
        u = urllib.parse.urlparse(url)
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", **auth}

        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
        conn.request("POST", u.path, json.dumps(INIT), headers)
        r = conn.getresponse()
        session = r.getheader("mcp-session-id")
        assert session, r.status
        r.read()
        headers["mcp-session-id"] = session
        conn.request("POST", u.path, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers)
        assert conn.getresponse().status == 202
        conn.close()

        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "codex", "arguments": {"prompt": "sleep then answer", "cwd": str(setup.work)}},
        }
        first = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
        first.request("POST", u.path, json.dumps(call), headers)
        resp = first.getresponse()
        assert resp.status == 200 and resp.getheader("content-type", "").startswith("text/event-stream")
        first_id, first_msg = next(_sse_events(resp))
        assert first_msg.get("method") == "codex/event", first_msg
        first.close()  # the connection drops mid-turn

        stream, seq = first_id.split("/")
        again = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
        again.request("GET", u.path, headers={**headers, "last-event-id": first_id})
        resumed = again.getresponse()
        assert resumed.status == 200, resumed.read()
        ids, answer = [], None
        for event_id, msg in _sse_events(resumed):
            ids.append(event_id)
            if msg.get("id") == 7:
                answer = msg
                break
        again.close()

    assert answer is not None and "result" in answer, answer
    assert "resumed fine" in json.dumps(answer["result"]), answer
    # Same stream, no gap and no repeat after the last event the client saw.
    assert [i.split("/")[0] for i in ids] == [stream] * len(ids), ids
    assert [int(i.split("/")[1]) for i in ids] == list(range(int(seq) + 1, int(seq) + 1 + len(ids))), ids


def _first_message(body: bytes) -> dict[str, Any]:
    """The first JSON-RPC message of a JSON or SSE response body."""
    text = body.decode()
    for line in text.splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:].strip())
    return json.loads(text)


def test_app_server_listens_with_the_app_server_handshake_and_no_mcp(make_setup, interpreter_bin):
    setup = make_setup([])
    with http_server(setup, interpreter_bin, command="app-server") as (url, auth):
        app_init = {
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "ide", "version": "1.0"}, "capabilities": {}},
        }
        status, headers, body = post(url, json.dumps(app_init).encode(), auth)
        assert status == 200, body
        result = _first_message(body)["result"]
        assert result["userAgent"].endswith("ide/1.0"), result
        assert result["codexHome"] == str(setup.home), result
        session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
        status, _, body = post(
            url,
            json.dumps({"id": 2, "method": "tools/list", "params": {}}).encode(),
            {"mcp-session-id": session, **auth},
        )
        assert status == 200, body
        assert _first_message(body)["error"]["code"] == -32601, body
        # An MCP initialize is told where MCP lives.
        status, _, body = post(url, json.dumps(INIT).encode(), auth)
        err = _first_message(body)["error"]
        assert err["code"] == -32602 and "interpreter mcp-server" in err["message"], err
