//! Errors from planning and applying a patch. Each message is written for the model that sent
//! the patch: it names the file, what went wrong and how to fix the patch.

use std::io;
use std::path::PathBuf;

use crate::parser::ParseError;

/// Why a patch was not applied, or only partly; each message tells the model how to fix the patch.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The patch text is malformed.
    #[error("{0}")]
    Parse(#[from] ParseError),

    #[error(
        "Failed to find context line(s) in {path}:\n  {line}\n(hunk {hunk}{}). Re-read the file and \
         resend the patch with exact context lines.",
        matched_note(*matched_before)
    )]
    /// A chunk's old lines are not in the file.
    ContextNotFound {
        /// The path as written in the patch.
        path: String,
        /// 1-based index of the `@@` chunk within its Update section.
        hunk: usize,
        /// The first old (context or removed) line of the chunk that could not be matched.
        line: String,
        /// How many of the chunk's old lines before `line` did match, and at which file line.
        matched_before: Option<(usize, usize)>,
    },

    #[error(
        "Failed to find the context header line in {path}:\n  @@ {header}\n(hunk {hunk}). The text \
         after '@@ ' must be an exact line of the file that comes before the hunk's lines; re-read \
         the file and resend the patch."
    )]
    /// A chunk's `@@` header line is not in the file.
    HeaderNotFound {
        /// The path as written in the patch.
        path: String,
        /// 1-based index of the `@@` chunk within its Update section.
        hunk: usize,
        /// The header text after `@@ `.
        header: String,
    },

    #[error(
        "Failed to {action} {path}: the file does not exist (looked at {}). Check the path; use \
         '*** Add File: ' to create a file.",
        resolved.display()
    )]
    /// An update or delete names a file that does not exist.
    MissingFile {
        /// The path as written in the patch.
        path: String,
        /// What the section meant to do (`update`, `delete`).
        action: &'static str,
        /// The absolute path looked at.
        resolved: PathBuf,
    },

    #[error(
        "{path} already exists ({lines} lines), and '*** Add File: ' only creates new files, so \
         nothing was replaced. To change it, read it and send '*** Update File: {path}' with the \
         lines to change; to replace it whole, put '*** Delete File: {path}' before the Add File \
         section"
    )]
    /// An `Add File` names a file that exists.
    AddExisting {
        /// The path as written in the patch.
        path: String,
        /// How many lines the existing file has.
        lines: usize,
    },

    /// The path names a directory.
    #[error("{path} is a directory; apply_patch only adds, updates and deletes regular files")]
    NotAFile {
        /// The path as written in the patch.
        path: String,
    },

    #[error(
        "{path} is not a regular file (a FIFO, socket or device); apply_patch only adds, updates and deletes regular files"
    )]
    /// The path names a FIFO, socket or device.
    NotRegular {
        /// The path as written in the patch.
        path: String,
    },

    /// The file is not UTF-8 text.
    #[error("{path} is not valid UTF-8 text; apply_patch can only edit text files")]
    NotUtf8 {
        /// The path as written in the patch.
        path: String,
    },

    #[error(
        "{path} changed on disk after the patch was checked, so nothing was written; re-read it \
         and resend the patch"
    )]
    /// The file changed between planning and writing; nothing was written.
    ChangedOnDisk {
        /// The path as written in the patch.
        path: String,
    },

    /// Reading or writing a file failed.
    #[error("Failed to {op} {}: {source}", path.display())]
    Io {
        /// What was being done (`read`, `write`, `remove`, ...).
        op: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// Why the operating system refused.
        #[source]
        source: io::Error,
    },

    /// Some files were already renamed into place when a later step failed.
    #[error("The patch was only partly applied: {detail}")]
    PartiallyApplied {
        /// Which files were changed and which step failed.
        detail: String,
    },
}

fn matched_note(matched_before: Option<(usize, usize)>) -> String {
    match matched_before {
        Some((n, at)) => format!("; the {n} line(s) before it match starting at line {at}"),
        None => String::new(),
    }
}
