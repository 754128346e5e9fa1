//! `/undo`: reverts a patch the engine applied, from the changes its `patch_apply_end`
//! event carried. Every file is checked before any is written: a file that changed since
//! the patch (its content is no longer what the patch left) makes the whole undo refuse,
//! naming the file, so nothing is half reverted.

use oi_protocol::protocol::FileChange;
use std::path::{Path, PathBuf};

/// Why `/undo` changed nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UndoError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} changed since the patch; revert it by hand", .0.display())]
    Changed(PathBuf),
    /// A file the patch added is no longer there.
    #[error("{} is gone already", .0.display())]
    AddedGone(PathBuf),
    /// A file the patch deleted was created again.
    #[error("{} exists again", .0.display())]
    DeletedExists(PathBuf),
    /// A file the patch updated is no longer there.
    #[error("{} is gone", .0.display())]
    UpdatedGone(PathBuf),
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The blocking task the undo ran on panicked or was cancelled.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

/// One file's way back.
enum Step {
    Remove(PathBuf),
    Write(PathBuf, String),
    /// Write the old content at the old path and remove the moved file.
    MoveBack {
        from: PathBuf,
        to: PathBuf,
        content: String,
    },
}

/// Reverts `changes` (paths relative to `cwd` when not absolute). Returns the files put
/// back, or why nothing was changed.
pub(crate) fn revert(
    changes: &[(PathBuf, FileChange)],
    cwd: &Path,
) -> Result<Vec<String>, UndoError> {
    let abs = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    let read = |p: &Path| match std::fs::read_to_string(p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UndoError::Read {
            path: p.to_path_buf(),
            source,
        }),
    };
    let changed = |p: &Path| UndoError::Changed(p.to_path_buf());
    let mut steps = Vec::new();
    for (path, change) in changes {
        let path = abs(path);
        match change {
            FileChange::Add { content } => match read(&path)? {
                Some(now) if now == *content => steps.push(Step::Remove(path)),
                Some(_) => return Err(changed(&path)),
                None => return Err(UndoError::AddedGone(path)),
            },
            FileChange::Delete { content } => match read(&path)? {
                None => steps.push(Step::Write(path, content.clone())),
                Some(_) => return Err(UndoError::DeletedExists(path)),
            },
            FileChange::Update {
                unified_diff,
                move_path,
            } => {
                let at = move_path
                    .as_deref()
                    .map(abs)
                    .unwrap_or_else(|| path.clone());
                let Some(now) = read(&at)? else {
                    return Err(UndoError::UpdatedGone(at));
                };
                let before = reverse_apply(&now, unified_diff).ok_or_else(|| changed(&at))?;
                if at == path {
                    steps.push(Step::Write(path, before));
                } else {
                    steps.push(Step::MoveBack {
                        from: at,
                        to: path,
                        content: before,
                    });
                }
            }
        }
    }
    let mut done = Vec::new();
    for step in steps {
        let failed = |p: &Path, source: std::io::Error| UndoError::Write {
            path: p.to_path_buf(),
            source,
        };
        match step {
            Step::Remove(p) => std::fs::remove_file(&p).map_err(|e| failed(&p, e))?,
            Step::Write(p, content) => {
                if let Some(dir) = p.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
                }
                std::fs::write(&p, content).map_err(|e| failed(&p, e))?;
                done.push(p.display().to_string());
                continue;
            }
            Step::MoveBack { from, to, content } => {
                std::fs::write(&to, content).map_err(|e| failed(&to, e))?;
                std::fs::remove_file(&from).map_err(|e| failed(&from, e))?;
                done.push(to.display().to_string());
                continue;
            }
        }
    }
    // Removed files are named too.
    for (path, change) in changes {
        if matches!(change, FileChange::Add { .. }) {
            done.push(format!("{} (removed)", abs(path).display()));
        }
    }
    Ok(done)
}

/// One line of a hunk: its kind (' ', '-', '+'), text, and whether it ends the file
/// without a newline.
struct HunkLine {
    kind: char,
    text: String,
    no_newline: bool,
}

struct Hunk {
    /// 1-based first line of the new side (the line before it when the side is empty).
    new_start: usize,
    new_len: usize,
    lines: Vec<HunkLine>,
}

fn parse_hunks(diff: &str) -> Option<Vec<Hunk>> {
    let mut hunks: Vec<Hunk> = Vec::new();
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("@@ ") {
            let new = rest.split_whitespace().find(|p| p.starts_with('+'))?;
            let new = &new[1..];
            let (start, len) = match new.split_once(',') {
                Some((s, l)) => (s.parse().ok()?, l.parse().ok()?),
                None => (new.parse().ok()?, 1),
            };
            hunks.push(Hunk {
                new_start: start,
                new_len: len,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(hunk) = hunks.last_mut() else {
            continue; // the `---`/`+++` header
        };
        if line.starts_with('\\') {
            if let Some(last) = hunk.lines.last_mut() {
                last.no_newline = true;
            }
            continue;
        }
        let mut chars = line.chars();
        let kind = chars.next().unwrap_or(' ');
        if !matches!(kind, ' ' | '-' | '+') {
            return None;
        }
        hunk.lines.push(HunkLine {
            kind,
            text: chars.as_str().to_string(),
            no_newline: false,
        });
    }
    Some(hunks)
}

/// The text before a patch, from the text after it and the patch's unified diff; `None`
/// when the text is not what the patch left.
pub(crate) fn reverse_apply(after: &str, diff: &str) -> Option<String> {
    let current: Vec<&str> = after.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut pos = 0usize;
    for hunk in parse_hunks(diff)? {
        let start = if hunk.new_len == 0 {
            hunk.new_start
        } else {
            hunk.new_start.checked_sub(1)?
        };
        if start < pos || start > current.len() {
            return None;
        }
        out.extend(current[pos..start].iter().copied());
        let new_side: Vec<&HunkLine> = hunk.lines.iter().filter(|l| l.kind != '-').collect();
        if new_side.len() != hunk.new_len || start + hunk.new_len > current.len() {
            return None;
        }
        for (have, want) in current[start..start + hunk.new_len].iter().zip(&new_side) {
            let ends = have.ends_with('\n');
            if have.trim_end_matches('\n') != want.text || ends == want.no_newline {
                return None;
            }
        }
        for l in hunk.lines.iter().filter(|l| l.kind != '+') {
            out.push_str(&l.text);
            if !l.no_newline {
                out.push('\n');
            }
        }
        pos = start + hunk.new_len;
    }
    out.extend(current[pos..].iter().copied());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverses_what_the_patch_planner_writes() {
        let before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
        let after = "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n";
        let diff = oi_apply_patch_like_diff(before, after);
        assert_eq!(reverse_apply(after, &diff).as_deref(), Some(before));
        // Changed since: refused.
        assert_eq!(reverse_apply("one\ntwo\nthree!\n", &diff), None);
    }

    #[test]
    fn handles_a_missing_final_newline() {
        let before = "a\nb";
        let after = "a\nc\n";
        let diff = oi_apply_patch_like_diff(before, after);
        assert_eq!(reverse_apply(after, &diff).as_deref(), Some(before));
    }

    /// A unified diff in the shape the engine reports (`similar`, 3 lines of context).
    fn oi_apply_patch_like_diff(old: &str, new: &str) -> String {
        let mut out = String::from("--- a\n+++ b\n");
        // A hand-rolled diff of one hunk covering the whole file is valid input too.
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        out.push_str(&format!(
            "@@ -1,{} +1,{} @@\n",
            old_lines.len(),
            new_lines.len()
        ));
        for l in &old_lines {
            out.push('-');
            out.push_str(l.trim_end_matches('\n'));
            out.push('\n');
            if !l.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        for l in &new_lines {
            out.push('+');
            out.push_str(l.trim_end_matches('\n'));
            out.push('\n');
            if !l.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        out
    }
}
