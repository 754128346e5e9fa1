//! One turn: stream the model, run the tools it calls, repeat until it answers.

use crate::answer_check::{self, TurnRecord, Unfinished};
use crate::compact::{CompactError, compact, compact_if_needed};
use crate::context_window::{
    WindowSignal, budget_tool_outputs, output_token_bound, tool_output_budget, window_signal,
};
use crate::parking::LoopState;
use crate::prompt::{base_instructions, context_items};
use crate::repeats::Repeat;
use crate::session::{ActiveTurn, Session};
use crate::tools::{CallsRun, PendingCall, run_calls, tool_specs};
use crate::window_recovery::{
    SignalOutcome, overflow_failure, recover_from_overflow, recover_from_signal,
};
use futures::StreamExt;
use oi_model_client::{ModelError, Prompt, ResponseEvent, RetryNotice};
use oi_protocol::config_types::ToolCallFormat;
use oi_protocol::models::{ResponseItem, Role, TokenUsage};
use oi_protocol::protocol::{
    AgentMessageDeltaEvent, AgentMessageEvent, AgentReasoningDeltaEvent, AgentReasoningEvent,
    ErrorEvent, ErrorInfo, EventMsg, StreamErrorEvent, TaskCompleteEvent, TaskStartedEvent,
    TokenCountEvent, TokenUsageInfo, TurnAbortReason, TurnAbortedEvent, UserMessageEvent,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(crate) enum TurnFailure {
    Interrupted,
    Failed {
        message: String,
        info: Option<ErrorInfo>,
    },
}

struct Sampled {
    items: Vec<ResponseItem>,
    usage: Option<TokenUsage>,
    /// The model stopped at its output token limit.
    truncated: bool,
    /// Size of the request that produced this answer, to correct the token estimate.
    prompt_size: usize,
    /// The output bound the request carried.
    max_output_tokens: Option<u32>,
    /// The server counted far fewer prompt tokens than were sent (it cut the prompt).
    cut_by_server: bool,
    /// The answer was stopped because the model repeated itself (already warned about).
    looped: bool,
    /// The server paused the answer (Messages `pause_turn`): sending the conversation again
    /// lets the model continue it.
    paused: bool,
}

/// How the note about an empty answer starts (an answer repeating it is no answer).
const EMPTY_ANSWER_NOTE_START: &str = "Your last answer was empty.";

/// Retries for an answer that leaves what the task names undone (`Unfinished::NotDone`).
const MAX_NOT_DONE_NUDGES: usize = 2;

/// The output of a call whose arguments were cut off by the output token limit.
const TRUNCATED_CALL_OUTPUT: &str = "not run: your output hit the output token limit (finish_reason \"length\") while you were writing this call, so its arguments are incomplete. Make the call again with shorter arguments, e.g. write a big file in several smaller steps.";

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Start a turn (the caller has already installed `ActiveTurn`).
pub(crate) async fn run_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    user_message: UserMessageEvent,
) {
    let started = Instant::now();
    sess.record_turn_context(&turn_id);
    sess.load_project_doc().await;
    sess.begin_turn_context();
    sess.lookup_server_window(&cancel).await;
    let (window, source) = sess.context_window_and_source();
    sess.send(
        &turn_id,
        EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: turn_id.clone(),
            started_at: Some(now_unix()),
            model_context_window: Some(window),
            model_context_window_source: Some(source),
            collaboration_mode_kind: "default".into(),
        }),
    );
    sess.send(&turn_id, EventMsg::UserMessage(user_message));
    crate::tools::fetch_pending_tasks(&sess, &turn_id, &cancel).await;
    let result = turn_loop(
        &sess,
        &turn_id,
        &cancel,
        started,
        LoopState::default(),
        None,
    )
    .await;
    finish(&sess, &turn_id, result, started).await;
}

/// The continuation of a parked turn that was resumed (`parking::resume` made it active
/// again with its answers): runs the calls it waited on, then goes on with its loop under
/// the same turn id. It announces nothing of its own: the turn started long ago.
pub(crate) async fn run_resumed_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    resumed: crate::parking::Resumed,
) {
    sess.load_project_doc().await;
    sess.begin_turn_context();
    sess.lookup_server_window(&cancel).await;
    let started = resumed.started;
    // MCP tasks an earlier session left are fetched here too: the turn may have called
    // one before it parked.
    crate::tools::fetch_pending_tasks(&sess, &turn_id, &cancel).await;
    let result = turn_loop(
        &sess,
        &turn_id,
        &cancel,
        started,
        resumed.loop_state,
        Some(resumed.calls),
    )
    .await;
    finish(&sess, &turn_id, result, started).await;
}

/// Ends the turn as its loop's result says.
async fn finish(sess: &Session, turn_id: &str, result: Result<(), TurnFailure>, started: Instant) {
    let outcome = match result {
        // Completed or parked: `turn_loop` already ended (or parked) the turn (it decides
        // that where it sees late steering input).
        Ok(()) => return,
        Err(TurnFailure::Interrupted) => TurnOutcome::Interrupted,
        // What the model last said stays the turn's answer: a turn that failed for work
        // not done still shows it (exec prints it on stdout).
        Err(TurnFailure::Failed { message, info }) => TurnOutcome::Failed {
            message,
            info,
            last_agent_message: answer_of_this_turn(sess),
        },
    };
    end_turn(sess, turn_id, outcome, Some(started)).await;
}

/// How a turn ends.
pub(crate) enum TurnOutcome {
    /// `task_complete`.
    Completed { last_agent_message: Option<String> },
    /// `error`, then `task_complete` (with the model's last answer, if it gave one).
    Failed {
        message: String,
        info: Option<ErrorInfo>,
        last_agent_message: Option<String>,
    },
    /// `turn_aborted` (interrupted).
    Interrupted,
    /// `turn_aborted` (replaced: a parked turn ended by a new turn).
    Replaced,
}

impl TurnOutcome {
    fn into_events(self, turn_id: &str, duration_ms: Option<u64>) -> Vec<EventMsg> {
        let complete = |last_agent_message| {
            EventMsg::TaskComplete(TaskCompleteEvent {
                turn_id: turn_id.to_string(),
                last_agent_message,
                completed_at: Some(now_unix()),
                duration_ms,
            })
        };
        match self {
            TurnOutcome::Completed { last_agent_message } => vec![complete(last_agent_message)],
            TurnOutcome::Failed {
                message,
                info,
                last_agent_message,
            } => vec![
                EventMsg::Error(ErrorEvent {
                    message,
                    codex_error_info: info,
                }),
                complete(last_agent_message),
            ],
            TurnOutcome::Interrupted | TurnOutcome::Replaced => {
                let reason = match self {
                    TurnOutcome::Replaced => TurnAbortReason::Replaced,
                    _ => TurnAbortReason::Interrupted,
                };
                vec![EventMsg::TurnAborted(TurnAbortedEvent {
                    turn_id: Some(turn_id.to_string()),
                    reason,
                    completed_at: Some(now_unix()),
                    duration_ms,
                })]
            }
        }
    }
}

/// Whether [`end_turn`] ended the turn.
#[derive(PartialEq)]
pub(crate) enum Ended {
    Ended,
    /// A completing turn has steering input the model has not seen: it goes on.
    GoOn,
}

/// The one end of every turn (completed, failed, interrupted, compaction, crashed).
///
/// Under the state lock the turn stops being active (a completing turn with unseen
/// steering input goes on instead) and its terminal records are queued; then they are
/// made durable with no lock held and no worker blocked, and only then published, so a
/// reader of the store who reacts to the event finds the whole turn. The turn-end gate,
/// held throughout, keeps the next turn's `task_started` after these events.
pub(crate) async fn end_turn(
    sess: &Session,
    turn_id: &str,
    outcome: TurnOutcome,
    started: Option<Instant>,
) -> Ended {
    let _gate = sess.turn_end_gate().await;
    end_turn_gated(sess, turn_id, outcome, started).await
}

/// [`end_turn`] for a caller that holds the turn-end gate already (the end of a parked
/// turn, decided where turns start).
pub(crate) async fn end_turn_gated(
    sess: &Session,
    turn_id: &str,
    outcome: TurnOutcome,
    started: Option<Instant>,
) -> Ended {
    let duration_ms = started.map(|s| s.elapsed().as_millis() as u64);
    let events = {
        let mut st = sess.state();
        let ours = st.active_turn.as_ref().filter(|t| t.id == turn_id);
        let steered = ours.is_some_and(|t| !t.pending_input.is_empty());
        if steered && matches!(outcome, TurnOutcome::Completed { .. }) {
            return Ended::GoOn;
        }
        if ours.is_some() {
            st.active_turn = None;
        }
        // Pending approvals of this turn: their waiters are gone; answers given to it when
        // it was resumed are its own.
        st.pending_approvals.clear();
        st.preanswers.clear();
        st.sandboxed_runs.clear();
        let events = outcome.into_events(turn_id, duration_ms);
        for e in &events {
            sess.record_unflushed(turn_id, e);
        }
        events
    };
    sess.flush_async(turn_id).await;
    for e in events {
        sess.publish(turn_id, e);
    }
    Ended::Ended
}

/// The turn's loop: sample, run the calls, repeat until the model answers. `Ok` when the
/// turn ended (or parked) here; `Err` for the caller to end it. A resumed turn starts with
/// the calls it waited on (`resumed_calls`) and the loop's state from before its park.
async fn turn_loop(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    started: Instant,
    state: LoopState,
    mut resumed_calls: Option<Vec<PendingCall>>,
) -> Result<(), TurnFailure> {
    let max_steps = sess.turn_context().config.max_turn_steps;
    let LoopState {
        mut steps,
        // Whether the model was already asked to finish properly (see `answer_check`).
        mut nudged,
        // The note sent was about a made-up path: a second answer that is a path which
        // exists is checked, so it needs no tool behind it.
        mut nudged_for_path,
        // Retries for a task the directory shows unfinished: besides the one above, each
        // says precisely what is missing, so a model that is making progress gets another.
        mut not_done_nudges,
        mut ran_calls,
        mut last_agent_message,
        mut repeats,
    } = state;
    let mut repeat_failure: Option<String> = None;
    // What a park keeps of the loop.
    macro_rules! loop_state {
        () => {
            LoopState {
                steps,
                nudged,
                nudged_for_path,
                not_done_nudges,
                ran_calls,
                last_agent_message: last_agent_message.clone(),
                repeats: repeats.clone(),
            }
        };
    }
    loop {
        if let Some(calls) = resumed_calls.take() {
            let run = run_calls(sess, turn_id, calls, cancel).await;
            if after_calls(sess, turn_id, cancel, run, || loop_state!(), started).await? {
                return Ok(());
            }
            continue;
        }
        take_pending_input(sess, turn_id).await;
        if let Some(why) = sess.store_stalled() {
            return Err(store_stalled(&why));
        }
        steps += 1;
        if steps > max_steps {
            return Err(TurnFailure::Failed {
                message: format!(
                    "stopped this turn: the model made {max_steps} requests without finishing its answer (it kept calling tools). Raise `max_turn_steps` in config.toml if the task really needs more steps."
                ),
                info: Some(ErrorInfo::Other),
            });
        }
        // Before a request would cross the auto-compact limit (at the start of a turn, and
        // between tool calls), summarize the history so far.
        // The request is built once: the check and the send share it (unless compaction
        // replaced the history it was built from).
        let mut built = build_sized_prompt(sess);
        if compact_if_needed(sess, turn_id, cancel, built.1)
            .await
            .map_err(compact_failure)?
        {
            built = build_sized_prompt(sess);
        }
        let sampled = sample(sess, turn_id, cancel, built).await?;
        report_usage(sess, turn_id, &sampled);
        let truncated = sampled.truncated;
        let sampled_looped = sampled.looped;
        let paused = sampled.paused;
        let calls: Vec<PendingCall> = sampled
            .items
            .iter()
            .filter_map(|i| match i {
                ResponseItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => Some((call_id.clone(), name.clone(), arguments.clone())),
                _ => None,
            })
            .collect();
        let mut answered = false;
        for item in &sampled.items {
            if let ResponseItem::Message {
                role: Role::Assistant,
                ..
            } = item
            {
                last_agent_message = item.message_text();
                answered |= last_agent_message
                    .as_deref()
                    .is_some_and(|t| !t.trim().is_empty());
            }
        }
        // Small models answer the note about an empty answer by repeating it: that is no
        // answer either (recorded: exec printed the note as the model's answer).
        if answered
            && last_agent_message
                .as_deref()
                .is_some_and(|t| t.contains(EMPTY_ANSWER_NOTE_START))
        {
            answered = false;
            last_agent_message = None;
        }
        let thought = sampled
            .items
            .iter()
            .any(|i| matches!(i, ResponseItem::Reasoning { text, .. } if !text.is_empty()));
        sess.push_history(turn_id, sampled.items).await;
        // The store stopped answering: the calls are not run (a call must be stored before
        // it runs), and the turn ends now instead of waiting for the store at every step.
        if let Some(why) = sess.store_stalled() {
            let outputs = calls
                .into_iter()
                .map(|(call_id, _, _)| ResponseItem::FunctionCallOutput {
                    call_id,
                    output: crate::tools::ToolOutcome::err(
                        "not run: the thread store stopped answering, so the turn was stopped",
                    )
                    .output,
                })
                .collect();
            sess.push_history(turn_id, outputs).await;
            return Err(store_stalled(&why));
        }
        // A paused answer is not finished: the same conversation, this part included, is
        // sent again and the model goes on where it stopped (bounded by `max_turn_steps`).
        if paused && calls.is_empty() {
            continue;
        }

        if calls.is_empty() && !answered {
            // Small models sometimes stop with nothing to say after their tools ran: ask once
            // for the final answer rather than failing work that was done.
            if ran_calls && !truncated && !nudged {
                nudged = true;
                sess.push_history(
                    turn_id,
                    vec![ResponseItem::developer_text(format!(
                        "{EMPTY_ANSWER_NOTE_START} If the task is done, say in one or two sentences what you did; otherwise continue with the next step."
                    ))],
                ).await;
                continue;
            }
            // Silent again, but its tools did what the task's words name, as the directory
            // shows: the work stands, with no words to print.
            if ran_calls && !truncated && work_checks_out(sess).await {
                let outcome = TurnOutcome::Completed {
                    last_agent_message: None,
                };
                if end_turn(sess, turn_id, outcome, Some(started)).await == Ended::GoOn {
                    continue;
                }
                return Ok(());
            }
            return Err(empty_answer(truncated, thought));
        }
        if truncated && calls.is_empty() && !sampled_looped {
            sess.warn(
                turn_id,
                format!(
                    "the answer was cut off: the model hit its output token limit (finish_reason \"length\"; this request allowed {}). Raise `model_max_output_tokens` in config.toml, or the server's own limit (Ollama `num_predict`, llama.cpp `-n`/`--n-predict`), or ask for a shorter answer.",
                    sampled
                        .max_output_tokens
                        .map_or("no bound from us".to_string(), |n| format!("{n} tokens"))
                ),
            );
        }

        if calls.is_empty()
            && let Some(problem) = unfinished_answer(sess, last_agent_message.as_deref()).await
        {
            let text_mode = sess.tools_as_text();
            let not_done = matches!(
                problem,
                Unfinished::NotDone { .. } | Unfinished::FileNotNamed { .. }
            );
            if !nudged || (not_done && not_done_nudges < MAX_NOT_DONE_NUDGES) {
                nudged = true;
                not_done_nudges += usize::from(not_done);
                nudged_for_path = matches!(problem, Unfinished::MissingPath { .. });
                sess.warn(turn_id, problem.warning());
                if !text_mode
                    && matches!(problem, Unfinished::UnrunCall { .. })
                    && sess.turn_context().config.tool_call_format == ToolCallFormat::Auto
                {
                    sess.state().text_tools_fallback = true;
                    sess.warn_once(turn_id, "text_tools_fallback", || {
                        "switching this session to `tool_call_format = \"text\"`: the model writes its tool calls into its answers instead of making them. Set `tool_call_format` in config.toml to choose for good (docs/providers.md, \"Tool calls as text\").".to_string()
                    });
                }
                let nudge = problem.nudge(&tool_specs(sess), sess.tools_as_text());
                sess.push_history(turn_id, vec![ResponseItem::developer_text(nudge)])
                    .await;
                continue;
            }
            return Err(TurnFailure::Failed {
                message: problem.failure(text_mode),
                info: Some(ErrorInfo::Other),
            });
        }
        // Told that its answer did nothing, the model answered again without any tool: a
        // second answer in words ("The task was done.", recorded) cannot have done it. Nor
        // can a turn asked for a change in which nothing that writes ran.
        let checked_path = nudged_for_path
            && last_agent_message.as_deref().is_some_and(|a| {
                answer_check::answered_path(
                    a,
                    TurnRecord::of_history(&sess.state().history).view().request,
                )
                .is_some()
            });
        // A question answered in words after the note is an answer ("I cannot look up the
        // weather: there is no web search tool"), unless the note was about a made-up path.
        let answers_question = !nudged_for_path
            && answer_check::is_question(
                TurnRecord::of_history(&sess.state().history).view().request,
            );
        if calls.is_empty()
            && nudged
            && !checked_path
            && !answers_question
            && (!ran_calls || nothing_changed(sess))
        {
            let what = if ran_calls {
                "the model was told that its answer did nothing, and it ended the turn without running anything that could make the requested change"
            } else {
                "the model was told that its answer did nothing and answered again without using any tool"
            };
            return Err(TurnFailure::Failed {
                message: format!(
                    "{what}, so the task was not done. If this model keeps doing it, set `tool_call_format = \"text\"` or use a larger model."
                ),
                info: Some(ErrorInfo::Other),
            });
        }

        if calls.is_empty() {
            // Done, unless the user steered while the model was answering.
            let outcome = TurnOutcome::Completed {
                last_agent_message: last_agent_message.clone(),
            };
            if end_turn(sess, turn_id, outcome, Some(started)).await == Ended::GoOn {
                continue;
            }
            return Ok(());
        }

        // A call cut off at the output token limit is not run: its arguments are incomplete.
        // The model is told to retry with shorter arguments.
        let (calls, cut_off): (Vec<PendingCall>, Vec<PendingCall>) = calls
            .into_iter()
            .partition(|(_, _, arguments)| !truncated || is_json(arguments));
        // Every call gets an output, even when the turn stops, so the history stays valid
        // for the next request (independent MCP calls run concurrently: see tools::parallel).
        let repeat = repeats.observe(&calls);
        let mut parked = None;
        let abort = match &repeat {
            Repeat::Run => {
                ran_calls |= !calls.is_empty();
                let run = run_calls(sess, turn_id, calls, cancel).await;
                parked = run.parked;
                run.abort
            }
            Repeat::Refuse(n) | Repeat::Stop(n) => {
                let output = match repeat {
                    Repeat::Refuse(_) => {
                        sess.warn(
                            turn_id,
                            format!("the model asked for the same call {n} times in a row; it was not run again, and the model was told to answer or do something different"),
                        );
                        crate::repeats::nudge(*n)
                    }
                    _ => "not run: the turn was stopped".to_string(),
                };
                let names: Vec<String> = calls
                    .iter()
                    .map(|(_, name, _)| format!("`{name}`"))
                    .collect();
                if matches!(repeat, Repeat::Stop(_)) {
                    repeat_failure = Some(crate::repeats::failure(*n, &names.join(", ")));
                }
                let outputs = calls
                    .into_iter()
                    .map(|(call_id, _, _)| ResponseItem::FunctionCallOutput {
                        call_id,
                        output: crate::tools::ToolOutcome::err(output.clone()).output,
                    })
                    .collect();
                sess.push_history(turn_id, outputs).await;
                false
            }
        };
        for (call_id, name, _) in cut_off {
            sess.warn(
                turn_id,
                format!("the model hit its output token limit while writing a `{name}` call; the call was not run and the model was told to retry with shorter arguments"),
            );
            sess.push_history(
                turn_id,
                vec![ResponseItem::FunctionCallOutput {
                    call_id,
                    output: crate::tools::ToolOutcome::err(TRUNCATED_CALL_OUTPUT).output,
                }],
            )
            .await;
        }
        if let Some(message) = repeat_failure.take() {
            return Err(TurnFailure::Failed {
                message,
                info: Some(ErrorInfo::Other),
            });
        }
        let run = CallsRun { abort, parked };
        if after_calls(sess, turn_id, cancel, run, || loop_state!(), started).await? {
            return Ok(());
        }
    }
}

/// After a response's calls ran: stop when the user aborted or the turn was interrupted
/// (calls left waiting get the interrupted output first), park when calls wait for
/// approvals. `Ok(true)`: the turn parked.
async fn after_calls(
    sess: &Session,
    turn_id: &str,
    cancel: &CancellationToken,
    run: CallsRun,
    state: impl FnOnce() -> LoopState,
    started: Instant,
) -> Result<bool, TurnFailure> {
    if run.abort || cancel.is_cancelled() {
        if let Some(parked) = run.parked {
            let outputs = parked
                .unanswered
                .into_iter()
                .map(|(call_id, _, _)| ResponseItem::FunctionCallOutput {
                    call_id,
                    output: crate::tools::ToolOutcome::err("not run: the turn was interrupted")
                        .output,
                })
                .collect();
            sess.push_history(turn_id, outputs).await;
        }
        return Err(TurnFailure::Interrupted);
    }
    match run.parked {
        Some(parked) => {
            crate::parking::park(sess, turn_id, parked, state(), started).await;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The failure of a turn whose store stopped answering.
fn store_stalled(why: &str) -> TurnFailure {
    TurnFailure::Failed {
        message: format!(
            "stopped this turn: the thread store is not answering ({why}); what the thread \
             recorded since is kept in memory and saved once the store answers again, while \
             this process runs"
        ),
        info: Some(ErrorInfo::Other),
    }
}

/// Whether the request carries images (their bytes make the token estimate meaningless).
fn prompt_has_images(prompt: &Prompt) -> bool {
    prompt.input.iter().any(|item| match item {
        ResponseItem::Message { content, .. } => content
            .iter()
            .any(|c| matches!(c, oi_protocol::models::ContentItem::InputImage { .. })),
        ResponseItem::FunctionCallOutput { output, .. } => output
            .content
            .iter()
            .any(|c| matches!(c, oi_protocol::models::ContentItem::InputImage { .. })),
        _ => false,
    })
}

fn is_json(s: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
}

/// Whether the turn's final answer leaves it unfinished (see `answer_check`).
async fn unfinished_answer(sess: &Session, answer: Option<&str>) -> Option<Unfinished> {
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
    tokio::task::spawn_blocking(move || record.unmet_in(&cwd))
        .await
        .ok()
        .flatten()
}

/// Whether the turn changed files and everything the task's words name holds (checked on
/// disk; a task whose words name nothing checkable does not count as checked).
async fn work_checks_out(sess: &Session) -> bool {
    let record = TurnRecord::of_history(&sess.state().history);
    if nothing_changed(sess) || !record.names_checkable_work() {
        return false;
    }
    let cwd = sess.turn_context().config.cwd.clone();
    tokio::task::spawn_blocking(move || record.unmet_in(&cwd).is_none())
        .await
        .unwrap_or(false)
}

/// The last thing the model said in the current turn, if anything.
fn answer_of_this_turn(sess: &Session) -> Option<String> {
    let st = sess.state();
    st.history
        .iter()
        .rev()
        .take_while(|i| {
            !matches!(
                i,
                ResponseItem::Message {
                    role: Role::User,
                    ..
                }
            )
        })
        .find_map(|i| match i {
            ResponseItem::Message {
                role: Role::Assistant,
                ..
            } => i.message_text().filter(|t| !t.trim().is_empty()),
            _ => None,
        })
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
    TurnFailure::Failed {
        message: message.to_string(),
        info: Some(ErrorInfo::Other),
    }
}

/// Move steering input into history (and tell front ends about it).
async fn take_pending_input(sess: &Session, turn_id: &str) {
    let pending = {
        let mut st = sess.state();
        match st.active_turn.as_mut() {
            Some(ActiveTurn { pending_input, .. }) => std::mem::take(pending_input),
            None => Vec::new(),
        }
    };
    sess.push_history(turn_id, pending).await;
}

/// Account for one model response and emit `token_count`. Servers that report no usage get
/// an estimate (the request's size, the answer's size), so the count is never missing.
fn report_usage(sess: &Session, turn_id: &str, sampled: &Sampled) {
    let usage = match sampled.usage {
        Some(usage) => {
            // A count of a prompt the server cut says nothing about the tokenizer.
            if usage.input_tokens > 0 && !sampled.cut_by_server {
                sess.state()
                    .estimator
                    .observe(sampled.prompt_size, usage.input_tokens);
                sess.remember_ratio_if_changed();
            }
            usage
        }
        None => {
            let input = sess.state().estimator.tokens(sampled.prompt_size);
            let out_size: usize = sampled
                .items
                .iter()
                .map(|i| {
                    serde_json::to_string(i).map_or(0, |s| crate::context_window::text_size(&s))
                })
                .sum();
            let output = crate::context_window::estimate_tokens(out_size);
            TokenUsage {
                input_tokens: input,
                cached_input_tokens: 0,
                output_tokens: output,
                reasoning_output_tokens: 0,
                total_tokens: input + output,
            }
        }
    };
    let total = {
        let mut st = sess.state();
        st.total_usage.add_assign(&usage);
        st.total_usage
    };
    let (window, source) = sess.context_window_and_source();
    sess.send(
        turn_id,
        EventMsg::TokenCount(TokenCountEvent {
            info: Some(TokenUsageInfo {
                total_token_usage: total,
                last_token_usage: usage,
                model_context_window: Some(window),
                model_context_window_source: Some(source),
            }),
            rate_limits: sess.client.rate_limits(),
        }),
    );
}

/// The next request: instructions, environment context, history (each tool output cut to
/// the window's budget; history itself keeps the whole output), tools.
pub(crate) fn build_prompt(sess: &Session) -> Prompt {
    build_sized_prompt(sess).0
}

/// [`build_prompt`] and the request's size (`context_window::text_size`), measured once (the output bound and the
/// token estimate both need it; serializing the history again per request is wasted work).
fn build_sized_prompt(sess: &Session) -> (Prompt, usize) {
    build_sized_prompt_with(sess, None)
}

/// Estimated tokens of the next request if the history were `history` (compaction checks
/// that its new history fits before installing it).
pub(crate) fn estimate_with_history(sess: &Session, history: &[ResponseItem]) -> i64 {
    let (_, bytes) = build_sized_prompt_with(sess, Some(history));
    sess.state().estimator.tokens(bytes)
}

fn build_sized_prompt_with(sess: &Session, history: Option<&[ResponseItem]>) -> (Prompt, usize) {
    let tools = tool_specs(sess);
    let window = sess.context_window();
    let ctx = sess.turn_context();
    let cfg = &ctx.config;
    let st = sess.state();
    let mut input = context_items(cfg, ctx.project_doc.as_ref(), &ctx.skills);
    let start = input.len();
    input.extend(history.unwrap_or(&st.history).iter().cloned());
    budget_tool_outputs(
        &mut input[start..],
        tool_output_budget(window, cfg.tool_output_max_bytes),
    );
    let tools_as_text = st.tools_as_text();
    let mut prompt = Prompt {
        model: cfg.model.clone(),
        instructions: base_instructions(cfg),
        input,
        tools,
        reasoning_effort: cfg.model_reasoning_effort,
        reasoning_summary: cfg.model_reasoning_summary.clone(),
        verbosity: cfg.model_verbosity.clone(),
        parallel_tool_calls: true,
        max_output_tokens: None,
        tools_as_text,
        temperature: None,
        stop: Vec::new(),
    };
    let mut prompt_size = crate::context_window::prompt_size(&prompt);
    if tools_as_text {
        prompt_size +=
            crate::context_window::text_size(&oi_model_client::text_tools_section(&prompt.tools));
    }
    prompt.max_output_tokens = output_token_bound(
        cfg.model_max_output_tokens,
        window,
        st.estimator.tokens(prompt_size),
    );
    (prompt, prompt_size)
}

fn classify(e: &ModelError) -> Option<ErrorInfo> {
    match e.http_status() {
        Some(401) | Some(403) => Some(ErrorInfo::Unauthorized),
        Some(400) => Some(ErrorInfo::BadRequest),
        Some(429) => Some(ErrorInfo::ResponseTooManyFailedAttempts {
            http_status_code: Some(429),
        }),
        Some(s) if s >= 500 => Some(ErrorInfo::ResponseTooManyFailedAttempts {
            http_status_code: Some(s),
        }),
        Some(s) => Some(ErrorInfo::HttpConnectionFailed {
            http_status_code: Some(s),
        }),
        None if e.is_retryable_stream_error() => Some(ErrorInfo::ResponseStreamDisconnected {
            http_status_code: None,
        }),
        None => Some(ErrorInfo::Other),
    }
}

/// One model request, with retries for streams that drop mid-way.
async fn sample(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    first: (Prompt, usize),
) -> Result<Sampled, TurnFailure> {
    let max_stream_retries = sess
        .turn_context()
        .config
        .model_provider
        .stream_max_retries();
    let mut attempt = 0u64;
    let mut stale_retry_used = false;
    let mut overflow_compacted = false;
    let mut first = Some(first);
    loop {
        // Retries build the request again: a compaction may have replaced the history.
        let (prompt, prompt_size) = first.take().unwrap_or_else(|| build_sized_prompt(sess));
        let estimated_prompt = sess.state().estimator.uncut_tokens(prompt_size);
        let on_retry = |n: RetryNotice| {
            sess.send(
                turn_id,
                EventMsg::StreamError(StreamErrorEvent {
                    message: format!(
                        "Reconnecting... {}/{} in {:.1}s ({})",
                        n.attempt,
                        n.max_attempts,
                        n.delay.as_secs_f64(),
                        n.reason
                    ),
                    codex_error_info: None,
                    additional_details: None,
                }),
            )
        };
        let stream = tokio::select! {
            _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
            r = sess.client.stream(&prompt, &on_retry) => r,
        };
        let mut stream = match stream {
            Ok(s) => s,
            // A connection that dies right after a dropped stream (a stale keep-alive
            // socket) is part of the same disconnect: retry it like one.
            Err(e @ ModelError::Connect(_)) if attempt > 0 && !stale_retry_used => {
                stale_retry_used = true;
                sess.send(
                    turn_id,
                    EventMsg::StreamError(StreamErrorEvent {
                        message: format!("Reconnecting... ({e})"),
                        codex_error_info: Some(ErrorInfo::ResponseStreamConnectionFailed {
                            http_status_code: None,
                        }),
                        additional_details: None,
                    }),
                );
                continue;
            }
            Err(e) => {
                if recover_from_overflow(
                    sess,
                    turn_id,
                    cancel,
                    &e,
                    &prompt,
                    &mut overflow_compacted,
                )
                .await?
                {
                    continue;
                }
                return Err(model_failure(&e, overflow_compacted));
            }
        };
        let Drained {
            items,
            usage,
            completed,
            truncated,
            looped,
            paused,
            failure,
        } = drain(sess, turn_id, cancel, &mut stream).await?;
        if completed {
            // The plain-bytes count costs a serialization: only when the report is low.
            let least_prompt = match &usage {
                Some(u) if u.input_tokens * 2 < estimated_prompt => sess
                    .state()
                    .estimator
                    .least_tokens(crate::context_window::plain_prompt_size(&prompt)),
                _ => estimated_prompt,
            };
            let signal = window_signal(
                estimated_prompt,
                least_prompt,
                usage.as_ref(),
                truncated,
                sess.context_window(),
                prompt.max_output_tokens,
                prompt_has_images(&prompt),
            );
            if let Some(signal) = signal {
                match recover_from_signal(sess, turn_id, cancel, signal, &mut overflow_compacted)
                    .await?
                {
                    SignalOutcome::Retry => continue,
                    SignalOutcome::Keep => {}
                }
            }
            return Ok(Sampled {
                items,
                usage,
                truncated,
                prompt_size,
                max_output_tokens: prompt.max_output_tokens,
                cut_by_server: matches!(signal, Some(WindowSignal::SilentTruncation { .. })),
                looped,
                paused,
            });
        }
        let err = failure.unwrap_or_else(|| {
            ModelError::StreamDisconnected("the stream ended before the response completed".into())
        });
        if err.is_retryable_stream_error() && attempt < max_stream_retries {
            attempt += 1;
            let delay = Duration::from_millis(200 * (1 << attempt.min(6)));
            sess.send(
                turn_id,
                EventMsg::StreamError(StreamErrorEvent {
                    message: format!("Reconnecting... {attempt}/{max_stream_retries} ({err})"),
                    codex_error_info: Some(ErrorInfo::ResponseStreamDisconnected {
                        http_status_code: None,
                    }),
                    additional_details: None,
                }),
            );
            tokio::select! {
                _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
                _ = tokio::time::sleep(delay) => {}
            }
            continue;
        }
        // Some servers report a too-long prompt inside the stream.
        if items.is_empty()
            && recover_from_overflow(
                sess,
                turn_id,
                cancel,
                &err,
                &prompt,
                &mut overflow_compacted,
            )
            .await?
        {
            continue;
        }
        return Err(model_failure(&err, overflow_compacted));
    }
}

/// What one model stream produced before it completed, failed or ended.
struct Drained {
    items: Vec<ResponseItem>,
    usage: Option<TokenUsage>,
    /// The server sent `completed`: the answer is whole.
    completed: bool,
    /// The model stopped at its output token limit.
    truncated: bool,
    /// The answer was stopped because the model repeated itself.
    looped: bool,
    /// The server paused the answer to be continued (Messages `pause_turn`).
    paused: bool,
    failure: Option<ModelError>,
}

/// Reads one model stream to its end, emitting deltas, messages and reasoning as they come.
async fn drain(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    stream: &mut oi_model_client::ResponseStream,
) -> Result<Drained, TurnFailure> {
    let mut out = Drained {
        items: Vec::new(),
        usage: None,
        completed: false,
        truncated: false,
        looped: false,
        paused: false,
        failure: None,
    };
    // Calls in this answer came from its text, not from the server's parser.
    let mut recovered = false;
    loop {
        let ev = tokio::select! {
            _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
            ev = stream.next() => ev,
        };
        match ev {
            Some(Ok(ResponseEvent::Created)) => {}
            Some(Ok(ResponseEvent::OutputTextDelta(delta))) => sess.send(
                turn_id,
                EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta }),
            ),
            Some(Ok(ResponseEvent::ReasoningDelta(delta))) => sess.send(
                turn_id,
                EventMsg::AgentReasoningDelta(AgentReasoningDeltaEvent { delta }),
            ),
            Some(Ok(ResponseEvent::OutputItemDone(item))) => {
                announce_item(sess, turn_id, &item);
                out.items.push(item);
            }
            Some(Ok(ResponseEvent::ToolCallsRecoveredFromText {
                format,
                server_hint,
                parser_off,
            })) => {
                recovered = true;
                // In text mode calls in the text are what was asked for: nothing to warn about.
                // Nor when the parser is on: it parsed calls before, or the model wrote a
                // shape no parser catches (plain JSON).
                let parser_on = !parser_off || sess.state().server_parses_calls;
                if !sess.tools_as_text() && !parser_on {
                    sess.warn_once(turn_id, "tool_calls_in_text", || {
                        format!(
                            "the model's tool calls arrived as plain text ({format} format): the server's tool-call parser is off. They are recognised and run anyway, but the server should parse them itself. Fix: {server_hint}. See docs/providers.md, \"Server settings\"."
                        )
                    });
                }
            }
            Some(Ok(ResponseEvent::OutputLimitReached)) => out.truncated = true,
            Some(Ok(ResponseEvent::Paused)) => out.paused = true,
            Some(Ok(ResponseEvent::RepetitionStopped)) => {
                out.truncated = true;
                out.looped = true;
                sess.warn(
                    turn_id,
                    "the model started repeating itself (the same text over and over), so its answer was stopped there and the repeated part dropped".to_string(),
                );
            }
            Some(Ok(ResponseEvent::Completed { token_usage, .. })) => {
                out.usage = token_usage;
                out.completed = true;
                let parsed = out
                    .items
                    .iter()
                    .any(|i| matches!(i, ResponseItem::FunctionCall { .. }));
                if parsed && !recovered && !sess.tools_as_text() {
                    sess.state().server_parses_calls = true;
                }
                return Ok(out);
            }
            Some(Err(e)) => {
                out.failure = Some(e);
                return Ok(out);
            }
            None => return Ok(out),
        }
    }
}

/// The events of a finished output item: an assistant message or reasoning, in full.
fn announce_item(sess: &Session, turn_id: &str, item: &ResponseItem) {
    match item {
        ResponseItem::Message {
            role: Role::Assistant,
            ..
        } => {
            let text = item.message_text().unwrap_or_default();
            if !text.is_empty() {
                sess.send(
                    turn_id,
                    EventMsg::AgentMessage(AgentMessageEvent {
                        message: text,
                        phase: None,
                        memory_citation: None,
                    }),
                );
            }
        }
        ResponseItem::Reasoning { text, .. } if !text.is_empty() => sess.send(
            turn_id,
            EventMsg::AgentReasoning(AgentReasoningEvent { text: text.clone() }),
        ),
        _ => {}
    }
}

fn model_failure(err: &ModelError, overflow_compacted: bool) -> TurnFailure {
    if err.context_overflow().is_some() {
        return overflow_failure(err, overflow_compacted);
    }
    TurnFailure::Failed {
        info: classify(err),
        message: err.to_string(),
    }
}

pub(crate) fn compact_failure(e: CompactError) -> TurnFailure {
    match e {
        CompactError::Interrupted => TurnFailure::Interrupted,
        CompactError::Failed(message) => TurnFailure::Failed {
            message,
            info: Some(ErrorInfo::ContextWindowExceeded),
        },
    }
}

/// `Op::Compact`: a turn of its own that only compacts (`task_started`,
/// `context_compacted`, `task_complete`; `error` first when it fails).
pub(crate) async fn run_compact_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
) {
    let started = Instant::now();
    sess.load_project_doc().await;
    sess.begin_turn_context();
    sess.lookup_server_window(&cancel).await;
    let (window, source) = sess.context_window_and_source();
    sess.send(
        &turn_id,
        EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: turn_id.clone(),
            started_at: Some(now_unix()),
            model_context_window: Some(window),
            model_context_window_source: Some(source),
            collaboration_mode_kind: "default".into(),
        }),
    );
    let has_history = !sess.state().history.is_empty();
    let result = if has_history {
        compact(&sess, &turn_id, &cancel, false).await
    } else {
        Err(CompactError::Failed(
            "nothing to compact: the conversation is empty".into(),
        ))
    };
    let outcome = match result {
        Err(CompactError::Interrupted) => TurnOutcome::Interrupted,
        Err(CompactError::Failed(message)) => TurnOutcome::Failed {
            message,
            info: Some(ErrorInfo::Other),
            last_agent_message: None,
        },
        Ok(()) => TurnOutcome::Completed {
            last_agent_message: None,
        },
    };
    end_turn(&sess, &turn_id, outcome, Some(started)).await;
}
