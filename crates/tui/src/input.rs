//! The terminal's input for the event loop, and the cursor question a resize needs.

use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use std::io::Write;
use std::time::{Duration, Instant};

/// The terminal's input. crossterm's event stream holds the input while it waits for a
/// key, so the cursor-position answer a resize needs would only arrive after a 2 s
/// timeout; the stream is stopped for the question and made anew after it (keys typed
/// meanwhile wait in crossterm's buffer). The editor of Ctrl+G needs the input too.
pub struct Input {
    stream: Option<EventStream>,
    /// Events read while the stream was stopped, given out first.
    held: std::collections::VecDeque<TermEvent>,
    /// The terminal left a cursor question unanswered (crossterm waits 2 s): it is not
    /// asked again, so a resize never stalls the UI twice.
    unanswered: bool,
}

impl Input {
    pub fn new() -> Self {
        Self {
            stream: Some(EventStream::new()),
            held: std::collections::VecDeque::new(),
            unanswered: false,
        }
    }

    pub async fn next(&mut self) -> Option<std::io::Result<TermEvent>> {
        if let Some(ev) = self.held.pop_front() {
            return Some(Ok(ev));
        }
        match &mut self.stream {
            Some(s) => s.next().await,
            None => std::future::pending().await,
        }
    }

    /// Stops reading (for a program that needs the terminal).
    pub fn pause(&mut self) {
        self.stream = None;
    }

    pub fn resume(&mut self) {
        if self.stream.is_none() {
            self.stream = Some(EventStream::new());
        }
    }

    /// Where the terminal's cursor is now.
    pub fn cursor_position(&mut self) -> Option<ratatui::layout::Position> {
        if self.unanswered {
            return None;
        }
        self.pause();
        let _ = std::io::stdout().flush();
        // The stopped stream's wake-up may still wait in crossterm's reader, and would end
        // the question at once as if unanswered: a poll that finds nothing consumes it (a
        // zero timeout would not look). Keys found meanwhile are kept for the loop.
        while let Ok(true) = crossterm::event::poll(Duration::from_millis(1)) {
            match crossterm::event::read() {
                Ok(ev) => self.held.push_back(ev),
                Err(_) => break,
            }
        }
        let asked = Instant::now();
        let pos = crossterm::cursor::position().ok();
        if pos.is_none() && asked.elapsed() >= Duration::from_secs(1) {
            self.unanswered = true;
        }
        // The stopped stream's reader thread may have taken its last task only after the
        // loop above consumed the stop's wake-up: it then waits in poll(2) holding
        // crossterm's reader lock, and the new stream (which takes that lock to start)
        // would block this thread until the next key arrives — typed keys were seen only
        // after another key (seen under gdb). crossterm watches SIGWINCH on the same poll,
        // so raising it wakes such a thread, which finds the stop and lets go; otherwise it
        // adds one Resize event, which redraws at the same size. The same thread can still
        // take the lock between `position()`'s wait and its read (also seen): a reader
        // thread of our own that also asks the cursor question is the whole fix.
        // SAFETY: raise(3) sends a signal to the calling thread and touches no memory of
        // ours; SIGWINCH's handler is crossterm's (its default action is to ignore it).
        unsafe {
            libc::raise(libc::SIGWINCH);
        }
        self.resume();
        pos.map(|(x, y)| ratatui::layout::Position::new(x, y))
    }
}
