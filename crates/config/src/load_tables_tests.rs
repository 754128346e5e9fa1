//! Tests of the tables with their own serde structs (`[shell_environment_policy]`,
//! `[model_providers.<id>]`, `[profiles.<name>]`, `[projects."<path>"]`, `[thread_store]`):
//! unknown keys anywhere in them warn with `file:line` and the closest key, and a value of
//! the wrong type is an error naming the file and the exact key.
use super::project_tests::home_and_project;
use super::tests::load_with;
use super::*;

fn error_of(text: &str) -> String {
    load_with(text, &[], Default::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn nested_unknown_keys_warn_with_file_line_and_the_closest_key() {
    let text = r#"model = "m"

[shell_environment_policy]
inherit = "core"
include_onyl = ["PATH"]
experimental_use_profile = true

[model_providers.box]
name = "GPU box"
base_url = "http://gpu-box:8000/v1"
env_kye = "BOX_KEY"

[profiles.unused]
modle = "x"
service_tier = "flex"

[profiles.unused.sandbox_workspace_write]
network_acess = true

[projects."/home/me/my.app"]
trust_levle = "trusted"
"#;
    let loaded = load_with(text, &[], Default::default()).unwrap();
    let expected = [
        (
            "config.toml:5: unknown key `shell_environment_policy.include_onyl`",
            "did you mean `shell_environment_policy.include_only`?",
        ),
        (
            "config.toml:11: unknown key `model_providers.box.env_kye`",
            "did you mean `model_providers.box.env_key`?",
        ),
        (
            "config.toml:14: unknown key `profiles.unused.modle`",
            "did you mean `profiles.unused.model`?",
        ),
        (
            "config.toml:18: unknown key `profiles.unused.sandbox_workspace_write.network_acess`",
            "did you mean `profiles.unused.sandbox_workspace_write.network_access`?",
        ),
        (
            "config.toml:21: unknown key `projects.\"/home/me/my.app\".trust_levle`",
            "did you mean `projects.\"/home/me/my.app\".trust_level`?",
        ),
    ];
    // Codex-only keys (`experimental_use_profile`, a profile's `service_tier`) stay quiet.
    assert_eq!(
        loaded.warnings.len(),
        expected.len(),
        "{:#?}",
        loaded.warnings
    );
    for (at, hint) in expected {
        assert!(
            loaded
                .warnings
                .iter()
                .any(|w| w.contains(at) && w.contains(hint)),
            "{at} / {hint}: {:#?}",
            loaded.warnings
        );
    }
    // An unknown key is ignored, not fatal: the provider is there.
    let p = &loaded.config.model_providers["box"];
    assert_eq!(p.base_url.as_deref(), Some("http://gpu-box:8000/v1"));
    assert_eq!(p.env_key, None);
}

#[test]
fn type_errors_in_each_table_name_the_file_and_the_exact_key() {
    let provider = "[model_providers.box]\nname = \"B\"\nbase_url = \"http://b/v1\"\n";
    let cases = [
        (
            "[shell_environment_policy]\ninherit = 1\n".to_string(),
            "shell_environment_policy.inherit",
            "expected \"all\", \"core\" or \"none\", got an integer",
        ),
        (
            "[shell_environment_policy]\ninherit = \"most\"\n".into(),
            "shell_environment_policy.inherit",
            "unknown value `most`",
        ),
        (
            "[shell_environment_policy]\nexclude = [\"AWS_*\", 3]\n".into(),
            "shell_environment_policy.exclude[1]",
            "got an integer",
        ),
        (
            "[shell_environment_policy]\nexclude = \"AWS_*\"\n".into(),
            "shell_environment_policy.exclude",
            "array of name patterns",
        ),
        (
            "[shell_environment_policy]\ninclude_only = [\"[\"]\n".into(),
            "shell_environment_policy.include_only[0]",
            "invalid pattern `[`",
        ),
        (
            "[shell_environment_policy]\nset = { A = { B = 1 } }\n".into(),
            "shell_environment_policy.set.A",
            "expected a string value, got a table",
        ),
        (
            "shell_environment_policy = [\"core\"]\n".into(),
            "shell_environment_policy",
            "[shell_environment_policy] inherit",
        ),
        (
            format!("{provider}request_max_retries = \"3\"\n"),
            "model_providers.box.request_max_retries",
            "non-negative",
        ),
        (
            format!("{provider}http_headers = {{ X-Org = 1 }}\n"),
            "model_providers.box.http_headers.X-Org",
            "expected a string, got an integer",
        ),
        (
            "[model_providers.ollama]\nwire_api = \"grpc\"\n".into(),
            "model_providers.ollama.wire_api",
            "`chat`, `responses`, `messages`",
        ),
        (
            "[model_providers.\"gpu.box\"]\nbase_url = \"http://b/v1\"\n".into(),
            "model_providers.\"gpu.box\"",
            "missing `name`",
        ),
        (
            "[model_providers.box]\nname = \"B\"\n".into(),
            "model_providers.box.base_url",
            "missing; set it to the API root",
        ),
        (
            "model_providers = 1\n".into(),
            "model_providers",
            "[model_providers.<id>]",
        ),
        (
            "[profiles.unused]\nmax_turn_steps = \"many\"\n".into(),
            "profiles.unused.max_turn_steps",
            "non-negative",
        ),
        (
            "[profiles.p.sandbox_workspace_write]\nnetwork_access = \"no\"\n".into(),
            "profiles.p.sandbox_workspace_write.network_access",
            "expected true or false, got a string",
        ),
        (
            "[projects.\"/home/me/my.app\"]\ntrust_level = \"yes\"\n".into(),
            "projects.\"/home/me/my.app\".trust_level",
            "expected \"trusted\" or \"untrusted\"",
        ),
        (
            "[projects]\n\"/home/me/app\" = \"trusted\"\n".into(),
            "projects.\"/home/me/app\"",
            "expected a table, got a string",
        ),
    ];
    for (text, key, expected) in cases {
        let msg = error_of(&text);
        assert!(
            msg.contains(&format!("config.toml: `{key}`: ")),
            "{text}: {msg}"
        );
        assert!(msg.contains(expected), "{text}: {msg}");
    }
}

#[test]
fn string_values_are_not_echoed_in_type_errors() {
    let msg = error_of(
        "[model_providers.box]\nname = \"B\"\nbase_url = \"http://b/v1\"\nrequires_openai_auth = \"sk-live-0123456789\"\n",
    );
    assert!(
        msg.contains("`model_providers.box.requires_openai_auth`: expected true or false"),
        "{msg}"
    );
    assert!(!msg.contains("sk-live"), "{msg}");
}

#[test]
fn a_bad_trust_entry_is_an_error_and_trusts_nothing() {
    let (home, project) = home_and_project(
        "model = \"m\"\n[projects.\"{PROJECT}\"]\ntrust_level = \"yes\"\n",
        "approval_policy = \"never\"\n",
    );
    let err = load_config(ConfigLoadOptions {
        home: Some(home.path().to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: crate::ConfigOverrides {
            cwd: Some(project.path().to_path_buf()),
            ..Default::default()
        },
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("trust_level`: unknown value `yes`"), "{err}");
    let user: toml::Table = std::fs::read_to_string(home.path().join("config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        crate::trust_of(&user, project.path()),
        crate::Trust::Unknown
    );
}

#[test]
fn command_line_keys_inside_the_tables_are_checked() {
    for (key, suggestion) in [
        (
            "shell_environment_policy.inherti=\"core\"",
            "did you mean `shell_environment_policy.inherit`?",
        ),
        (
            "profiles.fast.modle=\"x\"",
            "did you mean `profiles.fast.model`?",
        ),
        (
            "model_providers.ollama.base_ur=\"http://x/v1\"",
            "did you mean `model_providers.ollama.base_url`?",
        ),
    ] {
        let err = load_with("", &[key], Default::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(suggestion), "{key}: {err}");
    }
    let c = load_with(
        "",
        &[
            "model_providers.ollama.request_max_retries=2",
            "shell_environment_policy.experimental_use_profile=true",
            "shell_environment_policy.set.CI=1",
        ],
        Default::default(),
    )
    .unwrap()
    .config;
    assert_eq!(c.model_provider.request_max_retries(), 2);
    assert_eq!(
        c.shell_environment_policy.set.get("CI").map(String::as_str),
        Some("1")
    );
}

#[test]
fn thread_store_url_type_errors_name_the_key() {
    if std::env::var_os("OI_THREAD_STORE_URL").is_some() {
        eprintln!("OI_THREAD_STORE_URL is set: it would win over the file; not testing the file");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        "model = 3\n[thread_store]\nurl = 5\n",
    )
    .unwrap();
    let err = thread_store_url(home.path()).unwrap_err().to_string();
    assert!(
        err.contains("config.toml: `thread_store.url`: expected a string, got an integer"),
        "{err}"
    );
    assert!(
        err.contains("[thread_store] url = \"postgresql://"),
        "{err}"
    );
    // Other keys are not this function's business, even when they are wrong.
    std::fs::write(home.path().join("config.toml"), "model = 3\n").unwrap();
    assert_eq!(thread_store_url(home.path()).unwrap(), None);
}

#[test]
fn the_mcp_state_key_file_is_a_path_from_the_user_config() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(crate::mcp_state_key_file(home.path()).unwrap(), None);
    let config = home.path().join("config.toml");
    std::fs::write(&config, "mcp_state_key_file = \"keys/fleet\"\n").unwrap();
    assert_eq!(
        crate::mcp_state_key_file(home.path()).unwrap(),
        Some(home.path().join("keys/fleet"))
    );
    std::fs::write(&config, "mcp_state_key_file = \"/etc/oi/key\"\n").unwrap();
    assert_eq!(
        crate::mcp_state_key_file(home.path()).unwrap(),
        Some(std::path::PathBuf::from("/etc/oi/key"))
    );
    std::fs::write(&config, "mcp_state_key_file = 42\n").unwrap();
    let err = crate::mcp_state_key_file(home.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mcp_state_key_file") && err.contains("expected the path of a file"),
        "{err}"
    );
}

#[test]
fn errors_from_the_active_profile_name_it() {
    let text = "max_turn_steps = 5\nprofile = \"p\"\n[profiles.p]\nmax_turn_steps = \"many\"\n";
    let msg = error_of(text);
    assert!(
        msg.contains("config.toml [profiles.p]: `max_turn_steps`: expected a non-negative number"),
        "{msg}"
    );
    // `-c` wins over the profile, and is named when it is the culprit.
    let msg = load_with(text, &["max_turn_steps=\"lots\""], Default::default())
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("-c override: `max_turn_steps`"), "{msg}");
}

#[test]
fn a_typo_in_the_active_profile_warns_once() {
    let text = "profile = \"p\"\n[profiles.p.sandbox_workspace_write]\nnetwork_acess = true\n";
    let loaded = load_with(text, &[], Default::default()).unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:#?}", loaded.warnings);
    assert!(
        loaded.warnings[0].contains(
            "config.toml:3: unknown key `profiles.p.sandbox_workspace_write.network_acess`"
        ),
        "{:#?}",
        loaded.warnings
    );
}

#[test]
fn thread_store_timeouts_have_defaults_and_can_be_set() {
    let home = tempfile::tempdir().unwrap();
    let s = crate::thread_store_settings(home.path()).unwrap();
    assert_eq!(s.connect_timeout, std::time::Duration::from_secs(10));
    assert_eq!(s.statement_timeout, std::time::Duration::from_secs(30));
    std::fs::write(
        home.path().join("config.toml"),
        "[thread_store]\nurl = \"postgresql://oi@db/oi\"\nconnect_timeout_sec = 2\nstatement_timeout_sec = 0\n",
    )
    .unwrap();
    let s = crate::thread_store_settings(home.path()).unwrap();
    assert_eq!(s.connect_timeout, std::time::Duration::from_secs(2));
    // 0 would mean "fail at once": the floor is 1 s.
    assert_eq!(s.statement_timeout, std::time::Duration::from_secs(1));
    std::fs::write(
        home.path().join("config.toml"),
        "[thread_store]\nconnect_timeout_sec = \"ten\"\n",
    )
    .unwrap();
    let err = crate::thread_store_settings(home.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("thread_store.connect_timeout_sec"), "{err}");
    assert!(err.contains("number of seconds"), "{err}");
}
