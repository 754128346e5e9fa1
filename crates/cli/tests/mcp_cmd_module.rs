//! Compiles `src/mcp_cmd.rs` (and its `mcp_cmd/` submodules) on their own, so their unit
//! tests run and `run()` can be driven in-process, independent of how main.rs wires commands.
#![allow(dead_code)]

// An inline module with a directory path makes `mcp_cmd.rs` resolve its own submodules
// exactly as it does inside the binary (src/mcp_cmd/*.rs).
#[path = "../src"]
mod src {
    pub mod mcp_cmd;
}
