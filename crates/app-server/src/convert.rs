//! Engine and config values as wire values, and wire input as engine input: the
//! conversions that need `oi-core` or `oi-config`, which the wire crate
//! (`oi-app-server-protocol`) does not know.

use crate::invalid;
use oi_app_server_protocol::wire::{GitInfo, Thread, ThreadSessionResponse, ThreadStatus};
use oi_app_server_protocol::{MAX_INPUT_CHARS, V2SandboxPolicy, V2UserInput};
use oi_config::Config;
use oi_core::ThreadSummary;
use oi_jsonrpc::RpcError;
use oi_protocol::ThreadId;
use oi_protocol::user_input::UserInput;
use serde_json::json;

/// Now, in Unix seconds (the wire's timestamps).
pub(crate) fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A thread's git facts as the wire shows them.
pub(crate) fn git_info(g: &oi_core::GitInfo) -> GitInfo {
    GitInfo {
        sha: g.commit_hash.clone(),
        branch: g.branch.clone(),
        origin_url: g.repository_url.clone(),
    }
}

/// A thread from its index row; `turns` stays empty.
pub(crate) fn thread_from_summary(s: &ThreadSummary, status: ThreadStatus) -> Thread {
    Thread {
        id: s.id.to_string(),
        session_id: s.id.to_string(),
        project_id: None,
        forked_from_id: s.forked_from_id.map(|i| i.to_string()),
        preview: s.preview.clone(),
        ephemeral: false,
        model_provider: s.model_provider.clone(),
        created_at: s.created_at,
        updated_at: s.updated_at,
        status,
        // Threads kept in PostgreSQL have no rollout file.
        path: (!s.path.as_os_str().is_empty()).then(|| s.path.clone()),
        cwd: s.cwd.clone(),
        cli_version: s.cli_version.clone(),
        source: s.source.as_v2_str().to_string(),
        agent_nickname: None,
        agent_role: None,
        git_info: s.git.as_ref().map(git_info),
        name: s.name.clone(),
        turns: Vec::new(),
    }
}

/// A thread that exists only in memory.
pub(crate) fn ephemeral_thread(
    id: ThreadId,
    forked_from: Option<ThreadId>,
    config: &Config,
    created_at: i64,
    status: ThreadStatus,
) -> Thread {
    Thread {
        id: id.to_string(),
        session_id: id.to_string(),
        project_id: None,
        forked_from_id: forked_from.map(|i| i.to_string()),
        preview: String::new(),
        ephemeral: true,
        model_provider: config.model_provider_id.clone(),
        created_at,
        updated_at: created_at,
        status,
        path: None,
        cwd: config.cwd.clone(),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        source: "appServer".to_string(),
        agent_nickname: None,
        agent_role: None,
        git_info: None,
        name: None,
        turns: Vec::new(),
    }
}

/// The response of `thread/start|resume|fork` for `thread` running with `config`.
pub(crate) fn session_response(thread: Thread, config: &Config) -> ThreadSessionResponse {
    ThreadSessionResponse {
        thread,
        model: config.model.clone(),
        model_provider: config.model_provider_id.clone(),
        service_tier: None,
        cwd: config.cwd.clone(),
        instruction_sources: Vec::new(),
        approval_policy: config.approval_policy,
        approvals_reviewer: "user".to_string(),
        sandbox: V2SandboxPolicy::from(&config.sandbox_policy),
        reasoning_effort: config.model_reasoning_effort,
    }
}

/// Converts v2 input to engine input. Errors: empty input, too much text.
pub(crate) fn core_input(input: &[V2UserInput]) -> Result<Vec<UserInput>, RpcError> {
    if input.is_empty() {
        return Err(invalid("input must not be empty"));
    }
    let chars: usize = input
        .iter()
        .map(|i| match i {
            V2UserInput::Text { text, .. } => text.chars().count(),
            _ => 0,
        })
        .sum();
    if chars > MAX_INPUT_CHARS {
        return Err(RpcError::new(
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
}
