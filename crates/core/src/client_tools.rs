//! The seam through which a front end's client does part of the tools' work: an editor that
//! offers its files and terminals (the Agent Client Protocol's `fs/*` and `terminal/*`).
//!
//! The engine still decides everything — approvals, the sandbox policy, the events, what the
//! model reads — and only the last step changes hands: a file's current text is read from the
//! client (so an unsaved buffer is what a change is planned against), a change's new text is
//! written through it (so the edit lands in the editor), and a command runs in the client's
//! terminal. What the client does not offer, or refuses with [`ClientToolError::Unsupported`],
//! runs here as it would without a client.
//!
//! A front end sets its [`ClientTools`] on a thread with [`Thread::set_client_tools`]; tools
//! read it when they run, so it applies from the next tool call on.

use crate::exec::ExecOutput;
use crate::session::Session;
use crate::thread::Thread;
use oi_protocol::config_types::SandboxPolicy;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A boxed, sendable future: what the seam's methods return.
pub type ClientFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why the client did not do what it was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientToolError {
    /// The client cannot do this one (no capability, a command it cannot confine): the engine
    /// does it itself, as without a client.
    #[error("the client does not support this: {0}")]
    Unsupported(String),
    /// The client answered with an error, or did not answer; the text says which, for the
    /// model.
    #[error("{0}")]
    Failed(String),
}

/// One command for the client's terminal.
#[derive(Debug, Clone)]
pub struct ClientCommand<'a> {
    /// The tool call it runs for (a front end shows the terminal in that call).
    pub call_id: &'a str,
    /// What to run.
    pub argv: &'a [String],
    /// Where.
    pub cwd: &'a Path,
    /// The policy the command must be confined by; `None`: it runs unconfined (full access,
    /// or an approved escalation). A client that cannot confine it answers
    /// [`ClientToolError::Unsupported`], and it runs in the engine's own sandbox instead.
    pub sandbox: Option<&'a SandboxPolicy>,
    /// When to kill it.
    pub timeout: Duration,
}

/// What a command run by the client did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientCommandOutput {
    /// Its exit code (-1 when killed by a signal or unknown).
    pub exit_code: i32,
    /// What it printed (stdout and stderr as the terminal interleaved them).
    pub output: String,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// The turn was interrupted and it was killed.
    pub aborted: bool,
}

/// One file of a change the engine has planned, with its whole text before and after (the
/// events carry only a diff): what a front end shows for review.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedFile {
    /// The file's absolute path.
    pub path: PathBuf,
    /// Its text now; `None`: it does not exist yet.
    pub old_text: Option<String>,
    /// Its text afterwards; `None`: it is deleted.
    pub new_text: Option<String>,
    /// Where it moves to, if it moves.
    pub move_to: Option<PathBuf>,
}

/// What a front end's client does for the engine's tools. Every method has a default that
/// offers nothing, so a front end implements what its client offers.
pub trait ClientTools: Send + Sync {
    /// The client reads files (an editor's buffers included).
    fn reads_files(&self) -> bool {
        false
    }

    /// The client writes files.
    fn writes_files(&self) -> bool {
        false
    }

    /// The client runs commands in its terminals.
    fn runs_commands(&self) -> bool {
        false
    }

    /// The text of the file at `path` (absolute) as the client has it. `Ok(None)`: no
    /// such file.
    fn read_text_file<'a>(
        &'a self,
        path: &'a Path,
    ) -> ClientFuture<'a, Result<Option<String>, ClientToolError>> {
        let _ = path;
        Box::pin(async { Err(ClientToolError::Unsupported("reading files".into())) })
    }

    /// Gives the file at `path` (absolute) the text `content`, creating it if needed.
    fn write_text_file<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> ClientFuture<'a, Result<(), ClientToolError>> {
        let _ = (path, content);
        Box::pin(async { Err(ClientToolError::Unsupported("writing files".into())) })
    }

    /// Runs `command` to its end, its timeout, or `cancel` (then it is killed).
    fn run_command<'a>(
        &'a self,
        command: ClientCommand<'a>,
        cancel: &'a CancellationToken,
    ) -> ClientFuture<'a, Result<ClientCommandOutput, ClientToolError>> {
        let _ = (command, cancel);
        Box::pin(async { Err(ClientToolError::Unsupported("running commands".into())) })
    }

    /// The engine planned a change for tool call `call_id` (before asking to approve it and
    /// before applying it): the files' whole texts, for a front end that shows full diffs.
    fn change_planned(&self, call_id: &str, files: &[PlannedFile]) {
        let _ = (call_id, files);
    }
}

impl Thread {
    /// Lets `tools` do the file reads, writes and commands its client offers, from the next
    /// tool call on; `None` gives them back to the engine.
    pub fn set_client_tools(&self, tools: Option<Arc<dyn ClientTools>>) {
        self.session().set_client_tools(tools);
    }
}

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
