//! What a client chooses for a session: the mode (our approval and sandbox presets), the
//! model and the harness profile, offered as ACP session modes and session config options,
//! and applied to each prompt's turn as overrides.

use crate::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};
use oi_protocol::config_types::{AskForApproval, Harness, SandboxPolicy};
use oi_protocol::protocol::TurnOverrides;

/// The config option id of the mode.
pub const MODE_OPTION: &str = "mode";
/// The config option id of the model.
pub const MODEL_OPTION: &str = "model";
/// The config option id of the harness profile.
pub const HARNESS_OPTION: &str = "harness";
/// The mode of a session whose config matches no preset.
pub const CONFIGURED_MODE: &str = "configured";

/// One preset: an approval policy and a sandbox.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The id a client selects it by.
    pub id: &'static str,
    /// The name shown to users.
    pub name: &'static str,
    /// One line on what it allows.
    pub description: &'static str,
    /// When the agent asks before acting.
    pub approval: AskForApproval,
    /// The confinement commands run under.
    pub sandbox: fn() -> SandboxPolicy,
}

fn read_only() -> SandboxPolicy {
    SandboxPolicy::ReadOnly
}

fn workspace_write() -> SandboxPolicy {
    SandboxPolicy::WorkspaceWrite {
        writable_roots: Vec::new(),
        network_access: false,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
    }
}

fn full_access() -> SandboxPolicy {
    SandboxPolicy::DangerFullAccess
}

/// The presets, as Codex names them.
pub const PRESETS: [Preset; 3] = [
    Preset {
        id: "read-only",
        name: "Read only",
        description: "Reads files and runs read-only commands; asks before any change, command that writes, or network use.",
        approval: AskForApproval::OnRequest,
        sandbox: read_only,
    },
    Preset {
        id: "auto",
        name: "Auto",
        description: "Edits files and runs commands in the workspace, sandboxed; asks before leaving it or using the network.",
        approval: AskForApproval::OnRequest,
        sandbox: workspace_write,
    },
    Preset {
        id: "full-access",
        name: "Full access",
        description: "Runs everything without asking and without a sandbox. Use only where you trust the agent with the whole machine.",
        approval: AskForApproval::Never,
        sandbox: full_access,
    },
];

/// The preset called `id`.
pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The preset a config's approval policy and sandbox are, if any (writable roots and
/// network access beyond the preset's make it a configured mode of its own).
pub fn preset_of(approval: AskForApproval, sandbox: &SandboxPolicy) -> Option<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.approval == approval && (p.sandbox)() == *sandbox)
}

/// Why a choice was refused; the text names what there is.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingError {
    /// A mode that is no preset.
    #[error("unknown mode `{value}`; the modes are {modes}")]
    UnknownMode {
        /// The mode asked for.
        value: String,
        /// The modes there are, listed.
        modes: String,
    },
    /// An empty model name.
    #[error("the model is empty; give a model name")]
    EmptyModel,
    /// A harness that does not exist.
    #[error("unknown harness `{value}`; the harnesses are {harnesses}")]
    UnknownHarness {
        /// The harness asked for.
        value: String,
        /// The harnesses there are, listed.
        harnesses: String,
    },
    #[error(
        "unknown config option `{0}`; the options are {MODE_OPTION}, {MODEL_OPTION}, {HARNESS_OPTION}"
    )]
    /// A config option this agent does not have.
    UnknownOption(String),
}

/// A session's choices.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// A preset id, or [`CONFIGURED_MODE`].
    pub mode: String,
    /// The config's approval policy and sandbox (what [`CONFIGURED_MODE`] means).
    pub configured: (AskForApproval, SandboxPolicy),
    /// The model turns are sent to.
    pub model: String,
    /// Models offered besides the current one.
    pub models: Vec<String>,
    /// The agent harness (tool set and system prompt) the model is given.
    pub harness: Harness,
}

impl Settings {
    /// The settings a config starts a session with.
    pub fn from_config(config: &oi_config::Config) -> Self {
        let mode = preset_of(config.approval_policy, &config.sandbox_policy)
            .map_or(CONFIGURED_MODE, |p| p.id)
            .to_string();
        Self {
            mode,
            configured: (config.approval_policy, config.sandbox_policy.clone()),
            model: config.model.clone(),
            models: Vec::new(),
            harness: config.harness,
        }
    }

    /// Whether `id` is a mode this session has.
    pub fn has_mode(&self, id: &str) -> bool {
        preset(id).is_some() || (id == CONFIGURED_MODE && self.configured_is_custom())
    }

    fn configured_is_custom(&self) -> bool {
        preset_of(self.configured.0, &self.configured.1).is_none()
    }

    /// The overrides each prompt's turn starts with.
    pub fn overrides(&self) -> TurnOverrides {
        let (approval, sandbox) = match preset(&self.mode) {
            Some(p) => (p.approval, (p.sandbox)()),
            None => self.configured.clone(),
        };
        TurnOverrides {
            approval_policy: Some(approval),
            sandbox_policy: Some(sandbox),
            model: Some(self.model.clone()),
            harness: Some(self.harness),
            ..TurnOverrides::default()
        }
    }

    /// The session's modes, for `session/new` and `session/load`.
    pub fn modes(&self) -> SessionModeState {
        let mut modes: Vec<SessionMode> = Vec::new();
        if self.configured_is_custom() {
            modes.push(
                SessionMode::new(CONFIGURED_MODE, "As configured").description(format!(
                    "The approval policy ({}) and sandbox ({}) of your config.",
                    approval_name(self.configured.0),
                    self.configured.1.mode().as_str()
                )),
            );
        }
        modes.extend(
            PRESETS
                .iter()
                .map(|p| SessionMode::new(p.id, p.name).description(p.description)),
        );
        SessionModeState::new(self.mode.clone(), modes)
    }

    /// The session's config options: mode, model, harness.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let modes = self
            .modes()
            .available_modes
            .into_iter()
            .map(|m| {
                SessionConfigSelectOption::new(m.id.0.to_string(), m.name)
                    .description(m.description)
            })
            .collect::<Vec<_>>();
        let mut models = vec![self.model.clone()];
        models.extend(self.models.iter().filter(|m| **m != self.model).cloned());
        let models = models
            .into_iter()
            .map(|m| SessionConfigSelectOption::new(m.clone(), m))
            .collect::<Vec<_>>();
        let harnesses = Harness::ALL
            .iter()
            .map(|h| {
                SessionConfigSelectOption::new(h.as_str(), h.as_str())
                    .description(harness_description(*h))
            })
            .collect::<Vec<_>>();
        vec![
            SessionConfigOption::select(MODE_OPTION, "Mode", self.mode.clone(), modes)
                .description("How much the agent may do without asking.")
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select(MODEL_OPTION, "Model", self.model.clone(), models)
                .description("The model of the configured provider.")
                .category(SessionConfigOptionCategory::Model),
            SessionConfigOption::select(
                HARNESS_OPTION,
                "Harness",
                self.harness.as_str(),
                harnesses,
            )
            .description("The tools and prompt the model is shown."),
        ]
    }

    /// Sets option `id` to `value`; the error says what is wrong.
    pub fn set_option(&mut self, id: &str, value: &str) -> Result<(), SettingError> {
        match id {
            MODE_OPTION => {
                if !self.has_mode(value) {
                    return Err(SettingError::UnknownMode {
                        value: value.to_string(),
                        modes: self.mode_ids().join(", "),
                    });
                }
                self.mode = value.to_string();
            }
            MODEL_OPTION => {
                if value.trim().is_empty() {
                    return Err(SettingError::EmptyModel);
                }
                self.model = value.to_string();
            }
            HARNESS_OPTION => {
                self.harness = Harness::ALL
                    .into_iter()
                    .find(|h| h.as_str() == value)
                    .ok_or_else(|| SettingError::UnknownHarness {
                        value: value.to_string(),
                        harnesses: Harness::ALL.map(|h| h.as_str()).join(", "),
                    })?;
            }
            other => return Err(SettingError::UnknownOption(other.to_string())),
        }
        Ok(())
    }

    /// The ids of this session's modes.
    pub fn mode_ids(&self) -> Vec<String> {
        self.modes()
            .available_modes
            .iter()
            .map(|m| m.id.0.to_string())
            .collect()
    }
}

fn approval_name(a: AskForApproval) -> &'static str {
    match a {
        AskForApproval::Untrusted => "untrusted",
        AskForApproval::OnFailure => "on-failure",
        AskForApproval::OnRequest => "on-request",
        AskForApproval::Never => "never",
    }
}

fn harness_description(h: Harness) -> &'static str {
    h.summary()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(approval: AskForApproval, sandbox: SandboxPolicy) -> Settings {
        Settings {
            mode: preset_of(approval, &sandbox)
                .map_or(CONFIGURED_MODE, |p| p.id)
                .to_string(),
            configured: (approval, sandbox),
            model: "m".into(),
            models: vec![],
            harness: Harness::Codex,
        }
    }

    #[test]
    fn a_config_that_is_a_preset_starts_in_it_and_offers_only_presets() {
        let s = settings(AskForApproval::OnRequest, workspace_write());
        assert_eq!(s.mode, "auto");
        assert_eq!(s.mode_ids(), ["read-only", "auto", "full-access"]);
        assert!(!s.has_mode(CONFIGURED_MODE));
    }

    #[test]
    fn a_custom_config_is_a_mode_of_its_own_and_keeps_its_policy() {
        let mut s = settings(AskForApproval::Untrusted, read_only());
        assert_eq!(s.mode, CONFIGURED_MODE);
        assert_eq!(s.mode_ids()[0], CONFIGURED_MODE);
        let o = s.overrides();
        assert_eq!(o.approval_policy, Some(AskForApproval::Untrusted));
        s.set_option(MODE_OPTION, "full-access").unwrap();
        let o = s.overrides();
        assert_eq!(o.approval_policy, Some(AskForApproval::Never));
        assert_eq!(o.sandbox_policy, Some(SandboxPolicy::DangerFullAccess));
    }

    #[test]
    fn bad_choices_are_refused_with_what_there_is() {
        let mut s = settings(AskForApproval::OnRequest, workspace_write());
        let e = s.set_option(MODE_OPTION, "yolo").unwrap_err().to_string();
        assert!(e.contains("read-only, auto, full-access"), "{e}");
        let e = s.set_option(HARNESS_OPTION, "vim").unwrap_err().to_string();
        assert!(e.contains("claude-code") || e.contains("codex"), "{e}");
        assert!(s.set_option("color", "red").is_err());
        s.set_option(HARNESS_OPTION, "qwen-code").unwrap_or(());
        assert_eq!(s.mode, "auto");
    }
}
