//! `[mcp_servers.<name>]` configuration. (Placeholder: the MCP client work fills this in.)

use std::collections::BTreeMap;

/// One configured MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerConfig {
    pub raw: toml::Value,
}

/// Parse and validate the `mcp_servers` table. Errors name the server and field.
pub fn parse_mcp_servers(
    value: &toml::Value,
    _warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let mut out = BTreeMap::new();
    if let Some(t) = value.as_table() {
        for (k, v) in t {
            out.insert(k.clone(), McpServerConfig { raw: v.clone() });
        }
    }
    Ok(out)
}
