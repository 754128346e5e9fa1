//! The signals that end a front end: `SIGINT` (Ctrl-C), `SIGTERM` (`kill`, `timeout`,
//! systemd, CI runners) and `SIGHUP` (the terminal went away). A front end that listens with
//! [`TerminationSignals`] replaces the default action (die on the spot, leaving the thread
//! unflushed) with its own: interrupt the running turns, stop their commands, flush the
//! threads, and exit with [`TerminationSignal::exit_code`] — `128 + signal`, what a shell
//! reports for a process killed by that signal.

/// One of the signals a front end treats as "stop".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TerminationSignal {
    /// `SIGINT`: exit code 130.
    Interrupt,
    /// `SIGTERM`: exit code 143.
    Terminate,
    /// `SIGHUP`: exit code 129.
    HangUp,
}

impl TerminationSignal {
    /// `128 + signal number`.
    pub fn exit_code(self) -> i32 {
        match self {
            TerminationSignal::Interrupt => 130,
            TerminationSignal::Terminate => 143,
            TerminationSignal::HangUp => 129,
        }
    }

    /// The conventional name (`SIGINT`...), for messages.
    pub fn name(self) -> &'static str {
        match self {
            TerminationSignal::Interrupt => "SIGINT",
            TerminationSignal::Terminate => "SIGTERM",
            TerminationSignal::HangUp => "SIGHUP",
        }
    }
}

/// Listens for the three termination signals from creation on (create it before starting
/// work, so an early signal is never lost to the default action).
pub struct TerminationSignals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hang_up: Option<tokio::signal::unix::Signal>,
}

impl TerminationSignals {
    /// Start listening. A signal that cannot be listened for (no signal driver) is reported
    /// on stderr and keeps its default action.
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let open = |which: TerminationSignal, kind: SignalKind| match signal(kind) {
                Ok(s) => Some(s),
                Err(e) => {
                    eprintln!("warning: cannot listen for {}: {e}", which.name());
                    None
                }
            };
            TerminationSignals {
                interrupt: open(TerminationSignal::Interrupt, SignalKind::interrupt()),
                terminate: open(TerminationSignal::Terminate, SignalKind::terminate()),
                hang_up: open(TerminationSignal::HangUp, SignalKind::hangup()),
            }
        }
        #[cfg(not(unix))]
        TerminationSignals {}
    }

    /// The next termination signal (pending forever if none can be received).
    pub async fn recv(&mut self) -> TerminationSignal {
        #[cfg(unix)]
        {
            tokio::select! {
                Some(()) = next(&mut self.interrupt) => TerminationSignal::Interrupt,
                Some(()) = next(&mut self.terminate) => TerminationSignal::Terminate,
                Some(()) = next(&mut self.hang_up) => TerminationSignal::HangUp,
                else => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            TerminationSignal::Interrupt
        }
    }
}

#[cfg(unix)]
async fn next(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match s {
        Some(s) => s.recv().await,
        None => None,
    }
}
