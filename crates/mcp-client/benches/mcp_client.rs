//! Benchmarks for the MCP client (filled in below).
fn main() {}
