//! Types shared by every Open Interpreter crate.
//!
//! * [`protocol`]: the engine's queue pair — [`protocol::Submission`]/[`protocol::Op`] in,
//!   [`protocol::Event`]/[`protocol::EventMsg`] out. Event JSON follows the reference
//!   implementation's snake_case shapes so MCP clients built for it work unchanged.
//! * [`models`]: conversation history items as sent to / received from a model.
//! * [`config_types`]: approval policy, sandbox mode/policy, reasoning effort, wire API.
//! * [`ids`]: thread ids (UUID v7).
//! * [`parked`]: a turn parked at an approval, and the answers that resume it.
//!
//! This crate has no I/O and no async: data, plus the one text helper ([`truncate`]) every
//! producer of model-visible output must share.

pub mod config_types;
pub mod ids;
pub mod models;
pub mod parse_command;
pub mod protocol;
pub mod truncate;
pub mod user_input;

pub use ids::ThreadId;
pub use protocol::parked;
