//! `interpreter [PROMPT]`: a line-based interactive session. The answer streams to stdout,
//! progress to stderr, and approval requests are asked on stdin
//! (`y` yes, `a` yes for this session, `n` no, `s` stop the turn). `/exit` or end of input
//! quits; Ctrl-C interrupts the running turn, and at the prompt ends the session (exit 130).
//! SIGTERM / SIGHUP interrupt the running turn and end the session (exit 143 / 129).

use crate::args::{EXIT_FAILURE, EXIT_OK, GlobalArgs};
use crate::out::outln;
use crate::render::{HumanRenderer, ReasoningDisplay};
use oi_config::history::PromptHistory;
use oi_core::SessionSource;
use oi_core::{
    EventStream, PendingRequest, StartTurn, Stop, Thread, ThreadManager, ThreadManagerOptions,
    TurnEnd, TurnFrontEnd, TurnHandle,
};
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{
    ElicitationAction, ElicitationResponse, Event, EventMsg, ReviewDecision,
};
use oi_protocol::user_input::UserInput;
use std::io::Write;
use std::sync::Arc;
use tokio::sync::mpsc;

fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut line = String::new();
        loop {
            line.clear();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx
                        .send(line.trim_end_matches(['\n', '\r']).to_string())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    rx
}

fn prompt_marker() {
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "› ");
    let _ = e.flush();
}

fn decision_from(answer: Option<&str>) -> ReviewDecision {
    match answer.map(|a| a.trim().to_ascii_lowercase()).as_deref() {
        Some("y") | Some("yes") => ReviewDecision::Approved,
        Some("a") | Some("always") => ReviewDecision::ApprovedForSession,
        Some("s") | Some("stop") => ReviewDecision::Abort,
        _ => ReviewDecision::Denied,
    }
}

/// Ask on stdin. A termination signal while waiting answers `Abort` (the turn stops; an
/// unanswered approval never runs anything) and is recorded in `stop` unless it is Ctrl-C,
/// which only stops the turn.
async fn ask(
    lines: &mut mpsc::UnboundedReceiver<String>,
    question: &str,
    signals: &mut TerminationSignals,
    stop: &mut Option<TerminationSignal>,
) -> ReviewDecision {
    eprint!("{question} [y]es / [a]lways this session / [n]o / [s]top: ");
    let _ = std::io::stderr().flush();
    tokio::select! {
        answer = lines.recv() => decision_from(answer.as_deref()),
        sig = signals.recv() => {
            eprintln!();
            if sig != TerminationSignal::Interrupt {
                stop.get_or_insert(sig);
            }
            ReviewDecision::Abort
        }
    }
}

/// How a turn of the line mode ended.
enum LineTurnEnd {
    Ok,
    Failed,
    /// SIGTERM or SIGHUP arrived: the turn was interrupted and the session must end.
    Stop(TerminationSignal),
}

/// One turn, read from `events` (the session's one stream, handed back when the turn ends
/// so what the thread publishes between turns is printed with the next one).
async fn run_one_turn(
    thread: &Arc<Thread>,
    events: &mut Option<EventStream>,
    prompt: String,
    lines: &mut mpsc::UnboundedReceiver<String>,
    human: &mut HumanRenderer,
    signals: &mut TerminationSignals,
) -> LineTurnEnd {
    // `/compact` summarizes the conversation so far (a turn of its own).
    let start = if prompt.trim() == "/compact" {
        StartTurn::Compact
    } else {
        StartTurn::input(vec![UserInput::text(prompt)])
    };
    let stream = events.take().unwrap_or_else(|| thread.subscribe());
    let mut turn = match thread
        .start_turn_on(stream, oi_protocol::ids::new_id(), start)
        .await
    {
        Ok(turn) => turn,
        Err(e) => {
            eprintln!("error: {e}");
            return LineTurnEnd::Failed;
        }
    };
    let mut front_end = LineFrontEnd {
        lines,
        human,
        signals,
        streamed: false,
        stop: None,
    };
    let driven = turn.drive(&mut front_end).await;
    let stop = front_end.stop;
    let Some(end) = driven else {
        // Asked twice: stop waiting; the caller shuts the thread down.
        return LineTurnEnd::Stop(stop.unwrap_or(TerminationSignal::Interrupt));
    };
    *events = Some(turn.into_events());
    match (stop, end) {
        (Some(sig), _) => LineTurnEnd::Stop(sig),
        (None, TurnEnd::Completed { failed: false, .. }) => LineTurnEnd::Ok,
        (None, _) => LineTurnEnd::Failed,
    }
}

/// The line mode as a front end of one turn: the answer streamed to stdout, progress
/// rendered, each request asked on stdin; Ctrl-C interrupts the turn, another termination
/// signal interrupts it and ends the session, and a second signal stops waiting.
struct LineFrontEnd<'a> {
    lines: &'a mut mpsc::UnboundedReceiver<String>,
    human: &'a mut HumanRenderer,
    signals: &'a mut TerminationSignals,
    streamed: bool,
    stop: Option<TerminationSignal>,
}

impl TurnFrontEnd for LineFrontEnd<'_> {
    async fn stop_requested(&mut self) -> Stop {
        let sig = self.signals.recv().await;
        match (sig, self.stop) {
            (_, Some(_)) => return Stop::Abandon,
            // Ctrl-C during a turn interrupts the turn and returns to the prompt.
            (TerminationSignal::Interrupt, None) => {}
            (other, None) => self.stop = Some(other),
        }
        Stop::Interrupt(None)
    }

    async fn on_event(&mut self, _turn: &TurnHandle, event: &Event) -> Option<Stop> {
        match &event.msg {
            // Asked in `on_request`, not shown.
            msg if PendingRequest::of(msg).is_some() => {}
            EventMsg::AgentMessageDelta(d) => {
                let mut o = std::io::stdout().lock();
                let _ = write!(o, "{}", d.delta);
                let _ = o.flush();
                self.streamed = true;
            }
            EventMsg::AgentMessage(m) => {
                if !self.streamed {
                    outln!("{}", m.message);
                } else {
                    outln!();
                }
                self.streamed = false;
            }
            other => self.human.render(other),
        }
        None
    }

    async fn on_request(&mut self, turn: &TurnHandle, request: PendingRequest, event: &Event) {
        let question = question(&event.msg);
        let decision = ask(self.lines, &question, self.signals, &mut self.stop).await;
        let op = match request {
            PendingRequest::Elicitation { .. } => {
                let action = if decision.is_approved() {
                    ElicitationAction::Accept
                } else {
                    ElicitationAction::Decline
                };
                request.elicitation_answer(ElicitationResponse {
                    action,
                    content: Some(serde_json::json!({})),
                })
            }
            _ => request.answer(decision),
        };
        let _ = turn.thread().submit(op).await;
    }
}

/// The line that asks the user about what `msg` requests.
fn question(msg: &EventMsg) -> String {
    match msg {
        EventMsg::ExecApprovalRequest(req) => {
            let q = format!(
                "Run `{}` in {}?",
                shell_join(&req.command),
                req.cwd.display()
            );
            match &req.reason {
                Some(r) => format!("{r}\n{q}"),
                None => q,
            }
        }
        EventMsg::ApplyPatchApprovalRequest(req) => {
            let files: Vec<String> = req
                .changes
                .keys()
                .map(|p| p.display().to_string())
                .collect();
            format!("Apply changes to {}?", files.join(", "))
        }
        EventMsg::ElicitationRequest(req) => {
            let message = req
                .request
                .get("message")
                .and_then(|m| m.as_str())
                .unwrap_or("");
            format!("MCP server `{}` asks: {message}", req.server_name)
        }
        _ => String::new(),
    }
}

pub(crate) async fn run(global: GlobalArgs, first_prompt: Option<String>) -> i32 {
    let config = match global.load_config_or_ask() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reasoning = ReasoningDisplay::from_config(&config);
    let history = PromptHistory::from_config(&config);
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Cli,
        persist: true,
    });
    let new = match manager.start_thread(config).await {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut human = HumanRenderer::new(reasoning);
    human.render(&EventMsg::SessionConfigured(new.session_configured.clone()));
    eprintln!(
        "Type a request; /compact to summarize the conversation so far; /exit or Ctrl-D to quit. Resume later with `interpreter resume {}`.",
        new.thread_id
    );
    let mut events = Some(new.events);
    let mut lines = stdin_lines();
    let mut signals = TerminationSignals::listen();
    let mut pending = first_prompt;
    let mut last_ok = true;
    let mut stopped_by = None;
    loop {
        let prompt = match pending.take() {
            Some(p) => p,
            None => {
                prompt_marker();
                let line = tokio::select! {
                    line = lines.recv() => line,
                    // At the prompt every termination signal (Ctrl-C included) ends the session.
                    sig = signals.recv() => {
                        stopped_by = Some(sig);
                        break;
                    }
                };
                match line {
                    None => break,
                    Some(l) if l.trim() == "/exit" || l.trim() == "/quit" => break,
                    Some(l) if l.trim().is_empty() => continue,
                    Some(l) => l,
                }
            }
        };
        if let Err(e) = history.append(&new.thread_id.to_string(), &prompt) {
            tracing::warn!("cannot save the prompt history: {e}");
        }
        let turn = run_one_turn(
            &new.thread,
            &mut events,
            prompt,
            &mut lines,
            &mut human,
            &mut signals,
        );
        match turn.await {
            LineTurnEnd::Ok => last_ok = true,
            LineTurnEnd::Failed => last_ok = false,
            LineTurnEnd::Stop(sig) => {
                stopped_by = Some(sig);
                break;
            }
        }
    }
    manager.shutdown_all().await;
    let code = match stopped_by {
        Some(sig) => sig.exit_code(),
        None if last_ok => EXIT_OK,
        None => EXIT_FAILURE,
    };
    crate::exec::saved_or_failure(&new.thread, code)
}
