//! The answer checks of issue 43 item 1, end to end through `interpreter exec` and the mock
//! model: an answer that claims a task the directory shows unfinished is sent back with what
//! is missing, then fails with the reason; an honest answer after a retry note is kept (a
//! question's answer succeeds, a change not made fails), and stdout always carries what the
//! model said.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn, RecordedRequest};
use serde_json::{Value, json};

const WRITE: &[&str] = &["-s", "workspace-write", "-a", "never"];

fn exec(prompt: &str) -> Vec<&str> {
    let mut v = vec!["exec"];
    v.extend_from_slice(WRITE);
    v.push(prompt);
    v
}

fn bash(script: &str) -> Value {
    json!({"command": ["bash", "-lc", script]})
}

/// The notes the engine added to the request (chat: user messages in `<system_note>`).
fn notes(req: &RecordedRequest) -> Vec<String> {
    req.items()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|t| t.starts_with("<system_note>"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_script_claimed_executable_that_is_not_is_sent_back_then_finished() {
    let request = "Write a shell script greet.sh that prints hello, and make it executable.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("printf 'echo hello\\n' > greet.sh")),
            // Recorded shape: the script written, the rest claimed.
            MockTurn::text("I created greet.sh and made it executable."),
            MockTurn::tool_call("shell", json!({"command": ["chmod", "+x", "greet.sh"]})),
            MockTurn::text("greet.sh prints hello and is executable."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        stdout(&out).trim(),
        "greet.sh prints hello and is executable."
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    let sent = notes(&reqs[2]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0].contains(
            "The task is not finished: `greet.sh` is not executable (it needs `chmod +x greet.sh`)"
        ),
        "{}",
        sent[0]
    );
    assert!(
        err.contains("[warning] the task is not finished: `greet.sh` is not executable"),
        "{err}"
    );
}

#[tokio::test]
async fn partial_work_claimed_done_fails_with_what_is_missing_and_prints_the_answer() {
    let request = "Create the directories logs, data and tmp.";
    let claim = "I have created the directories logs, data and tmp.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["mkdir", "logs"]})),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(env.work().join("logs").is_dir());
    assert!(!env.work().join("data").exists());
    // The model's answer is on stdout; the reason on stderr.
    assert_eq!(stdout(&out).trim(), claim);
    assert!(
        err.contains("[error] the task is not done: the folder `data` does not exist; the folder `tmp` does not exist"),
        "{err}"
    );
    assert_eq!(
        env.mock.requests().len(),
        4,
        "two retries, then the turn fails"
    );
}

#[tokio::test]
async fn a_file_written_with_other_content_than_asked_is_not_done() {
    let request = "Create a file hello.txt containing the text 'hello world'.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo 'print(\"hello\")' > hello.txt")),
            MockTurn::text("hello.txt now contains hello world."),
            MockTurn::tool_call("shell", bash("echo 'hello world' > hello.txt")),
            MockTurn::text("Fixed: hello.txt says hello world."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("hello.txt")), "hello world\n");
    let reqs = env.mock.requests();
    assert!(
        notes(&reqs[2])[0].contains("`hello.txt` does not contain `hello world`"),
        "{:?}",
        notes(&reqs[2])
    );
}

#[tokio::test]
async fn lines_said_deleted_that_are_still_there_are_not_done() {
    let request = "Delete the lines containing 'TODO' from notes.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["cat", "notes.txt"]})),
            MockTurn::text("I deleted the TODO lines from notes.txt."),
            MockTurn::text("Done: the TODO lines are gone."),
            MockTurn::text("Done."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("notes.txt"), "keep\nTODO: one\nkeep too\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        read(&env.work().join("notes.txt")),
        "keep\nTODO: one\nkeep too\n"
    );
    assert!(err.contains("`notes.txt` still contains `TODO`"), "{err}");
    assert!(!stdout(&out).trim().is_empty());
}

/// The regression of issue 43 item 1: after a retry note, an honest answer to a question
/// was failed with nothing on stdout.
#[tokio::test]
async fn a_questions_honest_answer_after_a_note_is_printed_and_succeeds() {
    let honest = "I cannot look up the weather here: there is no web search tool.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(
                "```json\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"weather Paris\"}}\n```",
            ),
            MockTurn::text(honest),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec("What is the weather in Paris today?")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out).trim(), honest);
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(notes(&reqs[1])[0].contains("There is no tool named `web_search`"));
}

#[tokio::test]
async fn a_change_not_made_after_a_note_fails_and_still_prints_the_answer() {
    let honest = "I could not create hello.txt: I do not have a file tool.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(
                "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hi\"}}\n```",
            ),
            MockTurn::text(honest),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec("Create hello.txt containing hi")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        stdout(&out).trim(),
        honest,
        "what the model said is printed"
    );
    assert!(err.contains("[error]"), "{err}");
    assert!(!env.work().join("hello.txt").exists());
}

/// A test the request names that the model did not run after its fix is run by the agent,
/// once, through the shell tool; the model answers with its output in front of it.
#[tokio::test]
async fn a_named_test_the_model_did_not_run_is_run_by_the_agent() {
    let request = "Fix the bug in calc.py so that test_calc.py passes.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed -i 's/a - b/a + b/' calc.py")),
            MockTurn::text("I fixed the bug in calc.py."),
            MockTurn::text("The test passes now."),
        ]),
        WireApi::Chat,
    )
    .await;
    write_calc(&env);
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "the model did not run `test_calc.py` after its change; running it to check the result"
        ),
        "{err}"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    // The third request carries the agent's run of the test and what it printed.
    let items = reqs[2].items();
    let run = items
        .iter()
        .find(|m| {
            m["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .is_some_and(|a| a.contains("python3 test_calc.py"))
        })
        .expect("the test run is in the history");
    let id = run["tool_calls"][0]["id"].as_str().unwrap();
    let output = items
        .iter()
        .find(|m| m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap();
    assert!(output.contains("ok"), "{output}");
    assert!(notes(&reqs[2]).is_empty(), "{:?}", notes(&reqs[2]));
}

/// A wrong fix: the agent's run of the test fails, the model is told it still fails, and a
/// claim of success fails the turn; the agent runs the test once, never again.
#[tokio::test]
async fn a_named_test_that_fails_on_the_agents_run_fails_the_claim() {
    let request = "Fix the bug in calc.py so that test_calc.py passes.";
    let claim = "I fixed the bug in calc.py.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed -i 's/a - b/a * b/' calc.py")),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    write_calc(&env);
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`test_calc.py` still fails (its last run exited with an error)"),
        "{err}"
    );
    assert_eq!(
        err.matches("running it to check the result").count(),
        1,
        "{err}"
    );
    assert_eq!(stdout(&out).trim(), claim);
}

/// Round 16's false success: the test the request says must pass written over, so that it
/// "passes". The agent puts the test back and runs it; it fails (the bug is still there), so
/// the claim fails the turn with that, and the answer is still printed.
#[tokio::test]
async fn a_test_written_over_to_pass_fails_the_claim() {
    let request = "Fix the bug in calc.py so that test_calc.py passes.";
    let claim = "test_calc.py passes now.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo \"print('ok')\" > test_calc.py")),
            MockTurn::tool_call("shell", bash("python3 test_calc.py")),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    write_calc(&env);
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the model changed `test_calc.py`, which the request says must pass as it is; putting it back as it was and running it"),
        "{err}"
    );
    assert!(
        err.contains("`test_calc.py` still fails (its last run exited with an error)"),
        "{err}"
    );
    assert_eq!(
        read(&env.work().join("test_calc.py")),
        "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n"
    );
    assert_eq!(stdout(&out).trim(), claim);
}

fn write_calc(env: &TestEnv) {
    std::fs::write(
        env.work().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    std::fs::write(
        env.work().join("test_calc.py"),
        "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n",
    )
    .unwrap();
}

/// Issue 43 item 3: "add" inside `test_add.py` is no request to change anything, so the
/// model's report with the test's output is the answer.
#[tokio::test]
async fn a_verb_inside_a_file_name_is_no_change_request() {
    let report = "test_add.py passes:\n```\nok\n```";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["python3", "test_add.py"]})),
            MockTurn::text(report),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("test_add.py"), "print('ok')\n").unwrap();
    let out = env
        .run(&exec("Run test_add.py and tell me if it passes"))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("[warning]"), "{err}");
    assert_eq!(env.mock.requests().len(), 2);
}

/// The everyday bench's toml-value false success (build `1629b27`): asked for 8080, the
/// model set 8081 and said so; the value the task names must be in the file.
#[tokio::test]
async fn a_value_the_task_names_must_be_in_the_file_it_changed() {
    let request = "In config.toml, change the server port to 8080.";
    let claim = "I changed the server port in config.toml to 8081.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed -i 's/8000/8081/' config.toml")),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("config.toml"),
        "[server]\nhost = \"127.0.0.1\"\nport = 8000\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(stdout(&out).trim(), claim);
    assert!(
        err.contains("[error] the task is not done: `config.toml` does not contain `8080`"),
        "{err}"
    );
    let reqs = env.mock.requests();
    assert!(
        notes(&reqs[2])[0].contains("`config.toml` does not contain `8080`"),
        "{:?}",
        notes(&reqs[2])
    );
}

/// The bench's csv-total false success: `awk` summed the wrong column and the answer said
/// the total was written. The total of the named column must be in the file.
#[tokio::test]
async fn a_total_of_the_wrong_column_is_not_done() {
    let request = "Read sales.csv and write the total of the amount column to total.txt.";
    let claim = "I wrote the total of the amount column to total.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                bash("awk -F, 'NR>1 {s+=$3} END {print s+0}' sales.csv > total.txt"),
            ),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("sales.csv"),
        "item,amount\napple,12\npear,30\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(read(&env.work().join("total.txt")), "0\n");
    assert!(
        err.contains("`total.txt` does not hold the total of the `amount` column of `sales.csv`"),
        "{err}"
    );
}

/// A result written from a file the turn never read is a guess, even when it happens to be
/// right; the same task done by reading the file passes at once, with no note.
#[tokio::test]
async fn a_result_from_a_file_nobody_read_is_not_done_and_one_from_a_read_file_is() {
    let request = "Read sales.csv and write the total of the amount column to total.txt.";
    let guess = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo 1200 > total.txt")),
            MockTurn::text("The total is 1200; I wrote it to total.txt."),
            MockTurn::text("Done."),
            MockTurn::text("Done."),
        ]),
        WireApi::Chat,
    )
    .await;
    let read_it = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["cat", "sales.csv"]})),
            MockTurn::tool_call("shell", bash("echo 1200 > total.txt")),
            MockTurn::text("The total is 1200; it is in total.txt."),
        ]),
        WireApi::Chat,
    )
    .await;
    let csv = format!("item,amount\n{}", "apple,1\n".repeat(1200));
    for env in [&guess, &read_it] {
        std::fs::write(env.work().join("sales.csv"), &csv).unwrap();
    }
    let out = guess.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`sales.csv` was not read: no command or tool of this turn used it"),
        "{err}"
    );
    let out = read_it.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("[warning]"), "{err}");
    assert_eq!(read_it.mock.requests().len(), 3);
}

/// The bench's search-tree false success: asked which file defines a function, the model
/// looked for a made-up path and answered that the function does not exist. A file of the
/// project holds it, so the answer is sent back with a way to search, then fails.
#[tokio::test]
async fn which_file_answered_with_no_file_that_holds_the_name_is_not_an_answer() {
    let request = "Which file in this project defines the function load_settings? Answer with the file's path.";
    let wrong = "The function load_settings does not exist in this project.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                json!({"command": ["cat", "settings/load_settings.py"]}),
            ),
            MockTurn::text(wrong),
            MockTurn::text(wrong),
            MockTurn::text(wrong),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::create_dir_all(env.work().join("app/net")).unwrap();
    std::fs::write(
        env.work().join("app/net/client.py"),
        "def load_settings(path):\n    return open(path).read()\n",
    )
    .unwrap();
    std::fs::write(env.work().join("main.py"), "print('hi')\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(stdout(&out).trim(), wrong, "what the model said is printed");
    assert!(
        err.contains("names no file that contains `load_settings`"),
        "{err}"
    );
    let reqs = env.mock.requests();
    assert!(
        notes(&reqs[2])[0].contains("grep -rn load_settings ."),
        "{:?}",
        notes(&reqs[2])
    );
}

/// The same question answered right, or asked about a name no file holds and answered
/// honestly, is an answer: printed, exit 0, no note.
#[tokio::test]
async fn which_file_answered_right_or_honestly_passes_without_a_note() {
    let cases = [
        ("load_settings", "It is defined in app/net/client.py."),
        (
            "save_everything",
            "No file in this project defines save_everything.",
        ),
    ];
    for (name, answer) in cases {
        let env = TestEnv::new(
            MockScript::turns([
                MockTurn::tool_call("shell", bash(&format!("grep -rn {name} . || true"))),
                MockTurn::text(answer),
            ]),
            WireApi::Chat,
        )
        .await;
        std::fs::create_dir_all(env.work().join("app/net")).unwrap();
        std::fs::write(
            env.work().join("app/net/client.py"),
            "def load_settings(path):\n    return open(path).read()\n",
        )
        .unwrap();
        let request = format!("Which file defines the function {name}? Answer with its path.");
        let out = env.run(&exec(&request)).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert_eq!(stdout(&out).trim(), answer);
        assert!(!err.contains("[warning]"), "{err}");
        assert_eq!(env.mock.requests().len(), 2);
    }
}

/// The bench's read-then-write false success (build `0e9b872`): asked for a greeting "in
/// the form Hello, <name>!", the model wrote the form itself and said it was done.
#[tokio::test]
async fn a_placeholder_of_the_request_left_in_the_file_is_not_done() {
    let request =
        "Create greeting.txt that greets the person named in name.txt, in the form Hello, <name>!";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["cat", "name.txt"]})),
            MockTurn::tool_call("shell", bash("echo 'Hello, <name>!' > greeting.txt")),
            MockTurn::text("I created greeting.txt with the greeting."),
            MockTurn::tool_call("shell", bash("echo 'Hello, Ada!' > greeting.txt")),
            MockTurn::text("greeting.txt now says Hello, Ada!"),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("name.txt"), "Ada\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("greeting.txt")), "Hello, Ada!\n");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 5);
    let sent = notes(&reqs[3]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0].contains(
            "The task is not finished: `greeting.txt` still holds the placeholder `<name>`: write the real value in its place."
        ),
        "{sent:?}"
    );
}

/// Recorded on the real tier (`0ae0876`): asked to change the server port to 8080, the model
/// appended `server_port = 8080` and left `port = 8000`; the file held 8080, so the value
/// check passed it. The setting's own line must hold the value.
#[tokio::test]
async fn a_setting_added_beside_the_one_asked_is_not_the_change() {
    let request = "In config.toml, change the server port to 8080.";
    let claim = "The server port is now 8080.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo 'server_port = 8080' >> config.toml")),
            MockTurn::text(claim),
            MockTurn::tool_call(
                "shell",
                bash("sed -i 's/^port = 8000/port = 8080/' config.toml"),
            ),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("config.toml"),
        "[server]\nhost = \"127.0.0.1\"\nport = 8000\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    assert!(
        notes(&reqs[2])[0].contains(
            "`config.toml` still sets `port` to `8000` (change that line, do not add another)"
        ),
        "{:?}",
        notes(&reqs[2])
    );
    assert!(read(&env.work().join("config.toml")).contains("\nport = 8080\n"));
}

/// The recorded false success of the everyday bench (round 4): asked to replace a word,
/// the model wrote the new word over the whole file. Every word of the task held, and the
/// user's lines were gone; the file as it was when the turn started says so.
#[tokio::test]
async fn a_file_overwritten_by_a_replace_is_sent_back_then_restored() {
    let request = "In notes.txt, replace the word apple with banana everywhere.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo banana > notes.txt")),
            MockTurn::text("The word apple is replaced with banana in notes.txt."),
            MockTurn::tool_call(
                "shell",
                bash("printf 'The banana is red.\\nI like banana pie.\\n' > notes.txt"),
            ),
            MockTurn::text("notes.txt now says banana where it said apple."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("notes.txt"),
        "The apple is red.\nI like apple pie.\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        read(&env.work().join("notes.txt")),
        "The banana is red.\nI like banana pie.\n"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4, "{err}");
    let sent = notes(&reqs[2]);
    assert!(
        sent.iter().any(|n| n.contains(
            "`notes.txt` no longer holds lines the task did not ask to remove: `The banana is red.` (`The apple is red.` with `apple` replaced), `I like banana pie.`"
        )),
        "{sent:?}"
    );
    // docs/providers.md shows the warning as it is printed.
    let warning = err
        .lines()
        .find(|l| l.contains("no longer holds lines"))
        .expect("the warning is printed");
    let doc =
        read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/providers.md"));
    assert!(doc.contains(warning.trim()), "{warning}");
}

/// Appending by overwriting loses the user's lines: the turn fails with what was lost, and
/// the model's answer is still printed.
#[tokio::test]
async fn an_append_that_overwrote_the_file_fails_with_the_lost_lines() {
    let request = "Add a line 'walk the dog' at the end of todo.txt.";
    let answer = "I added 'walk the dog' at the end of todo.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo 'walk the dog' > todo.txt")),
            MockTurn::text(answer),
            MockTurn::text(answer),
            MockTurn::text(answer),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("todo.txt"), "buy milk\ncall mom\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(stdout(&out).trim(), answer);
    assert!(
        err.contains("`todo.txt` no longer holds lines the task did not ask to remove: `buy milk`, `call mom`"),
        "{err}"
    );
}

/// Round 9's false success: asked for a line, the model appended `walk the dogn` (an
/// `echo -e` whose `\n` went astray). The line asked for must be a line of the file.
#[tokio::test]
async fn a_line_with_more_than_was_asked_is_sent_back() {
    let request = "Add a line 'walk the dog' at the end of todo.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("printf 'walk the dogn\\n' >> todo.txt")),
            MockTurn::text("The line 'walk the dog' has been appended to todo.txt."),
            MockTurn::tool_call(
                "shell",
                bash("printf 'buy milk\\nwalk the dog\\n' > todo.txt"),
            ),
            MockTurn::text("todo.txt ends with walk the dog."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("todo.txt"), "buy milk\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        read(&env.work().join("todo.txt")),
        "buy milk\nwalk the dog\n"
    );
    assert!(
        err.contains("`todo.txt` has no line that is exactly `walk the dog`"),
        "{err}"
    );
    assert_eq!(env.mock.requests().len(), 4);
}

/// The false success of CI's real tier: the new value added under the old one under the
/// same key. The line asked for was there and no line was lost, and the config no longer
/// loads; the model is told, and a run that leaves it so fails.
#[tokio::test]
async fn a_config_the_change_left_invalid_is_sent_back_then_fails() {
    let request = "In config.toml, change the server port to 8080.";
    let claim = "The command ran successfully.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                bash("sed -i 's/^port = 8000$/port = 8000\\nport = 8080/' config.toml"),
            ),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    let config = "[server]\nhost = \"127.0.0.1\"\nport = 8000\n";
    std::fs::write(env.work().join("config.toml"), config).unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        read(&env.work().join("config.toml")).contains("port = 8000\nport = 8080\n"),
        "the mock's command ran"
    );
    // Sent back twice (as any unfinished task), then failed.
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    let note = notes(&reqs[2]).join("\n");
    assert!(
        note.contains("`config.toml` is no longer valid TOML (duplicate key"),
        "{note}"
    );
    assert!(err.contains("is no longer valid TOML"), "{err}");
}

/// The recorded delete-lines runs (rounds 8 and 10): a pipeline that reads the file and
/// writes over it, which the shell empties before the read. It filters the file in place.
#[tokio::test]
async fn a_pipeline_over_its_own_input_keeps_the_file() {
    let request = "Delete the lines containing TODO from notes.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("cat notes.txt | grep -v 'TODO' > notes.txt")),
            MockTurn::text("I deleted the TODO lines."),
        ]),
        WireApi::Chat,
    )
    .await;
    let notes_txt = env.work().join("notes.txt");
    std::fs::write(&notes_txt, "keep one\nTODO: fix the roof\nkeep two\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&notes_txt), "keep one\nkeep two\n");
    let temporary: Vec<_> = std::fs::read_dir(env.work())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".oi-write"))
        .collect();
    assert_eq!(temporary, Vec::<String>::new(), "no temporary file is left");
    // What ran is what was shown: the command as rewritten.
    assert!(err.contains(".notes.txt.oi-write"), "{err}");
}

/// The recorded rename-function run (round 11): the files moved away, then an editor that
/// cannot run without a terminal. Nothing of such a command runs; the model is told how to
/// change files here, and its next command does it.
#[tokio::test]
async fn a_command_opening_an_editor_runs_nothing_and_says_how_to_edit() {
    let request = "Rename the function compute_total to calculate_total in shop.py.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("mv shop.py shop.py.bak; nano shop.py")),
            MockTurn::tool_call(
                "shell",
                bash("sed -i 's/compute_total/calculate_total/' shop.py"),
            ),
            MockTurn::text("I renamed compute_total to calculate_total in shop.py."),
        ]),
        WireApi::Chat,
    )
    .await;
    let shop = env.work().join("shop.py");
    std::fs::write(
        &shop,
        "def compute_total(prices):\n    return sum(prices)\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !env.work().join("shop.py.bak").exists(),
        "the mv did not run"
    );
    assert_eq!(
        read(&shop),
        "def calculate_total(prices):\n    return sum(prices)\n"
    );
    let second = serde_json::to_string(&env.mock.requests()[1].items()).unwrap();
    assert!(
        second.contains("`nano` needs a terminal, and commands here run without one: nothing of this command ran."),
        "{second}"
    );
}

/// Round 13's delete-lines run: the task done, the answer wrapped in the notes' tags. The
/// run succeeds and prints the model's own words.
#[tokio::test]
async fn a_done_task_answered_inside_note_tags_succeeds_with_its_words() {
    let request = "Delete the lines containing TODO from notes.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed -i '/TODO/d' notes.txt")),
            MockTurn::text(
                "<system_note>\nThe lines containing TODO have been deleted from notes.txt.\n</system_note>",
            ),
        ]),
        WireApi::Chat,
    )
    .await;
    let notes_txt = env.work().join("notes.txt");
    std::fs::write(&notes_txt, "keep one\nTODO: fix the roof\nkeep two\n").unwrap();
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "The lines containing TODO have been deleted from notes.txt."
    );
    assert_eq!(env.mock.requests().len(), 2);
}

/// Round 14's edit-file runs: `sed` without `-i` printed the change and left the file. The
/// output the model reads says so above what it printed.
#[tokio::test]
async fn a_printing_sed_says_the_file_is_unchanged() {
    let request = "Replace apple with banana in notes.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed 's/apple/banana/g' notes.txt")),
            MockTurn::tool_call("shell", bash("sed -i 's/apple/banana/g' notes.txt")),
            MockTurn::text("notes.txt now says banana."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("notes.txt"), "The apple is red.\n").unwrap();
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    let printed = reqs[1]
        .items()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|t| t.starts_with("Exit code: 0"))
        .map(str::to_string)
        .expect("the sed's output");
    assert!(
        printed.contains("Note: `sed` without `-i` only printed the changed text below; notes.txt itself is unchanged.")
            && printed.contains("To change the file, run the same command with `sed -i`.\nOutput:\n")
            // A login shell may print its own lines first (pyenv on some machines).
            && printed.ends_with("The banana is red.\n"),
        "{printed}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work().join("notes.txt")).unwrap(),
        "The banana is red.\n"
    );
}

/// Round 15's write-script run: `echo '…\n…' > count.py` in bash wrote one line of
/// backslash-n. The output the model reads says so and how to write line breaks.
#[tokio::test]
async fn an_echo_of_backslash_n_says_the_file_got_one_line() {
    let request = "Write a Python script count.py that prints the numbers 1 to 3, one per line.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                bash("echo 'print(1)\\nprint(2)\\nprint(3)' > count.py"),
            ),
            MockTurn::tool_call(
                "shell",
                bash("echo -e 'print(1)\\nprint(2)\\nprint(3)' > count.py"),
            ),
            MockTurn::text("count.py prints 1 to 3."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    let printed = reqs[1]
        .items()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|t| t.starts_with("Exit code: 0"))
        .map(str::to_string)
        .expect("the echo's output");
    assert!(
        printed.contains("Note: bash's `echo` wrote each `\\n` as the two characters `\\` and `n`, not as a line break, so count.py holds a single line. To write line breaks, run the same command with `echo -e`"),
        "{printed}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work().join("count.py")).unwrap(),
        "print(1)\nprint(2)\nprint(3)\n"
    );
}
