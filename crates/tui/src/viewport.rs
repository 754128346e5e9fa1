//! The live area, drawn relative to the terminal's cursor.
//!
//! Everything below the cursor's row is the live area; everything above it is history the
//! terminal keeps. Between frames the cursor waits on the live area's first cell. A frame
//! erases from there down, prints the lines that become history (the screen scrolls them
//! up into the scrollback as a plain program's output would), makes room for the live
//! rows below them and writes those from the last up to the first, where the cursor then
//! waits. Nothing is drawn at an absolute position: a terminal keeps the cursor on its
//! row's text through whatever it does on a resize (tmux re-wraps its rows, and may tell
//! the program the new size only later, or in the middle of a frame), so a frame lands
//! where the live area is, not where a layout for the old size thought it was.
//!
//! A resize can land anywhere in a frame's bytes (tmux reads a pane's output in pieces
//! and handles a resize between them), and a narrower terminal splits every row wider
//! than itself. So the cursor never moves up across a row already written: a move up
//! across a row that split meanwhile would land a row too low, and the next frame would
//! leave a copy of the live area's first rows above itself. Erasing moves no row either.
//! One window is left: between the last cell of the live area's first row and the
//! carriage return after it, a resize that splits that row leaves its first part behind.

use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Rect, Size};
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;
use ratatui::widgets::Widget;
use std::io;
use unicode_width::UnicodeWidthStr;

/// Where a live area is drawn: a size to lay out for, and bytes to write.
pub trait LiveTerminal {
    /// The terminal's size now.
    fn size(&self) -> io::Result<Size>;
    /// Writes `bytes` as they are (buffered until [`LiveTerminal::flush`]).
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Sends what was written to the terminal.
    fn flush(&mut self) -> io::Result<()>;
}

impl<W: io::Write> LiveTerminal for ratatui::backend::CrosstermBackend<W> {
    fn size(&self) -> io::Result<Size> {
        Backend::size(self)
    }
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        io::Write::write_all(self, bytes)
    }
    fn flush(&mut self) -> io::Result<()> {
        io::Write::flush(self)
    }
}

/// The size to lay out for. A pty whose size was never set reports 0×0 (a container's
/// terminal before its first resize, `script`, expect): nothing can be laid out on that,
/// so such a screen counts as 80×24 until the terminal reports its real size.
fn usable_size(size: Size) -> Size {
    if size.width == 0 || size.height == 0 {
        Size::new(80, 24)
    } else {
        size
    }
}

/// The inline live area.
pub struct LiveViewport<T: LiveTerminal> {
    terminal: T,
    /// Rows the last frame's live area took.
    height: u16,
    /// The screen row the live area begins on, as far as the frames written since the
    /// terminal last said where its cursor is can tell (a resize moves it; see
    /// [`LiveViewport::cursor_moved_to`]). It only decides how much room there is above
    /// the area; nothing is drawn by it.
    top: u16,
}

impl<T: LiveTerminal> LiveViewport<T> {
    /// A live area that begins on the cursor's row, `row` of the screen (0 when unknown:
    /// the least room above).
    pub fn new(terminal: T, row: u16) -> Self {
        Self {
            terminal,
            height: 0,
            top: row,
        }
    }

    /// The screen's size now.
    pub fn screen_size(&self) -> io::Result<Size> {
        self.terminal.size().map(usable_size)
    }

    /// Rows the live area took in the last frame.
    pub fn height(&self) -> u16 {
        self.height
    }

    /// The screen row the live area begins on (see the field).
    pub fn top(&self) -> u16 {
        self.top
    }

    /// The terminal said where its cursor is (after a resize): the live area begins on
    /// that row.
    pub fn cursor_moved_to(&mut self, row: u16) {
        self.top = row;
    }

    /// The terminal.
    pub fn terminal(&self) -> &T {
        &self.terminal
    }

    /// The terminal, to write to.
    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.terminal
    }

    /// Draws a frame: `history` (lines already wrapped to the screen's width) goes above
    /// the live area for good, and `live` (a buffer as wide as the screen) is the live
    /// area now. One write reaches the terminal, ending with the cursor on the live
    /// area's first cell.
    pub fn frame(&mut self, history: &[Line<'_>], live: &Buffer) -> io::Result<()> {
        let screen = self.screen_size()?;
        let mut out = Vec::with_capacity(4096);
        erase_below(&mut out, screen.width);
        for line in history {
            let width = u16::try_from(line.width())
                .unwrap_or(u16::MAX)
                .min(screen.width);
            if width > 0 {
                let rect = Rect::new(0, 0, width, 1);
                let mut buf = Buffer::empty(rect);
                line.clone().render(rect, &mut buf);
                write_row(&mut out, &buf, 0);
            }
            out.extend_from_slice(b"\r\n");
        }
        let rows = live.area.height.min(screen.height).max(1);
        // Room first (the rows crossed are blank, so nothing in them can split), then the
        // rows bottom up: each move up crosses only the blank row written next.
        for _ in 1..rows {
            out.extend_from_slice(b"\r\n");
        }
        for y in (0..rows).rev() {
            write_row(&mut out, live, live.area.y + y);
            out.push(b'\r');
            if y > 0 {
                out.extend_from_slice(b"\x1b[A");
            }
        }
        self.terminal.write_all(&out)?;
        self.terminal.flush()?;
        let n = u16::try_from(history.len()).unwrap_or(u16::MAX);
        self.top = self
            .top
            .saturating_add(n)
            .min(screen.height.saturating_sub(rows));
        self.height = rows;
        Ok(())
    }

    /// Erases the live area and leaves the cursor where it began (the terminal is handed
    /// to someone else, or the UI ends).
    pub fn erase(&mut self) -> io::Result<()> {
        let screen = self.screen_size()?;
        let mut out = Vec::new();
        erase_below(&mut out, screen.width);
        out.push(b'\r');
        self.terminal.write_all(&out)?;
        self.terminal.flush()?;
        self.height = 0;
        Ok(())
    }

    /// The terminal was given back (after a shell or an editor had it): the live area
    /// begins on the cursor's row, now the bottom of whatever was printed meanwhile.
    pub fn restart(&mut self, row: u16) {
        self.height = 0;
        self.top = row;
    }
}

/// Erases the cursor's row and every row below it, the cursor kept where it is, without
/// moving it off its row (see the module doc). Not "erase below" from the row's first
/// cell: tmux (its `scroll-on-clear`) turns that into a copy of the screen in the
/// scrollback when the cursor is on the screen's first cell. From the second cell it is
/// a plain erase; the first cell goes with the whole row.
fn erase_below(out: &mut Vec<u8>, width: u16) {
    if width < 2 {
        // No second cell to start from: the row, then each row below, then back up over
        // rows that are blank by then.
        out.extend_from_slice(b"\r\x1b[2K\x1b7");
        out.extend_from_slice(b"\x1b[B\x1b[J\x1b8");
        return;
    }
    out.extend_from_slice(b"\r\x1b[C\x1b[J\r\x1b[2K");
}

/// Writes row `y` of `buf` at the cursor: its cells up to the last one that shows
/// anything (a terminal that re-wraps when it narrows would take trailing blanks for text
/// and split the row), each wide character once.
fn write_row(out: &mut Vec<u8>, buf: &Buffer, y: u16) {
    let cells: Vec<&Cell> = (buf.area.x..buf.area.x + buf.area.width)
        .map(|x| &buf[(x, y)])
        .collect();
    let shows = |c: &&Cell| c.symbol() != " " || c.bg != Color::Reset || !c.modifier.is_empty();
    let end = cells.iter().rposition(shows).map_or(0, |i| i + 1);
    let mut style: Option<(Color, Color, Modifier)> = None;
    let mut covered = 0usize;
    for cell in &cells[..end] {
        if covered > 0 {
            covered -= 1;
            continue;
        }
        let now = (cell.fg, cell.bg, cell.modifier);
        if style != Some(now) {
            write_style(out, now);
            style = Some(now);
        }
        out.extend_from_slice(cell.symbol().as_bytes());
        covered = cell.symbol().width().saturating_sub(1);
    }
    if style.is_some() {
        out.extend_from_slice(b"\x1b[0m");
    }
}

/// The SGR sequence for a cell's colours and modifiers, from a reset.
fn write_style(out: &mut Vec<u8>, (fg, bg, modifier): (Color, Color, Modifier)) {
    use crossterm::style::{Attribute, Colors, SetAttribute, SetColors};
    let mut s = String::new();
    let _ = crossterm::Command::write_ansi(&SetAttribute(Attribute::Reset), &mut s);
    let _ = crossterm::Command::write_ansi(&SetColors(Colors::new(fg.into(), bg.into())), &mut s);
    let attributes = [
        (Modifier::BOLD, Attribute::Bold),
        (Modifier::DIM, Attribute::Dim),
        (Modifier::ITALIC, Attribute::Italic),
        (Modifier::UNDERLINED, Attribute::Underlined),
        (Modifier::SLOW_BLINK, Attribute::SlowBlink),
        (Modifier::RAPID_BLINK, Attribute::RapidBlink),
        (Modifier::REVERSED, Attribute::Reverse),
        (Modifier::HIDDEN, Attribute::Hidden),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut),
    ];
    for (m, a) in attributes {
        if modifier.contains(m) {
            let _ = crossterm::Command::write_ansi(&SetAttribute(a), &mut s);
        }
    }
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::widgets::Paragraph;

    /// A `vt100` terminal with a scrollback.
    struct Vt {
        parser: vt100::Parser,
        pending: Vec<u8>,
        written: Vec<u8>,
    }

    impl Vt {
        fn new(cols: u16, rows: u16) -> Self {
            let mut parser = vt100::Parser::new(rows, cols, 1000);
            parser.process(b"\x1b[?7l");
            Self {
                parser,
                pending: Vec::new(),
                written: Vec::new(),
            }
        }
    }

    impl LiveTerminal for Vt {
        fn size(&self) -> io::Result<Size> {
            let (rows, cols) = self.parser.screen().size();
            Ok(Size::new(cols, rows))
        }
        fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.pending.extend_from_slice(bytes);
            Ok(())
        }
        fn flush(&mut self) -> io::Result<()> {
            let bytes = std::mem::take(&mut self.pending);
            self.parser.process(&bytes);
            self.written.extend(bytes);
            Ok(())
        }
    }

    fn rows(v: &LiveViewport<Vt>) -> Vec<String> {
        let screen = v.terminal().parser.screen();
        screen
            .rows(0, 200)
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    fn buffer(width: u16, text: &[&str]) -> Buffer {
        let rect = Rect::new(0, 0, width, u16::try_from(text.len()).unwrap());
        let mut buf = Buffer::empty(rect);
        let lines: Vec<Line<'static>> = text.iter().map(|s| Line::raw(s.to_string())).collect();
        Paragraph::new(lines).render(rect, &mut buf);
        buf
    }

    fn lines(text: &[&str]) -> Vec<Line<'static>> {
        text.iter().map(|s| Line::raw(s.to_string())).collect()
    }

    #[test]
    fn a_screen_of_unknown_size_counts_as_80_by_24() {
        assert_eq!(usable_size(Size::new(0, 0)), Size::new(80, 24));
        assert_eq!(usable_size(Size::new(100, 0)), Size::new(80, 24));
        assert_eq!(usable_size(Size::new(60, 30)), Size::new(60, 30));
    }

    #[test]
    fn history_goes_above_and_the_cursor_waits_on_the_live_area() {
        let mut v = LiveViewport::new(Vt::new(20, 8), 0);
        v.frame(&lines(&["h1", "h2"]), &buffer(20, &["a", "b"]))
            .unwrap();
        assert_eq!(&rows(&v)[..5], ["h1", "h2", "a", "b", ""]);
        assert_eq!(v.terminal().parser.screen().cursor_position(), (2, 0));
        assert_eq!(v.top(), 2);
    }

    #[test]
    fn grows_and_shrinks_without_leaving_rows_behind() {
        let mut v = LiveViewport::new(Vt::new(20, 10), 0);
        v.frame(&[], &buffer(20, &["a", "b"])).unwrap();
        v.frame(&[], &buffer(20, &["1", "2", "3", "4", "5"]))
            .unwrap();
        assert_eq!(&rows(&v)[..6], ["1", "2", "3", "4", "5", ""]);
        v.frame(&[], &buffer(20, &["x", "y"])).unwrap();
        assert_eq!(&rows(&v)[..6], ["x", "y", "", "", "", ""]);
    }

    #[test]
    fn history_longer_than_the_screen_scrolls_through_it_in_order() {
        let mut v = LiveViewport::new(Vt::new(20, 5), 0);
        v.frame(&[], &buffer(20, &["live1", "live2"])).unwrap();
        let history: Vec<String> = (1..=9).map(|i| format!("h{i}")).collect();
        let history: Vec<&str> = history.iter().map(String::as_str).collect();
        v.frame(&lines(&history), &buffer(20, &["live1", "live2"]))
            .unwrap();
        assert_eq!(rows(&v), ["h7", "h8", "h9", "live1", "live2"]);
        assert_eq!(v.top(), 3);
        let parser = &mut v.terminal_mut().parser;
        parser.set_scrollback(6);
        let back: Vec<String> = parser.screen().rows(0, 20).take(5).collect();
        assert_eq!(back, ["h1", "h2", "h3", "h4", "h5"]);
    }

    #[test]
    fn rows_are_written_without_trailing_blanks_and_wide_characters_once() {
        let mut v = LiveViewport::new(Vt::new(30, 8), 0);
        v.frame(&lines(&["short", "宽字 x"]), &buffer(30, &["live"]))
            .unwrap();
        let written = String::from_utf8(v.terminal().written.clone()).unwrap();
        assert!(written.contains("short\x1b[0m\r\n"), "{written:?}");
        assert!(written.contains("宽字 x\x1b[0m\r\n"), "{written:?}");
        assert_eq!(&rows(&v)[..3], ["short", "宽字 x", "live"]);
    }

    #[test]
    fn a_frame_draws_where_the_cursor_is_whatever_moved_it() {
        let mut v = LiveViewport::new(Vt::new(20, 10), 0);
        v.frame(&lines(&["h1", "h2", "h3"]), &buffer(20, &["a", "b", "c"]))
            .unwrap();
        // The terminal moved the cursor (and the area's first row with it) up two rows,
        // as tmux does when rows below it split on a narrower screen.
        v.terminal_mut().parser.process(b"\x1b[2;1H");
        v.frame(&[], &buffer(20, &["A", "B"])).unwrap();
        assert_eq!(&rows(&v)[..5], ["h1", "A", "B", "", ""]);
    }

    #[test]
    fn the_caret_cell_on_a_blank_is_written() {
        let mut v = LiveViewport::new(Vt::new(20, 4), 0);
        let mut buf = buffer(20, &["> x"]);
        buf[(3, 0)].set_style(ratatui::style::Style::default().add_modifier(Modifier::REVERSED));
        v.frame(&[], &buf).unwrap();
        let cell = v.terminal().parser.screen().cell(0, 3).map(|c| c.inverse());
        assert_eq!(cell, Some(true));
    }
}
