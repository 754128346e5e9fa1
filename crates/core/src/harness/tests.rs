use super::*;

/// Every profile of its own (not Codex's prompt and tools, not `auto`), so a profile added
/// to `Harness::ALL` is held to the tests below.
fn profiles() -> impl Iterator<Item = Harness> {
    Harness::ALL
        .into_iter()
        .filter(|h| !matches!(h, Harness::Codex | Harness::Auto))
}

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
fn auto_gives_the_smallest_qwen_models_minimal() {
    for id in [
        "qwen2.5-coder-1.5b-instruct",
        "qwen2.5-coder:1.5b",
        "Qwen/Qwen2.5-Coder-3B-Instruct-GGUF",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "hf.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF:Q4_K_M",
    ] {
        assert_eq!(for_model(id), Harness::Minimal, "{id}");
    }
    for id in [
        "qwen2.5-coder-7b-instruct",
        "qwen2.5-coder:14b",
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "qwen3-coder",
        "qwen2.5-coder",
    ] {
        assert_eq!(for_model(id), Harness::QwenCode, "{id}");
    }
    // Only Qwen is measured small: other families keep their profile at any size.
    assert_eq!(for_model("llama3.2:3b"), Harness::Codex);
    assert_eq!(for_model("deepseek-coder:1.3b"), Harness::ClaudeCodeBare);
}

#[test]
fn auto_follows_the_model_family() {
    assert_eq!(for_model("qwen2.5-coder-7b-instruct"), Harness::QwenCode);
    assert_eq!(
        for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        Harness::QwenCode
    );
    assert_eq!(for_model("QwQ-32B"), Harness::QwenCode);
    assert_eq!(for_model("kimi-k2-0905-preview"), Harness::KimiCode);
    assert_eq!(for_model("moonshot-v1-128k"), Harness::KimiCode);
    assert_eq!(for_model("zai-org/GLM-4.6"), Harness::ClaudeCode);
    assert_eq!(for_model("MiniMax-M2"), Harness::ClaudeCode);
    assert_eq!(for_model("claude-sonnet-4-5"), Harness::ClaudeCode);
    // The seed system's table: DeepSeek gets Claude Code's tools without the long prompt.
    assert_eq!(for_model("deepseek-chat"), Harness::ClaudeCodeBare);
    assert_eq!(
        for_model("deepseek-ai/DeepSeek-V3.1-Terminus"),
        Harness::ClaudeCodeBare
    );
    assert_eq!(for_model("gpt-oss:20b"), Harness::Codex);
    assert_eq!(for_model("llama3.1:8b"), Harness::Codex);
    assert_eq!(for_model(""), Harness::Codex);
}

#[test]
fn auto_gives_messages_endpoints_claude_code() {
    // Whatever the model, an Anthropic Messages endpoint gets Claude Code's profile...
    for model in [
        "glm-4.6",
        "kimi-k2-turbo",
        "MiniMax-M2",
        "qwen3-coder",
        "gpt-oss",
    ] {
        assert_eq!(
            for_endpoint(WireApi::Messages, model),
            Harness::ClaudeCode,
            "{model}"
        );
    }
    // ...DeepSeek's its bare variant, as by family.
    assert_eq!(
        for_endpoint(WireApi::Messages, "deepseek-chat"),
        Harness::ClaudeCodeBare
    );
    // Other wires go by family.
    assert_eq!(for_endpoint(WireApi::Chat, "kimi-k2"), Harness::KimiCode);
    assert_eq!(
        for_endpoint(WireApi::Responses, "qwen3-coder"),
        Harness::QwenCode
    );
    assert_eq!(for_endpoint(WireApi::Chat, "llama3"), Harness::Codex);
}

#[test]
fn auto_resolves_through_the_config() {
    let home = tempfile::tempdir().unwrap();
    let load = |toml: &str| {
        std::fs::write(home.path().join("config.toml"), toml).unwrap();
        oi_config::load_config(oi_config::ConfigLoadOptions {
            home: Some(home.path().to_path_buf()),
            cli_overrides: Vec::new(),
            overrides: oi_config::ConfigOverrides {
                cwd: Some(home.path().to_path_buf()),
                ..Default::default()
            },
        })
        .unwrap()
        .config
    };
    let base = "harness = \"auto\"\nmodel_provider = \"p\"\n";
    let messages = load(&format!(
        "{base}model = \"glm-4.6\"\n[model_providers.p]\nname = \"P\"\nbase_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"messages\"\n"
    ));
    assert_eq!(resolve(&messages), Harness::ClaudeCode);
    let chat = load(&format!(
        "{base}model = \"deepseek-chat\"\n[model_providers.p]\nname = \"P\"\nbase_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"chat\"\n"
    ));
    assert_eq!(resolve(&chat), Harness::ClaudeCodeBare);
    // The provider's own `harness` wins over the table.
    let pinned = load(&format!(
        "{base}model = \"deepseek-chat\"\n[model_providers.p]\nname = \"P\"\nbase_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"messages\"\nharness = \"swe-agent\"\n"
    ));
    assert_eq!(resolve(&pinned), Harness::SweAgent);
    // A chosen profile is kept.
    let chosen = load("harness = \"zcode\"\nmodel = \"deepseek-chat\"\n");
    assert_eq!(resolve(&chosen), Harness::Zcode);
}

#[test]
fn every_profile_name_is_accepted() {
    for h in Harness::ALL {
        assert_eq!(Harness::parse(h.as_str()), Some(h));
        assert!(!h.summary().is_empty());
    }
    assert_eq!(Harness::parse("native"), Some(Harness::Codex));
    for name in [
        "claude-code-bare",
        "zcode",
        "kimi-cli",
        "deepseek-tui",
        "swe-agent",
    ] {
        assert!(Harness::parse(name).is_some(), "{name}");
    }
}

#[test]
fn every_offered_tool_is_understood() {
    for h in profiles() {
        assert_ne!(instructions(h), instructions(Harness::Codex), "{h}");
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
    let err = interpret("Bash", "{}").unwrap().unwrap_err().0;
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
    let err = interpret("Read", "{}").unwrap().unwrap_err().0;
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
        .unwrap_err()
        .0;
    assert!(err.contains("\"edit\""), "{err}");
    let err = interpret("Write", r#"{"file_path":"a"}"#)
        .unwrap()
        .unwrap_err()
        .0;
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
    let err = interpret("Edit", "{not json").unwrap().unwrap_err().0;
    assert!(err.starts_with("invalid arguments for `Edit`"), "{err}");
    assert!(interpret("shell", "{}").is_none());
}

#[test]
fn every_profile_has_its_own_prompt() {
    let profiles: Vec<Harness> = profiles().collect();
    for (i, a) in profiles.iter().enumerate() {
        for b in &profiles[i + 1..] {
            assert_ne!(instructions(*a), instructions(*b), "{a} and {b}");
        }
    }
    // The bare variant is the short one.
    assert!(
        instructions(Harness::ClaudeCodeBare).len() * 2 < instructions(Harness::ClaudeCode).len()
    );
}

#[test]
fn deepseek_tui_tools_land_on_the_primitives() {
    assert_eq!(
        command(
            "exec_shell",
            r#"{"command":"make","timeout_ms":1500,"cwd":"src"}"#
        ),
        words(&["bash", "-lc", "make"])
    );
    let Some(Ok(Action::Command(req))) = interpret(
        "exec_shell",
        r#"{"command":"make","timeout_ms":1500,"cwd":"src"}"#,
    ) else {
        panic!()
    };
    assert_eq!(req.timeout, Some(Duration::from_millis(1500)));
    assert_eq!(req.workdir.as_deref(), Some("src"));
    assert_eq!(
        command("read_file", r#"{"path":"a.txt"}"#),
        words(&["cat", "a.txt"])
    );
    assert_eq!(
        interpret("edit_file", r#"{"path":"a","search":"x","replace":"y"}"#),
        Some(Ok(Action::Replace {
            path: "a".into(),
            edits: vec![Replacement {
                old: "x".into(),
                new: "y".into(),
                expected: None
            }]
        }))
    );
    let err = interpret("edit_file", r#"{"path":"a"}"#)
        .unwrap()
        .unwrap_err()
        .0;
    assert!(
        err.contains("\"search\"") && err.contains("\"replace\""),
        "{err}"
    );
    assert_eq!(
        command("file_search", r#"{"query":"notes"}"#)[6..8],
        words(&["-name", "*notes*"])
    );
    assert_eq!(
        command("file_search", r#"{"query":"*.py"}"#)[6..8],
        words(&["-name", "*.py"])
    );
    assert_eq!(command("grep_files", r#"{"pattern":"x"}"#)[2], "-n");
    assert_eq!(command("list_dir", "{}"), words(&["ls", "-1Ap", "."]));
    let Some(Ok(Action::Todo(items))) = interpret(
        "checklist_write",
        r#"{"todos":[{"content":"a","status":"in_progress"}]}"#,
    ) else {
        panic!()
    };
    assert_eq!(items[0].status, PlanStepStatus::InProgress);
    assert!(only_reads("file_search") && only_reads("grep_files") && !only_reads("edit_file"));
}

#[test]
fn swe_agent_tools_are_viewer_moves_line_edits_and_searches() {
    use viewer::ViewRequest;
    assert_eq!(
        interpret("open", r#"{"path":"a.py","line_number":40}"#),
        Some(Ok(Action::View(ViewRequest::Open {
            path: "a.py".into(),
            line: Some(40)
        })))
    );
    assert_eq!(
        interpret("goto", r#"{"line_number":7}"#),
        Some(Ok(Action::View(ViewRequest::Goto(7))))
    );
    assert_eq!(
        interpret("scroll_down", ""),
        Some(Ok(Action::View(ViewRequest::Scroll { down: true })))
    );
    assert_eq!(
        interpret("scroll_up", "{}"),
        Some(Ok(Action::View(ViewRequest::Scroll { down: false })))
    );
    assert_eq!(
        interpret(
            "edit",
            r#"{"start_line":3,"end_line":5,"replacement_text":"x\n"}"#
        ),
        Some(Ok(Action::LineEdit {
            first: 3,
            last: 5,
            text: "x\n".into()
        }))
    );
    // Qwen Code's `edit` (old/new text) is still a replacement.
    assert!(matches!(
        interpret(
            "edit",
            r#"{"file_path":"a","old_string":"x","new_string":"y"}"#
        ),
        Some(Ok(Action::Replace { .. }))
    ));
    assert_eq!(
        interpret("create", r#"{"filename":"new.py"}"#),
        Some(Ok(Action::Create("new.py".into())))
    );
    assert_eq!(interpret("submit", "{}"), Some(Ok(Action::Submit)));
    assert_eq!(
        interpret("search_file", r#"{"search_term":"def f"}"#),
        Some(Ok(Action::SearchFile {
            term: "def f".into(),
            file: None
        }))
    );
    assert_eq!(
        command("search_dir", r#"{"search_term":"TODO","dir":"src"}"#),
        words(&[
            "grep",
            "-rIE",
            "-l",
            "--exclude-dir=.git",
            "-e",
            "TODO",
            "src"
        ])
    );
    assert_eq!(
        command("find_file", r#"{"file_name":"setup.py"}"#)[6..8],
        words(&["-name", "setup.py"])
    );
    for (name, args, field) in [
        ("open", "{}", "`path`"),
        ("goto", "{}", "`line_number`"),
        ("edit", r#"{"start_line":1}"#, "`replacement_text`"),
        ("search_file", "{}", "`search_term`"),
        ("find_file", "{}", "`file_name`"),
        ("create", "{}", "`filename`"),
    ] {
        let err = interpret(name, args).unwrap().unwrap_err().0;
        assert!(err.contains(field), "{name}: {err}");
    }
    for name in [
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
        "search_file",
        "search_dir",
        "find_file",
        "submit",
    ] {
        assert!(only_reads(name), "{name}");
    }
    assert!(!only_reads("edit") && !only_reads("create"));
}

/// The fence's language copied in as the script's first line is dropped (recorded on the
/// 1.5B model: `"bash\nchmod +x run.sh"`); a script that is only `bash`, or whose first
/// line runs something, is left as written.
#[test]
fn a_shell_name_copied_before_the_commands_is_dropped() {
    assert_eq!(
        command("bash", r#"{"command": "bash\nchmod +x run.sh"}"#),
        words(&["bash", "-lc", "chmod +x run.sh"])
    );
    assert_eq!(
        command("Bash", r#"{"command": "  sh\nls\npwd"}"#),
        words(&["bash", "-lc", "ls\npwd"])
    );
    assert_eq!(
        command("bash", r#"{"command": "bash run.sh\nls"}"#),
        words(&["bash", "-lc", "bash run.sh\nls"])
    );
    assert_eq!(
        command("bash", r#"{"command": "bash"}"#),
        words(&["bash", "-lc", "bash"])
    );
}

/// The model client takes a written call of a command runner that is not offered
/// (`terminal`, `python`) as a call of the offered shell, and knows the shells by name:
/// every profile's shell, and Codex's, must be among them.
#[test]
fn every_profile_shell_takes_a_call_of_another_runner() {
    let written = r#"{"name": "terminal", "arguments": {"command": "ls"}}"#;
    let mut shells: Vec<oi_protocol::models::ToolSpec> = Vec::new();
    for h in profiles() {
        shells.extend(
            tool_specs(h)
                .unwrap()
                .into_iter()
                .filter(|s| is_shell_tool(&s.name)),
        );
    }
    shells.extend(
        crate::tools::builtin_tool_specs()
            .into_iter()
            .filter(|s| crate::tools::call::is_shell_tool(&s.name)),
    );
    for shell in shells {
        let calls = oi_model_client::written_tool_calls(written, std::slice::from_ref(&shell));
        assert_eq!(calls.len(), 1, "{}", shell.name);
        assert_eq!(calls[0].0, shell.name);
    }
}

/// Round 23: the `minimal` profile's `bash` ran the rename hint's `\b` as a backspace (the
/// default `shell` tool already kept it).
#[test]
fn a_json_backspace_in_a_profiles_shell_call_is_a_word_boundary() {
    assert_eq!(
        command(
            "bash",
            r#"{"command": "sed -i 's/\bcompute_total\b/calculate_total/g' shop.py"}"#
        ),
        words(&[
            "bash",
            "-lc",
            r"sed -i 's/\bcompute_total\b/calculate_total/g' shop.py"
        ])
    );
    assert_eq!(
        command("bash", r#"{"command": ["grep", "-P", "\bload\b", "a.py"]}"#),
        // shlex's double quotes: bash reads `\\b` in them as `\b`.
        words(&["bash", "-lc", r#"grep -P "\\bload\\b" a.py"#])
    );
}
