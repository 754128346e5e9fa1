//! [`Engine`] over the real engine: config from `oi-config` (config.toml + the server's
//! flags + the call's overrides, loaded fresh for each new session), threads from
//! the host's `ThreadManager` (shared with every API the host serves), stamped with the
//! host's source (`mcp`, or `app_server` under `interpreter app-server`).

use crate::engine::{
    CatalogError, Engine, EngineError, EngineThread, EngineTurn, ParkedAnswer, PromptFolders,
    ResumeError, ResumedTurn, SessionRequest, StartTurnError, SubmitError, ThreadHandle,
    ThreadList, ThreadTurns, TurnOptions, TurnState, TurnWindow,
};
use oi_config::{ConfigLoadOptions, ConfigOverrides, LoadedConfig, load_config};
use oi_core::{
    CoreError, EventStream, ListQuery, NewThread, ParkError, StartTurn, StoredThreads, Thread,
    ThreadManager, ThreadSummary, TurnHandle,
};
use oi_host::Host;
use oi_jsonrpc::BoxFuture;
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, Submission};
use oi_protocol::user_input::UserInput;
use std::path::PathBuf;
use std::sync::Arc;

/// The MCP server's [`Engine`] over the real engine, on the host's thread manager.
pub struct CoreEngine {
    host: Host,
}

impl CoreEngine {
    /// The engine of `host`: its threads, config and source.
    pub fn new(host: Host) -> Self {
        Self { host }
    }

    /// The thread manager every API of the host shares.
    pub fn manager(&self) -> &ThreadManager {
        self.host.manager()
    }

    /// The config for a session, loaded on the blocking pool (it reads files, and a
    /// `[thread_store]` check may wait on the network).
    async fn load(&self, req: Option<SessionRequest>) -> Result<LoadedConfig, EngineError> {
        let load = self.host.config_load();
        tokio::task::spawn_blocking(move || load_session(load, req))
            .await
            .map_err(|e| EngineError::Config(format!("loading the config stopped: {e}")))?
    }
}

impl CoreEngine {
    /// The server's home: `--home` / `$OPENINTERPRETER_HOME` / `~/.openinterpreter`.
    fn home(&self) -> Result<PathBuf, CatalogError> {
        match &self.host.options().home {
            Some(h) => Ok(h.clone()),
            None => oi_config::find_home().map_err(|e| CatalogError::Store(e.to_string())),
        }
    }

    async fn stored(&self) -> Result<StoredThreads, CatalogError> {
        let home = self.home()?;
        self.manager()
            .stored_threads(&home)
            .await
            .map_err(catalog_error)
    }
}

fn catalog_error(e: CoreError) -> CatalogError {
    match e {
        CoreError::ThreadNotFound(id) => CatalogError::NotFound(id),
        CoreError::StoreRequest(msg) => CatalogError::BadCursor(msg),
        other => CatalogError::Store(other.to_string()),
    }
}

fn load_session(
    mut load: ConfigLoadOptions,
    req: Option<SessionRequest>,
) -> Result<LoadedConfig, EngineError> {
    if let Some(req) = req {
        let request = ConfigOverrides {
            model: req.model,
            profile: req.profile,
            cwd: req.cwd,
            approval_policy: req.approval_policy,
            sandbox_mode: req.sandbox,
            base_instructions: req.base_instructions,
            developer_instructions: req.developer_instructions,
            compact_prompt: req.compact_prompt,
            model_provider: None,
        };
        load = load.with_request(request, req.config.iter().map(|(k, v)| (k, v)));
    }
    let loaded = load_config(load).map_err(|e| EngineError::Config(e.to_string()))?;
    // A widening project layer the user did not accept: no session, with or without it.
    if let Some(review) = &loaded.config.project_config_review
        && !review.is_accepted()
    {
        return Err(EngineError::Config(review.refusal()));
    }
    for w in &loaded.warnings {
        tracing::warn!("config: {w}");
    }
    Ok(loaded)
}

fn handle(new: NewThread, loaded: &LoadedConfig) -> ThreadHandle {
    ThreadHandle {
        thread: Arc::new(CoreThread(new.thread)),
        session_configured: Some(new.session_configured),
        approval_timeout: loaded.config.approval_timeout,
        warnings: loaded.warnings.clone(),
    }
}

fn start_error(e: CoreError) -> EngineError {
    match e {
        CoreError::ThreadNotFound(id) => EngineError::NotFound(id),
        CoreError::Config(msg) => EngineError::Config(msg),
        e @ CoreError::ThreadBusy { .. } => EngineError::Busy(e.to_string()),
        other => EngineError::Start(other.to_string()),
    }
}

fn resume_error(e: ParkError) -> ResumeError {
    let text = e.to_string();
    match e {
        ParkError::NotParked { .. } | ParkError::StalePark { .. } => ResumeError::NotParked(text),
        ParkError::Expired { .. } => ResumeError::Expired(text),
        ParkError::UnknownRequest { .. }
        | ParkError::DuplicateAnswer { .. }
        | ParkError::MissingAnswers { .. } => ResumeError::BadAnswers(text),
        ParkError::Thread(CoreError::ThreadBusy { .. }) => ResumeError::Busy(text),
        ParkError::Thread(CoreError::ThreadNotFound(id)) => ResumeError::NotFound(id),
        ParkError::NotSaved { .. } | ParkError::Thread(_) => ResumeError::Failed(text),
    }
}

impl Engine for CoreEngine {
    fn start_thread(
        &self,
        req: SessionRequest,
    ) -> BoxFuture<'_, Result<ThreadHandle, EngineError>> {
        Box::pin(async move {
            let loaded = self.load(Some(req)).await?;
            let new = self
                .manager()
                .start_thread(loaded.config.clone())
                .await
                .map_err(start_error)?;
            Ok(handle(new, &loaded))
        })
    }

    fn open_thread(&self, id: ThreadId) -> BoxFuture<'_, Result<ThreadHandle, EngineError>> {
        Box::pin(async move {
            if let Some(thread) = self.manager().get_thread(&id) {
                let approval_timeout = thread.settings().approval_timeout;
                return Ok(ThreadHandle {
                    thread: Arc::new(CoreThread(thread)),
                    session_configured: None,
                    approval_timeout,
                    warnings: Vec::new(),
                });
            }
            let loaded = self.load(None).await?;
            let new = self
                .manager()
                .resume_thread(id, loaded.config.clone())
                .await
                .map_err(start_error)?;
            Ok(handle(new, &loaded))
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.manager().shutdown_all())
    }

    fn release_thread(&self, id: ThreadId) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.manager().release_if_shared(&id).await {
                tracing::debug!("thread {id}: released to the shared store");
            }
        })
    }

    fn list_threads(
        &self,
        cursor: Option<String>,
    ) -> BoxFuture<'_, Result<ThreadList, CatalogError>> {
        Box::pin(async move {
            let query = ListQuery {
                cursor,
                ..ListQuery::default()
            };
            let page = self
                .stored()
                .await?
                .list(&query)
                .await
                .map_err(catalog_error)?;
            Ok(ThreadList {
                threads: page.data,
                next_cursor: page.next_cursor,
            })
        })
    }

    fn thread_summary(
        &self,
        id: ThreadId,
    ) -> BoxFuture<'_, Result<Option<ThreadSummary>, CatalogError>> {
        Box::pin(async move { self.stored().await?.get(&id).await.map_err(catalog_error) })
    }

    fn thread_turns(
        &self,
        id: ThreadId,
        window: TurnWindow,
    ) -> BoxFuture<'_, Result<ThreadTurns, CatalogError>> {
        Box::pin(async move {
            let stored = self.stored().await?;
            let summary = stored
                .get(&id)
                .await
                .map_err(catalog_error)?
                .ok_or(CatalogError::NotFound(id))?;
            // The outline parses only the turns asked for.
            let outline = stored.outline(&id).await.map_err(catalog_error)?;
            let spans = outline.turns();
            let total = spans.len();
            let end = window.before.unwrap_or(total).min(total);
            let first = end.saturating_sub(window.count);
            let turns = spans[first..end]
                .iter()
                .map(|span| outline.stored_turn(span))
                .collect();
            Ok(ThreadTurns {
                summary,
                first,
                total,
                turns,
                running: self.manager().get_thread(&id).is_some_and(|t| t.is_busy()),
            })
        })
    }

    fn resume_parked(
        &self,
        thread: ThreadId,
        turn_id: String,
        park_id: String,
        answers: Vec<ParkedAnswer>,
    ) -> BoxFuture<'_, Result<ResumedTurn, ResumeError>> {
        Box::pin(async move {
            // A thread loaded here keeps its config; one loaded from the store gets the
            // server's (the parked turn keeps the settings it started with either way).
            let (thread, approval_timeout, warnings) = match self.manager().get_thread(&thread) {
                Some(t) => {
                    let timeout = t.settings().approval_timeout;
                    (t, timeout, Vec::new())
                }
                None => {
                    let loaded = self
                        .load(None)
                        .await
                        .map_err(|e| ResumeError::Failed(e.to_string()))?;
                    let new = self
                        .manager()
                        .resume_thread(thread, loaded.config.clone())
                        .await
                        .map_err(|e| resume_error(ParkError::Thread(e)))?;
                    (
                        new.thread,
                        loaded.config.approval_timeout,
                        loaded.warnings.clone(),
                    )
                }
            };
            let turn = thread
                .resume_parked(&turn_id, &park_id, answers)
                .await
                .map_err(resume_error)?;
            Ok(ResumedTurn {
                handle: ThreadHandle {
                    thread: Arc::new(CoreThread(thread)),
                    session_configured: None,
                    approval_timeout,
                    warnings,
                },
                turn: Box::new(CoreTurn(turn)),
            })
        })
    }

    fn turn_state(
        &self,
        thread: ThreadId,
        turn_id: String,
    ) -> BoxFuture<'_, Result<Option<TurnState>, CatalogError>> {
        Box::pin(async move {
            self.stored()
                .await?
                .turn_state(&thread, &turn_id)
                .await
                .map_err(catalog_error)
        })
    }

    fn watch_thread(&self, id: ThreadId) -> Option<Box<dyn EngineTurn>> {
        let thread = self.manager().get_thread(&id)?;
        Some(Box::new(Watch(thread.subscribe())))
    }

    fn prompt_folders(&self) -> BoxFuture<'_, PromptFolders> {
        Box::pin(async move {
            let Ok(home) = self.home() else {
                return PromptFolders::default();
            };
            // The project the server works in: `-C DIR`, else where it started.
            let cwd = match &self.host.options().overrides.cwd {
                Some(dir) => self.host.cwd().join(dir),
                None => self.host.cwd().clone(),
            };
            let found =
                tokio::task::spawn_blocking(move || oi_config::prompt_folders(&home, &cwd)).await;
            match found {
                Ok(Ok(folders)) => PromptFolders { folders },
                Ok(Err(e)) => {
                    tracing::warn!("cannot decide where prompt files are: {e}");
                    PromptFolders::default()
                }
                Err(e) => {
                    tracing::warn!("looking for prompt folders stopped: {e}");
                    PromptFolders::default()
                }
            }
        })
    }
}

/// A loaded thread's events, for watchers of its resource.
struct Watch(EventStream);

impl EngineTurn for Watch {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(self.0.next())
    }
}

struct CoreThread(Arc<Thread>);

impl EngineThread for CoreThread {
    fn id(&self) -> ThreadId {
        self.0.id()
    }

    fn start_turn(
        &self,
        id: String,
        prompt: String,
        options: TurnOptions,
    ) -> BoxFuture<'_, Result<Box<dyn EngineTurn>, StartTurnError>> {
        Box::pin(async move {
            let input = StartTurn::input(vec![UserInput::text(prompt)]);
            // Subscribed before the turn starts, so its first event is seen.
            let events = self.0.subscribe();
            match self.0.start_turn_with(events, id, input, options).await {
                Ok(turn) => Ok(Box::new(CoreTurn(turn)) as Box<dyn EngineTurn>),
                Err(e @ CoreError::TurnRunning { .. }) => Err(StartTurnError::Busy(e.to_string())),
                Err(e) => Err(StartTurnError::Closed(e.to_string())),
            }
        })
    }

    fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), SubmitError>> {
        Box::pin(async move {
            self.0
                .submit_with_id(sub)
                .await
                .map_err(|e| SubmitError(e.to_string()))
        })
    }

    fn is_busy(&self) -> bool {
        self.0.is_busy()
    }

    fn active_turn(&self) -> Option<String> {
        self.0.active_turn_id()
    }

    fn flush(&self) -> BoxFuture<'_, bool> {
        Box::pin(self.0.flush())
    }

    fn unsaved(&self) -> Option<String> {
        self.0.unsaved().map(|u| u.describe())
    }
}

struct CoreTurn(TurnHandle);

impl EngineTurn for CoreTurn {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(self.0.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SessionRequest;
    use oi_core::SessionSource;
    use oi_host::HostOptions;

    /// A thread started by the engine, as the store records it.
    async fn stored_source(source: SessionSource) -> SessionSource {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "model = \"m\"\nmodel_provider = \"local\"\n[model_providers.local]\nname = \"local\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        )
        .unwrap();
        let engine = CoreEngine::new(Host::new(HostOptions {
            home: Some(home.path().to_path_buf()),
            ..HostOptions::new(source)
        }));
        let req = SessionRequest {
            cwd: Some(home.path().to_path_buf()),
            ..Default::default()
        };
        let handle = engine.start_thread(req).await.unwrap();
        let id = handle.thread.id();
        engine.shutdown().await;
        let store = engine.manager().store(home.path()).unwrap();
        store.get(&id).unwrap().expect("stored").source
    }

    #[tokio::test]
    async fn threads_are_stamped_with_the_server_that_made_them() {
        assert_eq!(stored_source(SessionSource::Mcp).await, SessionSource::Mcp);
        assert_eq!(
            stored_source(SessionSource::AppServer).await,
            SessionSource::AppServer
        );
    }
}
