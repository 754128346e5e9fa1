//! Running a harness profile's tool call: [`crate::harness::interpret`] says which primitive
//! it is, and it runs on the same path as the built-in tools: commands through
//! `shell::run_command`, file writes and string replacements as a planned patch through
//! `patch::apply_planned` (approval, atomic apply, `patch_apply_*` with the real diff), a
//! todo list as a `plan_update` event.

use super::call::{ToolCall, ToolOutcome};
use super::file_io::{read, resolve, set_content};
use super::shell::{CommandRun, run_command};
use crate::harness::{Action, InvalidCall, Replacement, TodoItem};
use crate::session::Session;
use oi_protocol::protocol::{EventMsg, PlanStep, PlanStepStatus, PlanUpdateEvent};
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Runs profile tool `call` (the caller checked that it is one).
pub(crate) async fn handle(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let action = match crate::harness::interpret(call.name, call.arguments) {
        Some(Ok(action)) => action,
        Some(Err(refused)) => return ToolOutcome::err(refused.to_string()),
        None => return ToolOutcome::err(format!("unknown tool `{}`", call.name)),
    };
    let cwd = sess.turn_context().config.cwd.clone();
    match action {
        Action::Command(req) => {
            // Claude Code's Bash can ask for escalation up front; the other profiles' shells
            // cannot, so under `on-request` a command the sandbox stopped is offered to the
            // user to run outside it, as `on-failure` does.
            let ask_after_denial = crate::harness::is_shell_tool(call.name) && call.name != "Bash";
            let run = CommandRun {
                argv: req.argv,
                workdir: req.workdir,
                timeout: req.timeout,
                escalation: req.escalation,
                ask_after_denial,
            };
            run_command(sess, call, run, cancel).await
        }
        Action::Write {
            path,
            content,
            append,
        } => {
            let target = resolve(&cwd, &path);
            let contents = if append {
                match read(&target).await {
                    Ok(Some(old)) => old + &content,
                    Ok(None) => content,
                    Err(e) => return ToolOutcome::err(format!("{}: {e}", call.name)),
                }
            } else {
                content
            };
            set_content(sess, call, target, contents, &cwd, cancel).await
        }
        Action::Replace { path, edits } => {
            let target = resolve(&cwd, &path);
            let old = match read(&target).await {
                Ok(old) => old,
                Err(e) => return ToolOutcome::err(format!("{}: {e}", call.name)),
            };
            let contents = match replaced(old, &edits, &path, call.name) {
                Ok(c) => c,
                Err(message) => {
                    return ToolOutcome::err(format!(
                        "{}: {message}. No file was changed.",
                        call.name
                    ));
                }
            };
            set_content(sess, call, target, contents, &cwd, cancel).await
        }
        Action::Todo(items) => todo(sess, call, items),
        Action::View(request) => super::viewer::view(sess, request, &cwd).await,
        Action::SearchFile { term, file } => {
            let Some(file) = file.or_else(|| sess.open_file().map(|f| f.shown)) else {
                return ToolOutcome::err(
                    "No file is open: give `file`, or `open` one first.".to_string(),
                );
            };
            let req = crate::harness::search_file(&term, &file);
            let run = CommandRun {
                argv: req.argv,
                workdir: None,
                timeout: None,
                escalation: None,
                ask_after_denial: false,
            };
            run_command(sess, call, run, cancel).await
        }
        Action::LineEdit { first, last, text } => {
            super::viewer::edit(sess, call, (first, last), &text, &cwd, cancel).await
        }
        Action::Create(path) => super::viewer::create(sess, call, &path, &cwd, cancel).await,
        Action::Submit => ToolOutcome::ok(
            "Submitted. Your changes are the files as they are now. End your turn with a few lines on what you changed and how you checked it.",
        ),
    }
}

/// `old` with `edits` applied in order; the error says what the model must change. An
/// empty `old_string` on a missing file creates it (how these harnesses make new files).
fn replaced(
    old: Option<String>,
    edits: &[Replacement],
    shown: &Path,
    tool: &str,
) -> Result<String, InvalidCall> {
    let shown = shown.display();
    // How this tool says "every occurrence", so the model can fix its call at once.
    let all = |n: usize| match tool {
        "replace" | "edit" => format!("send the call again with `\"expected_replacements\": {n}`"),
        "StrReplaceFile" => {
            "send the call again with `\"replace_all\": true` in the edit".to_string()
        }
        "edit_file" => {
            "make one call per occurrence, each with enough of its surrounding lines to be unique"
                .to_string()
        }
        _ => "send the call again with `\"replace_all\": true`".to_string(),
    };
    let Some(mut text) = old else {
        return match edits {
            [only] if only.old.is_empty() => Ok(only.new.clone()),
            _ => Err(InvalidCall(format!(
                "{shown} does not exist; create it with the write tool, or give the path of an existing file"
            ))),
        };
    };
    for edit in edits {
        if edit.old.is_empty() {
            return Err(InvalidCall(format!(
                "the text to replace is empty; copy the exact lines to change from {shown}"
            )));
        }
        if edit.old == edit.new {
            return Err(InvalidCall(
                "the old and new text are the same, so there is nothing to change".into(),
            ));
        }
        let found = text.matches(edit.old.as_str()).count();
        match (found, edit.expected) {
            (0, _) => {
                return Err(InvalidCall(format!(
                    "the text to replace was not found in {shown}. Read the file again and copy the lines exactly, with their spaces and line breaks"
                )));
            }
            (_, Some(0)) => text = text.replace(edit.old.as_str(), &edit.new),
            (1, None) => text = text.replacen(edit.old.as_str(), &edit.new, 1),
            (n, None) => {
                return Err(InvalidCall(format!(
                    "the text to replace appears {n} times in {shown}. To change all {n}, {}; to change one, include more of its surrounding lines so it appears once",
                    all(n)
                )));
            }
            (n, Some(want)) if n == want => text = text.replace(edit.old.as_str(), &edit.new),
            (n, Some(want)) => {
                return Err(InvalidCall(format!(
                    "expected {want} occurrences of the text to replace in {shown}, found {n}. To change all {n}, {}",
                    all(n)
                )));
            }
        }
    }
    Ok(text)
}

fn todo(sess: &Session, call: &ToolCall<'_>, items: Vec<TodoItem>) -> ToolOutcome {
    let listed: Vec<String> = items
        .iter()
        .map(|i| {
            let mark = match i.status {
                PlanStepStatus::Completed => "[x]",
                PlanStepStatus::InProgress => "[~]",
                PlanStepStatus::Pending => "[ ]",
            };
            format!("{mark} {}", i.text)
        })
        .collect();
    sess.send(
        call.turn_id,
        EventMsg::PlanUpdate(PlanUpdateEvent {
            explanation: None,
            plan: items
                .into_iter()
                .map(|i| PlanStep {
                    step: i.text,
                    status: i.status,
                })
                .collect(),
        }),
    );
    if listed.is_empty() {
        ToolOutcome::ok("The todo list is now empty.")
    } else {
        ToolOutcome::ok(format!("Todo list updated:\n{}", listed.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::replaced;
    use crate::harness::Replacement;
    use std::path::Path;

    fn edit(old: &str, new: &str, expected: Option<usize>) -> Replacement {
        Replacement {
            old: old.into(),
            new: new.into(),
            expected,
        }
    }

    #[test]
    fn a_unique_match_is_replaced() {
        let out = replaced(
            Some("a apple b\n".into()),
            &[edit("apple", "banana", None)],
            Path::new("f"),
            "Edit",
        );
        assert_eq!(out.unwrap(), "a banana b\n");
    }

    #[test]
    fn several_matches_need_replace_all_or_the_right_count() {
        let text = || Some("apple apple\n".to_string());
        let err = replaced(
            text(),
            &[edit("apple", "pear", None)],
            Path::new("f"),
            "Edit",
        )
        .unwrap_err()
        .0;
        assert!(
            err.contains("appears 2 times") && err.contains("\"replace_all\": true"),
            "{err}"
        );
        let err = replaced(
            text(),
            &[edit("apple", "pear", None)],
            Path::new("f"),
            "replace",
        )
        .unwrap_err()
        .0;
        assert!(err.contains("\"expected_replacements\": 2"), "{err}");
        assert_eq!(
            replaced(
                text(),
                &[edit("apple", "pear", Some(0))],
                Path::new("f"),
                "Edit"
            )
            .unwrap(),
            "pear pear\n"
        );
        assert_eq!(
            replaced(
                text(),
                &[edit("apple", "pear", Some(2))],
                Path::new("f"),
                "Edit"
            )
            .unwrap(),
            "pear pear\n"
        );
        let err = replaced(
            text(),
            &[edit("apple", "pear", Some(3))],
            Path::new("f"),
            "Edit",
        )
        .unwrap_err()
        .0;
        assert!(err.contains("expected 3"), "{err}");
    }

    #[test]
    fn text_not_found_says_to_read_the_file_again() {
        let err = replaced(
            Some("x\n".into()),
            &[edit("y", "z", None)],
            Path::new("f.txt"),
            "Edit",
        )
        .unwrap_err()
        .0;
        assert!(
            err.contains("not found in f.txt") && err.contains("Read the file again"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_old_text_creates_a_missing_file_only() {
        assert_eq!(
            replaced(None, &[edit("", "new\n", None)], Path::new("n"), "Edit").unwrap(),
            "new\n"
        );
        assert!(
            replaced(
                Some("x".into()),
                &[edit("", "y", None)],
                Path::new("n"),
                "Edit"
            )
            .is_err()
        );
        assert!(
            replaced(None, &[edit("a", "b", None)], Path::new("n"), "Edit")
                .unwrap_err()
                .0
                .contains("does not exist")
        );
    }

    #[test]
    fn edits_apply_in_order() {
        let out = replaced(
            Some("one two\n".into()),
            &[edit("one", "1", None), edit("1 two", "1 2", None)],
            Path::new("f"),
            "Edit",
        );
        assert_eq!(out.unwrap(), "1 2\n");
    }
}
