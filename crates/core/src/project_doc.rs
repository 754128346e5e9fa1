//! The project doc: the instructions a repository leaves for agents, found from the working
//! directory up to the repository root and read with the bounds of a file the repository
//! chooses (see `oi_config::project_file`).
//!
//! In each folder, the names tried are Codex's — `AGENTS.override.md`, then `AGENTS.md` —,
//! then `AGENT.md`, then `project_doc_fallback_filenames` in the order the config lists them
//! (`CLAUDE.md`, `QWEN.md`...). The first name present in the nearest folder that has one is
//! the doc; one file, never a mix.

use std::path::{Path, PathBuf};

/// Preferred over `AGENTS.md` in the same folder (Codex's local override, often untracked).
const OVERRIDE_NAME: &str = "AGENTS.override.md";
/// The names every session tries, in order, before the configured fallbacks.
const BUILT_IN_NAMES: &[&str] = &[OVERRIDE_NAME, "AGENTS.md", "AGENT.md"];

/// The project doc as the model is shown it: where it was found and its text, already cut to
/// `project_doc_max_bytes`.
#[derive(Clone, Debug)]
pub(crate) struct ProjectDoc {
    pub path: String,
    pub text: String,
}

/// Finds and reads the project doc on the blocking pool: it walks up the directory tree and
/// reads a file, which must not stall the runtime's worker threads. Read once per turn (see
/// `Session::load_project_doc`), not once per model request. The second value is a warning
/// when a doc was found but refused (a FIFO, a device, a link out of the project).
pub(crate) async fn read_project_doc(
    cwd: PathBuf,
    home: PathBuf,
    max_bytes: usize,
    fallbacks: Vec<String>,
) -> (Option<ProjectDoc>, Option<String>) {
    match tokio::task::spawn_blocking(move || project_doc(&cwd, &home, max_bytes, &fallbacks)).await
    {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("reading the project doc failed: {e}");
            (None, None)
        }
    }
}

/// The names tried in each folder, in order: the built-in ones, then the configured fallbacks
/// that are not already among them.
fn candidate_names(fallbacks: &[String]) -> Vec<&str> {
    let mut names: Vec<&str> = BUILT_IN_NAMES.to_vec();
    for name in fallbacks {
        if !name.is_empty() && !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    names
}

/// The nearest project doc, cut head+tail to `max_bytes` (`project_doc_max_bytes`; 0: none).
/// Read with the bounded reader: the repository decides what the name is, so a FIFO or a
/// symlink to a device is refused at once and a huge file is read only at its ends. It must
/// also really be inside the project — the repository (the folder holding `.git`) or, outside
/// one, the folder it was found in — and not inside the agent's `home`: a link to
/// `~/.openinterpreter/.credentials.json` or any file elsewhere would send that file to the
/// model. A fallback name is held to the same rules as `AGENTS.md`.
fn project_doc(
    cwd: &Path,
    home: &Path,
    max_bytes: usize,
    fallbacks: &[String],
) -> (Option<ProjectDoc>, Option<String>) {
    if max_bytes == 0 {
        return (None, None);
    }
    let names = candidate_names(fallbacks);
    let repo = cwd.ancestors().find(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        let within = oi_config::project_file::Within {
            root: repo.unwrap_or(dir),
            excluded: Some(home),
        };
        for name in &names {
            let p = dir.join(name);
            match oi_config::project_file::read_text_head_tail_in(
                &p,
                max_bytes as u64,
                Some(&within),
            ) {
                Ok(text) => {
                    return (
                        Some(ProjectDoc {
                            path: p.display().to_string(),
                            text,
                        }),
                        None,
                    );
                }
                Err(e) if e.is_not_found() => {}
                // A refused doc is replaced neither by a later name here nor by a doc further
                // up: either would show the model instructions the repository did not mean
                // for this folder.
                Err(e) => return (None, Some(format!("{name} not used: {e}"))),
            }
        }
        // Stop at the repository root: docs above it belong to someone else.
        if dir.join(".git").exists() {
            break;
        }
    }
    (None, None)
}

#[cfg(test)]
#[path = "project_doc_tests.rs"]
mod tests;
