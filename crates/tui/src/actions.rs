//! The I/O behind some slash commands (`/resume`, `/diff`, `/logout`), kept out of the app
//! state so that stays pure.

use oi_config::Config;
use oi_core::{GitError, ListQuery, ThreadManager, WorkingTreeBase, working_tree_diff};
use oi_protocol::ThreadId;
use std::path::Path;

/// Stored threads for the `/resume` picker: (id, title, detail), newest first.
pub(crate) async fn list_threads(
    manager: &ThreadManager,
    home: &Path,
) -> Result<Vec<(ThreadId, String, String)>, String> {
    let stored = manager
        .stored_threads(home)
        .await
        .map_err(|e| format!("cannot open the thread store: {e}"))?;
    let page = stored
        .list(&ListQuery {
            limit: ListQuery::MAX_LIMIT,
            ..ListQuery::default()
        })
        .await
        .map_err(|e| format!("cannot list threads: {e}"))?;
    Ok(page
        .data
        .into_iter()
        // A thread nobody wrote in (left by an older version, or started by another front
        // end) has nothing to resume.
        .filter(|s| {
            !s.preview.trim().is_empty() || s.name.as_ref().is_some_and(|n| !n.trim().is_empty())
        })
        .map(|s| {
            let title = s
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| {
                    let p = s.preview.lines().next().unwrap_or_default().to_string();
                    if p.is_empty() {
                        "(no messages)".into()
                    } else {
                        p
                    }
                });
            let when = chrono::DateTime::from_timestamp(s.updated_at, 0)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            (
                s.id,
                title,
                format!("{when} · {} · {}", s.model, s.cwd.display()),
            )
        })
        .collect())
}

/// `git diff HEAD` plus every untracked file as an addition (against the index in a
/// repository without commits).
pub(crate) async fn git_diff(cwd: &Path) -> Result<String, GitError> {
    working_tree_diff(cwd, WorkingTreeBase::Head)
        .await
        .map(|d| d.diff)
}

/// `/logout`: forget the API key stored for the current provider.
pub(crate) fn logout(config: &Config) -> Result<String, String> {
    let Some(var) = config.model_provider.env_key.clone() else {
        return Ok(format!(
            "Provider `{}` uses no API key; nothing to log out of",
            config.model_provider_id
        ));
    };
    let removed = oi_config::credentials::set_api_key(&config.home, &var, None)
        .map_err(|e| format!("cannot update the credentials file: {e}"))?;
    let mut msg = if removed {
        format!("Removed the stored key for {var}")
    } else {
        format!("No key for {var} was stored")
    };
    if std::env::var_os(&var).is_some() {
        msg.push_str(&format!("; {var} is still set in the environment"));
    }
    Ok(msg)
}
