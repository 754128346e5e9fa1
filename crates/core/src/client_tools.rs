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
//! A front end sets its [`ClientTools`] on a thread with [`crate::Thread::set_client_tools`]; tools
//! read it when they run, so it applies from the next tool call on.

use oi_protocol::config_types::SandboxPolicy;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
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
