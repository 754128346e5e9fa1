//! `sed 's/a/b/' notes.txt` without `-i` prints the changed text and leaves the file as it
//! was. Small models write it for "replace a with b in notes.txt" and then say the file is
//! changed (recorded on the real tier, round 14: both edit-file runs, each retried with the
//! same command). The command runs as written; its output then says, above what it printed,
//! that the file is unchanged and how to change it. A deletion (`sed '/TODO/d' notes.txt`)
//! gets the same note.

use std::path::Path;

/// The note for `argv` run in `cwd`, when it is one `sed` substitution printing an existing
/// file: no `-i`, no redirect, no pipe, nothing else in the script.
pub(super) fn note(argv: &[String], cwd: &Path) -> Option<String> {
    let words = sed_words(argv)?;
    if words.first().map(String::as_str) != Some("sed") {
        return None;
    }
    let args = &words[1..];
    let in_place = args.iter().any(|a| {
        a.starts_with("--in-place")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
    });
    let edits = args.iter().any(|a| edit_script(a));
    let file = args
        .last()
        .filter(|f| !f.starts_with('-') && !edit_script(f))?;
    if in_place || !edits || !cwd.join(file).is_file() {
        return None;
    }
    Some(format!(
        "Note: `sed` without `-i` only printed the changed text below; {file} itself is unchanged. To change the file, run the same command with `sed -i`."
    ))
}

/// A substitution (`s/a/b/`) or a deletion (`/TODO/d`, `3d`, `2,4d`, `$d`): a script whose
/// printed text is the file changed (recorded in round 15: `sed '/TODO/d' notes.txt` for
/// "delete the lines containing TODO", and the model then answered as if it were done).
fn edit_script(arg: &str) -> bool {
    arg.starts_with("s/")
        || arg.starts_with("s|")
        || arg.starts_with("s#")
        || (arg.len() > 1
            && arg.ends_with('d')
            && arg.starts_with(|c: char| c == '/' || c == '$' || c.is_ascii_digit()))
}

/// The words of a plain `sed …` command, also inside `bash -c` / `sh -lc` (nested once);
/// `None` when the script has anything but one simple command (a pipe, a redirect, `;`,
/// `&&`, a substitution).
fn sed_words(argv: &[String]) -> Option<Vec<String>> {
    match argv {
        [shell, flag, script]
            if matches!(shell.as_str(), "bash" | "sh") && matches!(flag.as_str(), "-c" | "-lc") =>
        {
            let words = split(script)?;
            if words.len() == 3 && matches!(words[0].as_str(), "bash" | "sh") {
                return sed_words(&words);
            }
            Some(words)
        }
        _ => Some(argv.to_vec()),
    }
}

/// Shell words with single and double quotes; `None` for anything that makes the script
/// more than one simple command.
pub(super) fn split(script: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = script.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        '$' | '`' => return None,
                        q => word.push(q),
                    }
                }
            }
            '|' | '>' | '<' | ';' | '&' | '$' | '`' | '\n' | '(' | ')' => return None,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::note;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_printing_sed_on_an_existing_file_gets_the_note_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "The apple is red.\n").unwrap();
        let cwd = dir.path();
        // Recorded: `bash -c "sed 's/apple/banana/g' notes.txt"` inside the shell tool's argv.
        for printing in [
            argv(&[
                "bash",
                "-lc",
                "bash -c \"sed 's/apple/banana/g' notes.txt\"",
            ]),
            argv(&["bash", "-lc", "sed 's/apple/banana/g' notes.txt"]),
            argv(&["sed", "s/apple/banana/", "notes.txt"]),
            argv(&["sed", "-e", "s/apple/banana/", "notes.txt"]),
            argv(&["bash", "-lc", "sed '/TODO/d' notes.txt"]),
            argv(&["sed", "2,3d", "notes.txt"]),
        ] {
            let text = note(&printing, cwd).unwrap_or_else(|| panic!("{printing:?}"));
            assert!(text.contains("notes.txt itself is unchanged"), "{text}");
        }
        for other in [
            argv(&["bash", "-lc", "sed -i 's/apple/banana/g' notes.txt"]),
            argv(&["sed", "-i.bak", "s/apple/banana/", "notes.txt"]),
            argv(&["sed", "--in-place", "s/apple/banana/", "notes.txt"]),
            argv(&["sed", "-ni", "s/apple/banana/p", "notes.txt"]),
            argv(&["bash", "-lc", "sed 's/apple/banana/' notes.txt > out.txt"]),
            argv(&["bash", "-lc", "sed 's/apple/banana/' notes.txt | head"]),
            argv(&["bash", "-lc", "sed -n '1p' notes.txt"]),
            argv(&["sed", "s/apple/banana/", "missing.txt"]),
            argv(&["grep", "apple", "notes.txt"]),
        ] {
            assert_eq!(note(&other, cwd), None, "{other:?}");
        }
    }
}
