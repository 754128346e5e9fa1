//! Every integration test of this crate, linked into one binary: each `tests/*.rs` file
//! is a module here. One link instead of one per file keeps a clean build's disk and
//! link time down (CI builds from scratch); run one file's tests with a filter, e.g.
//! `cargo test -p oi-app-server --test integration accounts_v1::`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

mod accounts_v1;
mod app_server_compat;
mod catalog_config;
mod codex_startup;
mod registration;
mod threads;
mod turns;
