//! The wire of the v2 thread/turn API (and the legacy v1 methods) that `interpreter
//! app-server` serves, as types: no I/O, no engine, no transport. Field names follow Codex
//! app-server 0.171 (its generated schema where its README disagrees).
//!
//! Public surface:
//! * [`methods`]: every wire method declared once — its name, its direction (a client
//!   request, a notification we send, a request we send the client) and its params and
//!   result types — as a marker type per method implementing [`methods::ClientRequest`],
//!   [`methods::ServerNotification`] or [`methods::ServerRequest`]. The server registers
//!   handlers, sends notifications and asks the client only through these declarations.
//! * [`schema`]: the JSON Schema of every declared method (what `interpreter app-server
//!   generate-json-schema` writes, [`export::write_schema`]) and the helpers the schema test
//!   (`tests/schema_facts.rs`, against Codex's field facts) reads it with.
//! * The shapes, by topic: this module (thread overrides, user input, sandbox policy:
//!   shared by params and results) · [`thread`] (`Thread`, its status, the thread methods'
//!   params, results and notifications) · [`turn`] (`Turn`, `TurnError`, the turn methods)
//!   · [`item`] (`ThreadItem`) · [`notification`] (item lifecycle, deltas, usage, errors) ·
//!   [`approval`] (approval replies, the elicitation request and reply) · [`account`]
//!   (`account/*`) · [`catalog`] (`model/list`, collaboration modes, apps) · [`config`]
//!   (`config/*`) · [`fuzzy`] (`fuzzyFileSearch*`) · [`hooks`] (`hooks/list`) · [`session`] (what Codex's TUI calls
//!   mid-session) · [`absent`] (features we do not have, answered empty) · [`v1`] (legacy
//!   results) · [`wire`] (initialize, history pages, lifecycle, MCP status,
//!   `command/exec`, approval requests; and everything above re-exported: the one place
//!   to import the wire from).
//!
//! Conversions from the engine's own types (`oi-protocol`) live beside the wire types;
//! conversions that need the engine or the config are the server's.
pub mod absent;
pub mod account;
pub mod approval;
pub mod catalog;
pub mod config;
pub mod export;
pub mod fuzzy;
pub mod hooks;
pub mod item;
pub mod methods;
pub mod notification;
pub mod schema;
pub mod session;
pub mod skills;
pub mod thread;
pub mod turn;
pub mod v1;
pub mod wire;

pub use item::ThreadItem;
pub use thread::{Thread, ThreadSessionResponse, ThreadStatus};
pub use turn::{Turn, TurnError, TurnStatus};

use oi_protocol::config_types::{AskForApproval, SandboxMode, SandboxPolicy};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// Overrides accepted by `thread/start`, `thread/resume` and `thread/fork`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadOverrides {
    /// The model to run (else the config's).
    #[serde(default)]
    pub model: Option<String>,
    /// The model provider to run it on: a key of the config's `model_providers`.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// The working directory of its commands (else the server's).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub approval_policy: Option<AskForApproval>,
    /// `read-only`, `workspace-write` or `danger-full-access`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub sandbox: Option<SandboxMode>,
    /// Dotted config keys with JSON values, applied like `-c key=value`.
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
    /// Replaces the built-in system prompt.
    #[serde(default)]
    pub base_instructions: Option<String>,
    /// Added to the prompt as developer instructions.
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

impl ThreadOverrides {
    /// True when the caller chose the model (so a resumed thread's stored model is not reused).
    pub fn picks_model(&self) -> bool {
        self.model.is_some()
            || self.model_provider.is_some()
            || self
                .config
                .as_ref()
                .is_some_and(|c| c.contains_key("model") || c.contains_key("model_provider"))
    }
}

/// A v2 `UserInput`: what `turn/start` and `turn/steer` take, and the `content` of a
/// `userMessage` item.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
#[schemars(rename = "UserInput")]
pub enum V2UserInput {
    /// Text the user typed.
    Text {
        /// The text.
        text: String,
        /// Codex's UI placeholders inside `text` (accepted and ignored).
        #[serde(default)]
        #[allow(dead_code)] // UI placeholders; the text already contains them
        text_elements: Vec<Value>,
    },
    /// An image by URL (`data:` URLs included).
    Image {
        /// The image's URL.
        url: String,
    },
    /// An image file on the server's machine.
    LocalImage {
        /// The image file.
        path: PathBuf,
    },
    /// A skill the user picked: the model is told to load it (`load_skill`) before it starts.
    Skill {
        /// The skill's name.
        name: String,
        /// Where the skill is.
        path: PathBuf,
    },
    /// A file the user mentioned: the model is pointed at it, to read with its tools.
    Mention {
        /// The name shown for it.
        name: String,
        /// The path it names.
        path: PathBuf,
    },
}

/// The reference's limit on text input per request (characters of all text inputs).
pub const MAX_INPUT_CHARS: usize = 1 << 20;

/// A v2 `SandboxPolicy`: sent in `turn/start` (camelCase tags; kebab-case accepted) and
/// reported in the `sandbox` of thread results (camelCase, every field).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
#[schemars(rename = "SandboxPolicy")]
pub enum V2SandboxPolicy {
    /// No sandbox: commands run with the user's rights.
    #[serde(alias = "danger-full-access")]
    DangerFullAccess,
    /// Commands may read anything and write nothing.
    #[serde(alias = "read-only")]
    ReadOnly,
    /// Commands may write in the working directory and `writableRoots` (and the temporary
    /// folders, unless excluded).
    #[serde(alias = "workspace-write", rename_all = "camelCase")]
    WorkspaceWrite {
        /// More folders commands may write in.
        #[serde(default)]
        writable_roots: Vec<PathBuf>,
        /// Whether commands may use the network.
        #[serde(default)]
        network_access: bool,
        /// Keep `$TMPDIR` read-only.
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        /// Keep `/tmp` read-only.
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
}

impl From<V2SandboxPolicy> for SandboxPolicy {
    fn from(p: V2SandboxPolicy) -> Self {
        match p {
            V2SandboxPolicy::DangerFullAccess => SandboxPolicy::DangerFullAccess,
            V2SandboxPolicy::ReadOnly => SandboxPolicy::ReadOnly,
            V2SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            } => SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            },
        }
    }
}

impl From<&SandboxPolicy> for V2SandboxPolicy {
    fn from(p: &SandboxPolicy) -> Self {
        match p.clone() {
            SandboxPolicy::DangerFullAccess => V2SandboxPolicy::DangerFullAccess,
            SandboxPolicy::ReadOnly => V2SandboxPolicy::ReadOnly,
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            } => V2SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            },
        }
    }
}

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
pub fn tri_state<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sandbox_policy_round_trip() {
        let p: V2SandboxPolicy = serde_json::from_value(
            json!({"type": "workspaceWrite", "writableRoots": ["/a"], "networkAccess": true}),
        )
        .unwrap();
        let core: SandboxPolicy = p.into();
        assert_eq!(
            serde_json::to_value(V2SandboxPolicy::from(&core)).unwrap(),
            json!({"type": "workspaceWrite", "writableRoots": ["/a"], "networkAccess": true,
                   "excludeTmpdirEnvVar": false, "excludeSlashTmp": false})
        );
        let p: V2SandboxPolicy = serde_json::from_value(json!({"type": "read-only"})).unwrap();
        assert_eq!(SandboxPolicy::from(p), SandboxPolicy::ReadOnly);
    }

    #[test]
    fn overrides_accept_kebab_case_enums() {
        let o: ThreadOverrides = serde_json::from_value(json!({
            "approvalPolicy": "on-request", "sandbox": "workspace-write", "config": {"model": "m"}
        }))
        .unwrap();
        assert_eq!(o.approval_policy, Some(AskForApproval::OnRequest));
        assert_eq!(o.sandbox, Some(SandboxMode::WorkspaceWrite));
        assert!(o.picks_model());
    }
}
