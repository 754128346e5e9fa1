//! `echo 'print(1)\nprint(2)' > count.py` in bash writes each `\n` as the two characters
//! `\` and `n` (bash's `echo` reads no escapes without `-e`; dash's and zsh's do). Small
//! models write it for "a script that prints 1 to 5" (recorded on the real tier, round 15:
//! both commands of a write-script run, the file one line of Python that does not parse).
//! The command runs as written; its output then says what the file got and how to write
//! line breaks, as `sed_print` does for a `sed` without `-i`.

use std::path::Path;

/// The note for `argv` run in `cwd`, when it is one `echo` without `-e` whose words hold
/// `\n`, redirected into a file that now exists.
pub(super) fn note(argv: &[String], cwd: &Path) -> Option<String> {
    let script = match argv {
        [shell, flag, script]
            if matches!(shell.as_str(), "bash" | "sh") && matches!(flag.as_str(), "-c" | "-lc") =>
        {
            script.as_str()
        }
        _ => return None,
    };
    let (command, target) = redirected(script)?;
    let words = super::sed_print::split(command)?;
    let (first, rest) = words.split_first()?;
    if first != "echo" || rest.iter().any(|w| w.starts_with('-') && w.contains('e')) {
        return None;
    }
    // In the command as written: inside double quotes bash keeps `\n` as it is too.
    if !command.contains("\\n") || !cwd.join(&target).is_file() {
        return None;
    }
    Some(format!(
        "Note: bash's `echo` wrote each `\\n` as the two characters `\\` and `n`, not as a line break, so {target} holds a single line. To write line breaks, run the same command with `echo -e`, or write the file with a heredoc."
    ))
}

/// `script` cut at its one redirect (`>` or `>>`) outside quotes: the command before it and
/// the one word after it. `None` for anything else (a pipe, `;`, a second redirect, …).
fn redirected(script: &str) -> Option<(&str, String)> {
    let mut at = None;
    let mut quote: Option<char> = None;
    let bytes: Vec<(usize, char)> = script.char_indices().collect();
    let mut i = 0;
    while i < bytes.len() {
        let (pos, c) = bytes[i];
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '>') => {
                if at.is_some() {
                    return None;
                }
                let width = if bytes.get(i + 1).map(|b| b.1) == Some('>') {
                    i += 1;
                    2
                } else {
                    1
                };
                at = Some((pos, pos + width));
            }
            (None, '|' | ';' | '&' | '<' | '`' | '\n') => return None,
            _ => {}
        }
        i += 1;
    }
    let (start, end) = at?;
    let target = super::sed_print::split(script[end..].trim())?;
    match target.as_slice() {
        [one] if !one.is_empty() => Some((&script[..start], one.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::note;

    fn bash(script: &str) -> Vec<String> {
        vec!["bash".into(), "-lc".into(), script.into()]
    }

    #[test]
    fn an_echo_of_backslash_n_into_a_file_gets_the_note_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("count.py"), "print(1)\\nprint(2)\n").unwrap();
        let cwd = dir.path();
        // Recorded in round 15.
        for wrote in [
            "echo 'print(1)\\nprint(2)\\nprint(3)' > count.py",
            "echo \"1\\n2\\n3\" > count.py",
            "echo 'print(1)\\n' >> count.py",
        ] {
            let text = note(&bash(wrote), cwd).unwrap_or_else(|| panic!("{wrote}"));
            assert!(text.contains("count.py holds a single line"), "{text}");
            assert!(text.contains("`echo -e`"), "{text}");
        }
        for other in [
            "echo -e 'print(1)\\nprint(2)' > count.py",
            "echo 'print(1)' > count.py",
            "echo 'a\\nb' > missing.txt",
            "echo 'a\\nb'",
            "echo 'a\\nb' > count.py; cat count.py",
            "echo 'a\\nb' | tee count.py",
            "printf 'a\\nb' > count.py",
            "echo 'a > b\\n' > count.py > other.py",
        ] {
            assert_eq!(note(&bash(other), cwd), None, "{other}");
        }
    }
}
