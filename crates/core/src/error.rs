use oi_protocol::ThreadId;

/// Errors from starting or driving a thread. Turn failures are not errors here: they are
/// reported as `error` events on the thread.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// No live thread has this id (it was never started, or was removed).
    #[error("thread not found: {0}")]
    ThreadNotFound(ThreadId),
    /// The thread's actor has stopped: no more ops are taken and every event was read.
    #[error("the thread has shut down; start a new one or resume it by id")]
    ThreadClosed,
    /// The configuration cannot run (e.g. a provider key is missing).
    #[error("{0}")]
    Config(String),
    /// An MCP server marked `required` failed to start.
    #[error("{0}")]
    Mcp(String),
    /// The model server the front end starts (the built-in `local` provider) could not be
    /// started; the message says why and what to do instead.
    #[error("{0}")]
    ModelServer(String),
    /// Another session (in this or another process sharing the store) is writing the
    /// thread; the message names the holder and the way out.
    #[error("{message}")]
    ThreadBusy {
        /// The busy thread.
        id: ThreadId,
        /// Who holds it and what to do.
        message: String,
    },
    /// A turn is already running on the thread: add input to it (steer) or interrupt it.
    #[error(
        "a turn is already running on thread {id} (turn {turn_id}); add input to it or interrupt it, then retry"
    )]
    TurnRunning {
        /// The busy thread.
        id: ThreadId,
        /// The running turn.
        turn_id: String,
    },
    /// A turn was asked to answer nothing.
    #[error("the input is empty; send at least one text or image item")]
    EmptyInput,
    /// The thread store cannot take the request as asked: a page cursor it did not hand
    /// out, a value it does not accept. The caller's to fix; retrying the same cannot help.
    #[error("{0}")]
    StoreRequest(String),
    /// Thread storage failed.
    #[error("{0}")]
    Store(String),
}
