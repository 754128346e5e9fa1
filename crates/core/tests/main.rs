//! Every integration test of this crate, linked into one binary: each `tests/*.rs` file
//! is a module here. One link instead of one per file keeps a clean build's disk and
//! link time down (CI builds from scratch); run one file's tests with a filter, e.g.
//! `cargo test -p oi-core --test integration context::`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

mod context;
mod engine;
mod harness_profiles;
mod mcp_calls;
mod mcp_sampling;
mod open_models;
mod parallel_commands;
mod parking;
mod repeated_calls;
mod served_now;
mod server_window;
mod small_model_faults;
mod subscribers;
