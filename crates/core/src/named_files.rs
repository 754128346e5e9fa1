//! The files a request names, given to the model with the request. Small models rarely read
//! a file before they change it: they guess its lines and write patches that do not apply,
//! or answer a value they never looked at (measured on Qwen2.5-Coder-1.5B, docs/real-models.md).
//! When the request names files that are in the working directory, small and text, their
//! content joins the turn as a note right after the request, so the model starts from what
//! is there. The note is part of the turn's history: it is written once, and later requests
//! of the thread reuse it from the server's prompt cache.

use crate::session::Session;
use oi_config::project_file::{Within, read_text_capped_in};
use oi_protocol::models::{ResponseItem, Role};
use std::path::{Component, Path};

/// How the note starts; also how the answer checks recognise it (a file given here counts
/// as read).
pub(crate) const TAG: &str = "<files_named_in_the_request>";
/// At most this many files, of at most this many bytes each, are given.
const MAX_FILES: usize = 3;
const MAX_FILE_BYTES: u64 = 8 * 1024;

/// Puts the note for the request of the turn about to start right after it, in the input
/// the turn takes into its history.
pub(crate) async fn attach(sess: &Session) {
    let is_request = |i: &ResponseItem| {
        matches!(
            i,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    };
    let (request, cwd, home) = {
        let st = sess.state();
        let Some(turn) = st.active_turn.as_ref() else {
            return;
        };
        let request = turn
            .pending_input
            .iter()
            .find(|i| is_request(i))
            .and_then(ResponseItem::message_text);
        (request, st.config.cwd.clone(), st.config.home.clone())
    };
    let Some(request) = request else {
        return;
    };
    let Some(note) = tokio::task::spawn_blocking(move || note(&request, &cwd, &home))
        .await
        .ok()
        .flatten()
    else {
        return;
    };
    let mut st = sess.state();
    if let Some(turn) = st.active_turn.as_mut()
        && let Some(at) = turn.pending_input.iter().position(is_request)
    {
        turn.pending_input
            .insert(at + 1, ResponseItem::developer_text(note));
    }
}

/// The note for `request`: the content of each file it names that is a regular UTF-8 file
/// of at most [`MAX_FILE_BYTES`] really inside `cwd` (not through a symlink out of it, not
/// in `home`, the agent's own folder). `None` when there is none. Reads the disk.
pub(crate) fn note(request: &str, cwd: &Path, home: &Path) -> Option<String> {
    let within = Within {
        root: cwd,
        excluded: Some(home),
    };
    let mut given: Vec<String> = Vec::new();
    let mut body = String::new();
    for name in crate::answer_check::paths_named(request) {
        if given.len() >= MAX_FILES || given.contains(&name) {
            continue;
        }
        let rel = Path::new(&name);
        // Only plain relative paths below the working directory.
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            continue;
        }
        let Ok(text) = read_text_capped_in(&cwd.join(rel), MAX_FILE_BYTES, Some(&within)) else {
            continue;
        };
        let text = if text.ends_with('\n') || text.is_empty() {
            text
        } else {
            format!("{text}\n")
        };
        body.push_str(&format!("<file path=\"{name}\">\n{text}</file>\n"));
        given.push(name);
    }
    (!given.is_empty()).then(|| {
        format!(
            "{TAG}\nThe files the task names, as they are now (no need to read them again):\n{body}</files_named_in_the_request>"
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn named_small_text_files_inside_the_folder_are_given_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        let home = dir.path().join("home");
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(cwd.join("todo.txt"), "buy milk\n").unwrap();
        std::fs::write(cwd.join("src/a.py"), "x = 1").unwrap();
        std::fs::write(cwd.join("big.txt"), "x".repeat(20_000)).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "token\n").unwrap();
        std::fs::write(home.join("auth.json"), "{}").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), cwd.join("link.txt")).unwrap();
        let note = note(
            "Add a line to todo.txt, src/a.py, big.txt, ../secret.txt, link.txt, missing.txt",
            &cwd,
            &home,
        )
        .unwrap();
        assert_eq!(
            note,
            "<files_named_in_the_request>\nThe files the task names, as they are now (no need to read them again):\n<file path=\"todo.txt\">\nbuy milk\n</file>\n<file path=\"src/a.py\">\nx = 1\n</file>\n</files_named_in_the_request>"
        );
        assert!(super::note("Create hello.txt containing hi", &cwd, &home).is_none());
    }
}
