//! The live area as an inline viewport whose height follows its content.
//!
//! ratatui fixes an inline viewport's height when the `Terminal` is made, so a change of
//! height (or of the terminal's size) makes a new `Terminal` over the same backend, anchored
//! where the old live area began. Asking the terminal where its cursor is (`ESC [ 6 n`) is
//! not an option then: crossterm's event reader holds the input while the event loop waits
//! for keys, so the answer would arrive only after a 2 s timeout. The anchor is known
//! anyway, so the shared backend reports it instead, and only the very first `Terminal`
//! (made before the event loop reads input) asks the terminal.

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::Widget;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use unicode_width::UnicodeWidthStr;

/// A backend that can also write bytes of its own: the frame's first erase is relative to
/// the terminal's cursor, which ratatui's absolute drawing cannot say.
pub trait LiveBackend: Backend {
    /// Writes `bytes` to the terminal as they are.
    fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()>;
}

impl<W: io::Write> LiveBackend for ratatui::backend::CrosstermBackend<W> {
    fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        io::Write::write_all(self, bytes)
    }
}

/// A `TestBackend` keeps cells, not a cursor that escape sequences move: nothing to do
/// (the absolute erase that follows does the same on it).
impl LiveBackend for ratatui::backend::TestBackend {
    fn write_raw(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

/// A backend shared by the successive `Terminal`s of one [`LiveViewport`]. It answers the
/// next cursor query with a known position when one is set.
pub struct SharedBackend<B> {
    inner: Arc<Mutex<B>>,
    known_cursor: Arc<Mutex<Option<Position>>>,
    /// The screen size the live area is laid out for, which is what ratatui is told. A
    /// resize that lands in the middle of a frame would otherwise make ratatui move the
    /// viewport itself (asking the terminal where the cursor is, which cannot be answered
    /// while the event loop holds the input); the next frame relays out for it instead.
    laid_out: Arc<Mutex<Option<Size>>>,
}

impl<B> Clone for SharedBackend<B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            known_cursor: self.known_cursor.clone(),
            laid_out: self.laid_out.clone(),
        }
    }
}

impl<B: Backend> SharedBackend<B> {
    fn new(backend: B) -> Self {
        Self {
            inner: Arc::new(Mutex::new(backend)),
            known_cursor: Arc::new(Mutex::new(None)),
            laid_out: Arc::new(Mutex::new(None)),
        }
    }

    fn set_laid_out(&self, size: Size) {
        *self
            .laid_out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(size);
    }

    /// The terminal's size now (not the one laid out for).
    pub fn real_size(&self) -> io::Result<Size> {
        self.lock().size().map(usable_size)
    }

    fn lock(&self) -> MutexGuard<'_, B> {
        // A panic while drawing poisons nothing we cannot keep using: the backend is a
        // writer, and the next frame redraws the live area.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set_known_cursor(&self, pos: Position) {
        *self
            .known_cursor
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(pos);
    }

    fn take_known_cursor(&self) -> Option<Position> {
        self.known_cursor
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    /// Runs `f` on the wrapped backend (tests and benchmarks read a `TestBackend` this way).
    pub fn with<R>(&self, f: impl FnOnce(&mut B) -> R) -> R {
        f(&mut self.lock())
    }
}

impl<B: Backend> Backend for SharedBackend<B> {
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.lock().draw(content)
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.lock().append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.lock().hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.lock().show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        if let Some(pos) = self.take_known_cursor() {
            return Ok(pos);
        }
        // ratatui asks again when it notices a new screen size before our resize event
        // does; an unanswered query must not end the UI, the next frame re-lays it out.
        let mut b = self.lock();
        b.get_cursor_position()
            .or_else(|_| Ok(Position::new(0, usable_size(b.size()?).height - 1)))
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.lock().set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.lock().clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.lock().clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        let laid_out = *self
            .laid_out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match laid_out {
            Some(size) => Ok(size),
            None => self.real_size(),
        }
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.lock().window_size()
    }

    /// Nothing: a frame reaches the terminal whole, with the cursor parked, when
    /// [`LiveViewport::frame_drawn`] flushes it (ratatui flushes after drawing, before the
    /// cursor is parked; a terminal resized between the two would re-wrap around a cursor
    /// that is not on the live area's first row, and the area would be found in the wrong
    /// place).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The size to lay out for. A pty whose size was never set reports 0×0 (a container's
/// terminal before its first resize, `script`, expect): ratatui cannot lay out on that
/// (inserting history above a zero-height screen never ends), so such a screen counts as
/// 80×24 until the terminal reports its real size.
fn usable_size(size: Size) -> Size {
    if size.width == 0 || size.height == 0 {
        Size::new(80, 24)
    } else {
        size
    }
}

/// Erases the screen from row `from` down and leaves the cursor at the start of that row.
/// From the first row, each row is erased on its own: tmux (its `scroll-on-clear`, on by
/// default) and other terminals move a screen erased from its first cell into the
/// scrollback, which would leave a copy of the live area there.
fn erase_from<B: Backend>(b: &mut B, from: u16, rows: u16) -> io::Result<()> {
    if from == 0 {
        for y in 0..rows {
            b.set_cursor_position(Position::new(0, y))?;
            b.clear_region(ClearType::CurrentLine)?;
        }
        b.set_cursor_position(Position::new(0, 0))
    } else {
        b.set_cursor_position(Position::new(0, from))?;
        b.clear_region(ClearType::AfterCursor)
    }
}

/// Draws `line` on row `y`: only the cells its text covers (a wide character's second
/// cell is the character's), so nothing is written after the line's end.
fn draw_line_cells<B: Backend>(b: &mut B, line: &Line<'_>, y: u16, width: u16) -> io::Result<()> {
    let w = u16::try_from(line.width()).unwrap_or(u16::MAX).min(width);
    if w == 0 {
        return Ok(());
    }
    let rect = Rect::new(0, 0, w, 1);
    let mut buf = Buffer::empty(rect);
    line.clone().render(rect, &mut buf);
    let mut covered = 0usize;
    let cells = buf.content.iter().enumerate().filter_map(|(x, cell)| {
        if covered > 0 {
            covered -= 1;
            return None;
        }
        covered = cell.symbol().width().saturating_sub(1);
        Some((u16::try_from(x).ok()?, y, cell))
    });
    b.draw(cells)
}

/// The inline live area: a `Terminal` whose viewport is re-made when the wanted height or
/// the screen size changes.
pub struct LiveViewport<B: LiveBackend> {
    backend: SharedBackend<B>,
    terminal: Terminal<SharedBackend<B>>,
    /// The screen size the viewport was laid out for.
    screen: Size,
    /// Where the last frame left the cursor.
    cursor: Option<Position>,
    /// Resizes are followed only by [`LiveViewport::relocate`] (the runner asks the
    /// terminal for the cursor first); `fit` keeps the laid-out size meanwhile, so a resize
    /// that lands in the middle of a frame is not taken without finding the area again.
    relocating: bool,
}

impl<B: LiveBackend> LiveViewport<B> {
    /// A live area of `height` rows starting at the cursor (asks the terminal where it is).
    pub fn new(backend: B, height: u16) -> io::Result<Self> {
        let backend = SharedBackend::new(backend);
        let screen = backend.real_size()?;
        backend.set_laid_out(screen);
        let terminal = Terminal::with_options(
            backend.clone(),
            TerminalOptions {
                viewport: Viewport::Inline(height.clamp(1, screen.height.max(1))),
            },
        )?;
        Ok(Self {
            backend,
            terminal,
            screen,
            cursor: None,
            relocating: false,
        })
    }

    /// Erases from `anchor` down and makes a new live area of `height` rows there; the
    /// next frame paints it whole.
    fn remake_at(&mut self, anchor: Position, height: u16, screen: Size) -> io::Result<()> {
        erase_from(&mut *self.backend.lock(), anchor.y, screen.height)?;
        self.backend.set_known_cursor(anchor);
        self.backend.set_laid_out(screen);
        self.cursor = None;
        let made = Terminal::with_options(
            self.backend.clone(),
            TerminalOptions {
                viewport: Viewport::Inline(height),
            },
        );
        // Whatever happened, the known position must not answer a later, real query.
        self.backend.take_known_cursor();
        self.terminal = made?;
        self.screen = screen;
        Ok(())
    }

    /// Starts the live area afresh on the screen's last row, with nothing of the old one
    /// assumed on screen (after the terminal was handed to the shell and back, the cursor
    /// is somewhere below the shell's lines; the bottom row is always free to scroll up).
    pub fn restart_at_bottom(&mut self) -> io::Result<()> {
        let screen = self.backend.real_size()?;
        let anchor = Position::new(0, screen.height.saturating_sub(1));
        self.remake_at(anchor, 1, screen)
    }

    /// Prints `lines` (already wrapped to the screen's width) above the live area the way
    /// a plain program prints: each line's own cells and nothing after them, scrolling the
    /// screen into the scrollback as needed. Trailing blanks would become part of the text
    /// for a terminal that re-wraps its contents when it narrows (tmux, most modern ones),
    /// turning every history line into two. The live area is re-made below the lines,
    /// `then` rows tall: sized for what it will show next rather than what it showed, so
    /// the history fills the screen down to it instead of leaving the rows a taller live
    /// area had blank below a shorter one.
    pub fn insert_history(&mut self, lines: &[Line<'_>], then: u16) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let screen = self.screen;
        let area = self.terminal.get_frame().area();
        // At least one row of the screen is left for history.
        let keep = then.min(screen.height.saturating_sub(1)).max(1);
        let per_pass = usize::from(screen.height.saturating_sub(keep).max(1));
        // The history goes where the live area began (it is erased from there down).
        let mut top = area.y.min(screen.height.saturating_sub(1));
        {
            let mut b = self.backend.lock();
            erase_from(&mut *b, top, screen.height)?;
            for chunk in lines.chunks(per_pass) {
                let n = u16::try_from(chunk.len()).unwrap_or(u16::MAX);
                let bottom = top.saturating_add(n).saturating_add(keep);
                if bottom > screen.height {
                    let scroll = bottom - screen.height;
                    b.set_cursor_position(Position::new(0, screen.height.saturating_sub(1)))?;
                    b.append_lines(scroll)?;
                    top = top.saturating_sub(scroll);
                }
                for (i, line) in chunk.iter().enumerate() {
                    let y = top.saturating_add(u16::try_from(i).unwrap_or(u16::MAX));
                    draw_line_cells(&mut *b, line, y, screen.width)?;
                }
                top = top.saturating_add(n);
            }
        }
        self.remake_at(Position::new(0, top), keep, screen)
    }

    /// Starts a frame: erases from the cursor's row down, wherever the cursor is, then
    /// makes the live area anew where it was laid out, so the frame paints it whole.
    ///
    /// Between frames the cursor waits on the live area's first cell, and a terminal
    /// keeps it on that row's text through any resize. A terminal can change size before
    /// it tells the program (tmux re-wraps a pane at once and sends the new size later):
    /// a frame drawn meanwhile, laid out for the old size, would land below where the
    /// re-wrapped live area now begins and leave its first rows above the new frame, to
    /// be taken for history. Erasing from the cursor first takes them away. Each row is
    /// erased on its own, the cursor saved and restored around it, never "erase below",
    /// which tmux turns into a copy of the screen in the scrollback when the cursor is on
    /// the first cell.
    pub fn begin_frame(&mut self) -> io::Result<()> {
        if self.cursor.is_none() {
            // Made since the last frame (found again, or history inserted): the cursor is
            // where it was made, and the rows below it were erased then.
            return Ok(());
        }
        let rows = self.screen.height;
        let mut erase = Vec::with_capacity(16 + usize::from(rows) * 8);
        erase.extend_from_slice(b"\r\x1b7");
        for _ in 0..rows {
            erase.extend_from_slice(b"\x1b[2K\x1b[B");
        }
        erase.extend_from_slice(b"\x1b8");
        self.backend.lock().write_raw(&erase)?;
        self.clear()
    }

    /// Erases the live area and makes it anew in the same place: the next frame paints it
    /// whole (Ctrl+L, and the main screen given back by the transcript).
    pub fn clear(&mut self) -> io::Result<()> {
        let area = self.terminal.get_frame().area();
        self.remake_at(Position::new(0, area.y), area.height, self.screen)
    }

    /// Erases the live area and leaves the cursor where it began (the terminal is handed
    /// to someone else, or the UI ends). Draw again only after [`LiveViewport::clear`] or
    /// [`LiveViewport::restart_at_bottom`].
    pub fn erase(&mut self) -> io::Result<()> {
        let area = self.terminal.get_frame().area();
        let mut b = self.backend.lock();
        erase_from(&mut *b, area.y, self.screen.height)?;
        b.flush()
    }

    /// The current `Terminal` (for `draw`).
    pub fn terminal(&mut self) -> &mut Terminal<SharedBackend<B>> {
        &mut self.terminal
    }

    /// The shared backend.
    pub fn backend(&self) -> &SharedBackend<B> {
        &self.backend
    }

    /// The screen's size now.
    pub fn screen_size(&self) -> io::Result<Size> {
        self.backend.real_size()
    }

    /// Follow resizes only through [`LiveViewport::relocate`] from now on.
    pub fn follow_resizes_by_cursor(&mut self) {
        self.relocating = true;
    }

    /// Lays out for the terminal's size where the area was (when the terminal does not
    /// say where its cursor is).
    pub fn adopt_size(&mut self) -> io::Result<()> {
        let was = std::mem::replace(&mut self.relocating, false);
        let height = self.height();
        let fitted = self.fit(height);
        self.relocating = was;
        fitted
    }

    /// True when the terminal's size is no longer the one the live area is laid out for.
    pub fn resized(&self) -> io::Result<bool> {
        Ok(self.backend.real_size()? != self.screen)
    }

    /// Parks the terminal's cursor at the start of the live area's first row once a frame
    /// is drawn; it waits there until the next frame. There it anchors the live area
    /// whatever the terminal does meanwhile: a terminal keeps the cursor on its cell when
    /// it re-wraps lines or cuts them, and a shorter screen moves only rows above the
    /// cursor (all of them history) into the scrollback, so after any number of resizes the
    /// area begins on the cursor's row, whichever kind of terminal it is.
    pub fn frame_drawn(&mut self) -> io::Result<()> {
        let area = self.terminal.get_frame().area();
        let pos = Position::new(0, area.y);
        {
            let mut b = self.backend.lock();
            b.set_cursor_position(pos)?;
            b.flush()?;
        }
        self.cursor = Some(pos);
        Ok(())
    }

    /// Finds the live area again after the terminal changed size, from where the cursor
    /// is now (`cursor_now`, asked of the terminal): the cursor was parked on the area's
    /// first cell (see [`LiveViewport::frame_drawn`]), so the area begins on its row. The
    /// area is made anew there, erasing the old one and nothing above it; when it no longer
    /// fits below that row, the screen scrolls (history moves up into the scrollback)
    /// rather than the area moving up over history.
    pub fn relocate(&mut self, cursor_now: Position, screen: Size) -> io::Result<()> {
        let area = self.terminal.get_frame().area();
        if self.cursor.is_none() {
            // Not drawn since it was made: it is where it was made.
            return self.adopt_size();
        }
        let height = area.height.clamp(1, screen.height.max(1));
        let top = cursor_now.y.min(screen.height.saturating_sub(1));
        self.remake_at(Position::new(0, top), height, screen)
    }

    /// Rows the live area has now.
    pub fn height(&mut self) -> u16 {
        self.terminal.get_frame().area().height
    }

    /// Makes the live area `height` rows (at most the screen), laid out for the screen's
    /// current size. Does nothing when both are unchanged.
    pub fn fit(&mut self, height: u16) -> io::Result<()> {
        let screen = if self.relocating {
            self.screen
        } else {
            self.backend.real_size()?
        };
        let height = height.clamp(1, screen.height.max(1));
        let area = self.terminal.get_frame().area();
        if screen == self.screen && area.height == height {
            return Ok(());
        }
        // Keep the live area's top where it was, moved up as far as a shorter screen needs
        // to fit it; a taller area grows downwards and scrolls the screen when it must.
        let top = area
            .y
            .min(screen.height.saturating_sub(area.height.min(height)));
        // Erasing from the top takes every row of the old area with it.
        self.remake_at(Position::new(0, top), height, screen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::text::Line;
    use ratatui::widgets::{Paragraph, Widget};

    fn rows(v: &LiveViewport<TestBackend>) -> Vec<String> {
        v.backend().with(|b| {
            let buf = b.buffer();
            (0..buf.area.height)
                .map(|y| {
                    (0..buf.area.width)
                        .map(|x| buf[(x, y)].symbol())
                        .collect::<String>()
                        .trim_end()
                        .to_string()
                })
                .collect()
        })
    }

    fn draw(v: &mut LiveViewport<TestBackend>, text: &[&str]) {
        let lines: Vec<Line<'static>> = text.iter().map(|s| Line::raw(s.to_string())).collect();
        v.terminal()
            .draw(|f| Paragraph::new(lines).render(f.area(), f.buffer_mut()))
            .unwrap();
    }

    #[test]
    fn a_screen_of_unknown_size_counts_as_80_by_24() {
        assert_eq!(usable_size(Size::new(0, 0)), Size::new(80, 24));
        assert_eq!(usable_size(Size::new(100, 0)), Size::new(80, 24));
        assert_eq!(usable_size(Size::new(60, 30)), Size::new(60, 30));
    }

    #[test]
    fn restarting_at_the_bottom_grows_upwards_by_scrolling() {
        let mut v = LiveViewport::new(TestBackend::new(20, 6), 2).unwrap();
        draw(&mut v, &["old", "area"]);
        v.restart_at_bottom().unwrap();
        v.fit(3).unwrap();
        draw(&mut v, &["a", "b", "c"]);
        let r = rows(&v);
        assert_eq!(&r[3..], ["a", "b", "c"], "{r:?}");
    }

    #[test]
    fn grows_and_shrinks_without_leaving_rows_behind() {
        let mut v = LiveViewport::new(TestBackend::new(20, 10), 2).unwrap();
        draw(&mut v, &["a", "b"]);
        v.fit(5).unwrap();
        assert_eq!(v.height(), 5);
        draw(&mut v, &["1", "2", "3", "4", "5"]);
        assert_eq!(&rows(&v)[..6], ["1", "2", "3", "4", "5", ""]);
        v.fit(2).unwrap();
        draw(&mut v, &["x", "y"]);
        // The rows the taller area used are blank again.
        assert_eq!(&rows(&v)[..6], ["x", "y", "", "", "", ""]);
    }

    #[test]
    fn growing_at_the_bottom_scrolls_history_up() {
        let mut v = LiveViewport::new(TestBackend::new(20, 6), 2).unwrap();
        let history: Vec<Line> = ["h1", "h2", "h3", "h4"].map(Line::raw).to_vec();
        let h = v.height();
        v.insert_history(&history, h).unwrap();
        draw(&mut v, &["a", "b"]);
        assert_eq!(rows(&v), ["h1", "h2", "h3", "h4", "a", "b"]);
        v.fit(3).unwrap();
        draw(&mut v, &["a", "b", "c"]);
        assert_eq!(rows(&v), ["h2", "h3", "h4", "a", "b", "c"]);
    }

    #[test]
    fn history_longer_than_the_screen_scrolls_through_it() {
        let mut v = LiveViewport::new(TestBackend::new(20, 5), 2).unwrap();
        draw(&mut v, &["live1", "live2"]);
        let history: Vec<Line> = (1..=9).map(|i| Line::raw(format!("h{i}"))).collect();
        let h = v.height();
        v.insert_history(&history, h).unwrap();
        draw(&mut v, &["live1", "live2"]);
        assert_eq!(rows(&v), ["h7", "h8", "h9", "live1", "live2"]);
    }

    /// A backend that records which cells were written.
    struct Recording {
        inner: TestBackend,
        written: Vec<(u16, u16)>,
    }

    impl Backend for Recording {
        fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
        where
            I: Iterator<Item = (u16, u16, &'a Cell)>,
        {
            let cells: Vec<_> = content.collect();
            self.written.extend(cells.iter().map(|(x, y, _)| (*x, *y)));
            self.inner.draw(cells.into_iter())
        }
        fn append_lines(&mut self, n: u16) -> io::Result<()> {
            self.inner.append_lines(n)
        }
        fn hide_cursor(&mut self) -> io::Result<()> {
            self.inner.hide_cursor()
        }
        fn show_cursor(&mut self) -> io::Result<()> {
            self.inner.show_cursor()
        }
        fn get_cursor_position(&mut self) -> io::Result<Position> {
            self.inner.get_cursor_position()
        }
        fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> io::Result<()> {
            self.inner.set_cursor_position(p)
        }
        fn clear(&mut self) -> io::Result<()> {
            self.inner.clear()
        }
        fn clear_region(&mut self, t: ClearType) -> io::Result<()> {
            self.inner.clear_region(t)
        }
        fn size(&self) -> io::Result<Size> {
            self.inner.size()
        }
        fn window_size(&mut self) -> io::Result<WindowSize> {
            self.inner.window_size()
        }
        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }

    impl LiveBackend for Recording {
        fn write_raw(&mut self, _bytes: &[u8]) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn history_is_written_without_trailing_blanks() {
        let backend = Recording {
            inner: TestBackend::new(30, 8),
            written: Vec::new(),
        };
        let mut v = LiveViewport::new(backend, 1).unwrap();
        v.backend().with(|b| b.written.clear());
        v.insert_history(&[Line::raw("short"), Line::raw("宽字 x")], 1)
            .unwrap();
        let written = v.backend().with(|b| std::mem::take(&mut b.written));
        let row0: Vec<u16> = written.iter().filter(|c| c.1 == 0).map(|c| c.0).collect();
        let row1: Vec<u16> = written.iter().filter(|c| c.1 == 1).map(|c| c.0).collect();
        assert_eq!(row0, [0, 1, 2, 3, 4]);
        // A wide character is one write covering two cells.
        assert_eq!(row1, [0, 2, 4, 5]);
        let shown: Vec<String> = v.backend().with(|b| {
            let buf = b.inner.buffer();
            [0, 2, 5].map(|x| buf[(x, 1)].symbol().to_string()).to_vec()
        });
        assert_eq!(shown, ["宽", "字", "x"]);
    }

    /// A live area of 4 rows at the bottom of a 30×12 screen, drawn.
    fn drawn_area() -> LiveViewport<TestBackend> {
        let mut v = LiveViewport::new(TestBackend::new(30, 12), 1).unwrap();
        v.restart_at_bottom().unwrap();
        v.fit(4).unwrap();
        v.follow_resizes_by_cursor();
        draw(&mut v, &["tail", "rule", "> x", "status"]);
        v.frame_drawn().unwrap();
        v
    }

    #[test]
    fn the_cursor_waits_on_the_live_area_first_cell() {
        let mut v = drawn_area();
        assert_eq!(v.terminal().get_frame().area().y, 8);
        let pos = v.backend().with(|b| b.get_cursor_position().unwrap());
        assert_eq!(pos, Position::new(0, 8));
    }

    #[test]
    fn after_a_resize_the_area_begins_on_the_cursor_row() {
        let mut v = drawn_area();
        // A terminal that re-wrapped the history above moved the cursor up two rows.
        v.backend().with(|b| b.resize(20, 12));
        assert!(v.resized().unwrap());
        v.relocate(Position::new(0, 6), Size::new(20, 12)).unwrap();
        assert_eq!(v.terminal().get_frame().area().y, 6);
        assert!(!v.resized().unwrap());
    }

    #[test]
    fn an_area_that_no_longer_fits_below_the_cursor_scrolls_history_up() {
        let mut v = LiveViewport::new(TestBackend::new(20, 8), 1).unwrap();
        let history: Vec<Line> = (1..=5).map(|i| Line::raw(format!("h{i}"))).collect();
        let h = v.height();
        v.insert_history(&history, h).unwrap();
        v.fit(3).unwrap();
        draw(&mut v, &["a", "b", "c"]);
        v.frame_drawn().unwrap();
        v.follow_resizes_by_cursor();
        // The screen got two rows shorter from the bottom: the cursor kept its row.
        v.backend().with(|b| b.resize(20, 6));
        v.relocate(Position::new(0, 5), Size::new(20, 6)).unwrap();
        draw(&mut v, &["a", "b", "c"]);
        // The area is whole on the shorter screen, and no history row was erased: the
        // first ones went up (TestBackend drops what scrolls off).
        assert_eq!(rows(&v), ["h3", "h4", "h5", "a", "b", "c"]);
    }

    #[test]
    fn follows_a_narrower_screen() {
        let mut v = LiveViewport::new(TestBackend::new(30, 8), 3).unwrap();
        draw(&mut v, &["one", "two", "three"]);
        v.backend().with(|b| b.resize(12, 8));
        v.fit(3).unwrap();
        assert_eq!(v.terminal().get_frame().area().width, 12);
        draw(&mut v, &["x", "y", "z"]);
        assert_eq!(&rows(&v)[..4], ["x", "y", "z", ""]);
    }
}
