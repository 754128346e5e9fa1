//! Policy enums shared by config, engine and every front end.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// When the agent must ask the user before running a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask before anything that is not on the known-safe read-only list.
    #[serde(alias = "unless-trusted", alias = "unlessTrusted")]
    Untrusted,
    /// Run sandboxed; ask to re-run without the sandbox if it fails.
    #[serde(alias = "onFailure")]
    OnFailure,
    /// The model decides when to ask for escalation.
    #[default]
    #[serde(alias = "onRequest")]
    OnRequest,
    /// Never ask; failures go back to the model.
    Never,
}

impl AskForApproval {
    /// Every policy, from the most asking to the least.
    pub const ALL: [AskForApproval; 4] = [
        AskForApproval::Untrusted,
        AskForApproval::OnFailure,
        AskForApproval::OnRequest,
        AskForApproval::Never,
    ];

    /// The policy as `approval_policy` and `-a` spell it.
    pub fn as_str(&self) -> &'static str {
        match self {
            AskForApproval::Untrusted => "untrusted",
            AskForApproval::OnFailure => "on-failure",
            AskForApproval::OnRequest => "on-request",
            AskForApproval::Never => "never",
        }
    }
}

impl fmt::Display for AskForApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AskForApproval {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "untrusted" | "unless-trusted" => Ok(Self::Untrusted),
            "on-failure" => Ok(Self::OnFailure),
            "on-request" => Ok(Self::OnRequest),
            "never" => Ok(Self::Never),
            other => Err(format!(
                "unknown approval policy `{other}`; expected one of: untrusted, on-failure, on-request, never"
            )),
        }
    }
}

/// The user-facing sandbox choice (`sandbox_mode`, `-s`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Commands read anything and write nothing.
    #[default]
    #[serde(alias = "readOnly")]
    ReadOnly,
    /// Commands write inside the workspace and temp folders.
    #[serde(alias = "workspaceWrite")]
    WorkspaceWrite,
    /// No sandbox at all.
    #[serde(alias = "dangerFullAccess")]
    DangerFullAccess,
}

impl SandboxMode {
    /// The mode as `sandbox_mode` and `-s` spell it.
    pub fn as_str(&self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "danger-full-access" => Ok(Self::DangerFullAccess),
            other => Err(format!(
                "unknown sandbox mode `{other}`; expected one of: read-only, workspace-write, danger-full-access"
            )),
        }
    }
}

/// The resolved sandbox policy a command runs under. JSON shape follows the reference's
/// `sandbox_policy` in `session_configured`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// No confinement at all.
    DangerFullAccess,
    /// Whole filesystem readable, nothing writable, no network.
    ReadOnly,
    /// cwd, temp dirs and `writable_roots` writable; network only if `network_access`.
    WorkspaceWrite {
        /// Folders writable besides the cwd and temp folders.
        #[serde(default)]
        writable_roots: Vec<PathBuf>,
        /// Whether commands may use the network.
        #[serde(default)]
        network_access: bool,
        /// Whether `$TMPDIR` stays read-only.
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        /// Whether `/tmp` stays read-only.
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
}

impl SandboxPolicy {
    /// The user-facing mode this policy is.
    pub fn mode(&self) -> SandboxMode {
        match self {
            SandboxPolicy::DangerFullAccess => SandboxMode::DangerFullAccess,
            SandboxPolicy::ReadOnly => SandboxMode::ReadOnly,
            SandboxPolicy::WorkspaceWrite { .. } => SandboxMode::WorkspaceWrite,
        }
    }

    /// Whether commands may write anywhere (no sandbox).
    pub fn has_full_disk_write_access(&self) -> bool {
        matches!(self, SandboxPolicy::DangerFullAccess)
    }

    /// Whether commands may use the network.
    pub fn has_network_access(&self) -> bool {
        match self {
            SandboxPolicy::DangerFullAccess => true,
            SandboxPolicy::ReadOnly => false,
            SandboxPolicy::WorkspaceWrite { network_access, .. } => *network_access,
        }
    }

    /// A workspace-write policy with no extra roots and no network.
    pub fn workspace_write() -> Self {
        SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    }
}

/// Reasoning effort asked of reasoning-capable models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// No reasoning.
    None,
    /// As little as the model allows.
    Minimal,
    /// Little.
    Low,
    /// The usual amount.
    Medium,
    /// Much.
    High,
    /// As much as the model allows.
    Xhigh,
}

impl ReasoningEffort {
    /// The effort as the config and the wire spell it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ReasoningEffort::None => "none",
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
        }
    }
}

/// Which agent harness the model is given (`harness`): the tool set and the system prompt of
/// the harness an open-model family was post-trained in. Every profile's tools run on the
/// same engine primitives (commands, file changes), so approvals, the sandbox and the events
/// are the same whichever is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    /// `shell` + `apply_patch`, Codex's tools and prompt. Also spelt `native`, the seed
    /// system's name for it.
    #[default]
    #[serde(alias = "native")]
    Codex,
    /// Bash, Read, Write, Edit, Glob, Grep, TodoWrite.
    ClaudeCode,
    /// Claude Code's tools with a prompt of a few lines instead of its long one.
    ClaudeCodeBare,
    /// Z.AI's coding harness for GLM: Claude Code's tools, its own short prompt.
    Zcode,
    /// run_shell_command, read_file, write_file, replace, glob, search_file_content,
    /// list_directory, todo_write.
    QwenCode,
    /// Shell, ReadFile, WriteFile, StrReplaceFile, Glob, Grep, SetTodoList.
    KimiCode,
    /// Moonshot's kimi-cli: the same tool names as `kimi-code`, kimi-cli's prompt habits.
    KimiCli,
    /// exec_shell, read_file, write_file, edit_file, list_dir, grep_files, file_search,
    /// checklist_write.
    DeepseekTui,
    /// SWE-agent's file viewer and editor: open, goto, scroll_up, scroll_down, create,
    /// edit (a line range), search_dir, search_file, find_file, submit, and bash.
    SweAgent,
    /// One `bash` tool and a few lines of prompt, for the smallest models.
    Minimal,
    /// Chosen from the model family (and the provider's `harness`).
    Auto,
}

impl Harness {
    /// Every value, as config spells it.
    pub const ALL: [Harness; 11] = [
        Harness::Codex,
        Harness::ClaudeCode,
        Harness::ClaudeCodeBare,
        Harness::Zcode,
        Harness::QwenCode,
        Harness::KimiCode,
        Harness::KimiCli,
        Harness::DeepseekTui,
        Harness::SweAgent,
        Harness::Minimal,
        Harness::Auto,
    ];

    /// The harness as `harness` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Harness::Codex => "codex",
            Harness::ClaudeCode => "claude-code",
            Harness::ClaudeCodeBare => "claude-code-bare",
            Harness::Zcode => "zcode",
            Harness::QwenCode => "qwen-code",
            Harness::KimiCode => "kimi-code",
            Harness::KimiCli => "kimi-cli",
            Harness::DeepseekTui => "deepseek-tui",
            Harness::SweAgent => "swe-agent",
            Harness::Minimal => "minimal",
            Harness::Auto => "auto",
        }
    }

    /// What the model is given under this profile, in a few words (pickers, settings).
    pub fn summary(self) -> &'static str {
        match self {
            Harness::Codex => "shell, apply_patch",
            Harness::ClaudeCode => "Bash, Read, Write, Edit, Glob, Grep, TodoWrite",
            Harness::ClaudeCodeBare => "Claude Code's tools, a short prompt",
            Harness::Zcode => "Claude Code's tools, Z.AI's prompt for GLM",
            Harness::QwenCode => "run_shell_command, read_file, write_file, replace, …",
            Harness::KimiCode => "Shell, ReadFile, WriteFile, StrReplaceFile, …",
            Harness::KimiCli => "kimi-cli: Shell, ReadFile, WriteFile, StrReplaceFile, …",
            Harness::DeepseekTui => "exec_shell, read_file, edit_file, checklist_write, …",
            Harness::SweAgent => "SWE-agent's viewer: open, goto, scroll, edit lines, submit",
            Harness::Minimal => "bash, for the smallest models",
            Harness::Auto => "from the model family and endpoint",
        }
    }

    /// The value config spells `s`, if any (`native` is `codex`).
    pub fn parse(s: &str) -> Option<Harness> {
        if s == "native" {
            return Some(Harness::Codex);
        }
        Harness::ALL.into_iter().find(|h| h.as_str() == s)
    }
}

impl std::fmt::Display for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How tools reach the model and its calls come back (`tool_call_format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallFormat {
    /// Tools go in the request; the server turns the model's markup into `tool_calls`.
    Native,
    /// Tools are described in the system prompt in the model family's own markup, and the
    /// calls are parsed from the answer text: for servers or models whose native calls fail.
    Text,
    /// Native, switching to `Text` for the rest of the session once the model answers with
    /// a call that was not run.
    #[default]
    Auto,
}

/// Which API a provider speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// `POST {base_url}/chat/completions` with `stream: true`.
    #[default]
    Chat,
    /// `POST {base_url}/responses` with `stream: true`.
    Responses,
    /// Anthropic Messages: `POST {base_url}/messages` (`{base_url}/v1/messages` when
    /// `base_url` does not end in `/v1`) with `stream: true`.
    Messages,
}

impl WireApi {
    /// As config spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            WireApi::Chat => "chat",
            WireApi::Responses => "responses",
            WireApi::Messages => "messages",
        }
    }
}

/// How a provider's API key is sent (`auth_header`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthHeader {
    /// `Authorization: Bearer <key>` (OpenAI-compatible APIs, and Anthropic-compatible
    /// endpoints documented with `ANTHROPIC_AUTH_TOKEN`).
    Bearer,
    /// `x-api-key: <key>` (Anthropic's own API, and endpoints documented with
    /// `ANTHROPIC_API_KEY`).
    XApiKey,
}
