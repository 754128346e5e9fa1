//! Log messages (`notifications/message`), sent only to a 2026-07-28 request that asked for
//! them with `_meta["io.modelcontextprotocol/logLevel"]`, on that request's own stream, at
//! or above its level. (rmcp marks its logging types deprecated with the feature; the wire
//! shape is small enough to declare here.)

use serde::{Deserialize, Serialize};

pub const LOG_MESSAGE: &str = "notifications/message";

/// The syslog severities MCP uses, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// Params of `notifications/message`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogMessage {
    pub level: LogLevel,
    pub logger: &'static str,
    pub data: String,
}
