//! Keys nothing reads: warnings with `file:line` and the closest known key for the files,
//! errors for `-c` (a typo on the command line is caught at once).

use crate::ConfigError;
use crate::key_path::dotted;
use crate::keys::{
    CODEX_ONLY_PROFILE_KEYS, CODEX_ONLY_SHELL_ENV_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS, HISTORY_KEYS,
    KeyKind, PROFILE_KEYS, PROJECT_KEYS, PROVIDER_KEYS, SANDBOX_WW_KEYS, SHELL_ENV_KEYS,
    THREAD_STORE_KEYS, TOP_LEVEL_KEYS, classify,
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

/// The known keys of the table the key at `parts` lies in, with the dotted prefix of that
/// table (`profiles.fast.`) and the key itself; `None` inside `[mcp_servers]` (checked by
/// its own parser) and in free-form tables (`set`, `http_headers`...).
pub(crate) fn known_keys_for(parts: &[String]) -> Option<(String, &str, KnownKeys)> {
    let names: Vec<&str> = parts.iter().map(String::as_str).collect();
    let (table, known): (&[&str], KnownKeys) = match names.as_slice() {
        [_] => (&[], (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS)),
        ["sandbox_workspace_write", _] => (&names[..1], (SANDBOX_WW_KEYS, &[])),
        ["history", _] => (&names[..1], (HISTORY_KEYS, &[])),
        ["tui", _] => (
            &names[..1],
            (crate::keys::TUI_KEYS, crate::keys::CODEX_ONLY_TUI_KEYS),
        ),
        ["skills", _] => (&names[..1], (crate::keys::SKILLS_KEYS, &[])),
        ["skills", "config", _, _] => (&names[..3], (crate::keys::SKILL_CONFIG_KEYS, &[])),
        ["thread_store", _] => (&names[..1], (THREAD_STORE_KEYS, &[])),
        ["shell_environment_policy", _] => {
            (&names[..1], (SHELL_ENV_KEYS, CODEX_ONLY_SHELL_ENV_KEYS))
        }
        ["model_providers", _, _] => (&names[..2], (PROVIDER_KEYS, &[])),
        ["projects", _, _] => (&names[..2], (PROJECT_KEYS, &[])),
        ["profiles", _, _] => (&names[..2], (PROFILE_KEYS, CODEX_ONLY_PROFILE_KEYS)),
        ["profiles", _, "sandbox_workspace_write", _] => (&names[..3], (SANDBOX_WW_KEYS, &[])),
        _ => return None,
    };
    let key = names.last()?;
    let prefix = if table.is_empty() {
        String::new()
    } else {
        format!("{}.", dotted(table))
    };
    Some((prefix, key, known))
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
    for (parts, line) in unknown {
        if let Some((prefix, key, known)) = known_keys_for(&parts) {
            warn_key(key, line, known, &prefix, origin, warnings);
        }
    }
}

/// An ignored `[mcp_servers]` key's warning, prefixed with the `file:line` where the key is
/// written (the first config file, project then user, that has it).
pub(crate) fn locate_mcp_key(key: &IgnoredKey, files: &[&Path]) -> String {
    let mut parts = vec!["mcp_servers", key.server.as_str()];
    parts.extend(key.path.iter().map(String::as_str));
    for file in files {
        let Ok(text) =
            crate::project_file::read_text_capped(file, crate::project_file::CONFIG_FILE_MAX_BYTES)
        else {
            continue;
        };
        if let Some(line) = crate::schema::line_of_key(&text, &parts) {
            return format!("{}:{line}: {}", file.display(), key.message);
        }
    }
    key.message.clone()
}

/// Check `-c` keys up front: a typo on the command line is an error, not a warning. Also
/// what a server uses to drop the keys of a client's per-request config it does not know.
pub fn validate_cli_key(key: &str) -> Result<(), ConfigError> {
    let first = key.split('.').next().unwrap_or_default();
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
    // `a.b.c`: the key within its table, checked like a file's keys.
    let parts: Vec<String> = key.split('.').map(str::to_string).collect();
    if parts.len() > 1
        && let Some((prefix, sub, (honoured, codex_only))) = known_keys_for(&parts)
    {
        match classify(sub, honoured, codex_only) {
            KeyKind::Unknown { suggestion } => {
                let suggestion = suggestion.map(|s| format!("{prefix}{s}"));
                return Err(unknown(&prefix, sub, suggestion.as_deref()));
            }
            KeyKind::CodexOnly => {
                tracing::debug!("-c {key}: a Codex setting Open Interpreter does not use; ignored");
            }
            KeyKind::Honoured => {}
        }
    }
    Ok(())
}
