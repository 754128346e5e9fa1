//! Which commands are known to be read-only, so `untrusted` can run them without asking.
//!
//! Deliberately conservative: anything not recognised needs approval.

/// True if every command in `argv` (directly, or in a simple `bash -lc` script joined by
/// `&&`, `||`, `;` or `|`) only reads.
pub(crate) fn is_known_safe_command(argv: &[String]) -> bool {
    match oi_protocol::parse_command::shell_script(argv) {
        Some(script) => is_safe_script(script),
        None => is_safe_argv(argv),
    }
}

fn is_safe_script(script: &str) -> bool {
    // Redirections, substitutions, globbing of commands and background jobs can all write or
    // run arbitrary things; refuse anything beyond plain words and simple operators.
    if script.contains(['>', '<', '`', '$', '(', ')', '&', '\n', '\\']) && !script.contains("&&") {
        return false;
    }
    let normalized = script
        .replace("&&", ";")
        .replace("||", ";")
        .replace('|', ";");
    if normalized.contains(['>', '<', '`', '$', '(', ')', '&', '\n', '\\']) {
        return false;
    }
    normalized.split(';').all(|part| {
        let words = split_words(part);
        !words.is_empty() && is_safe_argv(&words)
    })
}

/// Split on whitespace honouring simple single and double quotes. Returns empty on
/// unbalanced quotes (treated as unsafe).
fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Vec::new();
    }
    if in_word {
        words.push(cur);
    }
    words
}

fn is_safe_argv(argv: &[String]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let prog = first.rsplit('/').next().unwrap_or(first);
    let args = &argv[1..];
    match prog {
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "true" | "false" | "nl"
        | "which" | "whoami" | "uname" | "date" | "file" | "stat" | "tree" | "du" | "df"
        | "basename" | "dirname" | "realpath" | "readlink" | "cut" | "sort" | "uniq" | "tr"
        | "grep" | "egrep" | "fgrep" | "diff" | "cmp" | "id" | "printenv" | "env"
            if prog != "env" || args.is_empty() =>
        {
            // `sort -o FILE` writes.
            !(prog == "sort" && args.iter().any(|a| a.starts_with("-o") || a == "--output"))
        }
        "rg" => !args
            .iter()
            .any(|a| a.starts_with("--pre") || a == "-z" || a == "--search-zip"),
        "find" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprintf"
                    | "-fls"
                    | "-fprint0"
            )
        }),
        "sed" => {
            args.first().map(String::as_str) == Some("-n")
                && args.len() <= 3
                && !args.iter().any(|a| a.contains('w') && a.contains('/'))
                && !args
                    .iter()
                    .any(|a| a == "-i" || a.starts_with("--in-place"))
        }
        "git" => {
            matches!(
                args.iter()
                    .find(|a| !a.starts_with('-'))
                    .map(String::as_str),
                Some(
                    "status"
                        | "log"
                        | "diff"
                        | "show"
                        | "branch"
                        | "rev-parse"
                        | "ls-files"
                        | "blame"
                )
            ) && !args.iter().any(|a| {
                a.starts_with("--output") || a == "-D" || a == "-d" || a == "-m" || a == "-M"
            })
        }
        "cargo" => matches!(
            args.first().map(String::as_str),
            Some("check" | "tree" | "metadata")
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn read_only_commands_are_safe() {
        for c in [
            v(&["ls", "-la"]),
            v(&["cat", "README.md"]),
            v(&["bash", "-lc", "ls && git status"]),
            v(&["bash", "-lc", "rg foo src | head -5"]),
            v(&["git", "log", "--oneline"]),
            v(&["sed", "-n", "1,20p", "file"]),
        ] {
            assert!(is_known_safe_command(&c), "{c:?}");
        }
    }

    #[test]
    fn writing_or_unknown_commands_are_not() {
        for c in [
            v(&["touch", "x"]),
            v(&["rm", "-rf", "/"]),
            v(&["bash", "-lc", "echo hi > file"]),
            v(&["bash", "-lc", "ls; rm x"]),
            v(&["bash", "-lc", "echo $(rm x)"]),
            v(&["find", ".", "-delete"]),
            v(&["sed", "-i", "s/a/b/", "f"]),
            v(&["git", "branch", "-D", "main"]),
            v(&["git", "push"]),
            v(&["sort", "-o", "out", "in"]),
            v(&["env", "rm", "x"]),
        ] {
            assert!(!is_known_safe_command(&c), "{c:?}");
        }
    }
}
