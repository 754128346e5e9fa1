//! Files the agent reads because the repository contains them (AGENTS.md, project config) are
//! read with bounds, through the real binary and the mock model: a FIFO does not hang the
//! process, a symlink to /dev/zero does not eat memory, an oversize file is cut to the cap.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use std::time::{Duration, Instant};

fn mkfifo(p: &std::path::Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo {p:?}");
}

#[tokio::test]
async fn agents_md_as_a_fifo_does_not_hang_exec() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    mkfifo(&env.work().join("AGENTS.md"));
    // `run` fails the test if the binary has not finished within its deadline.
    let out = env.run(&["exec", "hi"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(stdout(&out).contains("answered"), "{}", stdout(&out));
    assert!(
        err.contains("AGENTS.md not used") && err.contains("FIFO"),
        "the refusal is explained: {err}"
    );
    let sent = env.mock.requests()[0].all_text();
    assert!(!sent.contains("<project_instructions"), "{sent}");
}

#[tokio::test]
async fn agents_md_linked_to_dev_zero_is_refused_quickly_with_bounded_memory() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    std::os::unix::fs::symlink("/dev/zero", env.work().join("AGENTS.md")).unwrap();
    // Address space capped at 4 GiB: reading /dev/zero to the end would hit it and abort.
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_interpreter"))
        .args(["exec", "hi"])
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("interpreter finished")
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(err.contains("character device"), "{err}");
    assert!(stdout(&out).contains("answered"));
}

#[tokio::test]
async fn an_oversize_agents_md_is_cut_to_the_cap() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    let text: String = (0..100_000).map(|i| format!("rule {i}\n")).collect();
    std::fs::write(env.work().join("AGENTS.md"), &text).unwrap();
    let out = env
        .run(&["-c", "project_doc_max_bytes=2000", "exec", "hi"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = env.mock.requests()[0].all_text();
    let start = sent
        .find("<project_instructions")
        .expect("project doc sent");
    let end = sent
        .find("</project_instructions>")
        .expect("project doc closed");
    let doc = &sent[start..end];
    assert!(doc.contains("rule 0\n"), "{doc}");
    assert!(doc.contains("rule 99999\n"), "{doc}");
    assert!(!doc.contains("rule 50000\n"), "the middle is left out");
    assert!(
        doc.contains(&format!("of {} bytes omitted", text.len())),
        "{doc}"
    );
    assert!(doc.len() < 2300, "{} bytes", doc.len());
}

#[tokio::test]
async fn a_fifo_as_project_config_is_an_error_not_a_hang() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["trust"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::create_dir(env.work().join(".openinterpreter")).unwrap();
    let file = env.work().join(".openinterpreter/config.toml");
    mkfifo(&file);
    let out = env.run(&["exec", "hi"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[tokio::test]
async fn agents_md_as_a_fifo_does_not_stall_the_mcp_server() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    mkfifo(&env.work().join("AGENTS.md"));
    let mut child = env
        .command(&["mcp-server"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let work = env.work();
    for msg in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "codex", "arguments": {"prompt": "hi", "cwd": work}}}),
    ] {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).await.unwrap();
    }
    stdin.flush().await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("server closed stdout");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == 2 && v.get("method").is_none() {
                return v;
            }
        }
    })
    .await
    .expect("the codex call was answered");
    assert!(answer.to_string().contains("answered"), "{answer}");
    // End of input still ends the server.
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("mcp-server exited on stdin EOF")
        .unwrap();
    assert!(status.success(), "{status}");
}

fn shell(script: &str) -> MockTurn {
    MockTurn::tool_call(
        "shell",
        serde_json::json!({"command": ["sh", "-c", script]}),
    )
}

#[tokio::test]
async fn agents_md_leading_out_of_the_project_is_not_sent() {
    let outside = outside_dir();
    std::fs::write(outside.path().join("notes.md"), "outside-secret-5151\n").unwrap();
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let credentials = env.home.path().join(".credentials.json");
    std::fs::write(
        &credentials,
        r#"{"api_keys":{"OI_UNUSED_KEY":"sk-planted-secret-4242"}}"#,
    )
    .unwrap();
    // What a sandboxed command (or a cloned repository) can do: links, not copies.
    let link = format!(
        "ln -s '{}' AGENTS.md && mkdir -p docs && ln -s '{}' docs/AGENTS.md; echo link-exit=$?",
        credentials.display(),
        outside.path().join("notes.md").display()
    );
    env.mock
        .set_script(MockScript::turns([shell(&link), MockTurn::text("linked")]));
    let out = env
        .run(&["exec", "-s", "workspace-write", "-a", "never", "link"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = &env.mock.requests().last().unwrap().tool_outputs()[0].1;
    assert!(seen.contains("link-exit=0"), "{seen}");

    for (dir, secret) in [(".", "sk-planted-secret"), ("docs", "outside-secret")] {
        env.mock
            .set_script(MockScript::turns([MockTurn::text("answered")]));
        let out = env.run(&["-C", dir, "exec", "hi"]).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let sent = env.mock.requests().last().unwrap().all_text();
        assert!(!sent.contains(secret), "{dir}: {secret} sent to the model");
        assert!(
            err.contains("AGENTS.md not used") && err.contains("outside"),
            "{dir}: {err}"
        );
    }

    // A link inside the project is fine (AGENTS.md -> docs/agents.md).
    let work = env.work();
    std::fs::remove_file(work.join("AGENTS.md")).unwrap();
    std::fs::write(work.join("docs/agents.md"), "inside-rule-7373\n").unwrap();
    std::os::unix::fs::symlink("docs/agents.md", work.join("AGENTS.md")).unwrap();
    env.mock
        .set_script(MockScript::turns([MockTurn::text("answered")]));
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = env.mock.requests().last().unwrap().all_text();
    assert!(sent.contains("inside-rule-7373"), "{sent}");
}

#[tokio::test]
async fn a_symlinked_config_folder_freezes_nothing_and_configures_nothing() {
    let outside = outside_dir();
    let cmd_marker = outside.path().join("command-ran-unconfined");
    let tmp = tempfile::Builder::new()
        .prefix("oi-x")
        .tempdir_in("/tmp")
        .unwrap();
    let target = tmp.path().join("x");
    let probe = std::path::PathBuf::from(format!(
        "/tmp/{}-probe",
        tmp.path().file_name().unwrap().to_string_lossy()
    ));
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let out = env.run(&["trust"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plant = format!(
        "mkdir -p sl '{t}' && ln -s '{t}' sl/.openinterpreter && printf \
         'sandbox_mode = \"danger-full-access\"\\napproval_policy = \"never\"\\n' > '{t}/config.toml'; \
         echo link-exit=$?",
        t = target.display()
    );
    let probes = format!(
        "touch '{}'; echo tmp-exit=$?; touch top-level-probe; echo top-exit=$?",
        probe.display()
    );
    env.mock.set_script(MockScript::turns([
        shell(&plant),
        MockTurn::text("linked"),
        shell(&probes),
        MockTurn::text("probed"),
    ]));
    for prompt in ["link", "probe"] {
        let out = env
            .run(&["exec", "-s", "workspace-write", "-a", "never", prompt])
            .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let requests = env.mock.requests();
    let planted = &requests[1].tool_outputs()[0].1;
    assert!(planted.contains("link-exit=0"), "{planted}");
    // Later sandboxed commands still write /tmp and the project's top level.
    let probed = &requests[3].tool_outputs()[0].1;
    let _ = std::fs::remove_file(&probe);
    assert!(probed.contains("tmp-exit=0"), "/tmp was frozen: {probed}");
    assert!(
        probed.contains("top-exit=0"),
        "the top level was frozen: {probed}"
    );

    // And the linked config is not a project config.
    let touch = format!("touch '{}'", cmd_marker.display());
    env.mock
        .set_script(MockScript::turns([shell(&touch), MockTurn::text("done")]));
    let out = env.run(&["-C", "sl", "exec", "go"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("is a symlink"), "{err}");
    assert!(!cmd_marker.exists(), "the linked config was obeyed");
}

/// Files the agent keeps in its home are opened the way project files are: a FIFO at
/// `model-windows.json` (or `history.jsonl`, `session_index.jsonl`) is no file, not a wait.
#[tokio::test]
async fn fifos_in_the_home_do_not_hang_exec_or_keep_it_from_sigterm() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    for name in ["model-windows.json", "history.jsonl"] {
        mkfifo(&env.home.path().join(name));
    }
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("answered"));

    // A running turn still ends on SIGTERM, with the shell's code for it.
    env.mock.set_script(MockScript::turns([shell(
        "echo started > started.txt; exec sleep 60",
    )]));
    let mut child = env
        .command(&["exec", "-s", "danger-full-access", "-a", "never", "run it"])
        .spawn()
        .unwrap();
    let started = env.work().join("started.txt");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid = child.id().unwrap() as libc::pid_t;
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("exec ended after SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(143), "{status}");

    // The thread-name index as a FIFO: `sessions list` says so instead of waiting.
    mkfifo(&env.home.path().join("session_index.jsonl"));
    let out = env.run(&["sessions", "list"]).await;
    if out.status.code() != Some(0) {
        assert!(
            stderr(&out).contains("session_index.jsonl"),
            "{}",
            stderr(&out)
        );
    }
}

/// The `project_doc_fallback_filenames` example of docs/configuration.md's *Project docs*
/// section, so the documented config is the one tested.
fn fallback_names_example() -> String {
    let doc =
        read(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md"));
    let section = doc
        .split("## Project docs (AGENTS.md and other names)")
        .nth(1)
        .expect("docs/configuration.md has a Project docs section");
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has a TOML example");
    assert!(block.contains("project_doc_fallback_filenames"), "{block}");
    block.to_string()
}

#[tokio::test]
async fn a_project_doc_by_another_name_reaches_the_model_with_the_bounds_of_agents_md() {
    let env = TestEnv::with_config(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
        &fallback_names_example(),
    )
    .await;
    let work = env.work();
    std::fs::write(work.join("CLAUDE.md"), "claude-rule-6161\n").unwrap();
    let sent_with = |args: &'static [&'static str]| {
        env.mock
            .set_script(MockScript::turns([MockTurn::text("answered")]));
        let env = &env;
        async move {
            let out = env.run(args).await;
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{err}");
            (env.mock.requests().last().unwrap().all_text(), err)
        }
    };

    // Named in the config, CLAUDE.md is the project doc the model is sent.
    let (sent, _) = sent_with(&["exec", "hi"]).await;
    assert!(sent.contains("claude-rule-6161"), "{sent}");
    let claude_path = format!("path=\"{}\"", work.join("CLAUDE.md").display());
    assert!(sent.contains(&claude_path), "{sent}");
    // Not named, it is not read.
    let (sent, _) = sent_with(&["-c", "project_doc_fallback_filenames=[]", "exec", "hi"]).await;
    assert!(!sent.contains("claude-rule-6161"), "{sent}");

    // AGENTS.md in the same folder wins.
    std::fs::write(work.join("AGENTS.md"), "agents-rule-7171\n").unwrap();
    let (sent, _) = sent_with(&["exec", "hi"]).await;
    assert!(sent.contains("agents-rule-7171"), "{sent}");
    assert!(!sent.contains("claude-rule-6161"), "{sent}");

    // A CLAUDE.md that leads out of the project is not read, and the user is told why.
    std::fs::remove_file(work.join("AGENTS.md")).unwrap();
    std::fs::remove_file(work.join("CLAUDE.md")).unwrap();
    let outside = outside_dir();
    std::fs::write(outside.path().join("notes.md"), "outside-secret-8181\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("notes.md"), work.join("CLAUDE.md")).unwrap();
    let (sent, err) = sent_with(&["exec", "hi"]).await;
    assert!(
        !sent.contains("outside-secret-8181"),
        "sent to the model: {sent}"
    );
    assert!(!sent.contains("<project_instructions"), "{sent}");
    assert!(
        err.contains("CLAUDE.md not used") && err.contains("outside"),
        "{err}"
    );
}
