//! The working tree as a diff: `git diff` against a base plus every untracked file as an
//! addition. One home for what the TUI's `/diff` and `/review` and the v1 `gitDiffToRemote`
//! show: front ends call [`working_tree_diff`], never `git` themselves.
//!
//! Every `git` runs as a supervised child process awaited on the runtime (no worker is
//! blocked), stopped after [`GIT_TIMEOUT`].

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// How long one git command may take before it is stopped and reported.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the working tree's diff could not be made. The messages are what front ends show
/// (the TUI's error cell, the `reason` of a failed `gitDiffToRemote`).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {0}; is git installed?")]
    Spawn(#[source] std::io::Error),
    /// Waiting for `git` failed.
    #[error("{command} failed: {source}")]
    Wait {
        /// The command, e.g. `git diff HEAD`.
        command: String,
        /// What the wait reported.
        #[source]
        source: std::io::Error,
    },
    /// `git` ran longer than [`GIT_TIMEOUT`] and was stopped.
    #[error("{command} took longer than {} s", GIT_TIMEOUT.as_secs())]
    Timeout {
        /// The command, e.g. `git diff HEAD`.
        command: String,
    },
    /// `git` exited with a failure status.
    #[error("{command} exited with {code}")]
    Exited {
        /// The command, e.g. `git diff HEAD`.
        command: String,
        /// Its exit code.
        code: i32,
    },
    /// The folder is not inside a git repository.
    #[error("{} is not inside a git repository", .0.display())]
    NotARepository(PathBuf),
    /// [`WorkingTreeBase::ClosestRemote`] in a repository without remotes.
    #[error("the repository has no remote")]
    NoRemote,
    /// [`WorkingTreeBase::ClosestRemote`]: no remote branch shares history with `HEAD`.
    #[error("no remote branch shares history with HEAD")]
    NoSharedHistory,
}

/// What [`working_tree_diff`] compares the working tree with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkingTreeBase {
    /// `HEAD` (the index in a repository without commits yet); untracked binary files are
    /// shown as "Binary files differ". What the TUI's `/diff` and `/review` show.
    Head,
    /// The closest remote commit: of the current branch's remote counterparts, each
    /// remote's default branch and the remote branches containing `HEAD`, the merge base
    /// with the fewest local commits on top. Untracked binary files in full (`--binary`),
    /// so the diff applies as a patch. What v1 `gitDiffToRemote` answers.
    ClosestRemote,
}

/// The working tree's changes against a base, untracked files included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkingTreeDiff {
    /// The commit compared with (`HEAD`, or the remote commit's sha); `None` when the
    /// repository has no commits and the index was the base.
    pub base: Option<String>,
    /// The diff, as `git diff` prints it.
    pub diff: String,
}

/// The working tree of `cwd` as a diff against `base`, untracked (not ignored) files as
/// additions.
pub async fn working_tree_diff(
    cwd: &Path,
    base: WorkingTreeBase,
) -> Result<WorkingTreeDiff, GitError> {
    match base {
        WorkingTreeBase::Head => {
            let (code, _) = git(cwd, &["rev-parse", "--show-toplevel"]).await?;
            if code != 0 {
                return Err(GitError::NotARepository(cwd.to_path_buf()));
            }
            let (has_head, _) = git(cwd, &["rev-parse", "--verify", "HEAD"]).await?;
            let (base, against) = if has_head == 0 {
                (Some("HEAD".to_string()), DiffBase::Commit("HEAD"))
            } else {
                (None, DiffBase::Index)
            };
            let diff = diff_with_untracked(cwd, against, false).await?;
            Ok(WorkingTreeDiff { base, diff })
        }
        WorkingTreeBase::ClosestRemote => {
            let (sha, diff) = diff_to_remote(cwd).await?;
            Ok(WorkingTreeDiff {
                base: Some(sha),
                diff,
            })
        }
    }
}

/// Run `git args` in `cwd`: its exit code and stdout. Never prompts, takes no optional locks
/// (a concurrent `git` of the user's is not disturbed), and is stopped after [`GIT_TIMEOUT`].
async fn git(cwd: &Path, args: &[&str]) -> Result<(i32, Vec<u8>), GitError> {
    let mut cmd = oi_process::command("git");
    cmd.args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let child = cmd.spawn().map_err(GitError::Spawn)?;
    let command = || format!("git {}", args.join(" "));
    match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => Ok((oi_process::exit_code(out.status), out.stdout)),
        Ok(Err(source)) => Err(GitError::Wait {
            command: command(),
            source,
        }),
        Err(_) => Err(GitError::Timeout { command: command() }),
    }
}

/// Trimmed stdout of a git command that must succeed.
async fn git_ok(cwd: &Path, args: &[&str]) -> Result<String, GitError> {
    match git(cwd, args).await? {
        (0, out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
        (code, _) => Err(GitError::Exited {
            command: format!("git {}", args.join(" ")),
            code,
        }),
    }
}

async fn ref_exists(cwd: &Path, r: &str) -> bool {
    matches!(
        git(cwd, &["rev-parse", "--verify", "--quiet", r]).await,
        Ok((0, _))
    )
}

/// Remote refs that could be the base: the current branch's remote counterparts, each
/// remote's default branch, and remote branches containing HEAD. `origin` first.
async fn candidate_refs(cwd: &Path) -> Result<Vec<String>, GitError> {
    let mut remotes: Vec<String> = git_ok(cwd, &["remote"])
        .await?
        .lines()
        .map(str::to_string)
        .filter(|r| !r.is_empty())
        .collect();
    if remotes.is_empty() {
        return Err(GitError::NoRemote);
    }
    remotes.sort_by_key(|r| (r != "origin", r.clone()));
    let mut refs = Vec::new();
    let branch = git_ok(cwd, &["rev-parse", "--abbrev-ref", "HEAD"])
        .await
        .ok()
        .filter(|b| b != "HEAD");
    for r in &remotes {
        if let Some(b) = &branch {
            let candidate = format!("refs/remotes/{r}/{b}");
            if ref_exists(cwd, &candidate).await {
                refs.push(candidate);
            }
        }
        let head = format!("refs/remotes/{r}/HEAD");
        match git_ok(cwd, &["symbolic-ref", "--quiet", &head]).await {
            Ok(default) if !default.is_empty() => refs.push(default),
            _ => {
                for name in ["main", "master"] {
                    let candidate = format!("refs/remotes/{r}/{name}");
                    if ref_exists(cwd, &candidate).await {
                        refs.push(candidate);
                        break;
                    }
                }
            }
        }
    }
    if let Ok(out) = git_ok(
        cwd,
        &["branch", "-r", "--contains", "HEAD", "--format=%(refname)"],
    )
    .await
    {
        let mut contains: Vec<String> = out.lines().map(str::to_string).collect();
        contains.sort_by_key(|r| !r.starts_with("refs/remotes/origin/"));
        refs.extend(contains);
    }
    let mut seen = std::collections::HashSet::new();
    refs.retain(|r| !r.ends_with("/HEAD") && seen.insert(r.clone()));
    Ok(refs)
}

/// The closest remote commit (fewest local commits on top of it) and the diff from it
/// to the working tree, untracked files included in full.
async fn diff_to_remote(cwd: &Path) -> Result<(String, String), GitError> {
    git_ok(cwd, &["rev-parse", "--show-toplevel"]).await?;
    git_ok(cwd, &["rev-parse", "--verify", "HEAD"]).await?;
    let mut best: Option<(u64, String)> = None;
    for r in candidate_refs(cwd).await? {
        let Ok(base) = git_ok(cwd, &["merge-base", "HEAD", &r]).await else {
            continue;
        };
        let Ok(ahead) = git_ok(cwd, &["rev-list", "--count", &format!("{base}..HEAD")]).await
        else {
            continue;
        };
        let ahead: u64 = ahead.parse().unwrap_or(u64::MAX);
        if best.as_ref().is_none_or(|(n, _)| ahead < *n) {
            best = Some((ahead, base));
        }
    }
    let (_, sha) = best.ok_or(GitError::NoSharedHistory)?;
    let diff = diff_with_untracked(cwd, DiffBase::Commit(&sha), true).await?;
    Ok((sha, diff))
}

/// What the working tree is compared with.
#[derive(Clone, Copy, Debug)]
enum DiffBase<'a> {
    /// A commit (`HEAD`, a sha).
    Commit(&'a str),
    /// The index: what is staged, for a repository without commits yet.
    Index,
}

/// `git diff <base>` plus every untracked (not ignored) file as an addition. `binary` asks
/// for untracked binary files in full (`--binary`, so the result applies as a patch) rather
/// than as "Binary files differ".
async fn diff_with_untracked(
    cwd: &Path,
    base: DiffBase<'_>,
    binary: bool,
) -> Result<String, GitError> {
    let mut args = vec!["diff", "--no-textconv", "--no-ext-diff"];
    match base {
        DiffBase::Commit(commit) => args.push(commit),
        DiffBase::Index => args.push("--cached"),
    }
    let (code, out) = git(cwd, &args).await?;
    if code != 0 {
        return Err(GitError::Exited {
            command: "git diff".into(),
            code,
        });
    }
    let mut diff = String::from_utf8_lossy(&out).into_owned();
    let (code, untracked) = git(cwd, &["ls-files", "--others", "--exclude-standard", "-z"]).await?;
    if code != 0 {
        return Err(GitError::Exited {
            command: "git ls-files".into(),
            code,
        });
    }
    for file in untracked.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let file = String::from_utf8_lossy(file).into_owned();
        let mut args = vec!["diff"];
        if binary {
            args.push("--binary");
        }
        args.extend([
            "--no-textconv",
            "--no-ext-diff",
            "--no-index",
            "--",
            "/dev/null",
            file.as_str(),
        ]);
        // `--no-index` exits 1 when the files differ, which is the point here.
        match git(cwd, &args).await? {
            (0 | 1, out) => diff.push_str(&String::from_utf8_lossy(&out)),
            (code, _) => {
                return Err(GitError::Exited {
                    command: format!("git diff for untracked {file}"),
                    code,
                });
            }
        }
    }
    Ok(diff)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn ok(cwd: &Path, args: &[&str]) {
        let (code, _) = git(cwd, args).await.unwrap();
        assert_eq!(code, 0, "git {args:?}");
    }

    async fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        ok(dir.path(), &["init", "-q"]).await;
        ok(dir.path(), &["config", "user.email", "t@example.com"]).await;
        ok(dir.path(), &["config", "user.name", "t"]).await;
        dir
    }

    #[tokio::test]
    async fn tracked_changes_and_untracked_files_but_not_ignored_ones() {
        let dir = repo().await;
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        std::fs::write(root.join(".gitignore"), "ignored.txt\n").unwrap();
        ok(root, &["add", "."]).await;
        ok(root, &["commit", "-qm", "first"]).await;
        std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(root.join("new file.txt"), "fresh\n").unwrap();
        std::fs::write(root.join("ignored.txt"), "secret\n").unwrap();
        std::fs::write(root.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();

        let diff = diff_with_untracked(root, DiffBase::Commit("HEAD"), false)
            .await
            .unwrap();
        assert!(
            diff.contains("+++ b/a.txt") && diff.contains("+two"),
            "{diff}"
        );
        assert!(
            diff.contains("new file.txt") && diff.contains("+fresh"),
            "{diff}"
        );
        assert!(
            !diff.contains("secret"),
            "an ignored file was included: {diff}"
        );
        assert!(
            diff.contains("Binary files /dev/null and b/blob.bin differ"),
            "{diff}"
        );

        let binary = diff_with_untracked(root, DiffBase::Commit("HEAD"), true)
            .await
            .unwrap();
        assert!(binary.contains("GIT binary patch"), "{binary}");
    }

    #[tokio::test]
    async fn a_repository_without_commits_diffs_against_the_index() {
        let dir = repo().await;
        let root = dir.path();
        std::fs::write(root.join("staged.txt"), "staged\n").unwrap();
        ok(root, &["add", "staged.txt"]).await;
        std::fs::write(root.join("loose.txt"), "loose\n").unwrap();
        let diff = diff_with_untracked(root, DiffBase::Index, false)
            .await
            .unwrap();
        assert!(diff.contains("+staged"), "{diff}");
        assert!(diff.contains("+loose"), "{diff}");
    }

    #[tokio::test]
    async fn outside_a_repository_is_an_error_naming_git() {
        let dir = tempfile::tempdir().unwrap();
        let err = diff_with_untracked(dir.path(), DiffBase::Commit("HEAD"), false)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("git diff exited"), "{err}");
    }

    #[tokio::test]
    async fn the_facade_diffs_against_head_or_the_index_and_names_a_folder_outside() {
        let dir = repo().await;
        let root = dir.path();
        std::fs::write(root.join("loose.txt"), "loose\n").unwrap();
        let d = working_tree_diff(root, WorkingTreeBase::Head)
            .await
            .unwrap();
        assert_eq!(d.base, None, "no commits yet: the index is the base");
        assert!(d.diff.contains("+loose"), "{}", d.diff);
        ok(root, &["add", "."]).await;
        ok(root, &["commit", "-qm", "first"]).await;
        std::fs::write(root.join("loose.txt"), "loose\nmore\n").unwrap();
        let d = working_tree_diff(root, WorkingTreeBase::Head)
            .await
            .unwrap();
        assert_eq!(d.base.as_deref(), Some("HEAD"));
        assert!(d.diff.contains("+more"), "{}", d.diff);
        let e = working_tree_diff(root, WorkingTreeBase::ClosestRemote)
            .await
            .unwrap_err();
        assert!(matches!(e, GitError::NoRemote), "{e}");

        let outside = tempfile::tempdir().unwrap();
        let e = working_tree_diff(outside.path(), WorkingTreeBase::Head)
            .await
            .unwrap_err();
        assert!(matches!(e, GitError::NotARepository(_)), "{e}");
        assert!(
            e.to_string().ends_with("is not inside a git repository"),
            "{e}"
        );
    }
}
