//! A resize that lands in the middle of a frame, in a real tmux: tmux reads a pane's
//! output in pieces and can re-wrap the screen between two of them, splitting each row
//! wider than the new width. Whatever piece of a frame was read before the resize, the
//! next frame must leave every row on the screen once (a move up across a row that split
//! meanwhile lands a row low, and the rows above it were left behind as copies).
//!
//! The frames are the real `LiveViewport`'s bytes. The pane prints the first part of
//! the first frame, waits for the test to resize the window, then prints the rest and
//! the second frame; the test reads the pane's whole scrollback and screen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_tui::viewport::{LiveTerminal, LiveViewport};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use std::cell::{Cell, RefCell};
use std::io;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A terminal that only keeps what is written, at a size the test sets.
#[derive(Clone, Default)]
struct Bytes {
    size: Rc<Cell<(u16, u16)>>,
    written: Rc<RefCell<Vec<u8>>>,
}

impl LiveTerminal for Bytes {
    fn size(&self) -> io::Result<Size> {
        let (w, h) = self.size.get();
        Ok(Size::new(w, h))
    }
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written.borrow_mut().extend_from_slice(bytes);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const ROWS: u16 = 30;
const WIDE: u16 = 100;
const NARROW: u16 = 60;

/// A live area like the TUI's while an answer streams: code rows, the composer's rule
/// across the whole width, the composer and a long status line.
fn live(width: u16, code_rows: usize) -> Buffer {
    let mut lines: Vec<Line<'static>> = (0..code_rows)
        .map(|i| Line::raw(format!("    print(\"code row {i:02}\")")))
        .collect();
    lines.push(Line::raw("─".repeat(usize::from(width))));
    lines.push(Line::raw("› Ask anything"));
    lines.push(Line::raw(format!(
        "  status line {}",
        "words of the status line ".repeat(3)
    )));
    let rect = Rect::new(0, 0, width, u16::try_from(lines.len()).unwrap());
    let mut buf = Buffer::empty(rect);
    Paragraph::new(lines).render(rect, &mut buf);
    buf
}

/// The two frames' bytes: the first at the wide width with history above the live
/// area, the second at the narrow width.
fn frames() -> (Vec<u8>, Vec<u8>) {
    let term = Bytes::default();
    term.size.set((WIDE, ROWS));
    let mut viewport = LiveViewport::new(term.clone(), 0);
    let history: Vec<Line<'static>> = (1..=20)
        .map(|i| Line::raw(format!("history line {i:02}")))
        .collect();
    viewport.frame(&history, &live(WIDE, 3)).unwrap();
    let first = std::mem::take(&mut *term.written.borrow_mut());
    term.size.set((NARROW, ROWS));
    viewport.frame(&[], &live(NARROW, 4)).unwrap();
    let second = std::mem::take(&mut *term.written.borrow_mut());
    (first, second)
}

/// Where the first frame may be cut: after every carriage return and every move up,
/// the places a terminal's read may end between two rows.
fn cuts(frame: &[u8]) -> Vec<usize> {
    let mut at: Vec<usize> = (0..frame.len())
        .filter(|&i| frame[i] == b'\r' || frame[i..].starts_with(b"\x1b[A"))
        .map(|i| if frame[i] == b'\r' { i + 1 } else { i + 3 })
        .collect();
    at.push(frame.len());
    at.dedup();
    at
}

struct Tmux<'a> {
    socket: &'a Path,
}

impl Tmux<'_> {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until `format` (a `display -p` format) reads `want`.
    fn wait_for(&self, format: &str, want: &str) {
        let start = Instant::now();
        loop {
            let got = self.run(&["display", "-p", "-t", "t", format]);
            if got.trim() == want {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{format} is {got:?}, not {want:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux<'_> {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(self.socket)
            .arg("kill-server")
            .output();
    }
}

/// Prints `before`, is resized to the narrow width, prints `after`; returns the pane's
/// scrollback and screen.
fn print_across_a_resize(dir: &Path, before: &[u8], after: &[u8]) -> String {
    // The TUI's terminal mode: a row wider than the screen is cut, never wrapped. The
    // title is set last in each part: once tmux shows it, it has read the part.
    let mut one = b"\x1b[?7l".to_vec();
    one.extend_from_slice(before);
    one.extend_from_slice(b"\x1b]2;one\x07");
    let mut two = after.to_vec();
    two.extend_from_slice(b"\x1b]2;two\x07");
    std::fs::write(dir.join("one"), one).unwrap();
    std::fs::write(dir.join("two"), two).unwrap();
    let conf = dir.join("tmux.conf");
    std::fs::write(
        &conf,
        "set -g status off\nset -g history-limit 5000\nset -g allow-rename off\n",
    )
    .unwrap();
    let socket = dir.join("tmux.sock");
    let tmux = Tmux { socket: &socket };
    let script = "stty raw -echo; cat one; tmux wait-for resized; cat two; exec tail -f /dev/null";
    let width = WIDE.to_string();
    let rows = ROWS.to_string();
    tmux.run(&[
        "-f",
        conf.to_str().unwrap(),
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        &width,
        "-y",
        &rows,
        "-c",
        dir.to_str().unwrap(),
        "sh",
        "-c",
        script,
    ]);
    tmux.wait_for("#{pane_title}", "one");
    tmux.run(&["resize-window", "-t", "t", "-x", &NARROW.to_string()]);
    tmux.wait_for("#{window_width}", &NARROW.to_string());
    tmux.run(&["wait-for", "-S", "resized"]);
    tmux.wait_for("#{pane_title}", "two");
    tmux.run(&["capture-pane", "-p", "-J", "-t", "t", "-S", "-", "-E", "-"])
}

#[test]
fn a_resize_in_the_middle_of_a_frame_leaves_every_row_once() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("OI_REQUIRE_PEERS").is_none(),
            "tmux is not installed"
        );
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let (first, second) = frames();
    let mut failures = Vec::new();
    for cut in cuts(&first) {
        let dir = tempfile::tempdir().unwrap();
        let text = print_across_a_resize(
            dir.path(),
            &first[..cut],
            &[&first[cut..], &second[..]].concat(),
        );
        let mut needles: Vec<String> = (1..=20).map(|i| format!("history line {i:02}")).collect();
        needles.extend((0..4).map(|i| format!("code row {i:02}")));
        needles.push("Ask anything".into());
        for needle in needles {
            let n = text.lines().filter(|l| l.contains(&needle)).count();
            if n != 1 {
                failures.push(format!(
                    "cut at byte {cut} of {}: `{needle}` shown {n} times:\n{text}",
                    first.len()
                ));
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
