//! Configuration: `config.toml` layers, profiles, `-c` overrides, model providers.
pub mod mcp;
pub mod provider;
