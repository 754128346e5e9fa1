//! The answer policy: when the model answers (a response without calls), whether the answer
//! ends the turn, earns a note asking it to finish properly, or fails the turn.

use super::TurnFailure;
use crate::answer_check::{self, TurnRecord, Unfinished};
use crate::session::Session;
use crate::tools::call::PendingCall;
use crate::tools::tool_specs;
use oi_protocol::config_types::ToolCallFormat;
use oi_protocol::models::ResponseItem;
use serde::{Deserialize, Serialize};

mod on_behalf;
use on_behalf::{
    function_called_as_tool, functions_may_be_shown, shown_code_call, test_calls, write_command,
};

/// How the note about an empty answer starts (an answer repeating it is no answer).
pub(super) const EMPTY_ANSWER_NOTE_START: &str = "Your last answer was empty.";

/// Retries for an answer that leaves what the task names undone (`Unfinished::NotDone`).
const MAX_NOT_DONE_NUDGES: usize = 2;

/// Answers of one turn whose written calls are run (see `AnswerPolicy::shown_calls`).
const MAX_COMMANDS_FROM_TEXT: usize = 3;

/// JSON calls taken from one answer, at most (recorded: `chmod` and then `ls -l` to check).
const MAX_WRITTEN_CALLS: usize = 3;

/// Characters of the request a note repeats at its end, at most.
const MAX_REQUEST_IN_NOTE: usize = 600;

/// What the turn has done so far that decides how its next answer is judged. Part of the
/// loop's state, so a parked turn keeps it (flattened there: the stored shape is unchanged).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct AnswerPolicy {
    /// The model was already asked to finish properly (see `answer_check`).
    pub nudged: bool,
    /// The note sent was about a made-up path: a second answer that is a path which exists
    /// is checked, so it needs no tool behind it.
    pub nudged_for_path: bool,
    /// Retries for a task the directory shows unfinished: besides the one above, each says
    /// precisely what is missing, so a model that is making progress gets another.
    #[serde(default)]
    pub not_done_nudges: usize,
    /// A tool call of this turn ran.
    pub ran_calls: bool,
    /// Commands run because an answer wrote them instead of calling the shell.
    #[serde(default)]
    pub commands_from_text: usize,
    /// The files the request names a change to, as they were before the turn's tools ran.
    #[serde(default)]
    pub files_before: answer_check::FilesBefore,
    /// The agent ran the tests the request names itself, once (see `AnswerPolicy::named_tests`).
    #[serde(default)]
    pub ran_named_tests: bool,
    /// The agent put back a test the request says must pass as it is, once (see
    /// `AnswerPolicy::restored_tests`).
    #[serde(default)]
    pub restored_tests: bool,
}

/// The model's answer, as one response without calls left it.
pub(super) struct Answer<'a> {
    /// What it said (`None`: nothing, or only the note about an empty answer repeated).
    pub text: Option<&'a str>,
    /// It said something in this response.
    pub answered: bool,
    /// It stopped at its output token limit.
    pub truncated: bool,
    /// It was stopped for repeating itself (already warned about).
    pub looped: bool,
    /// It only reasoned.
    pub thought: bool,
    /// The output bound its request carried.
    pub max_output_tokens: Option<u32>,
}

/// What an answer comes to.
pub(super) enum Verdict {
    /// The model was sent a note: ask it again.
    AskAgain,
    /// The answer ends the turn.
    Complete { last_agent_message: Option<String> },
    /// The answer wrote calls (a shell command, JSON calls, code for a file) instead of
    /// making them: run them as those calls, in order (they are not in the history yet).
    RunShownCalls(Vec<PendingCall>),
}

impl AnswerPolicy {
    /// Reads the files the request names a change to, before any tool of the turn runs on
    /// them: once per request (a steered turn's new request gets its own).
    pub(super) async fn remember_files(&mut self, sess: &Session) {
        // Each step asks, so only the request is read (not the whole turn).
        let request = answer_check::request_of(&sess.state().history);
        if request.is_empty() || self.files_before.is_for(&request) {
            return;
        }
        let cwd = sess.turn_context().config.cwd.clone();
        if let Ok(before) =
            tokio::task::spawn_blocking(move || answer_check::FilesBefore::take(&request, &cwd))
                .await
        {
            self.files_before = before;
        }
    }

    /// Judges the model's answer; `Err` when the turn fails with it.
    pub(super) async fn judge(
        &mut self,
        sess: &Session,
        turn_id: &str,
        answer: Answer<'_>,
    ) -> Result<Verdict, TurnFailure> {
        if !answer.answered {
            return self.judge_silence(sess, turn_id, &answer).await;
        }
        if answer.truncated && !answer.looped {
            sess.warn(
                turn_id,
                format!(
                    "the answer was cut off: the model hit its output token limit (finish_reason \"length\"; this request allowed {}). Raise `model_max_output_tokens` in config.toml, or the server's own limit (Ollama `num_predict`, llama.cpp `-n`/`--n-predict`), or ask for a shorter answer.",
                    answer
                        .max_output_tokens
                        .map_or("no bound from us".to_string(), |n| format!("{n} tokens"))
                ),
            );
        }
        if let Some(problem) = unfinished_answer(sess, answer.text, &self.files_before).await {
            // A note's words repeated, or a call of a tool that does not exist, after work
            // the directory shows done: the task is done, and that answer is none to print
            // (recorded on the real tier: "answer with only the call, …", and a call of a
            // `text_utils.py` tool, after `is_palindrome` was written and its test passed).
            if let Some(what) = stray_answer(&problem)
                && self.ran_calls
                && work_checks_out(sess, &self.files_before).await
            {
                sess.warn(
                    turn_id,
                    format!(
                        "{what}; the task checks out in the working directory, so the turn ends"
                    ),
                );
                return Ok(Verdict::Complete {
                    last_agent_message: None,
                });
            }
            if let Some(calls) = self.restored_tests(sess, turn_id, &problem).await {
                return Ok(Verdict::RunShownCalls(calls));
            }
            if let Some(calls) = self.shown_calls(sess, turn_id, answer.text, &problem).await {
                return Ok(Verdict::RunShownCalls(calls));
            }
            if let Some(calls) = self.named_tests(sess, turn_id, &problem).await {
                return Ok(Verdict::RunShownCalls(calls));
            }
            return self.nudge_or_fail(sess, turn_id, problem).await;
        }
        self.check_second_answer(sess, answer.text)?;
        Ok(Verdict::Complete {
            last_agent_message: answer.text.map(str::to_string),
        })
    }

    /// The calls an unfinished answer wrote instead of making them, to run in order (through
    /// the same approvals and sandbox as any call): a shell command (see
    /// `answer_check::shown_command`), or, for a request that is no question, the JSON calls
    /// of offered tools the answer holds (at most [`MAX_WRITTEN_CALLS`]), or else Python
    /// functions it shows for the one file the request names (`answer_check::shown_code`).
    /// A call that already ran in this turn with the same arguments is not run again. Not
    /// after the user refused a call of this turn, only shown code for an answer that parrots
    /// a note (the note's example is no call), and at most [`MAX_COMMANDS_FROM_TEXT`] times
    /// a turn.
    async fn shown_calls(
        &mut self,
        sess: &Session,
        turn_id: &str,
        answer: Option<&str>,
        problem: &Unfinished,
    ) -> Option<Vec<PendingCall>> {
        if self.commands_from_text >= MAX_COMMANDS_FROM_TEXT {
            return None;
        }
        let parroted = matches!(problem, Unfinished::Parroted);
        let answer = answer?;
        let record = TurnRecord::of_history(&sess.state().history);
        if record.refused() {
            return None;
        }
        let tools = tool_specs(sess);
        let request = record.request();
        let running = |what: &str, name: &str| {
            let (it, call) = if what == "calls" {
                ("them", "those calls")
            } else {
                ("it", "that call")
            };
            format!(
                "the model wrote {what} in its answer instead of calling `{name}`; running {it} as {call}"
            )
        };
        let mut calls: Vec<(String, String)> = Vec::new();
        let mut shown_code = false;
        let warning = if parroted {
            // A note's example is no call, but no note holds a function of the file: a
            // parroting answer that shows one wrote it (recorded on the real tier, round 18:
            // the note's tags echoed around a correct `is_palindrome`).
            let (name, args, warning) =
                shown_code_call(sess, answer, request, &tools, &self.files_before).await?;
            calls.push((name, args));
            shown_code = true;
            warning
        } else if let Some(call) = answer_check::shown_command(answer, request, &tools) {
            let warning = running("a command", &call.0);
            calls.push(call);
            warning
        } else {
            if answer_check::is_question(request) {
                return None;
            }
            let written = oi_model_client::written_tool_calls(answer, &tools);
            if (1..=MAX_WRITTEN_CALLS).contains(&written.len()) {
                let what = if written.len() == 1 {
                    "a call"
                } else {
                    "calls"
                };
                let warning = running(what, &written[0].0);
                calls = written;
                warning
            } else {
                let (name, args, warning) =
                    shown_code_call(sess, answer, request, &tools, &self.files_before).await?;
                calls.push((name, args));
                shown_code = true;
                warning
            }
        };
        // Run once: the same call again changes nothing (recorded: a broken `awk` and a
        // `touch` each taken three times from three answers); the note says what is missing.
        calls.retain(|(_, args)| !record.ran_with(args));
        if calls.is_empty() {
            return None;
        }
        // Code the agent wrote for the model is checked at once by the tests the request
        // names: the model answers with their output in front of it (recorded on the real
        // tier: a right `is_palindrome` written, the test never run again, the turn failed).
        if shown_code {
            let tests = test_calls(sess, record.tests_to_pass(), &tools).await;
            calls.extend(tests.into_iter().map(|(_, call)| call));
        }
        self.commands_from_text += 1;
        if matches!(problem, Unfinished::UnrunCall { .. }) {
            fall_back_to_text_calls(sess, turn_id);
        }
        sess.warn(turn_id, warning);
        Some(
            calls
                .into_iter()
                .map(|(name, args)| (oi_model_client::new_call_id(), name, args))
                .collect(),
        )
    }

    /// The tests the request says must pass that the model did not run after its change,
    /// run by the agent itself, once a turn, through the shell tool (approvals and sandbox
    /// as for any call): the model then answers with their output in front of it (recorded
    /// on the real tier: `greet.py` fixed, then `test_greet.py` written as a command of its
    /// own, exit 127, or not run at all, and the turn failed on a fix that was right).
    async fn named_tests(
        &mut self,
        sess: &Session,
        turn_id: &str,
        problem: &Unfinished,
    ) -> Option<Vec<PendingCall>> {
        if self.ran_named_tests
            || !matches!(problem, Unfinished::NotDone { .. } | Unfinished::WorkShown)
        {
            return None;
        }
        let record = TurnRecord::of_history(&sess.state().history);
        if record.refused() {
            return None;
        }
        let tools = tool_specs(sess);
        let mut calls = Vec::new();
        let mut names = Vec::new();
        for (test, (name, args)) in test_calls(sess, record.unrun_tests(), &tools).await {
            if !record.ran_with(&args) {
                calls.push((oi_model_client::new_call_id(), name, args));
                names.push(format!("`{test}`"));
            }
        }
        if calls.is_empty() {
            return None;
        }
        self.ran_named_tests = true;
        sess.warn(
            turn_id,
            format!(
                "the model did not run {} after its change; running it to check the result",
                names.join(" and ")
            ),
        );
        Some(calls)
    }

    /// The tests the request says must pass as they are, which the turn changed (or
    /// removed), put back as they were by the agent, once a turn, through the shell tool
    /// (approvals and sandbox as for any call), and then run. A small model told to put a
    /// test back does not manage it (recorded on the real tier: `echo -e` over
    /// `test_text_utils.py`, its import appended at the end, and a right `is_palindrome`
    /// that then failed); the user's test is theirs, and the request said to keep it.
    async fn restored_tests(
        &mut self,
        sess: &Session,
        turn_id: &str,
        problem: &Unfinished,
    ) -> Option<Vec<PendingCall>> {
        if self.restored_tests || !matches!(problem, Unfinished::NotDone { .. }) {
            return None;
        }
        let record = TurnRecord::of_history(&sess.state().history);
        if record.refused() {
            return None;
        }
        let cwd = sess.turn_context().config.cwd.clone();
        let before = self.files_before.clone();
        let changed = {
            let cwd = cwd.clone();
            tokio::task::spawn_blocking(move || before.changed_tests(&cwd))
                .await
                .ok()?
        };
        if changed.is_empty() {
            return None;
        }
        let tools = tool_specs(sess);
        let mut calls = Vec::new();
        let mut names = Vec::new();
        for (path, content) in changed {
            let shown = path
                .strip_prefix(&cwd)
                .unwrap_or(&path)
                .to_str()?
                .to_string();
            let (name, args) = answer_check::shell_call(&tools, &write_command(&shown, &content)?)?;
            calls.push((oi_model_client::new_call_id(), name, args));
            names.push(format!("`{shown}`"));
        }
        for (_, (name, args)) in test_calls(sess, record.tests_to_pass(), &tools).await {
            calls.push((oi_model_client::new_call_id(), name, args));
        }
        self.restored_tests = true;
        sess.warn(
            turn_id,
            format!(
                "the model changed {}, which the request says must pass as it is; putting it back as it was and running it",
                names.join(" and ")
            ),
        );
        Some(calls)
    }

    /// A response with neither words nor calls.
    async fn judge_silence(
        &mut self,
        sess: &Session,
        turn_id: &str,
        answer: &Answer<'_>,
    ) -> Result<Verdict, TurnFailure> {
        // Small models sometimes stop with nothing to say after their tools ran: ask once
        // for the final answer rather than failing work that was done.
        if self.ran_calls && !answer.truncated && !self.nudged {
            self.nudged = true;
            sess.push_history(
                turn_id,
                vec![ResponseItem::developer_text(format!(
                    "{EMPTY_ANSWER_NOTE_START} If the task is done, say in one or two sentences what you did; otherwise continue with the next step."
                ))],
            )
            .await;
            return Ok(Verdict::AskAgain);
        }
        // Silent again, but its tools did what the task's words name, as the directory
        // shows: the work stands, with no words to print.
        if self.ran_calls && !answer.truncated && work_checks_out(sess, &self.files_before).await {
            return Ok(Verdict::Complete {
                last_agent_message: None,
            });
        }
        Err(empty_answer(answer.truncated, answer.thought))
    }

    /// An answer that leaves the task unfinished: a note saying what is missing while the
    /// policy allows one more, else the turn fails.
    async fn nudge_or_fail(
        &mut self,
        sess: &Session,
        turn_id: &str,
        problem: Unfinished,
    ) -> Result<Verdict, TurnFailure> {
        let text_mode = sess.tools_as_text();
        let not_done = matches!(
            problem,
            Unfinished::NotDone { .. } | Unfinished::FileNotNamed { .. }
        );
        if self.nudged && !(not_done && self.not_done_nudges < MAX_NOT_DONE_NUDGES) {
            return Err(TurnFailure::other(problem.failure(text_mode)));
        }
        self.nudged = true;
        self.not_done_nudges += usize::from(not_done);
        self.nudged_for_path = matches!(problem, Unfinished::MissingPath { .. });
        sess.warn(turn_id, problem.warning());
        if matches!(problem, Unfinished::UnrunCall { .. }) {
            fall_back_to_text_calls(sess, turn_id);
        }
        let mut nudge = problem.nudge(&tool_specs(sess), sess.tools_as_text());
        // The note ends with the request itself: a small model continues from the note's
        // last words, and repeated them as its answer when they were an instruction about
        // calls (recorded: "answer with only the call, with no explanation around it.",
        // the answer of 5 of the 25 failed runs of rounds 16 and 17).
        let request = answer_check::request_of(&sess.state().history);
        if let Some(hint) = function_called_as_tool(&problem, &request, &tool_specs(sess)) {
            nudge.push(' ');
            nudge.push_str(&hint);
        }
        let code_file_exists = match answer_check::code_file(&request) {
            Some(file) => {
                let path = sess.turn_context().config.cwd.join(file);
                tokio::fs::symlink_metadata(path).await.is_ok()
            }
            None => true,
        };
        if let Some(hint) =
            functions_may_be_shown(&problem, &request, &self.files_before, code_file_exists)
        {
            nudge.push(' ');
            nudge.push_str(&hint);
        }
        if !request.trim().is_empty() && !matches!(problem, Unfinished::OutputNotReported { .. }) {
            let request: String = request.trim().chars().take(MAX_REQUEST_IN_NOTE).collect();
            nudge.push_str(&format!(
                "\n\nThe user's request, still to be done: {request}"
            ));
        }
        sess.push_history(turn_id, vec![ResponseItem::developer_text(nudge)])
            .await;
        Ok(Verdict::AskAgain)
    }

    /// Told that its answer did nothing, the model answered again without any tool: a
    /// second answer in words ("The task was done.", recorded) cannot have done it. Nor can
    /// a turn asked for a change in which nothing that writes ran.
    fn check_second_answer(&self, sess: &Session, answer: Option<&str>) -> Result<(), TurnFailure> {
        if !self.nudged {
            return Ok(());
        }
        let request = TurnRecord::of_history(&sess.state().history)
            .view()
            .request
            .to_string();
        let checked_path = self.nudged_for_path
            && answer.is_some_and(|a| answer_check::answered_path(a, &request).is_some());
        // A question answered in words after the note is an answer ("I cannot look up the
        // weather: there is no web search tool"), unless the note was about a made-up path.
        let answers_question = !self.nudged_for_path && answer_check::is_question(&request);
        if checked_path || answers_question || (self.ran_calls && !nothing_changed(sess)) {
            return Ok(());
        }
        let what = if self.ran_calls {
            "the model was told that its answer did nothing, and it ended the turn without running anything that could make the requested change"
        } else {
            "the model was told that its answer did nothing and answered again without using any tool"
        };
        Err(TurnFailure::other(format!(
            "{what}, so the task was not done. If this model keeps doing it, set `tool_call_format = \"text\"` or use a larger model."
        )))
    }
}

/// The model writes its calls into its answers: under `tool_call_format = "auto"` the
/// session switches to text calls (once, with a warning).
fn fall_back_to_text_calls(sess: &Session, turn_id: &str) {
    if sess.tools_as_text() || sess.turn_context().config.tool_call_format != ToolCallFormat::Auto {
        return;
    }
    sess.state().text_tools_fallback = true;
    sess.warn_once(turn_id, "text_tools_fallback", || {
        "switching this session to `tool_call_format = \"text\"`: the model writes its tool calls into its answers instead of making them. Set `tool_call_format` in config.toml to choose for good (docs/providers.md, \"Tool calls as text\").".to_string()
    });
}

/// What an answer that is no answer at all did, for the kinds that say nothing about the
/// work: a repeated note, a call nothing can run.
fn stray_answer(problem: &Unfinished) -> Option<String> {
    match problem {
        Unfinished::Parroted => Some("the model repeated the agent's note as its answer".into()),
        Unfinished::UnrunCall {
            name,
            offered: false,
        } => Some(format!(
            "the model answered with a call of `{name}`, a tool that does not exist"
        )),
        _ => None,
    }
}

/// Whether the turn's final answer leaves it unfinished (see `answer_check`).
async fn unfinished_answer(
    sess: &Session,
    answer: Option<&str>,
    before: &answer_check::FilesBefore,
) -> Option<Unfinished> {
    let answer = answer?;
    let tools = tool_specs(sess);
    let record = TurnRecord::of_history(&sess.state().history);
    if let Some(problem) = answer_check::check(answer, &tools, &record.view()) {
        return Some(problem);
    }
    let cwd = sess.turn_context().config.cwd.clone();
    // A question answered with nothing but a path: the path must exist.
    let answered_path = answer_check::answered_path(answer, record.view().request);
    if let Some(path) = &answered_path
        && let Ok(false) = tokio::fs::try_exists(cwd.join(path)).await
    {
        return Some(Unfinished::MissingPath { path: path.clone() });
    }
    // Asked which file holds a name, the answer must name a file that does, when one does.
    let request = record.view().request.to_string();
    if answer_check::is_question(&request)
        && let Some(name) = answer_check::asked_definition(&request)
    {
        let (dir, wanted) = (cwd.clone(), name.clone());
        let files = tokio::task::spawn_blocking(move || answer_check::files_naming(&dir, &wanted))
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        if !files.is_empty() && !answer_check::names_one_of(answer, &files, &request) {
            return Some(Unfinished::FileNotNamed { name });
        }
        return None;
    }
    if answered_path.is_some() {
        return None;
    }
    // What the task's words name must hold in the directory, unless the user refused a call
    // of this turn: the work is then undone by their decision, and the model is not sent
    // back to get around it.
    if tools.is_empty() || record.refused() {
        return None;
    }
    let before = before.clone();
    tokio::task::spawn_blocking(move || record.unmet_in(&cwd, &before))
        .await
        .ok()
        .flatten()
}

/// Whether the turn changed files and everything the task's words name holds (checked on
/// disk; a task whose words name nothing checkable does not count as checked).
async fn work_checks_out(sess: &Session, before: &answer_check::FilesBefore) -> bool {
    let record = TurnRecord::of_history(&sess.state().history);
    if nothing_changed(sess) || !record.names_checkable_work() {
        return false;
    }
    let cwd = sess.turn_context().config.cwd.clone();
    let before = before.clone();
    tokio::task::spawn_blocking(move || record.unmet_in(&cwd, &before).is_none())
        .await
        .unwrap_or(false)
}

/// The request asked for a change and nothing in the turn could have made it.
fn nothing_changed(sess: &Session) -> bool {
    answer_check::made_no_change(&TurnRecord::of_history(&sess.state().history).view())
}

/// The failure for a response with neither an answer nor a tool call.
fn empty_answer(truncated: bool, thought: bool) -> TurnFailure {
    let message = match (truncated, thought) {
        (true, true) => {
            "the model produced no answer: it spent its whole output token limit thinking (finish_reason \"length\"). Raise the server's output limit (Ollama `num_predict`, llama.cpp `-n`) or lower the reasoning effort."
        }
        (true, false) => {
            "the model produced no answer: it stopped at its output token limit before writing anything (finish_reason \"length\"). Raise the server's output limit."
        }
        (false, true) => {
            "the model produced no answer: it only thought and then stopped. Try again, or check the server's reasoning parser settings (docs/providers.md, \"Server settings\")."
        }
        (false, false) => {
            "the model returned an empty answer (no text and no tool call). Try again; if it keeps happening, check that the server's chat template supports this model (docs/providers.md, \"Server settings\")."
        }
    };
    TurnFailure::other(message)
}
