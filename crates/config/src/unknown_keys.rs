//! Keys nothing reads: warnings with `file:line` and the closest known key for the files,
//! errors for `-c` (a typo on the command line is caught at once).

use crate::ConfigError;
use crate::keys::{
    CODEX_ONLY_TOP_LEVEL_KEYS, HISTORY_KEYS, KeyKind, SANDBOX_WW_KEYS, THREAD_STORE_KEYS,
    TOP_LEVEL_KEYS, classify,
};
use crate::mcp::IgnoredKey;
use std::path::Path;

/// Warn about keys of `table` that are neither honoured nor Codex-only (with `file:line` and
/// the closest known key); log Codex-only keys at debug level, once each.
pub(crate) fn warn_unknown(
    table: &toml::Table,
    known: (&[&'static str], &[&'static str]),
    prefix: &str,
    origin: &str,
    text: Option<&str>,
    warnings: &mut Vec<String>,
) {
    for key in table.keys() {
        let line = text.and_then(|t| crate::schema::line_of_key(t, &[key]));
        warn_key(key, line, known, prefix, origin, warnings);
    }
}

/// The warning (or debug line) for one key that the schema does not read.
pub(crate) fn warn_key(
    key: &str,
    line: Option<usize>,
    (honoured, codex_only): (&[&'static str], &[&'static str]),
    prefix: &str,
    origin: &str,
    warnings: &mut Vec<String>,
) {
    let at = line.map(|l| format!(":{l}")).unwrap_or_default();
    match classify(key, honoured, codex_only) {
        KeyKind::Honoured => {}
        KeyKind::CodexOnly => tracing::debug!(
            "{origin}{at}: `{prefix}{key}` is a Codex setting Open Interpreter does not use; ignored"
        ),
        KeyKind::Unknown { suggestion } => {
            let hint = match suggestion {
                Some(s) => format!("did you mean `{prefix}{s}`?"),
                None => "check the spelling".to_string(),
            };
            warnings.push(format!(
                "{origin}{at}: unknown key `{prefix}{key}` is ignored ({hint} See docs/configuration.md)"
            ));
        }
    }
}

/// Honoured and Codex-only keys of one table.
pub(crate) type KnownKeys = (&'static [&'static str], &'static [&'static str]);

/// The known keys of the table `path` lies in (top level, `[sandbox_workspace_write]`,
/// `[history]`) and `path`'s key within it; `None` inside tables checked elsewhere.
pub(crate) fn known_keys_for(path: &str) -> Option<(&str, &str, KnownKeys)> {
    match path.split_once('.') {
        None => Some(("", path, (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS))),
        Some(("sandbox_workspace_write", key)) => {
            Some(("sandbox_workspace_write.", key, (SANDBOX_WW_KEYS, &[])))
        }
        Some(("history", key)) => Some(("history.", key, (HISTORY_KEYS, &[]))),
        Some(("thread_store", key)) => Some(("thread_store.", key, (THREAD_STORE_KEYS, &[]))),
        Some(_) => None,
    }
}

/// Warn about the keys of one config file that nothing reads, with their `file:line`.
pub(crate) fn warn_unknown_in_file(
    table: &toml::Table,
    text: &str,
    origin: &str,
    warnings: &mut Vec<String>,
) {
    let Some(mut unknown) = crate::schema::unknown_keys(text) else {
        // A value of the wrong type stops the schema; the error about it comes later, and
        // the top-level keys are still checked here.
        warn_unknown(
            table,
            (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            "",
            origin,
            Some(text),
            warnings,
        );
        return;
    };
    unknown.sort();
    for (path, line) in unknown {
        if let Some((prefix, key, known)) = known_keys_for(&path) {
            warn_key(key, line, known, prefix, origin, warnings);
        }
    }
}

/// An ignored `[mcp_servers]` key's warning, prefixed with the `file:line` where the key is
/// written (the first config file, project then user, that has it).
pub(crate) fn locate_mcp_key(key: &IgnoredKey, files: &[&Path]) -> String {
    let mut parts = vec!["mcp_servers", key.server.as_str()];
    parts.extend(key.path.iter().map(String::as_str));
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if let Some(line) = crate::schema::line_of_key(&text, &parts) {
            return format!("{}:{line}: {}", file.display(), key.message);
        }
    }
    key.message.clone()
}

/// Check `-c` keys up front: a typo on the command line is an error, not a warning.
pub(crate) fn validate_cli_key(key: &str) -> Result<(), ConfigError> {
    let mut parts = key.split('.');
    let first = parts.next().unwrap_or_default();
    let unknown = |table: &str, sub: &str, suggestion: Option<&str>| {
        let hint = match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => "see docs/configuration.md for the known keys".to_string(),
        };
        ConfigError::Override {
            raw: key.to_string(),
            message: format!("unknown config key `{table}{sub}`; {hint}"),
        }
    };
    match classify(first, TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS) {
        KeyKind::Unknown { suggestion } => return Err(unknown("", first, suggestion)),
        KeyKind::CodexOnly => {
            tracing::debug!("-c {first}: a Codex setting Open Interpreter does not use; ignored");
            return Ok(());
        }
        KeyKind::Honoured => {}
    }
    let sub_keys: &[&'static str] = match first {
        "sandbox_workspace_write" => SANDBOX_WW_KEYS,
        "history" => HISTORY_KEYS,
        "thread_store" => THREAD_STORE_KEYS,
        _ => return Ok(()),
    };
    if let Some(sub) = parts.next()
        && let KeyKind::Unknown { suggestion } = classify(sub, sub_keys, &[])
    {
        return Err(unknown(&format!("{first}."), sub, suggestion));
    }
    Ok(())
}
