//! `turn/start`, `turn/steer`, `turn/interrupt`, and the pump that maps a turn's events.
//!
//! `turn/start` asks the engine to start a turn (refused when one is running, whoever
//! started it: a v2 client, another connection, a `codex`/`codex-reply` call) and the
//! connection's listener of the thread ([`listener`]) follows it on the thread's
//! published events, a [`Pump`] fanning them out as v2 notifications. `thread/resume` of a
//! thread whose turn is running follows that turn the same way, so a second connection
//! sees a running turn to its end.

use crate::approvals::{self, ApprovalCtx};
use crate::convert::{core_input, now_unix};
use crate::core_error;
use crate::items::{ItemMapper, Note};
use crate::protocol::methods as m;
use crate::protocol::turn::{TurnInterruptParams, TurnStartParams, TurnSteerParams};
use crate::protocol::wire::{
    AccountRateLimitsUpdatedNotification, EmptyResponse, ThreadStatus,
    ThreadStatusChangedNotification, Turn, TurnStartResponse, TurnStartedNotification,
    TurnSteerResponse,
};
use crate::{Conn, invalid, lock, method, parse_thread_id, thread_not_found};
use listener::{Follow, Start};
use oi_core::{
    CoreError, Driven, EventStream, PendingRequest, StartTurn, Stop, Thread, TurnFrontEnd,
    TurnHandle, drive,
};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use oi_protocol::config_types::ReasoningEffort;
use oi_protocol::protocol::{Event, EventMsg, TurnOverrides};
use serde_json::json;
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

// A connection's listener of a thread exists to pump the turns it follows.
pub(crate) mod listener;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::TurnStart, _, _>(t, conn, Execution::Spawn, start);
    method::<m::TurnSteer, _, _>(t, conn, Execution::Spawn, steer);
    method::<m::TurnInterrupt, _, _>(t, conn, Execution::Spawn, interrupt);
    method::<m::ThreadCompactStart, _, _>(t, conn, Execution::Spawn, compact_start);
}

pub(crate) fn live(conn: &Conn, raw_id: &str) -> Result<(ThreadId, Arc<Thread>), RpcError> {
    let id = parse_thread_id(raw_id)?;
    let thread = conn.live_thread(&id).ok_or_else(|| {
        thread_not_found(id).with_data(json!({
            "hint": "the thread is not loaded in this server; call thread/resume first"
        }))
    })?;
    Ok((id, thread))
}

fn overrides(p: &TurnStartParams, thread: &Thread) -> Result<TurnOverrides, RpcError> {
    let cwd = match &p.cwd {
        None => None,
        Some(c) => {
            let abs = if c.is_absolute() {
                c.clone()
            } else {
                thread.settings().cwd.join(c)
            };
            let abs = abs.canonicalize().map_err(|e| {
                invalid(format!(
                    "cwd {} is not usable: {e}; pass an existing directory",
                    abs.display()
                ))
            })?;
            Some(abs)
        }
    };
    let mut o = TurnOverrides {
        cwd,
        approval_policy: p.approval_policy,
        sandbox_policy: p.sandbox_policy.clone().map(Into::into),
        model: p.model.clone(),
        effort: p.effort,
        harness: None,
    };
    if let Some(mode) = &p.collaboration_mode {
        let preset_effort = match mode.mode.as_deref() {
            Some("plan") => Some(ReasoningEffort::Medium),
            _ => None,
        };
        let settings = mode.settings.as_ref();
        if let Some(m) = settings.and_then(|s| s.model.clone()) {
            o.model = Some(m);
        }
        match settings.and_then(|s| s.reasoning_effort) {
            Some(Some(e)) => o.effort = Some(e),
            // `null`: the mode's own default.
            Some(None) => o.effort = o.effort.or(preset_effort),
            None => o.effort = o.effort.or(preset_effort),
        }
    }
    Ok(o)
}

fn start_error(e: CoreError) -> RpcError {
    match e {
        CoreError::TurnRunning { id, turn_id } => invalid(format!(
            "a turn is already running on thread {id} (turn {turn_id}); add input with turn/steer, stop it with turn/interrupt, or wait for it to end"
        )),
        other => core_error(other),
    }
}

async fn start(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: TurnStartParams,
) -> Result<TurnStartResponse, RpcError> {
    if p.collaboration_mode.is_some() {
        crate::init::require_experimental(&conn, "turn/start.collaborationMode")?;
    }
    let (_, thread) = live(&conn, &p.thread_id)?;
    let items = core_input(&p.input)?;
    let overrides = overrides(&p, &thread)?;
    let (turn_id, started_at) = start_input(&conn, &ctx, thread, items, overrides).await?;
    Ok(TurnStartResponse {
        turn: Turn::in_progress(turn_id, started_at),
    })
}

/// Starts a turn answering `items` with `overrides` (over the settings
/// `thread/settings/update` left for the thread's next turn, which the engine applies).
pub(crate) async fn start_input(
    conn: &Arc<Conn>,
    ctx: &RequestContext,
    thread: Arc<Thread>,
    items: Vec<oi_protocol::user_input::UserInput>,
    overrides: TurnOverrides,
) -> Result<(String, i64), RpcError> {
    let turn = StartTurn::Input { items, overrides };
    submit_turn(conn, ctx, thread, turn).await
}

/// `thread/compact/start`: compaction as a turn of its own. Progress arrives as for any turn:
/// `turn/started`, the `contextCompaction` item, `thread/compacted`, `turn/completed`.
async fn compact_start(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: crate::protocol::wire::ThreadIdParams,
) -> Result<EmptyResponse, RpcError> {
    let (_, thread) = live(&conn, &p.thread_id)?;
    submit_turn(&conn, &ctx, thread, StartTurn::Compact).await?;
    Ok(EmptyResponse {})
}

/// Starts `turn` on the thread; the connection's listener of the thread reports it (asked
/// first, so it reads none of the turn's events before it knows to report them). Returns
/// the turn id and its start time.
async fn submit_turn(
    conn: &Arc<Conn>,
    ctx: &RequestContext,
    thread: Arc<Thread>,
    turn: StartTurn,
) -> Result<(String, i64), RpcError> {
    let turn_id = oi_protocol::ids::new_id();
    let (started, start) = oneshot::channel();
    let follow = Follow {
        turn_id: turn_id.clone(),
        start: Start::Starting(start),
        answers: true,
        response_sent: ctx.response_sent(),
    };
    conn.listeners.follow(conn, &thread, follow);
    // The listener follows the turn on its own subscription; this handle is not needed.
    let handle = thread.start_turn_with_id(turn_id.clone(), turn).await;
    let started_at = now_unix();
    let _ = started.send(handle.is_ok().then_some(started_at));
    handle.map_err(start_error)?;
    Ok((turn_id, started_at))
}

/// `thread/resume` of a thread with a running turn: this connection follows that turn
/// from here to its end (what happened before is in the resumed thread's turns), unless it
/// follows a turn of the thread already.
pub(crate) fn follow_running_turn(conn: &Arc<Conn>, ctx: &RequestContext, thread: Arc<Thread>) {
    let Some(turn_id) = thread.active_turn_id() else {
        return;
    };
    if conn.listeners.follows(thread.id()) {
        return;
    }
    let follow = Follow {
        turn_id,
        start: Start::Running { since: now_unix() },
        answers: false,
        response_sent: ctx.response_sent(),
    };
    conn.listeners.follow(conn, &thread, follow);
}

async fn steer(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: TurnSteerParams,
) -> Result<TurnSteerResponse, RpcError> {
    if p.expected_turn_id.trim().is_empty() {
        return Err(invalid("expectedTurnId must not be empty"));
    }
    let items = core_input(&p.input)?;
    let (_, thread) = live(&conn, &p.thread_id)?;
    match thread.active_turn_id() {
        None => return Err(invalid("no active turn to steer")),
        Some(active) if active != p.expected_turn_id => {
            return Err(invalid(format!(
                "expected active turn id `{}` but found `{active}`",
                p.expected_turn_id
            )));
        }
        Some(_) => {}
    }
    // While a turn runs, user input joins it (the engine's steering).
    let input_id = thread.steer(items).await.map_err(core_error)?;
    conn.listeners.steered(input_id);
    Ok(TurnSteerResponse {
        turn_id: p.expected_turn_id,
    })
}

async fn interrupt(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: TurnInterruptParams,
) -> Result<EmptyResponse, RpcError> {
    let (id, thread) = live(&conn, &p.thread_id)?;
    match thread.active_turn_id() {
        Some(active) if active == p.turn_id => {}
        Some(active) => {
            return Err(invalid(format!(
                "turn `{}` is not running on thread {id}; the running turn is `{active}`",
                p.turn_id
            )));
        }
        None => {
            return Err(invalid(format!(
                "turn `{}` is not running on thread {id}; no turn is running",
                p.turn_id
            )));
        }
    }
    thread.interrupt().await.map_err(core_error)?;
    Ok(EmptyResponse {})
}

/// Follows one thread's events for the length of a v2 turn (and any turn that late
/// steering input starts right after it) and sends them as v2 notifications.
pub(crate) struct Pump {
    conn: Arc<Conn>,
    thread: Arc<Thread>,
    thread_id: ThreadId,
    mapper: ItemMapper,
    approval_timeout: std::time::Duration,
    /// Approval prompts of the current turn.
    approvals: Vec<tokio::task::JoinHandle<()>>,
    /// Whether this connection answers the turn's approvals: the one that started it does;
    /// one that resumed the thread mid-turn only watches.
    pub(crate) answers: bool,
    /// Cancelled when the current turn is over: withdraws its approval prompts.
    turn_over: CancellationToken,
    /// What follows the turn `drive` stopped following; `None` while it runs.
    after: Option<After>,
}

/// What a pump does once it stops following a turn.
enum After {
    /// The turn was reported complete and the thread idle: nothing more.
    Done,
    /// Steering input that arrived as the turn ended started turn `0`: follow it too.
    Next(String),
    /// The thread went away (the turn was reported failed): report the thread idle.
    Closed,
}

impl Pump {
    pub(crate) fn new(
        conn: &Arc<Conn>,
        thread: Arc<Thread>,
        turn_id: String,
        started_at: i64,
    ) -> Self {
        let thread_id = thread.id();
        let mut mapper = ItemMapper::new(thread_id.to_string(), turn_id);
        mapper.started_at = Some(started_at);
        Self {
            approval_timeout: thread.settings().approval_timeout,
            approvals: Vec::new(),
            conn: conn.clone(),
            thread,
            thread_id,
            mapper,
            answers: true,
            turn_over: CancellationToken::new(),
            after: None,
        }
    }

    async fn send(&mut self, notes: Vec<Note>) {
        for n in notes {
            self.conn.outgoing.send(n).await;
        }
    }

    async fn turn_started(&self, started_at: i64) {
        let out = &self.conn.outgoing;
        let started = TurnStartedNotification {
            thread_id: self.thread_id.to_string(),
            turn: Turn::in_progress(self.mapper.turn_id(), started_at),
        };
        out.send(Note::of::<m::TurnStarted>(&started)).await;
        self.status_changed(ThreadStatus::active()).await;
    }

    async fn status_changed(&self, status: ThreadStatus) {
        let note = ThreadStatusChangedNotification {
            thread_id: self.thread_id.to_string(),
            status,
        };
        self.conn
            .outgoing
            .send(Note::of::<m::ThreadStatusChanged>(&note))
            .await;
    }

    /// Follows `turn` with `oi_core::drive` (the pump only maps), then any turn steering
    /// input started as it ended; returns the stream it read, to listen on.
    pub(crate) async fn follow(
        mut self,
        mut turn: TurnHandle,
        response_sent: CancellationToken,
    ) -> EventStream {
        tokio::select! {
            _ = response_sent.cancelled() => {}
            _ = self.conn.shutdown.cancelled() => return turn.into_events(),
        }
        let started_at = self.mapper.started_at.unwrap_or_else(now_unix);
        self.turn_started(started_at).await;
        loop {
            let driven = drive(&mut turn, &mut self).await;
            match self.after.take() {
                Some(After::Done) => return turn.into_events(),
                Some(After::Next(next)) => {
                    self.mapper = ItemMapper::new(self.thread_id.to_string(), next.clone());
                    let now = now_unix();
                    self.mapper.started_at = Some(now);
                    self.turn_over = CancellationToken::new();
                    self.turn_started(now).await;
                    turn = self.thread.follow_turn(turn.into_events(), next);
                }
                Some(After::Closed) => break,
                // The connection is shutting down: the engine's shutdown ends the turn.
                None if driven == Driven::Abandoned => break,
                None => {
                    let notes = self
                        .mapper
                        .abandon("the thread shut down before the turn finished");
                    self.send(notes).await;
                    break;
                }
            }
        }
        self.turn_over.cancel();
        self.status_changed(ThreadStatus::Idle).await;
        turn.into_events()
    }

    /// The turn's end, reported: approvals withdrawn (their `serverRequest/resolved` goes
    /// out) before the turn is reported complete, and what follows it.
    async fn turn_ended(&mut self, mut notes: Vec<Note>) -> After {
        let last = notes.pop();
        self.send(notes).await;
        self.turn_over.cancel();
        for task in self.approvals.drain(..) {
            let _ = task.await;
        }
        // Steering input that arrived as the turn ended starts a new turn of its own
        // (nobody called turn/start for it): follow that turn too.
        let next = self
            .thread
            .active_turn_id()
            .filter(|next| next != self.mapper.turn_id())
            .filter(|next| self.conn.listeners.take_steered(next));
        if next.is_none() {
            // Codex's order: the thread is idle before its turn is reported complete, so a
            // client reacting to `turn/completed` already sees it idle.
            self.status_changed(ThreadStatus::Idle).await;
        }
        self.send(last.into_iter().collect()).await;
        next.map_or(After::Done, After::Next)
    }

    fn approval_ctx(&self) -> ApprovalCtx {
        ApprovalCtx {
            conn: self.conn.clone(),
            thread: self.thread.clone(),
            thread_id: self.thread_id,
            turn_id: self.mapper.turn_id().to_string(),
            timeout: self.approval_timeout,
            turn_over: self.turn_over.clone(),
        }
    }

    /// Approval items and rate limits: what an event shows beyond the mapper's notes.
    async fn side_effects(&mut self, event: &Event) {
        match &event.msg {
            EventMsg::ExecApprovalRequest(req) => {
                let notes = self.mapper.exec_approval_pending(req);
                self.send(notes).await;
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                let notes = self.mapper.patch_approval_pending(req);
                self.send(notes).await;
            }
            EventMsg::TokenCount(t) => {
                if let Some(snapshot) = &t.rate_limits {
                    let provider = self.thread.settings().model_provider_id.clone();
                    *lock(&self.conn.rate_limits) = Some((provider.clone(), snapshot.clone()));
                    let note = AccountRateLimitsUpdatedNotification {
                        rate_limits: crate::accounts::rate_limit_snapshot(
                            &provider,
                            Some(snapshot),
                        ),
                    };
                    self.conn
                        .outgoing
                        .send(Note::of::<m::AccountRateLimitsUpdated>(&note))
                        .await;
                }
            }
            _ => {}
        }
    }
}

impl TurnFrontEnd for Pump {
    async fn stop_requested(&mut self) -> Stop {
        self.conn.shutdown.cancelled().await;
        Stop::Abandon
    }

    async fn on_event(&mut self, _turn: &TurnHandle, event: &Event) -> Option<Stop> {
        if matches!(event.msg, EventMsg::ShutdownComplete) {
            let notes = self.mapper.abandon("the thread was shut down");
            self.send(notes).await;
            self.after = Some(After::Closed);
            return Some(Stop::Abandon);
        }
        self.side_effects(event).await;
        let mut notes = self.unsaved_turn_error(event);
        notes.extend(self.mapper.on_event(event));
        if self.mapper.ended.is_none() {
            self.send(notes).await;
            return None;
        }
        self.after = Some(self.turn_ended(notes).await);
        Some(Stop::Abandon)
    }

    async fn on_request(&mut self, _turn: &TurnHandle, _request: PendingRequest, event: &Event) {
        if !self.answers {
            return;
        }
        let ctx = self.approval_ctx();
        let task = match &event.msg {
            EventMsg::ExecApprovalRequest(req) => tokio::spawn(approvals::exec(ctx, req.clone())),
            EventMsg::ApplyPatchApprovalRequest(req) => {
                tokio::spawn(approvals::patch(ctx, req.clone()))
            }
            EventMsg::ElicitationRequest(req) => {
                tokio::spawn(approvals::elicitation(ctx, req.clone()))
            }
            _ => return,
        };
        self.approvals.push(task);
    }
}

impl Pump {
    /// At the end of a turn that is not (completely) in the thread store (the database went
    /// away, the thread's lease was taken over): an `error` first, so the turn completes as
    /// `failed` with that message instead of `completed` while the store lacks it.
    fn unsaved_turn_error(&mut self, event: &Event) -> Vec<Note> {
        if !matches!(event.msg, EventMsg::TaskComplete(_)) {
            return Vec::new();
        }
        let Some(unsaved) = self.thread.unsaved() else {
            return Vec::new();
        };
        let message = format!(
            "the turn finished, but thread {} is not saved completely in its thread store: {}",
            self.thread_id,
            unsaved.describe()
        );
        tracing::warn!("{message}");
        // A turn that failed already says why (a store that stopped answering stops the turn
        // with its own error): that message stays the turn's.
        if self.mapper.failed() {
            return Vec::new();
        }
        let error = Event {
            id: event.id.clone(),
            msg: EventMsg::Error(oi_protocol::protocol::ErrorEvent {
                message,
                codex_error_info: None,
            }),
        };
        self.mapper.on_event(&error)
    }
}
