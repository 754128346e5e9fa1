//! The runner's side of `/clear`, `/export`, `/archive`, `/delete`, `/theme`,
//! `/statusline`, `/config` and `/title` (see `app/commands_daily.rs`): the store, the
//! files and the config they touch.

use super::{Current, forward, stop};
use crate::app::{App, TuiSetting, with_choices};
use crate::cells::HistoryCell;
use oi_config::{Config, Origin};
use oi_core::ThreadManager;
use oi_protocol::ThreadId;
use oi_protocol::protocol::Event;
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;

/// Reads the thread's title from the store into the app (a resumed thread's name).
pub(super) async fn load_title(app: &mut App, manager: &ThreadManager, home: &Path, id: ThreadId) {
    if let Ok(Some(summary)) = manager.stored_thread(home, &id).await {
        app.set_thread_name(summary.name);
    }
}

fn info(app: &mut App, title: String, lines: Vec<String>) {
    app.push_cell(HistoryCell::Info { title, lines });
}

fn error(app: &mut App, message: String) {
    app.push_cell(HistoryCell::Error { message });
}

/// `/export`: the thread as Markdown at `path` (relative to the thread's folder; by default
/// `thread-<id>.md` there). An existing file is replaced only when `replace` says the user
/// agreed; otherwise the app asks.
pub(super) async fn export(app: &mut App, current: &Current, path: Option<PathBuf>, replace: bool) {
    let cwd = current.thread.config().cwd;
    let path = match path {
        Some(p) => expand_home(&p),
        None => PathBuf::from(format!("thread-{}.md", current.id)),
    };
    let path = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    if path.is_dir() {
        error(
            app,
            format!("{} is a folder; give /export a file name", path.display()),
        );
        return;
    }
    if !replace && std::fs::symlink_metadata(&path).is_ok() {
        app.ask_export_replace(path);
        return;
    }
    let now = chrono::Local::now().format("%Y-%m-%d %H:%M").to_string();
    let markdown = app.export_markdown(&current.thread.history(), &now);
    let target = path.clone();
    let written = tokio::task::spawn_blocking(move || write_export(&target, &markdown, replace))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    match written {
        Ok(bytes) => info(
            app,
            format!("Exported this thread to {}", path.display()),
            vec![format!(
                "{bytes} bytes of Markdown{}",
                if replace {
                    "; the file that was there was replaced"
                } else {
                    ""
                }
            )],
        ),
        Err(e) => error(app, format!("cannot export to {}: {e}", path.display())),
    }
}

/// Writes the export; a file that appeared meanwhile is not replaced unless `replace`.
fn write_export(path: &Path, markdown: &str, replace: bool) -> std::io::Result<usize> {
    use std::io::Write;
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
        && !dir.is_dir()
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("the folder {} does not exist", dir.display()),
        ));
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if replace {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let mut file = opts.open(path)?;
    file.write_all(markdown.as_bytes())?;
    Ok(markdown.len())
}

fn expand_home(p: &Path) -> PathBuf {
    if let Ok(rest) = p.strip_prefix("~")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    p.to_path_buf()
}

/// What `/archive` and `/delete` do to a thread.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum StoreChange {
    Archive,
    Delete,
}

/// Archives or deletes `id` in the store. The current thread is first replaced by a new
/// one and stopped (so nothing it still writes lands after the change).
pub(super) async fn change_thread(
    change: StoreChange,
    id: ThreadId,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    let verb = if change == StoreChange::Archive {
        "archive"
    } else {
        "delete"
    };
    if id == current.id && super::is_empty(&current.thread) {
        // Not worth keeping anyway: leaving it removes it from the store.
        return info(
            app,
            format!("This thread has no messages yet; there is nothing to {verb}"),
            vec![],
        );
    }
    let stored = match manager.stored_threads(&config.home).await {
        Ok(s) => s,
        Err(e) => return error(app, format!("cannot open the thread store: {e}")),
    };
    let label = match stored.get(&id).await {
        Ok(Some(s)) => s
            .name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| s.preview.lines().next().unwrap_or_default().to_string()),
        Ok(None) => return error(app, format!("there is no stored thread {id}")),
        Err(e) => return error(app, format!("cannot read thread {id}: {e}")),
    };
    if id == current.id {
        if current.thread.active_turn_id().is_some() {
            return error(
                app,
                format!("a turn is running; press Esc to interrupt it, then /{verb}"),
            );
        }
        let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
        let new = match manager.start_thread(cfg).await {
            Ok(new) => new,
            Err(e) => return error(app, format!("cannot start a new thread: {e}")),
        };
        let old = std::mem::replace(
            current,
            Current {
                id: new.thread_id,
                forwarder: forward(new.thread_id, new.events, tx.clone()),
                thread: new.thread,
            },
        );
        old.forwarder.abort();
        stop(&old.thread).await;
        manager.remove_thread(&old.id);
        app.on_session_configured(&new.session_configured);
    }
    let done = match change {
        StoreChange::Archive => stored.set_archived(&id, true).await,
        StoreChange::Delete => stored.delete(&id).await,
    };
    match (done, change) {
        (Ok(()), StoreChange::Archive) => info(
            app,
            format!("Archived “{label}”"),
            vec![format!(
                "/resume no longer lists it; `interpreter sessions list --archived` does, and `interpreter resume {id}` opens it"
            )],
        ),
        (Ok(()), StoreChange::Delete) => info(app, format!("Deleted “{label}”"), vec![]),
        (Err(e), _) => error(app, format!("cannot {verb} thread {id}: {e}")),
    }
}

/// Keeps a `[tui]` setting in the user's config.toml.
pub(super) fn save_tui_setting(app: &mut App, config: &Config, setting: TuiSetting) {
    let path = &config.user_config_path;
    if let Err(e) = oi_config::tui_settings::set_tui_setting(path, setting.key, setting.value) {
        error(
            app,
            format!(
                "the change holds for this session but was not saved in {}: {e}",
                path.display()
            ),
        );
    }
}

/// One `/config` row: key, value, where it came from.
type Row = (String, String, String);

/// `/config`: each effective setting, its value and where it came from.
pub(super) fn show_config(app: &mut App, config: &Config, current: &Current) {
    let mut rows = session_rows(app, config, current);
    rows.extend(tui_rows(app, config));
    let width = rows.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = rows
        .into_iter()
        .map(|(k, v, o)| format!("{k:<width$}  {v}  · {o}"))
        .collect();
    lines.push(String::new());
    lines.push(format!(
        "user config     {}",
        config.user_config_path.display()
    ));
    lines.push(
        match (
            &config.project_config_path,
            &config.untrusted_project_config,
        ) {
            (Some(p), _) => format!("project config  {}", p.display()),
            (None, Some(p)) => format!(
                "project config  {} (skipped: folder not trusted)",
                p.display()
            ),
            (None, None) => "project config  none".into(),
        },
    );
    app.show_config(lines);
}

/// The engine's settings as this session runs them.
fn session_rows(app: &App, config: &Config, current: &Current) -> Vec<Row> {
    let live = current.thread.config();
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |key: &str, value: String, origin: String| {
        rows.push((key.to_string(), value, origin));
    };
    let origin = |key: &str| origin_text(config, key);
    let opt = |v: Option<String>| v.unwrap_or_else(|| "unset".into());
    // What `/model`, `/approvals` and `/harness` changed holds for the session.
    let (model, model_origin) = if app.status.model != config.model {
        (
            app.status.model.clone(),
            "this session (/model)".to_string(),
        )
    } else {
        (config.model.clone(), origin("model"))
    };
    row("model", model, model_origin);
    row(
        "model_provider",
        config.model_provider_id.clone(),
        origin("model_provider"),
    );
    row(
        "model_reasoning_effort",
        opt(app.status.effort.map(|e| e.as_str().to_string())),
        origin("model_reasoning_effort"),
    );
    let session = "this session (/approvals)".to_string();
    let (approval, sandbox, from_session) = match app.approvals_choice {
        Some((sandbox, approval)) => (approval.to_string(), sandbox.to_string(), true),
        None => (
            live.approval_policy.to_string(),
            live.sandbox_policy.mode().to_string(),
            false,
        ),
    };
    row(
        "approval_policy",
        approval,
        if from_session {
            session.clone()
        } else {
            origin("approval_policy")
        },
    );
    row(
        "sandbox_mode",
        sandbox,
        if from_session {
            session
        } else {
            origin("sandbox_mode")
        },
    );
    row(
        "harness",
        live.harness.as_str().to_string(),
        if app.harness_choice.is_some() {
            "this session (/harness)".into()
        } else {
            origin("harness")
        },
    );
    row("profile", opt(config.profile.clone()), origin("profile"));
    row(
        "model_context_window",
        opt(config.model_context_window.map(|w| w.to_string())),
        origin("model_context_window"),
    );
    row(
        "tool_call_format",
        format!("{:?}", config.tool_call_format).to_lowercase(),
        origin("tool_call_format"),
    );
    row(
        "max_turn_steps",
        config.max_turn_steps.to_string(),
        origin("max_turn_steps"),
    );
    row(
        "shell_timeout_ms",
        config.shell_timeout.as_millis().to_string(),
        origin("shell_timeout_ms"),
    );
    row(
        "approval_timeout_sec",
        config.approval_timeout.as_secs().to_string(),
        origin("approval_timeout_sec"),
    );
    row(
        "history.persistence",
        format!("{:?}", config.history_persistence).to_lowercase(),
        origin("history.persistence"),
    );
    row(
        "mcp_servers",
        if config.mcp_servers.is_empty() {
            "none".into()
        } else {
            config
                .mcp_servers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        },
        origin("mcp_servers"),
    );
    rows
}

/// The TUI's own settings: what is in use now (`/theme`, `/statusline` save them).
fn tui_rows(app: &App, config: &Config) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |key: &str, value: String, origin: String| {
        rows.push((key.to_string(), value, origin));
    };
    let origin = |key: &str| origin_text(config, key);
    let tui_origin = |key: &str, changed: bool| {
        if changed {
            format!(
                "this session, saved in {}",
                config.user_config_path.display()
            )
        } else {
            origin(key)
        }
    };
    let theme = app.theme.name.as_str().to_string();
    let theme_changed = config.tui_theme.as_deref().unwrap_or("dark") != theme;
    row("tui.theme", theme, tui_origin("tui.theme", theme_changed));
    let items: Vec<&str> = app.status_items.iter().map(|i| i.id()).collect();
    let configured = config
        .tui_status_line
        .clone()
        .map(|ids| crate::status_items::parse_items(&ids).0)
        .unwrap_or_else(|| crate::status_items::DEFAULT_ITEMS.to_vec());
    row(
        "tui.status_line",
        items.join(", "),
        tui_origin("tui.status_line", configured != app.status_items),
    );
    rows
}

fn origin_text(config: &Config, key: &str) -> String {
    match config.origin_of(key) {
        Origin::User(_) => "user config".into(),
        Origin::Project(_) => "project config".into(),
        other => other.to_string(),
    }
}
