//! `turn/start`, `turn/steer`, `turn/interrupt`, and the per-turn event pump.
//!
//! A thread's events have one reader at a time. `turn/start` claims the thread in the
//! reader registry shared with the MCP tools (a thread busy with a `codex`/`codex-reply`
//! call is refused with a clear error), and a pump task reads the engine's events until
//! the turn ends, fanning them out as v2 notifications. Between turns nobody reads, so
//! `codex-reply` can continue a v2 thread and `turn/start` a thread the MCP tools began.

use crate::approvals::{self, ApprovalCtx};
use crate::items::{ItemMapper, Note};
use crate::protocol::wire::{
    AccountRateLimitsUpdatedNotification, EmptyResponse, ThreadStatus,
    ThreadStatusChangedNotification, Turn, TurnStartResponse, TurnStartedNotification,
    TurnSteerResponse, to_value,
};
use crate::protocol::{V2SandboxPolicy, V2UserInput, core_input, now_unix, tri_state};
use crate::threads::core_error;
use crate::{Conn, invalid, lock, method, parse_thread_id, thread_not_found};
use oi_core::ReaderGuard;
use oi_core::Thread;
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, ReasoningEffort};
use oi_protocol::protocol::{Event, EventMsg, Op, Submission, TurnOverrides};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Reader-registry owner names of v2 turns start with this.
const V2_OWNER: &str = "v2 turn ";

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method(t, conn, "turn/start", Execution::Spawn, start);
    method(t, conn, "turn/steer", Execution::Spawn, steer);
    method(t, conn, "turn/interrupt", Execution::Spawn, interrupt);
    method(
        t,
        conn,
        "thread/compact/start",
        Execution::Spawn,
        compact_start,
    );
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartParams {
    thread_id: String,
    input: Vec<V2UserInput>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    approval_policy: Option<AskForApproval>,
    #[serde(default)]
    sandbox_policy: Option<V2SandboxPolicy>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    effort: Option<ReasoningEffort>,
    #[serde(default)]
    collaboration_mode: Option<CollaborationMode>,
}

#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct CollaborationMode {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    settings: Option<ModeSettings>,
}

/// Tri-state fields: absent keeps the current value, `null` means "the mode's default",
/// a value sets it.
#[derive(Deserialize, schemars::JsonSchema)]
pub(crate) struct ModeSettings {
    #[serde(default)]
    model: Option<String>,
    #[serde(default, deserialize_with = "tri_state", alias = "reasoningEffort")]
    #[schemars(with = "Option<String>")]
    reasoning_effort: Option<Option<ReasoningEffort>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SteerParams {
    thread_id: String,
    input: Vec<V2UserInput>,
    expected_turn_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InterruptParams {
    thread_id: String,
    turn_id: String,
}

fn live(conn: &Conn, raw_id: &str) -> Result<(ThreadId, Arc<Thread>), RpcError> {
    let id = parse_thread_id(raw_id)?;
    let thread = conn.live_thread(&id).ok_or_else(|| {
        thread_not_found(id).with_data(json!({
            "hint": "the thread is not loaded in this server; call thread/resume first"
        }))
    })?;
    Ok((id, thread))
}

fn overrides(p: &StartParams, thread: &Thread) -> Result<TurnOverrides, RpcError> {
    let cwd = match &p.cwd {
        None => None,
        Some(c) => {
            let abs = if c.is_absolute() {
                c.clone()
            } else {
                thread.config().cwd.join(c)
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

fn busy_error(id: ThreadId, owner: &str, active: Option<String>) -> RpcError {
    if owner.starts_with(V2_OWNER) {
        let active = active.unwrap_or_else(|| owner.trim_start_matches(V2_OWNER).to_string());
        invalid(format!(
            "a turn is already running on thread {id} (turn {active}); add input with turn/steer or stop it with turn/interrupt"
        ))
    } else {
        invalid(format!(
            "thread {id} is busy: MCP request {owner} (a `codex`/`codex-reply` tool call) is running a turn on it; wait for that call to finish or cancel it, then retry"
        ))
    }
}

async fn start(conn: Arc<Conn>, ctx: RequestContext, p: StartParams) -> Result<Value, RpcError> {
    if p.collaboration_mode.is_some() {
        crate::init::require_experimental(&conn, "turn/start.collaborationMode")?;
    }
    let (id, thread) = live(&conn, &p.thread_id)?;
    let items = core_input(&p.input)?;
    let overrides = overrides(&p, &thread)?;
    let (turn_id, started_at) =
        submit_turn(&conn, &ctx, id, thread, Op::UserInput { items, overrides }).await?;
    Ok(to_value(&TurnStartResponse {
        turn: Turn::in_progress(turn_id, started_at),
    }))
}

/// `thread/compact/start`: compaction as a turn of its own. Progress arrives as for any turn:
/// `turn/started`, the `contextCompaction` item, `thread/compacted`, `turn/completed`.
async fn compact_start(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: crate::protocol::wire::ThreadIdParams,
) -> Result<Value, RpcError> {
    let (id, thread) = live(&conn, &p.thread_id)?;
    submit_turn(&conn, &ctx, id, thread, Op::Compact).await?;
    Ok(to_value(&EmptyResponse {}))
}

/// Claim the thread's event stream, submit `op` as a new turn, and pump its events to the
/// client. Returns the turn id and its start time.
async fn submit_turn(
    conn: &Arc<Conn>,
    ctx: &RequestContext,
    id: ThreadId,
    thread: Arc<Thread>,
    op: Op,
) -> Result<(String, i64), RpcError> {
    let turn_id = oi_protocol::ids::new_id();
    let guard = conn
        .readers
        .claim_after_ending(id, format!("{V2_OWNER}{turn_id}"))
        .await
        .map_err(|o| busy_error(id, &o, thread.active_turn_id()))?;
    if let Some(active) = thread.active_turn_id() {
        // A turn nobody reads (e.g. its MCP call was cancelled and is still stopping).
        return Err(invalid(format!(
            "a turn is already running on thread {id} (turn {active}); wait for it to end or stop it with turn/interrupt"
        )));
    }
    thread
        .submit_with_id(Submission {
            id: turn_id.clone(),
            op,
        })
        .await
        .map_err(core_error)?;
    let started_at = now_unix();
    let pump = Pump {
        approval_timeout: thread.config().approval_timeout,
        approvals: Vec::new(),
        conn: conn.clone(),
        thread,
        thread_id: id,
        mapper: ItemMapper::new(id.to_string(), turn_id.clone()),
        reader: guard,
    };
    let sent = ctx.response_sent();
    tokio::spawn(pump.run(sent, started_at));
    Ok((turn_id, started_at))
}

async fn steer(conn: Arc<Conn>, _ctx: RequestContext, p: SteerParams) -> Result<Value, RpcError> {
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
    thread
        .submit(Op::UserInput {
            items,
            overrides: TurnOverrides::default(),
        })
        .await
        .map_err(core_error)?;
    Ok(to_value(&TurnSteerResponse {
        turn_id: p.expected_turn_id,
    }))
}

async fn interrupt(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: InterruptParams,
) -> Result<Value, RpcError> {
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
    thread.submit(Op::Interrupt).await.map_err(core_error)?;
    Ok(to_value(&EmptyResponse {}))
}

/// Reads one thread's events for the length of a v2 turn (and any turn that late
/// steering input starts right after it) and sends them as v2 notifications.
struct Pump {
    conn: Arc<Conn>,
    thread: Arc<Thread>,
    thread_id: ThreadId,
    mapper: ItemMapper,
    approval_timeout: std::time::Duration,
    /// Approval prompts of the current turn.
    approvals: Vec<tokio::task::JoinHandle<()>>,
    /// Released when the pump ends, so other front ends may read the thread.
    reader: ReaderGuard,
}

impl Pump {
    async fn send(&mut self, notes: Vec<Note>) {
        for n in notes {
            self.conn.outgoing.notify(n.method, n.params).await;
        }
    }

    async fn turn_started(&self, started_at: i64) {
        let out = &self.conn.outgoing;
        let started = TurnStartedNotification {
            thread_id: self.thread_id.to_string(),
            turn: Turn::in_progress(self.mapper.turn_id(), started_at),
        };
        out.notify("turn/started", to_value(&started)).await;
        self.status_changed(ThreadStatus::active()).await;
    }

    async fn status_changed(&self, status: ThreadStatus) {
        let note = ThreadStatusChangedNotification {
            thread_id: self.thread_id.to_string(),
            status,
        };
        self.conn
            .outgoing
            .notify("thread/status/changed", to_value(&note))
            .await;
    }

    async fn run(mut self, response_sent: CancellationToken, started_at: i64) {
        tokio::select! {
            _ = response_sent.cancelled() => {}
            _ = self.conn.shutdown.cancelled() => return,
        }
        self.mapper.started_at = Some(started_at);
        self.turn_started(started_at).await;
        let mut turn_over = CancellationToken::new();
        loop {
            let event = tokio::select! {
                biased;
                _ = self.conn.shutdown.cancelled() => {
                    // The engine's shutdown ends the turn and drains the events.
                    break;
                }
                ev = self.thread.next_event() => ev,
            };
            let event = match event {
                Ok(ev) => ev,
                Err(_) => {
                    let notes = self
                        .mapper
                        .abandon("the thread shut down before the turn finished");
                    self.send(notes).await;
                    break;
                }
            };
            if matches!(event.msg, EventMsg::ShutdownComplete) {
                let notes = self.mapper.abandon("the thread was shut down");
                self.send(notes).await;
                break;
            }
            self.side_effects(&event, &turn_over).await;
            let mut notes = self.unsaved_turn_error(&event);
            notes.extend(self.mapper.on_event(&event));
            if self.mapper.ended.is_some() {
                // Withdraw pending approvals (their `serverRequest/resolved` goes out)
                // before the turn is reported complete.
                let last = notes.pop();
                self.send(notes).await;
                turn_over.cancel();
                for task in self.approvals.drain(..) {
                    let _ = task.await;
                }
                // Steering input that arrived as the turn ended starts a new turn; nobody
                // else may read this thread while we hold it, so follow that turn too.
                let next = self
                    .thread
                    .active_turn_id()
                    .filter(|next| next != self.mapper.turn_id());
                if next.is_none() {
                    // A client that starts its next turn on `turn/completed` waits for
                    // our last notifications instead of finding the thread busy.
                    self.reader.ending();
                }
                self.send(last.into_iter().collect()).await;
                match next {
                    Some(next) => {
                        self.mapper = ItemMapper::new(self.thread_id.to_string(), next);
                        let now = now_unix();
                        self.mapper.started_at = Some(now);
                        turn_over = CancellationToken::new();
                        self.turn_started(now).await;
                    }
                    None => break,
                }
            } else {
                self.send(notes).await;
            }
        }
        turn_over.cancel();
        self.status_changed(ThreadStatus::Idle).await;
    }

    /// Approvals and rate limits: what an event asks of us beyond notifications.
    async fn side_effects(&mut self, event: &Event, turn_over: &CancellationToken) {
        let ctx = ApprovalCtx {
            conn: self.conn.clone(),
            thread: self.thread.clone(),
            thread_id: self.thread_id,
            turn_id: self.mapper.turn_id().to_string(),
            timeout: self.approval_timeout,
            turn_over: turn_over.clone(),
        };
        match &event.msg {
            EventMsg::ExecApprovalRequest(req) => {
                let notes = self.mapper.exec_approval_pending(req);
                self.send(notes).await;
                self.approvals
                    .push(tokio::spawn(approvals::exec(ctx, req.clone())));
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                let notes = self.mapper.patch_approval_pending(req);
                self.send(notes).await;
                self.approvals
                    .push(tokio::spawn(approvals::patch(ctx, req.clone())));
            }
            EventMsg::ElicitationRequest(req) => {
                self.approvals
                    .push(tokio::spawn(approvals::elicitation(ctx, req.clone())));
            }
            EventMsg::TokenCount(t) => {
                if let Some(snapshot) = &t.rate_limits {
                    let provider = self.thread.config().model_provider_id;
                    *lock(&self.conn.rate_limits) = Some((provider.clone(), snapshot.clone()));
                    let note = AccountRateLimitsUpdatedNotification {
                        rate_limits: crate::accounts::rate_limit_snapshot(
                            &provider,
                            Some(snapshot),
                        ),
                    };
                    self.conn
                        .outgoing
                        .notify("account/rateLimits/updated", to_value(&note))
                        .await;
                }
            }
            _ => {}
        }
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
