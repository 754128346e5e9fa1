//! What the model is told: base instructions, the environment context (cwd, sandbox,
//! approval policy), project docs (AGENTS.md, see `project_doc`) and developer instructions;
//! and the request built from them and the history ([`request`]), which the turn sends and
//! compaction measures.

mod request;

pub(crate) use request::{
    build_prompt, build_sized_prompt, estimate_with_history, prompt_has_images,
};

use crate::project_doc::ProjectDoc;
use oi_config::Config;
use oi_protocol::config_types::{AskForApproval, Harness, SandboxPolicy};
use oi_protocol::models::ResponseItem;

/// `base_instructions`, else the system prompt of the session's harness profile.
pub(crate) fn base_instructions(config: &Config) -> String {
    config.base_instructions.clone().unwrap_or_else(|| {
        crate::harness::instructions(crate::harness::resolve(config)).to_string()
    })
}

fn permissions_text(approval: AskForApproval, sandbox: &SandboxPolicy, harness: Harness) -> String {
    let sandbox_text = match sandbox {
        SandboxPolicy::DangerFullAccess => {
            "`sandbox_mode` is `danger-full-access`: commands run without a sandbox and can read and write anywhere the user can, with network access.".to_string()
        }
        SandboxPolicy::ReadOnly => {
            "`sandbox_mode` is `read-only`: commands can read any file but cannot write anywhere, and have no network access.".to_string()
        }
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            ..
        } => {
            let mut s = "`sandbox_mode` is `workspace-write`: commands can read any file and write inside the working directory and temp directories".to_string();
            if !writable_roots.is_empty() {
                let roots: Vec<String> = writable_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect();
                s.push_str(&format!(" and in {}", roots.join(", ")));
            }
            s.push_str(if *network_access {
                "; network access is enabled."
            } else {
                "; network access is disabled."
            });
            s
        }
    };
    let approval_text = match approval {
        AskForApproval::Untrusted => {
            "`approval_policy` is `untrusted`: read-only commands run immediately; anything else waits for the user's approval."
        }
        AskForApproval::OnFailure => {
            "`approval_policy` is `on-failure`: commands run in the sandbox; if one fails because of the sandbox, the user is asked whether to re-run it without the sandbox."
        }
        AskForApproval::OnRequest => match harness {
            Harness::ClaudeCode | Harness::ClaudeCodeBare | Harness::Zcode => {
                "`approval_policy` is `on-request`: commands run in the sandbox. If a command needs to write outside it or use the network, call `Bash` with `\"dangerouslyDisableSandbox\": true` and say why in `description`; the user will be asked."
            }
            Harness::QwenCode
            | Harness::KimiCode
            | Harness::KimiCli
            | Harness::DeepseekTui
            | Harness::SweAgent
            | Harness::Minimal => {
                "`approval_policy` is `on-request`: commands run in the sandbox. If the sandbox stops a command, the user is asked whether to run it again without the sandbox."
            }
            Harness::Codex | Harness::Auto => {
                "`approval_policy` is `on-request`: commands run in the sandbox. If a command needs to write outside it or use the network, call `shell` with `\"with_escalated_permissions\": true` and a one-sentence `justification`; the user will be asked."
            }
        },
        AskForApproval::Never => {
            "`approval_policy` is `never`: nobody will approve anything. Work within the sandbox; if something fails, find another way."
        }
    };
    format!("{sandbox_text}\n{approval_text}")
}

/// The settings of the run that stay the same from one run to the next (they go with the
/// system prompt).
fn environment_settings(config: &Config) -> String {
    let network = if config.sandbox_policy.has_network_access() {
        "enabled"
    } else {
        "restricted"
    };
    format!(
        "<environment>\n  <approval_policy>{}</approval_policy>\n  <sandbox_mode>{}</sandbox_mode>\n  <network_access>{network}</network_access>\n  <shell>bash</shell>\n</environment>",
        config.approval_policy,
        config.sandbox_policy.mode(),
    )
}

/// What differs from one run to the next: the working directory (it goes after the tool
/// schemas, see [`context_items`]).
fn environment_context(config: &Config) -> String {
    format!(
        "<environment_context>\n  <cwd>{}</cwd>\n</environment_context>",
        config.cwd.display(),
    )
}

/// Context sent at the start of every request (not stored in history, so a changed cwd or
/// policy takes effect on the next request). `project_doc` is the turn's project doc, read
/// when the turn started; `session_context` what the thread's `SessionStart` hooks said.
///
/// What is the same from run to run (the permissions, developer instructions) is a
/// developer item, which joins the system prompt; what differs between runs (the working
/// directory, the project's AGENTS.md) is a user item after it. A chat template puts the
/// tool schemas right after the system prompt, so the system prompt and the schemas form a
/// prefix that a new `exec` in another folder shares with the last one, and a server's
/// prompt cache skips their prefill (llama.cpp `cache_n`). The chat wire merges the user
/// item into the first user message (templates that want roles to alternate reject two in
/// a row); its text starts with `<project_instructions` or `<environment_context>`.
pub(crate) fn context_items(
    config: &Config,
    project_doc: Option<&ProjectDoc>,
    skills: &crate::skills::SkillsFound,
    session_context: Option<&str>,
) -> Vec<ResponseItem> {
    let text = format!(
        "{}\n\n{}",
        permissions_text(
            config.approval_policy,
            &config.sandbox_policy,
            crate::harness::resolve(config),
        ),
        environment_settings(config)
    );
    let mut varying = String::new();
    if let Some(doc) = project_doc {
        varying.push_str(&format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>\n\n",
            doc.path, doc.text
        ));
    }
    if let Some(list) = crate::skills::prompt::section(skills, config.skills.max_prompt_tokens) {
        varying.push_str(&list);
        varying.push_str("\n\n");
    }
    varying.push_str(&environment_context(config));
    // After the environment context: the chat wire knows the run context by how it starts.
    if let Some(context) = session_context {
        varying.push_str(&format!(
            "\n\n<session_start_hook_context>\n{context}\n</session_start_hook_context>"
        ));
    }
    let mut items = vec![ResponseItem::developer_text(text)];
    if let Some(dev) = &config.developer_instructions
        && !dev.trim().is_empty()
    {
        // Tagged like the other context sections, so it stays recognisable where the chat
        // wire joins everything into one system message.
        items.push(ResponseItem::developer_text(format!(
            "<developer_instructions>\n{}\n</developer_instructions>",
            dev.trim()
        )));
    }
    items.push(ResponseItem::user_text(varying));
    items
}
