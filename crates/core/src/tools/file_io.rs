//! The file primitives the profile tools and the viewer share: resolve a path, read a file
//! as patch planning does, give a file new text through the patch path (approval, diff,
//! atomic apply, events).

use super::call::{ToolCall, ToolOutcome};
use crate::session::Session;
use oi_apply_patch::{FileHunk, Patch};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Gives `target` the text `contents` through the patch path (an `Add File` of an existing
/// file plans as an update of its whole text, so the diff shown is the real one).
pub(super) async fn set_content(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    target: PathBuf,
    contents: String,
    cwd: &Path,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let patch = Patch {
        hunks: vec![FileHunk::Add {
            path: target,
            contents,
        }],
        add_replaces: true,
    };
    super::patch::apply_planned(
        sess,
        call.turn_id,
        call.call_id,
        patch,
        cwd,
        call.name,
        cancel,
    )
    .await
}

pub(super) fn resolve(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// Why a profile tool could not read its file.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadError {
    /// The file is not one patch planning reads (missing parent, not text, too large...).
    #[error(transparent)]
    Target(#[from] oi_apply_patch::ApplyError),
    /// The blocking task that read it failed.
    #[error("reading the file failed ({0})")]
    Task(#[from] tokio::task::JoinError),
}

/// A file's text as patch planning reads it, on the blocking pool.
pub(super) async fn read(path: &Path) -> Result<Option<String>, ReadError> {
    let path = path.to_path_buf();
    Ok(tokio::task::spawn_blocking(move || oi_apply_patch::read_target(&path)).await??)
}
