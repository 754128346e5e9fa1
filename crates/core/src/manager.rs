//! Creating, resuming and forking threads; the registry of live threads.

use crate::elicitation::EngineElicitation;
use crate::error::CoreError;
use crate::mcp_sampling::EngineSampling;
use crate::parking::ParkError;
use crate::recorder::{NoopRecorder, Recorder};
use crate::session::Session;
use crate::store_writer::StoreRecorder;
use crate::stored::{StoredThreads, stored};
use crate::thread::Thread;
use oi_config::Config;
use oi_mcp_client::{McpConnectionManager, McpStartOptions};
use oi_model_client::ModelClient;
use oi_protocol::ThreadId;
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::{EventMsg, Op, SessionConfiguredEvent};
use oi_thread_store::{
    ListQuery, SessionMeta, SessionSource, StoreLocation, StoreTimeouts, ThreadOutline, ThreadPage,
    ThreadStore, ThreadSummary,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// How a [`ThreadManager`] starts its threads.
pub struct ThreadManagerOptions {
    /// Recorded in each thread's metadata (`exec`, `mcp`, ...).
    pub source: SessionSource,
    /// Write rollouts and the index. `false` for ephemeral use (tests, benchmarks).
    pub persist: bool,
}

/// A freshly started (or resumed, or forked) thread.
pub struct NewThread {
    /// The thread's id (the rollout's and the index's key).
    pub thread_id: ThreadId,
    /// The running thread: submit ops, read events.
    pub thread: Arc<Thread>,
    /// The first event of every thread; front ends forward it themselves.
    pub session_configured: SessionConfiguredEvent,
    /// Every event of the thread from its start (MCP startup progress may come before any
    /// turn). Drop it when the thread is followed through turn handles instead.
    pub events: crate::EventStream,
}

/// Owns every live thread of a process.
#[derive(Clone)]
pub struct ThreadManager {
    inner: Arc<Inner>,
}

struct Inner {
    opts: ThreadManagerOptions,
    threads: Mutex<HashMap<ThreadId, Arc<Thread>>>,
    stores: Mutex<HashMap<PathBuf, ThreadStore>>,
    /// How many clients keep each thread loaded (see [`ThreadManager::hold`]).
    holds: Mutex<HashMap<ThreadId, usize>>,
}

/// One client's claim that a thread should stay loaded; released on drop.
pub struct ThreadHold {
    manager: ThreadManager,
    id: ThreadId,
}

impl Drop for ThreadHold {
    fn drop(&mut self) {
        let mut holds = self
            .manager
            .inner
            .holds
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = holds.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                holds.remove(&self.id);
            }
        }
    }
}

const CLI_VERSION: &str = env!("CARGO_PKG_VERSION");

impl ThreadManager {
    /// A manager with no threads yet.
    pub fn new(opts: ThreadManagerOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                opts,
                threads: Mutex::new(HashMap::new()),
                stores: Mutex::new(HashMap::new()),
                holds: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Marks `id` as kept loaded by one more client (a v2 connection that started or
    /// resumed it) until the returned hold drops, so one client's unsubscribe does not stop
    /// a thread another one still uses.
    pub fn hold(&self, id: ThreadId) -> ThreadHold {
        *self
            .inner
            .holds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            .or_default() += 1;
        ThreadHold {
            manager: self.clone(),
            id,
        }
    }

    /// How many clients hold `id` loaded.
    pub fn holders(&self, id: &ThreadId) -> usize {
        self.inner
            .holds
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .copied()
            .unwrap_or(0)
    }

    /// The thread store for a home directory (opened once, shared): local files, or the
    /// database named by `[thread_store] url` / `OI_THREAD_STORE_URL` (see
    /// [`oi_config::thread_store_url`]). Opening reads the index or connects to the database:
    /// call it on a blocking thread, or use [`ThreadManager::open_store`] from async code.
    ///
    /// The manager's lock is not held while opening: a database that does not answer stalls
    /// (at most its connect timeout) only the calls that need that store, never the other
    /// threads. Two calls racing to open the same store both connect; the first one kept wins.
    pub fn store(&self, home: &Path) -> Result<ThreadStore, CoreError> {
        if let Some(s) = self.cached_store(home) {
            return Ok(s);
        }
        Ok(self.keep_store(home, open_thread_store(home)?))
    }

    /// [`ThreadManager::store`] for async code: the config is read on the blocking pool, a
    /// database is connected to on this runtime (which then runs its operations), the local
    /// index is opened on the blocking pool.
    pub async fn open_store(&self, home: &Path) -> Result<ThreadStore, CoreError> {
        if let Some(s) = self.cached_store(home) {
            return Ok(s);
        }
        Ok(self.keep_store(home, open_thread_store_async(home).await?))
    }

    /// The store already opened for `home`, if any.
    fn cached_store(&self, home: &Path) -> Option<ThreadStore> {
        let stores = self.inner.stores.lock().unwrap_or_else(|p| p.into_inner());
        stores.get(home).cloned()
    }

    /// Keeps `opened` as `home`'s store, unless a racing call kept one first: that one is
    /// returned (and `opened` dropped), so every caller shares one store.
    fn keep_store(&self, home: &Path, opened: ThreadStore) -> ThreadStore {
        let mut stores = self.inner.stores.lock().unwrap_or_else(|p| p.into_inner());
        stores.entry(home.to_path_buf()).or_insert(opened).clone()
    }

    /// The live thread with this id, if this process has it loaded.
    pub fn get_thread(&self, id: &ThreadId) -> Option<Arc<Thread>> {
        self.inner
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// The ids of every thread loaded in this process.
    pub fn loaded_thread_ids(&self) -> Vec<ThreadId> {
        self.inner
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .copied()
            .collect()
    }

    fn meta(&self, id: ThreadId, forked_from: Option<ThreadId>, config: &Config) -> SessionMeta {
        SessionMeta {
            id,
            forked_from_id: forked_from,
            timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            cwd: config.cwd.clone(),
            originator: "open-interpreter".into(),
            cli_version: CLI_VERSION.into(),
            source: self.inner.opts.source,
            model_provider: config.model_provider_id.clone(),
            model: config.model.clone(),
            base_instructions: config.base_instructions.clone(),
            // Filled in on the blocking pool (it runs git); see `with_git_info`.
            git: None,
        }
    }

    /// Start a new thread.
    pub async fn start_thread(&self, mut config: Config) -> Result<NewThread, CoreError> {
        let id = ThreadId::new();
        let prepared = self.prepare(&mut config).await?;
        let recorder: Box<dyn Recorder> = if self.inner.opts.persist {
            let store = self.open_store(&config.home).await?;
            let meta = with_git_info(self.meta(id, None, &config)).await?;
            let writer = stored(store.create_async(meta).await)?;
            Box::new(StoreRecorder::new(writer).map_err(|e| CoreError::Store(e.to_string()))?)
        } else {
            Box::new(NoopRecorder)
        };
        self.spawn(id, None, config, Vec::new(), recorder, prepared, None)
    }

    /// Load a stored thread and continue it: same id, and the model sees the full history
    /// on the next turn. A thread that is already live is returned as is.
    pub async fn resume_thread(
        &self,
        id: ThreadId,
        mut config: Config,
    ) -> Result<NewThread, CoreError> {
        if let Some(thread) = self.get_thread(&id) {
            let cfg = thread.config();
            let sc = session_configured(
                id,
                None,
                &cfg,
                thread.rollout_path(),
                thread.history().len(),
            );
            return Ok(NewThread {
                thread_id: id,
                events: thread.subscribe(),
                thread,
                session_configured: sc,
            });
        }
        let store = self.open_store(&config.home).await?;
        if stored(store.get_async(&id).await)?.is_none() {
            return Err(CoreError::ThreadNotFound(id));
        }
        let prepared = self.prepare(&mut config).await?;
        let (writer, loaded) = stored(store.resume_async(&id).await)?;
        let history = loaded.history();
        let pending_tasks = loaded.pending_mcp_tasks();
        // A last turn parked at approvals stays parked: it is resumed with its answers.
        let parked = loaded.parked_turn().cloned();
        let recorder = StoreRecorder::new(writer).map_err(|e| CoreError::Store(e.to_string()))?;
        let mut new = self.spawn(
            id,
            None,
            config,
            history,
            Box::new(recorder),
            prepared,
            parked,
        )?;
        // The next turn (or the parked one's continuation) fetches what MCP tasks the
        // earlier session left, instead of the model calling their tools again.
        new.thread.session().state().pending_mcp_tasks = pending_tasks;
        if !loaded.warnings.is_empty() {
            new.session_configured.initial_messages = Some(
                loaded
                    .warnings
                    .iter()
                    .map(|w| {
                        EventMsg::Warning(oi_protocol::protocol::WarningEvent {
                            message: w.clone(),
                        })
                    })
                    .collect(),
            );
        }
        Ok(new)
    }

    /// Resumes parked turn `turn_id` of thread `id` (park `park_id`) with `answers`, on this
    /// process whichever process parked it: loads the thread from the store if it is not
    /// loaded here (taking its lease: [`CoreError::ThreadBusy`] while another process
    /// holds it), then [`Thread::resume_parked`]. Two processes racing to resume the same
    /// park: one takes the lease and resumes it; the other is refused (busy, or, once the
    /// first lets the thread go, [`ParkError::NotParked`]).
    pub async fn resume_parked_turn(
        &self,
        id: ThreadId,
        config: Config,
        turn_id: &str,
        park_id: &str,
        answers: Vec<oi_protocol::protocol::ParkedAnswer>,
    ) -> Result<crate::TurnHandle, ParkError> {
        let new = self.resume_thread(id, config).await?;
        new.thread.resume_parked(turn_id, park_id, answers).await
    }

    /// A new thread whose history is a copy of `source` (live or stored).
    pub async fn fork_thread(
        &self,
        source: ThreadId,
        mut config: Config,
    ) -> Result<NewThread, CoreError> {
        let id = ThreadId::new();
        if self.inner.opts.persist {
            // A running turn stops so the copy ends with it; a parked one is left to its
            // answers (the copy closes its own copy of the park).
            if let Some(live) = self.get_thread(&source)
                && live.is_busy()
            {
                live.submit(Op::Interrupt).await.ok();
            }
            let store = self.open_store(&config.home).await?;
            let prepared = self.prepare(&mut config).await?;
            let meta = with_git_info(self.meta(id, Some(source), &config)).await?;
            let (writer, loaded) = stored(store.fork_async(&source, meta).await)?;
            let history = loaded.history();
            let recorder =
                StoreRecorder::new(writer).map_err(|e| CoreError::Store(e.to_string()))?;
            self.spawn(
                id,
                Some(source),
                config,
                history,
                Box::new(recorder),
                prepared,
                None,
            )
        } else {
            let live = self
                .get_thread(&source)
                .ok_or(CoreError::ThreadNotFound(source))?;
            let history = live.history();
            let prepared = self.prepare(&mut config).await?;
            self.spawn(
                id,
                Some(source),
                config,
                history,
                Box::new(NoopRecorder),
                prepared,
                None,
            )
        }
    }

    /// Everything that can refuse to start a thread, before anything is written to disk:
    /// the model server the front end starts (`provider_start`), the model client (a
    /// missing API key) and the MCP servers (a `required` one failing).
    async fn prepare(&self, config: &mut Config) -> Result<Prepared, CoreError> {
        crate::provider_start::start_provider(config).await?;
        let config = &*config;
        let client = ModelClient::new(
            config.model_provider.clone(),
            config.model_provider_id.clone(),
            &config.home,
        )
        .map_err(|e| CoreError::Config(e.to_string()))?;
        if !config.mcp_servers.values().any(|s| s.enabled) {
            return Ok(Prepared { client, mcp: None });
        }
        let handler = Arc::new(EngineElicitation::default());
        let sampling = Arc::new(EngineSampling::default());
        let (tx, rx) = mpsc::unbounded_channel();
        let manager = McpConnectionManager::start(
            config.mcp_servers.clone(),
            McpStartOptions {
                cwd: config.cwd.clone(),
                home: config.home.clone(),
                elicitation: handler.clone(),
                startup_wait: mcp_startup_wait(self.inner.opts.source),
                sampling: Some(sampling.clone()),
                oauth_browser: None,
                oauth_store: config.mcp_oauth_credentials_store,
            },
            tx,
        )
        .await
        .map_err(|e| CoreError::Mcp(e.to_string()))?;
        Ok(Prepared {
            client,
            mcp: Some(PreparedMcp {
                manager,
                elicitation: handler,
                sampling,
                startup_events: rx,
            }),
        })
    }

    #[allow(clippy::too_many_arguments)] // a thread's whole start, passed through once
    fn spawn(
        &self,
        id: ThreadId,
        forked_from: Option<ThreadId>,
        config: Config,
        history: Vec<ResponseItem>,
        recorder: Box<dyn Recorder>,
        prepared: Prepared,
        parked: Option<oi_thread_store::TurnParkedItem>,
    ) -> Result<NewThread, CoreError> {
        let history_len = history.len();
        let rollout_path = recorder.path();
        let sc = session_configured(id, forked_from, &config, rollout_path, history_len);
        let (manager, mcp_parts) = match prepared.mcp {
            Some(mcp) => (
                Some(mcp.manager),
                Some((mcp.elicitation, mcp.sampling, mcp.startup_events)),
            ),
            None => (None, None),
        };
        let session = Arc::new(Session::new(
            id,
            prepared.client,
            manager,
            config,
            history,
            recorder,
        ));
        session.state().parked = parked;
        // The creator's stream, opened before anything can publish (MCP startup progress
        // below), so it sees every event of the thread.
        let events = session.subscribe();
        if let Some((handler, sampling, mut startup_events)) = mcp_parts {
            let _ = handler.session.set(Arc::downgrade(&session));
            let _ = sampling.session.set(Arc::downgrade(&session));
            // MCP startup progress (possibly finishing after the thread started) joins the
            // thread's event stream.
            let weak = Arc::downgrade(&session);
            tokio::spawn(async move {
                while let Some(msg) = startup_events.recv().await {
                    match weak.upgrade() {
                        Some(s) => s.send("", msg),
                        None => break,
                    }
                }
            });
        }
        let thread = Thread::spawn(session);
        self.inner
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, thread.clone());
        Ok(NewThread {
            thread_id: id,
            thread,
            session_configured: sc,
            events,
        })
    }

    /// Forget a thread (after it has shut down).
    pub fn remove_thread(&self, id: &ThreadId) -> Option<Arc<Thread>> {
        self.inner
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
    }

    // What front ends read and change of stored threads, through the engine rather than
    // the store: the store the engine opened for `home` (one open, one database connection,
    // shared with the threads it runs), awaited on the async seam.

    /// The stored threads of `home`: list, read, rename, archive, delete, outlines. Opens
    /// the store on first use (see [`ThreadManager::open_store`]); a failure to open is the
    /// error here, each operation's own failures are its answer's.
    pub async fn stored_threads(&self, home: &Path) -> Result<StoredThreads, CoreError> {
        Ok(StoredThreads::new(self.open_store(home).await?))
    }

    /// One page of the stored threads of `home` (see [`ListQuery`]).
    pub async fn list_stored_threads(
        &self,
        home: &Path,
        query: &ListQuery,
    ) -> Result<ThreadPage, CoreError> {
        self.stored_threads(home).await?.list(query).await
    }

    /// The most recently updated stored thread of `home` (not archived), only in `cwd` when
    /// given: what `resume --last` continues.
    pub async fn latest_stored_thread(
        &self,
        home: &Path,
        cwd: Option<&Path>,
    ) -> Result<Option<ThreadSummary>, CoreError> {
        self.stored_threads(home).await?.latest(cwd).await
    }

    /// A stored thread's summary (its index row; no record is read), `None` if unknown.
    pub async fn stored_thread(
        &self,
        home: &Path,
        id: &ThreadId,
    ) -> Result<Option<ThreadSummary>, CoreError> {
        self.stored_threads(home).await?.get(id).await
    }

    /// A stored thread's turns without its records parsed, for paged history.
    pub async fn stored_thread_outline(
        &self,
        home: &Path,
        id: &ThreadId,
    ) -> Result<ThreadOutline, CoreError> {
        self.stored_threads(home).await?.outline(id).await
    }

    /// Lets go of an idle thread whose store is shared with other processes (PostgreSQL):
    /// stops it, which flushes its records and releases its one-writer lease, so another
    /// server can drive it; the next turn here resumes it from the store with whatever
    /// was added meanwhile. Local threads, busy threads and unknown ids are left alone.
    /// Returns whether the thread was released.
    pub async fn release_if_shared(&self, id: &ThreadId) -> bool {
        let Some(thread) = self.get_thread(id) else {
            return false;
        };
        let home = thread.config().home;
        let shared = match self.open_store(&home).await {
            Ok(store) => store.is_shared(),
            Err(_) => false,
        };
        // A thread with records still waiting for the store stays here, where they are
        // retried: releasing it would drop them.
        if !shared || thread.is_busy() || thread.unsaved().is_some_and(|u| u.pending > 0) {
            return false;
        }
        self.remove_thread(id);
        thread.shutdown(STOP_LIMIT).await;
        true
    }

    /// Interrupt running turns, flush rollouts and stop every thread. Waits until each
    /// thread has confirmed (`shutdown_complete`) or its stream ended.
    pub async fn shutdown_all(&self) {
        let threads: Vec<Arc<Thread>> = self
            .inner
            .threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, t)| t)
            .collect();
        let waits = threads.iter().map(|t| t.shutdown(STOP_LIMIT));
        futures::future::join_all(waits).await;
    }
}

/// How long a stopping thread gets to confirm (`shutdown_complete`).
const STOP_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens the thread store of `home` where the configuration puts it: local files, or the
/// database of `[thread_store] url` / `OI_THREAD_STORE_URL` (see
/// [`oi_config::thread_store_url`]), waiting on a database at most the `[thread_store]`
/// timeouts. Blocking: reads the index or connects to the database.
pub fn open_thread_store(home: &Path) -> Result<ThreadStore, CoreError> {
    let settings =
        oi_config::thread_store_settings(home).map_err(|e| CoreError::Config(e.to_string()))?;
    let location = StoreLocation::from_url(settings.url.as_deref())
        .map_err(|e| CoreError::Config(e.to_string()))?;
    let timeouts = StoreTimeouts {
        connect: settings.connect_timeout,
        statement: settings.statement_timeout,
    };
    ThreadStore::open_with(home, &location, timeouts).map_err(|e| CoreError::Store(e.to_string()))
}

/// [`open_thread_store`] for async code: the config file is read on the blocking pool; a
/// database is connected to on the caller's runtime, which runs the store's operations.
pub async fn open_thread_store_async(home: &Path) -> Result<ThreadStore, CoreError> {
    let h = home.to_path_buf();
    let settings = tokio::task::spawn_blocking(move || oi_config::thread_store_settings(&h))
        .await
        .map_err(|e| CoreError::Store(format!("reading the thread store settings failed: {e}")))?
        .map_err(|e| CoreError::Config(e.to_string()))?;
    let location = StoreLocation::from_url(settings.url.as_deref())
        .map_err(|e| CoreError::Config(e.to_string()))?;
    let timeouts = StoreTimeouts {
        connect: settings.connect_timeout,
        statement: settings.statement_timeout,
    };
    ThreadStore::open_with_async(home, &location, timeouts)
        .await
        .map_err(|e| CoreError::Store(e.to_string()))
}

fn session_configured(
    id: ThreadId,
    forked_from: Option<ThreadId>,
    config: &Config,
    rollout_path: Option<PathBuf>,
    history_len: usize,
) -> SessionConfiguredEvent {
    SessionConfiguredEvent {
        session_id: id,
        thread_id: id,
        forked_from_id: forked_from,
        thread_name: None,
        model: config.model.clone(),
        model_provider_id: config.model_provider_id.clone(),
        approval_policy: config.approval_policy,
        approvals_reviewer: "user".into(),
        sandbox_policy: config.sandbox_policy.clone(),
        cwd: config.cwd.clone(),
        reasoning_effort: config.model_reasoning_effort,
        history_log_id: 0,
        history_entry_count: history_len,
        initial_messages: None,
        rollout_path,
    }
}

/// Add the repository's git info to a thread's metadata. Runs `git`, so on the blocking
/// pool, never on an async worker.
async fn with_git_info(mut meta: SessionMeta) -> Result<SessionMeta, CoreError> {
    tokio::task::spawn_blocking(move || {
        meta.git = oi_thread_store::collect_git_info(&meta.cwd);
        meta
    })
    .await
    .map_err(|e| CoreError::Store(format!("reading the repository's git facts failed: {e}")))
}

/// What [`ThreadManager::prepare`] set up for a new thread.
struct Prepared {
    client: ModelClient,
    mcp: Option<PreparedMcp>,
}

/// The started MCP servers and what their requests reach once the session exists.
struct PreparedMcp {
    manager: Arc<McpConnectionManager>,
    elicitation: Arc<EngineElicitation>,
    sampling: Arc<EngineSampling>,
    startup_events: mpsc::UnboundedReceiver<EventMsg>,
}

/// How long a new thread waits for MCP servers that have no cached catalog. A headless run
/// (exec, the MCP `codex` tool, v2 turns) sends its first request right away, so it waits
/// for them up to each server's `startup_timeout_sec`, and so does an editor's (ACP) session,
/// whose first prompt follows `session/new` at once; an interactive session never blocks:
/// tools join when their server is ready.
fn mcp_startup_wait(source: SessionSource) -> oi_mcp_client::StartupWait {
    match source {
        SessionSource::Cli => oi_mcp_client::StartupWait::UpTo(std::time::Duration::ZERO),
        SessionSource::Exec
        | SessionSource::Mcp
        | SessionSource::AppServer
        | SessionSource::Acp
        | SessionSource::Unknown => oi_mcp_client::StartupWait::UntilReadyOrFailed,
    }
}
