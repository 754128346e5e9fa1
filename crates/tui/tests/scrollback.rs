//! The scrollback holds the conversation exactly once, whatever the schedule: the real
//! rendering code (`run::draw`, `LiveViewport`) draws through crossterm's escape sequences
//! into a `vt100` terminal, which keeps a scrollback, and the test reads scrollback plus
//! screen top to bottom.
//!
//! `OI_TUI_SCHEDULE_SEED=N` runs the randomized schedules from seed N (the seed of a
//! failing schedule is printed); `OI_TUI_SCHEDULES=N` sets how many run; `OI_TUI_TRACE=1`
//! prints each resize and frame.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_protocol::protocol::EventMsg;
use oi_tui::app::App;
use oi_tui::cells::HistoryCell;
use oi_tui::composer::Composer;
use oi_tui::run::draw_committing;
use oi_tui::theme::Theme;
use oi_tui::viewport::{LiveTerminal, LiveViewport};

use ratatui::layout::Size;
use serde_json::json;
use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

const PLAIN: Theme = Theme {
    color: false,
    name: oi_tui::theme::ThemeName::Mono,
};

/// A terminal: what crossterm writes goes into a `vt100` parser with a scrollback.
#[derive(Clone)]
struct Vt(Rc<RefCell<vt100::Parser>>);

/// The erase sequences a terminal like tmux turns into "move the screen into the
/// scrollback": erase below from the first cell (`ESC [ J`, `ESC [ 0 J`) and erase all.
const ERASES: [&[u8]; 3] = [b"\x1b[J", b"\x1b[0J", b"\x1b[2J"];

impl Write for Vt {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut p = self.0.borrow_mut();
        let mut rest = buf;
        while let Some((at, len)) = (0..rest.len()).find_map(|i| {
            ERASES
                .iter()
                .find(|e| rest[i..].starts_with(e))
                .map(|e| (i, e.len()))
        }) {
            p.process(&rest[..at]);
            let all = rest[at..at + len] == *b"\x1b[2J";
            if all || p.screen().cursor_position() == (0, 0) {
                scroll_on_clear(&mut p);
            }
            p.process(&rest[at..at + len]);
            rest = &rest[at + len..];
        }
        p.process(rest);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What tmux does (its `scroll-on-clear`, on by default) when the whole screen is erased:
/// the rows down to the last one with text move into the scrollback.
fn scroll_on_clear(p: &mut vt100::Parser) {
    let (rows, cols) = p.screen().size();
    let texts: Vec<String> = p.screen().rows(0, cols).collect();
    let Some(last) = texts.iter().rposition(|r| !r.trim().is_empty()) else {
        return;
    };
    let (row, col) = p.screen().cursor_position();
    let mut seq = format!("\x1b[{rows};1H");
    seq.push_str(&"\n".repeat(last + 1));
    seq.push_str(&format!("\x1b[{};{}H", row + 1, col + 1));
    p.process(seq.as_bytes());
}

/// Turns the terminal's line wrap off, as the TUI does.
const NO_WRAP: &[u8] = b"\x1b[?7l";

/// The terminal as the live area sees it: the size it is told, and the bytes it is sent
/// (interpreted on flush, as one write).
struct VtBackend {
    vt: Vt,
    pending: Vec<u8>,
    /// The size the program is told, when the terminal tells it late (tmux re-wraps a
    /// pane at once and sends the new size afterwards).
    told: Rc<RefCell<Option<Size>>>,
}

impl LiveTerminal for VtBackend {
    fn size(&self) -> io::Result<Size> {
        if let Some(size) = *self.told.borrow() {
            return Ok(size);
        }
        let (rows, cols) = self.vt.0.borrow().screen().size();
        Ok(Size::new(cols, rows))
    }
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.pending.extend_from_slice(bytes);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        let bytes = std::mem::take(&mut self.pending);
        let cols = self.vt.0.borrow().screen().size().1;
        self.vt.write_all(&without_wrap(&bytes, cols))
    }
}

/// What a terminal with line wrap off (as the TUI sets it) shows of `bytes`: text past
/// the last column is not written on the next row (`vt100` always wraps, so the text a
/// row has past the screen's width is dropped here). Frames move the cursor only with
/// `\r`, `\n` and sequences that do not print, so counting columns from each `\r` is
/// enough.
fn without_wrap(bytes: &[u8], cols: u16) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut col = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                out.push(c);
                // An escape sequence: ESC 7 / ESC 8, or CSI up to its final letter.
                if let Some(&next) = chars.peek() {
                    out.push(next);
                    chars.next();
                    if next == '[' {
                        for c in chars.by_ref() {
                            out.push(c);
                            if c.is_ascii_alphabetic() {
                                break;
                            }
                        }
                    }
                }
            }
            '\r' | '\n' => {
                if c == '\r' {
                    col = 0;
                }
                out.push(c);
            }
            _ => {
                let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if col + w <= usize::from(cols) {
                    out.push(c);
                }
                col += w;
            }
        }
    }
    out.into_bytes()
}

fn ev(v: serde_json::Value) -> EventMsg {
    serde_json::from_value(v).expect("event json")
}

/// One TUI session drawing into a vt100 terminal.
struct Session {
    vt: Vt,
    live: LiveViewport<VtBackend>,
    app: App,
    /// Every line committed to the scrollback so far, as text, in order.
    committed: Vec<String>,
    /// Per committed line, the narrowest width the terminal had since it was written: a
    /// terminal that does not re-wrap cuts the rows on its screen when it narrows.
    narrowest: Vec<u16>,
    /// The terminal re-wraps its contents when its width changes, as tmux does.
    reflow: bool,
    /// The width the last frame was drawn for.
    frame_cols: u16,
    /// See [`VtBackend::told`].
    told: Rc<RefCell<Option<Size>>>,
    /// The size the last frame was laid out for.
    drawn_for: Option<Size>,
}

impl Session {
    /// A session on a terminal that re-wraps its contents when it narrows or widens.
    fn reflowing(cols: u16, rows: u16) -> Session {
        let mut s = Session::new(cols, rows);
        s.reflow = true;
        s
    }

    fn new(cols: u16, rows: u16) -> Session {
        let vt = Vt(Rc::new(RefCell::new(vt100::Parser::new(
            rows, cols, 20_000,
        ))));
        // As the TUI sets it: rows are placed, never wrapped by the terminal.
        vt.0.borrow_mut().process(NO_WRAP);
        let told = Rc::new(RefCell::new(None));
        let backend = VtBackend {
            vt: vt.clone(),
            pending: Vec::new(),
            told: told.clone(),
        };
        let live = LiveViewport::new(backend, 0);
        let mut app = App::new(Composer::default());
        app.on_event(&ev(json!({
            "type": "session_configured",
            "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
            "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
            "model": "qwen3-coder",
            "model_provider_id": "ollama",
            "approval_policy": "on-request",
            "approvals_reviewer": "user",
            "sandbox_policy": {"type": "workspace-write"},
            "cwd": "/repo/project",
            "history_log_id": 0,
            "history_entry_count": 0
        })));
        Session {
            vt,
            live,
            app,
            committed: Vec::new(),
            narrowest: Vec::new(),
            reflow: false,
            frame_cols: cols,
            told,
            drawn_for: None,
        }
    }

    fn event(&mut self, v: serde_json::Value) {
        self.app.on_event(&ev(v));
    }

    /// One frame, as the runner draws it: after a resize the terminal is asked where the
    /// cursor is (the room above the live area).
    fn frame(&mut self) {
        let size = self.live.screen_size().unwrap();
        if Some(size) != self.drawn_for {
            let (row, _) = self.vt.0.borrow().screen().cursor_position();
            self.live.cursor_moved_to(row);
            self.drawn_for = Some(size);
        }
        let width = self.live.screen_size().unwrap().width;
        self.frame_cols = width;
        if std::env::var_os("OI_TUI_TRACE").is_some() {
            let a = (self.live.top(), self.live.height());
            eprintln!(
                "frame: top and height {a:?}, cursor {:?}, committed {}",
                self.vt.0.borrow().screen().cursor_position(),
                self.committed.len()
            );
        }
        let lines = draw_committing(&mut self.live, &mut self.app, &PLAIN)
            .unwrap()
            .expect("a frame for the size the terminal tells is drawn");
        if std::env::var_os("OI_TUI_TRACE").is_some() {
            let a = (self.live.top(), self.live.height());
            eprintln!(
                "drawn: top and height {a:?}, {} lines committed, streaming {:?}",
                lines.len(),
                self.app.streaming.chars().take(60).collect::<String>()
            );
        }
        for l in lines {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            self.committed.push(text.trim_end().to_string());
            self.narrowest
                .push(if self.reflow { u16::MAX } else { width });
        }
    }

    /// The terminal changes size as tmux does without re-wrapping: a shorter screen first
    /// deletes rows below the cursor, then moves rows from the top into the scrollback
    /// (tmux's `screen_resize_y`); a narrower one cuts the rows on screen.
    fn resize(&mut self, cols: u16, rows: u16) {
        let mut p = self.vt.0.borrow_mut();
        if self.reflow {
            if std::env::var_os("OI_TUI_TRACE").is_some() {
                eprintln!(
                    "resize {:?} -> {cols}x{rows}, cursor {:?} (re-wrapping)",
                    p.screen().size(),
                    p.screen().cursor_position()
                );
            }
            if p.screen().size() != (rows, cols) {
                reflow(&mut p, cols, rows);
            }
            return;
        }
        let (old_rows, old_cols) = p.screen().size();
        let (row, col) = p.screen().cursor_position();
        if rows < old_rows {
            let below = old_rows - 1 - row;
            let up = usize::from((old_rows - rows).saturating_sub(below));
            if up > 0 {
                let mut seq = format!("\x1b[{old_rows};1H");
                seq.push_str(&"\n".repeat(up));
                let row = usize::from(row).saturating_sub(up);
                seq.push_str(&format!("\x1b[{};{}H", row + 1, col + 1));
                p.process(seq.as_bytes());
            }
        }
        if std::env::var_os("OI_TUI_TRACE").is_some() {
            eprintln!(
                "resize {old_cols}x{old_rows} -> {cols}x{rows}, cursor {row},{col}, committed {}",
                self.narrowest.len()
            );
        }
        p.set_size(rows, cols);
        for n in &mut self.narrowest {
            *n = (*n).min(cols);
        }
    }

    /// Scrollback plus screen, top to bottom, without the blank rows at the bottom.
    fn terminal_rows(&self) -> Vec<String> {
        let mut p = self.vt.0.borrow_mut();
        let mut rows = all_rows(&mut p);
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows
    }

    /// Scrollback plus screen hold every committed line once and in order, then the live
    /// area; `tokens` (each written once in the conversation) are each shown once.
    fn check(&mut self, tokens: &[String]) -> Result<(), String> {
        let rows = self.terminal_rows();
        let show = || {
            format!(
                "terminal:\n{}\n--- committed:\n{}",
                rows.join("\n"),
                self.committed.join("\n")
            )
        };
        for (i, (row, want)) in rows.iter().zip(&self.committed).enumerate() {
            // Cut to a width no narrower than the terminal has been since (the cut happens
            // only while the row is on the screen).
            let cut: String = want.chars().take(usize::from(self.narrowest[i])).collect();
            if !(want.starts_with(row.as_str()) && row.len() >= cut.trim_end().len()) {
                return Err(format!(
                    "row {i} is {row:?}, committed {want:?}\n{}",
                    show()
                ));
            }
        }
        let live = usize::from(self.live.height());
        if rows.len() != self.committed.len() + live {
            return Err(format!(
                "{} rows in the terminal, {} committed + {live} live\n{}",
                rows.len(),
                self.committed.len(),
                show()
            ));
        }
        let tail = &rows[self.committed.len()..];
        if !tail.iter().any(|r| r.contains("Ask anything")) {
            return Err(format!("no composer in the live area\n{}", show()));
        }
        let mut counts = std::collections::HashMap::new();
        // What was written holds each token once (the rows above match it, cut where the
        // terminal narrowed).
        for word in self
            .committed
            .iter()
            .flat_map(|r| r.split(|c: char| !c.is_ascii_alphanumeric()))
        {
            *counts.entry(word).or_insert(0usize) += 1;
        }
        for t in tokens {
            let n = counts.get(t.as_str()).copied().unwrap_or(0);
            if n != 1 {
                return Err(format!("`{t}` shown {n} times\n{}", show()));
            }
        }
        Ok(())
    }
}

/// Every line of the scrollback and the screen, oldest first, trailing blanks cut: the
/// rows a terminal wrapped (only a re-wrapping resize does here) joined into the line
/// they were.
fn all_rows(parser: &mut vt100::Parser) -> Vec<String> {
    let cols = usize::from(parser.screen().size().1);
    let mut out = Vec::new();
    let mut line = String::new();
    for (text, wrapped) in rows_wrapped(parser) {
        line.push_str(&text);
        if wrapped {
            pad(&mut line, cols);
        } else {
            out.push(std::mem::take(&mut line).trim_end().to_string());
        }
    }
    if !line.is_empty() {
        out.push(line.trim_end().to_string());
    }
    out
}

/// Pads `line` with blanks to the next multiple of `cols` characters (a wrapped row is
/// full to its last cell).
fn pad(line: &mut String, cols: usize) {
    let n = line.chars().count();
    let to = n.div_ceil(cols).max(1) * cols;
    line.extend(std::iter::repeat_n(' ', to - n));
}

/// Every row of the scrollback and the screen, oldest first, with whether the terminal
/// wrapped it onto the next. See `screen_text` in oi-cli's pty harness for why the pages
/// are read this way.
fn rows_wrapped(parser: &mut vt100::Parser) -> Vec<(String, bool)> {
    let (rows, cols) = parser.screen().size();
    let wide = cols.max(400);
    parser.set_scrollback(usize::MAX);
    let back = parser.screen().scrollback();
    let mut out = Vec::new();
    let page = |p: &vt100::Parser, take: usize, out: &mut Vec<(String, bool)>| {
        let screen = p.screen();
        for (i, text) in screen.rows(0, wide).take(take).enumerate() {
            let wrapped = screen.row_wrapped(u16::try_from(i).unwrap());
            out.push((text.trim_end().to_string(), wrapped));
        }
    };
    let mut offset = back;
    while offset > 0 {
        parser.set_scrollback(offset);
        page(parser, offset.min(usize::from(rows)), &mut out);
        offset = offset.saturating_sub(usize::from(rows));
    }
    parser.set_scrollback(0);
    page(parser, usize::from(rows), &mut out);
    out
}

/// A resize as tmux makes it with its default reflow: every line, the scrollback's and
/// the screen's, blank rows at the bottom included, is joined from the rows it was wrapped
/// into and wrapped again at `cols`; the bottom stays where it was, so when the lines take
/// more rows, those at the top go into the scrollback, whatever they are, and the cursor
/// keeps its cell (on the top row when its line went into the scrollback). A shorter
/// screen then loses the rows below the cursor first, and a taller one takes rows back
/// from the scrollback.
fn reflow(p: &mut vt100::Parser, cols: u16, rows: u16) {
    let (old_rows, old_cols) = p.screen().size();
    let (crow, ccol) = p.screen().cursor_position();
    let all = rows_wrapped(p);
    let cursor_row = all.len() - usize::from(old_rows) + usize::from(crow);
    let mut lines: Vec<String> = Vec::new();
    let mut cursor = (0, 0);
    let mut line = String::new();
    for (i, (text, wrapped)) in all.iter().enumerate() {
        if i == cursor_row {
            cursor = (lines.len(), line.chars().count() + usize::from(ccol));
        }
        line.push_str(text);
        if *wrapped {
            pad(&mut line, usize::from(old_cols));
        } else {
            lines.push(std::mem::take(&mut line));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    // The rows at the new width, each with whether it wraps onto the next.
    let width = usize::from(cols);
    let mut split: Vec<(String, bool)> = Vec::new();
    let mut at = (0, 0);
    for (i, l) in lines.iter().enumerate() {
        let chars: Vec<char> = l.trim_end().chars().collect();
        let pieces: Vec<String> = if chars.is_empty() {
            vec![String::new()]
        } else {
            chars.chunks(width).map(|c| c.iter().collect()).collect()
        };
        if i == cursor.0 {
            let within = (cursor.1 / width).min(pieces.len() - 1);
            at = (
                split.len() + within,
                (cursor.1 - within * width).min(width - 1),
            );
        }
        let last = pieces.len() - 1;
        split.extend(pieces.into_iter().enumerate().map(|(j, t)| (t, j < last)));
    }
    // The screen at the old height, then the rows below the cursor a shorter one drops.
    if rows < old_rows {
        let top = split.len().saturating_sub(usize::from(old_rows));
        let on_screen_below = split.len() - 1 - at.0.max(top);
        let drop = on_screen_below.min(usize::from(old_rows - rows));
        split.truncate(split.len() - drop);
    }
    if std::env::var_os("OI_TUI_TRACE").is_some() {
        eprintln!(
            "reflow: {} rows in all, {} now, cursor at {at:?} of line {cursor:?}",
            all.len(),
            split.len()
        );
    }
    let mut fresh = vt100::Parser::new(rows, cols, 20_000);
    let mut feed = String::new();
    for (i, (text, wrapped)) in split.iter().enumerate() {
        feed.push_str(text);
        if !wrapped && i + 1 < split.len() {
            feed.push_str("\r\n");
        }
    }
    fresh.process(feed.as_bytes());
    let top = split.len().saturating_sub(usize::from(rows));
    let (row, col) = match at.0.checked_sub(top) {
        Some(row) => (row, at.1),
        None => (0, 0),
    };
    fresh.process(NO_WRAP);
    fresh.process(format!("\x1b[{};{}H", row + 1, col + 1).as_bytes());
    *p = fresh;
}

/// splitmix64: a seeded generator, so a failing schedule can be run again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
}

/// A random answer of Markdown blocks; every word that can be checked is a token written
/// once (`tokens` gets them).
///
/// `short`: the blocks that cannot be cut where a row ends stay short (paragraphs,
/// quotes) or out (tables), as they must for a terminal that re-wraps (see `schedule`).
fn answer(rng: &mut Rng, rows: usize, tokens: &mut Vec<String>, short: bool) -> String {
    let words_max = if short { 12 } else { 40 };
    let token = |tokens: &mut Vec<String>| {
        let t = format!("t{}x{}", tokens.len(), rng_word(tokens.len()));
        tokens.push(t.clone());
        t
    };
    let mut out = Vec::new();
    for _ in 0..rng.range(1, 6) {
        // Some blocks are taller than the screen.
        let tall = if rng.percent(25) { rows * 2 } else { 6 };
        // A table cannot be cut while it streams (its columns are laid out from all its
        // rows), so a terminal that re-wraps gets none.
        let kind = match rng.range(0, 6) {
            4 if short => 0,
            k => k,
        };
        let block = match kind {
            0 => {
                let words: Vec<String> = (0..rng.range(1, words_max))
                    .map(|_| token(tokens))
                    .collect();
                words.join(" ")
            }
            1 => format!("{} {}", "#".repeat(rng.range(1, 4)), token(tokens)),
            2 => {
                let mut b = String::from(if rng.percent(50) {
                    "```\n"
                } else {
                    "```python\n"
                });
                for _ in 0..rng.range(1, tall) {
                    b.push_str(&format!("x = {}\n", token(tokens)));
                }
                b.push_str("```");
                b
            }
            3 => {
                let ordered = rng.percent(40);
                let mut items = Vec::new();
                for i in 0..rng.range(1, tall) {
                    let words: Vec<String> = (0..rng.range(1, 4)).map(|_| token(tokens)).collect();
                    let marker = if ordered {
                        format!("{}.", i + 1)
                    } else {
                        "-".into()
                    };
                    items.push(format!("{marker} {}", words.join(" ")));
                }
                items.join("\n")
            }
            4 => {
                let mut b = String::from("| name | value |\n|---|---|\n");
                for _ in 0..rng.range(1, tall.min(12)) {
                    let wide: Vec<String> = (0..rng.range(1, 8)).map(|_| token(tokens)).collect();
                    b.push_str(&format!("| {} | {} |\n", token(tokens), wide.join(" ")));
                }
                b.trim_end().to_string()
            }
            _ => {
                let words: Vec<String> = (0..rng.range(1, words_max / 2))
                    .map(|_| token(tokens))
                    .collect();
                format!("> {}", words.join(" "))
            }
        };
        out.push(block);
    }
    out.join("\n\n")
}

/// A letter for token `n`, so tokens differ in shape as well as number.
fn rng_word(n: usize) -> char {
    (b'a' + (n % 26) as u8) as char
}

/// One random schedule: a few turns streamed in random pieces, frames after random
/// numbers of deltas, random resizes (narrow and wide, short and tall) anywhere.
///
/// On a terminal that re-wraps (`reflow`), what the live area keeps room for: a window
/// narrowed to half the width of the last frame at most, screens of 24 rows or more, and
/// the blocks that cannot be cut while they stream kept short. Beyond that, such a
/// terminal can still move the live area's first rows into the scrollback (see
/// docs/tui.md).
fn schedule(seed: u64, reflow: bool) -> Result<(), String> {
    let mut rng = Rng(seed);
    let size = |rng: &mut Rng| {
        let cols = match rng.range(0, 9) {
            0..=2 => rng.range(20, 40),
            3 | 4 => rng.range(120, 240),
            _ => rng.range(40, 120),
        };
        let rows = rng.range(if reflow { 24 } else { 6 }, 50);
        (cols as u16, rows as u16)
    };
    let (cols, rows) = size(&mut rng);
    let mut s = if reflow {
        Session::reflowing(cols, rows)
    } else {
        Session::new(cols, rows)
    };
    let narrowed = |s: &Session, c: u16| {
        if reflow {
            c.max(s.frame_cols.div_ceil(2))
        } else {
            c
        }
    };
    let mut tokens = Vec::new();
    s.frame();
    for turn in 0..rng.range(1, 3) {
        let id = format!("turn{turn}");
        s.event(json!({"type": "task_started", "turn_id": id, "model_context_window": null, "collaboration_mode_kind": "default"}));
        let ask = format!("ask {}", {
            let t = format!("u{turn}x{seed}");
            tokens.push(t.clone());
            t
        });
        s.event(json!({"type": "user_message", "message": ask}));
        let rows_now = usize::from(s.live.screen_size().unwrap().height);
        let text = answer(&mut rng, rows_now, &mut tokens, reflow);
        let chars: Vec<char> = text.chars().collect();
        let mut at = 0;
        while at < chars.len() {
            let n = if rng.percent(10) {
                rng.range(50, 400)
            } else {
                rng.range(1, 24)
            };
            let end = (at + n).min(chars.len());
            let delta: String = chars[at..end].iter().collect();
            at = end;
            s.event(json!({"type": "agent_message_delta", "delta": delta}));
            // Resizes, sometimes several before the next frame (a window dragged while the
            // UI is too busy to draw).
            while rng.percent(8) {
                let (c, r) = size(&mut rng);
                s.resize(narrowed(&s, c), r);
            }
            if rng.percent(45) {
                s.frame();
            }
        }
        // Some answers end without their final message, as an interrupted one does.
        if rng.percent(70) {
            s.event(json!({"type": "agent_message", "message": text}));
        }
        s.event(json!({"type": "task_complete", "turn_id": id, "last_agent_message": null, "duration_ms": 10}));
        // The transcript (Ctrl+T, `/copy`) has the answer whole, as it was written.
        let answer = s.app.transcript.iter().rev().find_map(|c| match c {
            HistoryCell::Assistant { markdown } => Some(markdown.clone()),
            _ => None,
        });
        if answer.as_deref() != Some(text.as_str()) {
            return Err(format!(
                "the transcript has {answer:?}, the answer was {text:?}"
            ));
        }
        if rng.percent(20) {
            let (c, r) = size(&mut rng);
            s.resize(narrowed(&s, c), r);
        }
        s.frame();
    }
    s.frame();
    s.check(&tokens)
}

#[test]
fn random_schedules_keep_the_conversation_once_in_the_scrollback() {
    run_schedules(false);
}

#[test]
fn random_schedules_on_a_rewrapping_terminal_keep_the_conversation_once() {
    run_schedules(true);
}

fn run_schedules(reflow: bool) {
    let seed: u64 = std::env::var("OI_TUI_SCHEDULE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(45);
    let count: u64 = std::env::var("OI_TUI_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let started = std::time::Instant::now();
    for i in 0..count {
        let seed = seed.wrapping_add(i);
        if let Err(e) = schedule(seed, reflow) {
            panic!(
                "schedule {seed} failed (run it alone with OI_TUI_SCHEDULE_SEED={seed} OI_TUI_SCHEDULES=1): {e}"
            );
        }
    }
    let took = started.elapsed();
    println!(
        "{count} schedules (re-wrapping: {reflow}) from seed {seed} in {took:?} ({:.0} a second)",
        count as f64 / took.as_secs_f64()
    );
}

#[test]
fn a_code_block_taller_than_the_screen_is_in_the_scrollback_once() {
    let mut s = Session::new(100, 30);
    s.frame();
    s.event(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"}));
    s.event(json!({"type": "user_message", "message": "write code"}));
    s.frame();
    let mut answer = String::from("Here it is:\n\n```python\n");
    let mut tokens = Vec::new();
    for i in 1..=45 {
        answer.push_str(&format!("print('row{i}')\n"));
        tokens.push(format!("row{i}"));
    }
    answer.push_str("```\n\nThat is all.");
    let chars: Vec<char> = answer.chars().collect();
    for chunk in chars.chunks(7) {
        let d: String = chunk.iter().collect();
        s.event(json!({"type": "agent_message_delta", "delta": d}));
        s.frame();
    }
    s.event(json!({"type": "agent_message", "message": answer}));
    s.event(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 4200}));
    s.frame();
    s.check(&tokens).unwrap();
    // Committed while it streamed, in parts, the block still reads as one: its rows follow
    // each other with nothing between them.
    let at = |needle: &str| {
        s.committed
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not committed: {:#?}", s.committed))
    };
    assert_eq!(at("'row45'") - at("'row1'"), 44, "{:#?}", s.committed);
    assert!(s.committed[at("'row1'")].starts_with("    print"));
}

/// The pseudo-terminal test's schedule (`tui_render` in oi-cli), made exact: a code
/// block taller than the screen streams while a terminal that re-wraps narrows and widens
/// again. The live area's widest rows (its rules) split in two on the narrower screen;
/// with no room above the live area for them, tmux moved its first rows into the
/// scrollback, where they stayed beside the block's own copy.
#[test]
fn a_tall_block_streams_through_resizes_of_a_rewrapping_terminal_once() {
    let mut s = Session::reflowing(100, 30);
    s.frame();
    s.event(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"}));
    s.event(json!({"type": "user_message", "message": "write tall blocks"}));
    s.frame();
    let mut answer = String::from(
        "## heading\n\nA paragraph that is long enough to wrap when the window is sixty columns wide or less.\n\n```python\n",
    );
    let mut tokens = Vec::new();
    for i in 0..40 {
        answer.push_str(&format!("print('row{i}')\n"));
        tokens.push(format!("row{i}"));
    }
    answer.push_str("```\n\nThat is all.");
    let steps = [(10, 70), (30, 100), (35, 60)];
    let mut sent = String::new();
    for line in answer.split_inclusive('\n') {
        sent.push_str(line);
        s.event(json!({"type": "agent_message_delta", "delta": line}));
        s.frame();
        for (row, cols) in steps {
            if line.contains(&format!("'row{row}'")) {
                s.resize(cols, 30);
                s.check(&[]).unwrap();
                s.frame();
            }
        }
    }
    s.event(json!({"type": "agent_message", "message": answer}));
    s.event(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 4200}));
    s.frame();
    s.check(&tokens).unwrap();
}

/// tmux re-wraps a pane as soon as it narrows, and tells the program later: frames laid
/// out for the old width are drawn meanwhile. The live area's first rows, moved up by the
/// rows its wider ones split into, must not stay above those frames as history.
#[test]
fn frames_drawn_before_the_terminal_tells_its_new_size_leave_no_copy() {
    let mut s = Session::reflowing(100, 30);
    s.frame();
    s.event(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"}));
    s.event(json!({"type": "user_message", "message": "write code"}));
    s.frame();
    let mut answer = String::from("Here it is:\n\n```python\n");
    let mut tokens = Vec::new();
    for i in 0..30 {
        answer.push_str(&format!("print('row{i}')\n"));
        tokens.push(format!("row{i}"));
    }
    answer.push_str("```\n\nThat is all.");
    for (n, line) in answer.split_inclusive('\n').enumerate() {
        s.event(json!({"type": "agent_message_delta", "delta": line}));
        if n == 8 {
            // The pane narrows; the program is told three frames later.
            *s.told.borrow_mut() = Some(Size::new(100, 30));
            s.resize(60, 30);
        }
        if n == 11 {
            *s.told.borrow_mut() = None;
        }
        s.frame();
    }
    s.event(json!({"type": "agent_message", "message": answer}));
    s.event(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 10}));
    s.frame();
    let rows = s.terminal_rows();
    let text = rows.join("\n");
    for t in &tokens {
        let quoted = format!("'{t}'");
        let n = rows.iter().filter(|r| r.contains(&quoted)).count();
        assert_eq!(n, 1, "{t} shown {n} times:\n{text}");
    }
    assert_eq!(text.matches("Ask anything").count(), 1, "{text}");
}

#[test]
fn a_long_list_streams_into_the_scrollback_as_one_list() {
    let mut s = Session::new(60, 12);
    s.frame();
    s.event(json!({"type": "task_started", "turn_id": "t1", "model_context_window": null, "collaboration_mode_kind": "default"}));
    let mut answer = String::new();
    let mut tokens = Vec::new();
    for i in 1..=200 {
        answer.push_str(&format!("{i}. item{i}\n"));
        tokens.push(format!("item{i}"));
    }
    let chars: Vec<char> = answer.chars().collect();
    for chunk in chars.chunks(5) {
        let d: String = chunk.iter().collect();
        s.event(json!({"type": "agent_message_delta", "delta": d}));
        s.frame();
        // Never more than the screen less one row is live.
        assert!(s.live.height() < 12, "{}", s.live.height());
    }
    s.event(json!({"type": "agent_message", "message": answer}));
    s.event(json!({"type": "task_complete", "turn_id": "t1", "last_agent_message": null, "duration_ms": 10}));
    s.frame();
    s.check(&tokens).unwrap();
    let first = s
        .committed
        .iter()
        .position(|l| l.contains("item1"))
        .unwrap();
    let items: Vec<&String> = s.committed[first..first + 200].iter().collect();
    for (i, l) in items.iter().enumerate() {
        let want = if i == 0 {
            format!("• {}. item{}", i + 1, i + 1)
        } else {
            format!("  {}. item{}", i + 1, i + 1)
        };
        assert_eq!(l.trim_end(), want, "{items:#?}");
    }
}
