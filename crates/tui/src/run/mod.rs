//! The terminal runner: owns the terminal (inline viewport), the engine thread and the
//! event loop. Keys and engine events update the [`App`]; frames are drawn at most every
//! [`FRAME_INTERVAL`], so a burst of stream deltas costs one frame, and nothing wakes the
//! loop while idle. What wakes the loop is in `events`, what an [`AppAction`] does in
//! `actions`, the terminal itself in `terminal`.

mod actions;
#[path = "../run_daily.rs"]
mod daily;
mod events;
mod terminal;

pub use terminal::{DrawError, draw, draw_committing};

use crate::app::{App, AppAction};
use crate::cells::HistoryCell;
use crate::composer::Composer;
use crate::input::Input;
use crate::viewport::LiveViewport;
use actions::ShellResult;
use events::Sources;
use oi_config::Config;
use oi_config::history::PromptHistory;
use oi_core::{NewThread, Thread, ThreadManager};
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, Op};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use terminal::{Screens, TerminalGuard, restore_terminal};
use tokio::sync::mpsc;

/// At most ~60 frames a second.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How often the spinner and elapsed time move while a turn runs.
const SPINNER_INTERVAL: Duration = Duration::from_millis(100);
/// How long the provider's `/models` may take to answer for `/model`.
const MODELS_TIMEOUT: Duration = Duration::from_millis(2500);
/// How long to wait for the thread to flush and stop on exit.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the `@` list is refreshed while the first walk of the tree runs.
const FILE_LIST_REFRESH: Duration = Duration::from_millis(100);

/// Which thread the TUI opens on.
#[derive(Clone, Debug)]
pub enum StartMode {
    /// A new thread.
    New,
    /// This stored thread.
    Resume(ThreadId),
    /// Open on a new thread with the `/resume` picker showing.
    ResumePicker,
}

/// What the front end needs to start.
pub struct TuiOptions {
    /// The configuration the session starts with.
    pub config: Config,
    /// The engine's threads.
    pub manager: ThreadManager,
    /// Which thread to open on.
    pub start: StartMode,
    /// Sent as the first turn.
    pub prompt: Option<String>,
    /// Images (`-i FILE`, already checked) sent with `prompt`, or attached to the composer.
    pub images: Vec<std::path::PathBuf>,
    /// `/model` choices: (model id, reasoning efforts).
    pub models: Vec<(String, Vec<String>)>,
}

/// The live thread and the task that forwards its events.
struct Current {
    thread: Arc<Thread>,
    id: ThreadId,
    forwarder: tokio::task::JoinHandle<()>,
}

/// Forwards the thread's events (read from `events`, the stream it was created with, so
/// nothing published before the TUI looked is missed) to the UI loop.
fn forward(
    id: ThreadId,
    mut events: oi_core::EventStream,
    tx: mpsc::UnboundedSender<(ThreadId, Event)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(ev) = events.next().await {
            if tx.send((id, ev)).is_err() {
                break;
            }
        }
    })
}

/// Runs the TUI until the user quits. Returns the process exit code.
pub async fn run(opts: TuiOptions) -> i32 {
    match run_inner(opts).await {
        Ok(code) => code,
        Err(e) => {
            restore_terminal();
            let _ = writeln!(std::io::stderr(), "error: {e}");
            1
        }
    }
}

async fn start_thread(
    manager: &ThreadManager,
    config: &Config,
    start: &StartMode,
) -> Result<NewThread, oi_core::CoreError> {
    match start {
        StartMode::Resume(id) => manager.resume_thread(*id, config.clone()).await,
        StartMode::New | StartMode::ResumePicker => manager.start_thread(config.clone()).await,
    }
}

/// What comes with the first thread, before the terminal is touched: the app state, the
/// `/resume` picker if asked for, and the first prompt sent.
async fn open(
    first: NewThread,
    manager: &ThreadManager,
    config: &Config,
    start: StartMode,
    (prompt, images): (Option<String>, Vec<std::path::PathBuf>),
    models: Vec<(String, Vec<String>)>,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) -> (App, Current, PromptHistory) {
    let history = PromptHistory::from_config(config);
    let mut app = App::new(Composer::with_history(history.read()));
    app.set_models(models);
    app.on_session_configured(&first.session_configured);
    app.apply_tui_settings(
        config.tui_theme.as_deref(),
        config.tui_status_line.as_deref(),
    );
    if matches!(start, StartMode::Resume(_)) {
        daily::load_title(&mut app, manager, &config.home, first.thread_id).await;
    }
    app.replay_history(&first.thread.history());
    app.set_custom_prompts(
        crate::extension_actions::custom_prompt_list(&first.thread.config()).await,
    );
    let mut current = Current {
        id: first.thread_id,
        forwarder: forward(first.thread_id, first.events, tx.clone()),
        thread: first.thread,
    };
    if matches!(start, StartMode::ResumePicker) {
        let action = AppAction::OpenResumePicker;
        actions::handle_action(action, &mut app, manager, config, &mut current, tx).await;
    }
    if let Some(p) = prompt.filter(|p| !p.trim().is_empty()) {
        let _ = history.append(&current.id.to_string(), &p);
        let mut items = vec![oi_protocol::user_input::UserInput::text(p)];
        items.extend(
            images
                .into_iter()
                .map(|path| oi_protocol::user_input::UserInput::LocalImage { path }),
        );
        let _ = current
            .thread
            .submit(Op::UserInput {
                items,
                overrides: Default::default(),
            })
            .await;
    } else {
        // `-i FILE` without a prompt: the images wait in the composer for one.
        for path in images {
            app.attach_image(path);
        }
    }
    (app, current, history)
}

/// Why the TUI did not start.
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// The first thread could not be started or resumed.
    #[error("{0}")]
    Thread(#[from] oi_core::CoreError),
    /// The terminal refused its modes.
    #[error("cannot set up the terminal: {0}")]
    Terminal(#[source] std::io::Error),
    /// The runner's input or signal sources could not be set up.
    #[error("{0}")]
    Sources(#[source] std::io::Error),
}

async fn run_inner(opts: TuiOptions) -> Result<i32, StartError> {
    let TuiOptions {
        config,
        manager,
        start,
        prompt,
        images,
        models,
    } = opts;
    // Start the thread before touching the terminal, so a config error prints plainly.
    let first = start_thread(&manager, &config, &start).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (app, current, history) = open(
        first,
        &manager,
        &config,
        start,
        (prompt, images),
        models,
        &tx,
    )
    .await;
    let guard = TerminalGuard::enter().map_err(StartError::Terminal)?;
    let mut runner =
        Runner::new(app, manager, config, current, tx, rx, history).map_err(StartError::Sources)?;
    runner.run_loop().await;
    Ok(runner.finish(guard).await)
}

/// Everything the loop holds between wake-ups.
struct Runner {
    app: App,
    manager: ThreadManager,
    config: Config,
    current: Current,
    /// Where the live thread's events go (a new thread's forwarder gets a clone).
    tx: mpsc::UnboundedSender<(ThreadId, Event)>,
    history: PromptHistory,
    history_failed: bool,
    screens: Screens,
    sources: Sources,
    /// `!cmd` results, and the way to stop the one running.
    shell_tx: mpsc::UnboundedSender<ShellResult>,
    shell_cancel: Option<tokio_util::sync::CancellationToken>,
    /// `@` list results.
    files_tx: mpsc::UnboundedSender<(String, Vec<String>)>,
    /// The MCP servers' prompts and resources, listed in the background when a popup opens.
    catalog_tx: mpsc::UnboundedSender<crate::app::McpCatalog>,
    /// One file index per session, started at the first `@` (a watcher on a big tree is not
    /// worth paying for at start-up when the picker is never opened).
    file_index: Option<(std::path::PathBuf, Arc<oi_file_search::FileIndex>)>,
    dirty: bool,
    last_draw: Instant,
    /// The screen size the last frame was laid out for.
    drawn_for: Option<ratatui::layout::Size>,
    /// A frame that cannot be drawn (the terminal went away) ends the UI, but through the
    /// shutdown in [`Runner::finish`], so the thread is still flushed.
    failure: Option<String>,
    /// `kill`, a closed terminal window or a stopped container must not skip the shutdown:
    /// the running turn is interrupted, the thread flushed and the terminal restored.
    stopped_by: Option<TerminationSignal>,
}

impl Runner {
    fn new(
        app: App,
        manager: ThreadManager,
        config: Config,
        current: Current,
        tx: mpsc::UnboundedSender<(ThreadId, Event)>,
        rx: mpsc::UnboundedReceiver<(ThreadId, Event)>,
        history: PromptHistory,
    ) -> std::io::Result<Self> {
        let signals = TerminationSignals::listen();
        // The live area starts where the cursor is and is sized to its content on every frame.
        // Where the cursor is tells how much room is above the live area; asked before
        // the input thread reads the terminal (unknown counts as the top row).
        let row = crossterm::cursor::position().map_or(0, |(_, row)| row);
        let screens = Screens {
            live: LiveViewport::new(terminal::stdout_backend(), row),
            transcript: None,
        };
        // From here on only the input thread reads the terminal (the live area asked where
        // the cursor is above).
        let input = Input::new().map_err(context("cannot read the terminal"))?;
        let (files_tx, files) = mpsc::unbounded_channel();
        let (catalog_tx, catalog) = mpsc::unbounded_channel();
        let models = events::list_models(&config);
        let (shell_tx, shell) = mpsc::unbounded_channel();
        let sources = Sources::new(input, rx, models, shell, files, catalog, signals);
        Ok(Self {
            app,
            manager,
            config,
            current,
            tx,
            history,
            history_failed: false,
            screens,
            sources,
            shell_tx,
            shell_cancel: None,
            files_tx,
            catalog_tx,
            file_index: None,
            dirty: true,
            last_draw: Instant::now() - FRAME_INTERVAL,
            drawn_for: None,
            failure: None,
            stopped_by: None,
        })
    }

    /// Waits for what wakes the loop, applies it, carries out the actions it asked for;
    /// until one of them ends the UI, after a last frame.
    async fn run_loop(&mut self) {
        loop {
            let due = next_frame_due(self.last_draw, self.dirty, self.app.is_running());
            let wake = self.sources.next(due).await;
            let Some(mut actions) = self.on_wake(wake).await else {
                continue;
            };
            actions.extend(self.app.take_deferred());
            self.save_prompts();
            if self.perform(actions).await {
                self.app.overlay = None;
                let theme = self.app.theme;
                if self.failure.is_none()
                    && let Err(e) = self.screens.frame(&mut self.app, &theme)
                {
                    self.failure = Some(e.to_string());
                }
                return;
            }
        }
    }

    fn save_prompts(&mut self) {
        for p in self.app.take_prompts_to_save() {
            if let Err(e) = self.history.append(&self.current.id.to_string(), &p)
                && !self.history_failed
            {
                // Said once: the session goes on without its history file.
                self.history_failed = true;
                self.app.push_cell(HistoryCell::Warning {
                    message: format!("cannot save the prompt history: {e}"),
                });
            }
        }
    }

    /// Flushes and stops the thread so it is stored whole, then leaves the prompt clean.
    /// Returns the process exit code.
    async fn finish(self, guard: TerminalGuard) -> i32 {
        let Self {
            manager,
            config,
            current,
            mut screens,
            failure,
            stopped_by,
            mut sources,
            ..
        } = self;
        // What is typed from here on is for the shell that gets the terminal back: the
        // input thread lets go of it before the UI says it ended (it would otherwise read
        // and drop a command typed after the last line, until the process exits).
        sources.input.pause().await;
        let _ = current.thread.submit(Op::Shutdown).await;
        let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, manager.shutdown_all()).await;
        current.forwarder.abort();
        let forgotten = forget_if_empty(&manager, &config, &current.thread).await;
        let _ = screens.live.erase();
        drop(screens);
        drop(guard);
        // A hung-up terminal fails every write: that must not end in a panic.
        let mut out = std::io::stdout();
        if let Some(sig) = stopped_by {
            let _ = writeln!(out, "Stopped by {}.", sig.name());
        } else if let Some(e) = &failure {
            let _ = writeln!(std::io::stderr(), "error: {e}");
        }
        if !forgotten {
            let _ = writeln!(
                out,
                "Resume this thread with: interpreter resume {}",
                current.id
            );
        }
        match (stopped_by, failure) {
            (Some(sig), _) => sig.exit_code(),
            (None, Some(_)) => 1,
            (None, None) => 0,
        }
    }
}

/// Names what failed in an I/O error, keeping its kind.
fn context(what: &'static str) -> impl Fn(std::io::Error) -> std::io::Error {
    move |e| std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// `/model` rows: each model id with the reasoning efforts the built-in catalog knows for it.
pub fn catalog_entries(ids: Vec<String>) -> Vec<(String, Vec<String>)> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter()
        .filter(|id| !id.is_empty() && seen.insert(id.clone()))
        .map(|id| {
            let efforts = oi_core::catalog::builtin_info(&id)
                .map(|i| i.efforts.iter().map(|e| e.to_string()).collect())
                .unwrap_or_default();
            (id, efforts)
        })
        .collect()
}

/// When the next frame is due: soon after a change (never more often than
/// [`FRAME_INTERVAL`]), at the spinner's pace while a turn runs, and never while idle.
pub fn next_frame_due(last_draw: Instant, dirty: bool, running: bool) -> Option<Instant> {
    if dirty {
        Some(last_draw + FRAME_INTERVAL)
    } else if running {
        Some(last_draw + SPINNER_INTERVAL)
    } else {
        None
    }
}

/// Sleeps until `due`, or forever when nothing is due.
pub async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

/// True when the user never wrote in the thread: there is nothing in it to resume.
fn is_empty(thread: &Thread) -> bool {
    use oi_protocol::models::{ResponseItem, Role};
    !thread.history().iter().any(|item| {
        matches!(
            item,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    })
}

/// Removes an empty thread from the store (it was created when the TUI opened it), so it
/// never shows in `/resume` as a thread without messages. Call once it has stopped.
/// Returns whether it was removed.
async fn forget_if_empty(manager: &ThreadManager, config: &Config, thread: &Thread) -> bool {
    if !is_empty(thread) {
        return false;
    }
    let Ok(stored) = manager.stored_threads(&config.home).await else {
        return false;
    };
    let id = thread.id();
    manager.remove_thread(&id);
    stored.delete(&id).await.is_ok()
}

/// Stops a thread and waits until it has written everything (`shutdown_complete`, or its
/// stream ended, at most [`SHUTDOWN_TIMEOUT`]).
async fn stop(thread: &Thread) {
    thread.shutdown(SHUTDOWN_TIMEOUT).await;
}
