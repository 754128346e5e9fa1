//! `interpreter app-server --listen ws://127.0.0.1:0` driven as Codex's remote clients drive
//! it (issue 25): a WebSocket, one JSON-RPC message per text frame, the bearer token, and a
//! whole session — start, a turn with an approval, an interrupted turn, lists, and a resume
//! on a second connection. Every response, notification and server request is checked
//! against Codex 0.171's schema facts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::codex_schema;
use crate::common;

use codex_schema::CodexSchema;
use common::{Server, TestEnv, codex_bin, start_ws_server as start_with};
use futures::{SinkExt, StreamExt};
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const WAIT: Duration = Duration::from_secs(60);

async fn start(env: &TestEnv) -> Server {
    start_with(env, &[]).await
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An app-server client over one WebSocket, checking everything it receives.
struct Client {
    ws: Socket,
    next_id: i64,
    methods: HashMap<i64, String>,
    pending: Vec<Value>,
    seen: Vec<Value>,
    schema: CodexSchema,
    problems: Vec<String>,
}

impl Client {
    async fn connect(server: &Server) -> Client {
        let mut req = server.url.as_str().into_client_request().unwrap();
        req.headers_mut().insert(
            "authorization",
            format!("Bearer {}", server.token).parse().unwrap(),
        );
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        Client {
            ws,
            next_id: 0,
            methods: HashMap::new(),
            pending: Vec::new(),
            seen: Vec::new(),
            schema: CodexSchema::load(),
            problems: Vec::new(),
        }
    }

    async fn send(&mut self, v: Value) {
        self.ws.send(Message::text(v.to_string())).await.unwrap();
    }

    async fn take(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i);
        }
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no matching message; pending: {:?}", self.pending))
                .expect("the server closed the socket")
                .unwrap();
            let text = match frame {
                Message::Text(t) => t.to_string(),
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("not a text frame: {other:?}"),
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            let response_to = v
                .get("method")
                .is_none()
                .then(|| {
                    v["id"]
                        .as_i64()
                        .and_then(|id| self.methods.get(&id).cloned())
                })
                .flatten();
            let found = self.schema.check(&v, response_to.as_deref());
            self.problems.extend(found);
            self.seen.push(v.clone());
            if pred(&v) {
                return v;
            }
            self.pending.push(v);
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.methods.insert(id, method.to_string());
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        self.take(|v| v["id"] == id && v.get("method").is_none())
            .await
    }

    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    async fn notification(&mut self, method: &str) -> Value {
        self.take(|v| v["method"] == method && v.get("id").is_none())
            .await["params"]
            .clone()
    }

    async fn initialize(&mut self) {
        let init = self
            .ok(
                "initialize",
                json!({"clientInfo": {"name": "codex-tui", "version": "0.171.0"},
                       "capabilities": {"experimentalApi": true}}),
            )
            .await;
        assert!(init["userAgent"].is_string(), "{init}");
        self.send(json!({"method": "initialized"})).await;
    }

    async fn start_turn(&mut self, thread_id: &str, text: &str) -> String {
        let turn = self
            .ok(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": text, "text_elements": []}]}),
            )
            .await;
        turn["turn"]["id"].as_str().unwrap().to_string()
    }

    /// Every schema problem seen so far, and which methods were checked.
    fn assert_valid(&self) {
        assert!(
            self.problems.is_empty(),
            "messages that do not fit Codex 0.171's schema:\n{}",
            self.problems.join("\n")
        );
    }
}

fn script() -> MockScript {
    MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "approved.txt"]})),
        MockTurn::text("touched it"),
        MockTurn::text("this answer never ends")
            .chunked(1)
            .stall_after(2),
        MockTurn::text("back again"),
    ])
}

#[tokio::test]
async fn a_whole_session_over_websocket_fits_codex_schema() {
    let env = TestEnv::new(script(), WireApi::Chat).await;
    let server = start(&env).await;
    let work = env.work();

    let mut a = Client::connect(&server).await;
    a.initialize().await;
    let started = a
        .ok(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
        )
        .await;
    let thread_id = started["thread"]["id"].as_str().unwrap().to_string();

    // A turn with an approval.
    let turn_id = a.start_turn(&thread_id, "touch a file").await;
    let approval = a
        .take(|v| v["method"] == "item/commandExecution/requestApproval" && v.get("id").is_some())
        .await;
    assert_eq!(approval["params"]["turnId"], json!(turn_id));
    a.send(json!({"id": approval["id"], "result": {"decision": "accept"}}))
        .await;
    let done = a.notification("turn/completed").await;
    assert_eq!(done["turn"]["status"], "completed", "{done}");
    // Codex's order: the thread goes idle, then its turn is reported complete.
    let completed = a
        .seen
        .iter()
        .position(|v| {
            v["method"] == "turn/completed" && v["params"]["turn"]["id"] == json!(turn_id)
        })
        .expect("turn/completed was seen");
    let before = &a.seen[completed - 1];
    assert_eq!(before["method"], "thread/status/changed", "{before}");
    assert_eq!(before["params"]["status"]["type"], "idle", "{before}");
    assert!(
        work.join("approved.txt").exists(),
        "the approved command did not run"
    );

    // A turn that never ends by itself, interrupted.
    let stalled = a.start_turn(&thread_id, "say something long").await;
    // Interrupt once the model is streaming this turn's answer.
    a.take(|v| v["method"] == "item/agentMessage/delta" && v["params"]["turnId"] == json!(stalled))
        .await;
    a.ok(
        "turn/interrupt",
        json!({"threadId": thread_id, "turnId": stalled}),
    )
    .await;
    let done = a.notification("turn/completed").await;
    assert_eq!(done["turn"]["id"], json!(stalled));
    assert_eq!(done["turn"]["status"], "interrupted", "{done}");

    // The lists Codex's TUI shows.
    for key in ["recency_at", "section_position", "created_at"] {
        let page = a
            .ok("thread/list", json!({"limit": 10, "sortKey": key}))
            .await;
        let ids: Vec<&str> = page["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["id"].as_str())
            .collect();
        assert!(ids.contains(&thread_id.as_str()), "{key}: {page}");
    }
    let loaded = a.ok("thread/loaded/list", json!({})).await;
    assert!(
        loaded["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == &json!(thread_id)),
        "{loaded}"
    );
    let turns = a
        .ok("thread/turns/list", json!({"threadId": thread_id}))
        .await;
    assert_eq!(turns["data"].as_array().unwrap().len(), 2, "{turns}");
    a.ok("model/list", json!({})).await;
    a.assert_valid();
    a.ws.close(None).await.unwrap();

    // A second connection resumes the thread and runs a turn on it.
    let mut b = Client::connect(&server).await;
    b.initialize().await;
    let resumed = b.ok("thread/resume", json!({"threadId": thread_id})).await;
    assert_eq!(resumed["thread"]["id"], json!(thread_id));
    assert_eq!(
        resumed["thread"]["turns"].as_array().unwrap().len(),
        2,
        "{resumed}"
    );
    b.start_turn(&thread_id, "are you back?").await;
    let done = b.notification("turn/completed").await;
    assert_eq!(done["turn"]["status"], "completed", "{done}");
    assert!(
        done["turn"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["text"] == "back again"),
        "{done}"
    );
    b.assert_valid();

    let checked: Vec<&String> = a.schema.checked.union(&b.schema.checked).collect();
    for method in [
        "initialize",
        "thread/start",
        "turn/start",
        "item/commandExecution/requestApproval",
        "item/started",
        "item/completed",
        "turn/completed",
        "thread/status/changed",
        "thread/list",
        "thread/resume",
    ] {
        assert!(
            checked.iter().any(|m| *m == method),
            "{method} was not checked against the schema; checked: {checked:?}"
        );
    }
}

#[tokio::test]
async fn the_websocket_listener_wants_the_token_and_a_local_origin() {
    let env = TestEnv::new(MockScript::default(), WireApi::Chat).await;
    let server = start(&env).await;
    let refused = |req| async move {
        match tokio_tungstenite::connect_async(req).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => resp.status().as_u16(),
            other => panic!("expected an HTTP refusal, got {:?}", other.map(|(_, r)| r)),
        }
    };
    let bare = server.url.as_str().into_client_request().unwrap();
    assert_eq!(refused(bare).await, 401);
    let mut wrong = server.url.as_str().into_client_request().unwrap();
    wrong
        .headers_mut()
        .insert("authorization", "Bearer nope".parse().unwrap());
    assert_eq!(refused(wrong).await, 401);
    let mut foreign = server.url.as_str().into_client_request().unwrap();
    foreign.headers_mut().insert(
        "authorization",
        format!("Bearer {}", server.token).parse().unwrap(),
    );
    foreign
        .headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    assert_eq!(refused(foreign).await, 403);
    // Supervisors probe these without a token.
    let health = server.url.replace("ws://", "http://") + "/healthz";
    let addr = health
        .trim_start_matches("http://")
        .trim_end_matches("/healthz");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(
            format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

#[test]
fn the_schema_check_catches_what_codex_would_refuse() {
    let mut schema = CodexSchema::load();
    let turn = json!({"method": "turn/completed",
                      "params": {"threadId": "t", "turn": {"id": null, "items": [], "status": "completed"}}});
    let problems = schema.check(&turn, None);
    assert!(
        problems.iter().any(|p| p.contains("`id` is null")),
        "{problems:?}"
    );
    let models =
        json!({"id": 1, "result": {"data": [{"id": "m", "defaultReasoningEffort": null}]}});
    let problems = schema.check(&models, Some("model/list"));
    assert!(
        problems
            .iter()
            .any(|p| p.contains("defaultReasoningEffort")),
        "{problems:?}"
    );
    let status = json!({"method": "thread/status/changed",
                        "params": {"threadId": "t", "status": {"type": "sleeping"}}});
    let problems = schema.check(&status, None);
    assert!(
        problems.iter().any(|p| p.contains("sleeping")),
        "{problems:?}"
    );
}

/// Runs `codex exec --remote` against `server` with `args`; returns stdout and stderr of a
/// run that succeeded.
async fn codex_exec(
    codex: &std::path::Path,
    env: &TestEnv,
    server: &Server,
    args: &[&str],
) -> (String, String) {
    let codex_home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(codex)
        .args(["exec", "--remote", &server.url])
        .args(["--remote-auth-token-env", "OI_TOKEN"])
        .args(args)
        .current_dir(env.work())
        .env("CODEX_HOME", codex_home.path())
        .env("OI_TOKEN", &server.token)
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(WAIT, out).await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "codex exec failed: {stderr}\n{stdout}"
    );
    (stdout, stderr)
}

#[tokio::test]
async fn codex_exec_remote_runs_a_text_turn_a_shell_turn_and_resume() {
    let Some(codex) = codex_bin() else {
        return;
    };
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("hello from an open model"),
            MockTurn::tool_call("shell", json!({"command": ["touch", "made-by-codex.txt"]})),
            MockTurn::text("made it"),
            MockTurn::text("still here"),
        ]),
        WireApi::Chat,
    )
    .await;
    let server = start_with(&env, &["-s", "danger-full-access", "-a", "never"]).await;
    let (stdout, stderr) = codex_exec(&codex, &env, &server, &["say hello"]).await;
    assert!(
        stdout.contains("hello from an open model"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let (stdout, stderr) = codex_exec(&codex, &env, &server, &["make a file"]).await;
    assert!(
        stdout.contains("made it"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        env.work().join("made-by-codex.txt").exists(),
        "the shell turn did not run; stderr: {stderr}"
    );

    // Resume the newest thread by id, as `codex exec --remote` allows.
    let mut c = Client::connect(&server).await;
    c.initialize().await;
    let list = c.ok("thread/list", json!({"limit": 1})).await;
    let newest = list["data"][0]["id"].as_str().unwrap().to_string();
    let (stdout, stderr) =
        codex_exec(&codex, &env, &server, &["resume", &newest, "still there?"]).await;
    assert!(
        stdout.contains("still here"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let turns = c.ok("thread/turns/list", json!({"threadId": newest})).await;
    assert_eq!(turns["data"].as_array().unwrap().len(), 2, "{turns}");
}

/// What Codex 0.171's TUI calls during a session beyond the basics (recorded against
/// `codex app-server`; docs/v2-api.md): `!command` (`thread/shellCommand`), `/model` and
/// `/permissions` (`thread/settings/update`, `permissionProfile/list`), `/review`
/// (`review/start`) and `/experimental` (`experimentalFeature/list`), each answered and
/// checked against Codex's schema.
#[tokio::test]
async fn the_session_methods_of_codex_tui_over_websocket() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("found nothing to fix"),
            MockTurn::text("answered by the other model"),
        ]),
        WireApi::Chat,
    )
    .await;
    let server = start(&env).await;
    let work = env.work();
    let mut c = Client::connect(&server).await;
    c.initialize().await;
    let started = c
        .ok(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "never", "sandbox": "danger-full-access"}),
        )
        .await;
    let thread_id = started["thread"]["id"].as_str().unwrap().to_string();

    // `!command`: runs now in the thread's folder, reported as a turn of its own.
    let done = c
        .ok(
            "thread/shellCommand",
            json!({"threadId": thread_id, "command": "echo from-shell > shell.txt && echo ran"}),
        )
        .await;
    assert_eq!(done, json!({}));
    let item = c
        .take(|v| v["method"] == "item/completed" && v["params"]["item"]["source"] == "userShell")
        .await;
    let item = &item["params"]["item"];
    assert_eq!(item["type"], "commandExecution", "{item}");
    assert_eq!(item["exitCode"], 0, "{item}");
    assert_eq!(item["aggregatedOutput"], "ran\n", "{item}");
    c.notification("turn/completed").await;
    assert_eq!(
        std::fs::read_to_string(work.join("shell.txt")).unwrap(),
        "from-shell\n"
    );

    // `/review`: a turn on the thread asking the model to review the working tree.
    let review = c
        .ok(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "uncommittedChanges"}, "delivery": "inline"}),
        )
        .await;
    assert_eq!(review["reviewThreadId"], json!(thread_id), "{review}");
    let review_turn = review["turn"]["id"].clone();
    let done = c.notification("turn/completed").await;
    assert_eq!(done["turn"]["id"], review_turn, "{done}");
    assert!(
        done["turn"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["text"] == "found nothing to fix"),
        "{done}"
    );
    let asked = env.mock.requests().last().unwrap().body.to_string();
    assert!(asked.contains("uncommitted changes"), "{asked}");
    // The `!command` before it reached the model with this turn, after the turn's input.
    let shell = asked
        .find("<user_shell_command>")
        .unwrap_or_else(|| panic!("the !command is not in the next turn's request: {asked}"));
    assert!(
        asked.find("uncommitted changes").unwrap() < shell,
        "{asked}"
    );
    assert!(
        asked[shell..].contains("echo from-shell > shell.txt && echo ran")
            && asked[shell..].contains("exit code 0")
            && asked[shell..].contains("ran\\n"),
        "{asked}"
    );
    let empty = c
        .call(
            "review/start",
            json!({"threadId": thread_id, "target": {"type": "custom", "instructions": " "}}),
        )
        .await;
    assert_eq!(empty["error"]["code"], -32600, "{empty}");

    // `/permissions` lists the sandbox modes as profiles; `/model` and a profile choice
    // change what the next turn runs with.
    let profiles = c.ok("permissionProfile/list", json!({"limit": 100})).await;
    let ids: Vec<&str> = profiles["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [":read-only", ":workspace", ":danger-full-access"],
        "{profiles}"
    );
    c.ok(
        "thread/settings/update",
        json!({"threadId": thread_id, "model": "other-model", "permissions": ":read-only"}),
    )
    .await;
    let updated = c.notification("thread/settings/updated").await;
    assert_eq!(
        updated["threadSettings"]["model"], "other-model",
        "{updated}"
    );
    assert_eq!(
        updated["threadSettings"]["sandboxPolicy"]["type"], "readOnly",
        "{updated}"
    );
    let unknown = c
        .call(
            "thread/settings/update",
            json!({"threadId": thread_id, "permissions": ":everything"}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32600, "{unknown}");
    // The engine keeps them for the thread, not this connection: a second client's turn
    // runs with them.
    let mut c2 = Client::connect(&server).await;
    c2.initialize().await;
    c2.ok("thread/resume", json!({"threadId": thread_id})).await;
    c2.start_turn(&thread_id, "which model?").await;
    let done = c2.notification("turn/completed").await;
    assert_eq!(done["turn"]["status"], "completed", "{done}");
    let last = env.mock.requests().last().unwrap().body.clone();
    assert_eq!(last["model"], "other-model", "{last}");
    // Given once, then kept in the history like any message.
    assert_eq!(
        last.to_string().matches("<user_shell_command>").count(),
        1,
        "{last}"
    );
    let read = c.ok("thread/resume", json!({"threadId": thread_id})).await;
    assert_eq!(read["sandbox"]["type"], "readOnly", "{read}");

    let features = c.ok("experimentalFeature/list", json!({})).await;
    assert_eq!(features["data"], json!([]), "{features}");
    c.assert_valid();
    for method in [
        "thread/shellCommand",
        "review/start",
        "permissionProfile/list",
        "thread/settings/update",
        "thread/settings/updated",
        "experimentalFeature/list",
    ] {
        assert!(
            c.schema.checked.contains(method),
            "{method} was not checked against the schema; checked: {:?}",
            c.schema.checked
        );
    }
}

/// `mcpServer/oauth/login` runs the browser login of a configured MCP server: the answer is
/// the authorization URL, the "browser" (curl following the redirects) brings the code back
/// to the server's loopback callback, and `mcpServer/oauthLogin/completed` reports the
/// tokens saved, as `interpreter mcp list` then shows.
#[tokio::test]
async fn mcp_oauth_login_over_websocket() {
    let Some(peer) = common::OAuthPeer::start() else {
        return;
    };
    let env = TestEnv::new(MockScript::default(), WireApi::Chat).await;
    let config = env.home.path().join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "\n[mcp_servers.secure]\nurl = \"{}\"\n\n[mcp_servers.local]\ncommand = \"true\"\n\n[mcp_servers.m2m]\nurl = \"{}\"\n\n[mcp_servers.m2m.oauth]\ngrant_type = \"client_credentials\"\nclient_id = \"batch\"\nclient_secret_env_var = \"OI_TEST_UNUSED_SECRET\"\n",
        peer.url, peer.url
    ));
    std::fs::write(&config, text).unwrap();
    let server = start(&env).await;
    let mut c = Client::connect(&server).await;
    c.initialize().await;

    let unknown = c
        .call("mcpServer/oauth/login", json!({"name": "nope"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32600, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("secure"),
        "{unknown}"
    );
    let stdio = c
        .call("mcpServer/oauth/login", json!({"name": "local"}))
        .await;
    assert_eq!(stdio["error"]["code"], -32600, "{stdio}");
    // A machine grant has no browser login: said, not attempted.
    let machine = c
        .call("mcpServer/oauth/login", json!({"name": "m2m"}))
        .await;
    assert_eq!(machine["error"]["code"], -32600, "{machine}");
    assert!(
        machine["error"]["message"].as_str().unwrap().starts_with(
            "`m2m` uses grant_type = \"client_credentials\": there is no browser login"
        ),
        "{machine}"
    );

    let login = c
        .ok("mcpServer/oauth/login", json!({"name": "secure"}))
        .await;
    let url = login["authorizationUrl"].as_str().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{login}");
    let browser = tokio::process::Command::new("curl")
        .args(["-s", "-L", "-o", "/dev/null", &url])
        .status();
    assert!(
        tokio::time::timeout(WAIT, browser)
            .await
            .unwrap()
            .unwrap()
            .success()
    );
    let done = c.notification("mcpServer/oauthLogin/completed").await;
    assert_eq!(done["name"], "secure", "{done}");
    assert_eq!(done["success"], true, "{done}");
    c.assert_valid();
    assert!(c.schema.checked.contains("mcpServer/oauthLogin/completed"));

    let listed = env.run(&["mcp", "list", "--json"]).await;
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let secure = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "secure")
        .unwrap();
    assert_eq!(secure["auth_status"], "o_auth", "{listed}");
}
