//! Recognising an `apply_patch` call disguised as a shell command, so the engine can route
//! `["bash", "-lc", "apply_patch <<'EOF' …"]` through the patch path (approval diff, sandbox
//! path checks) instead of running a binary that may not exist.

use std::path::{Path, PathBuf};

const COMMAND_NAMES: [&str; 2] = ["apply_patch", "applypatch"];
const SHELLS: [&str; 4] = ["bash", "sh", "zsh", "dash"];
const SHELL_FLAGS: [&str; 4] = ["-c", "-lc", "-cl", "-ilc"];

/// If `argv` is an apply_patch invocation, return the patch text and the directory the command
/// `cd`s into first (as written; relative to the command's own working directory).
///
/// Recognised shapes:
/// * `["apply_patch", PATCH]` / `["applypatch", PATCH]`
/// * `[SHELL, "-lc" | "-c", SCRIPT]` where SHELL is bash/sh/zsh/dash (any directory prefix) and
///   SCRIPT is `[cd DIR && ]apply_patch <<'EOF'\nPATCH\nEOF` (any delimiter, quoted or not,
///   `<<-` allowed) or `[cd DIR && ]apply_patch 'PATCH'`.
///
/// Anything else (extra commands after the heredoc, pipes, other programs) returns `None` so it
/// runs as an ordinary shell command.
pub fn extract_from_argv(argv: &[String]) -> Option<(String, Option<PathBuf>)> {
    match argv {
        [cmd, patch] if COMMAND_NAMES.contains(&program_name(cmd)) => Some((patch.clone(), None)),
        [shell, flag, script]
            if SHELLS.contains(&program_name(shell)) && SHELL_FLAGS.contains(&flag.as_str()) =>
        {
            extract_from_script(script, false)
        }
        _ => None,
    }
}

fn program_name(arg: &str) -> &str {
    Path::new(arg)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(arg)
}

/// Parse a shell script of the shapes listed on [`extract_from_argv`]. With `bare_heredoc_ok`,
/// a heredoc with no command in front (`<<'EOF'\n…\nEOF`, as models sometimes send as the
/// tool input itself) is accepted too.
pub(crate) fn extract_from_script(
    script: &str,
    bare_heredoc_ok: bool,
) -> Option<(String, Option<PathBuf>)> {
    let script = script.trim_start();
    let (first_line, rest) = match script.split_once('\n') {
        Some((first, rest)) => (first.strip_suffix('\r').unwrap_or(first), rest),
        None => (script, ""),
    };

    let Some(heredoc_at) = first_line.find("<<") else {
        // `apply_patch 'PATCH'`: the whole script is one command with a quoted argument.
        let words = shlex::split(script)?;
        let (workdir, words) = split_cd_prefix(&words)?;
        return match words {
            [cmd, patch] if COMMAND_NAMES.contains(&cmd.as_str()) => Some((patch.clone(), workdir)),
            _ => None,
        };
    };

    let words = shlex::split(&first_line[..heredoc_at])?;
    let (workdir, words) = split_cd_prefix(&words)?;
    match words {
        [cmd] if COMMAND_NAMES.contains(&cmd.as_str()) => {}
        [] if bare_heredoc_ok && workdir.is_none() => {}
        _ => return None,
    }

    let spec = &first_line[heredoc_at + 2..];
    let (strip_tabs, spec) = match spec.strip_prefix('-') {
        Some(s) => (true, s),
        None => (false, spec),
    };
    let delimiter = parse_delimiter(spec.trim())?;

    let mut body = String::new();
    let mut lines = rest.split('\n');
    let mut terminated = false;
    for line in lines.by_ref() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        // Tolerate trailing blanks after the terminator, which a shell would not, because models
        // produce them and the intent is unambiguous.
        if line.trim_end() == delimiter {
            terminated = true;
            break;
        }
        body.push_str(line);
        body.push('\n');
    }
    if terminated {
        // Anything after the heredoc would be another command we are not going to run.
        if lines.any(|l| !l.trim().is_empty()) {
            return None;
        }
    } else {
        // bash accepts an unterminated heredoc (with a warning) and uses the rest of the script.
        while body.ends_with("\n\n") {
            body.pop();
        }
    }
    Some((body, workdir))
}

/// `["cd", DIR, "&&", rest…]` → (Some(DIR), rest); anything else → (None, all).
fn split_cd_prefix(words: &[String]) -> Option<(Option<PathBuf>, &[String])> {
    match words {
        [cd, dir, and, rest @ ..] if cd == "cd" && and == "&&" => {
            Some((Some(PathBuf::from(dir)), rest))
        }
        [cd, ..] if cd == "cd" => None,
        _ => Some((None, words)),
    }
}

/// `'EOF'`, `"EOF"` or `EOF` (nothing may follow it on the line).
fn parse_delimiter(spec: &str) -> Option<String> {
    let (quote, inner) = match spec.chars().next()? {
        q @ ('\'' | '"') => (Some(q), &spec[1..]),
        _ => (None, spec),
    };
    let word = match quote {
        Some(q) => {
            let end = inner.find(q)?;
            if !inner[end + 1..].trim().is_empty() {
                return None;
            }
            &inner[..end]
        }
        None => {
            if inner.contains(char::is_whitespace) {
                return None;
            }
            inner
        }
    };
    (!word.is_empty()).then(|| word.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    const PATCH: &str = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n";

    #[test]
    fn recognised_shapes() {
        let heredoc = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        let cases: Vec<(Vec<String>, Option<&str>)> = vec![
            (argv(&["apply_patch", PATCH]), None),
            (argv(&["applypatch", PATCH]), None),
            (argv(&["/usr/local/bin/apply_patch", PATCH]), None),
            (argv(&["bash", "-lc", &heredoc]), None),
            (argv(&["/bin/bash", "-c", &heredoc]), None),
            (
                argv(&["zsh", "-lc", &format!("apply_patch <<EOF\n{PATCH}EOF")]),
                None,
            ),
            (
                argv(&[
                    "bash",
                    "-lc",
                    &format!("apply_patch << \"PATCH\"\n{PATCH}PATCH\n"),
                ]),
                None,
            ),
            (
                argv(&[
                    "bash",
                    "-lc",
                    &format!("apply_patch <<-'EOF'\n{PATCH}\tEOF\n"),
                ]),
                None,
            ),
            (
                argv(&[
                    "bash",
                    "-lc",
                    &format!("cd sub/dir && apply_patch <<'EOF'\n{PATCH}EOF\n"),
                ]),
                Some("sub/dir"),
            ),
            (
                argv(&[
                    "bash",
                    "-lc",
                    &format!("cd 'my dir' && apply_patch <<'EOF'\n{PATCH}EOF\n"),
                ]),
                Some("my dir"),
            ),
            (
                argv(&["bash", "-lc", &format!("apply_patch '{PATCH}'")]),
                None,
            ),
            (
                argv(&["sh", "-c", &format!("cd /abs && apply_patch \"{PATCH}\"")]),
                Some("/abs"),
            ),
            (
                argv(&[
                    "bash",
                    "-lc",
                    &format!(
                        "apply_patch <<'EOF'\r\n{}EOF\r\n",
                        PATCH.replace('\n', "\r\n")
                    ),
                ]),
                None,
            ),
        ];
        for (args, dir) in cases {
            let got = extract_from_argv(&args);
            assert_eq!(
                got,
                Some((PATCH.to_string(), dir.map(PathBuf::from))),
                "argv: {args:?}"
            );
        }
    }

    #[test]
    fn unterminated_heredoc_uses_rest_of_script() {
        let args = argv(&["bash", "-lc", &format!("apply_patch <<'EOF'\n{PATCH}\n")]);
        assert_eq!(extract_from_argv(&args), Some((PATCH.to_string(), None)));
    }

    #[test]
    fn rejected_shapes() {
        let heredoc = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        let cases = vec![
            argv(&["apply_patch"]),
            argv(&["apply_patch", PATCH, "extra"]),
            argv(&["cat", PATCH]),
            argv(&["python", "-c", &heredoc]),
            argv(&["bash", "-x", &heredoc]),
            argv(&["bash", "-lc", &format!("{heredoc}rm -rf /\n")]),
            argv(&["bash", "-lc", &format!("cat <<'EOF'\n{PATCH}EOF\n")]),
            argv(&[
                "bash",
                "-lc",
                &format!("apply_patch <<'EOF' | tee x\n{PATCH}EOF\n"),
            ]),
            argv(&[
                "bash",
                "-lc",
                &format!("cd a; apply_patch <<'EOF'\n{PATCH}EOF\n"),
            ]),
            argv(&["bash", "-lc", &format!("<<'EOF'\n{PATCH}EOF\n")]),
            argv(&["bash", "-lc", "ls -la"]),
            argv(&[]),
        ];
        for args in cases {
            assert_eq!(extract_from_argv(&args), None, "argv: {args:?}");
        }
    }
}
