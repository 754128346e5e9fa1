//! What the model is told: base instructions, the environment context (cwd, sandbox,
//! approval policy), project docs (AGENTS.md) and developer instructions.

use oi_config::Config;
use oi_protocol::config_types::{AskForApproval, Harness, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use std::path::{Path, PathBuf};

const PROJECT_DOC_NAMES: &[&str] = &["AGENTS.md", "AGENT.md"];

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
            Harness::ClaudeCode => {
                "`approval_policy` is `on-request`: commands run in the sandbox. If a command needs to write outside it or use the network, call `Bash` with `\"dangerouslyDisableSandbox\": true` and say why in `description`; the user will be asked."
            }
            Harness::QwenCode | Harness::KimiCode => {
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

fn environment_context(config: &Config) -> String {
    let network = if config.sandbox_policy.has_network_access() {
        "enabled"
    } else {
        "restricted"
    };
    format!(
        "<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>{}</approval_policy>\n  <sandbox_mode>{}</sandbox_mode>\n  <network_access>{network}</network_access>\n  <shell>bash</shell>\n</environment_context>",
        config.cwd.display(),
        config.approval_policy,
        config.sandbox_policy.mode(),
    )
}

/// The nearest AGENTS.md as the model is shown it: where it was found and its text, already
/// cut to `project_doc_max_bytes`.
#[derive(Clone, Debug)]
pub(crate) struct ProjectDoc {
    pub path: String,
    pub text: String,
}

/// Finds and reads the project doc on the blocking pool: it walks up the directory tree and
/// reads a file, which must not stall the runtime's worker threads. Read once per turn (see
/// `Session::load_project_doc`), not once per model request. The second value is a warning
/// when an AGENTS.md was found but refused (a FIFO, a device, unreadable).
pub(crate) async fn read_project_doc(
    cwd: PathBuf,
    home: PathBuf,
    max_bytes: usize,
) -> (Option<ProjectDoc>, Option<String>) {
    match tokio::task::spawn_blocking(move || project_doc(&cwd, &home, max_bytes)).await {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("reading AGENTS.md failed: {e}");
            (None, None)
        }
    }
}

/// The nearest AGENTS.md, cut head+tail to `max_bytes` (`project_doc_max_bytes`; 0: none).
/// Read with the bounded reader: the repository decides what the name is, so a FIFO or a
/// symlink to a device is refused at once and a huge file is read only at its ends. It must
/// also really be inside the project — the repository (the folder holding `.git`) or, outside
/// one, the folder it was found in — and not inside the agent's `home`: a link to
/// `~/.openinterpreter/.credentials.json` or any file elsewhere would send that file to the
/// model.
fn project_doc(cwd: &Path, home: &Path, max_bytes: usize) -> (Option<ProjectDoc>, Option<String>) {
    if max_bytes == 0 {
        return (None, None);
    }
    let repo = cwd.ancestors().find(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        let within = oi_config::project_file::Within {
            root: repo.unwrap_or(dir),
            excluded: Some(home),
        };
        for name in PROJECT_DOC_NAMES {
            let p = dir.join(name);
            match oi_config::project_file::read_text_head_tail_in(
                &p,
                max_bytes as u64,
                Some(&within),
            ) {
                Ok(text) => {
                    return (
                        Some(ProjectDoc {
                            path: p.display().to_string(),
                            text,
                        }),
                        None,
                    );
                }
                Err(e) if e.is_not_found() => {}
                // A refused AGENTS.md is not replaced by one further up: that would show the
                // model instructions the repository did not mean for this folder.
                Err(e) => return (None, Some(format!("AGENTS.md not used: {e}"))),
            }
        }
        // Stop at the repository root: docs above it belong to someone else.
        if dir.join(".git").exists() {
            break;
        }
    }
    (None, None)
}

/// Developer-role context sent at the start of every request (not stored in history, so a
/// changed cwd or policy takes effect on the next request). `project_doc` is the turn's
/// AGENTS.md, read when the turn started.
pub(crate) fn context_items(
    config: &Config,
    project_doc: Option<&ProjectDoc>,
) -> Vec<ResponseItem> {
    let mut text = format!(
        "{}\n\n{}",
        permissions_text(
            config.approval_policy,
            &config.sandbox_policy,
            crate::harness::resolve(config)
        ),
        environment_context(config)
    );
    if let Some(doc) = project_doc {
        text.push_str(&format!(
            "\n\n<project_instructions path=\"{}\">\n{}\n</project_instructions>",
            doc.path, doc.text
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
    items
}
