//! The app state: consumes the engine's [`EventMsg`]s and the user's keys, and emits
//! [`AppAction`]s (ops for the thread, or requests the runner fulfils with I/O). It does no
//! I/O itself, so every behaviour is testable without a terminal.

use crate::cells::{HistoryCell, Outcome, mcp_result_summary};
use crate::composer::{Composer, ComposerResult};
use crate::overlay::{
    Approval, ApprovalSubject, ElicitationForm, FieldKind, Overlay, Picker, PickerItem, PickerValue,
};
use crate::slash::{self, Parsed, SlashCommand};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy};
use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{
    ElicitationAction, ElicitationResponse, EventMsg, ExecCommandStatus, McpStartupStatus, Op,
    ReviewDecision, SessionConfiguredEvent, TurnOverrides,
};
use oi_protocol::user_input::UserInput;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `/approvals` presets: (label, description, sandbox, approval policy).
pub const APPROVAL_PRESETS: &[(&str, &str, SandboxMode, AskForApproval)] = &[
    (
        "Read only",
        "read files; ask before any edit or command that writes",
        SandboxMode::ReadOnly,
        AskForApproval::OnRequest,
    ),
    (
        "Auto",
        "edit and run in the workspace; ask to go beyond it",
        SandboxMode::WorkspaceWrite,
        AskForApproval::OnRequest,
    ),
    (
        "Ask for everything",
        "workspace sandbox, ask before every command not known safe",
        SandboxMode::WorkspaceWrite,
        AskForApproval::Untrusted,
    ),
    (
        "Full access",
        "no sandbox, never ask (only where you trust the model)",
        SandboxMode::DangerFullAccess,
        AskForApproval::Never,
    ),
];

/// The prompt `/init` sends.
pub const INIT_PROMPT: &str = "Create an AGENTS.md file at the root of this repository for future coding agents. \
Look at the project first (build files, README, directory layout, tests, CI). Keep it short and concrete: \
what the project is, how it is laid out, the exact commands to build, test, lint and format, code style and \
naming conventions, and anything an agent must not do. Write the file with apply_patch.";

/// A second Ctrl+C within this long on an empty composer exits.
pub const QUIT_CONFIRM_WINDOW: Duration = Duration::from_secs(2);

/// What the app asks of its runner.
#[derive(Clone, Debug)]
pub enum AppAction {
    /// Submit to the current thread.
    Op(Op),
    /// Leave: shut the thread down and exit 0.
    Quit,
    NewThread,
    /// Load stored threads and call [`App::open_resume_picker`].
    OpenResumePicker,
    Resume(oi_protocol::ThreadId),
    Fork,
    /// Compute the git diff and push it as a cell.
    ShowDiff,
    ShowMcp {
        verbose: bool,
    },
    /// Write AGENTS.md via the model (the runner checks it does not exist yet).
    Init,
    Logout,
    /// Search files for the `@` picker; answer with [`App::set_file_matches`].
    SearchFiles(String),
    /// Clear and repaint the screen (Ctrl+L).
    Redraw,
}

/// Per-server MCP state from startup events.
#[derive(Clone, Debug, PartialEq)]
pub enum McpState {
    Starting,
    Ready,
    Failed(String),
    Cancelled,
}

/// What the status line shows.
#[derive(Clone, Debug, Default)]
pub struct StatusInfo {
    pub model: String,
    pub provider: String,
    pub effort: Option<ReasoningEffort>,
    pub cwd: PathBuf,
    pub sandbox: Option<SandboxMode>,
    pub approval: Option<AskForApproval>,
    pub thread_id: String,
    pub context_window: Option<i64>,
    /// Tokens the last request put in the window.
    pub context_used: Option<i64>,
    pub total_tokens: i64,
    pub mcp: BTreeMap<String, McpState>,
    pub turn_started: Option<Instant>,
}

impl StatusInfo {
    /// Percent of the context window still free, when known.
    pub fn context_left_percent(&self) -> Option<i64> {
        let window = self.context_window.filter(|w| *w > 0)?;
        let used = self.context_used.unwrap_or(0).clamp(0, window);
        Some(((window - used) * 100) / window)
    }
}

/// Which popup sits above the composer.
#[derive(Clone, Debug, PartialEq)]
pub enum Popup {
    /// Slash commands matching what is typed.
    Commands { selected: usize },
    /// Files matching the `@` token.
    Files { selected: usize },
}

/// The whole UI state.
pub struct App {
    pub composer: Composer,
    pub status: StatusInfo,
    /// Finished cells not yet written into the scrollback.
    pending: Vec<HistoryCell>,
    /// Every finished cell (for the transcript overlay and Ctrl+L).
    pub transcript: Vec<HistoryCell>,
    /// Streaming assistant text.
    pub streaming: String,
    pub streaming_reasoning: String,
    /// Running commands, patches and MCP calls, by call id.
    pub running: Vec<(String, HistoryCell)>,
    pub overlay: Option<Overlay>,
    /// Approvals and questions waiting behind the open overlay.
    queued: VecDeque<Overlay>,
    pub popup: Option<Popup>,
    pub file_matches: Vec<String>,
    /// Settings changed by `/model` or `/approvals`, sent with the next turn.
    pending_overrides: TurnOverrides,
    /// Model ids for `/model`, with their efforts.
    pub models: Vec<(String, Vec<ReasoningEffort>)>,
    /// A hint shown under the composer (e.g. "press Ctrl+C again to quit").
    pub hint: Option<String>,
    last_ctrl_c: Option<Instant>,
    pub should_quit: bool,
}

fn effort_from(s: &str) -> Option<ReasoningEffort> {
    Some(match s {
        "none" => ReasoningEffort::None,
        "minimal" => ReasoningEffort::Minimal,
        "low" => ReasoningEffort::Low,
        "medium" => ReasoningEffort::Medium,
        "high" => ReasoningEffort::High,
        "xhigh" => ReasoningEffort::Xhigh,
        _ => return None,
    })
}

impl App {
    pub fn new(composer: Composer) -> Self {
        Self {
            composer,
            status: StatusInfo::default(),
            pending: Vec::new(),
            transcript: Vec::new(),
            streaming: String::new(),
            streaming_reasoning: String::new(),
            running: Vec::new(),
            overlay: None,
            queued: VecDeque::new(),
            popup: None,
            file_matches: Vec::new(),
            pending_overrides: TurnOverrides::default(),
            models: Vec::new(),
            hint: None,
            last_ctrl_c: None,
            should_quit: false,
        }
    }

    /// True while a turn runs.
    pub fn is_running(&self) -> bool {
        self.status.turn_started.is_some()
    }

    /// Takes the finished cells that still have to go into the scrollback.
    pub fn take_pending(&mut self) -> Vec<HistoryCell> {
        std::mem::take(&mut self.pending)
    }

    /// Adds a finished cell.
    pub fn push_cell(&mut self, cell: HistoryCell) {
        self.transcript.push(cell.clone());
        self.pending.push(cell);
    }

    fn push_info(&mut self, title: &str, lines: Vec<String>) {
        self.push_cell(HistoryCell::Info {
            title: title.to_string(),
            lines,
        });
    }

    fn push_error(&mut self, message: String) {
        self.push_cell(HistoryCell::Error { message });
    }

    fn open(&mut self, overlay: Overlay) {
        if self.overlay.is_some() {
            self.queued.push_back(overlay);
        } else {
            self.overlay = Some(overlay);
        }
    }

    fn close_overlay(&mut self) {
        self.overlay = self.queued.pop_front();
    }

    fn flush_streaming(&mut self) {
        if !self.streaming_reasoning.trim().is_empty() {
            let text = std::mem::take(&mut self.streaming_reasoning);
            self.push_cell(HistoryCell::Reasoning { text });
        }
        self.streaming_reasoning.clear();
        if !self.streaming.trim().is_empty() {
            let markdown = std::mem::take(&mut self.streaming);
            self.push_cell(HistoryCell::Assistant { markdown });
        }
        self.streaming.clear();
    }

    /// Applies the session's settings (first event of every thread).
    pub fn on_session_configured(&mut self, ev: &SessionConfiguredEvent) {
        let mcp = std::mem::take(&mut self.status.mcp);
        self.status = StatusInfo {
            model: ev.model.clone(),
            provider: ev.model_provider_id.clone(),
            effort: ev.reasoning_effort,
            cwd: ev.cwd.clone(),
            sandbox: Some(ev.sandbox_policy.mode()),
            approval: Some(ev.approval_policy),
            thread_id: ev.thread_id.to_string(),
            mcp,
            ..StatusInfo::default()
        };
        if let Some(w) = self.models_context_window(&ev.model) {
            self.status.context_window = Some(w);
        }
        self.push_cell(HistoryCell::Header {
            model: ev.model.clone(),
            provider: ev.model_provider_id.clone(),
            cwd: ev.cwd.clone(),
            thread_id: ev.thread_id.to_string(),
        });
        // A resumed thread replays its history.
        for msg in ev.initial_messages.iter().flatten() {
            match msg {
                EventMsg::UserMessage(m) => self.push_cell(HistoryCell::User {
                    text: m.message.clone(),
                }),
                EventMsg::AgentMessage(m) => self.push_cell(HistoryCell::Assistant {
                    markdown: m.message.clone(),
                }),
                EventMsg::Warning(w) => self.push_cell(HistoryCell::Warning {
                    message: w.message.clone(),
                }),
                _ => {}
            }
        }
    }

    fn models_context_window(&self, _model: &str) -> Option<i64> {
        None
    }

    /// Applies one engine event.
    pub fn on_event(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::SessionConfigured(ev) => self.on_session_configured(ev),
            EventMsg::TaskStarted(ev) => {
                self.status.turn_started = Some(Instant::now());
                if ev.model_context_window.is_some() {
                    self.status.context_window = ev.model_context_window;
                }
            }
            EventMsg::UserMessage(m) => self.push_cell(HistoryCell::User {
                text: m.message.clone(),
            }),
            EventMsg::AgentMessageDelta(d) => {
                if !self.streaming_reasoning.is_empty() {
                    let text = std::mem::take(&mut self.streaming_reasoning);
                    self.push_cell(HistoryCell::Reasoning { text });
                }
                self.streaming.push_str(&d.delta)
            }
            EventMsg::AgentMessage(m) => {
                self.streaming.clear();
                if !self.streaming_reasoning.is_empty() {
                    let text = std::mem::take(&mut self.streaming_reasoning);
                    self.push_cell(HistoryCell::Reasoning { text });
                }
                if !m.message.trim().is_empty() {
                    self.push_cell(HistoryCell::Assistant {
                        markdown: m.message.clone(),
                    });
                }
            }
            EventMsg::AgentReasoningDelta(d) => self.streaming_reasoning.push_str(&d.delta),
            EventMsg::AgentReasoning(r) => {
                self.streaming_reasoning.clear();
                self.push_cell(HistoryCell::Reasoning {
                    text: r.text.clone(),
                });
            }
            EventMsg::ExecCommandBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::Exec {
                        command: shell_join(&b.command),
                        output: String::new(),
                        outcome: Outcome::Running,
                    },
                ));
            }
            EventMsg::ExecCommandOutputDelta(d) => {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&d.chunk)
                    .unwrap_or_default();
                if let Some((_, HistoryCell::Exec { output, .. })) =
                    self.running.iter_mut().find(|(id, _)| *id == d.call_id)
                {
                    output.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
            EventMsg::ExecCommandEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                let outcome = if e.status == ExecCommandStatus::Declined {
                    Outcome::Declined
                } else {
                    Outcome::Done {
                        exit_code: e.exit_code,
                        duration_ms: e.duration.as_millis(),
                    }
                };
                self.push_cell(HistoryCell::Exec {
                    command: shell_join(&e.command),
                    output: e.aggregated_output.clone(),
                    outcome,
                });
            }
            EventMsg::ExecApprovalRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Approval(Approval {
                    id: req.effective_approval_id().to_string(),
                    subject: ApprovalSubject::Exec {
                        command: shell_join(&req.command),
                        cwd: req.cwd.clone(),
                    },
                    reason: req.reason.clone(),
                }));
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Approval(Approval {
                    id: req.call_id.clone(),
                    subject: ApprovalSubject::Patch {
                        changes: req.changes.clone().into_iter().collect(),
                    },
                    reason: req.reason.clone(),
                }));
            }
            EventMsg::PatchApplyBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::Patch {
                        changes: b.changes.clone().into_iter().collect(),
                        ok: None,
                    },
                ));
            }
            EventMsg::PatchApplyEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                self.push_cell(HistoryCell::Patch {
                    changes: e.changes.clone().into_iter().collect(),
                    ok: Some(e.success),
                });
                if !e.success && !e.stderr.trim().is_empty() {
                    self.push_error(e.stderr.trim().to_string());
                }
            }
            EventMsg::McpStartupUpdate(u) => {
                let state = match &u.status {
                    McpStartupStatus::Starting => McpState::Starting,
                    McpStartupStatus::Ready => McpState::Ready,
                    McpStartupStatus::Failed { error } => McpState::Failed(error.clone()),
                    McpStartupStatus::Cancelled => McpState::Cancelled,
                };
                if let McpState::Failed(e) = &state {
                    self.push_cell(HistoryCell::Warning {
                        message: format!("MCP server `{}` failed to start: {e}", u.server),
                    });
                }
                self.status.mcp.insert(u.server.clone(), state);
            }
            EventMsg::McpStartupComplete(c) => {
                for s in &c.ready {
                    self.status.mcp.insert(s.clone(), McpState::Ready);
                }
                for f in &c.failed {
                    self.status
                        .mcp
                        .insert(f.server.clone(), McpState::Failed(f.error.clone()));
                }
                for s in &c.cancelled {
                    self.status.mcp.insert(s.clone(), McpState::Cancelled);
                }
            }
            EventMsg::McpToolCallBegin(b) => {
                self.flush_streaming();
                self.running.push((
                    b.call_id.clone(),
                    HistoryCell::McpCall {
                        server: b.invocation.server.clone(),
                        tool: b.invocation.tool.clone(),
                        arguments: b
                            .invocation
                            .arguments
                            .as_ref()
                            .map(|a| a.to_string())
                            .unwrap_or_default(),
                        result: None,
                        duration_ms: None,
                    },
                ));
            }
            EventMsg::McpToolCallEnd(e) => {
                self.running.retain(|(id, _)| *id != e.call_id);
                let result = match &e.result {
                    Ok(v) if v.get("isError").and_then(|b| b.as_bool()) == Some(true) => {
                        Err(mcp_result_summary(v))
                    }
                    Ok(v) => Ok(mcp_result_summary(v)),
                    Err(e) => Err(e.clone()),
                };
                self.push_cell(HistoryCell::McpCall {
                    server: e.invocation.server.clone(),
                    tool: e.invocation.tool.clone(),
                    arguments: e
                        .invocation
                        .arguments
                        .as_ref()
                        .map(|a| a.to_string())
                        .unwrap_or_default(),
                    result: Some(result),
                    duration_ms: Some(e.duration.as_millis()),
                });
            }
            EventMsg::ElicitationRequest(req) => {
                self.flush_streaming();
                self.open(Overlay::Elicitation(ElicitationForm::from_request(
                    &req.server_name,
                    req.id.clone(),
                    &req.request,
                )));
            }
            EventMsg::Error(e) => {
                self.flush_streaming();
                self.push_error(e.message.clone());
            }
            EventMsg::Warning(w) => self.push_cell(HistoryCell::Warning {
                message: w.message.clone(),
            }),
            EventMsg::StreamError(s) => self.push_cell(HistoryCell::Warning {
                message: format!("{} (retrying)", s.message),
            }),
            EventMsg::TokenCount(t) => {
                if let Some(info) = &t.info {
                    self.status.context_used = Some(info.last_token_usage.total_tokens);
                    self.status.total_tokens = info.total_token_usage.total_tokens;
                    if info.model_context_window.is_some() {
                        self.status.context_window = info.model_context_window;
                    }
                }
            }
            EventMsg::ContextCompacted(c) => {
                let detail = match (c.tokens_before, c.tokens_after) {
                    (Some(b), Some(a)) => format!("{b} → {a} tokens"),
                    _ => String::new(),
                };
                self.push_info(
                    if c.automatic {
                        "Context compacted automatically"
                    } else {
                        "Context compacted"
                    },
                    if detail.is_empty() {
                        vec![]
                    } else {
                        vec![detail]
                    },
                );
            }
            EventMsg::TaskComplete(done) => self.end_turn(false, done.duration_ms),
            EventMsg::TurnAborted(a) => self.end_turn(true, a.duration_ms),
            // Progress, shutdown, and event kinds newer than this UI: nothing to show.
            _ => {}
        }
    }

    fn end_turn(&mut self, interrupted: bool, duration_ms: Option<u64>) {
        self.flush_streaming();
        // Whatever was still running ends with the turn.
        for (_, cell) in std::mem::take(&mut self.running) {
            let cell = match cell {
                HistoryCell::Exec {
                    command, output, ..
                } => HistoryCell::Exec {
                    command,
                    output,
                    outcome: Outcome::Declined,
                },
                other => other,
            };
            self.push_cell(cell);
        }
        // Approvals of a finished turn can no longer be answered.
        if matches!(
            self.overlay,
            Some(Overlay::Approval(_)) | Some(Overlay::Elicitation(_))
        ) {
            self.overlay = None;
        }
        self.queued
            .retain(|o| !matches!(o, Overlay::Approval(_) | Overlay::Elicitation(_)));
        let duration_ms = duration_ms.or_else(|| {
            self.status
                .turn_started
                .map(|t| t.elapsed().as_millis() as u64)
        });
        self.status.turn_started = None;
        self.push_cell(HistoryCell::TurnEnded {
            interrupted,
            duration_ms,
        });
    }

    /// A bracketed paste.
    pub fn on_paste(&mut self, text: &str) -> Vec<AppAction> {
        if let Some(Overlay::Elicitation(form)) = &mut self.overlay {
            if let Some(f) = form.fields.get_mut(form.focus) {
                f.value.push_str(text.lines().next().unwrap_or_default());
            }
            return vec![];
        }
        if self.overlay.is_none() {
            self.composer.paste(text);
            return self.refresh_popup();
        }
        vec![]
    }

    /// One key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<AppAction> {
        if key.kind == KeyEventKind::Release {
            return vec![];
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code != KeyCode::Char('c') {
            self.last_ctrl_c = None;
        }
        if ctrl && key.code == KeyCode::Char('l') {
            return vec![AppAction::Redraw];
        }
        match self.overlay.take() {
            Some(Overlay::Approval(a)) => return self.approval_key(a, key),
            Some(Overlay::Elicitation(f)) => return self.elicitation_key(f, key),
            Some(Overlay::Picker(p)) => return self.picker_key(p, key),
            Some(Overlay::Transcript { scroll }) => {
                let scroll = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => scroll + 1,
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_sub(1),
                    KeyCode::PageUp => scroll + 10,
                    KeyCode::PageDown => scroll.saturating_sub(10),
                    KeyCode::Home => usize::MAX / 2,
                    KeyCode::End => 0,
                    _ => return vec![],
                };
                self.overlay = Some(Overlay::Transcript { scroll });
                return vec![];
            }
            None => {}
        }
        match key.code {
            KeyCode::Char('c') if ctrl => return self.ctrl_c(),
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => {
                self.should_quit = true;
                return vec![AppAction::Quit];
            }
            KeyCode::Char('t') if ctrl => {
                self.overlay = Some(Overlay::Transcript { scroll: 0 });
                return vec![];
            }
            KeyCode::Esc => {
                if self.popup.is_some() {
                    self.popup = None;
                    return vec![];
                }
                if self.is_running() {
                    return vec![AppAction::Op(Op::Interrupt)];
                }
                return vec![];
            }
            _ => {}
        }
        self.last_ctrl_c = None;
        self.hint = None;
        if let Some(actions) = self.popup_key(key) {
            return actions;
        }
        match self.composer.handle_key(key) {
            ComposerResult::Submitted(text) => {
                self.popup = None;
                self.submit(text)
            }
            ComposerResult::Handled => self.refresh_popup(),
            ComposerResult::Ignored => vec![],
        }
    }

    fn ctrl_c(&mut self) -> Vec<AppAction> {
        if self.is_running() {
            self.hint = Some("interrupting… (Ctrl+C again on an empty composer quits)".into());
            self.last_ctrl_c = Some(Instant::now());
            return vec![AppAction::Op(Op::Interrupt)];
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            self.popup = None;
            return vec![];
        }
        if self
            .last_ctrl_c
            .is_some_and(|t| t.elapsed() < QUIT_CONFIRM_WINDOW)
        {
            self.should_quit = true;
            return vec![AppAction::Quit];
        }
        self.last_ctrl_c = Some(Instant::now());
        self.hint = Some("press Ctrl+C again to quit".into());
        vec![]
    }

    fn approval_key(&mut self, a: Approval, key: KeyEvent) -> Vec<AppAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let decision = match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') if !ctrl => ReviewDecision::Approved,
            KeyCode::Char('a') | KeyCode::Char('A') if !ctrl => ReviewDecision::ApprovedForSession,
            KeyCode::Char('n') | KeyCode::Char('N') if !ctrl => ReviewDecision::Denied,
            KeyCode::Esc => ReviewDecision::Abort,
            KeyCode::Char('c') if ctrl => ReviewDecision::Abort,
            _ => {
                self.overlay = Some(Overlay::Approval(a));
                return vec![];
            }
        };
        let what = match &a.subject {
            ApprovalSubject::Exec { command, .. } => format!("`{command}`"),
            ApprovalSubject::Patch { changes } => format!("patch to {} file(s)", changes.len()),
        };
        let verdict = match decision {
            ReviewDecision::Approved => "approved",
            ReviewDecision::ApprovedForSession => "approved for this session",
            ReviewDecision::Abort => "denied; turn stopped",
            _ => "denied",
        };
        self.push_cell(HistoryCell::Info {
            title: format!("{what} {verdict}"),
            lines: vec![],
        });
        let op = match a.subject {
            ApprovalSubject::Exec { .. } => Op::ExecApproval { id: a.id, decision },
            ApprovalSubject::Patch { .. } => Op::PatchApproval { id: a.id, decision },
        };
        self.close_overlay();
        vec![AppAction::Op(op)]
    }

    fn elicitation_key(&mut self, mut form: ElicitationForm, key: KeyEvent) -> Vec<AppAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let answer = |form: &ElicitationForm, action, content| {
            AppAction::Op(Op::ResolveElicitation {
                server_name: form.server.clone(),
                request_id: form.request_id.clone(),
                response: ElicitationResponse { action, content },
            })
        };
        let kind = form.fields.get(form.focus).map(|f| f.kind.clone());
        match key.code {
            KeyCode::Esc => {
                self.close_overlay();
                return vec![answer(&form, ElicitationAction::Decline, None)];
            }
            KeyCode::Char('c') if ctrl => {
                self.close_overlay();
                return vec![answer(&form, ElicitationAction::Cancel, None)];
            }
            KeyCode::Enter => match form.content() {
                Ok(content) => {
                    self.close_overlay();
                    return vec![answer(&form, ElicitationAction::Accept, Some(content))];
                }
                Err(e) => form.error = Some(e),
            },
            KeyCode::Tab | KeyCode::Down if !form.fields.is_empty() => {
                form.focus = (form.focus + 1) % form.fields.len()
            }
            KeyCode::BackTab | KeyCode::Up if !form.fields.is_empty() => {
                form.focus = (form.focus + form.fields.len() - 1) % form.fields.len()
            }
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' ')
                if matches!(kind, Some(FieldKind::Boolean) | Some(FieldKind::Choice(_))) =>
            {
                form.cycle(key.code != KeyCode::Left)
            }
            KeyCode::Backspace => {
                if let Some(f) = form.fields.get_mut(form.focus) {
                    f.value.pop();
                }
            }
            KeyCode::Char(c)
                if !ctrl
                    && matches!(
                        kind,
                        Some(FieldKind::Text | FieldKind::Number | FieldKind::Integer)
                    ) =>
            {
                if let Some(f) = form.fields.get_mut(form.focus) {
                    f.value.push(c);
                }
            }
            _ => {}
        }
        self.overlay = Some(Overlay::Elicitation(form));
        vec![]
    }

    fn picker_key(&mut self, mut p: Picker, key: KeyEvent) -> Vec<AppAction> {
        let n = p.visible().len();
        match key.code {
            KeyCode::Esc => return vec![],
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down if n > 0 => p.selected = (p.selected + 1).min(n - 1),
            KeyCode::Backspace => {
                p.query.pop();
                p.selected = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                p.query.push(c);
                p.selected = 0;
            }
            KeyCode::Enter => {
                let Some(item) = p.visible().get(p.selected).map(|i| i.value.clone()) else {
                    self.overlay = Some(Overlay::Picker(p));
                    return vec![];
                };
                return self.picked(item);
            }
            _ => {}
        }
        self.overlay = Some(Overlay::Picker(p));
        vec![]
    }

    fn picked(&mut self, value: PickerValue) -> Vec<AppAction> {
        match value {
            PickerValue::Model { model, effort } => {
                self.status.model = model.clone();
                self.status.effort = effort;
                self.pending_overrides.model = Some(model.clone());
                self.pending_overrides.effort = effort;
                let effort = effort
                    .map(|e| format!(" ({})", e.as_str()))
                    .unwrap_or_default();
                self.push_info(
                    &format!("Model set to {model}{effort}"),
                    vec!["applies from the next turn".into()],
                );
                vec![]
            }
            PickerValue::ApprovalPreset(i) => {
                let Some((label, _, sandbox, approval)) = APPROVAL_PRESETS.get(i) else {
                    return vec![];
                };
                self.status.sandbox = Some(*sandbox);
                self.status.approval = Some(*approval);
                self.pending_overrides.sandbox_policy = Some(match sandbox {
                    SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
                    SandboxMode::WorkspaceWrite => SandboxPolicy::workspace_write(),
                    SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
                });
                self.pending_overrides.approval_policy = Some(*approval);
                self.push_info(
                    &format!("Approvals: {label}"),
                    vec![format!(
                        "sandbox {sandbox} · approval {approval}; applies from the next turn"
                    )],
                );
                vec![]
            }
            PickerValue::Thread(id) => vec![AppAction::Resume(id)],
        }
    }

    /// Keys for the open popup; `None` lets the composer have the key.
    fn popup_key(&mut self, key: KeyEvent) -> Option<Vec<AppAction>> {
        let popup = self.popup.clone()?;
        match popup {
            Popup::Commands { selected } => {
                let typed = self.composer.text().trim_start_matches('/').to_string();
                let matches = slash::filter(&typed);
                match key.code {
                    KeyCode::Up => {
                        self.popup = Some(Popup::Commands {
                            selected: selected.saturating_sub(1),
                        });
                        Some(vec![])
                    }
                    KeyCode::Down => {
                        self.popup = Some(Popup::Commands {
                            selected: (selected + 1).min(matches.len().saturating_sub(1)),
                        });
                        Some(vec![])
                    }
                    KeyCode::Tab => {
                        if let Some((name, _, _)) = matches.get(selected) {
                            self.composer.set_text(&format!("/{name} "));
                        }
                        self.popup = None;
                        Some(vec![])
                    }
                    KeyCode::Enter if key.modifiers.is_empty() => {
                        // Enter runs the highlighted command unless the exact name is typed.
                        let exact = slash::COMMANDS.iter().any(|(n, _, _)| *n == typed);
                        if !exact && let Some((name, _, _)) = matches.get(selected) {
                            self.composer.set_text(&format!("/{name}"));
                        }
                        None
                    }
                    _ => None,
                }
            }
            Popup::Files { selected } => match key.code {
                KeyCode::Up => {
                    self.popup = Some(Popup::Files {
                        selected: selected.saturating_sub(1),
                    });
                    Some(vec![])
                }
                KeyCode::Down => {
                    self.popup = Some(Popup::Files {
                        selected: (selected + 1).min(self.file_matches.len().saturating_sub(1)),
                    });
                    Some(vec![])
                }
                KeyCode::Tab | KeyCode::Enter if key.modifiers.is_empty() => {
                    if let Some(path) = self.file_matches.get(selected).cloned() {
                        self.composer.replace_at_token(&path);
                        self.popup = None;
                        Some(vec![])
                    } else {
                        self.popup = None;
                        None
                    }
                }
                _ => None,
            },
        }
    }

    /// Opens, updates or closes the popup after the composer text changed.
    fn refresh_popup(&mut self) -> Vec<AppAction> {
        let text = self.composer.text();
        if text.starts_with('/') && !text.contains(char::is_whitespace) {
            let typed = &text[1..];
            if !slash::filter(typed).is_empty() {
                let selected = match self.popup {
                    Some(Popup::Commands { selected }) => selected,
                    _ => 0,
                };
                let max = slash::filter(typed).len().saturating_sub(1);
                self.popup = Some(Popup::Commands {
                    selected: selected.min(max),
                });
                return vec![];
            }
        }
        if let Some((_, query)) = self.composer.at_token() {
            if !matches!(self.popup, Some(Popup::Files { .. })) {
                self.file_matches.clear();
            }
            self.popup = Some(Popup::Files { selected: 0 });
            return vec![AppAction::SearchFiles(query)];
        }
        self.popup = None;
        vec![]
    }

    /// Results of a file search for the `@` popup.
    pub fn set_file_matches(&mut self, query: &str, matches: Vec<String>) {
        if self.composer.at_token().map(|(_, q)| q).as_deref() == Some(query) {
            self.file_matches = matches;
        }
    }

    fn submit(&mut self, text: String) -> Vec<AppAction> {
        if let Some(parsed) = slash::parse(&text) {
            return match parsed {
                Parsed::Command(cmd, args) => self.run_command(cmd, &args),
                Parsed::Unknown(name) => {
                    self.push_error(format!(
                        "Unknown command `/{name}`. Type /help to see the commands; it was not sent to the model."
                    ));
                    vec![]
                }
            };
        }
        vec![self.user_turn(text)]
    }

    fn user_turn(&mut self, text: String) -> AppAction {
        AppAction::Op(Op::UserInput {
            items: vec![UserInput::text(text)],
            overrides: std::mem::take(&mut self.pending_overrides),
        })
    }

    fn run_command(&mut self, cmd: SlashCommand, args: &str) -> Vec<AppAction> {
        let busy = |app: &mut App, what: &str| {
            app.push_error(format!(
                "`/{what}` is not available while a turn runs; press Esc to interrupt it first"
            ));
            vec![]
        };
        match cmd {
            SlashCommand::Quit | SlashCommand::Exit => {
                self.should_quit = true;
                vec![AppAction::Quit]
            }
            SlashCommand::Help => {
                self.push_info("Commands", slash::help_lines());
                vec![]
            }
            SlashCommand::New if self.is_running() => busy(self, "new"),
            SlashCommand::New => vec![AppAction::NewThread],
            SlashCommand::Resume if self.is_running() => busy(self, "resume"),
            SlashCommand::Resume if !args.is_empty() => match args.parse() {
                Ok(id) => vec![AppAction::Resume(id)],
                Err(_) => {
                    self.push_error(format!(
                        "`{args}` is not a thread id; run /resume without arguments to pick one"
                    ));
                    vec![]
                }
            },
            SlashCommand::Resume => vec![AppAction::OpenResumePicker],
            SlashCommand::Fork if self.is_running() => busy(self, "fork"),
            SlashCommand::Fork => vec![AppAction::Fork],
            SlashCommand::Compact => vec![AppAction::Op(Op::Compact)],
            SlashCommand::Diff => vec![AppAction::ShowDiff],
            SlashCommand::Mention => {
                self.composer.set_text("@");
                self.refresh_popup()
            }
            SlashCommand::Status => {
                let lines = self.status_lines();
                self.push_info("Status", lines);
                vec![]
            }
            SlashCommand::Mcp => vec![AppAction::ShowMcp {
                verbose: args == "verbose",
            }],
            SlashCommand::Init if self.is_running() => busy(self, "init"),
            SlashCommand::Init => vec![AppAction::Init],
            SlashCommand::Logout => vec![AppAction::Logout],
            SlashCommand::Model => {
                let items = self.model_items();
                if items.is_empty() {
                    self.push_error("No models are known; set `model` in config.toml".into());
                    return vec![];
                }
                self.overlay = Some(Overlay::Picker(Picker::new("Choose a model", items)));
                vec![]
            }
            SlashCommand::Approvals => {
                let items = APPROVAL_PRESETS
                    .iter()
                    .enumerate()
                    .map(|(i, (label, desc, _, _))| PickerItem {
                        label: label.to_string(),
                        detail: desc.to_string(),
                        value: PickerValue::ApprovalPreset(i),
                    })
                    .collect();
                self.overlay = Some(Overlay::Picker(Picker::new("Approvals", items)));
                vec![]
            }
        }
    }

    /// The prompt `/init` sends, as a turn.
    pub fn init_turn(&mut self) -> AppAction {
        self.user_turn(INIT_PROMPT.to_string())
    }

    fn model_items(&self) -> Vec<PickerItem> {
        let mut items = Vec::new();
        let mut models = self.models.clone();
        if !models.iter().any(|(m, _)| *m == self.status.model) && !self.status.model.is_empty() {
            models.insert(0, (self.status.model.clone(), vec![]));
        }
        for (model, efforts) in models {
            if efforts.is_empty() {
                items.push(PickerItem {
                    label: model.clone(),
                    detail: String::new(),
                    value: PickerValue::Model {
                        model,
                        effort: None,
                    },
                });
            } else {
                for e in efforts {
                    items.push(PickerItem {
                        label: format!("{model} {}", e.as_str()),
                        detail: "reasoning effort".into(),
                        value: PickerValue::Model {
                            model: model.clone(),
                            effort: Some(e),
                        },
                    });
                }
            }
        }
        items
    }

    /// Sets the `/model` catalog: `(model id, efforts as strings)`.
    pub fn set_models(&mut self, models: Vec<(String, Vec<String>)>) {
        self.models = models
            .into_iter()
            .map(|(m, e)| (m, e.iter().filter_map(|s| effort_from(s)).collect()))
            .collect();
    }

    /// Opens the `/resume` picker over `(id, title, detail)` rows.
    pub fn open_resume_picker(&mut self, threads: Vec<(oi_protocol::ThreadId, String, String)>) {
        if threads.is_empty() {
            self.push_info("No stored threads to resume", vec![]);
            return;
        }
        let items = threads
            .into_iter()
            .map(|(id, label, detail)| PickerItem {
                label,
                detail,
                value: PickerValue::Thread(id),
            })
            .collect();
        self.overlay = Some(Overlay::Picker(Picker::new(
            "Resume a thread (type to search)",
            items,
        )));
    }

    fn status_lines(&self) -> Vec<String> {
        let s = &self.status;
        let mut out = vec![
            format!("thread    {}", s.thread_id),
            format!(
                "model     {}{} via {}",
                s.model,
                s.effort
                    .map(|e| format!(" ({})", e.as_str()))
                    .unwrap_or_default(),
                s.provider
            ),
            format!("cwd       {}", s.cwd.display()),
            format!(
                "sandbox   {} · approval {}",
                s.sandbox.map(|m| m.to_string()).unwrap_or_default(),
                s.approval.map(|a| a.to_string()).unwrap_or_default()
            ),
            format!("tokens    {} used in this thread", s.total_tokens),
        ];
        match (s.context_window, s.context_left_percent()) {
            (Some(w), Some(p)) => out.push(format!("context   {p}% left of {w}")),
            _ => out.push("context   window size unknown".into()),
        }
        let ready = s.mcp.values().filter(|m| **m == McpState::Ready).count();
        out.push(format!("mcp       {ready}/{} servers ready", s.mcp.len()));
        out
    }

    /// `/mcp`: one block per server. `tools` = (server, tool, description, approval mode).
    pub fn show_mcp(&mut self, verbose: bool, servers: Vec<McpServerRow>) {
        if servers.is_empty() {
            self.push_info(
                "No MCP servers configured",
                vec!["add one with `interpreter mcp add NAME -- COMMAND`".into()],
            );
            return;
        }
        let mut lines = Vec::new();
        for s in servers {
            let state = match self.status.mcp.get(&s.name) {
                Some(McpState::Ready) => "ready".to_string(),
                Some(McpState::Starting) | None => "starting".to_string(),
                Some(McpState::Failed(_)) => "failed".to_string(),
                Some(McpState::Cancelled) => "cancelled".to_string(),
            };
            let state = if s.enabled { state } else { "disabled".into() };
            lines.push(format!(
                "{} · {state} · {} · {} tools",
                s.name,
                s.transport,
                s.tools.len()
            ));
            let error = s.error.or_else(|| match self.status.mcp.get(&s.name) {
                Some(McpState::Failed(e)) => Some(e.clone()),
                _ => None,
            });
            if let Some(e) = error {
                lines.push(format!("  last error: {e}"));
            }
            if verbose {
                for (tool, desc, approval) in &s.tools {
                    let desc = desc.lines().next().unwrap_or_default();
                    lines.push(format!("  {tool} [{approval}] {desc}"));
                }
            }
        }
        self.push_info("MCP servers", lines);
    }
}

/// One server for `/mcp`.
#[derive(Clone, Debug, Default)]
pub struct McpServerRow {
    pub name: String,
    pub transport: String,
    pub enabled: bool,
    pub error: Option<String>,
    /// (tool, description, approval mode)
    pub tools: Vec<(String, String, String)>,
}
