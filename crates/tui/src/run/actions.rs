//! What an [`AppAction`] does: ops and thread switches through the engine, store and file
//! I/O, and what needs the terminal or the loop's own tasks (Ctrl+Z, the editor, `!cmd`,
//! the clipboard, the `@` list, the MCP catalog).

use super::terminal::{enter_terminal_modes, restore_terminal, stop_like_a_job};
use super::{Current, FILE_LIST_REFRESH, Runner, daily, forget_if_empty, forward, is_empty, stop};
use crate::app::App;
use crate::app::{AppAction, McpServerRow, with_choices};
use crate::cells::HistoryCell;
use oi_config::Config;
use oi_core::{NewThread, Thread, ThreadManager};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, Op};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

impl Runner {
    /// Carries out the actions of one wake-up; true when one of them ends the UI.
    pub(super) async fn perform(&mut self, actions: Vec<AppAction>) -> bool {
        let mut quit = false;
        for action in actions {
            match action {
                AppAction::Quit => quit = true,
                AppAction::Suspend => quit |= self.suspend(),
                // Every frame repaints the live area whole.
                AppAction::Redraw => self.dirty = true,
                AppAction::ClearScreen => quit |= self.clear_screen(),
                AppAction::EditDraft(draft) => quit |= self.edit_draft(draft).await,
                AppAction::RunShell(command) => self.run_shell(command),
                AppAction::CancelShell => {
                    if let Some(cancel) = &self.shell_cancel {
                        cancel.cancel();
                    }
                }
                AppAction::Copy(text) => self.copy(&text),
                AppAction::RefreshMcpCatalog => self.refresh_mcp_catalog(),
                AppAction::SearchFiles(query) => self.search_files(query),
                other => {
                    let (app, current) = (&mut self.app, &mut self.current);
                    handle_action(other, app, &self.manager, &self.config, current, &self.tx).await;
                }
            }
        }
        quit
    }

    /// Ctrl+Z: gives the shell a clean line and its own terminal modes; on `fg`, takes the
    /// terminal again and starts the live area at the bottom.
    fn suspend(&mut self) -> bool {
        let _ = self.screens.live.erase();
        self.screens.transcript = None;
        restore_terminal();
        stop_like_a_job();
        self.dirty = true;
        let resumed = enter_terminal_modes();
        self.screens.live.restart(0);
        self.failed_if(resumed, "cannot take the terminal back")
    }

    /// Records why the UI has to end, if `result` failed; true then.
    fn failed_if(&mut self, result: std::io::Result<()>, what: &str) -> bool {
        match result {
            Ok(()) => false,
            Err(e) => {
                self.failure = Some(format!("{what}: {e}"));
                true
            }
        }
    }

    /// `/clear`: the screen and the scrollback go (as `clear` does), the live area starts
    /// again at the bottom.
    fn clear_screen(&mut self) -> bool {
        let mut out = std::io::stdout();
        self.dirty = true;
        let cleared = write!(out, "\x1b[H\x1b[2J\x1b[3J").and_then(|()| out.flush());
        self.screens.live.restart(0);
        self.failed_if(cleared, "cannot clear the screen")
    }

    /// Ctrl+G: the editor gets the terminal; the live area, the input and the terminal
    /// modes are given up until it exits.
    async fn edit_draft(&mut self, draft: String) -> bool {
        let _ = self.screens.live.erase();
        self.screens.transcript = None;
        self.sources.input.pause().await;
        restore_terminal();
        let edited = tokio::task::spawn_blocking(move || crate::editor::edit(&draft))
            .await
            .unwrap_or_else(|e| Err(e.into()));
        let resumed = enter_terminal_modes();
        self.screens.live.restart(0);
        self.sources.input.resume();
        let ended = self.failed_if(resumed, "cannot take the terminal back");
        match edited {
            Ok(text) => self.app.composer.set_text(&text),
            Err(e) => self.app.push_cell(HistoryCell::Error {
                message: e.to_string(),
            }),
        }
        self.dirty = true;
        ended
    }

    /// `!cmd`: runs in the background, one at a time.
    fn run_shell(&mut self, command: String) {
        if self.shell_cancel.is_some() {
            self.app.push_cell(HistoryCell::Error {
                message: "a `!` command is still running; wait for it or press Esc".into(),
            });
            return;
        }
        self.app.shell_started(&command);
        let cancel = tokio_util::sync::CancellationToken::new();
        self.shell_cancel = Some(cancel.clone());
        let cfg = with_choices(
            &self.current.thread.config(),
            self.app.approvals_choice,
            None,
        );
        let tx = self.shell_tx.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = run_user_shell(&cfg, &command, &cancel).await;
            let _ = tx.send((command, result, started.elapsed()));
        });
    }

    /// OSC 52: the terminal (or tmux) puts the text on the clipboard, over SSH too.
    fn copy(&mut self, text: &str) {
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        let mut out = std::io::stdout();
        let written = write!(out, "\x1b]52;c;{encoded}\x07").and_then(|()| out.flush());
        self.app.push_cell(match written {
            Ok(()) => HistoryCell::Info {
                title: format!(
                    "Copied the last answer ({} characters) to the clipboard",
                    text.chars().count()
                ),
                lines: vec![
                    "through OSC 52: the terminal must allow programs to set the clipboard".into(),
                ],
            },
            Err(e) => HistoryCell::Error {
                message: format!("cannot copy: {e}"),
            },
        });
        self.dirty = true;
    }

    /// Shows the catalog known now, and asks the servers for a fresh one in the background.
    fn refresh_mcp_catalog(&mut self) {
        self.app
            .set_mcp_catalog(crate::mcp_actions::catalog(&self.current.thread));
        let (thread, tx) = (self.current.thread.clone(), self.catalog_tx.clone());
        tokio::spawn(async move {
            let _ = tx.send(crate::mcp_actions::live_catalog(&thread).await);
        });
    }

    /// The `@` list: searched in the background over the session's file index.
    fn search_files(&mut self, query: String) {
        let cwd = &self.config.cwd;
        let index = match &self.file_index {
            Some((root, index)) if root == cwd => index.clone(),
            _ => {
                let index = Arc::new(oi_file_search::FileIndex::start(vec![cwd.clone()]));
                self.file_index = Some((cwd.clone(), index.clone()));
                index
            }
        };
        let tx = self.files_tx.clone();
        let ticket = index.ticket();
        tokio::task::spawn_blocking(move || {
            // While the first walk runs, the list is refreshed with what it has found so
            // far; a newer keystroke (`None`) takes over.
            while let Some(found) = index.search_as(ticket, &query, 20) {
                let paths = found.matches.into_iter().map(|m| m.path).collect();
                if tx.send((query.clone(), paths)).is_err() || found.complete {
                    break;
                }
                index.wait_for_complete(FILE_LIST_REFRESH);
            }
        });
    }
}

/// Carries out an action through the engine, the store or the files: ops, thread switches,
/// `/diff`, `/review`, `/rename`, `/undo` and the like.
pub(super) async fn handle_action(
    action: AppAction,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match action {
        AppAction::Op(op) => {
            if let Err(e) = current.thread.submit(op).await {
                app.push_cell(HistoryCell::Error {
                    message: format!("the thread has stopped: {e}"),
                });
            }
        }
        AppAction::NewThread => {
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.start_thread(cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
        }
        AppAction::Resume(id) => {
            if id == current.id {
                return;
            }
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.resume_thread(id, cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
            if current.id == id {
                daily::load_title(app, manager, &config.home, id).await;
            }
        }
        AppAction::Fork => {
            let cfg = with_choices(config, app.approvals_choice, app.harness_choice);
            let new = manager.fork_thread(current.id, cfg).await;
            switch_to(new, app, manager, config, current, tx).await;
        }
        AppAction::OpenResumePicker => {
            match crate::actions::list_threads(manager, &config.home).await {
                Ok(rows) => app.open_resume_picker(rows),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::Export { path, replace } => daily::export(app, current, path, replace).await,
        AppAction::PickThread(which) => {
            match crate::actions::list_threads(manager, &config.home).await {
                Ok(rows) => app.open_thread_command_picker(which, rows),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::ArchiveThread(id) => {
            let change = daily::StoreChange::Archive;
            daily::change_thread(change, id, app, manager, config, current, tx).await;
        }
        AppAction::DeleteThread(id) => {
            let change = daily::StoreChange::Delete;
            daily::change_thread(change, id, app, manager, config, current, tx).await;
        }
        AppAction::SaveTuiSetting(setting) => daily::save_tui_setting(app, config, setting),
        AppAction::ShowConfig => daily::show_config(app, config, current),
        AppAction::ShowDiff
        | AppAction::ShowMcp { .. }
        | AppAction::Init
        | AppAction::Logout
        | AppAction::Review
        | AppAction::Rename(_)
        | AppAction::Undo(_)
        | AppAction::ShowSkills => command_action(action, app, manager, config, current, tx).await,
        AppAction::RunCustomPrompt { .. }
        | AppAction::RunMcpPrompt { .. }
        | AppAction::GetMcpPrompt { .. }
        | AppAction::SendWithResources { .. } => {
            prompt_action(action, app, manager, config, current, tx).await
        }
        AppAction::Quit
        | AppAction::ClearScreen
        | AppAction::Redraw
        | AppAction::Suspend
        | AppAction::SearchFiles(_)
        | AppAction::EditDraft(_)
        | AppAction::RunShell(_)
        | AppAction::CancelShell
        | AppAction::Copy(_)
        | AppAction::RefreshMcpCatalog => {}
    }
}

/// Slash commands that read or change the working tree, the store or the login: `/diff`,
/// `/mcp`, `/init`, `/logout`, `/review`, `/rename`, `/undo`, `/skills`.
async fn command_action(
    action: AppAction,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match action {
        AppAction::ShowDiff => {
            let cwd = current.thread.config().cwd;
            match crate::actions::git_diff(&cwd).await {
                Ok(diff) if diff.trim().is_empty() => app.push_cell(HistoryCell::Info {
                    title: "No changes".into(),
                    lines: vec![],
                }),
                Ok(diff) => app.show_diff(diff),
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: e.to_string(),
                }),
            }
        }
        AppAction::ShowMcp { verbose } => {
            let rows = mcp_rows(config, &current.thread);
            app.show_mcp(verbose, rows);
        }
        AppAction::Init => {
            let cwd = current.thread.config().cwd;
            if cwd.join("AGENTS.md").exists() {
                app.push_cell(HistoryCell::Info {
                    title: "AGENTS.md already exists here; /init leaves it alone".into(),
                    lines: vec![],
                });
            } else {
                let op = app.init_turn();
                Box::pin(handle_action(op, app, manager, config, current, tx)).await;
            }
        }
        AppAction::Logout => {
            let cfg = current.thread.config();
            match crate::actions::logout(&cfg) {
                Ok(msg) => app.push_cell(HistoryCell::Info {
                    title: msg,
                    lines: vec![],
                }),
                Err(e) => app.push_cell(HistoryCell::Error { message: e }),
            }
        }
        AppAction::Review => {
            let cwd = current.thread.config().cwd;
            match crate::actions::git_diff(&cwd).await {
                Ok(diff) if diff.trim().is_empty() => app.push_cell(HistoryCell::Info {
                    title: "Nothing to review: the working tree has no changes".into(),
                    lines: vec![],
                }),
                Ok(diff) => {
                    let op = app.review_turn(&diff);
                    Box::pin(handle_action(op, app, manager, config, current, tx)).await;
                }
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: e.to_string(),
                }),
            }
        }
        AppAction::Rename(name) => {
            let renamed = match manager.stored_threads(&config.home).await {
                Ok(stored) => stored
                    .set_name(&current.id, Some(name.clone()))
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if renamed.is_ok() {
                app.set_thread_name(Some(name.clone()));
            }
            app.push_cell(match renamed {
                Ok(()) => HistoryCell::Info {
                    title: format!("Thread renamed to “{name}”"),
                    lines: vec![],
                },
                Err(e) => HistoryCell::Error {
                    message: format!("cannot rename the thread: {e}"),
                },
            });
        }
        AppAction::Undo(changes) => {
            let cwd = current.thread.config().cwd;
            let result = tokio::task::spawn_blocking(move || crate::undo::revert(&changes, &cwd))
                .await
                .unwrap_or_else(|e| Err(e.into()));
            app.undo_done(result);
        }
        AppAction::ShowSkills => {
            let (rows, errors) =
                crate::extension_actions::skill_rows(current.thread.config()).await;
            app.show_skills(rows, errors);
        }
        _ => {}
    }
}

/// Sends a prompt that needs reading first: a custom prompt's file, an MCP server's prompt,
/// the resources a message mentions.
async fn prompt_action(
    action: AppAction,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match action {
        AppAction::RunCustomPrompt { name, args } => {
            let cfg = current.thread.config();
            app.set_custom_prompts(crate::extension_actions::custom_prompt_list(&cfg).await);
            let text =
                crate::extension_actions::expand_custom_prompt(&cfg, name.clone(), args).await;
            for action in app.send_custom_prompt(&name, text) {
                Box::pin(handle_action(action, app, manager, config, current, tx)).await;
            }
        }
        AppAction::RunMcpPrompt { name, args } => {
            app.set_mcp_catalog(crate::mcp_actions::live_catalog(&current.thread).await);
            match app.mcp_prompt_command(&name, &args) {
                Some(actions) => {
                    for action in actions {
                        Box::pin(handle_action(action, app, manager, config, current, tx)).await;
                    }
                }
                None => app.push_cell(HistoryCell::Error {
                    message: format!(
                        "no MCP server offers the prompt `/{name}`; `/mcp verbose` lists each server's prompts. It was not sent to the model."
                    ),
                }),
            }
        }
        AppAction::GetMcpPrompt {
            server,
            prompt,
            arguments,
        } => {
            match crate::mcp_actions::get_prompt(&current.thread, &server, &prompt, arguments).await
            {
                Ok(input) => {
                    for action in app.send_prompt(input) {
                        Box::pin(handle_action(action, app, manager, config, current, tx)).await;
                    }
                }
                Err(e) => app.push_cell(HistoryCell::Error {
                    message: format!("cannot get the prompt `{prompt}` from `{server}`: {e}"),
                }),
            }
        }
        AppAction::SendWithResources {
            text,
            mut items,
            overrides,
            mentions,
        } => match crate::mcp_actions::read_mentions(&current.thread, &mentions).await {
            Ok(read) => {
                items.extend(read);
                let op = AppAction::Op(Op::UserInput { items, overrides });
                Box::pin(handle_action(op, app, manager, config, current, tx)).await;
            }
            Err(e) => app.mentions_failed(&text, overrides, e),
        },
        _ => {}
    }
}

fn mcp_rows(config: &Config, thread: &Thread) -> Vec<McpServerRow> {
    let tools = thread.mcp_tools();
    let status = thread.mcp_status();
    let field = |v: &serde_json::Value, keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(|x| x.as_str()))
            .unwrap_or_default()
            .to_string()
    };
    config
        .mcp_servers
        .iter()
        .map(|(name, cfg)| McpServerRow {
            name: name.clone(),
            transport: match &cfg.transport {
                oi_config::mcp::McpServerTransportConfig::Stdio { command, .. } => {
                    format!("stdio `{command}`")
                }
                oi_config::mcp::McpServerTransportConfig::StreamableHttp { url, .. } => {
                    format!("http {url}")
                }
            },
            enabled: cfg.enabled,
            error: thread.mcp_server_error(name),
            tools: tools
                .iter()
                .filter(|t| t.server == *name)
                .map(|t| {
                    (
                        t.tool.clone(),
                        t.description.clone(),
                        format!("{:?}", t.approval_mode).to_lowercase(),
                    )
                })
                .collect(),
            withheld: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| st.withheld_tools.clone())
                .collect(),
            protocol: status
                .iter()
                .find(|st| st.name == *name)
                .and_then(|st| st.protocol.as_ref())
                .map(|p| p.version.clone()),
            resources: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| {
                    st.resources
                        .iter()
                        .map(|r| field(r, &["uri"]))
                        .chain(
                            st.resource_templates
                                .iter()
                                .map(|r| field(r, &["uriTemplate"])),
                        )
                        .collect::<Vec<_>>()
                })
                .collect(),
            prompts: status
                .iter()
                .filter(|st| st.name == *name)
                .flat_map(|st| {
                    st.prompts
                        .iter()
                        .map(|p| field(p, &["name"]))
                        .collect::<Vec<_>>()
                })
                .collect(),
        })
        .collect()
}

/// How a `!cmd` ended: the command, its output or why it did not run, how long it took.
pub(super) type ShellResult = (
    String,
    Result<oi_core::CommandOutput, oi_core::CommandError>,
    Duration,
);

/// Runs a `!cmd` the way the model's commands run: `sh -c` in the thread's directory,
/// under the session's sandbox policy, through the engine's command path.
async fn run_user_shell(
    config: &Config,
    command: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<oi_core::CommandOutput, oi_core::CommandError> {
    let req = oi_core::CommandRequest {
        argv: vec!["sh".into(), "-c".into(), command.to_string()],
        cwd: config.cwd.clone(),
        timeout: None,
        sandbox_policy: config.sandbox_policy.clone(),
        env: Default::default(),
        output_cap: Some(1024 * 1024),
    };
    oi_core::run_command(config, req, cancel).await
}

async fn switch_to(
    new: Result<NewThread, oi_core::CoreError>,
    app: &mut App,
    manager: &ThreadManager,
    config: &Config,
    current: &mut Current,
    tx: &mpsc::UnboundedSender<(ThreadId, Event)>,
) {
    match new {
        Ok(new) => {
            current.forwarder.abort();
            if is_empty(&current.thread) {
                // Nothing to keep: stop it for good, then drop it from the store.
                stop(&current.thread).await;
                forget_if_empty(manager, config, &current.thread).await;
            } else {
                let _ = current.thread.submit(Op::Shutdown).await;
            }
            app.on_session_configured(&new.session_configured);
            app.replay_history(&new.thread.history());
            *current = Current {
                id: new.thread_id,
                forwarder: forward(new.thread_id, new.events, tx.clone()),
                thread: new.thread,
            };
        }
        Err(e) => app.push_cell(HistoryCell::Error {
            message: e.to_string(),
        }),
    }
}
