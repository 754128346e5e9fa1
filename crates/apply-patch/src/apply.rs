//! Writing a [`PatchPlan`] to disk, all-or-nothing as far as the filesystem allows:
//! 1. check that every file still has the content the plan was computed from;
//! 2. write each file's final content to a temp file in the same directory (creating missing
//!    parent directories) — on any failure remove the temps and new directories and stop;
//! 3. rename the temps over their targets; 4. remove deleted files and move sources.
//!
//! Only a failure in steps 3–4 (rare: same-directory renames and unlinks) can leave a partial
//! result, and the error then says exactly what was done. Symlinks at target paths are replaced,
//! not followed, so nothing is written outside [`PatchPlan::affected_paths`].

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::ApplyError;
use crate::plan::{PatchPlan, PlannedKind, read_disk};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl PatchPlan {
    /// Write every change. Returns the summary for the model, e.g.
    /// `"Success. Updated the following files:\nA new.txt\nM src/lib.rs\nD old.txt\n"`.
    pub fn apply(&self) -> Result<String, ApplyError> {
        self.check_unchanged()?;
        let finals = self.final_states();

        let mut staging = Staging::default();
        for (path, content) in &finals {
            if let Some(content) = content
                && let Err(e) = staging.stage(path, content)
            {
                staging.abort();
                return Err(e);
            }
        }

        let mut done: Vec<String> = Vec::new();
        let temps = std::mem::take(&mut staging.temps);
        let mut pending = temps.into_iter();
        while let Some((tmp, target)) = pending.next() {
            if let Err(source) = fs::rename(&tmp, &target) {
                let _ = fs::remove_file(&tmp);
                for (tmp, _) in pending {
                    let _ = fs::remove_file(&tmp);
                }
                return Err(self.partial(&done, "write", &target, &source));
            }
            done.push(format!("wrote {}", self.display_path(&target)));
        }

        for (path, content) in &finals {
            if content.is_some() {
                continue;
            }
            match fs::remove_file(path) {
                Ok(()) => done.push(format!("removed {}", self.display_path(path))),
                // Added then deleted within the same patch: nothing on disk.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(self.partial(&done, "remove", path, &source)),
            }
        }
        Ok(self.summary())
    }

    fn partial(&self, done: &[String], op: &str, path: &Path, source: &io::Error) -> ApplyError {
        let done = if done.is_empty() {
            "nothing".to_string()
        } else {
            done.join(", ")
        };
        ApplyError::PartiallyApplied {
            detail: format!(
                "failed to {op} {}: {source}. Already done: {done}. Re-read the affected files \
                 before sending another patch.",
                self.display_path(path)
            ),
        }
    }

    /// Refuse to write if a file changed between planning and applying (e.g. while waiting
    /// for approval), since the planned content would silently discard that change.
    fn check_unchanged(&self) -> Result<(), ApplyError> {
        let mut seen: HashSet<&Path> = HashSet::new();
        for change in &self.changes {
            let path = change.path.as_path();
            if seen.insert(path) {
                let expected = match &change.kind {
                    PlannedKind::Add { .. } => None,
                    PlannedKind::Delete { old_content }
                    | PlannedKind::Update { old_content, .. } => Some(old_content),
                };
                let shown = self.display_path(path);
                if read_disk(path, &shown)?.as_ref() != expected {
                    return Err(ApplyError::ChangedOnDisk { path: shown });
                }
            }
            if let PlannedKind::Update {
                move_to: Some(dest),
                ..
            } = &change.kind
            {
                // A move destination's earlier content is replaced wholesale, not edited.
                seen.insert(dest.as_path());
            }
        }
        Ok(())
    }

    /// Final content of every touched path (`None` = must not exist afterwards): what a
    /// caller that writes through another channel (an editor's buffers) writes or removes.
    pub fn final_states(&self) -> BTreeMap<PathBuf, Option<&str>> {
        let mut finals = BTreeMap::new();
        for change in &self.changes {
            match &change.kind {
                PlannedKind::Add { content } => {
                    finals.insert(change.path.clone(), Some(content.as_str()));
                }
                PlannedKind::Delete { .. } => {
                    finals.insert(change.path.clone(), None);
                }
                PlannedKind::Update {
                    new_content,
                    move_to,
                    ..
                } => match move_to {
                    Some(dest) => {
                        finals.insert(change.path.clone(), None);
                        finals.insert(dest.clone(), Some(new_content.as_str()));
                    }
                    None => {
                        finals.insert(change.path.clone(), Some(new_content.as_str()));
                    }
                },
            }
        }
        finals
    }

    /// The success summary [`PatchPlan::apply`] returns, for callers that write the plan
    /// through another channel.
    pub fn summary(&self) -> String {
        let mut out = String::from("Success. Updated the following files:\n");
        for change in &self.changes {
            let (letter, path) = match &change.kind {
                PlannedKind::Add { .. } => ('A', &change.path),
                PlannedKind::Delete { .. } => ('D', &change.path),
                PlannedKind::Update { move_to, .. } => {
                    ('M', move_to.as_ref().unwrap_or(&change.path))
                }
            };
            out.push_str(&format!("{letter} {}\n", self.display_path(path)));
        }
        out
    }
}

/// Temp files and directories created so far, so a failure can undo them.
#[derive(Default)]
struct Staging {
    /// (temp file, final target)
    temps: Vec<(PathBuf, PathBuf)>,
    created_dirs: Vec<PathBuf>,
}

impl Staging {
    fn stage(&mut self, target: &Path, content: &str) -> Result<(), ApplyError> {
        let parent = target.parent().ok_or_else(|| ApplyError::NotAFile {
            path: target.display().to_string(),
        })?;
        self.create_dirs(parent)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let (tmp, mut file) = create_temp(parent, &name)?;
        self.temps.push((tmp.clone(), target.to_path_buf()));
        let io_err = |source| ApplyError::Io {
            op: "write",
            path: tmp.clone(),
            source,
        };
        file.write_all(content.as_bytes()).map_err(io_err)?;
        file.sync_data().map_err(io_err)?;
        // Keep an existing file's mode (e.g. the executable bit); new files get the umask default.
        if let Ok(meta) = fs::metadata(target) {
            fs::set_permissions(&tmp, meta.permissions()).map_err(io_err)?;
        }
        Ok(())
    }

    fn create_dirs(&mut self, dir: &Path) -> Result<(), ApplyError> {
        let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
        for d in missing.into_iter().rev() {
            match fs::create_dir(d) {
                Ok(()) => self.created_dirs.push(d.to_path_buf()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(source) => {
                    return Err(ApplyError::Io {
                        op: "create directory",
                        path: d.to_path_buf(),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    fn abort(&mut self) {
        for (tmp, _) in self.temps.drain(..) {
            let _ = fs::remove_file(tmp);
        }
        for dir in self.created_dirs.drain(..).rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, fs::File), ApplyError> {
    // Keep the temp name within the usual 255-byte limit even for long target names.
    let mut cut = name.len().min(64);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let name = &name[..cut];
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.oi-patch.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(ApplyError::Io {
                    op: "create a temp file in",
                    path: dir.to_path_buf(),
                    source,
                });
            }
        }
    }
}
