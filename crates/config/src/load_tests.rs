//! Tests of config loading (kept apart so load.rs stays readable).
use super::*;
use crate::provider::DEFAULT_OLLAMA_MODEL;
use crate::{ConfigOverrides, HistoryPersistence};
use oi_protocol::config_types::{AskForApproval, SandboxMode, SandboxPolicy};

pub(super) fn load_with(
    text: &str,
    cli: &[&str],
    ov: ConfigOverrides,
) -> Result<LoadedConfig, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let home = dir.path().to_path_buf();
    let mut ov = ov;
    ov.cwd.get_or_insert_with(|| home.clone());
    let r = load_config(ConfigLoadOptions {
        home: Some(home),
        cli_overrides: cli
            .iter()
            .map(|c| crate::parse_cli_override(c).unwrap())
            .collect(),
        overrides: ov,
    });
    drop(dir);
    r
}

#[test]
fn defaults_to_ollama() {
    let c = load_with("", &[], Default::default()).unwrap().config;
    assert_eq!(c.model_provider_id, "ollama");
    assert_eq!(c.model, DEFAULT_OLLAMA_MODEL);
    assert_eq!(c.approval_policy, AskForApproval::OnRequest);
    assert_eq!(c.sandbox_policy, SandboxPolicy::ReadOnly);
}

#[test]
fn invalid_toml_names_file_line_and_column() {
    let err = load_with("model = \n", &[], Default::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("config.toml"), "{msg}");
    assert!(msg.contains("line 1"), "{msg}");
    assert!(msg.contains("column"), "{msg}");
}

#[test]
fn unknown_keys_warn_with_line() {
    let l = load_with("model = \"m\"\nmodle = \"x\"\n", &[], Default::default()).unwrap();
    assert_eq!(l.warnings.len(), 1);
    assert!(l.warnings[0].contains(":2"), "{:?}", l.warnings);
    assert!(l.warnings[0].contains("modle"));
}

#[test]
fn profiles_and_overrides_layer_in_order() {
    let text = r#"
model = "base"
model_provider = "vllm"
profile = "fast"
[profiles.fast]
model = "from-profile"
approval_policy = "never"
"#;
    let c = load_with(text, &[], Default::default()).unwrap().config;
    assert_eq!(c.model, "from-profile");
    assert_eq!(c.approval_policy, AskForApproval::Never);
    let c = load_with(text, &["model=\"from-flag\""], Default::default())
        .unwrap()
        .config;
    assert_eq!(c.model, "from-flag");
    let c = load_with(
        text,
        &["model=\"from-flag\""],
        ConfigOverrides {
            model: Some("typed".into()),
            ..Default::default()
        },
    )
    .unwrap()
    .config;
    assert_eq!(c.model, "typed");
    let err = load_with(
        text,
        &[],
        ConfigOverrides {
            profile: Some("nope".into()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("profile `nope`"));
}

#[test]
fn a_request_layers_over_the_server_flags_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    std::fs::write(
        home.join("config.toml"),
        "model = \"file\"\nmax_turn_steps = 7\napproval_policy = \"untrusted\"\n",
    )
    .unwrap();
    // What `interpreter mcp-server -c ... -a ...` was started with.
    let server = ConfigLoadOptions {
        home: Some(home.clone()),
        cli_overrides: vec![
            crate::parse_cli_override("model=flag").unwrap(),
            crate::parse_cli_override("max_turn_steps=9").unwrap(),
        ],
        overrides: ConfigOverrides {
            cwd: Some(home.clone()),
            approval_policy: Some(AskForApproval::Never),
            sandbox_mode: Some(SandboxMode::WorkspaceWrite),
            ..Default::default()
        },
    };
    let c = load_config(server.clone()).unwrap().config;
    assert_eq!((c.model.as_str(), c.max_turn_steps), ("flag", 9));

    // A request's `config` keys win over the flags; its typed fields win over everything.
    let config: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(r#"{"model": "request-config", "max_turn_steps": 3}"#).unwrap();
    let request = ConfigOverrides {
        sandbox_mode: Some(SandboxMode::ReadOnly),
        ..Default::default()
    };
    let c = load_config(server.clone().with_request(request, &config))
        .unwrap()
        .config;
    assert_eq!(c.model, "request-config");
    assert_eq!(c.max_turn_steps, 3);
    assert_eq!(
        c.sandbox_mode,
        SandboxMode::ReadOnly,
        "the request's typed field"
    );
    assert_eq!(
        c.approval_policy,
        AskForApproval::Never,
        "the server's, kept"
    );

    let typed = ConfigOverrides {
        model: Some("request-typed".into()),
        ..Default::default()
    };
    let c = load_config(server.with_request(typed, &config))
        .unwrap()
        .config;
    assert_eq!(c.model, "request-typed");
}

#[test]
fn custom_provider_and_unknown_cli_key() {
    let text = r#"
model = "m"
model_provider = "mock"
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:1/v1"
wire_api = "responses"
request_max_retries = 0
"#;
    let c = load_with(text, &[], Default::default()).unwrap().config;
    assert_eq!(
        c.model_provider.wire_api,
        oi_protocol::config_types::WireApi::Responses
    );
    assert_eq!(c.model_provider.request_max_retries(), 0);
    let err = load_with(text, &["modle=x"], Default::default()).unwrap_err();
    assert!(
        err.to_string().contains("unknown config key `modle`"),
        "{err}"
    );
    let err = load_with("model_provider = \"nope\"\n", &[], Default::default()).unwrap_err();
    assert!(err.to_string().contains("unknown provider `nope`"), "{err}");
    let err = load_with("model_provider = \"deepseek\"\n", &[], Default::default()).unwrap_err();
    assert!(err.to_string().contains("no model is set"), "{err}");
}

#[test]
fn errors_name_the_file_that_set_the_key() {
    let err = load_with("approval_policy = \"sometimes\"\n", &[], Default::default()).unwrap_err();
    assert!(
        err.to_string().contains("config.toml: `approval_policy`"),
        "{err}"
    );
    let err = load_with(
        "[mcp_servers.docs]\ncommand = \"x\"\nurl = \"http://h\"\n",
        &[],
        Default::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("config.toml") && msg.contains("mcp_servers.docs"),
        "{msg}"
    );
    let err = load_with("", &["approval_policy=sometimes"], Default::default()).unwrap_err();
    assert!(err.to_string().starts_with("-c override"), "{err}");
}

#[test]
fn wrong_types_are_errors() {
    let err = load_with("approval_policy = \"sometimes\"\n", &[], Default::default()).unwrap_err();
    assert!(err.to_string().contains("approval_policy"), "{err}");
    let err = load_with("model = 3\n", &[], Default::default()).unwrap_err();
    assert!(err.to_string().contains("expected a string"), "{err}");
}

#[test]
fn workspace_write_policy_from_table() {
    let text = "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nwritable_roots = [\"/opt/x\"]\nnetwork_access = true\n";
    let c = load_with(text, &[], Default::default()).unwrap().config;
    match c.sandbox_policy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            ..
        } => {
            assert_eq!(writable_roots, vec![PathBuf::from("/opt/x")]);
            assert!(network_access);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn builtin_providers_can_be_adjusted_key_by_key() {
    let c = load_with(
        "[model_providers.ollama]\nrequest_max_retries = 1\n",
        &["model_providers.ollama.stream_idle_timeout_ms=5000"],
        Default::default(),
    )
    .unwrap()
    .config;
    assert_eq!(c.model_provider.name, "Ollama");
    assert!(c.model_provider.base_url.is_some());
    assert_eq!(c.model_provider.request_max_retries(), 1);
    assert_eq!(c.model_provider.stream_idle_timeout_ms, Some(5000));
}

#[test]
fn shell_environment_policy_is_read_and_checked() {
    let c = load_with(
        "[shell_environment_policy]\ninherit = \"core\"\nexclude = [\"X_*\"]\nset = { A = \"1\" }\n",
        &[],
        Default::default(),
    )
    .unwrap()
    .config;
    assert_eq!(
        c.shell_environment_policy.inherit,
        crate::ShellEnvironmentInherit::Core
    );
    assert_eq!(
        c.shell_environment_policy.set.get("A").map(String::as_str),
        Some("1")
    );
    let err = load_with(
        "[shell_environment_policy]\ninherit = \"most\"\n",
        &[],
        Default::default(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("config.toml") && msg.contains("shell_environment_policy.inherit"),
        "{msg}"
    );
    let l = load_with(
        "[shell_environment_policy]\ninherti = \"core\"\n",
        &[],
        Default::default(),
    )
    .unwrap();
    assert!(
        l.warnings[0].contains("shell_environment_policy.inherti"),
        "{:?}",
        l.warnings
    );
}

#[test]
fn command_env_drops_the_provider_key_and_mcp_tokens() {
    let text = r#"
model = "m"
model_provider = "mock"
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:1/v1"
env_key = "OI_TEST_PROVIDER_CRED"
env_http_headers = { "X-Org" = "OI_TEST_ORG_HEADER" }
[mcp_servers.remote]
url = "http://127.0.0.1:1/mcp"
bearer_token_env_var = "OI_TEST_MCP_BEARER"
[shell_environment_policy]
ignore_default_excludes = true
"#;
    let c = load_with(text, &[], Default::default()).unwrap().config;
    assert_eq!(
        c.secret_env_names(),
        [
            "OI_TEST_MCP_BEARER",
            "OI_TEST_ORG_HEADER",
            "OI_TEST_PROVIDER_CRED"
        ]
    );
    let host = [
        ("PATH", "/bin"),
        ("OI_TEST_PROVIDER_CRED", "sk-provider-secret"),
        ("OI_TEST_MCP_BEARER", "mcp-bearer-secret"),
        ("ALIAS", "sk-provider-secret"),
        ("GITHUB_TOKEN", "kept-because-policy-says-so"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let env = crate::CommandEnv {
        secret_names: c.secret_env_names(),
    }
    .build(&c.shell_environment_policy, host);
    let mut names: Vec<&String> = env.keys().collect();
    names.sort();
    assert_eq!(names, ["GITHUB_TOKEN", "PATH"]);
}

/// A config as a Codex 0.171 user writes it: every key either works or is ignored quietly.
const CODEX_STYLE_CONFIG: &str = r#"model = "qwen3-coder:30b"
model_provider = "ollama"
model_reasoning_effort = "high"
model_reasoning_summary = "detailed"
model_verbosity = "low"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
hide_agent_reasoning = true
show_raw_agent_reasoning = false
project_doc_max_bytes = 4096
notify = ["notify-send", "Open Interpreter"]
file_opener = "vscode"
disable_paste_burst = true
check_for_update_on_startup = false
model_auto_compact_token_limit = 200000
review_model = "gpt-5.2-codex"
service_tier = "flex"
personality = "pragmatic"
forced_login_method = "api"
cli_auth_credentials_store = "file"
windows_wsl_setup_acknowledged = true

[history]
persistence = "none"

[tui]
notifications = true

[features]
web_search_request = true

[shell_environment_policy]
inherit = "core"

[otel]
exporter = "none"

[projects."/home/me/src/app"]
trust_level = "trusted"

[profiles.deep]
model = "glm-4.6"
model_verbosity = "high"
service_tier = "flex"
"#;

#[test]
fn a_codex_config_loads_without_warnings_and_its_cheap_keys_work() {
    let l = load_with(
        CODEX_STYLE_CONFIG,
        &["profile=\"deep\""],
        Default::default(),
    )
    .unwrap();
    assert!(l.warnings.is_empty(), "{:#?}", l.warnings);
    let c = l.config;
    assert_eq!(c.model, "glm-4.6");
    assert_eq!(c.model_reasoning_summary.as_deref(), Some("detailed"));
    assert_eq!(c.model_verbosity.as_deref(), Some("high"));
    assert!(c.hide_agent_reasoning);
    assert!(!c.show_raw_agent_reasoning);
    assert_eq!(c.project_doc_max_bytes, 4096);
    assert_eq!(
        c.notify,
        Some(vec![
            "notify-send".to_string(),
            "Open Interpreter".to_string()
        ])
    );
    assert_eq!(c.history_persistence, HistoryPersistence::None);
    // -c accepts Codex keys too.
    load_with(
        "",
        &["tui.notifications=true", "service_tier=\"flex\""],
        Default::default(),
    )
    .unwrap();
}

#[test]
fn real_typos_still_warn_with_file_line_and_a_suggestion() {
    let text = "model = \"x\"\nmodel_verbositty = \"low\"\nhide_agent_reasonin = true\n\n[profiles.p]\naproval_policy = \"never\"\n";
    let l = load_with(text, &["profile=\"p\""], Default::default()).unwrap();
    assert_eq!(l.warnings.len(), 3, "{:#?}", l.warnings);
    let verbosity = &l.warnings[1];
    assert!(verbosity.contains("config.toml:2"), "{verbosity}");
    assert!(
        verbosity.contains("did you mean `model_verbosity`?"),
        "{verbosity}"
    );
    assert!(l.warnings[0].contains("config.toml:3"), "{:?}", l.warnings);
    assert!(
        l.warnings[0].contains("did you mean `hide_agent_reasoning`?"),
        "{:?}",
        l.warnings
    );
    assert!(
        l.warnings[2].contains("did you mean `profiles.p.approval_policy`?"),
        "{:?}",
        l.warnings
    );
    let e = load_with("", &["model_verbositty=\"low\""], Default::default()).unwrap_err();
    assert!(
        e.to_string().contains("did you mean `model_verbosity`?"),
        "{e}"
    );
}

#[test]
fn bad_values_of_the_new_keys_name_the_key_and_the_choices() {
    for (text, needle) in [
        ("model_verbosity = \"loud\"", "low, medium, high"),
        (
            "model_reasoning_summary = \"short\"",
            "auto, concise, detailed, none",
        ),
        ("notify = \"notify-send\"", "array of strings"),
        ("[history]\npersistence = \"all\"", "save-all"),
        (
            "mcp_oauth_credentials_store = \"vault\"",
            "mcp_oauth_credentials_store",
        ),
        (
            "mcp_oauth_credentials_store = \"vault\"",
            "`auto`, `keyring`, `file`",
        ),
    ] {
        let e = load_with(text, &[], Default::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
}

/// Issue 43 item 8: `notify = []` exited 2, though Codex accepts it; it runs nothing.
#[test]
fn an_empty_notify_runs_nothing() {
    let l = load_with("notify = []\n", &[], Default::default()).unwrap();
    assert!(l.config.notify.is_none());
}

/// Issue 43 item 8: docs/configuration.md says every profile is checked, in use or not;
/// values of unused profiles were not.
#[test]
fn values_of_profiles_not_in_use_are_checked() {
    for (text, needle) in [
        ("sandbox_mode = \"bogus\"", "profiles.unused.sandbox_mode"),
        (
            "approval_policy = \"sometimes\"",
            "profiles.unused.approval_policy",
        ),
        (
            "model_reasoning_effort = \"extreme\"",
            "profiles.unused.model_reasoning_effort",
        ),
        ("tool_call_format = \"xml\"", "native, text, auto"),
        (
            "model_verbosity = \"loud\"",
            "profiles.unused.model_verbosity",
        ),
        (
            "model_reasoning_summary = \"short\"",
            "profiles.unused.model_reasoning_summary",
        ),
    ] {
        let e = load_with(
            &format!("[profiles.unused]\n{text}\n"),
            &[],
            Default::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
    let ok = "[profiles.fast]\nsandbox_mode = \"read-only\"\napproval_policy = \"never\"\nmodel_reasoning_effort = \"low\"\n";
    assert!(load_with(ok, &[], Default::default()).is_ok());
}

#[test]
fn oauth_tokens_go_to_the_keyring_unless_told_otherwise() {
    let store = |text: &str| {
        load_with(text, &[], Default::default())
            .unwrap()
            .config
            .mcp_oauth_credentials_store
    };
    assert_eq!(store(""), crate::OAuthCredentialsStoreMode::Auto);
    assert_eq!(
        store("mcp_oauth_credentials_store = \"file\""),
        crate::OAuthCredentialsStoreMode::File
    );
    assert_eq!(
        store("mcp_oauth_credentials_store = \"keyring\""),
        crate::OAuthCredentialsStoreMode::Keyring
    );
}

#[test]
fn context_window_settings_from_file_profile_and_flags() {
    let text = r#"
model_context_window = 32768
profile = "small"
[profiles.small]
model_context_window = 8192
model_auto_compact_token_limit = 6000
"#;
    let loaded = load_with(text, &[], Default::default()).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.model_context_window, Some(8192));
    assert_eq!(loaded.config.model_auto_compact_token_limit, Some(6000));
    let c = load_with(
        text,
        &[
            "model_context_window=4096",
            "model_auto_compact_token_limit=3000",
        ],
        Default::default(),
    )
    .unwrap()
    .config;
    assert_eq!(c.model_context_window, Some(4096));
    assert_eq!(c.model_auto_compact_token_limit, Some(3000));
    let c = load_with("", &[], Default::default()).unwrap().config;
    assert_eq!(c.model_context_window, None);
    assert_eq!(c.model_auto_compact_token_limit, None);
    let err = load_with(
        "model_auto_compact_token_limit = \"lots\"",
        &[],
        Default::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("model_auto_compact_token_limit"),
        "{err}"
    );
}

#[test]
fn unknown_mcp_keys_name_file_and_line_and_quoted_names_load() {
    let text = "model = \"m\"\n\n[mcp_servers.\"a.b\"]\ncommand = \"srv\"\nfoo = 1\n\n[mcp_servers.plain]\nurl = \"https://x.example/mcp\"\nbearer_token_env = \"T\"\n";
    let loaded = load_with(text, &[], Default::default()).unwrap();
    assert!(loaded.config.mcp_servers.contains_key("a.b"));
    let foo = loaded
        .warnings
        .iter()
        .find(|w| w.contains("`foo`"))
        .unwrap_or_else(|| panic!("{:?}", loaded.warnings));
    assert!(
        foo.contains("config.toml:5: mcp_servers.a.b: unknown key `foo`"),
        "{foo}"
    );
    let typo = loaded
        .warnings
        .iter()
        .find(|w| w.contains("`bearer_token_env`"))
        .unwrap();
    assert!(typo.contains("config.toml:9: "), "{typo}");
}

#[test]
fn thread_store_url_comes_from_the_user_config_and_typos_warn() {
    if std::env::var_os("OI_THREAD_STORE_URL").is_some() {
        eprintln!("OI_THREAD_STORE_URL is set: it would win over the file; not testing the file");
        return;
    }
    let text = "model = \"m\"\n\n[thread_store]\nurl = \"postgresql://oi@db:5432/oi\"\nurll = 1\n";
    let loaded = load_with(text, &[], Default::default()).unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("`thread_store.urll`")),
        "{:?}",
        loaded.warnings
    );
    let home = tempfile::tempdir().unwrap();
    assert_eq!(
        thread_store_url(home.path()).unwrap(),
        None,
        "no config: local"
    );
    std::fs::write(home.path().join("config.toml"), text).unwrap();
    assert_eq!(
        thread_store_url(home.path()).unwrap().as_deref(),
        Some("postgresql://oi@db:5432/oi")
    );
    std::fs::write(home.path().join("config.toml"), "thread_store = \"pg\"\n").unwrap();
    let err = thread_store_url(home.path()).unwrap_err().to_string();
    assert!(err.contains("[thread_store] url ="), "{err}");
}

#[test]
fn wrong_types_name_the_file_the_key_and_what_was_expected() {
    let cases = [
        ("max_turn_steps = -1\n", "max_turn_steps", "non-negative"),
        (
            "hide_agent_reasoning = \"yes\"\n",
            "hide_agent_reasoning",
            "expected true or false, got a string",
        ),
        (
            "[sandbox_workspace_write]\nnetwork_access = \"no\"\n",
            "sandbox_workspace_write.network_access",
            "expected true or false, got a string",
        ),
        (
            "[sandbox_workspace_write]\nwritable_roots = \"/tmp\"\n",
            "sandbox_workspace_write.writable_roots",
            "array of path strings",
        ),
        ("notify = \"notify-send\"\n", "notify", "array of strings"),
        ("history = 1\n", "history", "[history] persistence"),
    ];
    for (text, key, expected) in cases {
        let msg = load_with(text, &[], Default::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("config.toml"), "{text}: {msg}");
        assert!(msg.contains(&format!("`{key}`")), "{text}: {msg}");
        assert!(msg.contains(expected), "{text}: {msg}");
    }
}

#[test]
fn unknown_keys_in_small_tables_get_file_and_line() {
    let text = "model = \"m\"\n\n[sandbox_workspace_write]\nnetwork_acess = true\n";
    let l = load_with(text, &[], Default::default()).unwrap();
    assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
    let w = &l.warnings[0];
    assert!(
        w.contains("config.toml:4: unknown key `sandbox_workspace_write.network_acess`"),
        "{w}"
    );
    assert!(
        w.contains("did you mean `sandbox_workspace_write.network_access`?"),
        "{w}"
    );
}

#[test]
fn mcp_errors_and_nested_warnings_point_into_the_file() {
    // A dotted server name: the error still names the file that defines the server.
    let err = load_with(
        "[mcp_servers.\"docs.v2\"]\ncommand = \"x\"\nargs = [\"a\", 1]\n",
        &[],
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "config.toml: `mcp_servers.docs.v2.args[1]`: expected a string, got an integer"
        ),
        "{err}"
    );
    let text = "[mcp_servers.s]\nurl = \"https://x.example/mcp\"\n\n[mcp_servers.s.tools.\"a.b\"]\napproval_mode = \"prompt\"\nmode = 1\n";
    let loaded = load_with(text, &[], Default::default()).unwrap();
    let w = loaded
        .warnings
        .iter()
        .find(|w| w.contains("`mode`"))
        .unwrap_or_else(|| panic!("{:?}", loaded.warnings));
    assert!(
        w.contains("config.toml:6: mcp_servers.s.tools.a.b: unknown key `mode`"),
        "{w}"
    );
}

#[test]
fn project_doc_fallback_filenames_are_read_cleaned_and_checked() {
    let c = load_with("", &[], Default::default()).unwrap().config;
    assert!(c.project_doc_fallback_filenames.is_empty());
    // Codex's key: kept in order, empty entries and repeats skipped, no warning.
    let l = load_with(
        "project_doc_fallback_filenames = [\"CLAUDE.md\", \"\", \"QWEN.md\", \"CLAUDE.md\", \"docs/guide.md\"]\n",
        &[],
        Default::default(),
    )
    .unwrap();
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(
        l.config.project_doc_fallback_filenames,
        ["CLAUDE.md", "QWEN.md", "docs/guide.md"]
    );
    // A name that leaves the folder is an error naming the entry and the fix.
    for bad in ["/etc/passwd", "../CLAUDE.md", "docs/../../x", "."] {
        let text = format!("project_doc_fallback_filenames = [\"CLAUDE.md\", \"{bad}\"]\n");
        let e = load_with(&text, &[], Default::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("project_doc_fallback_filenames[1]") && e.contains("no `..`"),
            "{bad}: {e}"
        );
    }
    let e = load_with(
        "project_doc_fallback_filenames = \"CLAUDE.md\"\n",
        &[],
        Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("expected an array of file names"), "{e}");
}

/// `native` is the seed system's name for the `codex` profile (issue 48 item 2), in the file
/// and on the command line; `Harness::parse` (the TUI's `/harness`) reads it too.
#[test]
fn native_is_codex() {
    use oi_protocol::config_types::Harness;
    let c = load_with("harness = \"native\"\n", &[], Default::default())
        .unwrap()
        .config;
    assert_eq!(c.harness, Harness::Codex);
    let c = load_with(
        "harness = \"qwen-code\"\n",
        &["harness=native"],
        Default::default(),
    )
    .unwrap()
    .config;
    assert_eq!(c.harness, Harness::Codex);
    assert_eq!(Harness::parse("native"), Some(Harness::Codex));
    assert_eq!(Harness::parse("nativ"), None);
}
