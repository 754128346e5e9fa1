//! Printing to stdout for commands whose output may be piped: when the reader has gone away
//! (`interpreter sessions list | head -1`), the command stops quietly with status 0 instead
//! of panicking like `println!` does.
//!
//! Why not restore the default `SIGPIPE` action at start: the same process runs servers and
//! tool children, and a peer or a child closing its end of some other pipe or socket would
//! then kill the whole agent mid-turn. Only stdout's reader going away ends the process.

use std::io::Write;

/// Writes `args` to stdout and flushes. A closed reader (EPIPE) exits the process with
/// status 0; other write errors are ignored, as there is nowhere left to report them.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let result = out.write_fmt(args).and_then(|()| out.flush());
    if let Err(e) = result {
        quit_if_closed(&e);
    }
}

/// Exits quietly (status 0) if `e` says stdout's reader has gone away.
pub(crate) fn quit_if_closed(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
}

/// `print!` that exits quietly when stdout's reader has gone away (see [`write`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// `println!` that exits quietly when stdout's reader has gone away (see [`write`]).
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
