//! The working tree as a diff: `git diff` against a base plus every untracked file as an
//! addition. One home for what the TUI's `/diff` and the v1 `gitDiffToRemote` both show.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// How long one git command may take before it is stopped and reported.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// Run `git args` in `cwd`: its exit code and stdout. Never prompts, takes no optional locks
/// (a concurrent `git` of the user's is not disturbed), and is stopped after [`GIT_TIMEOUT`].
pub async fn git(cwd: &Path, args: &[&str]) -> Result<(i32, Vec<u8>), String> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(args)
        .current_dir(cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    oi_process::supervise(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot run git: {e}; is git installed?"))?;
    match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(out)) => Ok((oi_process::exit_code(out.status), out.stdout)),
        Ok(Err(e)) => Err(format!("git {} failed: {e}", args.join(" "))),
        Err(_) => Err(format!(
            "git {} took longer than {} s",
            args.join(" "),
            GIT_TIMEOUT.as_secs()
        )),
    }
}

/// What the working tree is compared with.
#[derive(Clone, Copy, Debug)]
pub enum DiffBase<'a> {
    /// A commit (`HEAD`, a sha).
    Commit(&'a str),
    /// The index: what is staged, for a repository without commits yet.
    Index,
}

/// `git diff <base>` plus every untracked (not ignored) file as an addition. `binary` asks
/// for untracked binary files in full (`--binary`, so the result applies as a patch) rather
/// than as "Binary files differ".
pub async fn diff_with_untracked(
    cwd: &Path,
    base: DiffBase<'_>,
    binary: bool,
) -> Result<String, String> {
    let mut args = vec!["diff", "--no-textconv", "--no-ext-diff"];
    match base {
        DiffBase::Commit(commit) => args.push(commit),
        DiffBase::Index => args.push("--cached"),
    }
    let (code, out) = git(cwd, &args).await?;
    if code != 0 {
        return Err(format!("git diff exited with {code}"));
    }
    let mut diff = String::from_utf8_lossy(&out).into_owned();
    let (code, untracked) = git(cwd, &["ls-files", "--others", "--exclude-standard", "-z"]).await?;
    if code != 0 {
        return Err(format!("git ls-files exited with {code}"));
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
            (code, _) => return Err(format!("git diff for untracked {file} exited with {code}")),
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
        assert!(err.contains("git diff exited"), "{err}");
    }
}
