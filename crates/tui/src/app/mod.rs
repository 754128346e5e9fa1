//! The app state: consumes the engine's [`EventMsg`]s and the user's keys, and emits
//! [`AppAction`]s (ops for the thread, or requests the runner fulfils with I/O). It does no
//! I/O itself, so every behaviour is testable without a terminal. Keys and popups are in
//! `keys`, slash commands in `commands`, engine events in `events`.

mod commands;
mod commands_daily;
mod events;
mod export;
mod extensions;
mod extras;
mod images;
mod keys;
mod mcp;
mod plan;

pub use crate::overlay::DailyChoice;
pub use crate::status_items::{McpState, StatusInfo};
pub use commands_daily::{ThreadCommand, TuiSetting};
pub use extensions::{PROMPT_COMMAND_PREFIX, SkillRow};
pub use mcp::{McpCatalog, McpPrompt};

use crate::cells::{HistoryCell, Outcome};
use crate::composer::{Composer, ComposerResult};
use crate::overlay::{
    Approval, ApprovalSubject, ElicitationForm, FieldKind, Overlay, Picker, PickerItem, PickerValue,
};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy};
use oi_protocol::protocol::{
    ElicitationAction, ElicitationResponse, EventMsg, Op, ReviewDecision, SessionConfiguredEvent,
    TurnOverrides,
};
use oi_protocol::user_input::UserInput;
use std::collections::VecDeque;
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
    /// `/new`: start a new thread.
    NewThread,
    /// Load stored threads and call [`App::open_resume_picker`].
    OpenResumePicker,
    /// Open this stored thread.
    Resume(oi_protocol::ThreadId),
    /// `/fork`: continue this thread as a new one.
    Fork,
    /// Compute the git diff and push it as a cell.
    ShowDiff,
    /// `/mcp`: list the MCP servers.
    ShowMcp {
        /// With each server's tools, resources and prompts.
        verbose: bool,
    },
    /// Write AGENTS.md via the model (the runner checks it does not exist yet).
    Init,
    /// `/logout`: remove the stored API key.
    Logout,
    /// Search files for the `@` picker; answer with [`App::set_file_matches`].
    SearchFiles(String),
    /// Clear and repaint the screen (Ctrl+L).
    Redraw,
    /// Hand the terminal back to the shell and stop like any job (Ctrl+Z); `fg` resumes.
    Suspend,
    /// `/review`: start a turn reviewing the working tree's `git diff`.
    Review,
    /// `/copy`: put this text on the clipboard (OSC 52).
    Copy(String),
    /// `/rename`: name the thread in the store.
    Rename(String),
    /// `/undo`, confirmed: revert these changes (the last applied patch); answer with
    /// [`App::undo_done`].
    Undo(Vec<(PathBuf, oi_protocol::protocol::FileChange)>),
    /// Ctrl+G: edit this draft in `$VISUAL`/`$EDITOR`; the result replaces the composer.
    EditDraft(String),
    /// `!cmd`: run a shell command locally, sandboxed; answer with [`App::shell_done`].
    RunShell(String),
    /// Esc while a `!cmd` runs: stop it.
    CancelShell,
    /// Take the MCP servers' prompts and resources again ([`App::set_mcp_catalog`]).
    RefreshMcpCatalog,
    /// `/skills`: find the skills and [`App::show_skills`].
    ShowSkills,
    /// `/prompts:<name> args`: read the prompt file, expand it, [`App::send_custom_prompt`].
    RunCustomPrompt {
        /// The prompt file's name.
        name: String,
        /// What was typed after the command.
        args: String,
    },
    /// `/mcp__server__prompt args`: list the server's prompts again, then
    /// [`App::mcp_prompt_command`].
    RunMcpPrompt {
        /// The command (`mcp__server__prompt`).
        name: String,
        /// What was typed after the command.
        args: String,
    },
    /// `prompts/get`, then [`App::send_prompt`] with the result.
    GetMcpPrompt {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The prompt's name on the server.
        prompt: String,
        /// The prompt's arguments.
        arguments: serde_json::Map<String, serde_json::Value>,
    },
    /// Read the mentioned resources (server, uri) into the message, then submit it; on a
    /// failure [`App::mentions_failed`] with `text`.
    SendWithResources {
        /// What the user typed.
        text: String,
        /// The message's parts (text, images).
        items: Vec<UserInput>,
        /// Settings changed for this turn.
        overrides: TurnOverrides,
        /// The mentioned resources: (server, uri).
        mentions: Vec<(String, String)>,
    },
    /// `/clear`: clear the screen and its scrollback (a new thread follows).
    ClearScreen,
    /// `/export [PATH]`: write the thread as Markdown; `replace` once the user said an
    /// existing file may be replaced ([`App::ask_export_replace`] asks).
    Export {
        /// Where to write; `None`: a name in the working directory.
        path: Option<PathBuf>,
        /// An existing file may be replaced.
        replace: bool,
    },
    /// `/archive` or `/delete` without an id: list the stored threads and
    /// [`App::open_thread_command_picker`].
    PickThread(ThreadCommand),
    /// Archive this thread in the store (the current one: a new thread follows).
    ArchiveThread(oi_protocol::ThreadId),
    /// Delete this thread from the store, confirmed (the current one: a new thread follows).
    DeleteThread(oi_protocol::ThreadId),
    /// `/theme`, `/statusline`: keep a `[tui]` setting in the user's config.toml.
    SaveTuiSetting(TuiSetting),
    /// `/config`: the effective settings and their origins ([`App::show_config`]).
    ShowConfig,
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
    Commands {
        /// The highlighted row.
        selected: usize,
    },
    /// Files matching the `@` token.
    Files {
        /// The highlighted row.
        selected: usize,
    },
}

/// The whole UI state.
pub struct App {
    /// The input box.
    pub composer: Composer,
    /// What the status line shows.
    pub status: StatusInfo,
    /// Finished cells not yet written into the scrollback.
    pending: Vec<HistoryCell>,
    /// Every finished cell (for the transcript overlay and Ctrl+L).
    pub transcript: Vec<HistoryCell>,
    /// The open tail of the streaming answer (its finished blocks are already in the
    /// scrollback).
    pub streaming: String,
    /// True when part of the streaming answer is already in the scrollback, so the tail
    /// continues that cell.
    pub streaming_continues: bool,
    /// The part of the streaming answer already in the scrollback.
    streamed_committed: String,
    /// The opening fence `streaming` begins with when a code block was cut where the
    /// screen ran out (it is not the answer's text).
    streaming_reopen: String,
    /// The last piece of the streaming answer in the scrollback was such a part.
    streamed_part: bool,
    /// The reasoning streamed so far in this turn.
    pub streaming_reasoning: String,
    /// Reasoning cells shown from their deltas whose final `AgentReasoning` has not come yet
    /// (it may come after the answer): that event then shows nothing new.
    reasoning_shown_from_deltas: usize,
    /// The user asked to interrupt the running turn: commands that end now were stopped.
    interrupt_requested: bool,
    /// Running commands, patches and MCP calls, by call id.
    pub running: Vec<(String, HistoryCell)>,
    /// The dialog or full-screen view on top (approval, picker, transcript), if any.
    pub overlay: Option<Overlay>,
    /// Approvals and questions waiting behind the open overlay.
    queued: VecDeque<Overlay>,
    /// The popup above the composer, if any.
    pub popup: Option<Popup>,
    /// The draft (text, cursor) as it was before a `/` began the composer's text: Esc on the
    /// slash popup puts it back, so the `/` does not turn the next message into a command.
    slash_draft: (String, usize),
    /// Paths matching the `@` token, best first.
    pub file_matches: Vec<String>,
    /// Settings changed by `/model` or `/approvals`, sent with the next turn.
    pending_overrides: TurnOverrides,
    /// The last `/approvals` choice (sandbox, approval policy): it holds for the rest of the
    /// session, so threads started by `/new`, `/fork` or `/resume` start with it too.
    pub approvals_choice: Option<(SandboxMode, AskForApproval)>,
    /// The last `/harness` choice; it holds for the rest of the session like `/approvals`.
    pub harness_choice: Option<oi_protocol::config_types::Harness>,
    /// Model ids for `/model`, with their efforts.
    pub models: Vec<(String, Vec<ReasoningEffort>)>,
    /// The terminal's size (columns, rows) at the last frame: the transcript pages by it.
    pub screen: (u16, u16),
    /// Images attached to the draft: (placeholder in the text, file).
    images: Vec<(String, PathBuf)>,
    /// The MCP servers' prompts (slash commands) and resources (`@` mentions).
    mcp_catalog: McpCatalog,
    /// The custom prompt files (`/prompts:<name>`): (name, description).
    custom_prompts: Vec<(String, String)>,
    /// A message sent with resources read into it: (what was typed, the mentions). Its echo
    /// shows the typed text and names the resources rather than print their contents.
    mention_echo: Option<(String, Vec<(String, String)>)>,
    /// Prompts sent since the runner last saved them to the prompt history.
    prompts_to_save: Vec<String>,
    /// A hint shown under the composer (e.g. "press Ctrl+C again to quit").
    pub hint: Option<String>,
    last_ctrl_c: Option<Instant>,
    /// The user asked to quit.
    pub should_quit: bool,
    /// Steering, queued follow-ups, Ctrl+R, `!cmd` context and `/undo` (see `extras`).
    pub extras: extras::Extras,
    /// The thread's latest plan (`/plan` shows it again).
    plan: Option<oi_protocol::protocol::PlanUpdateEvent>,
    /// The colours everything is drawn with (`/theme`).
    pub theme: crate::theme::Theme,
    /// What the status line shows (`/statusline`).
    pub status_items: Vec<crate::status_items::StatusItem>,
}

/// The sandbox policy a `/approvals` preset's mode stands for.
pub fn sandbox_policy_for(mode: SandboxMode) -> SandboxPolicy {
    match mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
        SandboxMode::WorkspaceWrite => SandboxPolicy::workspace_write(),
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
    }
}

/// `config` with the session's `/approvals` and `/harness` choices applied, for a thread
/// the TUI starts after them (`/new`, `/fork`, `/resume`). A choice of the mode `config`
/// already has keeps its policy (writable roots and the like).
pub fn with_choices(
    config: &oi_config::Config,
    approvals: Option<(SandboxMode, AskForApproval)>,
    harness: Option<oi_protocol::config_types::Harness>,
) -> oi_config::Config {
    let mut config = config.clone();
    if let Some((mode, approval)) = approvals {
        config.approval_policy = approval;
        if config.sandbox_policy.mode() != mode {
            config.sandbox_mode = mode;
            config.sandbox_policy = sandbox_policy_for(mode);
        }
    }
    if let Some(harness) = harness {
        config.harness = harness;
    }
    config
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
    /// A UI with nothing shown yet, around `composer`.
    pub fn new(composer: Composer) -> Self {
        Self {
            composer,
            status: StatusInfo::default(),
            pending: Vec::new(),
            transcript: Vec::new(),
            streaming: String::new(),
            streaming_continues: false,
            streamed_committed: String::new(),
            streaming_reopen: String::new(),
            streamed_part: false,
            streaming_reasoning: String::new(),
            reasoning_shown_from_deltas: 0,
            interrupt_requested: false,
            running: Vec::new(),
            overlay: None,
            queued: VecDeque::new(),
            popup: None,
            slash_draft: (String::new(), 0),
            file_matches: Vec::new(),
            pending_overrides: TurnOverrides::default(),
            approvals_choice: None,
            harness_choice: None,
            prompts_to_save: Vec::new(),
            images: Vec::new(),
            mcp_catalog: McpCatalog::default(),
            custom_prompts: Vec::new(),
            mention_echo: None,
            screen: (80, 24),
            models: Vec::new(),
            hint: None,
            last_ctrl_c: None,
            should_quit: false,
            extras: extras::Extras::default(),
            plan: None,
            theme: crate::theme::Theme::from_env(),
            status_items: crate::status_items::DEFAULT_ITEMS.to_vec(),
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

    /// Puts back cells taken by [`App::take_pending`] that could not be written yet.
    pub fn restore_pending(&mut self, cells: Vec<HistoryCell>) {
        self.pending.splice(0..0, cells);
    }

    /// Takes the prompts typed and sent since the last call, for the prompt history (slash
    /// commands are not among them).
    pub fn take_prompts_to_save(&mut self) -> Vec<String> {
        std::mem::take(&mut self.prompts_to_save)
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

    /// Moves streamed reasoning into the scrollback (the answer or a tool call follows it).
    fn show_streamed_reasoning(&mut self) {
        let text = std::mem::take(&mut self.streaming_reasoning);
        if !text.trim().is_empty() {
            self.push_cell(HistoryCell::Reasoning { text });
            self.reasoning_shown_from_deltas += 1;
        }
    }

    fn flush_streaming(&mut self) {
        self.show_streamed_reasoning();
        let tail = std::mem::take(&mut self.streaming);
        self.finish_answer(None, tail);
    }

    /// Moves the finished blocks of the streaming answer into the scrollback, so a long
    /// answer never has to fit the live area; the open tail stays live.
    fn commit_streamed_blocks(&mut self) {
        let cut = crate::markdown::committable_prefix(&self.streaming);
        if cut == 0 {
            return;
        }
        let markdown: String = self.streaming.drain(..cut).collect();
        let reopen = std::mem::take(&mut self.streaming_reopen);
        self.streamed_part = false;
        self.streamed_committed
            .push_str(markdown.strip_prefix(reopen.as_str()).unwrap_or(&markdown));
        let cell = if self.streaming_continues {
            HistoryCell::AssistantMore { markdown }
        } else {
            HistoryCell::Assistant { markdown }
        };
        // The transcript gets the whole answer as one cell when it completes.
        self.pending.push(cell);
        self.streaming_continues = true;
    }

    /// Moves the finished lines of the open block of the streaming answer into the
    /// scrollback (the runner calls this when the live area would not fit on the screen),
    /// so what does not fit is printed once rather than hidden or scrolled off. Only where
    /// both parts render as the whole does: between code lines, before a list item.
    /// Returns whether anything moved.
    pub fn commit_overflow(&mut self) -> bool {
        let Some(cut) = crate::markdown::soft_cut(&self.streaming) else {
            return false;
        };
        let rest = self.streaming.split_off(cut.at);
        let head = std::mem::replace(&mut self.streaming, format!("{}{rest}", cut.reopen));
        let reopen = std::mem::replace(&mut self.streaming_reopen, cut.reopen);
        self.streamed_committed
            .push_str(head.strip_prefix(reopen.as_str()).unwrap_or(&head));
        self.pending.push(HistoryCell::AssistantPart {
            markdown: format!("{head}{}", cut.close),
            first: !self.streaming_continues,
        });
        self.streaming_continues = true;
        self.streamed_part = true;
        true
    }

    /// Ends the streaming answer: `message` is the complete text when the engine sent it,
    /// `tail` what was still live. Only what the scrollback does not have yet is added.
    fn finish_answer(&mut self, message: Option<&str>, tail: String) {
        let committed = std::mem::take(&mut self.streamed_committed);
        let continues = std::mem::replace(&mut self.streaming_continues, false);
        let reopen = std::mem::take(&mut self.streaming_reopen);
        if !continues {
            let markdown = message.map(str::to_string).unwrap_or(tail);
            if !markdown.trim().is_empty() {
                self.push_cell(HistoryCell::Assistant { markdown });
            }
            return;
        }
        let parted = std::mem::take(&mut self.streamed_part);
        let whole = message.map(str::to_string).unwrap_or_else(|| {
            let tail = tail.strip_prefix(reopen.as_str()).unwrap_or(&tail);
            format!("{committed}{tail}")
        });
        // The final text normally extends what streamed; if the engine's final message
        // differs, show its remainder as streamed rather than repeat the committed blocks.
        let rest = match message.and_then(|m| m.strip_prefix(committed.as_str())) {
            Some(rest) => format!("{reopen}{rest}"),
            None => tail,
        };
        // After a part cut where the screen ran out, the cell also ends the block (with
        // the blank row that follows every cell) when nothing of it is left.
        if !rest.trim().is_empty() || parted {
            self.pending
                .push(HistoryCell::AssistantMore { markdown: rest });
        }
        self.transcript
            .push(HistoryCell::Assistant { markdown: whole });
    }

    /// Applies the session's settings (first event of every thread).
    pub fn on_session_configured(&mut self, ev: &SessionConfiguredEvent) {
        // Another thread (new, resumed, forked): its plan is not this one's.
        if self.status.thread_id != ev.thread_id.to_string() {
            self.plan = None;
        }
        let mcp = std::mem::take(&mut self.status.mcp);
        self.status = StatusInfo {
            model: ev.model.clone(),
            provider: ev.model_provider_id.clone(),
            effort: ev.reasoning_effort,
            cwd: ev.cwd.clone(),
            sandbox: Some(ev.sandbox_policy.mode()),
            approval: Some(ev.approval_policy),
            thread_id: ev.thread_id.to_string(),
            thread_name: ev.thread_name.clone(),
            mcp,
            ..StatusInfo::default()
        };
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

    /// Shows a resumed thread's conversation (user and assistant messages; the context the
    /// engine adds for itself, which starts with `<`, is skipped).
    pub fn replay_history(&mut self, items: &[oi_protocol::models::ResponseItem]) {
        use oi_protocol::models::{ContentItem, ResponseItem, Role};
        for item in items {
            let ResponseItem::Message { role, content } = item else {
                continue;
            };
            let text: String = content
                .iter()
                .filter_map(|c| match c {
                    ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                        Some(text.as_str())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            if text.trim().is_empty() || text.trim_start().starts_with('<') {
                continue;
            }
            match role {
                Role::User => self.push_cell(HistoryCell::User {
                    text: Self::shown_user_text(&text),
                }),
                Role::Assistant => self.push_cell(HistoryCell::Assistant { markdown: text }),
                _ => {}
            }
        }
    }
}

/// One server for `/mcp`.
#[derive(Clone, Debug, Default)]
pub struct McpServerRow {
    /// The server's name in `[mcp_servers]`.
    pub name: String,
    /// `stdio` or `streamable_http`.
    pub transport: String,
    /// Whether the config enables it.
    pub enabled: bool,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// (tool, description, approval mode)
    pub tools: Vec<(String, String, String)>,
    /// Tools the server lists that the model is not offered: (tool, why).
    pub withheld: Vec<(String, String)>,
    /// The MCP protocol version the live connection negotiated (e.g. `2026-07-28`).
    pub protocol: Option<String>,
    /// What `/mcp verbose` lists besides tools: resource URIs (and templates) and prompt names.
    pub resources: Vec<String>,
    /// The prompt names it lists.
    pub prompts: Vec<String>,
}
