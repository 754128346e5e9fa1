//! The typed v2 wire, following Codex 0.171's field names (its generated schema where
//! its README disagrees). Params decode errors become `-32602` naming the field.
//!
//! Layout: this module (thread overrides, user input, sandbox policy: shared by params
//! and results) · [`thread`] (`Thread`, its status, the thread methods' results and
//! notifications) · [`turn`] (`Turn`, `TurnError`, turn results and notifications) ·
//! [`item`] (`ThreadItem`) · [`notification`] (item lifecycle, deltas, usage, errors) ·
//! [`wire`] (initialize, history pages, lifecycle, MCP status, `command/exec`, approvals)
//! · [`account`] (`account/*`) · [`catalog`] (`model/list`) · [`schema`] (their JSON Schema, per method).

pub mod absent;
pub mod account;
pub mod approval;
pub mod catalog;
pub mod config;
pub mod fuzzy;
pub mod item;
pub mod methods;
pub mod notification;
pub mod schema;
pub mod session;
pub mod thread;
pub mod turn;
pub mod v1;
pub mod wire;

pub use item::ThreadItem;
pub use thread::{Thread, ThreadSessionResponse, ThreadStatus};
pub use turn::{Turn, TurnError, TurnStatus};

use oi_protocol::config_types::{AskForApproval, SandboxMode, SandboxPolicy};
use oi_protocol::user_input::UserInput;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// Overrides accepted by `thread/start`, `thread/resume` and `thread/fork`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadOverrides {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub model_provider: Option<String>,
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
    #[serde(default)]
    pub base_instructions: Option<String>,
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
    Text {
        text: String,
        #[serde(default)]
        #[allow(dead_code)] // UI placeholders; the text already contains them
        text_elements: Vec<Value>,
    },
    Image {
        url: String,
    },
    LocalImage {
        path: PathBuf,
    },
    Skill {
        name: String,
        path: PathBuf,
    },
    Mention {
        name: String,
        path: PathBuf,
    },
}

/// The reference's limit on text input per request.
pub const MAX_INPUT_CHARS: usize = 1 << 20;

/// Converts v2 input to engine input. Errors: empty input, too much text.
pub fn core_input(input: &[V2UserInput]) -> Result<Vec<UserInput>, oi_jsonrpc::RpcError> {
    if input.is_empty() {
        return Err(crate::invalid("input must not be empty"));
    }
    let chars: usize = input
        .iter()
        .map(|i| match i {
            V2UserInput::Text { text, .. } => text.chars().count(),
            _ => 0,
        })
        .sum();
    if chars > MAX_INPUT_CHARS {
        return Err(oi_jsonrpc::RpcError::new(
            oi_jsonrpc::INVALID_PARAMS,
            format!("Input exceeds the maximum length of {MAX_INPUT_CHARS} characters."),
        )
        .with_data(json!({
            "input_error_code": "input_too_large",
            "max_chars": MAX_INPUT_CHARS,
            "actual_chars": chars,
        })));
    }
    Ok(input
        .iter()
        .map(|i| match i {
            V2UserInput::Text { text, .. } => UserInput::text(text.clone()),
            V2UserInput::Image { url } => UserInput::Image {
                image_url: url.clone(),
            },
            V2UserInput::LocalImage { path } => UserInput::LocalImage { path: path.clone() },
            // Skills and mentions point the model at a file; it can read it with its tools.
            V2UserInput::Skill { name, path } => {
                UserInput::text(format!("[skill `{name}`: {}]", path.display()))
            }
            V2UserInput::Mention { name, path } => {
                UserInput::text(format!("[mention `{name}`: {}]", path.display()))
            }
        })
        .collect())
}

/// A v2 `SandboxPolicy`: sent in `turn/start` (camelCase tags; kebab-case accepted) and
/// reported in the `sandbox` of thread results (camelCase, every field).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
#[schemars(rename = "SandboxPolicy")]
pub enum V2SandboxPolicy {
    #[serde(alias = "danger-full-access")]
    DangerFullAccess,
    #[serde(alias = "read-only")]
    ReadOnly,
    #[serde(alias = "workspace-write", rename_all = "camelCase")]
    WorkspaceWrite {
        #[serde(default)]
        writable_roots: Vec<PathBuf>,
        #[serde(default)]
        network_access: bool,
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
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

pub fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_shapes_and_limits() {
        let input: Vec<V2UserInput> = serde_json::from_value(json!([
            {"type": "text", "text": "hi", "text_elements": []},
            {"type": "image", "url": "https://x/y.png"},
            {"type": "localImage", "path": "/tmp/a.png"},
            {"type": "mention", "name": "lib", "path": "/w/lib.rs"},
        ]))
        .unwrap();
        let core = core_input(&input).unwrap();
        assert_eq!(core[0], UserInput::text("hi"));
        assert!(
            matches!(&core[1], UserInput::Image { image_url } if image_url == "https://x/y.png")
        );
        assert!(matches!(&core[3], UserInput::Text { text } if text.contains("/w/lib.rs")));
        assert_eq!(
            core_input(&[]).unwrap_err().message,
            "input must not be empty"
        );
        let big = vec![V2UserInput::Text {
            text: "x".repeat(MAX_INPUT_CHARS + 1),
            text_elements: vec![],
        }];
        let e = core_input(&big).unwrap_err();
        assert_eq!(e.code, -32602);
        assert_eq!(e.data.unwrap()["input_error_code"], "input_too_large");
    }

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
