//! State shared by a thread's actor and its running turn.

use crate::context_window::TokenEstimator;
use crate::events::{EventBus, EventStream};
use crate::project_doc::{ProjectDoc, read_project_doc};
use crate::recorder::{RecordError, Recorder, SaveState, Unsaved, is_persisted};
use crate::turn_context::TurnContext;
use crate::window::{self, WindowKnowledge};
use oi_config::Config;
use oi_mcp_client::McpConnectionManager;
use oi_model_client::ModelClient;
use oi_protocol::ThreadId;
use oi_protocol::config_types::ToolCallFormat;
use oi_protocol::models::{ResponseItem, TokenUsage};
use oi_protocol::protocol::TurnOverrides;
use oi_protocol::protocol::{ElicitationResponse, Event, EventMsg, ReviewDecision, WarningEvent};
use oi_thread_store::CompactedItem;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub(crate) struct ActiveTurn {
    pub id: String,
    pub cancel: CancellationToken,
    /// Input that arrived while the turn was running (steering); the model sees it at its
    /// next request.
    pub pending_input: Vec<ResponseItem>,
    /// Approvals the turn's calls need park the turn instead of being waited for
    /// (`TurnOptions::park_approvals`).
    pub park_approvals: bool,
}

pub(crate) struct SessionState {
    /// The config the next turn starts with: cwd, policies and model as per-turn overrides
    /// left them. Shared (a turn's context holds the same `Arc`); an override copies it
    /// before changing it, so a running turn never sees half of one.
    pub config: Arc<Config>,
    pub history: Vec<ResponseItem>,
    pub active_turn: Option<ActiveTurn>,
    /// Exact argv the user approved "for this session", with whether the approval was to
    /// run outside the sandbox.
    pub approved_commands: HashSet<(Vec<String>, bool)>,
    pub pending_approvals: HashMap<String, oneshot::Sender<ReviewDecision>>,
    pub pending_elicitations: HashMap<(String, String), oneshot::Sender<ElicitationResponse>>,
    pub total_usage: TokenUsage,
    /// What the server said or did about the context window (see `window`).
    pub window: WindowKnowledge,
    /// Turns request bytes into tokens, corrected by the server's usage reports.
    pub estimator: TokenEstimator,
    /// MCP tools whose schemas `tool_search` loaded (qualified names).
    pub loaded_tools: HashSet<String>,
    /// The AGENTS.md of the current turn, read once when it started.
    pub project_doc: Option<ProjectDoc>,
    /// The skills of the current turn, found when it started.
    pub skills: Arc<crate::skills::SkillsFound>,
    /// `tool_call_format = "auto"` switched this session to text tool calls (the model kept
    /// writing calls into its answers).
    pub text_tools_fallback: bool,
    /// The server sent tool calls it parsed itself in this session: its tool-call parser is
    /// on, so calls later found in the text are the model's shape, not the parser's fault.
    pub server_parses_calls: bool,
    /// Context the model gets with the next turn's input, after it (a `!command` the user
    /// ran between turns: `Thread::add_context_for_next_turn`).
    pub next_turn_context: Vec<ResponseItem>,
    /// Settings for the next turn that starts, under that turn's own overrides
    /// (`Thread::update_next_turn_settings`: v2 `thread/settings/update`).
    pub next_turn_overrides: TurnOverrides,
    /// MCP tasks a resumed thread's earlier session left (running, or unanswered when its
    /// process died): the next turn fetches their results before its first request.
    pub pending_mcp_tasks: Vec<oi_thread_store::PendingMcpTask>,
    /// The thread's last turn, parked at approvals: what it waits for (as recorded).
    pub parked: Option<oi_thread_store::TurnParkedItem>,
    /// The answers a resumed turn was given, by request id, consumed by the approvals of
    /// its continuation (see `approval::ask_exec_approval`). Cleared when a turn ends or
    /// parks: an answer never outlives its turn.
    pub preanswers: HashMap<String, crate::parking::Preanswer>,
    /// For a resumed turn whose park asked to re-run a command outside the sandbox: that
    /// command's sandboxed output, by call id (see `tools::shell::run_command`).
    pub sandboxed_runs: HashMap<String, oi_protocol::models::FunctionCallOutput>,
    /// The `SessionStart` hooks have not run yet: their `source` (`startup`, `resume`); the
    /// first turn takes it and runs them (see `hooks::lifecycle`).
    pub session_start: Option<&'static str>,
    /// What the `SessionStart` hooks said for the model (bounded), sent with every request.
    pub session_context: Option<String>,
}

impl SessionState {
    /// Whether requests describe the tools as text (`tool_call_format`, or the switch
    /// `auto` made).
    pub(crate) fn tools_as_text(&self) -> bool {
        match self.config.tool_call_format {
            ToolCallFormat::Text => true,
            ToolCallFormat::Native => false,
            ToolCallFormat::Auto => self.text_tools_fallback,
        }
    }
}

pub(crate) struct Session {
    pub id: ThreadId,
    pub client: ModelClient,
    /// Connections to the configured MCP servers (`None` when none are configured).
    pub mcp: Option<Arc<McpConnectionManager>>,
    events: EventBus,
    state: Mutex<SessionState>,
    recorder: Mutex<Box<dyn Recorder>>,
    /// Keys of the warnings already given in this session (see [`Session::warn_once`]).
    warned: Mutex<HashSet<&'static str>>,
    /// The first failure to save this thread (disk full, file gone...), kept so a front end
    /// can tell the user the stored thread is incomplete.
    save_error: Mutex<Option<String>>,
    /// What the recorder has not saved (yet); readable while the recorder is busy.
    save_state: Arc<SaveState>,
    /// Held by a turn from the moment it ends until its terminal events are published:
    /// a new turn starts only after (see [`Session::turn_end_gate`]).
    turn_end: tokio::sync::Mutex<()>,
    /// The running (or last) turn's fixed context; replaced when a turn starts.
    turn_context: Mutex<Arc<TurnContext>>,
    /// What a front end's client does for the tools (see `client_tools`).
    client_tools: Mutex<Option<Arc<dyn crate::client_tools::ClientTools>>>,
    /// Where the thread is stored (kept when the recorder closes at shutdown).
    rollout_path: Option<std::path::PathBuf>,
    /// The file SWE-agent's viewer has open, and its window (`harness = "swe-agent"`).
    open_file: Mutex<Option<crate::harness::viewer::OpenFile>>,
}

impl Session {
    pub(crate) fn new(
        id: ThreadId,
        client: ModelClient,
        mcp: Option<Arc<McpConnectionManager>>,
        config: Config,
        history: Vec<ResponseItem>,
        recorder: Box<dyn Recorder>,
    ) -> Self {
        let loaded_tools = crate::tools::search_history::loaded_in_history(&history);
        let session_start = if history.is_empty() {
            // `SessionStart`'s `source` in the hooks' payload.
            "startup"
        } else {
            "resume"
        };
        let config = Arc::new(config);
        Self {
            id,
            client,
            mcp,
            events: EventBus::default(),
            state: Mutex::new(SessionState {
                config: config.clone(),
                history,
                active_turn: None,
                approved_commands: HashSet::new(),
                pending_approvals: HashMap::new(),
                pending_elicitations: HashMap::new(),
                total_usage: TokenUsage::default(),
                window: WindowKnowledge::default(),
                estimator: TokenEstimator::default(),
                loaded_tools,
                project_doc: None,
                skills: Default::default(),
                text_tools_fallback: false,
                server_parses_calls: false,
                next_turn_context: Vec::new(),
                next_turn_overrides: TurnOverrides::default(),
                pending_mcp_tasks: Vec::new(),
                parked: None,
                preanswers: HashMap::new(),
                sandboxed_runs: HashMap::new(),
                session_start: Some(session_start),
                session_context: None,
            }),
            save_state: recorder.save_state(),
            rollout_path: recorder.path(),
            recorder: Mutex::new(recorder),
            warned: Mutex::new(HashSet::new()),
            save_error: Mutex::new(None),
            turn_end: tokio::sync::Mutex::new(()),
            turn_context: Mutex::new(Arc::new(TurnContext {
                harness: crate::harness::resolve(&config),
                config,
                project_doc: None,
                skills: Default::default(),
            })),
            client_tools: Mutex::new(None),
            open_file: Mutex::new(None),
        }
    }

    /// The file the viewer has open (see [`crate::harness::viewer`]).
    pub(crate) fn open_file(&self) -> Option<crate::harness::viewer::OpenFile> {
        self.open_file
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Opens `file` in the viewer (replacing the one open before).
    pub(crate) fn set_open_file(&self, file: crate::harness::viewer::OpenFile) {
        *self.open_file.lock().unwrap_or_else(|p| p.into_inner()) = Some(file);
    }

    /// The front end's client tools, if it set them.
    pub(crate) fn client_tools(&self) -> Option<Arc<dyn crate::client_tools::ClientTools>> {
        self.client_tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets (or, with `None`, removes) the front end's client tools.
    pub(crate) fn set_client_tools(
        &self,
        tools: Option<Arc<dyn crate::client_tools::ClientTools>>,
    ) {
        *self.client_tools.lock().unwrap_or_else(|p| p.into_inner()) = tools;
    }

    /// The context of the running turn (the last one between turns): cheap, never locks
    /// the session state.
    pub(crate) fn turn_context(&self) -> Arc<TurnContext> {
        self.turn_context
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Fixes the context of the turn that is starting: the config as overrides left it and
    /// the AGENTS.md read for it (see [`Session::load_project_doc`]).
    pub(crate) fn begin_turn_context(&self) -> Arc<TurnContext> {
        let ctx = {
            let st = self.state();
            Arc::new(TurnContext {
                config: st.config.clone(),
                harness: crate::harness::resolve(&st.config),
                project_doc: st.project_doc.clone(),
                skills: st.skills.clone(),
            })
        };
        *self.turn_context.lock().unwrap_or_else(|p| p.into_inner()) = ctx.clone();
        ctx
    }

    /// Waits until no turn is between its end and the publication of its terminal events,
    /// and keeps it so while the guard lives. The end of a turn is made durable without
    /// the state lock; this gate keeps the next turn's `task_started` after it.
    pub(crate) async fn turn_end_gate(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn_end.lock().await
    }

    /// Lock the state. Poisoning only happens if a holder panicked; the data is still the
    /// best we have, so keep going rather than take the whole thread down.
    pub(crate) fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn recorder(&self) -> MutexGuard<'_, Box<dyn Recorder>> {
        self.recorder.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the config the next turn starts with (see [`Session::settings`]).
    pub(crate) fn config(&self) -> Config {
        Config::clone(&self.state().config)
    }

    /// The config the next turn starts with, shared: no copy of its fields.
    pub(crate) fn settings(&self) -> Arc<Config> {
        self.state().config.clone()
    }

    /// See [`SessionState::tools_as_text`].
    pub(crate) fn tools_as_text(&self) -> bool {
        self.state().tools_as_text()
    }

    /// Emit an event (and persist it when it belongs in the rollout).
    pub(crate) fn send(&self, id: &str, msg: EventMsg) {
        if is_persisted(&msg) {
            let r = self.recorder().record_event(&msg);
            if let Err(e) = r {
                self.warn_store(id, &e);
            }
        }
        self.emit(Event {
            id: id.to_string(),
            msg,
        });
    }

    /// Records `msg` (when it belongs in the rollout) without flushing; see
    /// [`Session::flush_async`] and [`Session::publish`].
    pub(crate) fn record_unflushed(&self, id: &str, msg: &EventMsg) {
        if is_persisted(msg) {
            let r = self.recorder().record_event_unflushed(msg);
            if let Err(e) = r {
                self.warn_store(id, &e);
            }
        }
    }

    /// Publishes an event already recorded with [`Session::record_unflushed`].
    pub(crate) fn publish(&self, id: &str, msg: EventMsg) {
        self.emit(Event {
            id: id.to_string(),
            msg,
        });
    }

    /// Makes everything recorded so far durable, awaiting the writer without holding a
    /// lock or blocking a worker.
    pub(crate) async fn flush_async(&self, id: &str) {
        let wait = self.recorder().start_flush();
        let mut r = wait.wait().await;
        if r.is_ok() {
            r = self.recorder().take_failure();
        }
        if let Err(e) = r {
            self.warn_store(id, &e);
        }
    }

    fn emit(&self, ev: Event) {
        self.events.publish(ev);
    }

    /// Every event published from now on.
    pub(crate) fn subscribe(&self) -> EventStream {
        self.events.subscribe()
    }

    /// How many event streams are open.
    pub(crate) fn subscriber_count(&self) -> usize {
        self.events.subscriber_count()
    }

    /// After this, each subscriber sees the end of its stream once it has read everything
    /// already published.
    pub(crate) fn close_events(&self) {
        self.events.close();
    }

    pub(crate) fn warn(&self, id: &str, message: impl Into<String>) {
        self.send(
            id,
            EventMsg::Warning(WarningEvent {
                message: message.into(),
            }),
        );
    }

    /// A warning given at most once per session under `key` (advice about the setup that
    /// would otherwise repeat on every request).
    pub(crate) fn warn_once(&self, id: &str, key: &'static str, message: impl FnOnce() -> String) {
        let first = self
            .warned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key);
        if first {
            self.warn(id, message());
        }
    }

    /// The first error met while saving this thread, if any.
    pub(crate) fn save_error(&self) -> Option<String> {
        self.save_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What is recorded but not in the store right now (`None`: everything is saved).
    pub(crate) fn unsaved(&self) -> Option<Unsaved> {
        self.save_state.unsaved()
    }

    /// Why the thread's store is not answering, while it is not (see `SaveState::stalled`):
    /// a running turn stops rather than wait for it again and again.
    pub(crate) fn store_stalled(&self) -> Option<String> {
        self.save_state.stalled()
    }

    fn warn_store(&self, id: &str, e: &RecordError) {
        self.save_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| e.to_string());
        self.emit(Event {
            id: id.to_string(),
            msg: EventMsg::Warning(WarningEvent {
                message: format!("could not save this thread: {e}"),
            }),
        });
    }

    /// Append to history and persist: the items are written (a call about to run is in the
    /// rollout even if the process is killed during it) before they join the history. The
    /// wait holds no lock and blocks no worker.
    pub(crate) async fn push_history(&self, turn_id: &str, items: Vec<ResponseItem>) {
        if items.is_empty() {
            return;
        }
        self.record_durably(turn_id, &items).await;
        self.state().history.extend(items);
    }

    /// Records `items` and waits until they are durable, holding no lock and blocking no
    /// worker; a failure is said as the store's warning.
    async fn record_durably(&self, turn_id: &str, items: &[ResponseItem]) {
        let (queued, wait) = {
            let mut rec = self.recorder();
            let queued: Result<(), RecordError> =
                items.iter().try_for_each(|i| rec.record_item_unwaited(i));
            (queued, rec.start_written())
        };
        let mut r = queued;
        let written = wait.wait().await;
        if r.is_ok() {
            r = written.and_then(|()| self.recorder().take_failure());
        }
        if let Err(e) = r {
            self.warn_store(turn_id, &e);
        }
    }

    /// The model's context window in tokens (see `window::resolve` for the order of sources).
    pub(crate) fn context_window(&self) -> i64 {
        self.context_window_and_source().0
    }

    /// The window and where it came from, in words for `/status` and `token_count`.
    pub(crate) fn context_window_and_source(&self) -> (i64, String) {
        let st = self.state();
        window::resolve(&st.window, &st.config)
    }

    /// Once per session: recall what earlier sessions learned for this provider and model
    /// (window, tokenizer ratio), and ask the server for the window unless config sets it.
    /// Gives up when `cancel` fires (loading an Ollama model can take a while).
    pub(crate) async fn lookup_server_window(&self, cancel: &CancellationToken) {
        let (model, home, key, read_memory, ask) = {
            let st = self.state();
            let ask = st.window.server.is_none()
                && st.config.model_context_window.is_none_or(|w| w <= 0)
                && window::worth_asking(&st.config);
            (
                st.config.model.clone(),
                st.config.home.clone(),
                window::memory_key(&st.config),
                !st.window.memory_read,
                ask,
            )
        };
        if read_memory {
            let recalled = tokio::task::spawn_blocking(move || {
                (
                    window::recall(&home, &key),
                    window::recall_ratio(&home, &key),
                )
            })
            .await
            .unwrap_or_default();
            let mut st = self.state();
            st.window.memory_read = true;
            st.window.remembered = recalled.0;
            st.window.remembered_ratio = recalled.1;
            if let Some(ratio) = recalled.1 {
                st.estimator.seed(ratio);
            }
        }
        if !ask {
            return;
        }
        let reported = tokio::select! {
            _ = cancel.cancelled() => return,
            w = self.client.server_context_window(&model) => w,
        };
        self.state().window.server = Some(reported);
    }

    /// After a usage report: keep the tokenizer ratio for the next session when it moved
    /// by more than a tenth from what is remembered (one small file write, off the workers).
    pub(crate) fn remember_ratio_if_changed(&self) {
        let (ratio, home, key) = {
            let mut st = self.state();
            let ratio = st.estimator.ratio();
            let known = st.window.remembered_ratio;
            if known.is_some_and(|k| (ratio - k).abs() <= k * 0.1) {
                return;
            }
            st.window.remembered_ratio = Some(ratio);
            (
                ratio,
                st.config.home.clone(),
                window::memory_key(&st.config),
            )
        };
        tokio::task::spawn_blocking(move || {
            if let Err(e) = window::remember_ratio(&home, &key, ratio) {
                tracing::debug!("could not remember the tokenizer ratio: {e}");
            }
        });
    }

    /// Record a window learned from the server's behaviour, for this session, and in the
    /// memory file for the next ones with the same provider and model (which use it once it
    /// is corroborated: see `window`). `false` when the server's own report of its window
    /// contradicts it: then nothing was learned.
    pub(crate) async fn learn_window(&self, tokens: i64, from: window::LearnedFrom) -> bool {
        let (learned, home, key) = {
            let mut st = self.state();
            let learned = st.window.learn(tokens, from);
            (
                learned,
                st.config.home.clone(),
                window::memory_key(&st.config),
            )
        };
        let Some(learned) = learned else {
            return false;
        };
        let saved =
            tokio::task::spawn_blocking(move || window::remember(&home, &key, &learned)).await;
        if let Ok(Err(e)) = saved {
            tracing::debug!("could not remember the learned context window: {e}");
        }
        true
    }

    /// The output of a call already in the history (a placeholder, or the synthetic output of
    /// a call whose process died) replaced by `output`, and recorded: the stored thread then
    /// shows the new output in the call's place.
    pub(crate) async fn replace_call_output(
        &self,
        turn_id: &str,
        call_id: &str,
        output: oi_protocol::models::FunctionCallOutput,
    ) {
        let item = ResponseItem::FunctionCallOutput {
            call_id: call_id.to_string(),
            output: output.clone(),
        };
        self.record_durably(turn_id, std::slice::from_ref(&item))
            .await;
        let mut st = self.state();
        let slot = st.history.iter_mut().find_map(|i| match i {
            ResponseItem::FunctionCallOutput { call_id: c, output } if c == call_id => Some(output),
            _ => None,
        });
        match slot {
            Some(slot) => *slot = output,
            None => st.history.push(item),
        }
    }

    /// Replace the whole history (compaction) and record it as a `compacted` rollout item,
    /// so resume and fork rebuild this history rather than the raw one.
    pub(crate) fn replace_history(
        &self,
        turn_id: &str,
        summary: String,
        history: Vec<ResponseItem>,
    ) {
        let r = self.recorder().record_compacted(&CompactedItem {
            message: summary,
            replacement_history: Some(history.clone()),
        });
        if let Err(e) = r {
            self.warn_store(turn_id, &e);
        }
        self.state().history = history;
    }

    /// Reads the project doc (AGENTS.md or a fallback name) for the turn that is starting (off the runtime), so every request
    /// of the turn shows the same project doc without touching the disk again.
    pub(crate) async fn load_project_doc(&self) {
        let (cwd, home, max_bytes, fallbacks) = {
            let st = self.state();
            (
                st.config.cwd.clone(),
                st.config.home.clone(),
                st.config.project_doc_max_bytes,
                st.config.project_doc_fallback_filenames.clone(),
            )
        };
        let (doc, refused) = read_project_doc(cwd, home, max_bytes, fallbacks).await;
        let turn_id = {
            let mut st = self.state();
            st.project_doc = doc;
            st.active_turn.as_ref().map(|t| t.id.clone())
        };
        if let (Some(message), Some(turn_id)) = (refused, turn_id) {
            self.warn_once(&turn_id, "project_doc_refused", || message);
        }
    }

    /// Records a park record (`turn_parked` / `turn_unparked`) without flushing; the
    /// caller flushes ([`Session::flush_async`]) before anyone is told.
    pub(crate) fn record_park(&self, turn_id: &str, item: oi_thread_store::RolloutItem) {
        let r = self.recorder().record_park(&item);
        if let Err(e) = r {
            self.warn_store(turn_id, &e);
        }
    }

    /// [`Session::flush_async`] that says whether everything recorded so far is in the
    /// store: nothing waits for a retry, and nothing more was lost.
    pub(crate) async fn flush_saved(&self, id: &str) -> bool {
        let lost_before = self.unsaved().map_or(0, |u| u.lost);
        self.flush_async(id).await;
        self.unsaved()
            .is_none_or(|u| u.pending == 0 && u.lost == lost_before)
    }

    pub(crate) fn record_turn_context(&self, turn_id: &str) {
        let cfg = self.settings();
        let r = self.recorder().record_turn_context(
            turn_id,
            &cfg.cwd,
            cfg.approval_policy,
            &cfg.sandbox_policy,
            &cfg.model,
            cfg.model_reasoning_effort,
        );
        if let Err(e) = r {
            self.warn_store(turn_id, &e);
        }
    }

    /// Stops recording (at shutdown) and waits until the writer has written what it still
    /// holds and given back the thread's lock or lease (no thread blocks for it). Nothing
    /// recorded afterwards is saved.
    pub(crate) async fn close_recorder(&self) {
        let (old, wait) = {
            let mut rec = self.recorder();
            let wait = rec.close();
            (
                std::mem::replace(&mut *rec, Box::new(crate::recorder::NoopRecorder)),
                wait,
            )
        };
        wait.wait().await;
        // Closed: dropping it waits for nothing.
        drop(old);
    }

    pub(crate) fn rollout_path(&self) -> Option<std::path::PathBuf> {
        self.rollout_path.clone()
    }
}
