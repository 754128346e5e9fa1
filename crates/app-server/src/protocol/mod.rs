//! v2 wire shapes: the params this API accepts (camelCase; decode errors become `-32602`
//! naming the field) and builders for the objects it returns (`Thread`, `Turn`,
//! `SandboxPolicy`, …), following the reference's code where its README disagrees.

pub mod schema;
pub mod wire;

use oi_config::Config;
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, SandboxMode, SandboxPolicy};
use oi_protocol::user_input::UserInput;
use oi_thread_store::{GitInfo, ThreadSummary};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
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

/// A v2 `UserInput`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
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

/// A v2 `SandboxPolicy` as sent in `turn/start` (camelCase tags; kebab-case accepted).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
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

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
pub fn tri_state<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// `SandboxPolicy` in the v2 spelling.
pub fn sandbox_policy(p: &SandboxPolicy) -> Value {
    match p {
        SandboxPolicy::DangerFullAccess => json!({"type": "dangerFullAccess"}),
        SandboxPolicy::ReadOnly => json!({"type": "readOnly"}),
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        } => json!({
            "type": "workspaceWrite",
            "writableRoots": writable_roots,
            "networkAccess": network_access,
            "excludeTmpdirEnvVar": exclude_tmpdir_env_var,
            "excludeSlashTmp": exclude_slash_tmp,
        }),
    }
}

pub fn git_info(g: Option<&GitInfo>) -> Value {
    match g {
        None => Value::Null,
        Some(g) => json!({
            "sha": g.commit_hash,
            "branch": g.branch,
            "originUrl": g.repository_url,
        }),
    }
}

pub fn status_not_loaded() -> Value {
    json!({"type": "notLoaded"})
}

pub fn status_idle() -> Value {
    json!({"type": "idle"})
}

pub fn status_active() -> Value {
    json!({"type": "active", "activeFlags": []})
}

/// A `Thread` from its index row. `turns` stays empty unless the caller fills it.
pub fn thread_from_summary(s: &ThreadSummary, status: Value) -> Value {
    json!({
        "id": s.id,
        "forkedFromId": s.forked_from_id,
        "preview": s.preview,
        "ephemeral": false,
        "modelProvider": s.model_provider,
        "createdAt": s.created_at,
        "updatedAt": s.updated_at,
        "status": status,
        // Threads kept in PostgreSQL have no rollout file.
        "path": (!s.path.as_os_str().is_empty()).then_some(&s.path),
        "cwd": s.cwd,
        "cliVersion": s.cli_version,
        "source": s.source.as_v2_str(),
        "agentNickname": null,
        "agentRole": null,
        "gitInfo": git_info(s.git.as_ref()),
        "name": s.name,
        "turns": [],
    })
}

/// A `Thread` that exists only in memory (ephemeral).
pub fn ephemeral_thread(
    id: ThreadId,
    forked_from: Option<ThreadId>,
    config: &Config,
    created_at: i64,
    status: Value,
) -> Value {
    json!({
        "id": id,
        "forkedFromId": forked_from,
        "preview": "",
        "ephemeral": true,
        "modelProvider": config.model_provider_id,
        "createdAt": created_at,
        "updatedAt": created_at,
        "status": status,
        "path": null,
        "cwd": config.cwd,
        "cliVersion": env!("CARGO_PKG_VERSION"),
        "source": "appServer",
        "agentNickname": null,
        "agentRole": null,
        "gitInfo": null,
        "name": null,
        "turns": [],
    })
}

/// The result of `thread/start|resume|fork`: the thread plus the settings it runs with.
pub fn thread_response(thread: Value, config: &Config) -> Value {
    json!({
        "thread": thread,
        "model": config.model,
        "modelProvider": config.model_provider_id,
        "serviceTier": null,
        "cwd": config.cwd,
        "instructionSources": [],
        "approvalPolicy": config.approval_policy,
        "approvalsReviewer": "user",
        "sandbox": sandbox_policy(&config.sandbox_policy),
        "reasoningEffort": config.model_reasoning_effort,
    })
}

/// A `Turn`. `items` is empty in `turn/start` results and turn notifications.
pub struct TurnView<'a> {
    pub id: &'a str,
    pub status: &'a str,
    pub error: Option<Value>,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<u64>,
    pub items: Vec<Value>,
}

pub fn turn(t: TurnView<'_>) -> Value {
    json!({
        "id": t.id,
        "items": t.items,
        "status": t.status,
        "error": t.error,
        "startedAt": t.started_at,
        "completedAt": t.completed_at,
        "durationMs": t.duration_ms,
    })
}

/// A `TurnError`.
pub fn turn_error(message: &str, info: Option<Value>) -> Value {
    let mut e = json!({"message": message});
    if let Some(info) = info {
        e["codexErrorInfo"] = info;
    }
    e
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
            sandbox_policy(&core),
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
