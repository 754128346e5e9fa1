//! [`Patch`] + working directory → [`PatchPlan`]: every file's old and new content, computed
//! in memory. Nothing here writes to disk; [`PatchPlan::apply`] (in `apply.rs`) does.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Component, Path, PathBuf};

use oi_protocol::protocol::FileChange;

use crate::error::ApplyError;
use crate::parser::{FileHunk, HunkLine, Patch, UpdateChunk, old_lines};
use crate::seek::{longest_prefix_match, seek_line, seek_sequence};

/// Every change a patch will make, in patch order, with absolute paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchPlan {
    /// The changes, one per file section, in patch order.
    pub changes: Vec<PlannedChange>,
    /// The directory relative patch paths were resolved against; the success summary shows
    /// paths relative to it.
    pub cwd: PathBuf,
}

/// One file's change, checked against the file on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedChange {
    /// Absolute, lexically normalised (no `.`/`..`) path of the file the section names.
    pub path: PathBuf,
    /// What happens to it.
    pub kind: PlannedKind,
}

/// How a planned change alters its file, with the contents it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlannedKind {
    /// Creates a file that does not exist yet. (An `Add File` on an existing file is refused,
    /// or with [`Patch::add_replaces`] planned as an [`PlannedKind::Update`] that replaces its
    /// whole content.)
    Add {
        /// The new file's content.
        content: String,
    },
    /// Removes a file.
    Delete {
        /// What the file held before (for the diff and for undo).
        old_content: String,
    },
    /// `move_to` (absolute) is where `new_content` ends up; `path` is then removed.
    Update {
        /// What the file holds now.
        old_content: String,
        /// What it will hold.
        new_content: String,
        /// Where it ends up when moved (absolute).
        move_to: Option<PathBuf>,
    },
}

/// Resolve every path against `cwd`, read the files and compute their new content. Later
/// sections see the effect of earlier ones (two updates of one file apply in sequence).
pub fn plan_patch(patch: &Patch, cwd: &Path) -> Result<PatchPlan, ApplyError> {
    plan_patch_with(patch, cwd, read_disk)
}

/// [`plan_patch`] reading each file's current text with `read` (`Ok(None)`: no such file)
/// instead of from disk: what a caller whose files live elsewhere first (an editor's unsaved
/// buffers) plans against. `read` gets the absolute path and the path as the patch names it.
pub fn plan_patch_with(
    patch: &Patch,
    cwd: &Path,
    mut read: impl FnMut(&Path, &str) -> Result<Option<String>, ApplyError>,
) -> Result<PatchPlan, ApplyError> {
    let mut fs = VirtualFs::default();
    let mut changes = Vec::with_capacity(patch.hunks.len());
    for hunk in &patch.hunks {
        let shown = hunk.path().display().to_string();
        let path = resolve(cwd, hunk.path());
        let change = match hunk {
            FileHunk::Add { contents, .. } => {
                let kind = match fs.read(&path, &shown, &mut read)? {
                    // Refused unless asked for: the model meant an edit, and the file's lines
                    // would be lost. (Empty or identical content loses nothing.)
                    Some(old_content)
                        if !patch.add_replaces
                            && !old_content.is_empty()
                            && old_content != *contents =>
                    {
                        return Err(ApplyError::AddExisting {
                            path: shown,
                            lines: old_content.lines().count(),
                        });
                    }
                    Some(old_content) => PlannedKind::Update {
                        old_content,
                        new_content: contents.clone(),
                        move_to: None,
                    },
                    None => PlannedKind::Add {
                        content: contents.clone(),
                    },
                };
                fs.set(&path, Some(contents.clone()));
                kind
            }
            FileHunk::Delete { .. } => {
                let Some(old_content) = fs.read(&path, &shown, &mut read)? else {
                    return Err(ApplyError::MissingFile {
                        path: shown,
                        action: "delete",
                        resolved: path,
                    });
                };
                fs.set(&path, None);
                PlannedKind::Delete { old_content }
            }
            FileHunk::Update {
                move_to, chunks, ..
            } => {
                let Some(old_content) = fs.read(&path, &shown, &mut read)? else {
                    return Err(ApplyError::MissingFile {
                        path: shown,
                        action: "update",
                        resolved: path,
                    });
                };
                let new_content = apply_chunks(&old_content, chunks, &shown)?;
                let move_to = move_to
                    .as_ref()
                    .map(|m| resolve(cwd, m))
                    .filter(|m| *m != path);
                match &move_to {
                    Some(dest) => {
                        if dest.is_dir() {
                            return Err(ApplyError::NotAFile {
                                path: dest.display().to_string(),
                            });
                        }
                        fs.set(&path, None);
                        fs.set(dest, Some(new_content.clone()));
                    }
                    None => fs.set(&path, Some(new_content.clone())),
                }
                PlannedKind::Update {
                    old_content,
                    new_content,
                    move_to,
                }
            }
        };
        changes.push(PlannedChange { path, kind: change });
    }
    Ok(PatchPlan {
        changes,
        cwd: cwd.to_path_buf(),
    })
}

impl PatchPlan {
    /// Net change per absolute path, for approval prompts and patch events. A move is one
    /// `Update` keyed by its source path with `move_path` set. Several sections touching one
    /// path collapse into their combined effect.
    pub fn file_changes(&self) -> BTreeMap<PathBuf, FileChange> {
        struct Net {
            before: Option<String>,
            after: Option<String>,
            move_path: Option<PathBuf>,
        }
        let mut net: BTreeMap<PathBuf, Net> = BTreeMap::new();
        for change in &self.changes {
            let (before, after, move_path) = match &change.kind {
                PlannedKind::Add { content } => (None, Some(content), None),
                PlannedKind::Delete { old_content } => (Some(old_content), None, None),
                PlannedKind::Update {
                    old_content,
                    new_content,
                    move_to,
                } => (Some(old_content), Some(new_content), move_to.clone()),
            };
            let entry = net.entry(change.path.clone()).or_insert_with(|| Net {
                before: before.cloned(),
                after: None,
                move_path: None,
            });
            entry.after = after.cloned();
            entry.move_path = move_path;
        }
        net.into_iter()
            .filter_map(|(path, n)| {
                let change = match (n.before, n.after) {
                    (None, Some(content)) => FileChange::Add { content },
                    (Some(content), None) => FileChange::Delete { content },
                    (Some(old), Some(new)) => FileChange::Update {
                        unified_diff: unified_diff(&old, &new),
                        move_path: n.move_path,
                    },
                    (None, None) => return None,
                };
                Some((path, change))
            })
            .collect()
    }

    /// Every path written or removed (move destinations included), deduplicated, in patch order.
    pub fn affected_paths(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for change in &self.changes {
            let dest = match &change.kind {
                PlannedKind::Update {
                    move_to: Some(dest),
                    ..
                } => Some(dest),
                _ => None,
            };
            for p in std::iter::once(&change.path).chain(dest) {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
        out
    }

    /// The path as shown in summaries: relative to `cwd` when inside it.
    pub(crate) fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// A unified diff body without `---`/`+++` headers, e.g. `"@@ -1 +1 @@\n-a\n+b\n"`.
pub fn unified_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .to_string()
}

/// `cwd.join(path)` with `.` and `..` resolved lexically, so permission checks on the result
/// cannot be fooled by `sub/../../elsewhere`. Symlinks are not resolved. The absolute path
/// planning gives a patch's path.
pub fn resolve(cwd: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` refuses to go above the root, matching how the OS treats `/..`.
                if !out.pop() {
                    out.push(comp);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Files as the patch has left them so far, falling back to the disk.
#[derive(Default)]
struct VirtualFs {
    overlay: HashMap<PathBuf, Option<String>>,
}

impl VirtualFs {
    fn read(
        &self,
        path: &Path,
        shown: &str,
        fallback: &mut impl FnMut(&Path, &str) -> Result<Option<String>, ApplyError>,
    ) -> Result<Option<String>, ApplyError> {
        if let Some(state) = self.overlay.get(path) {
            return Ok(state.clone());
        }
        fallback(path, shown)
    }

    fn set(&mut self, path: &Path, content: Option<String>) {
        self.overlay.insert(path.to_path_buf(), content);
    }
}

/// A patch target's content as planning reads it (regular files only, opened without
/// blocking, UTF-8), for callers that build a [`Patch`] from a file's current text (the
/// string-replace edits of harness profiles). `Ok(None)` when the file does not exist.
pub fn read_target(path: &Path) -> Result<Option<String>, ApplyError> {
    read_disk(path, &path.display().to_string())
}

/// `Ok(None)` when the file does not exist.
pub(crate) fn read_disk(path: &Path, shown: &str) -> Result<Option<String>, ApplyError> {
    if path.is_dir() {
        return Err(ApplyError::NotAFile {
            path: shown.to_string(),
        });
    }
    let io_err = |source| ApplyError::Io {
        op: "read",
        path: path.to_path_buf(),
        source,
    };
    // The repository decides what a name is: a FIFO would block `open` forever and a device
    // would be read without end, so open without blocking and read regular files only.
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut opts,
        libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
    );
    let mut file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    if !file.metadata().map_err(io_err)?.is_file() {
        return Err(ApplyError::NotRegular {
            path: shown.to_string(),
        });
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).map_err(io_err)?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ApplyError::NotUtf8 {
            path: shown.to_string(),
        })
}

/// A file split into lines, remembering how to put it back together.
struct TextFile {
    lines: Vec<String>,
    crlf: bool,
    trailing_newline: bool,
}

impl TextFile {
    fn parse(content: &str) -> Self {
        let crlf = content
            .find('\n')
            .is_some_and(|i| content[..i].ends_with('\r'));
        // An empty file gets a final newline once it has content.
        let trailing_newline = content.is_empty() || content.ends_with('\n');
        let body = content.strip_suffix('\n').unwrap_or(content);
        let lines = if content.is_empty() {
            Vec::new()
        } else {
            body.split('\n')
                .map(|l| {
                    if crlf {
                        l.strip_suffix('\r').unwrap_or(l)
                    } else {
                        l
                    }
                    .to_string()
                })
                .collect()
        };
        TextFile {
            lines,
            crlf,
            trailing_newline,
        }
    }

    fn render(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut out = self.lines.join(eol);
        if self.trailing_newline {
            out.push_str(eol);
        }
        out
    }
}

/// Apply an Update section's chunks to `content`.
fn apply_chunks(content: &str, chunks: &[UpdateChunk], shown: &str) -> Result<String, ApplyError> {
    let mut file = TextFile::parse(content);
    let lines = &file.lines;
    // (start, number of old lines, replacement lines)
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut cursor = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        let hunk = i + 1;
        if let Some(header) = &chunk.change_context {
            let Some(at) = seek_line(lines, header, cursor) else {
                return Err(ApplyError::HeaderNotFound {
                    path: shown.to_string(),
                    hunk,
                    header: header.clone(),
                });
            };
            cursor = at + 1;
        }
        let mut hunk_lines: &[HunkLine] = &chunk.lines;
        let found = loop {
            let old: Vec<&str> = old_lines(hunk_lines);
            if old.is_empty() {
                // Pure insertion: right after the `@@` header line if there is one (unless
                // anchored at the end of the file), else at the end.
                let at = if chunk.change_context.is_some() && !chunk.is_end_of_file {
                    cursor
                } else {
                    lines.len()
                };
                break Some(at);
            }
            if let Some(at) = seek_sequence(lines, &old, cursor, chunk.is_end_of_file) {
                break Some(at);
            }
            // Trailing blank context lines are often separators the model added; retry without.
            match hunk_lines.split_last() {
                Some((HunkLine::Context(s), rest)) if s.trim().is_empty() => hunk_lines = rest,
                _ => break None,
            }
        };
        let Some(at) = found else {
            let old = old_lines(&chunk.lines);
            let (matched, match_at) = longest_prefix_match(lines, &old, cursor);
            let missing = old.get(matched).or(old.last()).copied().unwrap_or_default();
            return Err(ApplyError::ContextNotFound {
                path: shown.to_string(),
                hunk,
                line: missing.to_string(),
                matched_before: (matched > 0).then_some((matched, match_at + 1)),
            });
        };
        let mut replacement = Vec::new();
        let mut k = at;
        for line in hunk_lines {
            match line {
                // Keep the file's own text for context lines matched leniently.
                HunkLine::Context(_) => {
                    replacement.push(lines[k].clone());
                    k += 1;
                }
                HunkLine::Remove(_) => k += 1,
                HunkLine::Add(s) => replacement.push(s.clone()),
            }
        }
        replacements.push((at, k - at, replacement));
        cursor = k;
    }
    replacements.sort_by_key(|(at, _, _)| *at);
    for (at, len, new) in replacements.into_iter().rev() {
        file.lines.splice(at..at + len, new);
    }
    Ok(file.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_file_round_trips() {
        for content in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "\n",
            "a\n\n",
            "a\r\nb\r\n",
            "a\r\nb",
        ] {
            assert_eq!(TextFile::parse(content).render(), content, "{content:?}");
        }
    }

    #[test]
    fn a_fifo_or_device_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let zero = d.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for p in [&fifo, &zero] {
            match read_disk(p, "f") {
                Err(ApplyError::NotRegular { path }) => assert_eq!(path, "f"),
                other => panic!("{p:?}: expected NotRegular, got {other:?}"),
            }
        }
    }

    #[test]
    fn resolve_normalises() {
        let cwd = Path::new("/work/repo");
        let cases = [
            ("src/lib.rs", "/work/repo/src/lib.rs"),
            ("./src/../src/lib.rs", "/work/repo/src/lib.rs"),
            ("../other/x", "/work/other/x"),
            ("/abs/./y", "/abs/y"),
            ("../../../../z", "/z"),
        ];
        for (input, want) in cases {
            assert_eq!(
                resolve(cwd, Path::new(input)),
                PathBuf::from(want),
                "{input}"
            );
        }
    }
}
