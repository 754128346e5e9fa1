//! `oi-tui`: the terminal UI of `interpreter`, a thin front end over `oi-core`'s Op/Event
//! stream.
//!
//! The UI lives in an *inline viewport* at the bottom of the terminal: finished history
//! cells are written into the terminal's own scrollback (so the terminal scrolls, searches
//! and copies them), and only the live area — the streaming answer, running commands,
//! popups, overlays, the composer and the status line — is redrawn, from the terminal's
//! cursor down (see [`viewport`]).
//!
//! * [`app::App`] is the whole state: it consumes [`oi_protocol::protocol::EventMsg`]s and
//!   keys, and emits [`app::AppAction`]s (ops for the thread or requests for the runner).
//!   It does no I/O.
//! * [`render`] draws the live area from the state; [`cells`] turns history cells into lines.
//! * [`run`] owns the terminal and the event loop and coalesces redraws into frames.

mod actions;
pub mod app;
pub mod cells;
pub mod composer;
mod diff_view;
mod editor;
mod extension_actions;
mod highlight;
mod history_search;
mod input;
mod markdown;
mod mcp_actions;
mod overlay;
mod pager;
mod queue;
pub mod render;
pub mod run;
pub mod slash;
mod status_items;
mod table;
pub mod theme;
mod transcript;
mod undo;
pub mod viewport;
mod wrap;

pub use run::{StartMode, TuiOptions, run};
