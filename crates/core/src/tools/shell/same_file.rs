//! A pipeline that writes over a file it reads.
//!
//! `cat notes.txt | grep -v TODO > notes.txt` empties `notes.txt`: the shell truncates the
//! redirect's target before `cat` reads it. Everyone means "filter the file in place", and
//! the 1.5B model on the real tier wrote exactly this for "delete the lines containing TODO"
//! in two of its runs, losing the file both times. Such a command runs with its output sent
//! to a temporary file beside the target, copied over the target only when the pipeline
//! succeeds (so a failed run leaves the file as it was, and the copy keeps the file's mode
//! and owner). The rewritten command is what is approved, run and shown.

/// The rewritten argv, or `None` when `argv` is not `bash|sh -c|-lc SCRIPT` with `SCRIPT`
/// one pipeline whose stdout goes (`>`) to a file the pipeline also names.
pub(super) fn guarded(argv: &[String]) -> Option<Vec<String>> {
    let [shell, flag, script] = argv else {
        return None;
    };
    if !matches!(shell.as_str(), "bash" | "sh") || !matches!(flag.as_str(), "-c" | "-lc") {
        return None;
    }
    let rewritten = guarded_script(script)?;
    Some(vec![shell.clone(), flag.clone(), rewritten])
}

/// A word of the script, and where it is.
struct Word {
    text: String,
    start: usize,
    end: usize,
}

/// The script with the redirect's target replaced by a temporary file and the copy after.
fn guarded_script(script: &str) -> Option<String> {
    let (words, redirect) = lex(script)?;
    // `bash -c "sed … notes.txt > notes.txt"`, the whole script (recorded): the inner one.
    if let (None, [shell, flag, inner]) = (&redirect, words.as_slice())
        && matches!(shell.text.as_str(), "bash" | "sh")
        && matches!(flag.text.as_str(), "-c" | "-lc")
    {
        return guarded_script(&inner.text);
    }
    let target = redirect?;
    let plain = |w: &str| w.trim_start_matches("./").to_string();
    let name = plain(&target.text);
    let read_too = words
        .iter()
        .any(|w| w.start != target.start && plain(&w.text) == name);
    if !read_too || !is_simple_path(&name) {
        return None;
    }
    let (dir, base) = match name.rsplit_once('/') {
        Some((dir, base)) => (format!("{dir}/"), base),
        None => (String::new(), name.as_str()),
    };
    let temp = format!("{dir}.{base}.oi-write");
    let pipeline = format!(
        "{}{}{}",
        &script[..target.start],
        temp,
        &script[target.end..]
    );
    Some(format!(
        "{} && cat {temp} > {name}; status=$?; rm -f {temp}; exit $status",
        pipeline.trim_end()
    ))
}

/// A path of plain characters: nothing the shell would expand or split.
fn is_simple_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('-')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
}

/// The script's words (quotes removed) and the target of its one `>` redirect. `None` when
/// the script is more than one pipeline, or holds what this does not read (substitutions,
/// heredocs, groups, a second output redirect, `>>`).
fn lex(script: &str) -> Option<(Vec<Word>, Option<Word>)> {
    let bytes = script.as_bytes();
    let mut words: Vec<Word> = Vec::new();
    let mut redirect: Option<Word> = None;
    let mut pending_redirect = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' | b'\t' => i += 1,
            // More than one pipeline, a background job, a group, a substitution: not read.
            b'\n' | b';' | b'&' | b'(' | b')' | b'{' | b'}' | b'`' => {
                return None;
            }
            b'|' => {
                if bytes.get(i + 1) == Some(&b'|') || pending_redirect {
                    return None;
                }
                i += 1;
            }
            b'<' => {
                // `< file` reads it: the next word is a word like any other. `<<` is a heredoc.
                if bytes.get(i + 1) == Some(&b'<') {
                    return None;
                }
                i += 1;
            }
            b'>' => {
                // A digit before `>` (`2>`) redirects another stream: the word before was
                // read as the digit; a second `>` (`>>`) appends, which truncates nothing.
                if bytes.get(i + 1) == Some(&b'>') || bytes.get(i + 1) == Some(&b'|') {
                    return None;
                }
                if words.last().is_some_and(|w| w.end == i && w.text == "2") {
                    return None;
                }
                if redirect.is_some() || pending_redirect {
                    return None;
                }
                pending_redirect = true;
                i += 1;
            }
            // A comment would swallow the copy appended after the pipeline.
            b'#' => return None,
            _ => {
                let (word, end) = word_at(script, i)?;
                let word = Word {
                    text: word,
                    start: i,
                    end,
                };
                i = end;
                if std::mem::take(&mut pending_redirect) {
                    redirect = Some(word);
                } else {
                    words.push(word);
                }
            }
        }
    }
    if pending_redirect {
        return None;
    }
    Some((words, redirect))
}

/// The word starting at `start` (quotes removed) and where it ends. `None` on what a word
/// here may not hold: `$` outside single quotes, a backtick, an unclosed quote.
fn word_at(script: &str, start: usize) -> Option<(String, usize)> {
    let mut text = String::new();
    let mut chars = script[start..].char_indices().peekable();
    while let Some(&(off, c)) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                return Some((text, start + off));
            }
            '\'' => {
                chars.next();
                loop {
                    let (_, c) = chars.next()?;
                    if c == '\'' {
                        break;
                    }
                    text.push(c);
                }
            }
            '"' => {
                chars.next();
                loop {
                    let (_, c) = chars.next()?;
                    match c {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => text.push(chars.next()?.1),
                        c => text.push(c),
                    }
                }
            }
            '$' | '`' => return None,
            '\\' => {
                chars.next();
                text.push(chars.next()?.1);
            }
            c => {
                chars.next();
                text.push(c);
            }
        }
    }
    Some((text, script.len()))
}

#[cfg(test)]
mod tests {
    use super::guarded_script;

    #[test]
    fn recorded_pipelines_over_their_own_input_write_through_a_temporary_file() {
        assert_eq!(
            guarded_script("cat notes.txt | grep -v 'TODO' > notes.txt").as_deref(),
            Some(
                "cat notes.txt | grep -v 'TODO' > .notes.txt.oi-write && cat .notes.txt.oi-write > notes.txt; status=$?; rm -f .notes.txt.oi-write; exit $status"
            )
        );
        assert_eq!(
            guarded_script("sed 's/a/b/' ./src/x.py >src/x.py").as_deref(),
            Some(
                "sed 's/a/b/' ./src/x.py >src/.x.py.oi-write && cat src/.x.py.oi-write > src/x.py; status=$?; rm -f src/.x.py.oi-write; exit $status"
            )
        );
        assert!(guarded_script("grep -v TODO < notes.txt > notes.txt").is_some());
        // Round 8's edit-file: the pipeline inside a `bash -c` of its own.
        assert_eq!(
            guarded_script("bash -c \"sed 's/apple/banana/g' notes.txt > notes.txt\"").as_deref(),
            Some(
                "sed 's/apple/banana/g' notes.txt > .notes.txt.oi-write && cat .notes.txt.oi-write > notes.txt; status=$?; rm -f .notes.txt.oi-write; exit $status"
            )
        );
    }

    #[test]
    fn other_commands_are_left_as_written() {
        for script in [
            // Another file, an append, stderr, no redirect.
            "grep -v TODO notes.txt > clean.txt",
            "cat notes.txt >> notes.txt",
            "grep x notes.txt 2> notes.txt",
            "grep -v TODO notes.txt",
            // The name in a quoted pattern is a word too, but more than one pipeline or a
            // substitution is not read at all.
            "cat a.txt > a.txt; echo done",
            "cat a.txt > a.txt && echo done",
            "cat $(ls a.txt) > a.txt",
            "cat \"$F\" > a.txt",
            "cat a.txt | tee a.txt > b.txt > a.txt",
            "cat <<EOF > a.txt\nx\nEOF",
            // A target the shell would expand.
            "cat *.txt > *.txt",
            // A trailing comment: what is appended would be part of it.
            "grep -v TODO notes.txt > notes.txt # drop the TODOs",
        ] {
            assert_eq!(guarded_script(script), None, "{script}");
        }
    }

    /// The rewritten script really keeps the file's other lines, and a failing pipeline
    /// leaves the file alone, through bash itself.
    #[test]
    fn the_rewritten_pipeline_filters_the_file_in_place_and_a_failure_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "keep one\nTODO: a\nkeep two\n").unwrap();
        let run = |script: &str| {
            std::process::Command::new("bash")
                .args(["-c", script])
                .current_dir(dir.path())
                .status()
                .unwrap()
        };
        let script = guarded_script("cat notes.txt | grep -v 'TODO' > notes.txt").unwrap();
        assert!(run(&script).success());
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "keep one\nkeep two\n"
        );
        let failing = guarded_script("cat notes.txt | no-such-program-oi > notes.txt").unwrap();
        assert!(!run(&failing).success());
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "keep one\nkeep two\n"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "the temporary file is removed");
    }
}
