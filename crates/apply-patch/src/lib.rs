//! The `apply_patch` tool: parse the model's patch, compute every file's new content without
//! touching disk, show it for approval, then write it all-or-nothing.
//!
//! # Public surface
//! * [`parse_patch`] → [`Patch`] (or a [`ParseError`] with the line number and what was expected).
//! * [`plan_patch`] → [`PatchPlan`] ([`plan_patch_with`]: the same against files read by the
//!   caller, e.g. an editor's buffers): absolute paths plus old/new content, computed in memory.
//!   [`PatchPlan::file_changes`] gives the `oi_protocol` [`FileChange`](oi_protocol::protocol::FileChange)
//!   map for approval prompts and events, [`PatchPlan::affected_paths`] the paths for sandbox
//!   write checks, and [`PatchPlan::apply`] writes (temp files + renames) and returns the summary.
//! * [`apply_patch`]: parse + plan + apply in one call.
//! * [`extract_from_argv`]: recognise `apply_patch` hidden in a shell command.
//!
//! This crate knows nothing about approval policy, sandboxing or events; the engine decides
//! whether a plan may be applied. It only ever touches the paths the plan names.
//!
//! # Patch format
//! ```text
//! *** Begin Patch
//! *** Add File: path/to/new.txt
//! +line one
//! +line two
//! *** Update File: src/lib.rs
//! *** Move to: src/renamed.rs
//! @@ fn context_line_or_empty
//!  unchanged context line
//! -removed line
//! +added line
//!  more context
//! @@
//! -another hunk
//! +replacement
//! *** End of File
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//! * Paths are relative to the working directory, or absolute. `.`/`..` are resolved lexically.
//! * `*** Add File:` is followed only by `+` lines (the file's content; each gets a final
//!   newline). Adding a file that already exists replaces it (shown as an update).
//! * `*** Update File:` may be followed by `*** Move to:` and then one or more chunks. A chunk
//!   starts with `@@` (optional for the first), optionally followed by a header: a line of the
//!   file, searched forward, that the chunk comes after (to pick the right one of several
//!   identical spots). Chunk lines start with ` ` (context), `-` (remove) or `+` (add); an empty
//!   line counts as empty context. `*** End of File` after a chunk anchors it at the end of the
//!   file. A chunk with only `+` lines inserts after its header line, or at the end of the file.
//! * The old lines (context + removed) are searched forward from the end of the previous chunk:
//!   exactly, then ignoring trailing whitespace, then ignoring leading and trailing whitespace,
//!   then with typographic quotes/dashes/spaces folded to ASCII. Context lines keep the file's
//!   own text.
//! * Files keep their line endings (CRLF stays CRLF) and their final newline (or lack of it).
//! * Lenient input: a heredoc wrapper (`<<'EOF'` … `EOF`, `apply_patch <<'EOF'` …, or a whole
//!   `bash -lc "apply_patch <<'EOF' …"` string), CRLF patch text, a missing final newline, a
//!   `@@ -1,2 +1,3 @@` range instead of a header, and `\ No newline at end of file` markers.

mod apply;
mod error;
mod invocation;
mod parser;
mod plan;
mod seek;

use std::path::Path;

pub use error::ApplyError;
pub use invocation::extract_from_argv;
pub use parser::{FileHunk, HunkLine, ParseError, Patch, UpdateChunk, parse_patch};
pub use plan::{
    PatchPlan, PlannedChange, PlannedKind, plan_patch, plan_patch_with, read_target, resolve,
    unified_diff,
};

/// Parse, plan and apply `input` against `cwd`; returns the success summary.
pub fn apply_patch(input: &str, cwd: &Path) -> Result<String, ApplyError> {
    let patch = parse_patch(input)?;
    plan_patch(&patch, cwd)?.apply()
}
