use super::*;

fn command(name: &str, args: &str) -> Vec<String> {
    match interpret(name, args) {
        Some(Ok(Action::Command(req))) => req.argv,
        other => panic!("{name} {args}: {other:?}"),
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

#[test]
fn auto_follows_the_model_family() {
    assert_eq!(for_model("qwen2.5-coder-1.5b-instruct"), Harness::QwenCode);
    assert_eq!(
        for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        Harness::QwenCode
    );
    assert_eq!(for_model("kimi-k2-0905-preview"), Harness::KimiCode);
    assert_eq!(for_model("zai-org/GLM-4.6"), Harness::ClaudeCode);
    assert_eq!(for_model("deepseek-chat"), Harness::ClaudeCode);
    assert_eq!(for_model("gpt-oss:20b"), Harness::Codex);
    assert_eq!(for_model("llama3.1:8b"), Harness::Codex);
}

#[test]
fn every_offered_tool_is_understood() {
    for h in [
        Harness::ClaudeCode,
        Harness::QwenCode,
        Harness::KimiCode,
        Harness::Minimal,
    ] {
        let specs = tool_specs(h).unwrap();
        assert!(specs.len() >= 7 || h == Harness::Minimal, "{h}");
        for s in specs {
            assert!(is_profile_tool(&s.name), "{h}: {}", s.name);
            assert_eq!(s.parameters["type"], "object");
            // Each required field is a property.
            for r in s.parameters["required"].as_array().unwrap() {
                assert!(
                    s.parameters["properties"]
                        .get(r.as_str().unwrap())
                        .is_some(),
                    "{}",
                    s.name
                );
            }
        }
    }
    assert!(tool_specs(Harness::Codex).is_none());
}

#[test]
fn shells_take_a_command_line_with_their_timeout_unit() {
    let Some(Ok(Action::Command(req))) = interpret(
        "Bash",
        r#"{"command":"ls -la","timeout":2500,"description":"list"}"#,
    ) else {
        panic!()
    };
    assert_eq!(req.argv, words(&["bash", "-lc", "ls -la"]));
    assert_eq!(req.timeout, Some(Duration::from_millis(2500)));
    assert_eq!(req.escalation, None);
    let Some(Ok(Action::Command(req))) = interpret("Shell", r#"{"command":"make","timeout":30}"#)
    else {
        panic!()
    };
    assert_eq!(req.timeout, Some(Duration::from_secs(30)));
    let Some(Ok(Action::Command(req))) = interpret(
        "run_shell_command",
        r#"{"command":"pwd","directory":"src"}"#,
    ) else {
        panic!()
    };
    assert_eq!(req.workdir.as_deref(), Some("src"));
    let Some(Ok(Action::Command(req))) = interpret(
        "Bash",
        r#"{"command":"curl x","dangerouslyDisableSandbox":true,"description":"needs the network"}"#,
    ) else {
        panic!()
    };
    assert_eq!(req.escalation.as_deref(), Some("needs the network"));
    // An argv array, as a model used to `shell` sends it, is quoted into one line.
    assert_eq!(
        command("Bash", r#"{"command":["echo","a b"]}"#),
        words(&["bash", "-lc", "echo 'a b'"])
    );
    let err = interpret("Bash", "{}").unwrap().unwrap_err();
    assert!(err.contains("needs `command`"), "{err}");
}

#[test]
fn reads_are_plain_read_only_commands() {
    assert_eq!(
        command("Read", r#"{"file_path":"a.txt"}"#),
        words(&["cat", "a.txt"])
    );
    assert_eq!(
        command("Read", r#"{"file_path":"a.txt","offset":10,"limit":5}"#),
        words(&["sed", "-n", "10,14p", "a.txt"])
    );
    // Qwen Code counts from 0.
    assert_eq!(
        command(
            "read_file",
            r#"{"absolute_path":"/x/a.txt","offset":0,"limit":2}"#
        ),
        words(&["sed", "-n", "1,2p", "/x/a.txt"])
    );
    assert_eq!(
        command("ReadFile", r#"{"path":"-odd","line_offset":3}"#),
        words(&["sed", "-n", "3,$p", "./-odd"])
    );
    let err = interpret("Read", "{}").unwrap().unwrap_err();
    assert!(err.contains("file_path"), "{err}");
    for argv in [
        command("Read", r#"{"file_path":"a.txt"}"#),
        command("Read", r#"{"file_path":"a.txt","offset":2}"#),
        command("Glob", r#"{"pattern":"**/*.py"}"#),
        command("Grep", r#"{"pattern":"fn main","glob":"*.rs"}"#),
        command("list_directory", r#"{"path":"."}"#),
    ] {
        assert!(crate::safety::is_known_safe_command(&argv), "{argv:?}");
    }
}

#[test]
fn globs_and_searches_become_find_and_grep() {
    assert_eq!(
        command("Glob", r#"{"pattern":"*.py"}"#),
        words(&[
            "find", ".", "-name", ".git", "-prune", "-o", "-name", "*.py", "-type", "f", "-print"
        ])
    );
    assert_eq!(
        command("glob", r#"{"pattern":"src/**/*.rs","path":"/p"}"#),
        words(&[
            "find",
            "/p",
            "-name",
            ".git",
            "-prune",
            "-o",
            "-path",
            "/p/src/*.rs",
            "-type",
            "f",
            "-print"
        ])
    );
    assert_eq!(
        command("Grep", r#"{"pattern":"TODO","-i":true}"#),
        words(&[
            "grep",
            "-rIE",
            "-l",
            "-i",
            "--exclude-dir=.git",
            "-e",
            "TODO",
            "."
        ])
    );
    assert_eq!(
        command(
            "search_file_content",
            r#"{"pattern":"x+","path":"src","include":"**/*.ts"}"#
        ),
        words(&[
            "grep",
            "-rIE",
            "-n",
            "--exclude-dir=.git",
            "--include=*.ts",
            "-e",
            "x+",
            "src"
        ])
    );
    assert_eq!(
        command("Grep", r#"{"pattern":"a","output_mode":"content"}"#)[2],
        "-n"
    );
}

#[test]
fn globs_really_find_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    for f in [
        "top.rs",
        "src/a.rs",
        "src/deep/b.rs",
        "src/c.txt",
        ".git/x.rs",
    ] {
        std::fs::write(root.join(f), "").unwrap();
    }
    let found = |pattern: &str| {
        let argv = command("Glob", &serde_json::json!({"pattern": pattern}).to_string());
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(root)
            .output()
            .unwrap();
        let mut files: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        files.sort();
        files
    };
    assert_eq!(found("src/**/*.rs"), ["./src/a.rs", "./src/deep/b.rs"]);
    assert_eq!(
        found("**/*.rs"),
        ["./src/a.rs", "./src/deep/b.rs", "./top.rs"]
    );
    assert_eq!(found("*.txt"), ["./src/c.txt"]);
}

#[test]
fn writes_and_edits_become_file_changes() {
    assert_eq!(
        interpret("Write", r#"{"file_path":"a.txt","content":"hi\n"}"#),
        Some(Ok(Action::Write {
            path: "a.txt".into(),
            content: "hi\n".into(),
            append: false
        }))
    );
    assert_eq!(
        interpret(
            "WriteFile",
            r#"{"path":"a.txt","content":"more","mode":"append"}"#
        ),
        Some(Ok(Action::Write {
            path: "a.txt".into(),
            content: "more".into(),
            append: true
        }))
    );
    assert_eq!(
        interpret(
            "Edit",
            r#"{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}"#
        ),
        Some(Ok(Action::Replace {
            path: "a".into(),
            edits: vec![Replacement {
                old: "x".into(),
                new: "y".into(),
                expected: Some(0)
            }]
        }))
    );
    let Some(Ok(Action::Replace { edits, .. })) = interpret(
        "replace",
        r#"{"file_path":"a","old_string":"x","new_string":"y","expected_replacements":3}"#,
    ) else {
        panic!()
    };
    assert_eq!(edits[0].expected, Some(3));
    let Some(Ok(Action::Replace { edits, .. })) = interpret(
        "StrReplaceFile",
        r#"{"path":"a","edit":[{"old":"1","new":"2"},{"old":"3","new":"4","replace_all":true}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(edits.len(), 2);
    assert_eq!((edits[1].old.as_str(), edits[1].expected), ("3", Some(0)));
    let err = interpret("StrReplaceFile", r#"{"path":"a"}"#)
        .unwrap()
        .unwrap_err();
    assert!(err.contains("\"edit\""), "{err}");
    let err = interpret("Write", r#"{"file_path":"a"}"#)
        .unwrap()
        .unwrap_err();
    assert!(err.contains("needs `content`"), "{err}");
}

#[test]
fn todo_lists_of_every_profile_are_read() {
    let Some(Ok(Action::Todo(items))) = interpret(
        "TodoWrite",
        r#"{"todos":[{"content":"a","status":"completed","activeForm":"doing a"},{"content":"b","status":"in_progress"}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(items[0].status, PlanStepStatus::Completed);
    assert_eq!(items[1].status, PlanStepStatus::InProgress);
    let Some(Ok(Action::Todo(items))) = interpret(
        "SetTodoList",
        r#"{"todos":[{"title":"x","status":"done"}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(
        (items[0].text.as_str(), items[0].status),
        ("x", PlanStepStatus::Completed)
    );
}

#[test]
fn bad_json_says_what_to_send() {
    let err = interpret("Edit", "{not json").unwrap().unwrap_err();
    assert!(err.starts_with("invalid arguments for `Edit`"), "{err}");
    assert!(interpret("shell", "{}").is_none());
}
