//! Ctrl+G: the composer's draft in the user's editor (`$VISUAL`, else `$EDITOR`), which
//! gets the terminal while the TUI waits; what it saves becomes the draft.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitStatus;

/// Why Ctrl+G left the draft unchanged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EditError {
    #[error("set $VISUAL or $EDITOR (e.g. `export EDITOR=vim`) to edit the draft in an editor")]
    NoEditor,
    #[error("cannot create {}: {source}", .path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the editor `{editor}`: {source}")]
    Start {
        editor: String,
        source: std::io::Error,
    },
    #[error("the editor `{editor}` exited with {status}; the draft is unchanged")]
    Exited { editor: String, status: ExitStatus },
    #[error("cannot read the edited draft: {0}")]
    Read(#[source] std::io::Error),
    /// The blocking task the editor ran on panicked or was cancelled.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The editor command line: `$VISUAL`, else `$EDITOR`; `None` when neither is set.
fn editor_command() -> Option<String> {
    ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
}

/// A new owner-only file for the draft.
fn draft_file(draft: &str) -> Result<PathBuf, EditError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!(
        "interpreter-draft-{}-{nanos}.md",
        std::process::id()
    ));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = match opts.open(&path) {
        Ok(f) => f,
        Err(source) => return Err(EditError::Create { path, source }),
    };
    if let Err(source) = f.write_all(draft.as_bytes()) {
        return Err(EditError::Write { path, source });
    }
    Ok(path)
}

/// Runs the editor on `draft` (the terminal must be the editor's: not in raw mode, input
/// not read by the TUI) and returns the text it saved, or why the draft is unchanged.
pub(crate) fn edit(draft: &str) -> Result<String, EditError> {
    let editor = editor_command().ok_or(EditError::NoEditor)?;
    let path = draft_file(draft)?;
    // Through `sh`, so `EDITOR="code --wait"` works as it does for git. The editor shares
    // the TUI's process group: it must be in the terminal's foreground group to read keys.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    let text = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let status = match status {
        Ok(status) => status,
        Err(source) => return Err(EditError::Start { editor, source }),
    };
    if !status.success() {
        return Err(EditError::Exited { editor, status });
    }
    let text = text.map_err(EditError::Read)?;
    // Editors end the file with a newline the draft did not have.
    Ok(text.strip_suffix('\n').unwrap_or(&text).to_string())
}
