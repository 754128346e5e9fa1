//! Every integration test of this crate, linked into one binary: each `tests/*.rs` file
//! is a module here. One link instead of one per file keeps a clean build's disk and
//! link time down (CI builds from scratch); run one file's tests with a filter, e.g.
//! `cargo test -p oi-cli --test integration app_server_flow::`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

#[path = "common/codex_schema.rs"]
mod codex_schema;
mod common;
mod tui_pty;

mod acp;
mod app_server_flow;
mod app_server_ws;
mod bad_input;
mod broken_pipe;
mod codex_keys;
mod codex_sdk;
mod codex_tui;
mod exec;
mod first_hour;
mod harness;
mod hooks;
mod images;
mod interactive;
mod listen_security;
mod mcp_2026;
mod mcp_cli;
mod mcp_conformance;
mod mcp_exec;
mod mcp_sampling;
mod mcp_server_binary;
mod named_files;
mod plans;
mod process_hygiene;
mod project_files;
mod sandbox;
mod security;
mod sessions;
mod shared_store;
mod shown_commands;
mod skills_prompts;
mod task_checks;
mod text_tool_calls;
mod tui;
mod tui_commands;
mod tui_daily_commands;
mod tui_diffs;
mod tui_mcp_prompts;
mod tui_regressions;
mod tui_render;
pub(crate) mod tui_second_pass;
mod tui_small_bugs;
mod v2_stdio;
