//! The terminal runner: owns the terminal (inline viewport), the engine thread and the
//! event loop. Keys and engine events update the [`App`]; frames are drawn at most every
//! [`FRAME_INTERVAL`], so a burst of stream deltas costs one frame, and nothing wakes the
//! loop while idle.

use crate::app::{App, AppAction, McpServerRow, with_choices};
use crate::cells::HistoryCell;
use crate::composer::Composer;
use crate::input::Input;
use crate::overlay::Overlay;
use crate::render::{cells_to_lines, live_height, render_live};
use crate::theme::Theme;
use crate::viewport::LiveViewport;
use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event as TermEvent, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use oi_config::Config;
use oi_config::history::PromptHistory;
use oi_core::{NewThread, Thread, ThreadManager};
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, Op};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

#[path = "run_daily.rs"]
mod daily;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
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
    New,
    Resume(ThreadId),
    /// Open on a new thread with the `/resume` picker showing.
    ResumePicker,
}

/// What the front end needs to start.
pub struct TuiOptions {
    pub config: Config,
    pub manager: ThreadManager,
    pub start: StartMode,
    /// Sent as the first turn.
    pub prompt: Option<String>,
    /// Images (`-i FILE`, already checked) sent with `prompt`, or attached to the composer.
    pub images: Vec<std::path::PathBuf>,
    /// `/model` choices: (model id, reasoning efforts).
    pub models: Vec<(String, Vec<String>)>,
}

/// Puts the terminal back however the TUI ends (including a panic).
struct TerminalGuard;

/// Raw mode, bracketed paste and the keyboard flags the TUI runs with.
fn enter_terminal_modes() -> std::io::Result<()> {
    crossterm::terminal::enable_raw_mode()?;
    let mut out = std::io::stdout();
    crossterm::execute!(
        out,
        EnableBracketedPaste,
        // Lets terminals that support it report Shift+Enter distinctly; others ignore it.
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
        // Every cell is placed, so nothing needs the terminal to wrap; a frame laid out for a
        // wider window than the terminal already has must not wrap its rows at the bottom
        // of the screen, which would scroll the live area into the scrollback.
        crossterm::terminal::DisableLineWrap
    )
}

/// Stops the process group like the terminal's Ctrl+Z would (raw mode turns that off),
/// returning once the shell continues it. Without job control (an orphaned process
/// group) the kernel discards the stop and this returns at once.
#[cfg(unix)]
fn stop_like_a_job() {
    // SAFETY: plain syscall; pid 0 addresses our own process group.
    unsafe {
        libc::kill(0, libc::SIGTSTP);
    }
}

#[cfg(not(unix))]
fn stop_like_a_job() {}

impl TerminalGuard {
    fn enter() -> std::io::Result<Self> {
        enter_terminal_modes()?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            previous(info);
        }));
        Ok(Self)
    }
}

/// True while the transcript is drawn on the alternate screen.
static ON_ALTERNATE_SCREEN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

fn restore_terminal() {
    let mut out = std::io::stdout();
    // Leaving the alternate screen when not on it would restore a stale cursor position.
    if ON_ALTERNATE_SCREEN.swap(false, std::sync::atomic::Ordering::SeqCst) {
        let _ = crossterm::execute!(out, crossterm::terminal::LeaveAlternateScreen);
    }
    let _ = crossterm::execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste,
        crossterm::terminal::EnableLineWrap,
        crossterm::cursor::Show
    );
    let _ = crossterm::terminal::disable_raw_mode();
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

type Stdout = CrosstermBackend<std::io::Stdout>;

/// What the TUI draws on: the inline live area, and the alternate screen while the
/// transcript is open (so opening it scrolls nothing away and closing it gives the
/// terminal's own screen back exactly as it was).
struct Screens {
    live: LiveViewport<Stdout>,
    transcript: Option<Terminal<Stdout>>,
}

impl Screens {
    /// Draws a frame; false when it has to wait for the live area to be found again.
    fn frame(&mut self, app: &mut App, theme: &Theme) -> Result<bool, String> {
        let failed = |e: std::io::Error| format!("cannot draw: {e}");
        if app.overlay.as_ref().is_some_and(Overlay::is_full_screen) {
            if self.transcript.is_none() {
                crossterm::execute!(std::io::stdout(), EnterAlternateScreen).map_err(failed)?;
                ON_ALTERNATE_SCREEN.store(true, std::sync::atomic::Ordering::SeqCst);
                // A full-screen viewport never asks the terminal where its cursor is.
                self.transcript =
                    Some(Terminal::new(CrosstermBackend::new(std::io::stdout())).map_err(failed)?);
            }
            if let Some(t) = &mut self.transcript {
                let now = Instant::now();
                if let Ok(size) = t.size() {
                    app.screen = (size.width, size.height);
                }
                t.draw(|f| {
                    render_live(app, f.area(), f.buffer_mut(), theme, now);
                })
                .map_err(failed)?;
            }
            // History that arrives meanwhile waits for the main screen.
            return Ok(true);
        }
        if self.transcript.take().is_some() {
            if ON_ALTERNATE_SCREEN.swap(false, std::sync::atomic::Ordering::SeqCst) {
                crossterm::execute!(std::io::stdout(), LeaveAlternateScreen).map_err(failed)?;
            }
            // The terminal restored the main screen; repaint the live area on it.
            self.live.clear().map_err(failed)?;
        }
        draw(&mut self.live, app, theme)
    }
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
) -> Result<NewThread, String> {
    match start {
        StartMode::Resume(id) => manager
            .resume_thread(*id, config.clone())
            .await
            .map_err(|e| e.to_string()),
        StartMode::New | StartMode::ResumePicker => manager
            .start_thread(config.clone())
            .await
            .map_err(|e| e.to_string()),
    }
}

async fn run_inner(opts: TuiOptions) -> Result<i32, String> {
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
    let history = PromptHistory::from_config(&config);
    let mut app = App::new(Composer::with_history(history.read()));
    app.set_models(models);
    app.on_session_configured(&first.session_configured);
    app.apply_tui_settings(
        config.tui_theme.as_deref(),
        config.tui_status_line.as_deref(),
    );
    if matches!(start, StartMode::Resume(_)) {
        daily::load_title(&mut app, &manager, &config.home, first.thread_id).await;
    }
    app.replay_history(&first.thread.history());
    app.set_custom_prompts(
        crate::extension_actions::custom_prompt_list(&first.thread.config()).await,
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut current = Current {
        id: first.thread_id,
        forwarder: forward(first.thread_id, first.events, tx.clone()),
        thread: first.thread,
    };
    if matches!(start, StartMode::ResumePicker) {
        handle_action(
            AppAction::OpenResumePicker,
            &mut app,
            &manager,
            &config,
            &mut current,
            &tx,
        )
        .await;
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

    // `kill`, a closed terminal window or a stopped container must not skip the shutdown
    // below: the running turn is interrupted, the thread flushed and the terminal restored.
    let mut signals = TerminationSignals::listen();
    let mut stopped_by: Option<TerminationSignal> = None;
    // A frame that cannot be drawn (the terminal went away) ends the UI, but through the
    // shutdown below, so the thread is still flushed.
    let mut failure: Option<String> = None;
    let _guard = TerminalGuard::enter().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    // The live area starts where the cursor is and is sized to its content on every frame.
    let mut screens = Screens {
        live: LiveViewport::new(CrosstermBackend::new(std::io::stdout()), 1)
            .map_err(|e| format!("cannot set up the terminal: {e}"))?,
        transcript: None,
    };
    screens.live.follow_resizes_by_cursor();
    // From here on only the input thread reads the terminal (the live area asked where the
    // cursor is above).
    let mut input = Input::new().map_err(|e| format!("cannot read the terminal: {e}"))?;

    let (files_tx, mut files_rx) = mpsc::unbounded_channel::<(String, Vec<String>)>();
    // The MCP servers' prompts and resources, listed in the background when a popup opens.
    let (catalog_tx, mut catalog_rx) = mpsc::unbounded_channel::<crate::app::McpCatalog>();
    // One file index per session, started at the first `@` (a watcher on a big tree is not
    // worth paying for at start-up when the picker is never opened).
    let mut file_index: Option<(std::path::PathBuf, Arc<oi_file_search::FileIndex>)> = None;
    // `/model` lists what the provider serves; ask once, in the background.
    let (models_tx, mut models_rx) = mpsc::unbounded_channel::<Vec<(String, Vec<String>)>>();
    {
        let provider = config.model_provider.clone();
        let configured = config.model.clone();
        let home = config.home.clone();
        tokio::spawn(async move {
            let listed = oi_core::catalog::fetch_models(provider, &home, MODELS_TIMEOUT)
                .await
                .unwrap_or_default();
            let mut ids = vec![configured];
            ids.extend(
                listed
                    .into_iter()
                    .map(|m| m.id)
                    .filter(|id| !oi_core::catalog::is_hidden(id)),
            );
            ids.dedup();
            let _ = models_tx.send(catalog_entries(ids));
        });
    }
    // `!cmd` runs: (command, result, how long it took), and the way to stop the one running.
    let (shell_tx, mut shell_rx) = mpsc::unbounded_channel::<ShellResult>();
    let mut shell_cancel: Option<tokio_util::sync::CancellationToken> = None;
    let mut history_failed = false;
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME_INTERVAL;
    loop {
        let due = next_frame_due(last_draw, dirty, app.is_running());
        let mut actions = Vec::new();
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(TermEvent::Key(k))) => { actions = app.on_key(k); dirty = true; }
                Some(Ok(TermEvent::Paste(s))) => { actions = app.on_paste(&s); dirty = true; }
                // The next frame lays the live area out for the new size.
                Some(Ok(TermEvent::Resize(_, _))) => dirty = true,
                Some(Ok(_)) => {}
                // The terminal went away: leave as if the user quit.
                Some(Err(_)) | None => actions.push(AppAction::Quit),
            },
            Some((tid, ev)) = rx.recv() => {
                if tid == current.id {
                    app.on_event(&ev.msg);
                    // Coalesce: apply everything already queued before the next frame.
                    while let Ok((tid, ev)) = rx.try_recv() {
                        if tid == current.id {
                            app.on_event(&ev.msg);
                        }
                    }
                    dirty = true;
                }
            }
            Some(models) = models_rx.recv() => app.set_models(models),
            Some((command, result, took)) = shell_rx.recv() => {
                shell_cancel = None;
                app.shell_done(&command, result, took);
                dirty = true;
            }
            Some((query, matches)) = files_rx.recv() => {
                app.set_file_matches(&query, matches);
                dirty = true;
            }
            Some(catalog) = catalog_rx.recv() => {
                app.set_mcp_catalog(catalog);
                dirty = true;
            }
            _ = sleep_until(due), if due.is_some() => {
                // After a resize, find the live area from the cursor before drawing. The
                // size is read around the question: if it changed meanwhile, the answer is
                // for a layout that is gone, so the frame waits for the next try.
                let mut settled = true;
                if screens.transcript.is_none() && screens.live.resized().unwrap_or(false) {
                    let before = screens.live.screen_size().ok();
                    let pos = input.cursor_position().await;
                    let after = screens.live.screen_size().ok();
                    match (pos, before, after) {
                        (Some(pos), Some(before), Some(after)) if before == after => {
                            if let Err(e) = screens.live.relocate(pos, after) {
                                failure = Some(format!("cannot draw: {e}"));
                                actions.push(AppAction::Quit);
                            }
                        }
                        (Some(_), _, _) => settled = false,
                        // No answer: lay out for the new size where the area was.
                        _ => {
                            let _ = screens.live.adopt_size();
                        }
                    }
                }
                if !settled {
                    last_draw = Instant::now();
                    continue;
                }
                let theme = app.theme;
                match screens.frame(&mut app, &theme) {
                    Ok(drawn) => dirty = !drawn,
                    Err(e) => {
                        failure = Some(e);
                        actions.push(AppAction::Quit);
                        dirty = false;
                    }
                }
                last_draw = Instant::now();
            }
            sig = signals.recv() => {
                stopped_by = Some(sig);
                // The session ends: an MCP task stays running for `resume` to fetch.
                current.thread.leave_mcp_tasks_running();
                let _ = current.thread.submit(Op::Interrupt).await;
                actions.push(AppAction::Quit);
            }
        }
        actions.extend(app.take_deferred());
        for p in app.take_prompts_to_save() {
            if let Err(e) = history.append(&current.id.to_string(), &p)
                && !history_failed
            {
                // Said once: the session goes on without its history file.
                history_failed = true;
                app.push_cell(HistoryCell::Warning {
                    message: format!("cannot save the prompt history: {e}"),
                });
            }
        }
        let mut quit = false;
        for action in actions {
            match action {
                AppAction::Quit => quit = true,
                AppAction::Suspend => {
                    // Give the shell a clean line and its own terminal modes; on `fg`, take
                    // the terminal again and start the live area at the bottom.
                    let _ = screens.live.erase();
                    screens.transcript = None;
                    restore_terminal();
                    stop_like_a_job();
                    let resumed = enter_terminal_modes()
                        .and_then(|()| screens.live.restart_at_bottom())
                        .map_err(|e| format!("cannot take the terminal back: {e}"));
                    if let Err(e) = resumed {
                        failure = Some(e);
                        quit = true;
                    }
                    dirty = true;
                }
                AppAction::Redraw => {
                    let _ = screens.live.clear();
                    dirty = true;
                }
                AppAction::ClearScreen => {
                    // `/clear`: the screen and the scrollback go (as `clear` does), the
                    // live area starts again at the bottom.
                    let mut out = std::io::stdout();
                    let cleared = write!(out, "\x1b[H\x1b[2J\x1b[3J")
                        .and_then(|()| out.flush())
                        .and_then(|()| screens.live.restart_at_bottom());
                    if let Err(e) = cleared {
                        failure = Some(format!("cannot clear the screen: {e}"));
                        quit = true;
                    }
                    dirty = true;
                }
                AppAction::EditDraft(draft) => {
                    // The editor gets the terminal: the live area, the input and the
                    // terminal modes are given up until it exits.
                    let _ = screens.live.erase();
                    screens.transcript = None;
                    input.pause().await;
                    restore_terminal();
                    let edited = tokio::task::spawn_blocking(move || crate::editor::edit(&draft))
                        .await
                        .unwrap_or_else(|e| Err(e.to_string()));
                    let resumed = enter_terminal_modes()
                        .and_then(|()| screens.live.restart_at_bottom())
                        .map_err(|e| format!("cannot take the terminal back: {e}"));
                    input.resume();
                    if let Err(e) = resumed {
                        failure = Some(e);
                        quit = true;
                    }
                    match edited {
                        Ok(text) => app.composer.set_text(&text),
                        Err(e) => app.push_cell(HistoryCell::Error { message: e }),
                    }
                    dirty = true;
                }
                AppAction::RunShell(command) => {
                    if shell_cancel.is_some() {
                        app.push_cell(HistoryCell::Error {
                            message: "a `!` command is still running; wait for it or press Esc"
                                .into(),
                        });
                        continue;
                    }
                    app.shell_started(&command);
                    let cancel = tokio_util::sync::CancellationToken::new();
                    shell_cancel = Some(cancel.clone());
                    let cfg = with_choices(&current.thread.config(), app.approvals_choice, None);
                    let tx = shell_tx.clone();
                    tokio::spawn(async move {
                        let started = Instant::now();
                        let result = run_user_shell(&cfg, &command, &cancel).await;
                        let _ = tx.send((command, result, started.elapsed()));
                    });
                }
                AppAction::CancelShell => {
                    if let Some(cancel) = &shell_cancel {
                        cancel.cancel();
                    }
                }
                AppAction::Copy(text) => {
                    use base64::Engine;
                    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                    let mut out = std::io::stdout();
                    // OSC 52: the terminal (or tmux) puts the text on the clipboard, over
                    // SSH too.
                    let written = write!(out, "\x1b]52;c;{encoded}\x07").and_then(|()| out.flush());
                    app.push_cell(match written {
                        Ok(()) => HistoryCell::Info {
                            title: format!(
                                "Copied the last answer ({} characters) to the clipboard",
                                text.chars().count()
                            ),
                            lines: vec!["through OSC 52: the terminal must allow programs to set the clipboard".into()],
                        },
                        Err(e) => HistoryCell::Error {
                            message: format!("cannot copy: {e}"),
                        },
                    });
                    dirty = true;
                }
                AppAction::RefreshMcpCatalog => {
                    app.set_mcp_catalog(crate::mcp_actions::catalog(&current.thread));
                    let (thread, tx) = (current.thread.clone(), catalog_tx.clone());
                    tokio::spawn(async move {
                        let _ = tx.send(crate::mcp_actions::live_catalog(&thread).await);
                    });
                }
                AppAction::SearchFiles(query) => {
                    let index = match &file_index {
                        Some((root, index)) if *root == config.cwd => index.clone(),
                        _ => {
                            let index = Arc::new(oi_file_search::FileIndex::start(vec![
                                config.cwd.clone(),
                            ]));
                            file_index = Some((config.cwd.clone(), index.clone()));
                            index
                        }
                    };
                    let tx = files_tx.clone();
                    let ticket = index.ticket();
                    tokio::task::spawn_blocking(move || {
                        // While the first walk runs, the list is refreshed with what it has
                        // found so far; a newer keystroke (`None`) takes over.
                        while let Some(found) = index.search_as(ticket, &query, 20) {
                            let paths = found.matches.into_iter().map(|m| m.path).collect();
                            if tx.send((query.clone(), paths)).is_err() || found.complete {
                                break;
                            }
                            index.wait_for_complete(FILE_LIST_REFRESH);
                        }
                    });
                }
                other => handle_action(other, &mut app, &manager, &config, &mut current, &tx).await,
            }
        }
        if quit {
            app.overlay = None;
            let theme = app.theme;
            if failure.is_none()
                && let Err(e) = screens.frame(&mut app, &theme)
            {
                failure = Some(e);
            }
            break;
        }
    }
    // Flush and stop the thread so it is stored whole, then leave the prompt clean.
    let _ = current.thread.submit(Op::Shutdown).await;
    let _ = tokio::time::timeout(SHUTDOWN_TIMEOUT, manager.shutdown_all()).await;
    current.forwarder.abort();
    let forgotten = forget_if_empty(&manager, &config, &current.thread).await;
    let _ = screens.live.erase();
    drop(screens);
    drop(_guard);
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
    Ok(match (stopped_by, failure) {
        (Some(sig), _) => sig.exit_code(),
        (None, Some(_)) => 1,
        (None, None) => 0,
    })
}

/// How a `!cmd` ended: the command, its output or why it did not run, how long it took.
type ShellResult = (String, Result<oi_core::CommandOutput, String>, Duration);

/// Runs a `!cmd` the way the model's commands run: `sh -c` in the thread's directory,
/// under the session's sandbox policy, through the engine's command path.
async fn run_user_shell(
    config: &Config,
    command: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<oi_core::CommandOutput, String> {
    let req = oi_core::CommandRequest {
        argv: vec!["sh".into(), "-c".into(), command.to_string()],
        cwd: config.cwd.clone(),
        timeout: None,
        sandbox_policy: config.sandbox_policy.clone(),
        env: Default::default(),
        output_cap: Some(1024 * 1024),
    };
    oi_core::run_command(config, req, cancel).await
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

/// Writes finished cells into the scrollback, sizes the live area to its content (and the
/// screen), then redraws it.
///
/// Returns false when the terminal changed size before anything was written: the frame is
/// left for after the live area is found again (a frame laid out for the old size would
/// land on the resized screen).
pub fn draw<B: ratatui::backend::Backend>(
    live: &mut LiveViewport<B>,
    app: &mut App,
    theme: &Theme,
) -> Result<bool, String> {
    draw_committing(live, app, theme).map(|lines| lines.is_some())
}

/// [`draw`], returning the lines it printed into the scrollback (the scrollback invariant
/// test holds the terminal to them), or `None` when it drew nothing.
pub fn draw_committing<B: ratatui::backend::Backend>(
    live: &mut LiveViewport<B>,
    app: &mut App,
    theme: &Theme,
) -> Result<Option<Vec<ratatui::text::Line<'static>>>, String> {
    let failed = |e: std::io::Error| format!("cannot draw: {e}");
    let resized = |live: &LiveViewport<B>| {
        live.resized()
            .map_err(|e| format!("cannot read the terminal size: {e}"))
    };
    if resized(live)? {
        return Ok(None);
    }
    let screen = live
        .screen_size()
        .map_err(|e| format!("cannot read the terminal size: {e}"))?;
    app.screen = (screen.width, screen.height);
    // Lay out for a resized screen first, so history is wrapped for the new width.
    let height = live.height();
    live.fit(height).map_err(failed)?;
    let now = Instant::now();
    let mut wanted = live_height(app, screen.width, screen.height, theme, now);
    // The live area is at most the screen less one row: the finished lines of an open
    // block that do not fit go to the scrollback now, once.
    if wanted >= screen.height && !app.streaming.is_empty() && app.commit_overflow() {
        wanted = live_height(app, screen.width, screen.height, theme, now);
    }
    let cells = app.take_pending();
    let lines = cells_to_lines(&cells, screen.width, theme);
    // Laying out may take a while on a busy machine: a resize meanwhile leaves it all for
    // the next frame rather than write it for a screen that is gone.
    if resized(live)? {
        app.restore_pending(cells);
        return Ok(None);
    }
    if !lines.is_empty() {
        live.insert_history(&lines).map_err(failed)?;
    }
    live.fit(wanted).map_err(failed)?;
    let mut cursor = None;
    live.terminal()
        .draw(|f| {
            let area = f.area();
            cursor = render_live(app, area, f.buffer_mut(), theme, now);
            // The caret is drawn, not the terminal's cursor: that one waits at the live
            // area's first cell (see `LiveViewport::frame_drawn`).
            if let Some(cell) = cursor.and_then(|pos| f.buffer_mut().cell_mut(pos)) {
                let style = cell
                    .style()
                    .add_modifier(ratatui::style::Modifier::REVERSED);
                cell.set_style(style);
            }
        })
        .map_err(failed)?;
    live.frame_drawn().map_err(failed)?;
    Ok(Some(lines))
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

async fn switch_to(
    new: Result<NewThread, oi_core::CoreError>,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match new {
        Ok(new) => {
            current.forwarder.abort();
            if is_empty(&current.thread) {
                // Nothing to keep: stop it for good, then drop it from the store.
                stop(&current.thread).await;
                forget_if_empty(manager, config, &current.thread).await;
            } else {
                let _ = current.thread.submit(Op::Shutdown).await;
            }
            app.on_session_configured(&new.session_configured);
            app.replay_history(&new.thread.history());
            *current = Current {
                id: new.thread_id,
                forwarder: forward(new.thread_id, new.events, tx.clone()),
                thread: new.thread,
            };
        }
        Err(e) => app.push_cell(HistoryCell::Error {
            message: e.to_string(),
        }),
    }
}

async fn handle_action(
    action: AppAction,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match action {
        AppAction::Op(op) => {
            if let Err(e) = current.thread.submit(op).await {
                app.push_cell(HistoryCell::Error {
                    message: format!("the thread has stopped: {e}"),
                });
            }
        }
        AppAction::NewThread => {
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.start_thread(cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
        }
        AppAction::Resume(id) => {
            if id == current.id {
                return;
            }
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.resume_thread(id, cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
            if current.id == id {
                daily::load_title(app, manager, &config.home, id).await;
            }
        }
        AppAction::Fork => {
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.fork_thread(current.id, cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
        }
        AppAction::OpenResumePicker => {
            match crate::actions::list_threads(manager, &config.home).await {
                Ok(rows) => app.open_resume_picker(rows),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::ShowDiff => {
            let cwd = current.thread.config().cwd;
            match crate::actions::git_diff(&cwd).await {
                Ok(diff) if diff.trim().is_empty() => app.push_cell(HistoryCell::Info {
                    title: "No changes".into(),
                    lines: vec![],
                }),
                Ok(diff) => app.show_diff(diff),
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: e.to_string(),
                }),
            }
        }
        AppAction::ShowMcp { verbose } => {
            let rows = mcp_rows(config, &current.thread);
            app.show_mcp(verbose, rows);
        }
        AppAction::Init => {
            let cwd = current.thread.config().cwd;
            if cwd.join("AGENTS.md").exists() {
                app.push_cell(HistoryCell::Info {
                    title: "AGENTS.md already exists here; /init leaves it alone".into(),
                    lines: vec![],
                });
            } else {
                let op = app.init_turn();
                Box::pin(handle_action(op, app, manager, config, current, tx)).await;
            }
        }
        AppAction::Logout => {
            let cfg = current.thread.config();
            match crate::actions::logout(&cfg) {
                Ok(msg) => app.push_cell(HistoryCell::Info {
                    title: msg,
                    lines: vec![],
                }),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::Review => {
            let cwd = current.thread.config().cwd;
            match crate::actions::git_diff(&cwd).await {
                Ok(diff) if diff.trim().is_empty() => app.push_cell(HistoryCell::Info {
                    title: "Nothing to review: the working tree has no changes".into(),
                    lines: vec![],
                }),
                Ok(diff) => {
                    let op = app.review_turn(&diff);
                    Box::pin(handle_action(op, app, manager, config, current, tx)).await;
                }
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: e.to_string(),
                }),
            }
        }
        AppAction::Rename(name) => {
            let renamed = match manager.stored_threads(&config.home).await {
                Ok(stored) => stored
                    .set_name(&current.id, Some(name.clone()))
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if renamed.is_ok() {
                app.set_thread_name(Some(name.clone()));
            }
            app.push_cell(match renamed {
                Ok(()) => HistoryCell::Info {
                    title: format!("Thread renamed to “{name}”"),
                    lines: vec![],
                },
                Err(e) => HistoryCell::Error {
                    message: format!("cannot rename the thread: {e}"),
                },
            });
        }
        AppAction::Undo(changes) => {
            let cwd = current.thread.config().cwd;
            let result = tokio::task::spawn_blocking(move || crate::undo::revert(&changes, &cwd))
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
            app.undo_done(result);
        }
        AppAction::ShowSkills => {
            let (rows, errors) =
                crate::extension_actions::skill_rows(current.thread.config()).await;
            app.show_skills(rows, errors);
        }
        AppAction::RunCustomPrompt { name, args } => {
            let cfg = current.thread.config();
            app.set_custom_prompts(crate::extension_actions::custom_prompt_list(&cfg).await);
            let text =
                crate::extension_actions::expand_custom_prompt(&cfg, name.clone(), args).await;
            for action in app.send_custom_prompt(&name, text) {
                Box::pin(handle_action(action, app, manager, config, current, tx)).await;
            }
        }
        AppAction::RunMcpPrompt { name, args } => {
            app.set_mcp_catalog(crate::mcp_actions::live_catalog(&current.thread).await);
            match app.mcp_prompt_command(&name, &args) {
                Some(actions) => {
                    for action in actions {
                        Box::pin(handle_action(action, app, manager, config, current, tx)).await;
                    }
                }
                None => app.push_cell(HistoryCell::Error {
                    message: format!(
                        "no MCP server offers the prompt `/{name}`; `/mcp verbose` lists each server's prompts. It was not sent to the model."
                    ),
                }),
            }
        }
        AppAction::GetMcpPrompt {
            server,
            prompt,
            arguments,
        } => {
            match crate::mcp_actions::get_prompt(&current.thread, &server, &prompt, arguments).await
            {
                Ok(input) => {
                    for action in app.send_prompt(input) {
                        Box::pin(handle_action(action, app, manager, config, current, tx)).await;
                    }
                }
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: format!("cannot get the prompt `{prompt}` from `{server}`: {e}"),
                }),
            }
        }
        AppAction::SendWithResources {
            text,
            mut items,
            overrides,
            mentions,
        } => match crate::mcp_actions::read_mentions(&current.thread, &mentions).await {
            Ok(read) => {
                items.extend(read);
                let op = AppAction::Op(Op::UserInput { items, overrides });
                Box::pin(handle_action(op, app, manager, config, current, tx)).await;
            }
            Err(e) => app.mentions_failed(&text, overrides, e),
        },
        AppAction::Export { path, replace } => daily::export(app, current, path, replace).await,
        AppAction::PickThread(which) => {
            match crate::actions::list_threads(manager, &config.home).await {
                Ok(rows) => app.open_thread_command_picker(which, rows),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::ArchiveThread(id) => {
            let change = daily::StoreChange::Archive;
            daily::change_thread(change, id, app, manager, config, current, tx).await;
        }
        AppAction::DeleteThread(id) => {
            let change = daily::StoreChange::Delete;
            daily::change_thread(change, id, app, manager, config, current, tx).await;
        }
        AppAction::SaveTuiSetting(setting) => daily::save_tui_setting(app, config, setting),
        AppAction::ShowConfig => daily::show_config(app, config, current),
        AppAction::Quit
        | AppAction::ClearScreen
        | AppAction::Redraw
        | AppAction::Suspend
        | AppAction::SearchFiles(_)
        | AppAction::EditDraft(_)
        | AppAction::RunShell(_)
        | AppAction::CancelShell
        | AppAction::Copy(_)
        | AppAction::RefreshMcpCatalog => {}
    }
}

fn mcp_rows(config: &Config, thread: &Thread) -> Vec<McpServerRow> {
    let tools = thread.mcp_tools();
    let status = thread.mcp_status();
    let field = |v: &serde_json::Value, keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
            .unwrap_or_default()
            .to_string()
    };
    config
        .mcp_servers
        .iter()
        .map(|(name, cfg)| McpServerRow {
            name: name.clone(),
            transport: match &cfg.transport {
                oi_config::mcp::McpServerTransportConfig::Stdio { command, .. } => {
                    format!("stdio `{command}`")
                }
                oi_config::mcp::McpServerTransportConfig::StreamableHttp { url, .. } => {
                    format!("http {url}")
                }
            },
            enabled: cfg.enabled,
            error: thread.mcp_server_error(name),
            tools: tools
                .iter()
                .filter(|t| t.server == *name)
                .map(|t| {
                    (
                        t.tool.clone(),
                        t.description.clone(),
                        format!("{:?}", t.approval_mode).to_lowercase(),
                    )
                })
                .collect(),
            withheld: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| st.withheld_tools.clone())
                .collect(),
            protocol: status
                .iter()
                .find(|st| st.name == *name)
                .and_then(|st| st.protocol.as_ref())
                .map(|p| p.version.clone()),
            resources: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| {
                    st.resources
                        .iter()
                        .map(|r| field(r, &["uri"]))
                        .chain(
                            st.resource_templates
                                .iter()
                                .map(|r| field(r, &["uriTemplate"])),
                        )
                        .collect::<Vec<_>>()
                })
                .collect(),
            prompts: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| {
                    st.prompts
                        .iter()
                        .map(|p| field(p, &["name"]))
                        .collect::<Vec<_>>()
                })
                .collect(),
        })
        .collect()
}
