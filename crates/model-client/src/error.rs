//! The one error type of the model client. Every message says what went wrong and how to fix it.

use std::time::Duration;

/// Why a model request failed; the message says what to fix.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// The provider needs an API key and its environment variable is unset. The message comes
    /// from the provider config and names the variable.
    #[error("{0}")]
    MissingApiKey(#[from] oi_config::MissingApiKey),
    /// The provider entry cannot be used as configured (no `base_url`, a header that is not a
    /// valid HTTP header, ...). The message names the key to fix.
    #[error("{0}")]
    Config(String),
    /// HTTP error status after retries. `message` holds the status, the provider's error text
    /// (truncated) and a hint.
    #[error("{message}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The status, the provider's error text and a hint.
        message: String,
    },
    /// The endpoint could not be reached; the message names the URL.
    #[error("{0}")]
    Connect(String),
    /// The stream sent nothing for this long (`stream_idle_timeout_ms`).
    #[error(
        "no data from the model for {} s (stream_idle_timeout_ms = {}); the server may be stuck or overloaded — raise `stream_idle_timeout_ms` for slow local models",
        .0.as_secs_f64(),
        .0.as_millis()
    )]
    IdleTimeout(Duration),
    /// The stream ended before the response was complete.
    #[error("the model stream ended early: {0}")]
    StreamDisconnected(String),
    /// The server answered with something that is not a model stream (wrong content type,
    /// malformed JSON in an event, ...).
    #[error("bad response from the model server: {0}")]
    BadResponse(String),
    /// The provider reported a failure inside the stream (`response.failed`, an `error` event,
    /// an `{"error": ...}` chunk).
    #[error("the model provider reported an error: {0}")]
    Provider(String),
}

impl ModelError {
    /// Errors after which re-sending the same request is worth it (the engine's
    /// `stream_max_retries` loop).
    pub fn is_retryable_stream_error(&self) -> bool {
        matches!(
            self,
            ModelError::StreamDisconnected(_) | ModelError::IdleTimeout(_)
        )
    }

    /// The HTTP status, for `Http` errors.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ModelError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}
