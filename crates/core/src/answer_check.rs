//! Is a final answer really the end of the turn? Small models often end a turn with a tool
//! call written as text that nothing ran, or with a claim of work no tool did. Either would
//! be reported as success; the turn loop asks the model once to do it properly, and fails
//! the turn if the answer is still unfinished.

use crate::tools::call::is_shell_tool;
use crate::tools::printed_output;
use oi_protocol::models::{ResponseItem, Role, ToolSpec};
use std::path::Path;

mod notes;
pub(crate) mod shown_code;
mod shown_command;
mod task;

/// Why an answer does not finish the turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unfinished {
    /// The answer holds a call nobody ran. `offered` is false for a tool that does not exist.
    UnrunCall { name: String, offered: bool },
    /// The answer says work was done (`quote`, as written), and no tool ran in the thread.
    Claim { quote: String },
    /// The user asked for a change, and the answer shows the code or patch for it while no
    /// tool in this turn wrote anything: the files are unchanged.
    WorkShown,
    /// The answer announces what the model will do ("I will run …"), and no tool ran in the
    /// turn: it stopped before starting.
    Announced,
    /// The user asked what a command printed; the command ran, and the answer does not say.
    OutputNotReported { output: String },
    /// The answer repeats the note the model was sent (small models parrot it) instead of
    /// doing what it asked.
    Parroted,
    /// A change was asked for, the change the model tried failed ("No file was changed"),
    /// and the answer passes that error on instead of fixing the call: nothing was done.
    GaveUpOnError,
    /// Asked a question, the model answered with nothing but a path, and no such file or
    /// folder exists (small models make one up instead of searching).
    MissingPath { path: String },
    /// What the task's own words say must hold does not: `missing` says what, one phrase
    /// each ("`run.sh` is not executable"), read from the working directory and the
    /// commands the turn ran.
    NotDone { missing: Vec<String> },
    /// Asked which file holds `name`, the model answered with no file that does, while a
    /// file of the project does (recorded: it searched for a made-up path and answered
    /// that the function does not exist).
    FileNotNamed { name: String },
}

/// Words of the errors a failed file change gives the model ("No file was changed", and the
/// fixes the string-replace tools suggest); an answer that repeats them passes the error on.
const CHANGE_ERRORS: &[&str] = &[
    "No file was changed",
    "send the call again",
    "Read the file again and copy",
];

/// How the note of the files a request names starts (`named_files` writes it): the turn's
/// checks count the files it shows as read.
pub(crate) const NAMED_FILES_MARKER: &str = "<named_files>";

/// Words of the notes [`Unfinished::nudge`] sends: an answer that repeats them did nothing.
const NOTE_MARKERS: &[&str] = &[
    "<system_note>",
    "It was NOT run",
    "so nothing was done. Do the work",
    // The ends of the notes, which a small model repeats as its whole answer (recorded in
    // round 15: "answer with only the call, with no explanation around it.").
    "with no explanation around it",
    "block itself, with nothing after it",
    "If you cannot, say plainly",
    "Do not repeat the note",
    "Finish it now with the tools",
    "The user's request, still to be done",
];

/// First-person claims of work a tool would have done, and passive ones with "successfully"
/// (lower case). A statement of what *would* be done ("I would create") does not match.
const CLAIMS: &[&str] = &[
    "i have created",
    "i've created",
    "i created",
    "i have written",
    "i've written",
    "i wrote",
    "i have updated",
    "i've updated",
    "i updated",
    "i have modified",
    "i've modified",
    "i modified",
    "i have edited",
    "i've edited",
    "i edited",
    "i have added",
    "i've added",
    "i added",
    "i have fixed",
    "i've fixed",
    "i fixed",
    "i have changed",
    "i've changed",
    "i have replaced",
    "i've replaced",
    "i replaced",
    "i have deleted",
    "i've deleted",
    "i deleted",
    "i have renamed",
    "i've renamed",
    "i have saved",
    "i've saved",
    "i have run",
    "i've run",
    "i ran",
    "i have executed",
    "i've executed",
    "i executed",
    "successfully created",
    "successfully updated",
    "successfully written",
    "successfully modified",
    "successfully executed",
    "successfully ran",
];

/// What the turn did before its final answer.
#[derive(Clone, Debug, Default)]
pub(crate) struct TurnSoFar<'a> {
    /// The user's request that started the turn.
    pub request: &'a str,
    /// The calls run in this turn that succeeded: tool name and raw arguments. (A failed
    /// patch wrote nothing, and an answer quoting it is no recap of work done.)
    pub calls: Vec<(&'a str, &'a str)>,
    /// What the successful shell commands of this turn printed, in order.
    pub outputs: Vec<&'a str>,
    /// Some tool call exists anywhere in the thread's history (a claim may then be about
    /// earlier work, so it is not held against the turn).
    pub tool_ran_in_thread: bool,
    /// A file change of this turn failed (a patch, write or edit whose output says so;
    /// failing shell commands are not counted, a failing test run is normal work).
    pub change_failed: bool,
}

pub(crate) use shown_code::{code_file, function_names, new_file_text, with_shown_functions};
pub(crate) use shown_command::{shell_call, shown_command};
pub(crate) use task::{
    FilesBefore, Step, asked_definition, contains_word, files_naming, find_named, named_paths,
    renamed_name, test_command,
};

/// What this turn did, read from the thread's history; owned, so the state lock is not held
/// while the answer is checked. [`TurnRecord::view`] is what the checks read.
pub(crate) struct TurnRecord {
    request: String,
    calls: Vec<(String, String)>,
    outputs: Vec<String>,
    tool_ran_in_thread: bool,
    change_failed: bool,
    /// A call of this turn was refused at its approval: what it would have done is undone
    /// by the user's decision, which the model is not asked to get around.
    refused: bool,
    /// Every call of this turn that has an output, in order: what ran and how it ended.
    steps: Vec<Step>,
}

/// Where the last user message of `history` is: the start of the turn it belongs to.
fn last_user_message(history: &[ResponseItem]) -> Option<usize> {
    history.iter().rposition(|i| {
        matches!(
            i,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    })
}

/// The request the turn answers: the last user message's text (empty when there is none).
/// Cheap, for callers that need only it; [`TurnRecord::of_history`] reads the whole turn.
pub(crate) fn request_of(history: &[ResponseItem]) -> String {
    last_user_message(history)
        .and_then(|p| history[p].message_text())
        .unwrap_or_default()
}

impl TurnRecord {
    /// The turn is everything after the last user message (the request that started it, or
    /// steering input since; developer notes are not user messages).
    pub(crate) fn of_history(history: &[ResponseItem]) -> Self {
        let last_user = last_user_message(history);
        let request = request_of(history);
        let this_turn = &history[last_user.map_or(0, |p| p + 1)..];
        // A call counts when its output says it succeeded: a failed patch wrote nothing.
        let output_of = |id: &str| {
            this_turn.iter().find_map(|i| match i {
                ResponseItem::FunctionCallOutput { call_id, output }
                    if call_id == id && output.success != Some(false) =>
                {
                    Some(output)
                }
                _ => None,
            })
        };
        let failed = |id: &str| {
            this_turn.iter().any(|i| {
                matches!(i, ResponseItem::FunctionCallOutput { call_id, output }
                    if call_id == id && output.success == Some(false))
            })
        };
        let change_failed = this_turn.iter().any(|i| {
            matches!(i, ResponseItem::FunctionCall { call_id, name, arguments }
                if !is_shell_tool(name) && may_write(name, arguments) && failed(call_id))
        });
        let refused = this_turn.iter().any(|i| {
            matches!(i, ResponseItem::FunctionCallOutput { output, .. }
                if output.success == Some(false)
                    && crate::tools::call::was_refused(&output.text_content()))
        });
        let mut calls = Vec::new();
        let mut outputs = Vec::new();
        let mut steps = Vec::new();
        for item in this_turn {
            // The files the engine showed the model with the request were read.
            if let ResponseItem::Message {
                role: Role::Developer,
                ..
            } = item
                && let Some(text) = item.message_text()
                && text.starts_with(NAMED_FILES_MARKER)
            {
                steps.push(Step {
                    command: None,
                    ok: true,
                    writes: false,
                    args: text,
                });
            }
            if let ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } = item
                && let Some((ok, missing_program)) = this_turn.iter().find_map(|i| match i {
                    ResponseItem::FunctionCallOutput {
                        call_id: id,
                        output,
                    } if id == call_id => Some((
                        output.success != Some(false),
                        output.text_content().starts_with("Exit code: 127\n"),
                    )),
                    _ => None,
                })
            {
                steps.push(Step {
                    // A command whose program the shell could not find ran nothing a check
                    // can count (recorded: `sed … && pytest test_greet.py` with no pytest
                    // installed was taken for a failing run of the test).
                    command: (is_shell_tool(name) && !missing_program).then(|| arguments.clone()),
                    ok,
                    writes: may_write(name, arguments),
                    args: arguments.clone(),
                });
            }
        }
        for item in this_turn {
            if let ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } = item
                && let Some(output) = output_of(call_id)
            {
                calls.push((name.clone(), arguments.clone()));
                if is_shell_tool(name) || crate::harness::only_reads(name) {
                    outputs.push(printed_output(&output.text_content()).to_string());
                }
            }
        }
        Self {
            request,
            calls,
            outputs,
            tool_ran_in_thread: history
                .iter()
                .any(|i| matches!(i, ResponseItem::FunctionCall { .. })),
            change_failed,
            refused,
            steps,
        }
    }

    /// Whether the request states anything [`TurnRecord::unmet_in`] can check.
    pub(crate) fn names_checkable_work(&self) -> bool {
        !is_question(&self.request) && !task::expectations(&self.request).is_empty()
    }

    /// The tests the request says must pass, a change being asked for.
    pub(crate) fn tests_to_pass(&self) -> Vec<String> {
        if is_question(&self.request) || !asks_for_change(&self.request) {
            return Vec::new();
        }
        task::expectations(&self.request)
            .into_iter()
            .filter_map(|e| match e {
                task::Expectation::Passes { test } => Some(test),
                _ => None,
            })
            .collect()
    }

    /// The tests the request says must pass (a change being asked for) that no command of
    /// the turn ran since its last change.
    pub(crate) fn unrun_tests(&self) -> Vec<String> {
        self.tests_to_pass()
            .into_iter()
            .filter(|test| {
                matches!(
                    task::test_run(test, &self.steps),
                    task::TestRun::NotRun | task::TestRun::NotRunSinceChange
                )
            })
            .collect()
    }

    /// What the task's words say must hold and does not, in `cwd` (reads the disk: call it
    /// off the async workers). Questions state nothing; a test to pass counts only when a
    /// change was asked for ("run test_add.py and say whether it passes" asks none).
    /// `before`: the files the request names a change to, as the turn found them; the
    /// lines of theirs the task does not touch must still be there.
    pub(crate) fn unmet_in(&self, cwd: &Path, before: &FilesBefore) -> Option<Unfinished> {
        if is_question(&self.request) {
            return None;
        }
        let change = asks_for_change(&self.request);
        let expected: Vec<task::Expectation> = task::expectations(&self.request)
            .into_iter()
            .filter(|e| change || !matches!(e, task::Expectation::Passes { .. }))
            .collect();
        let mut missing = task::unmet(&expected, cwd, &self.steps);
        missing.extend(before.lost(&self.request, &expected, cwd));
        (!missing.is_empty()).then_some(Unfinished::NotDone { missing })
    }

    /// Whether a call of this turn had exactly these arguments.
    pub(crate) fn ran_with(&self, arguments: &str) -> bool {
        self.steps.iter().any(|s| s.args == arguments)
    }

    /// The request the turn answers (the last user message).
    pub(crate) fn request(&self) -> &str {
        &self.request
    }

    /// Whether a call of this turn was refused at its approval (by the user, or by an
    /// approval that never came).
    pub(crate) fn refused(&self) -> bool {
        self.refused
    }

    pub(crate) fn view(&self) -> TurnSoFar<'_> {
        TurnSoFar {
            request: &self.request,
            calls: self
                .calls
                .iter()
                .map(|(n, a)| (n.as_str(), a.as_str()))
                .collect(),
            outputs: self.outputs.iter().map(String::as_str).collect(),
            tool_ran_in_thread: self.tool_ran_in_thread,
            change_failed: self.change_failed,
        }
    }
}

/// After the model was already asked once to finish properly: the request asks for a change
/// and nothing in the turn could have made it (recorded: after the note the model ran
/// `echo $SHELL` and answered "To confirm the shell command runs in the correct
/// environment.").
pub(crate) fn made_no_change(turn: &TurnSoFar<'_>) -> bool {
    !is_question(turn.request)
        && asks_for_change(turn.request)
        && !turn.calls.iter().any(|(name, args)| may_write(name, args))
}

/// Whether the answer is nothing but one block of call-like markup: a JSON object or an
/// XML-ish element, bare or fenced.
fn only_markup(answer: &str) -> bool {
    let body = strip_fence(answer);
    (body.starts_with('{') && body.ends_with('}')) || (body.starts_with('<') && body.ends_with('>'))
}

/// Whether a question asks about tool calls themselves (then quoting one answers it).
fn asks_about_calls(request: &str) -> bool {
    words(request).any(|w| {
        matches!(
            w.as_str(),
            "call" | "calls" | "json" | "tool" | "tools" | "format" | "example" | "schema"
        )
    })
}

/// `text` without surrounding whitespace and one surrounding code fence.
fn strip_fence(text: &str) -> &str {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```")
        && let Some(inner) = rest.strip_suffix("```")
    {
        // Skip the fence's info string (```json).
        return inner
            .split_once('\n')
            .map_or(inner, |(_, body)| body)
            .trim();
    }
    t
}

/// The path a question's answer consists of, if it is nothing but one: fenced, backticked,
/// quoted or bare, one word with a `/` or a file extension. The caller checks whether it
/// exists.
pub(crate) fn answered_path(answer: &str, request: &str) -> Option<String> {
    if !is_question(request) {
        return None;
    }
    let body = without_tag(strip_fence(answer))
        .trim_matches(|c: char| c == '`' || c == '"' || c == '\'')
        .trim_end_matches('.');
    if body.is_empty()
        || body.len() > 400
        || body.chars().any(char::is_whitespace)
        || body.contains("://")
    {
        return None;
    }
    let name = body.rsplit('/').next().unwrap_or(body);
    let has_extension = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=6).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    });
    (body.contains('/') || has_extension).then(|| body.to_string())
}

/// `text` without one XML-ish tag pair around all of it (recorded on the real tier, round
/// 21: `<tools>/…/tools/build/steps.py</tools>`, a right path taken for a made-up one).
fn without_tag(text: &str) -> &str {
    let text = text.trim();
    let Some(rest) = text.strip_prefix('<') else {
        return text;
    };
    let Some((tag, inner)) = rest.split_once('>') else {
        return text;
    };
    let plain = !tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match inner.strip_suffix(&format!("</{tag}>")) {
        Some(inner) if plain => inner.trim(),
        _ => text,
    }
}

/// Whether `answer` names one of `files` (paths relative to the working directory): by its
/// path, or by its bare name when that name is unique and the question did not ask for a
/// path.
pub(crate) fn names_one_of(answer: &str, files: &[String], request: &str) -> bool {
    let path_asked = words(request).any(|w| w == "path" || w == "paths");
    let base = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
    files.iter().any(|f| {
        answer.contains(f.as_str())
            || (!path_asked
                && files.iter().filter(|g| base(g) == base(f)).count() == 1
                && answer.contains(base(f).as_str()))
    })
}

/// Words of a request that asks for files to change (whole words, lower case).
const CHANGE_VERBS: &[&str] = &[
    "create",
    "write",
    "fix",
    "edit",
    "change",
    "add",
    "replace",
    "rename",
    "delete",
    "remove",
    "update",
    "implement",
    "refactor",
    "append",
    "modify",
    "move",
    "insert",
    // "Record the deploy in deploys.log", "save the output to out.txt": the skill trial's
    // model answered the first with a command it never ran, and nothing held it back.
    "record",
    "save",
];

/// How a question starts: asking how to do something is not asking for it to be done.
const QUESTION_STARTS: &[&str] = &[
    "how", "what", "why", "which", "where", "when", "who", "explain", "show", "describe",
];

/// How a request phrased as a question still asks for something to be done ("Can you fix
/// it?").
const REQUEST_STARTS: &[&str] = &["can", "could", "would", "will", "please"];

/// Parts of a shell command that write files. A command without any is taken to only read.
const WRITING_SHELL: &[&str] = &[
    ">", "tee", "sed -i", "perl -i", "mv ", "cp ", "touch", "mkdir", "rm ", "<<", "install",
    "git ", "patch", "truncate", "ln ", "chmod", "open(", "write",
];

/// An answer the model wrapped whole in the `<system_note>` tags the engine's notes come in,
/// as its own words inside them (recorded on the real tier: `<system_note>\nThe lines
/// containing TODO have been deleted from notes.txt.\n</system_note>` after doing just that;
/// the wrapper alone made it a parroted note and the finished task failed). The closing tag
/// may be missing (the model stopped before it), and an echoed `<environment_context>` block
/// may come first (both recorded on implement-function runs). An answer that repeats a
/// note's words is still a parroted note ([`check`] reads the inner text).
pub(crate) fn without_note_wrapper(answer: &str) -> &str {
    const CONTEXT_END: &str = "</environment_context>";
    let mut trimmed = answer.trim();
    if trimmed.starts_with("<environment_context>")
        && let Some(end) = trimmed.find(CONTEXT_END)
    {
        trimmed = trimmed[end + CONTEXT_END.len()..].trim_start();
    }
    let Some(rest) = trimmed.strip_prefix("<system_note>") else {
        return answer;
    };
    let inner = rest.strip_suffix("</system_note>").unwrap_or(rest).trim();
    if inner.is_empty() || inner.contains("<system_note>") || inner.contains("</system_note>") {
        return answer;
    }
    inner
}

/// Checks a final answer against what the turn did.
pub(crate) fn check(answer: &str, tools: &[ToolSpec], turn: &TurnSoFar<'_>) -> Option<Unfinished> {
    if tools.is_empty() {
        return None;
    }
    if NOTE_MARKERS.iter().any(|m| answer.contains(m)) {
        return Some(Unfinished::Parroted);
    }
    // A failed change followed by an answer, with nothing written since, leaves the task
    // undone however the answer words it ("The patch was not applied because …").
    if (turn.change_failed || CHANGE_ERRORS.iter().any(|m| answer.contains(m)))
        && !is_question(turn.request)
        && asks_for_change(turn.request)
        && !turn.calls.iter().any(|(name, args)| may_write(name, args))
    {
        return Some(Unfinished::GaveUpOnError);
    }
    // Asked how calls or patches look, a model may quote them: that is the answer. An
    // answer that is nothing but a call is no answer to any other question.
    let question =
        is_question(turn.request) && (asks_about_calls(turn.request) || !only_markup(answer));
    // A quoted call of a tool that did run in this turn is a recap of what was done
    // ("I used `apply_patch` with this input: …", recorded after a successful patch).
    let ran_here = |name: &str| turn.calls.iter().any(|(n, _)| *n == name);
    if !question
        && let Some(name) = oi_model_client::unrun_tool_call(answer, tools)
        && !ran_here(&name)
    {
        let offered = tools.iter().any(|t| t.name == name);
        return Some(Unfinished::UnrunCall { name, offered });
    }
    // A patch in the answer text is an `apply_patch` call that nothing ran.
    if !question
        && !ran_here("apply_patch")
        && answer.contains("*** Begin Patch")
        && tools.iter().any(|t| t.name == "apply_patch")
    {
        return Some(Unfinished::UnrunCall {
            name: "apply_patch".into(),
            offered: true,
        });
    }
    if !question
        && asks_for_change(turn.request)
        && has_code_block(answer)
        && !turn.calls.iter().any(|(name, args)| may_write(name, args))
    {
        return Some(Unfinished::WorkShown);
    }
    if !question && turn.calls.is_empty() && announces(answer) {
        return Some(Unfinished::Announced);
    }
    if let Some(output) = unreported_output(answer, turn) {
        return Some(Unfinished::OutputNotReported { output });
    }
    if let Some(quote) = claimed_tool_use(answer, tools, &turn.calls) {
        return Some(Unfinished::Claim { quote });
    }
    if turn.tool_ran_in_thread {
        return None;
    }
    claim(answer).map(|quote| Unfinished::Claim { quote })
}

/// How an answer announces work it has not started (lower case, with the apostrophes made
/// plain).
const ANNOUNCEMENTS: &[&str] = &[
    "i will ",
    "i'll ",
    "let me ",
    "i am going to ",
    "i'm going to ",
    "i shall ",
    "next, i ",
];

/// The answer says what the model is about to do (recorded: "I will run the command to
/// execute `python3 test_calc.py` and fix the bug", and nothing ran).
fn announces(answer: &str) -> bool {
    let lower = answer.to_ascii_lowercase().replace('\u{2019}', "'");
    ANNOUNCEMENTS.iter().any(|a| {
        lower.match_indices(a).any(|(i, _)| {
            let starts_word = i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric();
            // "Let me know if…" closes an answer; it announces nothing.
            starts_word && !lower[i + a.len()..].starts_with("know")
        })
    })
}

/// Words of a request that asks for a command's output.
const OUTPUT_WORDS: &[&str] = &[
    "print", "prints", "printed", "output", "outputs", "says", "said", "shows", "showed",
    "returns", "returned",
];

/// Asked what a command printed, the answer quotes none of what the last command printed
/// (recorded: "you can use the following command: `cat secret.txt`" after running it).
/// Only short outputs count: a long one is summarised, not quoted.
fn unreported_output(answer: &str, turn: &TurnSoFar<'_>) -> Option<String> {
    // "Write a script that prints hello" asks for a change, not for what a command printed.
    if !words(turn.request).any(|w| OUTPUT_WORDS.contains(&w.as_str()))
        || asks_for_change(turn.request)
    {
        return None;
    }
    let output = turn.outputs.last()?.trim();
    if output.is_empty() || output.len() > 2000 {
        return None;
    }
    let quoted = output
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 2)
        .any(|l| answer.contains(l));
    (!quoted).then(|| output.to_string())
}

/// The answer says it used a tool ("I then used the `apply_patch` function", recorded) that
/// did not run in this turn.
fn claimed_tool_use(answer: &str, tools: &[ToolSpec], calls: &[(&str, &str)]) -> Option<String> {
    let lower = answer.to_ascii_lowercase();
    for t in tools {
        if calls.iter().any(|(name, _)| *name == t.name) {
            continue;
        }
        let n = t.name.to_ascii_lowercase();
        let phrases = [
            format!("used the `{n}`"),
            format!("used `{n}`"),
            format!("used the {n} "),
            format!("using the `{n}`"),
            format!("using `{n}`"),
            format!("ran `{n}`"),
        ];
        if let Some(at) = phrases.iter().filter_map(|p| lower.find(p.as_str())).min() {
            return Some(quote_from(answer, at));
        }
    }
    None
}

/// The words of `text`, lower case. A file or identifier (`test_add.py`, `src/add`,
/// `add_item`) is one word of its own, so a verb inside a name is no verb.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().flat_map(|raw| {
        let t = raw.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
        let name = t.contains(['_', '/']) || task::looks_like_path(t);
        let parts: Vec<String> = if name {
            vec![t.to_ascii_lowercase()]
        } else {
            t.split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect()
        };
        parts.into_iter().filter(|w| !w.is_empty())
    })
}

/// A request that asks about something rather than for something to be done.
pub(crate) fn is_question(request: &str) -> bool {
    let trimmed = request.trim();
    let first = words(trimmed).next().unwrap_or_default();
    if REQUEST_STARTS.contains(&first.as_str()) {
        return false;
    }
    trimmed.ends_with('?') || QUESTION_STARTS.contains(&first.as_str())
}

fn asks_for_change(request: &str) -> bool {
    words(request).any(|w| CHANGE_VERBS.contains(&w.as_str()))
}

fn has_code_block(answer: &str) -> bool {
    answer.lines().any(|l| l.trim_start().starts_with("```"))
}

/// Whether a call may have changed files: any tool but a plainly reading shell command.
fn may_write(name: &str, args: &str) -> bool {
    if crate::harness::only_reads(name) {
        return false;
    }
    if !is_shell_tool(name) {
        return true;
    }
    // Escaped JSON: `>` may appear as `\u003e` in some encoders.
    let args = args.replace("\\u003e", ">");
    WRITING_SHELL.iter().any(|w| args.contains(w))
}

/// The sentence-ish piece of `answer` that claims work, if any.
fn claim(answer: &str) -> Option<String> {
    // ASCII lower-casing keeps byte offsets, so the quote can be cut from the original.
    let lower = answer.to_ascii_lowercase();
    let lower = lower.replace('\u{2019}', "'");
    let at = CLAIMS
        .iter()
        .filter_map(|c| {
            let i = lower.find(c)?;
            // Whole words only: "i ran" must not match "wi ran" or "i randomly".
            let before_ok = i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric();
            let end = i + c.len();
            let after_ok = lower
                .as_bytes()
                .get(end)
                .is_none_or(|b| !b.is_ascii_alphanumeric());
            (before_ok && after_ok).then_some(i)
        })
        .min()?;
    if lower.len() != answer.len() {
        // A typographic apostrophe changed the length: quote from the lower-case copy.
        return Some(quote_from(&lower, at));
    }
    Some(quote_from(answer, at))
}

fn quote_from(text: &str, at: usize) -> String {
    let start = (0..=at)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let rest = &text[start..];
    // The sentence ends at a line break, or at `.`/`!` before a space (not in `hello.txt`).
    let end = rest
        .char_indices()
        .find(|(i, c)| {
            *c == '\n'
                || (matches!(c, '.' | '!')
                    && rest[i + 1..].chars().next().is_none_or(char::is_whitespace))
        })
        .map_or(rest.len(), |(i, _)| i)
        .min(120);
    let end = (0..=end)
        .rev()
        .find(|i| rest.is_char_boundary(*i))
        .unwrap_or(0);
    rest[..end].trim().to_string()
}

#[cfg(test)]
mod tests;
