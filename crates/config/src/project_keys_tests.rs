//! Every key of the schema has a project rule, and the loader enforces it: for each key, a
//! project layer sets it (in a trusted folder, over a user config that makes the value
//! matter) and the test checks what its rule says happens.
use super::*;
use crate::schema::{
    ConfigToml, HistoryToml, ModelProviderToml, ProfileToml, ProjectToml,
    SandboxWorkspaceWriteToml, ThreadStoreToml,
};
use crate::serde_fields::fields_of;
use crate::shell_env::ShellEnvironmentPolicyToml;
use crate::{ConfigLoadOptions, ConfigOverrides, LoadedConfig, load_config};

/// Every key path of the schema, with `*` names made concrete: profile `p`, provider `box`,
/// server `srv`, folder `/x`.
fn schema_leaves() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let sub = |prefix: &[&str], fields: Vec<&'static str>, out: &mut Vec<Vec<String>>| {
        for f in fields {
            let mut p: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
            p.push(f.to_string());
            out.push(p);
        }
    };
    for top in fields_of::<ConfigToml>() {
        match top {
            "sandbox_workspace_write" => {
                sub(&[top], fields_of::<SandboxWorkspaceWriteToml>(), &mut out)
            }
            "history" => sub(&[top], fields_of::<HistoryToml>(), &mut out),
            "tui" => sub(&[top], fields_of::<crate::schema::TuiToml>(), &mut out),
            "skills" => sub(&[top], fields_of::<crate::schema::SkillsToml>(), &mut out),
            "thread_store" => sub(&[top], fields_of::<ThreadStoreToml>(), &mut out),
            "shell_environment_policy" => {
                sub(&[top], fields_of::<ShellEnvironmentPolicyToml>(), &mut out)
            }
            "projects" => sub(&[top, "/x"], fields_of::<ProjectToml>(), &mut out),
            "model_providers" => sub(&[top, "box"], fields_of::<ModelProviderToml>(), &mut out),
            "mcp_servers" => sub(&[top, "srv"], crate::mcp::server_table_keys(), &mut out),
            "profiles" => {
                for f in fields_of::<ProfileToml>() {
                    if f == "sandbox_workspace_write" {
                        sub(
                            &["profiles", "p", f],
                            fields_of::<SandboxWorkspaceWriteToml>(),
                            &mut out,
                        );
                    } else {
                        sub(&["profiles", "p"], vec![f], &mut out);
                    }
                }
            }
            other => out.push(vec![other.to_string()]),
        }
    }
    out
}

const WW: &str = "sandbox_mode = \"workspace-write\"\n";
const STDIO: &str = "[mcp_servers.srv]\ncommand = \"true\"\n";
const HTTP: &str = "[mcp_servers.srv]\nurl = \"http://127.0.0.1:9/mcp\"\n";
const BOX: &str = "[model_providers.box]\nname = \"Box\"\nbase_url = \"http://box:8000/v1\"\n";

/// For the key (a profile's key without its `profiles.p.` prefix): the user config that makes
/// the value matter, and the value the project layer writes. `Bounded` keys get their
/// ceiling plus one from the test itself.
fn sample(key: &[&str]) -> Option<(&'static str, &'static str)> {
    Some(match key {
        ["model"] => ("", "\"m2\""),
        ["model_provider"] => ("model = \"m\"\n", "\"vllm\""),
        ["model_reasoning_effort"] => ("", "\"high\""),
        ["model_reasoning_summary"] => ("", "\"concise\""),
        ["model_verbosity"] => ("", "\"low\""),
        ["model_max_output_tokens"] => ("", "4096"),
        ["tool_call_format"] => ("", "\"text\""),
        ["harness"] => ("", "\"qwen-code\""),
        ["approval_policy"] => ("", "\"never\""),
        ["sandbox_mode"] => ("", "\"workspace-write\""),
        ["sandbox_workspace_write", "writable_roots"] => (WW, "[\"/srv\"]"),
        ["sandbox_workspace_write", "network_access"] => (WW, "true"),
        ["sandbox_workspace_write", "allow_git_writes"] => (WW, "true"),
        ["sandbox_workspace_write", "exclude_tmpdir_env_var"] => (
            "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_tmpdir_env_var = true\n",
            "false",
        ),
        ["sandbox_workspace_write", "exclude_slash_tmp"] => (
            "sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n",
            "false",
        ),
        ["profile"] => ("[profiles.open]\napproval_policy = \"never\"\n", "\"open\""),
        ["base_instructions" | "instructions" | "developer_instructions" | "compact_prompt"] => {
            ("", "\"be brief\"")
        }
        ["hide_agent_reasoning" | "show_raw_agent_reasoning"] => ("", "true"),
        ["project_doc_fallback_filenames"] => ("", "[\"CLAUDE.md\"]"),
        ["notify"] => ("", "[\"true\"]"),
        ["skills", "other_agents"] => ("", "[\"codex\"]"),
        ["skills", "config"] => ("", "[{ name = \"pdf\", enabled = false }]"),
        ["hooks"] => (
            "",
            "{ Stop = [{ hooks = [{ type = \"command\", command = \"true\" }] }] }",
        ),
        ["include_plan_tool"] => ("", "false"),
        ["tui", "theme"] => ("", "\"light\""),
        ["tui", "status_line"] => ("", "[\"current-dir\"]"),
        ["history", "persistence"] => ("[history]\npersistence = \"none\"\n", "\"save-all\""),
        ["history", "max_bytes"] => ("", "1000"),
        ["projects", _, "trust_level"] => ("", "\"trusted\""),
        ["shell_environment_policy", "inherit"] => (
            "[shell_environment_policy]\ninherit = \"core\"\n",
            "\"all\"",
        ),
        ["shell_environment_policy", "ignore_default_excludes"] => ("", "true"),
        ["shell_environment_policy", "exclude"] => {
            ("[shell_environment_policy]\nexclude = [\"AWS_*\"]\n", "[]")
        }
        ["shell_environment_policy", "include_only"] => (
            "[shell_environment_policy]\ninclude_only = [\"PATH\"]\n",
            "[\"*\"]",
        ),
        ["shell_environment_policy", "set"] => ("", "{ PATH = \"/evil\" }"),
        ["thread_store", "url"] => ("", "\"postgresql://oi@evil/x\""),
        [
            "thread_store",
            "connect_timeout_sec" | "statement_timeout_sec",
        ] => ("", "5"),
        ["mcp_oauth_credentials_store"] => ("", "\"file\""),
        ["mcp_state_key_file"] => ("", "\"a-key-the-repository-knows\""),
        ["model_providers", _, field] => (
            BOX,
            match *field {
                "name" => "\"Other\"",
                "base_url" => "\"http://evil:8000/v1\"",
                "env_key" => "\"OPENAI_API_KEY\"",
                "env_key_instructions" => "\"get one\"",
                "wire_api" => "\"responses\"",
                "query_params" | "http_headers" => "{ a = \"b\" }",
                "env_http_headers" => "{ a = \"B\" }",
                "request_max_retries" | "stream_max_retries" => "9",
                "stream_idle_timeout_ms" => "99999",
                "requires_openai_auth" | "send_reasoning_content" => "true",
                "supports_parallel_tool_calls" => "true",
                "harness" => "\"qwen-code\"",
                "auth_header" => "\"x-api-key\"",
                _ => return None,
            },
        ),
        ["mcp_servers", _, field] => match *field {
            "command" => (STDIO, "\"false\""),
            "args" => (STDIO, "[\"x\"]"),
            "env" => (STDIO, "{ A = \"b\" }"),
            "env_vars" => (STDIO, "[\"HOME\"]"),
            "cwd" => (STDIO, "\"/tmp\""),
            "url" => (HTTP, "\"http://127.0.0.1:10/mcp\""),
            "bearer_token_env_var" => (HTTP, "\"MY_TOKEN\""),
            "http_headers" => (HTTP, "{ a = \"b\" }"),
            "env_http_headers" => (HTTP, "{ a = \"B\" }"),
            "oauth_resource" => (HTTP, "\"https://r.example\""),
            "scopes" => (HTTP, "[\"s\"]"),
            "oauth" => (HTTP, "{ client_id = \"c\" }"),
            "enabled" => (
                "[mcp_servers.srv]\ncommand = \"true\"\nenabled = false\n",
                "true",
            ),
            "required" | "supports_parallel_tool_calls" => (STDIO, "true"),
            "startup_timeout_sec" | "tool_timeout_sec" => (STDIO, "99"),
            "startup_timeout_ms" => (STDIO, "99000"),
            "enabled_tools" | "disabled_tools" => (STDIO, "[\"a\"]"),
            "default_tools_approval_mode" => (STDIO, "\"approve\""),
            "tools" => (STDIO, "{ a = { approval_mode = \"approve\" } }"),
            "roots" => (STDIO, "[\"/srv\"]"),
            "sampling" => (STDIO, "\"approve\""),
            "protocol_version" => (STDIO, "\"2025-11-25\""),
            "name" => (STDIO, "\"srv\""),
            "experimental_environment" => (STDIO, "\"local\""),
            "bearer_token" => (HTTP, "\"a-secret\""),
            _ => return None,
        },
        _ => return None,
    })
}

/// Loads `project` as the trusted project layer over `user`.
fn load(user: &str, project: &str) -> Result<LoadedConfig, crate::ConfigError> {
    let home = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let dir = proj.path().canonicalize().unwrap();
    std::fs::create_dir(dir.join(".openinterpreter")).unwrap();
    std::fs::write(dir.join(".openinterpreter/config.toml"), project).unwrap();
    let user = format!(
        "{user}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        dir.display()
    );
    std::fs::write(home.path().join("config.toml"), user).unwrap();
    load_config(ConfigLoadOptions {
        home: Some(home.path().to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: ConfigOverrides {
            cwd: Some(dir),
            ..Default::default()
        },
    })
}

fn project_value<'a>(l: &'a LoadedConfig, parts: &[&str]) -> Option<&'a toml::Value> {
    let layer = l.config.layers.iter().find(|l| l.name == "project")?;
    get(&layer.value, parts)
}

#[test]
fn every_key_of_the_schema_has_a_rule_and_the_loader_enforces_it() {
    let leaves = schema_leaves();
    assert!(leaves.len() > 80, "{}", leaves.len());
    let mut checked = 0;
    for parts in &leaves {
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let shown = crate::key_path::dotted(&refs);
        let rule = rule_for(&refs).unwrap_or_else(|| {
            panic!("`{shown}` has no project rule: add it to PROJECT_RULES in project_keys.rs")
        });
        // A profile's key is set inside an active profile the user defined.
        let (in_profile, key) = match refs.as_slice() {
            ["profiles", _, rest @ ..] => (true, rest),
            _ => (false, refs.as_slice()),
        };
        let bounded_value;
        let (baseline, value) = match (rule, sample(key)) {
            (Bounded { ceiling }, _) => {
                bounded_value = (ceiling + 1).to_string();
                ("", bounded_value.as_str())
            }
            (_, Some(s)) => s,
            (_, None) => panic!("`{shown}` needs a sample in project_keys_tests.rs"),
        };
        let user = if in_profile {
            format!("profile = \"p\"\n{baseline}\n[profiles.p]\nmodel = \"m\"\n")
        } else {
            baseline.to_string()
        };
        let project = format!("{shown} = {value}\n");
        let what = format!("`{shown}` ({rule:?}) over {user:?}");
        if refs.last() == Some(&"bearer_token") {
            // Refused in every layer: a secret does not belong in a file.
            let e = load(&user, &project).unwrap_err().to_string();
            assert!(e.contains("bearer_token_env_var"), "{what}: {e}");
            checked += 1;
            continue;
        }
        let l = load(&user, &project).unwrap_or_else(|e| panic!("{what}: {e}"));
        let review = l.config.project_config_review.as_ref();
        match rule {
            Neutral => {
                assert!(review.is_none(), "{what}: {review:?}");
                assert!(l.warnings.is_empty(), "{what}: {:?}", l.warnings);
                assert!(project_value(&l, &refs).is_some(), "{what}: not applied");
            }
            Widens => {
                let review = review.unwrap_or_else(|| panic!("{what}: not measured as widening"));
                assert!(!review.changes.is_empty(), "{what}");
                assert!(!review.is_accepted(), "{what}");
                assert!(
                    l.config.layers.iter().all(|l| l.name != "project"),
                    "{what}: applied without consent"
                );
            }
            Bounded { ceiling } => {
                assert!(review.is_none(), "{what}: {review:?}");
                assert_eq!(
                    project_value(&l, &refs).and_then(toml::Value::as_integer),
                    Some(ceiling as i64),
                    "{what}: not clamped"
                );
                assert!(
                    l.warnings
                        .iter()
                        .any(|w| w.contains(&format!("`{shown}` is {value}"))),
                    "{what}: {:?}",
                    l.warnings
                );
            }
            UserOnly => {
                assert!(project_value(&l, &refs).is_none(), "{what}: not dropped");
                assert!(
                    l.warnings
                        .iter()
                        .any(|w| w.contains(&format!("`{shown}` is ignored"))),
                    "{what}: {:?}",
                    l.warnings
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, leaves.len());
    // No rule is stale: each one covers a key of the schema.
    for k in PROJECT_RULES {
        assert!(
            leaves.iter().any(|parts| {
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                covers(k.path, &refs)
            }),
            "rule `{}` covers no key of the schema",
            k.path
        );
    }
}

#[test]
fn a_bound_follows_the_users_own_higher_value() {
    let l = load(
        "project_doc_max_bytes = 1000000\n",
        "project_doc_max_bytes = 500000\n",
    )
    .unwrap();
    assert_eq!(l.config.project_doc_max_bytes, 500_000);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    let l = load("", "project_doc_max_bytes = 100000000000\n").unwrap();
    assert_eq!(l.config.project_doc_max_bytes, 256 * 1024);
    // Lowering is always fine.
    let l = load("", "project_doc_max_bytes = 100\n").unwrap();
    assert_eq!(l.config.project_doc_max_bytes, 100);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn secrets_in_the_environment_need_consent_and_narrowing_it_does_not() {
    let l = load(
        "",
        "[shell_environment_policy]\ninherit = \"all\"\nignore_default_excludes = true\n",
    )
    .unwrap();
    let review = l.config.project_config_review.unwrap();
    let refusal = review.refusal();
    assert!(refusal.contains("KEY, SECRET or TOKEN"), "{refusal}");
    assert!(!l.config.shell_environment_policy.ignore_default_excludes);
    let l = load(
        "",
        "[shell_environment_policy]\ninherit = \"core\"\nexclude = [\"AWS_*\"]\n",
    )
    .unwrap();
    assert!(l.config.project_config_review.is_none());
    assert_eq!(
        l.config.shell_environment_policy.inherit,
        crate::ShellEnvironmentInherit::Core
    );
}

#[test]
fn the_docs_table_names_every_rule() {
    let table = reference_markdown();
    for k in PROJECT_RULES {
        assert!(table.contains(k.why), "{}", k.path);
    }
    assert!(table.contains("`model_providers.<name>.*`"), "{table}");
    assert!(table.contains("`shell_environment_policy.*`"), "{table}");
}
