//! The terminal the TUI runs on: its modes (entered and put back however the TUI ends), the
//! inline live area and the alternate screen of the transcript, and drawing a frame.

use crate::app::App;
use crate::overlay::Overlay;
use crate::render::{cells_to_lines, live_size, render_live};
use crate::theme::Theme;
use crate::viewport::{LiveTerminal, LiveViewport};
use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::time::Instant;

pub(super) struct TerminalGuard;

/// Raw mode, bracketed paste and the keyboard flags the TUI runs with.
pub(super) fn enter_terminal_modes() -> std::io::Result<()> {
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
pub(super) fn stop_like_a_job() {
    // SAFETY: plain syscall; pid 0 addresses our own process group.
    unsafe {
        libc::kill(0, libc::SIGTSTP);
    }
}

#[cfg(not(unix))]
pub(super) fn stop_like_a_job() {}

impl TerminalGuard {
    pub(super) fn enter() -> std::io::Result<Self> {
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

pub(super) fn restore_terminal() {
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

/// The terminal's output, buffered so each frame reaches the terminal in one write (the
/// backend flushes at the end of a frame): a terminal resized, or read, in the middle of
/// a frame never sees half of one.
pub(super) type Stdout = CrosstermBackend<std::io::BufWriter<std::io::Stdout>>;

/// A backend over [`Stdout`].
pub(super) fn stdout_backend() -> Stdout {
    CrosstermBackend::new(std::io::BufWriter::with_capacity(
        1 << 16,
        std::io::stdout(),
    ))
}

/// Why a frame could not be drawn: the terminal is gone or refuses the writes.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    /// Writing to the terminal failed.
    #[error("cannot draw: {0}")]
    Write(#[source] std::io::Error),
    /// The terminal did not tell its size.
    #[error("cannot read the terminal size: {0}")]
    Size(#[source] std::io::Error),
}

/// What the TUI draws on: the inline live area, and the alternate screen while the
/// transcript is open (so opening it scrolls nothing away and closing it gives the
/// terminal's own screen back exactly as it was).
pub(super) struct Screens {
    pub(super) live: LiveViewport<Stdout>,
    pub(super) transcript: Option<Terminal<Stdout>>,
}

impl Screens {
    /// Draws a frame; false when it has to wait for the live area to be found again.
    pub(super) fn frame(&mut self, app: &mut App, theme: &Theme) -> Result<bool, DrawError> {
        let failed = DrawError::Write;
        if app.overlay.as_ref().is_some_and(Overlay::is_full_screen) {
            if self.transcript.is_none() {
                crossterm::execute!(std::io::stdout(), EnterAlternateScreen).map_err(failed)?;
                ON_ALTERNATE_SCREEN.store(true, std::sync::atomic::Ordering::SeqCst);
                // A full-screen viewport never asks the terminal where its cursor is.
                self.transcript = Some(Terminal::new(stdout_backend()).map_err(failed)?);
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
        // Leaving the transcript, the terminal restores the main screen and the cursor on
        // the live area's first cell: the frame below repaints the area there.
        if self.transcript.take().is_some()
            && ON_ALTERNATE_SCREEN.swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            crossterm::execute!(std::io::stdout(), LeaveAlternateScreen).map_err(failed)?;
        }
        draw(&mut self.live, app, theme)
    }
}
/// Writes finished cells into the scrollback, lays the live area out for the screen, then
/// draws it.
///
/// Returns false when the terminal changed size while the frame was laid out: nothing is
/// drawn, and the next frame lays out for the new size.
pub fn draw<T: LiveTerminal>(
    live: &mut LiveViewport<T>,
    app: &mut App,
    theme: &Theme,
) -> Result<bool, DrawError> {
    draw_committing(live, app, theme).map(|lines| lines.is_some())
}

/// [`draw`], returning the lines it printed into the scrollback (the scrollback invariant
/// test holds the terminal to them), or `None` when it drew nothing.
pub fn draw_committing<T: LiveTerminal>(
    live: &mut LiveViewport<T>,
    app: &mut App,
    theme: &Theme,
) -> Result<Option<Vec<ratatui::text::Line<'static>>>, DrawError> {
    let screen = live.screen_size().map_err(DrawError::Size)?;
    app.screen = (screen.width, screen.height);
    let now = Instant::now();
    let mut size = live_size(app, screen.width, screen.height, theme, now);
    let mut cells = app.take_pending();
    let mut lines = cells_to_lines(&cells, screen.width, theme);
    // While an answer streams, the finished lines of its open block go to the scrollback
    // now, once, when the live area would not fit on the screen (it holds the screen less
    // one row at most), or when a window half as wide would push its first rows into the
    // scrollback: a terminal that re-wraps (tmux) splits each row longer than the new
    // width and keeps the bottom of the screen where it is, so the rows the split adds
    // push out those at the top. The rows above the live area are the room for them.
    if !app.streaming.is_empty() {
        let n = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        let top = live
            .top()
            .saturating_add(n)
            .min(screen.height.saturating_sub(size.rows));
        if (size.rows >= screen.height || size.extra_when_halved > top) && app.commit_overflow() {
            let more = app.take_pending();
            lines.extend(cells_to_lines(&more, screen.width, theme));
            cells.extend(more);
            size = live_size(app, screen.width, screen.height, theme, now);
        }
    }
    // Laying out may take a while on a busy machine: a resize meanwhile leaves it all for
    // the next frame rather than write it for a screen that is gone.
    if live.screen_size().map_err(DrawError::Size)? != screen {
        app.restore_pending(cells);
        return Ok(None);
    }
    let area = ratatui::layout::Rect::new(0, 0, screen.width, size.rows.max(1));
    let mut buf = ratatui::buffer::Buffer::empty(area);
    let cursor = render_live(app, area, &mut buf, theme, now);
    // The caret is drawn, not the terminal's cursor: that one waits at the live area's
    // first cell (see `LiveViewport`).
    if let Some(cell) = cursor.and_then(|pos| buf.cell_mut(pos)) {
        let style = cell
            .style()
            .add_modifier(ratatui::style::Modifier::REVERSED);
        cell.set_style(style);
    }
    live.frame(&lines, &buf).map_err(DrawError::Write)?;
    Ok(Some(lines))
}
