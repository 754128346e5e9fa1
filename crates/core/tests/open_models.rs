//! The engine against the recorded streams of open-model servers: what the model is sent,
//! and what the user and the model are told when a server leaves things in the text or
//! stops early.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::{last_message, warnings};

use oi_core::{Thread, ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{Event, EventMsg};
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn, fixture};
use serde_json::Value;
use std::path::Path;

/// Config for `mock`; `top` goes before the generated keys, `provider_extra` into the
/// provider table.
fn config(
    mock: &MockModelServer,
    home: &Path,
    top: &str,
    provider_extra: &str,
) -> oi_config::Config {
    common::load_unconfined(
        home,
        &format!(
            "{top}\n{}{provider_extra}\n",
            mock.config_toml("mock", WireApi::Chat)
        ),
    )
}

fn manager(persist: bool) -> ThreadManager {
    ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist,
    })
}

/// Runs one turn to its end and returns its events.
async fn turn(thread: &Thread, text: &str) -> Vec<Event> {
    common::run_op(thread, common::user(text)).await
}

fn error(evs: &[Event]) -> Option<String> {
    evs.iter().find_map(|e| match &e.msg {
        EventMsg::Error(err) => Some(err.message.clone()),
        _ => None,
    })
}

fn recorded(name: &str) -> MockResponse {
    MockResponse::recorded(fixture(name))
}

#[tokio::test]
async fn the_chat_request_has_exactly_one_system_message_with_every_section() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("AGENTS.md"),
        "Run `make check` before committing.",
    )
    .unwrap();
    let mock = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .unwrap();
    let cfg = config(
        &mock,
        home.path(),
        "developer_instructions = \"Always answer in French.\"",
        "",
    );
    let t = manager(false).start_thread(cfg).await.unwrap();
    turn(&t.thread, "hi").await;
    let req = &mock.requests()[0];
    let msgs = req.items();
    let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user"], "{msgs:?}");
    let system = msgs[0]["content"].as_str().unwrap();
    // The system message is what every run shares: the instructions, then the developer
    // instructions. What differs from run to run (the working directory, AGENTS.md) is at
    // the head of the first user message, after the tool schemas a template appends to the
    // system message, so a server's prompt cache keeps those for the next run.
    let at = |text: &str, needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from {text}"))
    };
    assert!(at(system, "approval_policy") > 0, "instructions come first");
    at(system, "<developer_instructions>\nAlways answer in French.");
    for varying in [
        "<environment_context>",
        "<project_instructions",
        "make check",
    ] {
        assert!(!system.contains(varying), "{varying} in {system}");
    }
    let user = msgs[1]["content"].as_str().unwrap();
    let order = [
        at(user, "<project_instructions"),
        at(user, "make check"),
        at(user, "<environment_context>"),
        at(user, "</environment_context>\n\nhi"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{user}");
    assert!(user.ends_with("\n\nhi"), "{user}");
    // What the user typed, as the test helper reads it.
    assert_eq!(req.last_user_text().as_deref(), Some("hi"));
}

#[tokio::test]
async fn agents_md_is_read_once_per_turn() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("AGENTS.md"), "doc version one").unwrap();
    // The first turn's command rewrites AGENTS.md between its two model requests.
    let mock = MockModelServer::start(MockScript::new(vec![
        MockTurn::tool_call(
            "shell",
            serde_json::json!({"command": ["bash", "-c", "echo doc version two > AGENTS.md"]}),
        )
        .into(),
        MockTurn::text("rewritten").into(),
        MockTurn::text("ok").into(),
    ]))
    .await
    .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home.path(), "", ""))
        .await
        .unwrap();
    turn(&t.thread, "rewrite it").await;
    assert_eq!(
        std::fs::read_to_string(home.path().join("AGENTS.md")).unwrap(),
        "doc version two\n",
        "the command ran"
    );
    turn(&t.thread, "again").await;
    // The doc goes with the run's context, at the head of the first user message.
    let systems: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r.items()[1]["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(systems.len(), 3);
    // Both requests of the first turn show the doc as it was when the turn started...
    assert!(systems[0].contains("doc version one"), "{}", systems[0]);
    assert!(systems[1].contains("doc version one"), "{}", systems[1]);
    // ...and the next turn reads it again.
    assert!(systems[2].contains("doc version two"), "{}", systems[2]);
}

#[tokio::test]
async fn tool_calls_left_in_text_run_as_real_calls_and_warn_once() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("marker-file.txt"), "").unwrap();
    let mock = MockModelServer::start(MockScript::new(vec![
        recorded("vllm/hermes-text-tool-call.sse"),
        MockTurn::text("Listed.").into(),
        recorded("vllm/qwen3-coder-text-tool-call.sse"),
        MockTurn::text("Listed again.").into(),
    ]))
    .await
    .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home.path(), "", ""))
        .await
        .unwrap();
    let first = turn(&t.thread, "list files").await;
    let second = turn(&t.thread, "again").await;
    assert_eq!(last_message(&second).as_deref(), Some("Listed again."));
    // The calls ran like any other: exec events, outputs in history.
    let began = first
        .iter()
        .chain(&second)
        .filter(|e| matches!(&e.msg, EventMsg::ExecCommandBegin(b) if b.command == ["ls", "-a"]))
        .count();
    assert_eq!(began, 2);
    let reqs = mock.requests();
    let outputs = reqs[1].tool_outputs();
    assert!(outputs[0].1.contains("marker-file.txt"), "{outputs:?}");
    // Same history shape as a parsed call: an assistant tool_calls entry, not markup text.
    let calls = reqs[1].function_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].1, "shell");
    assert_eq!(calls[0].0, outputs[0].0);
    assert!(!reqs[1].all_text().contains("<tool_call>"));
    // One warning for the whole session, naming the server flag.
    let all: Vec<String> = warnings(&first)
        .into_iter()
        .chain(warnings(&second))
        .collect();
    let about_parser: Vec<&String> = all
        .iter()
        .filter(|w| w.contains("tool-call parser"))
        .collect();
    assert_eq!(about_parser.len(), 1, "{all:?}");
    assert!(
        about_parser[0].contains("--tool-call-parser hermes"),
        "{all:?}"
    );
}

#[tokio::test]
async fn a_quoted_tool_call_is_not_run() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::new(vec![recorded(
        "vllm/quoted-tool-call-in-code-block.sse",
    )]))
    .await
    .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home.path(), "", ""))
        .await
        .unwrap();
    let evs = turn(&t.thread, "how do tool calls look?").await;
    assert!(error(&evs).is_none());
    assert!(
        !evs.iter()
            .any(|e| matches!(e.msg, EventMsg::ExecCommandBegin(_)))
    );
    assert!(last_message(&evs).unwrap().contains("rm"));
    assert_eq!(mock.requests().len(), 1);
}

#[tokio::test]
async fn a_call_cut_at_the_output_limit_is_not_run_and_the_model_is_told() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::new(vec![
        recorded("vllm/length-tool-arguments.sse"),
        MockTurn::text("I'll write it in parts.").into(),
    ]))
    .await
    .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home.path(), "", ""))
        .await
        .unwrap();
    let evs = turn(&t.thread, "write a big file").await;
    assert!(
        !evs.iter()
            .any(|e| matches!(e.msg, EventMsg::ExecCommandBegin(_)))
    );
    assert!(
        warnings(&evs)
            .iter()
            .any(|w| w.contains("output token limit")),
        "{:?}",
        warnings(&evs)
    );
    let outputs = mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("output token limit"), "{outputs:?}");
    assert!(outputs[0].1.contains("shorter"), "{outputs:?}");
}

#[tokio::test]
async fn a_truncated_answer_is_flagged_to_the_user() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::new(vec![recorded("vllm/length-text.sse")]))
        .await
        .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home.path(), "", ""))
        .await
        .unwrap();
    let evs = turn(&t.thread, "explain").await;
    assert!(error(&evs).is_none());
    assert!(
        warnings(&evs).iter().any(|w| w.contains("cut off")),
        "{:?}",
        warnings(&evs)
    );
    assert!(
        last_message(&evs)
            .unwrap()
            .starts_with("Here is the first half")
    );
}

#[tokio::test]
async fn empty_answers_and_old_llama_cpp_errors_fail_the_turn() {
    for (name, expected) in [
        ("vllm/empty-completion.sse", "empty answer"),
        ("llamacpp/old-error-line.sse", "context size"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let mock = MockModelServer::start(MockScript::new(vec![recorded(name)]))
            .await
            .unwrap();
        let t = manager(false)
            .start_thread(config(&mock, home.path(), "", ""))
            .await
            .unwrap();
        let evs = turn(&t.thread, "hi").await;
        let err = error(&evs).unwrap_or_else(|| panic!("{name}: no error in {evs:?}"));
        assert!(err.contains(expected), "{name}: {err}");
    }
}

/// DeepSeek thinking mode: the reasoning that led to a tool call goes back with it, in the
/// same turn and after the thread is resumed from disk.
#[tokio::test]
async fn reasoning_goes_back_with_tool_calls_even_after_resume() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::new(vec![
        recorded("deepseek/thinking-tool-call.sse"),
        MockTurn::text("Found them.").into(),
        MockTurn::text("Still here.").into(),
    ]))
    .await
    .unwrap();
    let cfg = config(&mock, home.path(), "", "send_reasoning_content = true");
    let m = manager(true);
    let t = m.start_thread(cfg.clone()).await.unwrap();
    let first = turn(&t.thread, "list files").await;
    assert_eq!(last_message(&first).as_deref(), Some("Found them."));
    let thread_id = t.thread_id;
    m.shutdown_all().await;
    // The rollout stays locked while any handle of the thread is alive.
    drop(t);
    drop(m);

    let m2 = manager(true);
    let resumed = m2.resume_thread(thread_id, cfg).await.unwrap();
    turn(&resumed.thread, "and now?").await;
    let reqs = mock.requests();
    for req in [&reqs[1], &reqs[2]] {
        let with_calls: Vec<Value> = req
            .items()
            .into_iter()
            .filter(|m| m.get("tool_calls").is_some())
            .collect();
        assert_eq!(with_calls.len(), 1);
        assert_eq!(
            with_calls[0]["reasoning_content"], "To answer I need the file list.",
            "{with_calls:?}"
        );
    }
    m2.shutdown_all().await;
}

/// One turn asking `question` in `home`, the model answering `answers` in order; the
/// turn's events and what the mock received.
async fn ask(
    home: &Path,
    question: &str,
    answers: [&str; 2],
) -> (Vec<Event>, Vec<oi_test_support::RecordedRequest>) {
    let mock = MockModelServer::start(MockScript::turns(answers.map(MockTurn::text)))
        .await
        .unwrap();
    let t = manager(false)
        .start_thread(config(&mock, home, "", ""))
        .await
        .unwrap();
    let evs = turn(&t.thread, question).await;
    (evs, mock.requests())
}

#[tokio::test]
async fn a_path_answer_that_names_no_file_is_sent_back_then_fails() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("app/store")).unwrap();
    std::fs::write(
        home.path().join("app/store/cache.py"),
        "def load_settings(p): ...\n",
    )
    .unwrap();
    let question = "Which file in this project defines the function load_settings? Answer with the file's path.";
    // Made up, then corrected after the note: the turn ends with the real path.
    let (evs, requests) = ask(
        home.path(),
        question,
        ["`src/load_settings.py`", "`app/store/cache.py`"],
    )
    .await;
    assert!(error(&evs).is_none(), "{:?}", error(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("`app/store/cache.py`"));
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("`src/load_settings.py` does not exist"),
        "the model is told the path does not exist"
    );
    assert!(
        warnings(&evs).iter().any(|w| w.contains("does not exist")),
        "{:?}",
        warnings(&evs)
    );
    // Made up twice: the turn fails instead of reporting a wrong answer as success.
    let (evs, _) = ask(
        home.path(),
        question,
        ["`src/load_settings.py`", "src/settings.py"],
    )
    .await;
    let err = error(&evs).expect("the turn fails");
    assert!(
        err.contains("`src/settings.py`, which does not exist"),
        "{err}"
    );
}
