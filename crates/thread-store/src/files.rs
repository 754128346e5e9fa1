//! The store's one way to open its files: without blocking and only if the opened descriptor
//! is a regular file. The store's folder is the user's home, which other programs (a sandboxed
//! command, when the home is inside a writable root) can write too: a FIFO put in place of a
//! rollout or the name index would block `open(2)` forever, with no signal able to free the
//! thread. (The same rule as `oi_config::project_file`, which this crate does not depend on.)
//! Shared by both backends (rollout files exported from a local store are read by both).

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Opens `path` with `opts` without blocking and only if it is a regular file.
pub(crate) fn open_regular(opts: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        opts,
        libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
    );
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file (a FIFO, socket or device); remove it",
                path.display()
            ),
        )
    };
    let file = opts.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ENXIO) {
            return not_regular();
        }
        e
    })?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Opens `path` for reading (see [`open_regular`]).
pub(crate) fn open_read(path: &Path) -> io::Result<File> {
    open_regular(OpenOptions::new().read(true), path)
}

/// `path`'s whole content (see [`open_regular`]).
pub(crate) fn read(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = open_read(path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}
