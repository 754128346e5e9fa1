//! The typed configuration [`load_config`](crate::load_config) produces, and what it takes.

use crate::layer::ConfigLayer;
use crate::mcp::McpServerConfig;
use crate::overrides::ConfigOverrides;
use crate::provider::ModelProviderInfo;
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What [`load_config`] needs besides the files: where home is and the front end's overrides.
#[derive(Clone, Debug, Default)]
pub struct ConfigLoadOptions {
    /// `None`: `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: Option<PathBuf>,
    /// `-c key=value` pairs, in command-line order (later wins).
    pub cli_overrides: Vec<(String, toml::Value)>,
    /// Typed overrides from the front end; they win over everything.
    pub overrides: ConfigOverrides,
}

/// The effective configuration the engine runs with.
#[derive(Clone, Debug)]
pub struct Config {
    /// The agent's home (`$OPENINTERPRETER_HOME`, else `~/.openinterpreter`).
    pub home: PathBuf,
    /// The working directory sessions start in.
    pub cwd: PathBuf,
    /// The model requests are sent to.
    pub model: String,
    /// The id of the provider in use (a key of `model_providers`).
    pub model_provider_id: String,
    /// The provider in use.
    pub model_provider: ModelProviderInfo,
    /// Neither the provider nor the model was chosen anywhere (file, profile, `-c`, flag):
    /// both are the defaults, and a front end may pick the built-in local model instead
    /// when the default server (Ollama) is not running.
    pub model_provider_defaulted: bool,
    /// Every configured provider, built-in ones included, by id.
    pub model_providers: BTreeMap<String, ModelProviderInfo>,
    /// `model_reasoning_effort`: how hard a reasoning model thinks; `None` leaves it to the provider.
    pub model_reasoning_effort: Option<ReasoningEffort>,
    /// `model_context_window`: the model's window in tokens, when the user knows it better
    /// than the built-in table or the server.
    pub model_context_window: Option<i64>,
    /// `model_auto_compact_token_limit`: compact the history once a request would carry this
    /// many tokens (default: a share of the window, decided by the engine).
    pub model_auto_compact_token_limit: Option<i64>,
    /// `model_max_output_tokens`: the bound sent with every request. `None`: a quarter of the
    /// window, at most 8192; `Some(0)`: no bound is sent.
    pub model_max_output_tokens: Option<i64>,
    /// `tool_call_format`: how tools reach the model and its calls come back.
    pub tool_call_format: oi_protocol::config_types::ToolCallFormat,
    /// `harness`: the tool set and system prompt the model is given (`auto`: from the model
    /// family; the engine resolves it).
    pub harness: oi_protocol::config_types::Harness,
    /// When the agent asks before acting.
    pub approval_policy: AskForApproval,
    /// `sandbox_mode` as configured.
    pub sandbox_mode: SandboxMode,
    /// The confinement commands run under, resolved from the sandbox mode and its settings.
    pub sandbox_policy: SandboxPolicy,
    /// `[sandbox_workspace_write] allow_git_writes`: let commands write inside `.git`.
    pub allow_git_writes: bool,
    /// `base_instructions`: a system prompt replacing the built-in one.
    pub base_instructions: Option<String>,
    /// `developer_instructions`: instructions added to the system prompt.
    pub developer_instructions: Option<String>,
    /// `compact_prompt`: the prompt used to compact the history.
    pub compact_prompt: Option<String>,
    /// `[mcp_servers]`: the MCP servers whose tools the agent gets, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// How long an approval request may stay unanswered before it counts as denied.
    pub approval_timeout: Duration,
    /// How long a turn parked at an approval can be resumed before it ends as expired
    /// (`parked_turn_timeout_sec`).
    pub parked_turn_timeout: Duration,
    /// Model requests per turn before the turn is stopped (a model that never stops calling tools).
    pub max_turn_steps: usize,
    /// Bytes of tool output the model sees; longer output is cut head+tail.
    pub tool_output_max_bytes: usize,
    /// Default timeout for a shell command when the model gives none.
    pub shell_timeout: Duration,
    /// `model_reasoning_summary`: `auto`, `concise`, `detailed` or `none` (Responses API
    /// `reasoning.summary`). `None`: not sent.
    pub model_reasoning_summary: Option<String>,
    /// `model_verbosity`: `low`, `medium` or `high` (`text.verbosity` / `verbosity`). `None`: not sent.
    pub model_verbosity: Option<String>,
    /// `hide_agent_reasoning`: front ends do not show the model's reasoning.
    pub hide_agent_reasoning: bool,
    /// `show_raw_agent_reasoning`: front ends show the whole reasoning text, not a one-line gist.
    pub show_raw_agent_reasoning: bool,
    /// `project_doc_max_bytes`: how much of AGENTS.md the model sees; 0 leaves it out.
    pub project_doc_max_bytes: usize,
    /// `project_doc_fallback_filenames`: names tried, in order, in a folder without
    /// `AGENTS.md` (after `AGENTS.override.md`, `AGENTS.md`, `AGENT.md`); checked to be
    /// relative names inside the folder, empty entries and repeats dropped.
    pub project_doc_fallback_filenames: Vec<String>,
    /// `notify`: a program and its arguments, run with one more argument (a JSON object) when a
    /// turn completes.
    pub notify: Option<Vec<String>>,
    /// When `notify` comes from an accepted project config: the files it names, pinned to
    /// their accepted content; the notifier checks them before each run.
    pub notify_pins: Option<crate::launch_pins::LaunchPins>,
    /// `[skills]`: where skills are read from and what their list may cost.
    pub skills: SkillsSettings,
    /// `[hooks]`: every layer's hook commands, in the order they run (a project's listed as
    /// untrusted, and not run, while its config is not accepted).
    pub hooks: crate::hooks::Hooks,
    /// `include_plan_tool`: whether the model is offered the plan tool (default `true`).
    pub include_plan_tool: bool,
    /// `[history] persistence`: whether prompts typed interactively are saved to
    /// `$OPENINTERPRETER_HOME/history.jsonl`.
    pub history_persistence: HistoryPersistence,
    /// `mcp_oauth_credentials_store`: where MCP servers' OAuth tokens are kept.
    pub mcp_oauth_credentials_store: OAuthCredentialsStoreMode,
    /// The profile applied, if any.
    pub profile: Option<String>,
    /// The user's `config.toml` (whether or not it exists).
    pub user_config_path: PathBuf,
    /// The project's config file, when one was read.
    pub project_config_path: Option<PathBuf>,
    /// A project config that exists but was skipped because its folder is not trusted.
    pub untrusted_project_config: Option<PathBuf>,
    /// The trusted project layer that widens the session (sandbox, approvals, MCP servers,
    /// `notify`, model endpoint), with whether the user accepted its content. When it is not
    /// accepted, this config was typed without it; front ends that start sessions refuse.
    pub project_config_review: Option<crate::ProjectConfigReview>,
    /// `[shell_environment_policy]`: the environment of commands the model runs.
    pub shell_environment_policy: crate::ShellEnvironmentPolicy,
    /// The layers the config was built from, lowest first.
    pub layers: Vec<ConfigLayer>,
    /// The keys a front end's typed overrides set (`-m`, `-s`, `-a`, `-p`...): they win over
    /// every layer, and [`Config::origin_of`] names them as flags.
    pub flag_keys: Vec<&'static str>,
    /// `[tui] theme`: the terminal UI's colour theme, by name (the TUI knows the names).
    pub tui_theme: Option<String>,
    /// `[tui] status_line`: the status line's items, in order (the TUI knows the ids).
    pub tui_status_line: Option<Vec<String>>,
}

/// `[skills]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillsSettings {
    /// `other_agents`: the other agents whose skill folders are read too, of
    /// [`SKILL_SOURCES`] (`codex`: `~/.codex/skills`, `claude`: `~/.claude/skills`).
    pub other_agents: Vec<String>,
    /// `max_prompt_tokens`: what the skills' names and descriptions may cost in the prompt.
    pub max_prompt_tokens: usize,
    /// `[[skills.config]]` entries with `enabled = false`: skills left out, by name or by
    /// the path of their `SKILL.md`.
    pub disabled: Vec<SkillSelector>,
}

/// The other agents `[skills] other_agents` may name.
pub const SKILL_SOURCES: &[&str] = &["codex", "claude"];

/// The default of `[skills] max_prompt_tokens`: a short list that fits a small window.
pub(crate) const DEFAULT_SKILLS_PROMPT_TOKENS: usize = 600;

impl Default for SkillsSettings {
    fn default() -> Self {
        Self {
            other_agents: Vec::new(),
            max_prompt_tokens: DEFAULT_SKILLS_PROMPT_TOKENS,
            disabled: Vec::new(),
        }
    }
}

/// A skill a `[[skills.config]]` entry chooses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillSelector {
    /// The skill with this name.
    Name(String),
    /// The skill at this path.
    Path(PathBuf),
}

/// `[history] persistence`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HistoryPersistence {
    /// Append each prompt to `history.jsonl` (the default).
    #[default]
    SaveAll,
    /// Keep no prompt history on disk.
    None,
}

/// `mcp_oauth_credentials_store` (Codex's key and values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OAuthCredentialsStoreMode {
    /// The OS keyring; the 0600 credentials file when no keyring is reachable.
    #[default]
    Auto,
    /// The OS keyring only: no keyring is an error.
    Keyring,
    /// `$OPENINTERPRETER_HOME/.credentials.json` only.
    File,
}

/// Default of `project_doc_max_bytes`.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;

/// A loaded configuration and what was wrong with its files.
#[derive(Clone, Debug)]
pub struct LoadedConfig {
    /// The effective configuration.
    pub config: Config,
    /// Problems that did not stop the load (unknown keys, ignored values), one message each.
    pub warnings: Vec<String>,
}
