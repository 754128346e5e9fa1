//! The rest of a file a task changes must survive the change.
//!
//! A task that names a change to a file (replace a word, append a line, delete some lines,
//! set a value) says nothing about the file's other lines, and a correct solution keeps them.
//! The 1.5B model on the real tier answered "replace apple with banana in notes.txt" with
//! `echo "banana" > notes.txt`: the word was gone and the new one there, so every check of
//! the task's words passed, and the user's file was lost (a false success). So the files
//! such a task names are read when the turn starts (bounded), and once the model answers,
//! each line the task's words do not touch must still be there, and a line holding a
//! replaced word must be there with the word replaced.

use super::Expectation;
use super::verify::{contains_word, find, read};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Files read when a turn starts, at most this many...
const MAX_FILES: usize = 4;
/// ...and of at most this size each (a larger file is not kept, and not checked).
const MAX_FILE_BYTES: u64 = 32 * 1024;
/// Lines quoted in one problem.
const QUOTED_LINES: usize = 3;

/// Words that leave a file's lines open to any change: the task does not say which lines
/// ("fix the bug in calc.py and add a test").
const OPEN_VERBS: &[&str] = &[
    "fix",
    "implement",
    "refactor",
    "rewrite",
    "improve",
    "clean",
    "format",
    "reformat",
    "sort",
    "convert",
    "translate",
    "reorganize",
    "restructure",
    "complete",
];

/// Words of a change the checks may not understand: a file whose change they name without
/// a word that says which lines (`Replaced`, `Sets`, `Lacks`) is not checked.
const VAGUE_CHANGES: &[&str] = &[
    "replace",
    "change",
    "modify",
    "edit",
    "update",
    "rename",
    "swap",
    "substitute",
    "set",
    "correct",
];

/// The files a turn's request names a change to, as they were when the turn started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FilesBefore {
    /// The request they were read for (a steered turn's new request is not checked
    /// against files read for another).
    request: String,
    /// Path as the request names it, and content.
    files: Vec<(String, String)>,
    /// The one code file the request names (`shown_code::code_file`) and its content, when
    /// it is not among `files`: what the model's shown code is compared with.
    #[serde(default)]
    code: Option<(String, String)>,
    /// The test files a request says must pass while it names another file to change
    /// ("fix the typo in greet.py so that test_greet.py passes"), and their content: the
    /// test is what the change must satisfy, so the turn must leave it as it was.
    #[serde(default)]
    tests: Vec<(String, String)>,
}

impl FilesBefore {
    /// Reads the files `request` names a change to, under `cwd`, with bounds. Reads the
    /// disk: call it off the async workers.
    pub(crate) fn take(request: &str, cwd: &Path) -> Self {
        let mut files: Vec<(String, String)> = Vec::new();
        if !leaves_lines_open(request) {
            let expected = super::expectations(request);
            let vague = has_word(request, VAGUE_CHANGES);
            for path in changed_paths(&expected) {
                if vague && !says_which_lines(&path, &expected) {
                    continue;
                }
                if files.len() == MAX_FILES {
                    break;
                }
                if let Some(content) = read_small(cwd, &path) {
                    files.push((path, content));
                }
            }
        }
        let code = crate::answer_check::code_file(request)
            .filter(|path| !files.iter().any(|(p, _)| p == path))
            .and_then(|path| read_small(cwd, &path).map(|c| (path, c)));
        let tests = if code.is_some() || !files.is_empty() {
            passing_test_files(request)
                .into_iter()
                .filter(|t| !files.iter().any(|(p, _)| p == t))
                .filter_map(|t| read_small(cwd, &t).map(|c| (t, c)))
                .collect()
        } else {
            Vec::new()
        };
        Self {
            request: request.to_string(),
            files,
            code,
            tests,
        }
    }

    /// `path` as it was when the turn started, if it was read then.
    pub(crate) fn content_of(&self, path: &str) -> Option<&str> {
        self.files
            .iter()
            .chain(self.code.iter())
            .find(|(p, _)| p == path)
            .map(|(_, c)| c.as_str())
    }

    /// The test files the request says must pass as they are that are not so now, with
    /// their paths under `cwd` and the content they had (reads the disk).
    pub(crate) fn changed_tests(&self, cwd: &Path) -> Vec<(std::path::PathBuf, String)> {
        self.tests
            .iter()
            .filter_map(|(test, old)| {
                let path = find(cwd, test);
                let now = path.as_ref().and_then(|p| read(p));
                (now.as_ref() != Some(old))
                    .then(|| (path.unwrap_or_else(|| cwd.join(test)), old.clone()))
            })
            .collect()
    }

    /// Whether these are the files read for `request`.
    pub(crate) fn is_for(&self, request: &str) -> bool {
        self.request == request && !request.is_empty()
    }

    /// What the turn lost of the files it changed, one phrase per file, for `request`'s
    /// `expectations`, reading `cwd` now.
    pub(crate) fn lost(
        &self,
        request: &str,
        expectations: &[Expectation],
        cwd: &Path,
    ) -> Vec<String> {
        if self.request != request {
            return Vec::new();
        }
        let mut out = Vec::new();
        let target = self
            .code
            .as_ref()
            .map(|(p, _)| p.as_str())
            .or_else(|| self.files.first().map(|(p, _)| p.as_str()))
            .unwrap_or("the file the request names");
        for (test, old) in &self.tests {
            let now = find(cwd, test).and_then(|p| read(&p));
            if now.as_ref() != Some(old) {
                out.push(format!(
                    "`{test}` was changed, but the request asks for it to pass as it is, not to be changed: put it back as it was and change `{target}` instead"
                ));
            }
        }
        for (path, old) in &self.files {
            let Some(new) = find(cwd, path).and_then(|p| read(&p)) else {
                // Gone: the task's own checks say so (it holds nothing now).
                continue;
            };
            if &new == old {
                continue;
            }
            if let Some(problem) = broken_format(path, old, &new) {
                out.push(problem);
            }
            out.extend(added_more_than_once(path, old, &new, expectations));
            if let Some(problem) = lost_lines(path, old, &new, expectations) {
                out.push(problem);
            }
        }
        out
    }
}

/// `path` as the request names it, under `cwd`, when it is a file of at most
/// [`MAX_FILE_BYTES`].
fn read_small(cwd: &Path, path: &str) -> Option<String> {
    let p = find(cwd, path)?;
    let small = p
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE_BYTES);
    small.then(|| read(&p)).flatten()
}

/// The test files among the tests `request` says must pass (`test_greet.py`, not a
/// command such as `make test`), unless the request also names one as a file to change
/// ("fix greet.py and test_greet.py so that test_greet.py passes": named twice).
fn passing_test_files(request: &str) -> Vec<String> {
    super::expectations(request)
        .into_iter()
        .filter_map(|e| match e {
            Expectation::Passes { test } if super::looks_like_path(&test) => Some(test),
            _ => None,
        })
        .filter(|test| request.matches(test.as_str()).count() == 1)
        .collect()
}

/// A line the task adds that the turn added more than once, one phrase each. Recorded on
/// the real tier: `echo 'walk the dog' >> todo.txt` called three times for "add a line
/// 'walk the dog'", so the line was there (three times) and the run claimed success.
fn added_more_than_once(
    path: &str,
    old: &str,
    new: &str,
    expectations: &[Expectation],
) -> Vec<String> {
    let count = |text: &str, line: &str| text.lines().filter(|l| l.trim() == line).count();
    expectations
        .iter()
        .filter_map(|e| match e {
            Expectation::HoldsLine { path: p, text } if p == path => {
                let line = text.trim();
                let (before, after) = (count(old, line), count(new, line));
                (after > before + 1).then(|| {
                    format!(
                        "`{path}` has the line `{line}` {after} times, and the task adds it once: remove the extra copies (it was there {before} times before)"
                    )
                })
            }
            _ => None,
        })
        .collect()
}

/// A TOML or JSON file that parsed before the turn and does not now, as one phrase. Recorded
/// on the real tier: "change the server port to 8080" answered by adding `port = 8080`
/// under `port = 8000`, so the line asked for was there, every old line kept, and the
/// config no longer loads (a duplicate key) — a false success.
fn broken_format(path: &str, old: &str, new: &str) -> Option<String> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    // Each parser gives its complaint about the text, or `None` when it parses.
    let (format, complaint): (&str, fn(&str) -> Option<String>) = match ext.as_str() {
        "toml" => ("TOML", |t| {
            t.parse::<toml::Table>()
                .err()
                .map(|e| e.message().to_string())
        }),
        "json" => ("JSON", |t| {
            serde_json::from_str::<serde_json::Value>(t)
                .err()
                .map(|e| e.to_string())
        }),
        _ => return None,
    };
    // A file that did not parse before is not the turn's doing.
    if complaint(old).is_some() {
        return None;
    }
    let why = complaint(new)?;
    Some(format!(
        "`{path}` is no longer valid {format} ({why}): change the existing line in place rather than adding another, and keep the file valid"
    ))
}

/// Whether the request leaves a file's lines open to any change.
fn leaves_lines_open(request: &str) -> bool {
    has_word(request, OPEN_VERBS)
}

fn has_word(request: &str, words: &[&str]) -> bool {
    request
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| words.contains(&w.to_ascii_lowercase().as_str()))
}

/// Whether an expectation on `path` says which of its lines change.
fn says_which_lines(path: &str, expectations: &[Expectation]) -> bool {
    expectations.iter().any(|e| match e {
        Expectation::Lacks { path: p, .. }
        | Expectation::Sets { path: p, .. }
        | Expectation::Replaced { path: p, .. } => p == path,
        _ => false,
    })
}

/// The paths of expectations that change an existing file's lines.
fn changed_paths(expectations: &[Expectation]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for e in expectations {
        let path = match e {
            Expectation::Holds { path, .. }
            | Expectation::HoldsLine { path, .. }
            | Expectation::Lacks { path, .. }
            | Expectation::Sets { path, .. }
            | Expectation::Replaced { path, .. } => path,
            _ => continue,
        };
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
    paths
}

/// The lines of `old` that `new` should still hold and does not, as one phrase.
fn lost_lines(path: &str, old: &str, new: &str, expectations: &[Expectation]) -> Option<String> {
    let on_path = |p: &String| p == path;
    let mut free: Vec<&str> = Vec::new();
    let mut replaced: Vec<(&str, &str, bool)> = Vec::new();
    for e in expectations {
        match e {
            Expectation::Lacks { path: p, text } if on_path(p) => free.push(text),
            Expectation::Sets {
                path: p,
                keys,
                value,
            } if on_path(p) => {
                free.extend(keys.iter().map(String::as_str));
                free.push(value);
            }
            Expectation::Replaced {
                path: p,
                old,
                new,
                every,
            } if on_path(p) => replaced.push((old, new, *every)),
            _ => {}
        }
    }
    // An exact set of the new file's lines, compared trimmed (indentation and line ends
    // may change with the tool that wrote them).
    let new_lines: std::collections::HashSet<&str> = new.lines().map(str::trim).collect();
    let mut missing: Vec<String> = Vec::new();
    for line in old.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // Still there as it was (whether a word in it should have gone, `Lacks` says).
        if new_lines.contains(line) {
            continue;
        }
        if let Some((o, n, every)) = replaced.iter().find(|(o, _, _)| line.contains(o)) {
            let all = line.replace(o, n);
            let first = line.replacen(o, n, 1);
            let kept =
                new_lines.contains(all.trim()) || (!every && new_lines.contains(first.trim()));
            if !kept {
                missing.push(format!("`{}` (`{line}` with `{o}` replaced)", all.trim()));
            }
            continue;
        }
        if free.iter().any(|t| contains_word(line, t)) {
            continue;
        }
        missing.push(format!("`{line}`"));
    }
    if missing.is_empty() {
        return None;
    }
    let more = missing.len().saturating_sub(QUOTED_LINES);
    missing.truncate(QUOTED_LINES);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "`{path}` no longer holds lines the task did not ask to remove: {}{tail} (change only what the task names and keep the rest of the file; it was overwritten or cut, so write it back with those lines)",
        missing.join(", ")
    ))
}

#[cfg(test)]
mod tests;
