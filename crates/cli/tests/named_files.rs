//! The files a request names, shown to the model when the turn starts under the `minimal`
//! harness (docs/harness.md), end to end through `interpreter exec` and the mock model:
//! what the model is sent, what the thread records, and that the turn's checks count a
//! shown file as read. Judged by the requests and the directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;

const SALES: &str = "item,amount\napple,3\npear,9\n";

async fn env_with(harness: &str, turns: impl IntoIterator<Item = MockTurn>) -> TestEnv {
    let env = TestEnv::with_config(
        MockScript::turns(turns),
        WireApi::Chat,
        &format!("harness = \"{harness}\"\n"),
    )
    .await;
    std::fs::write(env.work().join("sales.csv"), SALES).unwrap();
    std::fs::write(env.work().join(".env"), "TOKEN=do-not-show\n").unwrap();
    env
}

fn exec(prompt: &str) -> Vec<&str> {
    vec!["exec", "-s", "workspace-write", "-a", "never", prompt]
}

/// The model writes the total straight from the file it was shown: no read call, and the
/// "was not read" check holds, because the engine read it for the model.
#[tokio::test]
async fn a_named_file_is_shown_with_the_request_and_counts_as_read() {
    let request =
        "Read sales.csv and write the total of the amount column to total.txt. Do not touch .env.";
    let env = env_with(
        "minimal",
        [
            MockTurn::tool_call("bash", json!({"command": "echo 12 > total.txt"})),
            MockTurn::text("total.txt holds 12."),
        ],
    )
    .await;
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("total.txt")).trim(), "12");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2, "no note sent the model back");
    let first = serde_json::to_string(&reqs[0].items()).unwrap();
    assert!(
        first.contains("<file path=\\\"sales.csv\\\">\\nitem,amount\\napple,3\\npear,9\\n</file>"),
        "{first}"
    );
    assert!(
        !first.contains("do-not-show"),
        "a dotfile is never shown unasked: {first}"
    );
    // The note follows the request, in the thread's own history.
    let at_request = first.find(request).unwrap();
    assert!(first.find("<named_files>").unwrap() > at_request);
}

/// Other profiles send the request as it is: the model reads what it needs.
#[tokio::test]
async fn other_profiles_show_no_files() {
    let request = "Read sales.csv and write the total of the amount column to total.txt.";
    let env = env_with(
        "codex",
        [
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-lc", "echo 12 > total.txt"]}),
            ),
            MockTurn::text("total.txt holds 12."),
            MockTurn::text("total.txt holds 12."),
            MockTurn::text("total.txt holds 12."),
        ],
    )
    .await;
    let out = env.run(&exec(request)).await;
    let first = serde_json::to_string(&env.mock.requests()[0].items()).unwrap();
    assert!(!first.contains("<named_files>"), "{first}");
    // Without a read, the same answer is not done.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("`sales.csv` was not read"));
}

/// Under `minimal`, a question's requests are bounded tighter than a change's (a question's
/// answer is short; the 1.5B model once wrote two 4,096-token answers to "which file
/// defines …?"); nothing configured either way.
#[tokio::test]
async fn a_question_under_minimal_gets_a_tighter_answer_bound() {
    let env = env_with("minimal", [MockTurn::text("It is in sales.csv.")]).await;
    let out = env.run(&exec("Which file holds the sales?")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.mock.requests()[0].body["max_tokens"], 1024);
    let env = env_with(
        "minimal",
        [
            MockTurn::tool_call("bash", json!({"command": "echo 12 > total.txt"})),
            MockTurn::text("Done."),
        ],
    )
    .await;
    env.run(&exec("Write 12 to total.txt.")).await;
    let bound = env.mock.requests()[0].body["max_tokens"].as_u64().unwrap();
    assert!(bound > 1024, "{bound}");
}

/// Round 12's implement-function calls under `minimal`: read, fix with `sed`, read the test,
/// run it (`python3` here; the recorded run wrote `python`, and exited 1 although the
/// directory said done, which this did not reproduce). The directory says done; so must
/// the run.
#[tokio::test]
async fn the_recorded_implement_run_under_minimal_is_done() {
    let calls = [
        "cat text_utils.py",
        "sed -i 's/raise NotImplementedError/return text == text[::-1]/' text_utils.py",
        "cat test_text_utils.py",
        "python3 test_text_utils.py",
    ];
    let mut turns: Vec<MockTurn> = calls
        .iter()
        .map(|c| MockTurn::tool_call("bash", json!({ "command": c })))
        .collect();
    turns.push(MockTurn::text(
        "is_palindrome is implemented and the test passes.",
    ));
    let env = env_with("minimal", turns).await;
    std::fs::write(
        env.work().join("text_utils.py"),
        "def is_palindrome(text):\n    raise NotImplementedError\n",
    )
    .unwrap();
    std::fs::write(
        env.work().join("test_text_utils.py"),
        "from text_utils import is_palindrome\n\nassert is_palindrome(\"racecar\")\nassert not is_palindrome(\"python\")\nprint(\"ok\")\n",
    )
    .unwrap();
    let out = env
        .run(&exec(
            "Implement the function is_palindrome in text_utils.py so that test_text_utils.py passes.",
        ))
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A question of which file defines a name gets the files that hold it, with their lines,
/// as docs/harness.md shows; the model's answer naming that file ends the turn.
#[tokio::test]
async fn a_where_defined_question_gets_the_files_that_hold_the_name() {
    let request = "Which file in this project defines the function load_settings? Answer with the file's path.";
    let env = env_with("minimal", [MockTurn::text("lib/io/files.py")]).await;
    std::fs::create_dir_all(env.work().join("lib/io")).unwrap();
    std::fs::write(
        env.work().join("lib/io/files.py"),
        "import os\n\ndef load_settings(path):\n    return open(path).read()\n",
    )
    .unwrap();
    std::fs::write(env.work().join("main.py"), "print('hi')\n").unwrap();
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "lib/io/files.py"
    );
    let first = serde_json::to_string(&env.mock.requests()[0].items()).unwrap();
    let docs =
        read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/harness.md"));
    let shown = "- lib/io/files.py line 3: `def load_settings(path):`";
    assert!(docs.contains(shown), "docs/harness.md shows the note");
    assert!(
        first.contains("The files in this project that contain `load_settings` (searched for you), with its lines:\\n- lib/io/files.py line 3: `def load_settings(path):`"),
        "{first}"
    );
}
