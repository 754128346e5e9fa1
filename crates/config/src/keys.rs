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
    "model_auto_compact_token_limit",
    "model_max_output_tokens",
    "tool_call_format",
    "harness",
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
    "parked_turn_timeout_sec",
    "max_turn_steps",
    "tool_output_max_bytes",
    "shell_timeout_ms",
    "hide_agent_reasoning",
    "show_raw_agent_reasoning",
    "project_doc_max_bytes",
    "project_doc_fallback_filenames",
    "skills",
    "notify",
    "hooks",
    "include_plan_tool",
    "history",
    "projects",
    "shell_environment_policy",
    "thread_store",
    "mcp_state_key_file",
    "mcp_oauth_credentials_store",
    "tui",
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
    "include_apply_patch_tool",
    "include_view_image_tool",
    "js_repl_node_path",
    "marketplaces",
    "mcp_oauth_callback_port",
    "mcp_oauth_callback_url",
    "memories",
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
    "project_root_markers",
    "review_model",
    "service_tier",
    "sqlite_home",
    "log_dir",
    "suppress_unstable_features_warning",
    "tool_output_token_limit",
    "tools",
    "tools_view_image",
    "tools_web_search",
    "tools_web_search_request",
    "web_search",
    "windows",
    "windows_wsl_setup_acknowledged",
    "zsh_path",
];

/// The documentation of one honoured top-level key: the source of the reference table in
/// docs/configuration.md (a test regenerates the table and fails when the file differs, and
/// loads every example, so the docs, this list and the parser cannot drift apart).
pub struct KeyDoc {
    /// The top-level key.
    pub key: &'static str,
    /// The default, as a user would write it; empty when there is none worth stating.
    pub default: &'static str,
    /// What it does, in a sentence or two.
    pub meaning: &'static str,
    /// A `config.toml` snippet that sets the key.
    pub example: &'static str,
}

/// One entry per key of [`TOP_LEVEL_KEYS`], in the order the reference lists them.
pub const KEY_DOCS: &[KeyDoc] = &[
    KeyDoc {
        key: "model",
        default: "`qwen3-coder:30b` with Ollama; required for other providers",
        meaning: "model name sent to the provider",
        example: "model = \"qwen3-coder:30b\"",
    },
    KeyDoc {
        key: "model_provider",
        default: "`ollama`",
        meaning: "id of a built-in or `[model_providers.<id>]` provider — see [providers](providers.md)",
        example: "model_provider = \"lmstudio\"",
    },
    KeyDoc {
        key: "model_reasoning_effort",
        default: "unset",
        meaning: "`none`, `minimal`, `low`, `medium`, `high`, `xhigh`",
        example: "model_reasoning_effort = \"high\"",
    },
    KeyDoc {
        key: "model_reasoning_summary",
        default: "unset",
        meaning: "`auto`, `concise`, `detailed`, `none`: sent as `reasoning.summary` (Responses API only)",
        example: "model_reasoning_summary = \"concise\"",
    },
    KeyDoc {
        key: "model_verbosity",
        default: "unset",
        meaning: "`low`, `medium`, `high`: sent as `text.verbosity` (Responses) or `verbosity` (Chat)",
        example: "model_verbosity = \"low\"",
    },
    KeyDoc {
        key: "model_context_window",
        default: "unset",
        meaning: "the model's context window in tokens; unset: a built-in table of open models, then what the server reports, then 32768 — see [context management](context.md)",
        example: "model_context_window = 131072",
    },
    KeyDoc {
        key: "model_auto_compact_token_limit",
        default: "85% of the window",
        meaning: "compact the conversation before a request would pass this many tokens — see [context management](context.md)",
        example: "model_auto_compact_token_limit = 100000",
    },
    KeyDoc {
        key: "model_max_output_tokens",
        default: "a quarter of the window, at most 4096",
        meaning: "the most tokens one answer may take (sent as `max_tokens` / `max_output_tokens`, never more than the window leaves); 0 sends no bound — see [context management](context.md)",
        example: "model_max_output_tokens = 4096",
    },
    KeyDoc {
        key: "tool_call_format",
        default: "`auto`",
        meaning: "`native` (tools in the request, the server parses calls), `text` (tools described in the system prompt in the model family's own markup, calls parsed from the answer), `auto` (native, switching to `text` for the session when the model writes calls that were not run) — see [providers](providers.md#tool-calls-as-text)",
        example: "tool_call_format = \"text\"",
    },
    KeyDoc {
        key: "harness",
        default: "`codex`",
        meaning: "the agent harness the model is given, its tools and system prompt: `codex` (`shell`, `apply_patch`; also spelt `native`), `claude-code` (Bash, Read, Write, Edit, Glob, Grep, TodoWrite), `qwen-code` (run_shell_command, read_file, write_file, replace, glob, search_file_content, list_directory, todo_write), `kimi-code` (Shell, ReadFile, WriteFile, StrReplaceFile, Glob, Grep, SetTodoList), `claude-code-bare` (Claude Code's tools, a short prompt), `zcode` (Claude Code's tools, Z.AI's prompt for GLM), `kimi-cli` (kimi-code's tools, kimi-cli's prompt), `deepseek-tui` (exec_shell, read_file, write_file, edit_file, list_dir, grep_files, file_search, checklist_write), `swe-agent` (SWE-agent's file viewer: open, goto, scroll, edit a line range, search, submit), `minimal` (one `bash` tool, for the smallest models), `auto` (the provider's `harness`, else `claude-code` on a Messages endpoint, else by model family) — see [harness profiles](harness.md)",
        example: "harness = \"qwen-code\"",
    },
    KeyDoc {
        key: "approval_policy",
        default: "`on-request`",
        meaning: "`untrusted`, `on-failure`, `on-request`, `never` — see [approvals](approvals.md)",
        example: "approval_policy = \"never\"",
    },
    KeyDoc {
        key: "sandbox_mode",
        default: "`read-only`",
        meaning: "`read-only`, `workspace-write`, `danger-full-access` — see [sandbox](sandbox.md)",
        example: "sandbox_mode = \"workspace-write\"",
    },
    KeyDoc {
        key: "sandbox_workspace_write",
        default: "",
        meaning: "table: `writable_roots = [\"/path\"]`, `network_access = false`, `exclude_tmpdir_env_var`, `exclude_slash_tmp`, `allow_git_writes = false`",
        example: "[sandbox_workspace_write]\nwritable_roots = [\"/tmp/build\"]\nnetwork_access = false",
    },
    KeyDoc {
        key: "profile",
        default: "unset",
        meaning: "the `[profiles.<name>]` table to apply (also `-p`)",
        example: "profile = \"local\"\n[profiles.local]\nmodel = \"qwen3-coder:30b\"",
    },
    KeyDoc {
        key: "profiles",
        default: "",
        meaning: "named sets of keys: `model`, `model_provider`, `model_reasoning_*`, `model_verbosity`, `approval_policy`, `sandbox_mode`, `sandbox_workspace_write`, instructions, `approval_timeout_sec`, `max_turn_steps`, `*_agent_reasoning`",
        example: "[profiles.fast]\nmodel = \"qwen3:8b\"\napproval_policy = \"never\"",
    },
    KeyDoc {
        key: "model_providers",
        default: "",
        meaning: "`[model_providers.<id>]` tables — see [providers](providers.md)",
        example: "[model_providers.box]\nname = \"GPU box\"\nbase_url = \"http://gpu-box:8000/v1\"",
    },
    KeyDoc {
        key: "mcp_servers",
        default: "",
        meaning: "`[mcp_servers.<name>]` tables — see the [MCP client guide](mcp-client.md)",
        example: "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/docs\"]",
    },
    KeyDoc {
        key: "base_instructions",
        default: "built-in",
        meaning: "replaces the system prompt",
        example: "base_instructions = \"You are a careful Rust engineer.\"",
    },
    KeyDoc {
        key: "instructions",
        default: "",
        meaning: "older name of `base_instructions`",
        example: "instructions = \"You are a careful Rust engineer.\"",
    },
    KeyDoc {
        key: "developer_instructions",
        default: "unset",
        meaning: "extra instructions sent as a developer message",
        example: "developer_instructions = \"Run cargo fmt before you finish.\"",
    },
    KeyDoc {
        key: "compact_prompt",
        default: "built-in",
        meaning: "the prompt used to summarise a long conversation",
        example: "compact_prompt = \"Summarise the work so far.\"",
    },
    KeyDoc {
        key: "approval_timeout_sec",
        default: "`600`",
        meaning: "an unanswered approval counts as denied after this long",
        example: "approval_timeout_sec = 120",
    },
    KeyDoc {
        key: "parked_turn_timeout_sec",
        default: "`86400`",
        meaning: "a turn parked at an approval (for a client that answers later, possibly through another server; see docs/scale.md) can be resumed for this long; after that it ends as expired",
        example: "parked_turn_timeout_sec = 3600",
    },
    KeyDoc {
        key: "max_turn_steps",
        default: "`100`",
        meaning: "model requests per turn before the turn stops with an error",
        example: "max_turn_steps = 40",
    },
    KeyDoc {
        key: "tool_output_max_bytes",
        default: "`32768`",
        meaning: "tool output the model sees; longer output is cut head+tail with a marker",
        example: "tool_output_max_bytes = 16384",
    },
    KeyDoc {
        key: "shell_timeout_ms",
        default: "`300000`",
        meaning: "default timeout of a shell command when the model gives none",
        example: "shell_timeout_ms = 60000",
    },
    KeyDoc {
        key: "hide_agent_reasoning",
        default: "`false`",
        meaning: "`exec`, `resume` and the interactive mode do not show the model's reasoning (nor `exec --json` its reasoning events)",
        example: "hide_agent_reasoning = true",
    },
    KeyDoc {
        key: "show_raw_agent_reasoning",
        default: "`false`",
        meaning: "show the whole reasoning text instead of its first line",
        example: "show_raw_agent_reasoning = true",
    },
    KeyDoc {
        key: "project_doc_max_bytes",
        default: "`32768`",
        meaning: "bytes of the nearest `AGENTS.md` the model sees (cut head+tail; a longer file is read only at its two ends); `0` leaves it out. An `AGENTS.md` that is not a regular file (a FIFO, a device, a symlink to one), or that leads outside the project (a symlink to a file elsewhere), is not used, with a warning. A project config may set at most 262144",
        example: "project_doc_max_bytes = 8192",
    },
    KeyDoc {
        key: "project_doc_fallback_filenames",
        default: "`[]`",
        meaning: "other names for the project doc (Codex's key), tried in order in each folder where `AGENTS.md` is looked for and used when that folder has no `AGENTS.override.md`, `AGENTS.md` or `AGENT.md`: `[\"CLAUDE.md\", \"QWEN.md\"]` lets a repository written for Claude Code or Qwen Code instruct the agent unchanged. Read with the same bounds as `AGENTS.md` (regular file, inside the project, `project_doc_max_bytes`). Names are relative to the folder (no absolute path, no `..`); empty entries and repeats are skipped. See [project docs](#project-docs-agentsmd-and-other-names)",
        example: "project_doc_fallback_filenames = [\"CLAUDE.md\", \"QWEN.md\"]",
    },
    KeyDoc {
        key: "skills",
        default: "`max_prompt_tokens = 600`, own and project skills only",
        meaning: "skills (`SKILL.md` folders) from `$OPENINTERPRETER_HOME/skills/` and a trusted project's `.openinterpreter/skills/`: `other_agents = [\"codex\", \"claude\"]` also reads `~/.codex/skills` and `~/.claude/skills` (only your own config may set it); `max_prompt_tokens` caps what their names and descriptions cost in every request (the prompt says what did not fit; `0` lists none, the `load_skill` tool still loads them); Codex's `[[skills.config]]` entries (`name` or `path`, `enabled = false`) turn single skills off. See [skills](skills.md)",
        example: "[skills]\nother_agents = [\"codex\", \"claude\"]\nmax_prompt_tokens = 400\n\n[[skills.config]]\nname = \"pdf\"\nenabled = false",
    },
    KeyDoc {
        key: "notify",
        default: "unset",
        meaning: "program and arguments run when a turn completes, with one more argument: a JSON object (`type`, `thread-id`, `turn-id`, `cwd`, `input-messages`, `last-assistant-message`); the turn does not wait for it, a stopping session waits for it at most 2 s, and it does not outlive the agent; it gets the environment commands get (`[shell_environment_policy]` applied, credentials removed); `notify = []` runs nothing",
        example: "notify = [\"notify-send\", \"Open Interpreter\"]",
    },
    KeyDoc {
        key: "hooks",
        default: "unset",
        meaning: "commands run at `SessionStart`, `PreToolUse` (may block the call, with a reason the model reads), `PostToolUse` and `Stop` (turn end), with the event as JSON on stdin — Codex's `[[hooks.<Event>]]` tables with `matcher` (a regex over the whole tool name) and `[[hooks.<Event>.hooks]]` entries `type = \"command\"`, `command`, `timeout` (seconds, default 600), `statusMessage`; `[hooks.state.\"<key>\"] enabled = false` turns one off. Every layer's hooks run (the user's first); a project's need the project config accepted. They get the environment commands get and do not outlive the agent. See [hooks](hooks.md)",
        example: "[[hooks.PreToolUse]]\nmatcher = \"shell|Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"python3 guard.py\"\ntimeout = 30",
    },
    KeyDoc {
        key: "include_plan_tool",
        default: "`true`",
        meaning: "offer the plan tool: `update_plan` on the `codex` profile, the profile's own todo tool on the others (`TodoWrite`, `todo_write`, `SetTodoList`); `false` leaves it out. See [plans](plans.md)",
        example: "include_plan_tool = false",
    },
    KeyDoc {
        key: "history",
        default: "`persistence = \"save-all\"`",
        meaning: "`[history] persistence = \"none\"` stops saving (and reading) interactive prompts in `$OPENINTERPRETER_HOME/history.jsonl`; the TUI and the line mode share that file, slash commands are never saved",
        example: "[history]\npersistence = \"none\"",
    },
    KeyDoc {
        key: "thread_store",
        default: "local files",
        meaning: "`[thread_store] url = \"postgresql://USER@HOST:PORT/DB\"` keeps threads in PostgreSQL, shared by every process using that URL, one writer per thread (no TLS: `sslmode=disable` on a trusted network). The environment variable `OI_THREAD_STORE_URL` overrides it. `connect_timeout_sec` (default 10) bounds connecting, login included; `statement_timeout_sec` (default 30) bounds each store operation: a server that does not answer in time is an error, never a hang. See [scale](scale.md)",
        example: "[thread_store]\nurl = \"postgresql://oi@db.internal:5432/oi?sslmode=disable\"\nconnect_timeout_sec = 10\nstatement_timeout_sec = 30",
    },
    KeyDoc {
        key: "mcp_state_key_file",
        default: "`$OPENINTERPRETER_HOME/mcp-state-key`",
        meaning: "the file (at least 32 bytes, readable by nobody else) whose key seals what `interpreter mcp-server` hands MCP 2026-07-28 clients to hold: the `requestState` of an approval and task ids. Every server of a fleet needs the same key (see [scale](scale.md#approvals-and-tasks-across-servers)); the environment variable `OI_MCP_STATE_KEY` (the key itself) overrides it. Unset: a key made on first use in the home, mode 0600. Never put the key itself in config.toml",
        example: "mcp_state_key_file = \"/etc/openinterpreter/mcp-state-key\"",
    },
    KeyDoc {
        key: "mcp_oauth_credentials_store",
        default: "`\"auto\"`",
        meaning: "where `interpreter mcp login` keeps MCP servers' OAuth tokens: `\"keyring\"` the OS keyring (on Linux the freedesktop Secret Service, such as GNOME Keyring; an error when none is reachable), `\"file\"` `$OPENINTERPRETER_HOME/.credentials.json` (mode 0600), `\"auto\"` the keyring, or the file when no keyring is reachable (said once in the log). Provider API keys always stay in the environment or the file. See [the keyring](mcp-client.md#tokens-in-the-os-keyring)",
        example: "mcp_oauth_credentials_store = \"file\"",
    },
    KeyDoc {
        key: "projects",
        default: "no folder trusted",
        meaning: "`[projects.\"/abs/path\"] trust_level = \"trusted\"` lets that folder's `.openinterpreter/config.toml` apply (children included); edit with `interpreter trust`/`untrust`. See [trusted folders](#trusted-folders)",
        example: "[projects.\"/home/me/src/app\"]\ntrust_level = \"trusted\"",
    },
    KeyDoc {
        key: "shell_environment_policy",
        default: "`inherit = \"all\"`, default excludes on",
        meaning: "which environment variables the model's commands see: `inherit`, `ignore_default_excludes`, `exclude`, `include_only`, `set`. See [shell_environment_policy](#shell_environment_policy)",
        example: "[shell_environment_policy]\ninherit = \"core\"\nset = { CI = \"1\" }",
    },
    KeyDoc {
        key: "tui",
        default: "`theme = \"dark\"`, the default status line",
        meaning: "the terminal UI's own settings, which its `/theme` and `/statusline` commands write: `theme` (`dark`, `light`, `high-contrast`, `mono`; `NO_COLOR` always wins) and `status_line` (the items the status line shows, in order: `model-with-reasoning`, `model-name`, `provider`, `context-remaining`, `used-tokens`, `mcp`, `approvals`, `current-dir`, `thread-title`, `thread-id`). Codex's other `[tui]` keys are accepted and ignored. See [the TUI](tui.md#slash-commands)",
        example: "[tui]\ntheme = \"light\"\nstatus_line = [\"model-with-reasoning\", \"context-remaining\", \"current-dir\"]",
    },
];

/// The reference table of docs/configuration.md, rendered from [`KEY_DOCS`] and the
/// Codex-only list.
pub fn reference_markdown() -> String {
    let mut out = String::from("| key | default | meaning |\n|---|---|---|\n");
    for d in KEY_DOCS {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            d.key, d.default, d.meaning
        ));
    }
    out.push_str(
        "\nAccepted from Codex 0.171 configs and ignored (logged at debug level, no warning): ",
    );
    let ignored: Vec<String> = CODEX_ONLY_TOP_LEVEL_KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect();
    out.push_str(&ignored.join(", "));
    out.push_str(".\n");
    out
}

/// Keys of a `[profiles.<name>]` table that Open Interpreter honours.
pub const PROFILE_KEYS: &[&str] = &[
    "model",
    "model_provider",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "model_context_window",
    "model_auto_compact_token_limit",
    "model_max_output_tokens",
    "tool_call_format",
    "harness",
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

/// Keys of a `[model_providers.<id>]` table (see [`crate::ModelProviderInfo`]).
pub const PROVIDER_KEYS: &[&str] = &[
    "name",
    "base_url",
    "env_key",
    "env_key_instructions",
    "wire_api",
    "query_params",
    "http_headers",
    "env_http_headers",
    "request_max_retries",
    "stream_max_retries",
    "stream_idle_timeout_ms",
    "requires_openai_auth",
    "send_reasoning_content",
    "harness",
    "supports_parallel_tool_calls",
    "auth_header",
];

/// Keys of `[shell_environment_policy]`.
pub const SHELL_ENV_KEYS: &[&str] = &[
    "inherit",
    "ignore_default_excludes",
    "exclude",
    "set",
    "include_only",
];

/// Keys of a Codex `[shell_environment_policy]` that Open Interpreter accepts and ignores.
pub const CODEX_ONLY_SHELL_ENV_KEYS: &[&str] = &["experimental_use_profile"];

/// Keys of a `[projects."/abs/path"]` table.
pub const PROJECT_KEYS: &[&str] = &["trust_level"];

/// Keys of `[sandbox_workspace_write]`.
pub const SANDBOX_WW_KEYS: &[&str] = &[
    "writable_roots",
    "network_access",
    "exclude_tmpdir_env_var",
    "exclude_slash_tmp",
    "allow_git_writes",
];

/// Keys of `[thread_store]`.
pub const THREAD_STORE_KEYS: &[&str] = &["url", "connect_timeout_sec", "statement_timeout_sec"];

/// Keys of `[skills]`.
pub const SKILLS_KEYS: &[&str] = &["other_agents", "max_prompt_tokens", "config"];

/// Keys of one `[[skills.config]]` entry (Codex's per-skill switch).
pub const SKILL_CONFIG_KEYS: &[&str] = &["name", "path", "enabled"];

/// Keys of `[tui]` Open Interpreter honours.
pub const TUI_KEYS: &[&str] = &["theme", "status_line"];

/// Keys of Codex 0.171's `[tui]` that Open Interpreter accepts and ignores.
pub const CODEX_ONLY_TUI_KEYS: &[&str] = &[
    "alternate_screen",
    "animations",
    "experimental_mode",
    "keymap",
    "model_availability_nux",
    "notification_condition",
    "notification_method",
    "notifications",
    "pet",
    "pet_anchor",
    "raw_output_mode",
    "session_picker_view",
    "show_tooltips",
    "status_line_use_colors",
    "terminal_resize_reflow_max_rows",
    "terminal_title",
    "vim_mode_default",
];

/// Keys of `[history]`: `persistence` is honoured, `max_bytes` accepted from Codex.
pub const HISTORY_KEYS: &[&str] = &["persistence", "max_bytes"];

/// What a key found in a table is.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A key this program reads.
    Honoured,
    /// A Codex key this program accepts and ignores.
    CodexOnly,
    /// Not known: probably a typo of `suggestion`.
    Unknown {
        /// The known key nearest to it, if one is near.
        suggestion: Option<&'static str>,
    },
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
            assert!(
                !CODEX_ONLY_TOP_LEVEL_KEYS.contains(k),
                "{k} is in both lists"
            );
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
            KeyKind::Honoured
        );
        assert_eq!(
            classify("notifications", TUI_KEYS, CODEX_ONLY_TUI_KEYS),
            KeyKind::CodexOnly
        );
    }
}
