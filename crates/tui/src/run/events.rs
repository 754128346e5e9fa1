//! What wakes the loop: the terminal's input, the live thread's events, the results of
//! background work (the provider's model list, a `!cmd`, the `@` list, the MCP catalog),
//! termination signals, and the frame clock. Each is applied to the [`App`](crate::app::App)
//! here; what the app asks for in return goes to `actions`.

use super::actions::ShellResult;
use super::{MODELS_TIMEOUT, Runner, catalog_entries, sleep_until};
use crate::app::{AppAction, McpCatalog};
use crate::input::Input;
use crossterm::event::Event as TermEvent;
use oi_config::Config;
use oi_process::{TerminationSignal, TerminationSignals};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, Op};
use std::time::Instant;
use tokio::sync::mpsc::{self, UnboundedReceiver};

/// `/model` choices: (model id, reasoning efforts).
type Models = Vec<(String, Vec<String>)>;

/// Everything that can wake the loop.
pub(super) struct Sources {
    /// Only this reads the terminal (see `crate::input`).
    pub(super) input: Input,
    engine: UnboundedReceiver<(ThreadId, Event)>,
    models: UnboundedReceiver<Models>,
    shell: UnboundedReceiver<ShellResult>,
    files: UnboundedReceiver<(String, Vec<String>)>,
    catalog: UnboundedReceiver<McpCatalog>,
    signals: TerminationSignals,
}

/// One reason the loop woke. Held once per wake-up and moved straight into `on_wake`, so
/// an engine event is not boxed for it.
#[allow(clippy::large_enum_variant)]
pub(super) enum Wake {
    Terminal(Option<std::io::Result<TermEvent>>),
    Engine(ThreadId, Event),
    Models(Models),
    ShellDone(ShellResult),
    Files(String, Vec<String>),
    Catalog(McpCatalog),
    /// A frame is due.
    Frame,
    Signal(TerminationSignal),
}

impl Sources {
    pub(super) fn new(
        input: Input,
        engine: UnboundedReceiver<(ThreadId, Event)>,
        models: UnboundedReceiver<Models>,
        shell: UnboundedReceiver<ShellResult>,
        files: UnboundedReceiver<(String, Vec<String>)>,
        catalog: UnboundedReceiver<McpCatalog>,
        signals: TerminationSignals,
    ) -> Self {
        Self {
            input,
            engine,
            models,
            shell,
            files,
            catalog,
            signals,
        }
    }

    /// Waits for the next wake-up; a frame only when one is `due`.
    pub(super) async fn next(&mut self, due: Option<Instant>) -> Wake {
        tokio::select! {
            ev = self.input.next() => Wake::Terminal(ev),
            Some((tid, ev)) = self.engine.recv() => Wake::Engine(tid, ev),
            Some(models) = self.models.recv() => Wake::Models(models),
            Some(done) = self.shell.recv() => Wake::ShellDone(done),
            Some((query, matches)) = self.files.recv() => Wake::Files(query, matches),
            Some(catalog) = self.catalog.recv() => Wake::Catalog(catalog),
            _ = sleep_until(due), if due.is_some() => Wake::Frame,
            sig = self.signals.recv() => Wake::Signal(sig),
        }
    }
}

/// `/model` lists what the provider serves; asked once, in the background.
pub(super) fn list_models(config: &Config) -> UnboundedReceiver<Models> {
    let (models_tx, models_rx) = mpsc::unbounded_channel();
    let provider = config.model_provider.clone();
    let configured = config.model.clone();
    let home = config.home.clone();
    tokio::spawn(async move {
        let listed = oi_core::catalog::fetch_models(provider, &home, MODELS_TIMEOUT)
            .await
            .unwrap_or_default();
        let mut ids = vec![configured];
        ids.extend(
            listed
                .into_iter()
                .map(|m| m.id)
                .filter(|id| !oi_core::catalog::is_hidden(id)),
        );
        ids.dedup();
        let _ = models_tx.send(catalog_entries(ids));
    });
    models_rx
}

impl Runner {
    /// Applies a wake-up to the app; returns the actions it asked for, or `None` when a
    /// frame has to wait for the live area to be found again.
    pub(super) async fn on_wake(&mut self, wake: Wake) -> Option<Vec<AppAction>> {
        let mut actions = Vec::new();
        match wake {
            Wake::Terminal(ev) => match ev {
                Some(Ok(TermEvent::Key(k))) => {
                    actions = self.app.on_key(k);
                    self.dirty = true;
                }
                Some(Ok(TermEvent::Paste(s))) => {
                    actions = self.app.on_paste(&s);
                    self.dirty = true;
                }
                // The next frame lays the live area out for the new size.
                Some(Ok(TermEvent::Resize(_, _))) => self.dirty = true,
                Some(Ok(_)) => {}
                // The terminal went away: leave as if the user quit.
                Some(Err(_)) | None => actions.push(AppAction::Quit),
            },
            Wake::Engine(tid, ev) => {
                if tid == self.current.id {
                    self.app.on_event(&ev.msg);
                    // Coalesce: apply everything already queued before the next frame.
                    while let Ok((tid, ev)) = self.sources.engine.try_recv() {
                        if tid == self.current.id {
                            self.app.on_event(&ev.msg);
                        }
                    }
                    self.dirty = true;
                }
            }
            Wake::Models(models) => self.app.set_models(models),
            Wake::ShellDone((command, result, took)) => {
                self.shell_cancel = None;
                self.app.shell_done(&command, result, took);
                self.dirty = true;
            }
            Wake::Files(query, matches) => {
                self.app.set_file_matches(&query, matches);
                self.dirty = true;
            }
            Wake::Catalog(catalog) => {
                self.app.set_mcp_catalog(catalog);
                self.dirty = true;
            }
            Wake::Frame => self.frame(&mut actions).await,
            Wake::Signal(sig) => {
                self.stopped_by = Some(sig);
                // The session ends: an MCP task stays running for `resume` to fetch.
                self.current.thread.leave_mcp_tasks_running();
                let _ = self.current.thread.submit(Op::Interrupt).await;
                actions.push(AppAction::Quit);
            }
        }
        Some(actions)
    }

    /// Draws a due frame.
    async fn frame(&mut self, actions: &mut Vec<AppAction>) {
        // After a resize, the live area begins where the terminal kept the cursor (frames
        // are drawn from it, wherever it is); asking where that is tells how much room is
        // above the area (see `draw_committing`).
        let screens = &mut self.screens;
        if screens.transcript.is_none() {
            let size = screens.live.screen_size().ok();
            if size.is_some() && size != self.drawn_for {
                if self.drawn_for.is_some()
                    && let Some(pos) = self.sources.input.cursor_position().await
                {
                    self.screens.live.cursor_moved_to(pos.y);
                }
                self.drawn_for = size;
            }
        }
        let theme = self.app.theme;
        match self.screens.frame(&mut self.app, &theme) {
            Ok(drawn) => self.dirty = !drawn,
            Err(e) => {
                self.failure = Some(e.to_string());
                actions.push(AppAction::Quit);
                self.dirty = false;
            }
        }
        self.last_draw = Instant::now();
    }
}
