//! JSON-RPC 2.0 for the servers (`interpreter mcp-server` and the v2 API on the same
//! connection): protocol types, transports, and the dispatcher, with no service logic.
//!
//! Layers, each knowing only the ones before it:
//! * [`message`]: the wire types ([`RequestId`], [`RpcError`], [`Incoming`] / [`Outgoing`]),
//!   parsing of one frame and serialization of one message. No I/O.
//! * [`transport`]: newline-delimited framing over any byte stream (a bounded line reader,
//!   a batching writer) and standard input read on its own thread.
//! * [`dispatch`]: the [`MethodTable`] where each wire method is declared once with its params
//!   type, and the processor loop that runs it: duplicate ids, `notifications/cancelled`,
//!   replies to our own requests.
//! * [`outgoing`]: the [`OutgoingSender`] (responses, notifications, server→client requests
//!   with replies routed back by id) and [`OutgoingSender::ask`], the one fail-closed way to
//!   ask the client something and wait for the answer.
//! * [`connection`]: one connection's lifecycle over a reader and a writer (read, dispatch,
//!   write, and an orderly shutdown that lets running requests answer).
//! * [`http`]: MCP streamable HTTP at `/mcp` (axum): the stateless requests of MCP
//!   2026-07-28 (standard headers checked, each request on its own, JSON or an SSE stream,
//!   cancelled when that stream closes) beside the sessions of 2025-11-25 and earlier (one
//!   SSE stream per request, the standalone GET stream, `Last-Event-ID` resumption), the
//!   network guards (Origin/Host, bearer token, body size, session cap) over the same
//!   dispatcher for both, every refusal a JSON-RPC error body; and,
//!   behind the same guards, JSON-RPC over WebSocket (one message per text frame, one
//!   session per socket), the transport of Codex's app-server clients.
//!
//! What a method does is the services' business (`oi-mcp-server`, `oi-app-server`); they
//! register handlers in a [`MethodTable`] and never see bytes.

pub mod connection;
pub mod dispatch;
pub mod http;
pub mod message;
pub mod outgoing;
pub mod transport;

pub use connection::{Connection, serve_connection};
pub use dispatch::{BoxFuture, Execution, MethodTable, RequestContext};
pub use message::{
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, Outgoing, PARSE_ERROR, RESOURCE_NOT_FOUND, RequestId,
    RpcError, UNSUPPORTED_PROTOCOL_VERSION,
};
pub use outgoing::{Answer, ClientReply, OutgoingSender, Routed};
