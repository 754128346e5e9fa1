//! `interpreter exec`: one turn, no one to ask. Approvals are denied (and the model told);
//! human progress goes to stderr and the final message to stdout, or every event as JSON
//! lines with `--json`.

use crate::args::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ExecArgs, GlobalArgs};
use crate::render::{HumanRenderer, ReasoningDisplay, one_line};
use oi_core::SessionSource;
use oi_core::{
    NewThread, PendingRequest, StartTurn, Stop, ThreadManager, ThreadManagerOptions, TurnEnd,
    TurnFrontEnd, TurnHandle,
};
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse, Event, EventMsg};
use oi_protocol::user_input::UserInput;
use std::io::{Read, Write};

/// Why no prompt could be read (a usage error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PromptError {
    /// No prompt argument, and stdin is a terminal.
    #[error("no prompt given; pass one as an argument or `-` to read it from stdin")]
    Missing,
    /// Reading stdin failed.
    #[error("cannot read the prompt from stdin: {0}")]
    Stdin(#[from] std::io::Error),
    /// Stdin held only whitespace.
    #[error("the prompt read from stdin is empty")]
    EmptyStdin,
    /// The prompt argument is only whitespace.
    #[error("the prompt is empty")]
    Empty,
}

/// The prompt: the argument, or stdin for `-` (or no argument when stdin is not a terminal).
pub(crate) fn read_prompt(arg: Option<String>) -> Result<String, PromptError> {
    match arg.as_deref() {
        Some("-") | None => {
            if arg.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                return Err(PromptError::Missing);
            }
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s)?;
            if s.trim().is_empty() {
                return Err(PromptError::EmptyStdin);
            }
            Ok(s)
        }
        Some(p) if p.trim().is_empty() => Err(PromptError::Empty),
        Some(p) => Ok(p.to_string()),
    }
}

/// What `exec` and `resume` print on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// Progress on stderr, the final answer on stdout.
    Human,
    /// Every event as one JSON line (`--json`, docs/exec-json.md).
    Events,
    /// Codex exec's JSON lines (`--experimental-json`), for the Codex TypeScript SDK.
    CodexExec,
}

impl Format {
    pub(crate) fn of(json: bool, experimental_json: bool) -> Self {
        match (json, experimental_json) {
            (_, true) => Format::CodexExec,
            (true, false) => Format::Events,
            (false, false) => Format::Human,
        }
    }

    fn is_json(self) -> bool {
        self != Format::Human
    }
}

pub(crate) struct Output {
    format: Format,
    reasoning: ReasoningDisplay,
    human: HumanRenderer,
    codex: crate::exec_jsonl::CodexExecLines,
}

impl Output {
    pub(crate) fn new(format: Format, reasoning: ReasoningDisplay) -> Self {
        Self {
            format,
            reasoning,
            human: HumanRenderer::new(reasoning),
            codex: Default::default(),
        }
    }

    pub(crate) fn event(&mut self, ev: &Event) {
        if !self.reasoning.shows(&ev.msg) {
            return;
        }
        match self.format {
            Format::Events => {
                if let Ok(line) = serde_json::to_string(ev) {
                    print_line(&line);
                }
            }
            Format::CodexExec => {
                for line in self.codex.lines(&ev.msg) {
                    print_line(&line.to_string());
                }
            }
            Format::Human => self.human.render(&ev.msg),
        }
    }
}

fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub(crate) async fn run_exec(mut global: GlobalArgs, args: ExecArgs) -> i32 {
    if let Err(e) = args.codex.apply(&mut global) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let format = Format::of(args.json, args.experimental_json);
    let prompt = match read_prompt(args.prompt) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let config = match global.load_config_or_exit() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let images = match crate::images::image_inputs(&args.codex.image, &config.model) {
        Ok(items) => items,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let reasoning = ReasoningDisplay::from_config(&config);
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Exec,
        persist: true,
    });
    let new = match manager.start_thread(config).await {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return match e {
                oi_core::CoreError::Config(_) => EXIT_USAGE,
                _ => EXIT_FAILURE,
            };
        }
    };
    let thread = new.thread.clone();
    let mut items = vec![UserInput::text(prompt)];
    items.extend(images);
    let questions = Questions::of(args.accept_elicitations);
    let code = drive_turn_items(new, items, format, reasoning, questions).await;
    manager.shutdown_all().await;
    saved_or_failure(&thread, code)
}

/// After the thread was shut down (flushed): if any part of it could not be saved, say so in
/// one line and turn a success into a failure — a run whose record is incomplete must not
/// look like a clean one to scripts and CI.
pub(crate) fn saved_or_failure(thread: &oi_core::Thread, code: i32) -> i32 {
    let Some(first) = thread.save_error() else {
        return code;
    };
    // What is still missing, if anything; else the failure (retried since, or an fsync).
    let error = thread.unsaved().map(|u| u.describe()).unwrap_or(first);
    let place = thread
        .rollout_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the sessions directory".into());
    eprintln!(
        "error: thread {} was not saved completely to {place}: {error}",
        thread.id()
    );
    if code == EXIT_OK { EXIT_FAILURE } else { code }
}

/// How long an interrupted turn gets to end before `exec` stops waiting for it.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// What a headless run answers when an MCP server asks a question (nobody is there to ask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Questions {
    /// Declined (the default): a server's question never gets an answer nobody gave.
    Decline,
    /// `--accept-elicitations`: accepted with the form's defaults, a required yes/no answered
    /// yes; a question only a person could answer is still declined.
    Accept,
}

impl Questions {
    pub(crate) fn of(accept: bool) -> Self {
        if accept {
            Questions::Accept
        } else {
            Questions::Decline
        }
    }
}

/// The content `--accept-elicitations` answers a form with: fields left out take their
/// defaults (the MCP client fills them in), a required yes/no without a default is yes.
/// `None`: a required field that is neither, which only a person could answer.
fn accepted_form(request: &serde_json::Value) -> Option<serde_json::Value> {
    let schema = request.get("requestedSchema");
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.as_object());
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let mut content = serde_json::Map::new();
    for name in required {
        let field = properties.and_then(|p| p.get(name));
        if field.is_some_and(|f| f.get("default").is_some()) {
            continue;
        }
        match field.and_then(|f| f.get("type")).and_then(|t| t.as_str()) {
            Some("boolean") => {
                content.insert(name.to_string(), serde_json::Value::Bool(true));
            }
            _ => return None,
        }
    }
    Some(serde_json::Value::Object(content))
}

/// Run one turn on a thread and print it. Returns the exit code.
pub(crate) async fn drive_turn(
    new: NewThread,
    prompt: String,
    format: Format,
    reasoning: ReasoningDisplay,
    questions: Questions,
) -> i32 {
    drive_turn_items(
        new,
        vec![UserInput::text(prompt)],
        format,
        reasoning,
        questions,
    )
    .await
}

/// [`drive_turn`] with any input items (the prompt and its images).
pub(crate) async fn drive_turn_items(
    new: NewThread,
    items: Vec<UserInput>,
    format: Format,
    reasoning: ReasoningDisplay,
    questions: Questions,
) -> i32 {
    let json = format.is_json();
    let mut out = Output::new(format, reasoning);
    out.event(&Event {
        id: String::new(),
        msg: EventMsg::SessionConfigured(new.session_configured.clone()),
    });
    // Listen before the turn starts, so an early signal is never lost to the default action
    // (which would kill the process without stopping commands or flushing the thread).
    let mut signals = TerminationSignals::listen();
    let id = oi_protocol::ids::new_id();
    let input = StartTurn::input(items);
    let mut turn = match new.thread.start_turn_on(new.events, id, input).await {
        Ok(turn) => turn,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut front_end = ExecFrontEnd {
        thread: turn.thread().clone(),
        out: &mut out,
        signals: &mut signals,
        questions,
        json,
        stopped_by: None,
    };
    let driven = turn.drive(&mut front_end).await;
    let stopped_by = front_end.stopped_by;
    let Some(end) = driven else {
        // Asked twice: stop waiting for the turn; the caller still shuts the thread down
        // (which kills its commands and flushes it).
        return stopped_by.map_or(EXIT_FAILURE, TerminationSignal::exit_code);
    };
    match end {
        TurnEnd::Completed {
            last_agent_message,
            failed,
        } => {
            if !json && let Some(msg) = &last_agent_message {
                let mut o = std::io::stdout().lock();
                let _ = writeln!(o, "{msg}");
                let _ = o.flush();
            }
            if let Some(sig) = stopped_by {
                return sig.exit_code();
            }
            if failed { EXIT_FAILURE } else { EXIT_OK }
        }
        // `exec` never parks its turn (nobody could resume it): a park is no success.
        TurnEnd::Aborted(_) | TurnEnd::Unresponsive | TurnEnd::Parked(_) => {
            stopped_by.map_or(EXIT_FAILURE, TerminationSignal::exit_code)
        }
        TurnEnd::ThreadClosed => {
            eprintln!("error: {}", oi_core::CoreError::ThreadClosed);
            EXIT_FAILURE
        }
    }
}

/// `exec` as a front end of its one turn: every event printed, every question refused (or
/// a form accepted with `--accept-elicitations`), a signal an interrupt, a second one the end.
struct ExecFrontEnd<'a> {
    thread: std::sync::Arc<oi_core::Thread>,
    out: &'a mut Output,
    signals: &'a mut TerminationSignals,
    questions: Questions,
    json: bool,
    stopped_by: Option<TerminationSignal>,
}

impl TurnFrontEnd for ExecFrontEnd<'_> {
    async fn stop_requested(&mut self) -> Stop {
        let sig = self.signals.recv().await;
        if self.stopped_by.is_some() {
            eprintln!("[interpreter] {} again: exiting now", sig.name());
            return Stop::Abandon;
        }
        self.stopped_by = Some(sig);
        eprintln!("[interpreter] {}: interrupting the turn…", sig.name());
        // The run ends: an MCP task stays running, and `resume` fetches its result.
        self.thread.leave_mcp_tasks_running();
        Stop::Interrupt(Some(INTERRUPT_GRACE))
    }

    async fn on_event(&mut self, _turn: &TurnHandle, event: &Event) -> Option<Stop> {
        self.out.event(event);
        None
    }

    async fn on_request(&mut self, turn: &TurnHandle, request: PendingRequest, event: &Event) {
        let json = self.json;
        if let (Questions::Accept, EventMsg::ElicitationRequest(req)) = (self.questions, &event.msg)
            && let Some(content) = accepted_form(&req.request)
        {
            if !json {
                eprintln!(
                    "[elicitation] MCP server `{}` asked \"{}\"; accepted (--accept-elicitations)",
                    req.server_name,
                    one_line(question_of(&req.request), 200)
                );
            }
            let answer = request.elicitation_answer(ElicitationResponse {
                action: ElicitationAction::Accept,
                content: Some(content),
            });
            let _ = turn.thread().submit(answer).await;
            return;
        }
        if !json {
            eprintln!("{}", refusal_note(&event.msg));
        }
        let _ = turn.thread().submit(request.refusal()).await;
    }
}

/// What `exec` tells the user when it refuses what the turn asked (nobody can answer).
fn refusal_note(msg: &EventMsg) -> String {
    match msg {
        EventMsg::ExecApprovalRequest(req)
            if req.command.first().map(String::as_str)
                == Some(oi_core::MCP_SAMPLING_APPROVAL_COMMAND) =>
        {
            let server = req.command.get(1).map(String::as_str).unwrap_or_default();
            format!(
                "[approval] MCP server `{server}` asked the model to sample; nobody can approve in exec mode, so it is denied (set `sampling = \"approve\"` in [mcp_servers.{server}] to allow it without asking)"
            )
        }
        EventMsg::ExecApprovalRequest(req) => format!(
            "[approval] `{}` needs approval; nobody can approve in exec mode, so it is denied (use -a never, or a different -s, to avoid prompts)",
            oi_protocol::parse_command::shell_join(&req.command)
        ),
        EventMsg::ApplyPatchApprovalRequest(_) => {
            "[approval] a patch needs approval; nobody can approve in exec mode, so it is denied"
                .into()
        }
        EventMsg::ElicitationRequest(req) => format!(
            "[elicitation] MCP server `{}` asked \"{}\"; nobody can answer in exec mode, so it is declined",
            req.server_name,
            one_line(question_of(&req.request), 200)
        ),
        _ => String::new(),
    }
}

/// An elicitation's question.
fn question_of(request: &serde_json::Value) -> &str {
    request
        .get("message")
        .and_then(|m| m.as_str())
        .unwrap_or("a question")
}
