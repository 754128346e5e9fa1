//! The commands profile read tools become. Reading, globbing, searching and listing run as
//! ordinary read-only commands (`cat`, `sed -n`, `find`, `grep`, `ls`) with the path and
//! pattern as their own argv words (no shell, so nothing in them is interpreted): they get
//! the sandbox, the approval policy's known-safe list, concurrency beside other reads, and
//! `exec_command_*` events front ends already show as "Read", "Search" and "List".

use super::CommandRequest;

fn request(argv: Vec<String>) -> CommandRequest {
    CommandRequest {
        argv,
        workdir: None,
        timeout: None,
        escalation: None,
    }
}

/// A path as an argv word: one that starts with `-` would read as an option.
fn operand(path: &str) -> String {
    if path.starts_with('-') {
        format!("./{path}")
    } else {
        path.to_string()
    }
}

/// Lines `first..first+limit` (1-based) of a file, or all of it.
pub(super) fn read(path: &str, first: Option<u64>, limit: Option<u64>) -> CommandRequest {
    let path = operand(path);
    match (first, limit) {
        (None | Some(1), None) => request(vec!["cat".into(), path]),
        (first, limit) => {
            let first = first.unwrap_or(1).max(1);
            let range = match limit {
                Some(n) if n > 0 => format!("{first},{}p", first + n - 1),
                _ => format!("{first},$p"),
            };
            request(vec!["sed".into(), "-n".into(), range, path])
        }
    }
}

/// Files matching a glob under `dir` (default: the working directory), `.git` left out.
/// A pattern without `/` matches names at any depth (`*.py`); one with `/` matches paths
/// relative to `dir`, `**/` standing for any folders (`src/**/*.rs`).
pub(super) fn glob(pattern: &str, dir: Option<&str>) -> CommandRequest {
    let dir = operand(dir.filter(|d| !d.trim().is_empty()).unwrap_or("."));
    let pattern = pattern.trim_start_matches("./");
    let mut argv: Vec<String> = vec![
        "find".into(),
        dir.clone(),
        "-name".into(),
        ".git".into(),
        "-prune".into(),
        "-o".into(),
    ];
    if pattern.contains('/') {
        // find's `-path` lets `*` cross `/`, so `**/` is simply `*` (zero or more folders).
        let full = format!(
            "{}/{}",
            dir.trim_end_matches('/'),
            pattern.replace("**/", "*").replace("**", "*")
        );
        argv.extend(["-path".into(), full]);
    } else {
        argv.extend(["-name".into(), pattern.replace("**", "*")]);
    }
    argv.extend(["-type".into(), "f".into(), "-print".into()]);
    request(argv)
}

/// What a search prints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum GrepOutput {
    /// `file:line:text` for each match.
    Lines,
    /// The files with a match.
    Files,
    /// Matches per file.
    Counts,
}

/// A recursive extended-regex search under `dir` (default: the working directory), binary
/// files and `.git` skipped, optionally only in files whose name matches `include`.
pub(super) fn grep(
    pattern: &str,
    dir: Option<&str>,
    include: Option<&str>,
    output: GrepOutput,
    ignore_case: bool,
) -> CommandRequest {
    let mut argv: Vec<String> = vec!["grep".into(), "-rIE".into()];
    argv.push(
        match output {
            GrepOutput::Lines => "-n",
            GrepOutput::Files => "-l",
            GrepOutput::Counts => "-c",
        }
        .into(),
    );
    if ignore_case {
        argv.push("-i".into());
    }
    argv.push("--exclude-dir=.git".into());
    if let Some(include) = include.filter(|g| !g.trim().is_empty()) {
        // grep matches `--include` against the base name.
        let base = include.rsplit('/').next().unwrap_or(include);
        argv.push(format!("--include={base}"));
    }
    argv.extend(["-e".into(), pattern.to_string()]);
    argv.push(operand(dir.filter(|d| !d.trim().is_empty()).unwrap_or(".")));
    request(argv)
}

/// A folder's entries, one per line, folders marked with a trailing `/`.
pub(super) fn list(dir: Option<&str>) -> CommandRequest {
    let dir = operand(dir.filter(|d| !d.trim().is_empty()).unwrap_or("."));
    request(vec!["ls".into(), "-1Ap".into(), dir])
}
