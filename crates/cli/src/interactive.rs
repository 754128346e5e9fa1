//! `interpreter [PROMPT]`: a line-based interactive session. The answer streams to stdout,
//! progress to stderr, and approval requests are asked on stdin
//! (`y` yes, `a` yes for this session, `n` no, `s` stop the turn). `/exit` or end of input
//! quits; Ctrl-C interrupts the running turn, and at the prompt ends the session (exit 130).
//! SIGTERM / SIGHUP interrupt the running turn and end the session (exit 143 / 129).

use crate::cli::{EXIT_FAILURE, EXIT_OK, GlobalArgs};
use crate::out::outln;
use crate::render::{HumanRenderer, ReasoningDisplay};
use oi_config::history::PromptHistory;
use oi_core::{Thread, ThreadManager, ThreadManagerOptions};
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse, EventMsg, Op, ReviewDecision};
use oi_thread_store::SessionSource;
use std::io::Write;
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
enum TurnEnd {
    Ok,
    Failed,
    /// SIGTERM or SIGHUP arrived: the turn was interrupted and the session must end.
    Stop(TerminationSignal),
}

async fn run_one_turn(
    thread: &Thread,
    prompt: String,
    lines: &mut mpsc::UnboundedReceiver<String>,
    human: &mut HumanRenderer,
    signals: &mut TerminationSignals,
) -> TurnEnd {
    // `/compact` summarizes the conversation so far (a turn of its own).
    let submitted = if prompt.trim() == "/compact" {
        thread.submit(Op::Compact).await.ok()
    } else {
        crate::exec::submit_prompt(thread, prompt).await
    };
    let Some(id) = submitted else {
        return TurnEnd::Failed;
    };
    let mut streamed = false;
    let mut ok = true;
    let mut stop: Option<TerminationSignal> = None;
    loop {
        let ev = tokio::select! {
            ev = thread.next_event() => ev,
            sig = signals.recv() => {
                match (sig, stop) {
                    // Asked twice: stop waiting; the caller shuts the thread down.
                    (_, Some(first)) => return TurnEnd::Stop(first),
                    // Ctrl-C during a turn interrupts the turn and returns to the prompt.
                    (TerminationSignal::Interrupt, None) => {}
                    (other, None) => stop = Some(other),
                }
                let _ = thread.submit(Op::Interrupt).await;
                continue;
            }
        };
        let Ok(ev) = ev else {
            return TurnEnd::Failed;
        };
        match &ev.msg {
            EventMsg::AgentMessageDelta(d) => {
                let mut o = std::io::stdout().lock();
                let _ = write!(o, "{}", d.delta);
                let _ = o.flush();
                streamed = true;
            }
            EventMsg::AgentMessage(m) => {
                if !streamed {
                    outln!("{}", m.message);
                } else {
                    outln!();
                }
                streamed = false;
            }
            EventMsg::ExecApprovalRequest(req) => {
                let mut q = format!(
                    "Run `{}` in {}?",
                    shell_join(&req.command),
                    req.cwd.display()
                );
                if let Some(r) = &req.reason {
                    q = format!("{r}\n{q}");
                }
                let decision = ask(lines, &q, signals, &mut stop).await;
                let _ = thread
                    .submit(Op::ExecApproval {
                        id: req.effective_approval_id().to_string(),
                        decision,
                    })
                    .await;
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                let files: Vec<String> = req
                    .changes
                    .keys()
                    .map(|p| p.display().to_string())
                    .collect();
                let decision = ask(
                    lines,
                    &format!("Apply changes to {}?", files.join(", ")),
                    signals,
                    &mut stop,
                )
                .await;
                let _ = thread
                    .submit(Op::PatchApproval {
                        id: req.call_id.clone(),
                        decision,
                    })
                    .await;
            }
            EventMsg::ElicitationRequest(req) => {
                let message = req
                    .request
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or("");
                let decision = ask(
                    lines,
                    &format!("MCP server `{}` asks: {message}", req.server_name),
                    signals,
                    &mut stop,
                )
                .await;
                let action = if decision.is_approved() {
                    ElicitationAction::Accept
                } else {
                    ElicitationAction::Decline
                };
                let _ = thread
                    .submit(Op::ResolveElicitation {
                        server_name: req.server_name.clone(),
                        request_id: req.id.clone(),
                        response: ElicitationResponse {
                            action,
                            content: Some(serde_json::json!({})),
                        },
                    })
                    .await;
            }
            EventMsg::Error(_) => {
                ok = false;
                human.render(&ev.msg);
            }
            other => human.render(other),
        }
        if ev.id == id && ev.msg.ends_turn() {
            return match (stop, ok) {
                (Some(sig), _) => TurnEnd::Stop(sig),
                (None, true) => TurnEnd::Ok,
                (None, false) => TurnEnd::Failed,
            };
        }
    }
}

pub async fn run(global: GlobalArgs, first_prompt: Option<String>) -> i32 {
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
        match run_one_turn(&new.thread, prompt, &mut lines, &mut human, &mut signals).await {
            TurnEnd::Ok => last_ok = true,
            TurnEnd::Failed => last_ok = false,
            TurnEnd::Stop(sig) => {
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
