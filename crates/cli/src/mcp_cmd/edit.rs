//! Format-preserving edits of `[mcp_servers.<name>]` in the user config.

use super::AddArgs;
use oi_config::mcp::McpServerConfig;
use std::path::{Path, PathBuf};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

/// Why `mcp add` / `mcp remove` did not change the user config; each says what to do.
#[derive(Debug, thiserror::Error)]
pub(super) enum McpEditError {
    /// A stdio server was given no command.
    #[error(
        "give the server command after `--`, e.g. `interpreter mcp add docs -- npx -y docs-mcp`"
    )]
    NoCommand,
    /// An `--env` entry without `=` or with an empty key.
    #[error("environment entries must be in KEY=VALUE form")]
    EnvEntry,
    /// The table built from the flags did not read back (a bug, not the user's input).
    #[error("internal error building the entry: {0}")]
    Build(#[from] toml::de::Error),
    /// The entry is not a server the loader would accept.
    #[error(transparent)]
    Entry(#[from] oi_config::mcp::McpConfigError),
    /// The user config is not TOML; it is left as it is.
    #[error("cannot edit {}: it is not valid TOML ({message}); fix the file and try again", path.display())]
    NotToml { path: PathBuf, message: String },
    /// `mcp_servers` in the user config is a value, not a table.
    #[error("cannot edit {}: `mcp_servers` is not a table; fix the file and try again", path.display())]
    ServersNotATable { path: PathBuf },
    /// Locking, reading or writing the user config failed.
    #[error("cannot update {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The `[mcp_servers.<name>]` table for `mcp add`, validated by the same parser the loader
/// uses, so nothing invalid is ever written.
pub(super) fn server_table(args: &AddArgs) -> Result<(Table, McpServerConfig), McpEditError> {
    let mut t = Table::new();
    if let Some(url) = &args.url {
        t.insert("url", value(url.as_str()));
        if let Some(var) = &args.bearer_token_env_var {
            t.insert("bearer_token_env_var", value(var.as_str()));
        }
        if let Some(resource) = &args.oauth_resource {
            t.insert("oauth_resource", value(resource.as_str()));
        }
        if let Some(id) = &args.oauth_client_id {
            let mut oauth = InlineTable::new();
            oauth.insert("client_id", id.as_str().into());
            t.insert("oauth", value(oauth));
        }
    } else {
        let (command, rest) = args.command.split_first().ok_or(McpEditError::NoCommand)?;
        t.insert("command", value(command.as_str()));
        if !rest.is_empty() {
            let mut arr = Array::new();
            for a in rest {
                arr.push(a.as_str());
            }
            t.insert("args", value(arr));
        }
        if !args.env.is_empty() {
            let mut env = InlineTable::new();
            for pair in &args.env {
                let (k, v) = pair
                    .split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or(McpEditError::EnvEntry)?;
                env.insert(k, v.into());
            }
            env.sort_values();
            t.insert("env", value(env));
        }
    }
    let cfg = validate(&args.name, &t)?;
    Ok((t, cfg))
}

fn validate(name: &str, t: &Table) -> Result<McpServerConfig, McpEditError> {
    let text = t.to_string();
    let parsed: toml::Value = toml::from_str(&text)?;
    let mut warnings = Vec::new();
    Ok(oi_config::mcp::parse_server(name, &parsed, &mut warnings)?)
}

fn parse_doc(path: &Path, text: &str) -> Result<DocumentMut, McpEditError> {
    text.parse::<DocumentMut>()
        .map_err(|e| McpEditError::NotToml {
            path: path.to_path_buf(),
            message: e.to_string().trim().to_string(),
        })
}

/// Read, change and atomically rewrite the user config under its edit lock
/// ([`oi_config::edit`]), so a concurrent `mcp add`, `trust` or `config/value/write` is never
/// lost. `change` returns whether it changed anything (nothing is written otherwise).
fn edit_doc(
    path: &Path,
    change: impl FnOnce(&mut DocumentMut) -> Result<bool, McpEditError>,
) -> Result<bool, McpEditError> {
    oi_config::edit::update_text(
        path,
        |source| McpEditError::Io {
            path: path.to_path_buf(),
            source,
        },
        |text| {
            let mut doc = parse_doc(path, text)?;
            let changed = change(&mut doc)?;
            Ok((changed.then(|| doc.to_string()), changed))
        },
    )
}

/// Insert or replace `mcp_servers.<name>`; a replaced entry keeps its place in the file.
pub(super) fn upsert_server(path: &Path, name: &str, mut entry: Table) -> Result<(), McpEditError> {
    edit_doc(path, |doc| {
        let root = doc.as_table_mut();
        if !root.contains_key("mcp_servers") {
            let mut servers = Table::new();
            // No bare `[mcp_servers]` header: only `[mcp_servers.<name>]` tables appear.
            servers.set_implicit(true);
            root.insert("mcp_servers", Item::Table(servers));
        }
        let servers = root
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| McpEditError::ServersNotATable {
                path: path.to_path_buf(),
            })?;
        match servers.get_mut(name) {
            Some(existing) => {
                // Keep the comment/blank lines that preceded the old table header.
                if let Some(old) = existing.as_table() {
                    entry.decor_mut().clone_from(old.decor());
                    if let Some(pos) = old.position() {
                        entry.set_position(pos);
                    }
                }
                *existing = Item::Table(entry);
            }
            None => {
                servers.insert(name, Item::Table(entry));
            }
        }
        Ok(true)
    })
    .map(|_| ())
}

/// Remove `mcp_servers.<name>`; `Ok(false)` if the user config has no such entry.
pub(super) fn remove_server(path: &Path, name: &str) -> Result<bool, McpEditError> {
    if !path.exists() {
        return Ok(false);
    }
    edit_doc(path, |doc| {
        Ok(doc
            .as_table_mut()
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
            .is_some_and(|servers| servers.remove(name).is_some()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio_args(name: &str, env: &[&str], command: &[&str]) -> AddArgs {
        AddArgs {
            name: name.into(),
            env: env.iter().map(|s| s.to_string()).collect(),
            url: None,
            bearer_token_env_var: None,
            oauth_client_id: None,
            oauth_resource: None,
            command: command.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn add_keeps_comments_and_other_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let original = "# my settings\nmodel = \"qwen\" # inline note\n\n# docs server\n[mcp_servers.docs]\ncommand = \"old\"\n\n[profiles.fast]\nmodel = \"small\"\n";
        std::fs::write(&path, original).unwrap();
        let t = server_table(&stdio_args(
            "docs",
            &["B=2", "A=1"],
            &["npx", "-y", "docs-mcp"],
        ))
        .unwrap()
        .0;
        upsert_server(&path, "docs", t).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.starts_with("# my settings\nmodel = \"qwen\" # inline note\n"),
            "{after}"
        );
        assert!(after.contains("# docs server\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs-mcp\"]\nenv = { A = \"1\", B = \"2\" }\n"), "{after}");
        assert!(
            after.find("[mcp_servers.docs]").unwrap() < after.find("[profiles.fast]").unwrap(),
            "position kept: {after}"
        );
        assert!(!after.contains("\n[mcp_servers]\n"), "{after}");

        let t = server_table(&stdio_args("extra", &[], &["srv"])).unwrap().0;
        upsert_server(&path, "extra", t).unwrap();
        assert!(remove_server(&path, "docs").unwrap());
        assert!(!remove_server(&path, "docs").unwrap());
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.contains("[profiles.fast]") && after.contains("[mcp_servers.extra]"),
            "{after}"
        );
        assert!(!after.contains("docs"), "{after}");
    }

    #[test]
    fn bad_env_and_empty_command_are_rejected() {
        assert_eq!(
            server_table(&stdio_args("a", &["NOEQUALS"], &["x"]))
                .unwrap_err()
                .to_string(),
            "environment entries must be in KEY=VALUE form"
        );
        assert!(server_table(&stdio_args("a", &["=v"], &["x"])).is_err());
        assert!(
            server_table(&stdio_args("a", &[], &[]))
                .unwrap_err()
                .to_string()
                .contains("after `--`")
        );
    }

    #[test]
    fn http_entry_is_validated() {
        let mut a = stdio_args("web", &[], &[]);
        a.url = Some("ftp://nope".into());
        assert!(
            server_table(&a)
                .unwrap_err()
                .to_string()
                .contains("not an http(s) URL")
        );
        a.url = Some("https://mcp.example.com/mcp".into());
        a.bearer_token_env_var = Some("TOKEN".into());
        a.oauth_client_id = Some("cid".into());
        let t = server_table(&a).unwrap().0.to_string();
        assert!(t.contains("url = \"https://mcp.example.com/mcp\""));
        assert!(t.contains("oauth = { client_id = \"cid\" }"));
    }

    #[test]
    fn invalid_file_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \n").unwrap();
        let t = server_table(&stdio_args("a", &[], &["x"])).unwrap().0;
        let e = upsert_server(&path, "a", t).unwrap_err().to_string();
        assert!(e.contains("not valid TOML"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \n");
    }
}
