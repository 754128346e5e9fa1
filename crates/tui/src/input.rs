//! The terminal's input: one thread of ours does every read of the terminal, the cursor
//! question a resize needs included, and hands the event loop what it read.
//!
//! Why a thread of our own rather than crossterm's `EventStream`: crossterm has one global
//! reader, and whoever waits for input holds it. The cursor question (asked on every
//! resize) needs that reader, so the stream had to be dropped and made anew around it; a
//! dropped stream's thread could still be parked in poll(2) holding the reader, and the UI
//! then blocked until the next key arrived: keys typed during a resize were seen only after
//! another one. Here the waiting is our own poll(2) on the terminal and a wake-up socket,
//! holding nothing; crossterm is called only when bytes are there (or to ask where the
//! cursor is, after which the keys it queued meanwhile are handed on), always from this one
//! thread, so nobody ever waits for its reader. The same
//! poll sees a terminal that hung up (its pseudo-terminal closed), which crossterm's loop
//! would spin on, and ends the input like end of file.

use crossterm::event::Event as TermEvent;
use std::io::{self, IsTerminal, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// How long crossterm may look for more of what is already arriving. Our poll(2) said
/// bytes are there, so this only bounds the look after the last event of a burst.
const DRAIN_WAIT: Duration = Duration::from_millis(1);

/// What the event loop asks of the input thread.
enum Request {
    /// Where the cursor is (`None`: the terminal did not say).
    Cursor(oneshot::Sender<Option<(u16, u16)>>),
    /// Stop reading until `Resume` (a program of the user's needs the terminal); the
    /// answer says the thread has let go.
    Pause(oneshot::Sender<()>),
    Resume,
    /// The loop is done with the terminal.
    Stop,
}

/// The terminal's input, read by a thread of ours (see the module's docs).
pub(crate) struct Input {
    events: mpsc::UnboundedReceiver<io::Result<TermEvent>>,
    /// SIGWINCH: the thread reads crossterm only when bytes arrive, so resizes come here.
    resizes: tokio::signal::unix::Signal,
    requests: std_mpsc::Sender<Request>,
    /// A byte written here wakes the thread from its poll(2) to take a request.
    wake: UnixStream,
}

impl Input {
    /// Starts the input thread on the process's terminal (standard input when it is one,
    /// else `/dev/tty`, as crossterm reads).
    pub(crate) fn new() -> io::Result<Self> {
        let tty = terminal_fd()?;
        let resizes =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())?;
        let (wake, woken) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        woken.set_nonblocking(true)?;
        let (events_tx, events) = mpsc::unbounded_channel();
        let (requests, requests_rx) = std_mpsc::channel();
        std::thread::Builder::new()
            .name("tui-input".into())
            .spawn(move || {
                let mut reader = Reader {
                    tty,
                    woken,
                    requests: requests_rx,
                    events: events_tx,
                    unanswered: false,
                };
                reader.run();
            })?;
        Ok(Self {
            events,
            resizes,
            requests,
            wake,
        })
    }

    /// The next thing the terminal said (a resize included); an error or `None` when it
    /// is gone.
    pub(crate) async fn next(&mut self) -> Option<io::Result<TermEvent>> {
        tokio::select! {
            ev = self.events.recv() => ev,
            Some(()) = self.resizes.recv() => {
                // The frame reads the size again; a terminal that reports none (0 x 0, or an
                // error) still needs its redraw, not the end of the UI.
                let (w, h) = crossterm::terminal::size().unwrap_or((0, 0));
                Some(Ok(TermEvent::Resize(w, h)))
            }
        }
    }

    /// Stops reading (for a program that needs the terminal); returns once the thread has
    /// let go of it.
    pub(crate) async fn pause(&mut self) {
        let (tx, rx) = oneshot::channel();
        if self.ask(Request::Pause(tx)) {
            let _ = rx.await;
        }
    }

    pub(crate) fn resume(&mut self) {
        self.ask(Request::Resume);
    }

    /// Where the terminal's cursor is now (`None` when it does not answer; after one
    /// unanswered question it is not asked again, so a resize never stalls the UI twice).
    pub(crate) async fn cursor_position(&mut self) -> Option<ratatui::layout::Position> {
        // Everything drawn so far must be on the terminal before the question.
        let _ = io::stdout().flush();
        let (tx, rx) = oneshot::channel();
        if !self.ask(Request::Cursor(tx)) {
            return None;
        }
        let (x, y) = rx.await.ok().flatten()?;
        Some(ratatui::layout::Position::new(x, y))
    }

    /// Queues `request` and wakes the thread; false when the thread has ended.
    /// (Dropping the sender alone would not wake a thread waiting in poll(2).)
    fn ask(&mut self, request: Request) -> bool {
        if self.requests.send(request).is_err() {
            return false;
        }
        // A full socket already holds a wake-up: nothing is lost.
        let _ = self.wake.write(&[1]);
        true
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        // The thread must not read what the terminal says after the UI is gone.
        self.ask(Request::Stop);
    }
}

/// The input thread's side.
struct Reader {
    tty: OwnedFd,
    woken: UnixStream,
    requests: std_mpsc::Receiver<Request>,
    events: mpsc::UnboundedSender<io::Result<TermEvent>>,
    /// The terminal left a cursor question unanswered (crossterm waits 2 s).
    unanswered: bool,
}

/// What poll(2) found.
enum Ready {
    Input,
    Woken,
    HungUp,
}

impl Reader {
    fn run(&mut self) {
        loop {
            if !self.take_requests() {
                return;
            }
            let ready = match wait(self.tty.as_raw_fd(), self.woken.as_raw_fd()) {
                Ok(ready) => ready,
                Err(e) => {
                    let _ = self.events.send(Err(e));
                    return;
                }
            };
            match ready {
                Ready::Woken => self.drain_wake_ups(),
                Ready::HungUp => {
                    let _ = self.events.send(Err(io::Error::new(
                        io::ErrorKind::BrokenPipe,
                        "the terminal hung up",
                    )));
                    return;
                }
                Ready::Input => {
                    if !self.forward_events() {
                        return;
                    }
                }
            }
        }
    }

    /// Hands the loop every event crossterm parses from what arrived. False when the
    /// input is over (an error was passed on, or the loop is gone).
    fn forward_events(&mut self) -> bool {
        loop {
            match crossterm::event::poll(DRAIN_WAIT) {
                Ok(false) => return true,
                Ok(true) => {}
                Err(e) => {
                    let _ = self.events.send(Err(e));
                    return false;
                }
            }
            let ev = crossterm::event::read();
            let failed = ev.is_err();
            if self.events.send(ev).is_err() || failed {
                return false;
            }
        }
    }

    /// Answers what the loop asked. False when the loop is gone.
    fn take_requests(&mut self) -> bool {
        loop {
            match self.requests.try_recv() {
                Ok(request) => {
                    if !self.answer(request) {
                        return false;
                    }
                }
                Err(std_mpsc::TryRecvError::Empty) => return true,
                Err(std_mpsc::TryRecvError::Disconnected) => return false,
            }
        }
    }

    fn answer(&mut self, request: Request) -> bool {
        match request {
            Request::Cursor(reply) => {
                let _ = reply.send(self.ask_cursor());
                // Keys that came in while crossterm waited for the answer are in its
                // queue, no longer in the terminal: our poll(2) would not see them.
                self.forward_events()
            }
            Request::Pause(ack) => {
                let _ = ack.send(());
                // Nothing is read until the loop says so; a question meanwhile has no
                // terminal to ask.
                loop {
                    match self.requests.recv() {
                        Ok(Request::Resume) => return true,
                        Ok(Request::Cursor(reply)) => {
                            let _ = reply.send(None);
                        }
                        Ok(Request::Pause(ack)) => {
                            let _ = ack.send(());
                        }
                        Ok(Request::Stop) | Err(_) => return false,
                    }
                }
            }
            Request::Resume => true,
            Request::Stop => false,
        }
    }

    fn ask_cursor(&mut self) -> Option<(u16, u16)> {
        if self.unanswered {
            return None;
        }
        let asked = Instant::now();
        let pos = crossterm::cursor::position().ok();
        if pos.is_none() && asked.elapsed() >= Duration::from_secs(1) {
            self.unanswered = true;
        }
        pos
    }

    fn drain_wake_ups(&mut self) {
        let mut buf = [0u8; 64];
        while matches!(self.woken.read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// Waits until the terminal has bytes, the loop woke us, or the terminal hung up.
fn wait(tty: RawFd, woken: RawFd) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: tty,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: woken,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: `fds` is a live array of two initialized pollfd structs and the count
        // passed is its length; poll(2) only writes their `revents`.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        break;
    }
    let tty_ready = fds[0].revents;
    if fds[1].revents & libc::POLLIN != 0 {
        return Ok(Ready::Woken);
    }
    // A terminal that hung up (its window closed, its pseudo-terminal's other side gone)
    // reads as end of file from now on; bytes left in it are gone with it.
    if tty_ready & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        return Ok(Ready::HungUp);
    }
    if tty_ready & libc::POLLIN != 0 {
        // Readable with nothing to read is end of file too (some hang-ups say only that);
        // crossterm would read nothing and this loop would spin.
        return Ok(if pending_bytes(tty)? == 0 {
            Ready::HungUp
        } else {
            Ready::Input
        });
    }
    Ok(Ready::Woken)
}

/// Bytes waiting to be read from `fd`.
fn pending_bytes(fd: RawFd) -> io::Result<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which points at `n`.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(usize::try_from(n).unwrap_or(0))
}

/// The terminal crossterm reads: standard input when it is one, else `/dev/tty`. Ours is a
/// duplicate, only ever polled.
fn terminal_fd() -> io::Result<OwnedFd> {
    let stdin = io::stdin();
    if stdin.is_terminal() {
        return stdin.as_fd().try_clone_to_owned();
    }
    let tty = std::fs::OpenOptions::new().read(true).open("/dev/tty")?;
    Ok(tty.into())
}
