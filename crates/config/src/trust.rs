//! Trusted folders: `[projects."/abs/path"] trust_level = "trusted"` in the user config.
//!
//! A project's own `.openinterpreter/config.toml` can raise the sandbox, add MCP servers that
//! run unconfined, or change the model endpoint. A file like that may have been written by
//! anything that could write to the folder (a cloned repository, a sandboxed command), so it is
//! honoured only in folders the user trusted in *their* config. Trust of a folder covers every
//! folder beneath it; the most specific entry wins, so a subfolder can be marked
//! `trust_level = "untrusted"` inside a trusted parent.
//!
//! Only the user layer is consulted: a project file cannot trust itself, and `-c` cannot either.

use crate::ConfigError;
use crate::schema::{ProjectToml, TrustLevel};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, Table};

/// `trust_level` values.
const TRUSTED: &str = "trusted";
const UNTRUSTED: &str = "untrusted";

/// The decision for one folder: the most specific `[projects]` entry at or above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Covered by a `trusted` entry for this path.
    Trusted(PathBuf),
    /// Covered by an `untrusted` entry for this path.
    Untrusted(PathBuf),
    /// No entry covers the folder.
    Unknown,
}

impl Trust {
    /// Whether project config in the folder is honoured.
    pub fn is_trusted(&self) -> bool {
        matches!(self, Trust::Trusted(_))
    }
}

/// Canonical form of a configured or given path, for comparisons: symlinks resolved when the
/// path exists, kept as written otherwise (a project folder that was moved simply stops matching).
fn normalize(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Decide trust for `dir` from the user config table (`[projects]`).
pub fn trust_of(user: &toml::Table, dir: &Path) -> Trust {
    let dir = normalize(dir);
    let Some(projects) = user.get("projects").and_then(|p| p.as_table()) else {
        return Trust::Unknown;
    };
    let mut best: Option<(usize, Trust)> = None;
    for (key, entry) in projects {
        let path = PathBuf::from(key);
        if !path.is_absolute() {
            continue;
        }
        let path = normalize(&path);
        if !dir.starts_with(&path) {
            continue;
        }
        // An entry that does not read as a `ProjectToml` trusts nothing (fail closed); the
        // loader reports it as an error naming the key.
        let level = crate::schema::Table::<ProjectToml>::deserialize(entry.clone())
            .ok()
            .and_then(|p| p.0.trust_level);
        let decision = match level {
            Some(TrustLevel::Trusted) => Trust::Trusted(path.clone()),
            Some(TrustLevel::Untrusted) => Trust::Untrusted(path.clone()),
            None => continue,
        };
        let depth = path.components().count();
        if best.as_ref().is_none_or(|(d, _)| depth > *d) {
            best = Some((depth, decision));
        }
    }
    best.map(|(_, t)| t).unwrap_or(Trust::Unknown)
}

/// Split the found project config into (honoured, skipped): it is honoured only when the folder
/// that holds its `.openinterpreter/` is trusted in the user config.
pub(crate) fn gate_project_config(
    found: Option<PathBuf>,
    user: &toml::Table,
) -> (Option<PathBuf>, Option<PathBuf>) {
    match found {
        Some(p) if trust_of(user, &project_dir_of(&p)).is_trusted() => (Some(p), None),
        Some(p) => (None, Some(p)),
        None => (None, None),
    }
}

/// `/x/.openinterpreter/config.toml` → `/x`.
fn project_dir_of(config: &Path) -> PathBuf {
    config
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| config.to_path_buf())
}

/// The one line a front end shows when it skips an untrusted project config.
pub(crate) fn untrusted_notice(config: &Path) -> String {
    let dir = project_dir_of(config);
    format!(
        "ignoring project config {} because {} is not a trusted folder; if you trust its contents, run `interpreter trust {}`",
        config.display(),
        dir.display(),
        dir.display()
    )
}

/// The folder `interpreter trust` acts on when none is given: the repository root (the nearest
/// folder at or above `cwd` that holds a `.git`), else `cwd` itself.
pub fn default_trust_dir(cwd: &Path) -> PathBuf {
    let cwd = normalize(cwd);
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or(cwd)
}

/// What [`set_trust`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustChange {
    /// `dir` now has `trust_level = "trusted"`.
    Trusted,
    /// `dir`'s entry was removed; nothing above it is trusted.
    Removed,
    /// `dir` sits inside the trusted folder given here, so it was marked `untrusted`
    /// (removing its own entry alone would leave it trusted).
    MarkedUntrusted(PathBuf),
}

/// Trust (or stop trusting) `dir` in the user config `config_path`, editing the file in place:
/// comments, order and formatting of everything else survive, and the new file replaces the old
/// one atomically (a crash leaves either the old or the new file, never half of one).
pub fn set_trust(
    config_path: &Path,
    dir: &Path,
    trusted: bool,
) -> Result<TrustChange, ConfigError> {
    let dir = normalize(dir);
    if !dir.is_dir() {
        return Err(ConfigError::Other(format!(
            "{} is not a directory; pass the project folder to trust",
            dir.display()
        )));
    }
    let key = dir.to_str().ok_or_else(|| {
        ConfigError::Other(format!(
            "{} is not valid UTF-8 and cannot be written to config.toml",
            dir.display()
        ))
    })?;
    crate::edit::update_text(
        config_path,
        |source| ConfigError::Other(format!("cannot update {}: {source}", config_path.display())),
        |text| {
            let mut doc: DocumentMut =
                text.parse()
                    .map_err(|e: toml_edit::TomlError| ConfigError::Parse {
                        path: config_path.to_path_buf(),
                        message: e.to_string().trim().replace('\n', " "),
                    })?;
            let projects = doc
                .entry("projects")
                .or_insert_with(|| {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    Item::Table(t)
                })
                .as_table_mut()
                .ok_or_else(|| ConfigError::Invalid {
                    origin: config_path.display().to_string(),
                    key: "projects".into(),
                    message: "expected a table of `[projects.\"/abs/path\"]` entries".into(),
                })?;

            let change = if trusted {
                set_level(projects, key, TRUSTED);
                TrustChange::Trusted
            } else {
                projects.remove(key);
                // Anything still trusting `dir` after its own entry is gone is a parent's entry.
                let plain: toml::Table = doc.to_string().parse().unwrap_or_default();
                match trust_of(&plain, &dir) {
                    Trust::Trusted(parent) => {
                        if let Some(projects) = doc.get_mut("projects").and_then(Item::as_table_mut)
                        {
                            set_level(projects, key, UNTRUSTED);
                        }
                        TrustChange::MarkedUntrusted(parent)
                    }
                    _ => TrustChange::Removed,
                }
            };
            Ok((Some(doc.to_string()), change))
        },
    )
}

fn set_level(projects: &mut Table, key: &str, level: &str) {
    let mut entry = Table::new();
    entry.insert("trust_level", toml_edit::value(level));
    projects.insert(key, Item::Table(entry));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn parent_trust_covers_children_and_the_most_specific_entry_wins() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let r = root.display();
        let t = table(&format!("[projects.\"{r}\"]\ntrust_level = \"trusted\"\n"));
        assert_eq!(trust_of(&t, &sub), Trust::Trusted(root.clone()));
        assert_eq!(trust_of(&t, &root), Trust::Trusted(root.clone()));
        assert_eq!(trust_of(&t, Path::new("/")), Trust::Unknown);
        let t = table(&format!(
            "[projects.\"{r}\"]\ntrust_level = \"trusted\"\n[projects.\"{r}/a\"]\ntrust_level = \"untrusted\"\n"
        ));
        assert_eq!(trust_of(&t, &sub), Trust::Untrusted(root.join("a")));
        assert!(trust_of(&t, &root).is_trusted());
        // A sibling whose name merely starts with the trusted path is not covered.
        let sibling = PathBuf::from(format!("{r}-other"));
        assert_eq!(trust_of(&t, &sibling), Trust::Unknown);
        // Relative keys and unknown levels grant nothing.
        let t = table(
            "[projects.\"rel\"]\ntrust_level = \"trusted\"\n[projects.\"/\"]\ntrust_level = \"yes\"\n",
        );
        assert_eq!(trust_of(&t, &sub), Trust::Unknown);
    }

    #[test]
    fn trust_and_untrust_edit_the_file_preserving_the_rest() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config.toml");
        let original =
            "# my settings\nmodel = \"qwen\" # inline note\n\n[profiles.fast]\nmodel = \"small\"\n";
        std::fs::write(&path, original).unwrap();
        let project = tempfile::tempdir().unwrap();
        let project = project.path().canonicalize().unwrap();
        assert_eq!(
            set_trust(&path, &project, true).unwrap(),
            TrustChange::Trusted
        );
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with(original.trim_end()), "{after}");
        assert!(trust_of(&table(&after), &project).is_trusted(), "{after}");

        let child = project.join("child");
        std::fs::create_dir(&child).unwrap();
        assert_eq!(
            set_trust(&path, &child, false).unwrap(),
            TrustChange::MarkedUntrusted(project.clone())
        );
        let after = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            trust_of(&table(&after), &child),
            Trust::Untrusted(child.clone())
        );
        assert!(trust_of(&table(&after), &project).is_trusted());

        assert_eq!(
            set_trust(&path, &project, false).unwrap(),
            TrustChange::Removed
        );
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(!trust_of(&table(&after), &project).is_trusted(), "{after}");
        assert!(after.contains("# my settings"), "{after}");
    }

    #[test]
    fn bad_input_is_a_clear_error() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("config.toml");
        let err = set_trust(&path, &home.path().join("missing"), true).unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
        std::fs::write(&path, "projects = 3\n").unwrap();
        let err = set_trust(&path, home.path(), true).unwrap_err();
        assert!(err.to_string().contains("projects"), "{err}");
        std::fs::write(&path, "model = \n").unwrap();
        let err = set_trust(&path, home.path(), true).unwrap_err();
        assert!(err.to_string().contains("invalid TOML"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \n");
    }

    #[test]
    fn default_dir_is_the_repository_root() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let deep = root.join("src/x");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(default_trust_dir(&deep), deep);
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(default_trust_dir(&deep), root);
    }
}

#[cfg(test)]
mod raw_path_tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// Trust entries are compared by the path's bytes: an entry written with the displayed
    /// form of a non-UTF-8 name trusts only a folder literally named so, and `trust` refuses a
    /// folder whose name cannot be written to config.toml as it is.
    #[test]
    fn trust_is_keyed_by_the_exact_path() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let ff = root.join(std::ffi::OsStr::from_bytes(b"u\xff"));
        std::fs::create_dir(&ff).unwrap();
        let shown = ff.display().to_string();
        let t: toml::Table = format!("[projects.{shown:?}]\ntrust_level = \"trusted\"\n")
            .parse()
            .unwrap();
        assert_eq!(trust_of(&t, &ff), Trust::Unknown);
        let home = tempfile::tempdir().unwrap();
        let err = set_trust(&home.path().join("config.toml"), &ff, true).unwrap_err();
        assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    }
}
