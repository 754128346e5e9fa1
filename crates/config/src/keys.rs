//! Which config keys exist: the one place to add a key.
//!
//! Every key is in one of two lists. *Honoured* keys change what Open Interpreter does.
//! *Codex-only* keys are accepted because a Codex 0.171 `config.toml` may set them, but they
//! configure features we do not have (ChatGPT login, the TUI, telemetry...): each is ignored
//! with one debug-level log line, so a copied Codex config runs quietly. Anything else is a
//! typo: a warning naming `file:line` and the closest known key.

/// Top-level keys Open Interpreter honours. Add new keys here (and document them in
/// docs/configuration.md).
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "model_context_window",
    "approval_policy",
    "sandbox_mode",
    "sandbox_workspace_write",
    "profile",
    "profiles",
    "model_providers",
    "mcp_servers",
    "base_instructions",
    "instructions",
    "developer_instructions",
    "compact_prompt",
    "approval_timeout_sec",
    "max_turn_steps",
    "tool_output_max_bytes",
    "shell_timeout_ms",
    "mcp_oauth_credentials_store",
    "mcp_oauth_callback_port",
    "mcp_oauth_callback_url",
    "hide_agent_reasoning",
    "show_raw_agent_reasoning",
    "project_doc_max_bytes",
    "notify",
    "history",
];

/// Top-level keys of Codex 0.171 that Open Interpreter accepts and ignores.
pub const CODEX_ONLY_TOP_LEVEL_KEYS: &[&str] = &[
    "agents",
    "analytics",
    "approvals_reviewer",
    "apps",
    "audio",
    "background_terminal_max_timeout",
    "browser_use",
    "chatgpt_base_url",
    "check_for_update_on_startup",
    "cli_auth_credentials_store",
    "client_search_provider",
    "commit_attribution",
    "computer_use",
    "default_permissions",
    "desktop",
    "disable_paste_burst",
    "experimental_compact_prompt_file",
    "experimental_instructions_file",
    "experimental_realtime_ws_base_url",
    "experimental_use_exec_command_tool",
    "experimental_use_freeform_apply_patch",
    "experimental_use_rmcp_client",
    "experimental_use_unified_exec_tool",
    "features",
    "feedback",
    "file_opener",
    "forced_chatgpt_workspace_id",
    "forced_login_method",
    "ghost_snapshot",
    "hooks",
    "include_apply_patch_tool",
    "include_plan_tool",
    "include_view_image_tool",
    "js_repl_node_path",
    "marketplaces",
    "memories",
    "model_auto_compact_token_limit",
    "model_auto_compact_token_limit_scope",
    "model_catalog_json",
    "model_instructions_file",
    "model_reasoning_summary_format",
    "model_supports_reasoning_summaries",
    "notice",
    "openai_base_url",
    "oss_provider",
    "otel",
    "permissions",
    "personality",
    "plan_mode_reasoning_effort",
    "plugins",
    "project_doc_fallback_filenames",
    "project_root_markers",
    "projects",
    "review_model",
    "service_tier",
    "shell_environment_policy",
    "skills",
    "sqlite_home",
    "log_dir",
    "suppress_unstable_features_warning",
    "tool_output_token_limit",
    "tools",
    "tools_view_image",
    "tools_web_search",
    "tools_web_search_request",
    "tui",
    "web_search",
    "windows",
    "windows_wsl_setup_acknowledged",
    "zsh_path",
];

/// Keys of a `[profiles.<name>]` table that Open Interpreter honours.
pub const PROFILE_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "approval_policy",
    "sandbox_mode",
    "sandbox_workspace_write",
    "base_instructions",
    "developer_instructions",
    "compact_prompt",
    "approval_timeout_sec",
    "max_turn_steps",
    "hide_agent_reasoning",
    "show_raw_agent_reasoning",
];

/// Keys of a Codex 0.171 profile that Open Interpreter accepts and ignores.
pub const CODEX_ONLY_PROFILE_KEYS: &[&str] = &[
    "analytics",
    "approvals_reviewer",
    "chatgpt_base_url",
    "experimental_compact_prompt_file",
    "experimental_use_freeform_apply_patch",
    "experimental_use_unified_exec_tool",
    "features",
    "include_apply_patch_tool",
    "model_catalog_json",
    "model_instructions_file",
    "oss_provider",
    "personality",
    "plan_mode_reasoning_effort",
    "service_tier",
    "tools",
    "tools_view_image",
    "tools_web_search",
    "web_search",
    "windows",
    "zsh_path",
];

/// Keys of `[sandbox_workspace_write]`.
pub const SANDBOX_WW_KEYS: &[&str] = &[
    "writable_roots",
    "network_access",
    "exclude_tmpdir_env_var",
    "exclude_slash_tmp",
    "allow_git_writes",
];

/// Keys of `[history]`: `persistence` is honoured, `max_bytes` accepted from Codex.
pub const HISTORY_KEYS: &[&str] = &["persistence", "max_bytes"];

/// What a key found in a table is.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyKind {
    Honoured,
    CodexOnly,
    /// Not known: probably a typo of `suggestion`.
    Unknown { suggestion: Option<&'static str> },
}

/// Classify `key` against a table's honoured and Codex-only keys.
pub fn classify(key: &str, honoured: &[&'static str], codex_only: &[&'static str]) -> KeyKind {
    if honoured.contains(&key) {
        return KeyKind::Honoured;
    }
    if codex_only.contains(&key) {
        return KeyKind::CodexOnly;
    }
    KeyKind::Unknown {
        suggestion: closest(key, honoured.iter().chain(codex_only).copied()),
    }
}

/// The known key closest to `key`, if it is close enough to be a likely typo.
pub fn closest(key: &str, known: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    known
        .map(|k| (strsim::jaro_winkler(key, k), k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_do_not_overlap() {
        for k in TOP_LEVEL_KEYS {
            assert!(!CODEX_ONLY_TOP_LEVEL_KEYS.contains(k), "{k} is in both lists");
        }
        for k in PROFILE_KEYS {
            assert!(!CODEX_ONLY_PROFILE_KEYS.contains(k), "{k} is in both lists");
        }
    }

    #[test]
    fn typos_get_the_closest_key() {
        let kind = classify("modle", TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS);
        assert_eq!(
            kind,
            KeyKind::Unknown {
                suggestion: Some("model")
            }
        );
        assert_eq!(
            classify("aproval_policy", TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            KeyKind::Unknown {
                suggestion: Some("approval_policy")
            }
        );
        assert_eq!(
            classify("zzz", TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            KeyKind::Unknown { suggestion: None }
        );
        assert_eq!(
            classify("tui", TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            KeyKind::CodexOnly
        );
    }
}
