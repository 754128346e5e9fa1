//! The flow of a client written for `codex app-server` 0.171, speaking only that protocol
//! (no `jsonrpc` member, app-server `initialize`): initialize → thread/start → turn/start
//! → approval → thread/turns/list → thread/items/list → mcpServerStatus/list →
//! command/exec → thread/compact/start → thread/delete. It runs against
//! `interpreter app-server`, against `interpreter mcp-server`, and against Codex 0.171 itself
//! (`common::codex_bin`: the binary `tools/peers/install.sh` installs, or `CODEX_BIN`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::TestEnv;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const WAIT: Duration = Duration::from_secs(60);

/// A raw app-server client: one JSON object per line, no `jsonrpc` member.
struct Client {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    seen: Vec<Value>,
    pending: Vec<Value>,
}

impl Client {
    fn spawn(mut cmd: Command) -> Client {
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            _child: child,
            stdin,
            lines,
            next_id: 0,
            seen: Vec::new(),
            pending: Vec::new(),
        }
    }

    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The first message (pending or new) matching `pred`; the others stay pending.
    async fn take(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i);
        }
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no matching message; pending: {:?}", self.pending))
                .unwrap()
                .expect("server closed stdout");
            let v: Value = serde_json::from_str(&line).unwrap();
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
}

fn script() -> MockScript {
    MockScript::turns([
        // Codex 0.171's own shell tool and argument shape, which we answer to as well.
        MockTurn::tool_call("exec_command", json!({"cmd": "touch approved.txt"})),
        MockTurn::text("touched it"),
        MockTurn::text("summary of the work so far"),
    ])
}

/// The whole flow; `work` is the directory the thread runs in.
async fn flow(c: &mut Client, work: &std::path::Path) {
    let init = c
        .ok(
            "initialize",
            json!({"clientInfo": {"name": "flow-test", "title": null, "version": "0.1"},
                   "capabilities": {"experimentalApi": true,
                                    "optOutNotificationMethods": ["item/agentMessage/delta"]}}),
        )
        .await;
    for key in ["userAgent", "codexHome", "platformFamily", "platformOs"] {
        assert!(
            init[key].is_string(),
            "initialize result lacks {key}: {init}"
        );
    }
    c.send(json!({"method": "initialized"})).await;

    let started = c
        .ok(
            "thread/start",
            json!({"cwd": work, "approvalPolicy": "untrusted", "sandbox": "danger-full-access"}),
        )
        .await;
    let thread_id = started["thread"]["id"].as_str().unwrap().to_string();

    let turn = c
        .ok(
            "turn/start",
            json!({"threadId": thread_id, "input": [{"type": "text", "text": "touch a file", "text_elements": []}]}),
        )
        .await;
    let turn_id = turn["turn"]["id"].as_str().unwrap().to_string();

    // The approval: the thread is flagged as waiting first, then the request arrives.
    let approval = c
        .take(|v| v["method"] == "item/commandExecution/requestApproval" && v.get("id").is_some())
        .await;
    let p = &approval["params"];
    assert_eq!(p["threadId"], json!(thread_id));
    assert_eq!(p["turnId"], json!(turn_id));
    assert!(p["startedAtMs"].as_i64().unwrap() > 0, "{p}");
    assert_eq!(p["kind"], "command", "{p}");
    let decisions = p["availableDecisions"].as_array().unwrap();
    // Codex 0.171 offers `cancel` rather than `decline` for this command; either refuses.
    assert!(
        decisions.contains(&json!("accept"))
            && (decisions.contains(&json!("decline")) || decisions.contains(&json!("cancel"))),
        "{p}"
    );
    assert!(
        c.seen.iter().any(|v| v["method"] == "thread/status/changed"
            && v["params"]["status"]["activeFlags"] == json!(["waitingOnApproval"])),
        "no waitingOnApproval status before the approval request"
    );
    c.send(json!({"id": approval["id"], "result": {"decision": "accept"}}))
        .await;

    let done = c.notification("turn/completed").await;
    assert_eq!(done["turn"]["status"], "completed", "{done}");
    let items = done["turn"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .any(|i| i["type"] == "agentMessage" && i["text"] == "touched it"),
        "turn/completed lacks the final agent message: {done}"
    );
    assert!(
        work.join("approved.txt").exists(),
        "the approved command did not run"
    );
    assert!(
        !c.seen
            .iter()
            .any(|v| v["method"] == "item/agentMessage/delta"),
        "an opted-out notification was sent"
    );

    let turns = c
        .ok(
            "thread/turns/list",
            json!({"threadId": thread_id, "limit": 1}),
        )
        .await;
    assert_eq!(turns["data"].as_array().unwrap().len(), 1, "{turns}");
    assert_eq!(turns["data"][0]["id"], json!(turn_id), "{turns}");

    let first = c
        .ok(
            "thread/items/list",
            json!({"threadId": thread_id, "limit": 1}),
        )
        .await;
    assert_eq!(first["data"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["data"][0]["item"]["type"], "userMessage", "{first}");
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a second page")
        .to_string();
    let rest = c
        .ok(
            "thread/items/list",
            json!({"threadId": thread_id, "cursor": cursor}),
        )
        .await;
    let rest = rest["data"].as_array().unwrap();
    assert!(
        rest.iter().any(|e| e["item"]["type"] == "commandExecution"),
        "{rest:?}"
    );
    assert!(
        rest.iter().any(|e| e["item"]["type"] == "agentMessage"),
        "{rest:?}"
    );

    let mcp = c.ok("mcpServerStatus/list", json!({})).await;
    assert!(mcp["data"].is_array(), "{mcp}");

    let exec = c
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", "echo out; echo err >&2; exit 3"], "cwd": work,
                   "sandboxPolicy": {"type": "dangerFullAccess"}}),
        )
        .await;
    assert_eq!(
        exec,
        json!({"exitCode": 3, "stdout": "out\n", "stderr": "err\n"})
    );

    let compact = c
        .ok("thread/compact/start", json!({"threadId": thread_id}))
        .await;
    assert_eq!(compact, json!({}));
    // The compaction is a `contextCompaction` item (Codex 0.171 no longer sends the
    // deprecated `thread/compacted`, which we still send after the item).
    let compacted = c
        .take(|v| {
            v["method"] == "item/completed" && v["params"]["item"]["type"] == "contextCompaction"
        })
        .await;
    assert_eq!(compacted["params"]["threadId"], json!(thread_id));
    c.notification("turn/completed").await;

    let deleted = c.ok("thread/delete", json!({"threadId": thread_id})).await;
    assert_eq!(deleted, json!({}));
    let gone = c.call("thread/read", json!({"threadId": thread_id})).await;
    assert!(
        gone.get("error").is_some(),
        "the deleted thread is still readable: {gone}"
    );
}

#[tokio::test]
async fn codex_app_server_client_flow_against_interpreter_app_server() {
    let env = TestEnv::new(script(), WireApi::Chat).await;
    let mut c = Client::spawn(env.command(&["app-server"]));
    flow(&mut c, &env.work()).await;
    // No MCP on this connection.
    let tools = c.call("tools/list", json!({})).await;
    assert_eq!(tools["error"]["code"], -32601, "{tools}");
}

#[tokio::test]
async fn codex_app_server_client_flow_against_interpreter_mcp_server() {
    let env = TestEnv::new(script(), WireApi::Chat).await;
    let mut c = Client::spawn(env.command(&["mcp-server"]));
    flow(&mut c, &env.work()).await;
}

#[tokio::test]
async fn codex_app_server_client_flow_against_codex() {
    let Some(bin) = common::codex_bin() else {
        return;
    };
    let env = TestEnv::new(script(), WireApi::Responses).await;
    let codex_home = tempfile::tempdir().unwrap();
    std::fs::write(
        codex_home.path().join("config.toml"),
        env.mock.config_toml("mock", WireApi::Responses),
    )
    .unwrap();
    let mut cmd = Command::new(bin);
    cmd.arg("app-server")
        .current_dir(env.work())
        .env("CODEX_HOME", codex_home.path())
        .env_remove("RUST_LOG");
    let mut c = Client::spawn(cmd);
    flow(&mut c, &env.work()).await;
}
