//! The one way to read a file because a repository (or any folder we do not own) contains it:
//! `AGENTS.md`, a project's `.openinterpreter/config.toml` — and every file the agent reads
//! from its home (`$OPENINTERPRETER_HOME`: `config.toml`, `.credentials.json`, the accepted
//! configs, `history.jsonl`, `model-windows.json`, `listen-token`, the MCP cache, lock and log
//! files), which a sandboxed command or another local program may have replaced with a FIFO.
//!
//! Whoever wrote the repository chose what the name points at. `AGENTS.md` as a FIFO would
//! block `open(2)` forever (a blocking-pool thread that no signal frees); a symlink to
//! `/dev/zero` would be read until the kernel kills the process. So the file is opened with
//! `O_NONBLOCK` (a FIFO or device opens at once instead of waiting for a writer), checked with
//! `fstat` on the opened descriptor (no race with a rename), refused unless it is a regular
//! file, and read only up to a cap. These are blocking calls: callers on async paths run them
//! on the blocking pool.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The cap for config files (project and user layers, the accepted-config record): TOML
/// settings are a few KiB; anything this big is not a config file.
pub const CONFIG_FILE_MAX_BYTES: u64 = 1024 * 1024;

/// The cap for the agent's own files in its home that can grow (`.credentials.json` with many
/// tokens, a config being edited): far above any real one, far below what exhausts memory.
pub const HOME_FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ProjectFileError {
    /// Nothing at that path (or a dangling symlink).
    #[error("{path} does not exist")]
    NotFound {
        /// The path as asked.
        path: String,
    },
    /// A FIFO, socket, device or directory: nothing that can be read as text to its end.
    #[error("{path} is {kind}, not a regular file; replace it with a regular file or remove it")]
    NotRegular {
        /// The path as asked.
        path: String,
        /// What it is instead (`a FIFO`, `a directory`, ...).
        kind: &'static str,
    },
    /// Larger than the cap, for callers that cannot use part of a file.
    #[error("{path} is {size} bytes, more than the {max} bytes allowed for it; shorten the file")]
    TooLarge {
        /// The path as asked.
        path: String,
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        max: u64,
    },
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path as asked.
        path: String,
        /// Why the operating system refused.
        source: io::Error,
    },
    /// A symlink (or a folder on the way) leads out of the folder the file must be in.
    #[error(
        "{path} leads to {target}, outside {root}; a project's files are read only when they are \
         inside it (copy the file into the project instead of linking to it)"
    )]
    Outside {
        /// The path as asked.
        path: String,
        /// Where it really leads.
        target: String,
        /// The folder it had to stay inside.
        root: String,
    },
}

impl ProjectFileError {
    /// A missing file is usually not worth a warning (the caller looks in several places).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ProjectFileError::NotFound { .. })
    }
}

/// A file's bytes as read: all of them, or its head and tail when it is larger than the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedBytes {
    /// The whole file, or its first part when `tail` is `Some`.
    pub head: Vec<u8>,
    /// The last part of a file larger than the cap.
    pub tail: Option<Vec<u8>>,
    /// The file's size when it was opened.
    pub size: u64,
}

/// Open `path` without blocking and refuse anything but a regular file; with `within`, also
/// anything that is not inside that folder once every symlink is followed.
fn open_regular_within(
    path: &Path,
    within: Option<&Within<'_>>,
) -> Result<(File, u64), ProjectFileError> {
    let (file, size) = open_regular(path)?;
    if let Some(w) = within {
        w.check(path, &file)?;
    }
    Ok((file, size))
}

/// Where a project's file must really be: inside `root` (canonical), and not inside
/// `excluded` (the agent's home, whose credentials no project file may lead to) unless the
/// project itself is in there.
#[derive(Clone, Copy, Debug)]
pub struct Within<'a> {
    /// The folder the file must be inside (canonical).
    pub root: &'a Path,
    /// A folder it must not be inside, unless `root` is in there too.
    pub excluded: Option<&'a Path>,
}

impl Within<'_> {
    /// Checks where the opened `file` really is (the descriptor's own path, so a symlink
    /// swapped after the open changes nothing).
    fn check(&self, path: &Path, file: &File) -> Result<(), ProjectFileError> {
        let real = real_path_of(path, file);
        let root = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.to_path_buf());
        let excluded = self
            .excluded
            .map(|e| e.canonicalize().unwrap_or_else(|_| e.to_path_buf()));
        let inside = real.as_ref().is_some_and(|r| r.starts_with(&root));
        let in_home = match (&real, &excluded) {
            (Some(r), Some(e)) => r.starts_with(e) && !root.starts_with(e),
            _ => false,
        };
        if inside && !in_home {
            return Ok(());
        }
        Err(ProjectFileError::Outside {
            path: path.display().to_string(),
            target: real
                .map(|r| r.display().to_string())
                .unwrap_or_else(|| "a place that cannot be named".into()),
            root: root.display().to_string(),
        })
    }
}

/// The path of what `file` (opened from `path`) really is: the descriptor's link in
/// `/proc/self/fd`, else `path` with every symlink resolved.
fn real_path_of(path: &Path, file: &File) -> Option<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return Some(p);
        }
    }
    let _ = file;
    path.canonicalize().ok()
}

impl From<ProjectFileError> for io::Error {
    /// For callers whose errors are `io::Error`: the kind kept where there is one, the text
    /// (which names the file and the fix) as the message.
    fn from(e: ProjectFileError) -> io::Error {
        let kind = match &e {
            ProjectFileError::NotFound { .. } => io::ErrorKind::NotFound,
            ProjectFileError::Io { source, .. } => source.kind(),
            ProjectFileError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            ProjectFileError::NotRegular { .. } | ProjectFileError::Outside { .. } => {
                io::ErrorKind::InvalidInput
            }
        };
        io::Error::new(kind, e.to_string())
    }
}

/// Opens `path` with `opts` the way every file here is opened: without blocking (a FIFO or a
/// device opens at once, or fails, instead of waiting for a peer), not as a controlling
/// terminal, and only if the opened descriptor is a regular file. For the agent's own files
/// it writes or locks (logs, lock files, appended records).
pub fn open_regular_with(opts: &mut std::fs::OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        opts,
        libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
    );
    let file = opts.open(path).map_err(|e| {
        // A FIFO opened for writing with nobody reading it.
        if e.raw_os_error() == Some(libc::ENXIO) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a regular file (a FIFO or socket); remove it",
                    path.display()
                ),
            )
        } else {
            e
        }
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ProjectFileError::NotRegular {
            path: path.display().to_string(),
            kind: kind_of(&meta.file_type()),
        }
        .into());
    }
    Ok(file)
}

/// Open `path` for reading without blocking and refuse anything but a regular file; its size
/// when opened comes with it.
pub fn open_regular(path: &Path) -> Result<(File, u64), ProjectFileError> {
    let shown = || path.display().to_string();
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut opts,
        libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
    );
    let file = opts.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ProjectFileError::NotFound { path: shown() },
        _ => ProjectFileError::Io {
            path: shown(),
            source: e,
        },
    })?;
    let meta = file.metadata().map_err(|e| ProjectFileError::Io {
        path: shown(),
        source: e,
    })?;
    if !meta.is_file() {
        return Err(ProjectFileError::NotRegular {
            path: shown(),
            kind: kind_of(&meta.file_type()),
        });
    }
    Ok((file, meta.len()))
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    if t.is_dir() {
        return "a directory";
    }
    "not a regular file"
}

/// Read at most `limit` bytes from the current position.
fn read_up_to(file: &mut File, limit: u64, path: &Path) -> Result<Vec<u8>, ProjectFileError> {
    let mut buf = Vec::new();
    file.take(limit)
        .read_to_end(&mut buf)
        .map_err(|e| ProjectFileError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
    Ok(buf)
}

/// Read `path` if it is a regular file: all of it when it has at most `max` bytes, else its
/// first and last `max / 2` bytes (the part in between is never read).
pub fn read_head_tail(path: &Path, max: u64) -> Result<BoundedBytes, ProjectFileError> {
    read_head_tail_in(path, max, None)
}

fn read_head_tail_in(
    path: &Path,
    max: u64,
    within: Option<&Within<'_>>,
) -> Result<BoundedBytes, ProjectFileError> {
    let (mut file, size) = open_regular_within(path, within)?;
    if size <= max {
        // A file that grows while we read is still cut at the cap.
        let head = read_up_to(&mut file, max, path)?;
        return Ok(BoundedBytes {
            head,
            tail: None,
            size,
        });
    }
    let half = max / 2;
    let head = read_up_to(&mut file, half, path)?;
    file.seek(SeekFrom::Start(size - half))
        .map_err(|e| ProjectFileError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
    let tail = read_up_to(&mut file, half, path)?;
    Ok(BoundedBytes {
        head,
        tail: Some(tail),
        size,
    })
}

/// Read `path` as UTF-8 text if it is a regular file of at most `max` bytes. For files that
/// are only useful whole (config files).
pub fn read_text_capped(path: &Path, max: u64) -> Result<String, ProjectFileError> {
    read_text_capped_in(path, max, None)
}

/// [`read_text_capped`] of a file that must really be inside `within` (see [`Within`]).
pub fn read_text_capped_in(
    path: &Path,
    max: u64,
    within: Option<&Within<'_>>,
) -> Result<String, ProjectFileError> {
    let bytes = read_bytes_capped_in(path, max, within)?;
    String::from_utf8(bytes).map_err(|_| ProjectFileError::Io {
        path: path.display().to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
    })
}

/// `path`'s bytes if it is a regular file of at most `max` bytes.
pub fn read_bytes_capped(path: &Path, max: u64) -> Result<Vec<u8>, ProjectFileError> {
    read_bytes_capped_in(path, max, None)
}

/// [`read_bytes_capped`] of a file that must really be inside `within`, if given.
fn read_bytes_capped_in(
    path: &Path,
    max: u64,
    within: Option<&Within<'_>>,
) -> Result<Vec<u8>, ProjectFileError> {
    let (mut file, size) = open_regular_within(path, within)?;
    let too_large = |size| ProjectFileError::TooLarge {
        path: path.display().to_string(),
        size,
        max,
    };
    if size > max {
        return Err(too_large(size));
    }
    let bytes = read_up_to(&mut file, max + 1, path)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The last `max` bytes of `path` if it is a regular file (all of it when smaller), read with
/// a seek; `true` with them when the file was longer (the first line may then be partial).
pub fn read_tail(path: &Path, max: u64) -> Result<(Vec<u8>, bool), ProjectFileError> {
    let (mut file, size) = open_regular(path)?;
    let cut = size > max;
    if cut {
        file.seek(SeekFrom::Start(size - max))
            .map_err(|e| ProjectFileError::Io {
                path: path.display().to_string(),
                source: e,
            })?;
    }
    Ok((read_up_to(&mut file, max, path)?, cut))
}

/// The hex SHA-256 of `path` if it is a regular file of at most `max` bytes, read in pieces
/// (a program or script that a project config launches: see `launch_pins`).
pub fn sha256_capped(path: &Path, max: u64) -> Result<String, ProjectFileError> {
    use sha2::{Digest, Sha256};
    let (file, size) = open_regular(path)?;
    let too_large = |size| ProjectFileError::TooLarge {
        path: path.display().to_string(),
        size,
        max,
    };
    if size > max {
        return Err(too_large(size));
    }
    let mut hasher = Sha256::new();
    let mut limited = file.take(max + 1);
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = limited.read(&mut buf).map_err(|e| ProjectFileError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > max {
            return Err(too_large(total));
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Read `path` as text for the model, cut head+tail to about `max` bytes with the same marker
/// as [`oi_protocol::truncate::truncate_head_tail`]; invalid UTF-8 is replaced, not refused.
pub fn read_text_head_tail(path: &Path, max: u64) -> Result<String, ProjectFileError> {
    read_text_head_tail_in(path, max, None)
}

/// [`read_text_head_tail`] of a file that must really be inside `within` (see [`Within`]).
pub fn read_text_head_tail_in(
    path: &Path,
    max: u64,
    within: Option<&Within<'_>>,
) -> Result<String, ProjectFileError> {
    let b = read_head_tail_in(path, max, within)?;
    match b.tail {
        None => Ok(String::from_utf8_lossy(&b.head).into_owned()),
        Some(tail) => {
            let head = String::from_utf8_lossy(&b.head);
            let tail = String::from_utf8_lossy(&tail);
            // Cut at line boundaries where one is near, as the shared truncation does.
            let head = match head.rfind('\n') {
                Some(nl) if nl > head.len() / 2 => &head[..=nl],
                _ => &head[..],
            };
            let tail = match tail.find('\n') {
                Some(nl) if nl < tail.len() / 2 => &tail[nl + 1..],
                _ => &tail[..],
            };
            let omitted = b.size.saturating_sub(head.len() as u64 + tail.len() as u64);
            Ok(format!(
                "{head}\n[... {omitted} of {} bytes omitted ...]\n{tail}",
                b.size
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn small_file_is_read_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("AGENTS.md");
        std::fs::write(&p, "hello\n").unwrap();
        assert_eq!(read_text_head_tail(&p, 100).unwrap(), "hello\n");
        assert_eq!(read_text_capped(&p, 100).unwrap(), "hello\n");
    }

    #[test]
    fn oversize_file_is_cut_head_and_tail_without_reading_the_middle() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("AGENTS.md");
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, &text).unwrap();
        let b = read_head_tail(&p, 1000).unwrap();
        assert_eq!(b.head.len(), 500);
        assert_eq!(b.tail.as_ref().map(Vec::len), Some(500));
        assert_eq!(b.size, text.len() as u64);
        let t = read_text_head_tail(&p, 1000).unwrap();
        assert!(t.starts_with("line 0\n"), "{t}");
        assert!(t.ends_with("line 9999\n"), "{t}");
        assert!(t.contains("bytes omitted ..."), "{t}");
        assert!(t.len() < 1100, "{}", t.len());
        match read_text_capped(&p, 1000) {
            Err(ProjectFileError::TooLarge { size, max, .. }) => {
                assert_eq!((size, max), (text.len() as u64, 1000));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    #[test]
    fn fifo_is_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("AGENTS.md");
        let st = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        let started = Instant::now();
        let e = read_text_head_tail(&p, 1000).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            e.to_string().contains("FIFO") && e.to_string().contains("not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn files_opened_for_writing_or_locking_must_be_regular_too() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log.txt");
        let st = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success());
        let started = Instant::now();
        for opts in [
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .clone(),
            std::fs::OpenOptions::new().read(true).write(true).clone(),
        ] {
            let e = open_regular_with(&mut opts.clone(), &p).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        let e = crate::edit::lock(&d.path().join("log.txt")).map(drop);
        assert!(e.is_ok(), "the lock is a sibling file: {e:?}");
        let lock = d.path().join(".cfg.lock");
        std::fs::rename(&p, &lock).unwrap();
        let e = crate::edit::lock(&d.path().join("cfg"))
            .map(drop)
            .unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = crate::edit::read_or_empty(&lock).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert_eq!(
            crate::edit::read_or_empty(&d.path().join("none")).unwrap(),
            ""
        );
    }

    #[test]
    fn a_project_file_must_really_be_inside_the_project_and_out_of_the_home() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("repo");
        let home = d.path().join("home");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".credentials.json"), "secret").unwrap();
        std::fs::write(root.join("docs/agents.md"), "inside").unwrap();
        let within = Within {
            root: &root,
            excluded: Some(&home),
        };
        let doc = root.join("AGENTS.md");
        std::os::unix::fs::symlink(home.join(".credentials.json"), &doc).unwrap();
        let e = read_text_head_tail_in(&doc, 100, Some(&within)).unwrap_err();
        assert!(matches!(e, ProjectFileError::Outside { .. }), "{e}");
        assert!(e.to_string().contains(".credentials.json"), "{e}");
        std::fs::remove_file(&doc).unwrap();
        std::os::unix::fs::symlink("docs/agents.md", &doc).unwrap();
        assert_eq!(
            read_text_head_tail_in(&doc, 100, Some(&within)).unwrap(),
            "inside"
        );
        // A project inside the home (odd, but the home is no secret to itself) is readable.
        let inner = home.join("proj");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("AGENTS.md"), "in home").unwrap();
        let within = Within {
            root: &inner,
            excluded: Some(&home),
        };
        let text = read_text_capped_in(&inner.join("AGENTS.md"), 100, Some(&within)).unwrap();
        assert_eq!(text, "in home");
    }

    #[test]
    fn the_tail_is_read_with_a_seek() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("history.jsonl");
        std::fs::write(&p, "one\ntwo\nthree\n").unwrap();
        assert_eq!(
            read_tail(&p, 100).unwrap(),
            (b"one\ntwo\nthree\n".to_vec(), false)
        );
        assert_eq!(read_tail(&p, 8).unwrap(), (b"o\nthree\n".to_vec(), true));
        assert_eq!(read_bytes_capped(&p, 100).unwrap().len(), 14);
        assert!(matches!(
            read_bytes_capped(&p, 5),
            Err(ProjectFileError::TooLarge { .. })
        ));
    }

    #[test]
    fn symlink_to_dev_zero_and_directories_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("AGENTS.md");
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let e = read_text_head_tail(&p, 1000).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_text_capped(d.path(), 1000).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let e = read_text_capped(&d.path().join("missing"), 1000).unwrap_err();
        assert!(e.is_not_found());
    }
}
