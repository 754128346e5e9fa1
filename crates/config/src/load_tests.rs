//! Tests of config loading (kept apart so load.rs stays readable).
use super::*;

fn load_with(text: &str, cli: &[&str], ov: ConfigOverrides) -> Result<LoadedConfig, ConfigError> {
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
