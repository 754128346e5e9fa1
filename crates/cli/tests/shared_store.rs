//! Two `interpreter` processes on one PostgreSQL thread store (`OI_THREAD_STORE_URL`), each
//! with its own home and model: a thread started on A is listed and continued on B with
//! its history; B is refused while A runs a turn on it; after A is killed with -9, B takes
//! the thread over (its lease died with A's database connection).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

const URL_ENV: &str = "OI_THREAD_STORE_URL";

async fn run_on(env: &TestEnv, url: &str, args: &[&str]) -> std::process::Output {
    let fut = env.command(args).env(URL_ENV, url).output();
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .expect("interpreter did not finish within 60s")
        .expect("spawn interpreter")
}

#[tokio::test]
async fn a_thread_moves_between_processes_with_one_writer_at_a_time() {
    let Some(url) = oi_thread_store::test_db::fresh_database(
        "a_thread_moves_between_processes_with_one_writer_at_a_time",
    ) else {
        return;
    };
    let a = TestEnv::new(
        MockScript::turns([
            MockTurn::text("the word is pelican"),
            MockTurn::text("noted"),
        ]),
        WireApi::Chat,
    )
    .await;
    let b = TestEnv::new(
        MockScript::turns([
            MockTurn::text("you said pelican"),
            MockTurn::tool_call(
                "shell",
                json!({"command": ["sh", "-c", "echo $$ > slow.pid && exec sleep 30"]}),
            ),
        ]),
        WireApi::Chat,
    )
    .await;

    // Started on A.
    let out = run_on(&a, &url, &["exec", "remember the word pelican"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "the word is pelican");

    // B sees it and continues it with its history.
    let list = run_on(&b, &url, &["sessions", "list", "--json"]).await;
    let threads: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(threads.as_array().map(Vec::len), Some(1), "{threads}");
    let id = threads[0]["id"].as_str().unwrap().to_string();
    assert_eq!(threads[0]["preview"], "remember the word pelican");
    let out = run_on(&b, &url, &["resume", &id, "what was the word?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "you said pelican");
    let seen = b.mock.requests()[0].all_text();
    assert!(seen.contains("remember the word pelican"), "{seen}");
    assert!(seen.contains("the word is pelican"), "{seen}");

    // B runs a long turn on it; A is refused meanwhile.
    let mut slow = b
        .command(&[
            "resume",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "--json",
            &id,
            "run the slow thing",
        ])
        .env(URL_ENV, &url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(slow.stdout.take().unwrap()).lines();
    let started = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("\"exec_command_begin\"") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(started, "the slow command never started");
    let out = run_on(&a, &url, &["resume", &id, "are you there?"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("is open for writing by another session"),
        "{}",
        stderr(&out)
    );
    assert_eq!(a.mock.requests().len(), 1, "A never asked its model");

    // kill -9 B mid-turn: its lease goes with its connection, and A takes the thread.
    slow.start_kill().unwrap();
    let _ = slow.wait().await;
    if let Ok(pid) = std::fs::read_to_string(b.work().join("slow.pid")) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    // The server notices the closed socket at once; poll briefly for the session to end.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let out = loop {
        let out = run_on(&a, &url, &["resume", &id, "still there?"]).await;
        if out.status.code() == Some(0) || tokio::time::Instant::now() > deadline {
            break out;
        }
        assert!(
            stderr(&out).contains("is open for writing by another session"),
            "{}",
            stderr(&out)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "noted");
    let req = a.mock.requests().last().unwrap().clone();
    let all = req.all_text();
    assert!(all.contains("pelican"), "{all}");
    assert!(all.contains("run the slow thing"), "{all}");
    // The call B never finished has an output, so the history is valid for the API.
    assert_eq!(req.tool_outputs().len(), 1, "{:?}", req.tool_outputs());
}

/// The statement bound the frozen-database tests run with.
const STATEMENT_SECS: u64 = 4;

/// What the engine may add to one statement timeout before a running turn ends (the
/// recorder's margin and the process's own work); the bug this catches stacked several
/// timeouts (or never ended).
const MARGIN: Duration = Duration::from_secs(6);

/// A home whose config keeps threads in `url` with short timeouts.
fn with_store(env: &TestEnv, url: &str) {
    let path = env.home.path().join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!(
            "{config}\n[thread_store]\nurl = \"{url}\"\nconnect_timeout_sec = {STATEMENT_SECS}\nstatement_timeout_sec = {STATEMENT_SECS}\n"
        ),
    )
    .unwrap();
}

/// A shell call that says it is running (`ready`) and ends once the test says `go`.
fn held_command() -> MockTurn {
    MockTurn::tool_call(
        "shell",
        json!({"command": ["sh", "-c", "touch ready; while [ ! -e go ]; do sleep 0.05; done; echo went"]}),
    )
}

/// Waits for `ready` in `work`, freezes the database, lets the command end, and returns
/// when the freeze began.
async fn freeze_when_ready(
    work: &std::path::Path,
    pg: &oi_thread_store::test_db::PrivateServer,
) -> tokio::time::Instant {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !work.join("ready").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pg.pause().unwrap();
    let frozen = tokio::time::Instant::now();
    std::fs::write(work.join("go"), "").unwrap();
    frozen
}

/// Every record of every thread in `url`, as debug text, once the database answers.
fn stored_records(url: &str) -> Vec<String> {
    let home = tempfile::tempdir().unwrap();
    let store = oi_thread_store::ThreadStore::open_with(
        home.path(),
        &oi_thread_store::StoreLocation::Postgres(url.into()),
        oi_thread_store::StoreTimeouts::default(),
    )
    .unwrap();
    let threads = store.list(&Default::default()).unwrap().data;
    assert!(!threads.is_empty(), "no thread stored");
    threads
        .iter()
        .flat_map(|t| store.load(&t.id).unwrap().items)
        .map(|i| format!("{i:?}"))
        .collect()
}

/// Waits (off the runtime) until the records of `url` contain `text` `times` times: what a
/// server kept in memory while the database was frozen reaches it once it answers.
async fn stored_eventually(url: &str, text: &str, times: usize) {
    let (url, text) = (url.to_string(), text.to_string());
    tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        loop {
            let all = stored_records(&url).join("\n");
            if all.matches(&text).count() >= times {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "`{text}` never stored {times} time(s): {all}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_frozen_database_ends_a_running_exec_turn_within_the_statement_timeout() {
    let Some(pg) = oi_thread_store::test_db::PrivateServer::start(
        "a_frozen_database_ends_a_running_exec_turn",
    ) else {
        return;
    };
    let url = pg.url(None);
    let env = TestEnv::new(
        MockScript::turns([held_command(), MockTurn::text("finished")]),
        WireApi::Chat,
    )
    .await;
    with_store(&env, &url);
    let child = env
        .command(&["exec", "-s", "danger-full-access", "-a", "never", "run it"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let frozen = freeze_when_ready(&env.work(), &pg).await;
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("exec never ended while the database was frozen")
        .unwrap();
    let took = frozen.elapsed();
    pg.resume();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        took < Duration::from_secs(STATEMENT_SECS) + MARGIN,
        "exec ended {took:?} after the freeze: {err}"
    );
    assert!(err.contains("did not answer within"), "{err}");
    assert!(err.contains("statement_timeout_sec"), "{err}");
    // What was recorded before the freeze is in the store.
    let records = stored_records(&url);
    let all = records.join("\n");
    assert!(all.contains("run it"), "{all}");
    assert!(all.contains("while [ ! -e go ]"), "{all}");
}

/// JSON-RPC over a server's stdio, enough for one `codex` call and one v2 turn.
struct Rpc {
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    next_id: i64,
}

impl Rpc {
    async fn send(&mut self, method: &str, params: serde_json::Value) -> i64 {
        use tokio::io::AsyncWriteExt;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).await.unwrap();
        self.stdin.flush().await.unwrap();
        self.next_id
    }

    /// The next message `pred` accepts (others are skipped), within `within`.
    async fn take(
        &mut self,
        within: Duration,
        pred: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        tokio::time::timeout(within, async {
            loop {
                let line = self
                    .lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("server closed stdout");
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                if pred(&v) {
                    return v;
                }
            }
        })
        .await
        .expect("no answer in time")
    }

    async fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.send(method, params).await;
        let r = self
            .take(Duration::from_secs(60), |v| {
                v["id"] == id && v.get("method").is_none()
            })
            .await;
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }
}

#[tokio::test]
async fn a_frozen_database_ends_running_turns_on_the_servers_and_they_lose_nothing() {
    let Some(pg) = oi_thread_store::test_db::PrivateServer::start(
        "a_frozen_database_ends_running_turns_on_the_servers",
    ) else {
        return;
    };
    let url = pg.url(None);
    let env = TestEnv::new(
        MockScript::turns([held_command(), held_command()]),
        WireApi::Chat,
    )
    .await;
    with_store(&env, &url);
    let mut child = env
        .command(&["mcp-server"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut rpc = Rpc {
        stdin: child.stdin.take().unwrap(),
        lines: tokio::io::BufReader::new(child.stdout.take().unwrap()).lines(),
        next_id: 0,
    };
    rpc.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "freeze", "version": "1"}}),
    )
    .await;
    let bound = Duration::from_secs(STATEMENT_SECS) + MARGIN;
    let work = env.work();

    // The `codex` tool: the call is answered, as failed, within one statement timeout.
    let id = rpc
        .send(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "run it", "cwd": work,
                   "sandbox": "danger-full-access", "approval-policy": "never"}}),
        )
        .await;
    let frozen = freeze_when_ready(&work, &pg).await;
    let answer = rpc
        .take(bound + Duration::from_secs(60), |v| {
            v["id"] == id && v.get("method").is_none()
        })
        .await;
    let took = frozen.elapsed();
    pg.resume();
    assert!(took < bound, "answered {took:?} after the freeze: {answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer.to_string();
    assert!(text.contains("thread store is not answering"), "{text}");
    // Nothing is lost: what the turn recorded during the freeze is saved once it answers.
    stored_eventually(&url, "went", 1).await;
    stored_eventually(&url, "stopped this turn", 1).await;

    // v2: the turn completes as failed within one statement timeout too.
    for f in ["ready", "go"] {
        std::fs::remove_file(work.join(f)).unwrap();
    }
    let t = rpc
        .call(
            "thread/start",
            json!({"cwd": work, "sandbox": "danger-full-access", "approvalPolicy": "never"}),
        )
        .await;
    let tid = t["thread"]["id"].clone();
    let r = rpc
        .call(
            "turn/start",
            json!({"threadId": tid, "input": [{"type": "text", "text": "run it again"}]}),
        )
        .await;
    let turn = r["turn"]["id"].clone();
    let frozen = freeze_when_ready(&work, &pg).await;
    let done = rpc
        .take(bound + Duration::from_secs(60), |v| {
            v["method"] == "turn/completed" && v["params"]["turn"]["id"] == turn
        })
        .await;
    let took = frozen.elapsed();
    pg.resume();
    assert!(took < bound, "completed {took:?} after the freeze: {done}");
    assert_eq!(done["params"]["turn"]["status"], "failed", "{done}");
    assert!(
        done.to_string().contains("thread store is not answering"),
        "{done}"
    );
    stored_eventually(&url, "went", 2).await;
    stored_eventually(&url, "stopped this turn", 2).await;
    drop(rpc);
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
}
