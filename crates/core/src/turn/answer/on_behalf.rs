//! The calls the agent makes on the model's behalf from its answer (code it showed for a
//! file, the tests the request names), and the hints a note gives about them.

use crate::answer_check::{self, Unfinished};
use crate::session::Session;
use oi_protocol::models::ToolSpec;

/// The call that writes the Python functions an answer showed into the one file the request
/// names (see `answer_check::shown_code`), as a shell command, and the warning that says so.
pub(super) async fn shown_code_call(
    sess: &Session,
    answer: &str,
    request: &str,
    tools: &[ToolSpec],
    before: &answer_check::FilesBefore,
) -> Option<(String, String, String)> {
    let file = answer_check::code_file(request)?;
    // Code that is the file as it was when the turn started is a quote of it, not a change:
    // writing it would undo what the turn changed (recorded on the real tier, round 15: a
    // typo fixed with `sed -i`, then the original function shown and written back over it).
    if let Some(old) = before.content_of(&file)
        && answer_check::with_shown_functions(answer, old, &file)
            .is_some_and(|(text, _)| text.trim_end() == old.trim_end())
    {
        return None;
    }
    let path = sess.turn_context().config.cwd.join(&file);
    let meta = match tokio::fs::symlink_metadata(&path).await {
        Ok(meta) => meta,
        // A file the request asks for that is not there yet (and was not when the turn
        // started): the one Python block the answer shows is its text (recorded on the real
        // tier: write-script, `count.py` shown whole in a fence between `touch` and `chmod`
        // fences, and never written).
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound && before.content_of(&file).is_none() =>
        {
            let text = answer_check::new_file_text(answer)?;
            let (name, args) = answer_check::shell_call(tools, &write_command(&file, &text)?)?;
            let warning = format!(
                "the model showed the code of `{file}` in its answer instead of writing it; writing it with a `{name}` call"
            );
            return Some((name, args, warning));
        }
        Err(_) => return None,
    };
    if !meta.is_file() || meta.len() > answer_check::shown_code::MAX_FILE_BYTES {
        return None;
    }
    let content = tokio::fs::read_to_string(&path).await.ok()?;
    let (new, names) = answer_check::with_shown_functions(answer, &content, &file)?;
    let (name, args) = answer_check::shell_call(tools, &write_command(&file, &new)?)?;
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let warning = format!(
        "the model showed code for {} in its answer instead of writing it; writing it into `{file}` with a `{name}` call",
        names.join(", ")
    );
    Some((name, args, warning))
}

/// Asked to implement a function, a small model calls it as a tool (recorded on the real
/// tier, round 19: `{"name": "is_palindrome", "arguments": {"text": "racecar"}}`, twice).
/// The note then says what the name is and where it goes.
pub(super) fn function_called_as_tool(
    problem: &Unfinished,
    request: &str,
    tools: &[ToolSpec],
) -> Option<String> {
    let Unfinished::UnrunCall {
        name,
        offered: false,
    } = problem
    else {
        return None;
    };
    let named = answer_check::contains_word(request, name);
    let file = answer_check::code_file(request)?;
    let (shell, _) = answer_check::shell_call(tools, "true")?;
    named.then(|| {
        format!(
            "`{name}` is not a tool: it is the function the request asks you to write. Write the whole new `{file}` with `{shell}`."
        )
    })
}

/// A change to a Python file's functions (or a new Python file) can also be answered with
/// the code in a ```` ```python ```` block, which the engine writes (see `shown_code_call`):
/// the note says
/// so, since a small model writes a correct function far more often than a correct shell
/// call that writes it (recorded on the real tier: implement-function 0 of 8 in rounds
/// 16–19, with `is_palindrome` right in a block, or in a mangled heredoc, in most runs).
pub(super) fn functions_may_be_shown(
    problem: &Unfinished,
    request: &str,
    before: &answer_check::FilesBefore,
    file_exists: bool,
) -> Option<String> {
    if matches!(
        problem,
        Unfinished::OutputNotReported { .. }
            | Unfinished::MissingPath { .. }
            | Unfinished::FileNotNamed { .. }
    ) {
        return None;
    }
    let file = answer_check::code_file(request)?;
    // A new file: the whole of it (see `shown_code_call`).
    let Some(content) = before.content_of(&file) else {
        return (!file_exists).then(|| {
            format!(
                "Or answer with the whole of `{file}` in a ```python block: it is written for you."
            )
        });
    };
    let names = answer_check::function_names(content);
    // The function the request names, else the file's only one.
    let name = names
        .iter()
        .find(|n| answer_check::contains_word(request, n))
        .or(if names.len() == 1 {
            names.first()
        } else {
            None
        })?;
    Some(format!(
        "Or answer with the whole corrected `{name}` function in a ```python block: it is written into `{file}` for you."
    ))
}

/// The shell command that writes exactly `content` to `file`: a quoted heredoc (nothing in
/// it is expanded, and it reads as the file), or `printf` for text without a final line
/// break, which a heredoc would add.
pub(super) fn write_command(file: &str, content: &str) -> Option<String> {
    let quoted = shlex::try_quote(file).ok()?;
    if !content.is_empty() && !content.ends_with('\n') {
        let text = shlex::try_quote(content).ok()?;
        return Some(format!("printf '%s' {text} > {quoted}"));
    }
    let mut end = "OI_CODE".to_string();
    while content.lines().any(|l| l == end) {
        end.push('_');
    }
    Some(format!("cat > {quoted} <<'{end}'\n{content}{end}"))
}

/// The shell calls that run `tests` (as the request names them: a file found under the
/// working directory, or a command), each with the test it runs.
pub(super) async fn test_calls(
    sess: &Session,
    tests: Vec<String>,
    tools: &[ToolSpec],
) -> Vec<(String, (String, String))> {
    let cwd = sess.turn_context().config.cwd.clone();
    let commands = tokio::task::spawn_blocking(move || {
        tests
            .into_iter()
            .filter_map(|test| {
                let named = if test.contains(' ') {
                    test.clone()
                } else {
                    let found = answer_check::find_named(&cwd, &test)?;
                    found.strip_prefix(&cwd).ok()?.to_str()?.to_string()
                };
                Some((test, answer_check::test_command(&named)?))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    commands
        .into_iter()
        .filter_map(|(test, command)| Some((test, answer_check::shell_call(tools, &command)?)))
        .collect()
}
