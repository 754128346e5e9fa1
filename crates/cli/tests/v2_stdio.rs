//! The v2 API on the real `interpreter mcp-server` binary over stdio: a thread and a turn
//! beside the MCP handshake, and an API key saved with `account/login/start` that the
//! model client then sends (the variable itself is unset).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::{TestEnv, stderr, stdout};
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const KEY_VAR: &str = "OI_CLI_V2_TEST_KEY_NEVER_SET";
const WAIT: Duration = Duration::from_secs(30);

pub(crate) struct Stdio {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    pending: Vec<Value>,
}

impl Stdio {
    async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn take(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i);
        }
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer; pending: {:?}", self.pending))
                .unwrap()
                .expect("server closed stdout");
            let v: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            if pred(&v) {
                return v;
            }
            self.pending.push(v);
        }
    }

    pub(crate) async fn ok(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let r = self
            .take(|v| v["id"] == id && v.get("method").is_none())
            .await;
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    /// A request that must fail: its `error` object.
    async fn err(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let r = self
            .take(|v| v["id"] == id && v.get("method").is_none())
            .await;
        assert!(r.get("result").is_none(), "{method} must fail: {r}");
        r["error"].clone()
    }

    async fn notification(&mut self, method: &str) -> Value {
        self.take(|v| v["method"] == method && v.get("id").is_none())
            .await["params"]
            .clone()
    }
}

fn spawn(env: &TestEnv) -> Stdio {
    spawn_command(env.command(&["mcp-server"]))
}

/// `interpreter mcp-server` with `HOME` set to `home` (where other agents' folders are).
pub(crate) fn spawn_with_home(env: &TestEnv, home: &std::path::Path) -> Stdio {
    let mut cmd = env.command(&["mcp-server"]);
    cmd.env("HOME", home).env_remove("CODEX_HOME");
    spawn_command(cmd)
}

fn spawn_command(mut cmd: tokio::process::Command) -> Stdio {
    let mut child = cmd
        .env_remove(KEY_VAR)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Stdio {
        _child: child,
        stdin,
        lines,
        next_id: 0,
        pending: Vec::new(),
    }
}

#[tokio::test]
async fn v2_turn_uses_an_api_key_saved_by_account_login() {
    let env = TestEnv::new(MockScript::turns([MockTurn::text("keyed")]), WireApi::Chat).await;
    let config = std::fs::read_to_string(env.home.path().join("config.toml")).unwrap();
    let config = config.replace(
        "name = \"Mock\"",
        &format!("name = \"Mock\"\nenv_key = \"{KEY_VAR}\""),
    );
    std::fs::write(env.home.path().join("config.toml"), config).unwrap();
    let mut s = spawn(&env);
    s.ok(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "v2-stdio-test", "version": "1"}}),
    )
    .await;

    // Without a key the thread cannot start, and the error names the variable.
    s.next_id += 1;
    let id = s.next_id;
    s.send(json!({"jsonrpc": "2.0", "id": id, "method": "thread/start", "params": {"cwd": env.work()}}))
        .await;
    let e = s.take(|v| v["id"] == id).await;
    assert!(
        e["error"]["message"].as_str().unwrap().contains(KEY_VAR),
        "{e}"
    );

    s.ok(
        "account/login/start",
        json!({"type": "apiKey", "apiKey": "sk-from-login"}),
    )
    .await;
    let t = s.ok("thread/start", json!({"cwd": env.work()})).await;
    let tid = t["thread"]["id"].clone();
    assert_eq!(s.notification("thread/started").await["thread"]["id"], tid);
    let r = s
        .ok(
            "turn/start",
            json!({"threadId": tid, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let turn = r["turn"]["id"].clone();
    let done = s
        .take(|v| v["method"] == "turn/completed" && v["params"]["turn"]["id"] == turn)
        .await;
    assert_eq!(done["params"]["turn"]["status"], "completed", "{done}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].header("authorization"),
        Some("Bearer sk-from-login")
    );
    // The MCP tools are still there.
    let tools = s.ok("tools/list", json!({})).await;
    assert_eq!(tools["tools"][0]["name"], "codex");
}

#[tokio::test]
async fn v2_thread_start_needs_a_trusted_and_accepted_project_config_by_its_own_cwd() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    // The project is not the server's working directory: the check must use the `cwd` param.
    let proj = tempfile::tempdir().unwrap();
    let proj_dir = proj.path().canonicalize().unwrap();
    std::fs::create_dir(proj_dir.join(".openinterpreter")).unwrap();
    std::fs::write(
        proj_dir.join(".openinterpreter/config.toml"),
        "sandbox_mode = \"danger-full-access\"\n",
    )
    .unwrap();
    let mut s = spawn(&env);
    s.ok(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "v2-stdio-test", "version": "1"}}),
    )
    .await;
    let t = s.ok("thread/start", json!({"cwd": proj_dir})).await;
    assert_eq!(t["sandbox"]["type"], "readOnly", "{t}");
    let w = s.notification("configWarning").await;
    let summary = w["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("ignoring project config"), "{w}");
    assert!(summary.contains(&proj_dir.display().to_string()), "{w}");

    // Trusted (config is read per thread), the same file applies.
    let config = env.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "{text}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            proj_dir.display()
        ),
    )
    .unwrap();
    // Trusted but not accepted: a widening layer refuses the thread, naming the file and how
    // to accept it.
    let e = s.err("thread/start", json!({"cwd": proj_dir})).await;
    let message = e["message"].as_str().unwrap_or_default();
    let file = proj_dir.join(".openinterpreter/config.toml");
    assert!(message.contains(&file.display().to_string()), "{e}");
    assert!(
        message.contains(&format!(
            "interpreter accept-project-config {}",
            proj_dir.display()
        )),
        "{e}"
    );
    let out = env
        .run(&["accept-project-config", proj_dir.to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("sandbox danger-full-access instead of read-only"),
        "{}",
        stdout(&out)
    );
    let t = s.ok("thread/start", json!({"cwd": proj_dir})).await;
    assert_eq!(t["sandbox"]["type"], "dangerFullAccess", "{t}");
    assert_eq!(t["model"], "mock-model", "{t}");
}
