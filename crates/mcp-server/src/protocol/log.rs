//! Log messages (`notifications/message`), sent only to a 2026-07-28 request that asked for
//! them with `_meta["io.modelcontextprotocol/logLevel"]`, on that request's own stream, at
//! or above its level. (rmcp marks its logging types deprecated with the feature; the wire
//! shape is small enough to declare here.)

use serde::{Deserialize, Serialize};

/// The method of a log message.
pub const LOG_MESSAGE: &str = "notifications/message";

/// The syslog severities MCP uses, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What happened, for the record.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A critical failure.
    Critical,
    /// Act immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// Params of `notifications/message`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// Which part of the server logged it.
    pub logger: &'static str,
    /// The message.
    pub data: String,
}
