//! The tools' side of the client seam ([`crate::client_tools`]): a session's client, asked
//! to run a command or to read and write the files a change plans, with what to do when it
//! cannot.

use crate::client_tools::{ClientCommand, ClientToolError, ClientTools, PlannedFile};
use crate::exec::ExecOutput;
use crate::session::Session;
use oi_protocol::config_types::SandboxPolicy;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The session's client tools, if a front end set them.
pub(crate) fn of(sess: &Session) -> Option<Arc<dyn ClientTools>> {
    sess.client_tools()
}

/// Runs a command in the client's terminal when the client runs commands; `None` when the
/// engine should run it itself (no client, or the client cannot confine it).
pub(crate) async fn run_command(
    sess: &Session,
    command: ClientCommand<'_>,
    cancel: &CancellationToken,
) -> Option<Result<ExecOutput, ClientRunError>> {
    let client = of(sess).filter(|c| c.runs_commands())?;
    let command = ClientCommand {
        sandbox: command
            .sandbox
            .filter(|p| !matches!(p, SandboxPolicy::DangerFullAccess)),
        ..command
    };
    let started = std::time::Instant::now();
    match client.run_command(command, cancel).await {
        Ok(out) => Some(Ok(ExecOutput {
            exit_code: out.exit_code,
            stdout: out.output.clone(),
            stderr: String::new(),
            aggregated: out.output,
            duration: started.elapsed(),
            timed_out: out.timed_out,
            aborted: out.aborted,
        })),
        Err(ClientToolError::Unsupported(why)) => {
            tracing::debug!("running the command here: {why}");
            None
        }
        Err(ClientToolError::Failed(why)) => Some(Err(ClientRunError(why))),
    }
}

/// Why a command the client's terminal was to run did not run; its text is the model's.
#[derive(Debug, thiserror::Error)]
#[error("command not run: the editor's terminal failed: {0}")]
pub(crate) struct ClientRunError(String);

/// Why a change written through the client did not land (whole or in part); its text is the
/// model's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClientApplyError {
    /// A planned-against file could not be read again.
    #[error("reading {}: {why}", path.display())]
    Read { path: PathBuf, why: String },
    /// A planned-against file changed since: nothing was written.
    #[error("{} changed after the change was planned. No file was changed; read it again", path.display())]
    Stale { path: PathBuf },
    /// A write or removal failed after others were done.
    #[error("{what}. Already done: {done}. Re-read the affected files before another change")]
    Partial { what: String, done: String },
}

/// The current text of each file in `paths` as the client has it, for planning a change;
/// a file the client does not give (no client, unsupported, an error) is left out, and the
/// planner reads it from disk.
pub(crate) async fn read_for_planning(
    sess: &Session,
    paths: &[PathBuf],
) -> std::collections::HashMap<PathBuf, Option<String>> {
    let mut texts = std::collections::HashMap::new();
    let Some(client) = of(sess).filter(|c| c.reads_files()) else {
        return texts;
    };
    for path in paths {
        if texts.contains_key(path) {
            continue;
        }
        // A file that is not on disk is new, whatever the editor may hold under that name;
        // a directory is the planner's to refuse.
        match tokio::fs::metadata(path).await {
            Ok(meta) if meta.is_file() => {}
            _ => continue,
        }
        match client.read_text_file(path).await {
            Ok(text) => {
                texts.insert(path.clone(), text);
            }
            Err(e) => tracing::debug!("reading {} from disk: {e}", path.display()),
        }
    }
    texts
}

/// A plan's files with their whole texts (see [`ClientTools::change_planned`]).
pub(crate) fn planned_files(plan: &oi_apply_patch::PatchPlan) -> Vec<PlannedFile> {
    use oi_apply_patch::PlannedKind;
    plan.changes
        .iter()
        .map(|change| {
            let (old_text, new_text, move_to) = match &change.kind {
                PlannedKind::Add { content } => (None, Some(content.clone()), None),
                PlannedKind::Delete { old_content } => (Some(old_content.clone()), None, None),
                PlannedKind::Update {
                    old_content,
                    new_content,
                    move_to,
                } => (
                    Some(old_content.clone()),
                    Some(new_content.clone()),
                    move_to.clone(),
                ),
            };
            PlannedFile {
                path: change.path.clone(),
                old_text,
                new_text,
                move_to,
            }
        })
        .collect()
}

/// Applies `plan` through the client: each file it planned against is checked to still have
/// the text it was planned from (the user may have typed meanwhile), then every new text is
/// written through the client; the client has no way to delete, so removals (deleted files,
/// move sources) are done here. Returns the summary, or what failed and what was done.
pub(crate) async fn apply_through(
    client: &dyn ClientTools,
    plan: &oi_apply_patch::PatchPlan,
) -> Result<String, ClientApplyError> {
    use oi_apply_patch::PlannedKind;
    let mut checked = std::collections::HashSet::new();
    for change in &plan.changes {
        if !checked.insert(change.path.clone()) {
            continue;
        }
        let expected = match &change.kind {
            PlannedKind::Add { .. } => continue,
            PlannedKind::Delete { old_content } | PlannedKind::Update { old_content, .. } => {
                old_content
            }
        };
        let now = match client.read_text_file(&change.path).await {
            Ok(text) => text,
            Err(ClientToolError::Unsupported(_)) => read_disk(&change.path).await?,
            Err(e) => {
                return Err(ClientApplyError::Read {
                    path: change.path.clone(),
                    why: e.to_string(),
                });
            }
        };
        if now.as_ref() != Some(expected) {
            return Err(ClientApplyError::Stale {
                path: change.path.clone(),
            });
        }
    }
    let mut done: Vec<String> = Vec::new();
    let failed = |done: &[String], what: String| {
        let done = if done.is_empty() {
            "nothing".to_string()
        } else {
            done.join(", ")
        };
        ClientApplyError::Partial { what, done }
    };
    for (path, content) in plan.final_states() {
        match content {
            Some(text) => {
                if let Some(parent) = path.parent()
                    && let Err(e) = tokio::fs::create_dir_all(parent).await
                {
                    return Err(failed(&done, format!("creating {}: {e}", parent.display())));
                }
                if let Err(e) = client.write_text_file(&path, text).await {
                    return Err(failed(&done, format!("writing {}: {e}", path.display())));
                }
                done.push(format!("wrote {}", path.display()));
            }
            None => match tokio::fs::remove_file(&path).await {
                Ok(()) => done.push(format!("removed {}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(failed(&done, format!("removing {}: {e}", path.display()))),
            },
        }
    }
    Ok(plan.summary())
}

async fn read_disk(path: &Path) -> Result<Option<String>, ClientApplyError> {
    let p = path.to_path_buf();
    let read_error = |why: String| ClientApplyError::Read {
        path: path.to_path_buf(),
        why,
    };
    tokio::task::spawn_blocking(move || oi_apply_patch::read_target(&p))
        .await
        .map_err(|e| read_error(format!("the read failed ({e})")))?
        .map_err(|e| read_error(e.to_string()))
}
