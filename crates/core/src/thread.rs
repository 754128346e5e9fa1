//! A thread handle and its actor loop.

use crate::error::CoreError;
use crate::events::EventStream;
use crate::parking::{ParkError, TurnOptions};
use crate::session::{ActiveTurn, Session};
pub(crate) mod turn_handle;

use oi_protocol::ThreadId;
use oi_protocol::models::{ContentItem, ResponseItem, Role};
use oi_protocol::protocol::{
    ElicitationResponse, EventMsg, Op, ParkedAnswer, ReviewDecision, Submission, TurnOverrides,
    TurnParkedEvent, UserMessageEvent,
};
use oi_protocol::user_input::UserInput;
use oi_thread_store::Unparked;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use turn_handle::{PendingRequest, TurnHandle};

/// One conversation. Submit [`Op`]s; watch its events with [`Thread::subscribe`] (every
/// subscriber sees every event), or start a turn with [`Thread::start_turn`] and follow it
/// with the [`TurnHandle`] it returns.
pub struct Thread {
    id: ThreadId,
    commands: mpsc::UnboundedSender<Command>,
    session: Arc<Session>,
}

/// What the actor takes: an op, or a turn start (or resume) that must know whether it
/// started.
enum Command {
    Submit(Submission),
    StartTurn {
        id: String,
        turn: StartTurn,
        options: TurnOptions,
        started: oneshot::Sender<Result<(), CoreError>>,
    },
    ResumeParked {
        turn_id: String,
        park_id: String,
        answers: Vec<ParkedAnswer>,
        resumed: oneshot::Sender<Result<(), ParkError>>,
    },
}

/// What a new turn does.
#[derive(Clone, Debug)]
pub enum StartTurn {
    /// Answer the user's input (with per-turn overrides, applied before the turn starts).
    Input {
        /// The user's message.
        items: Vec<UserInput>,
        /// Changes to the turn context from this turn on.
        overrides: TurnOverrides,
    },
    /// Summarize the history so far (`Op::Compact`).
    Compact,
}

impl StartTurn {
    /// A turn answering `items`, with no overrides.
    pub fn input(items: Vec<UserInput>) -> Self {
        Self::Input {
            items,
            overrides: TurnOverrides::default(),
        }
    }
}

impl Thread {
    /// Lets `tools` do the file reads, writes and commands its client offers, from the next
    /// tool call on; `None` gives them back to the engine.
    pub fn set_client_tools(&self, tools: Option<Arc<dyn crate::client_tools::ClientTools>>) {
        self.session().set_client_tools(tools);
    }
}

impl Thread {
    /// The session is ending (a signal, the front end quitting): a tool call its MCP server
    /// runs as a task is left running rather than cancelled when the turn is interrupted next;
    /// the thread names the task, and resuming the thread fetches its result. (Without this,
    /// an interrupt — Esc — cancels the task on the server.)
    pub fn leave_mcp_tasks_running(&self) {
        if let Some(m) = &self.session.mcp {
            m.leave_tasks_running();
        }
    }

    /// The thread's session (engine-internal).
    pub(crate) fn session(&self) -> &Arc<Session> {
        &self.session
    }

    pub(crate) fn spawn(session: Arc<Session>) -> Arc<Thread> {
        let (tx, rx) = mpsc::unbounded_channel();
        let notifier = crate::notify::Notifier::from_config(&session.settings())
            .map(|n| n.watch(session.id, session.subscribe()));
        tokio::spawn(run_actor(session.clone(), rx, notifier));
        Arc::new(Thread {
            id: session.id,
            commands: tx,
            session,
        })
    }

    /// Adds `text` to what the model reads with the next turn's input (after the user's
    /// message, as a user message of its own), and so to the thread's history and rollout
    /// from that turn on. For what the user did between turns that the model should know:
    /// a `!command` run in the terminal and its output.
    pub fn add_context_for_next_turn(&self, text: String) {
        self.session
            .state()
            .next_turn_context
            .push(ResponseItem::user_text(text));
    }

    /// Changes the settings the next turn starts with (field by field over earlier such
    /// changes; that turn's own overrides still win), and returns all that are waiting.
    /// A running turn keeps its own. Once a turn starts with them they are the thread's
    /// settings, as any turn's overrides are.
    pub fn update_next_turn_settings(&self, update: TurnOverrides) -> TurnOverrides {
        let mut st = self.session.state();
        let merged = std::mem::take(&mut st.next_turn_overrides).overlaid_with(update);
        st.next_turn_overrides = merged.clone();
        merged
    }

    /// The settings waiting for the next turn ([`Thread::update_next_turn_settings`]).
    pub fn next_turn_settings(&self) -> TurnOverrides {
        self.session.state().next_turn_overrides.clone()
    }

    /// This thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// Every event this thread publishes from now on, until it shuts down.
    pub fn subscribe(&self) -> EventStream {
        self.session.subscribe()
    }

    /// How many event streams are open on this thread.
    pub fn subscriber_count(&self) -> usize {
        self.session.subscriber_count()
    }

    /// Starts a turn with a fresh id (UUID v7). `Err(TurnRunning)` when a turn is already
    /// running (add input to it with [`Thread::steer`] instead); the handle sees every
    /// event of the turn, from its `task_started` to its terminal event.
    pub async fn start_turn(self: &Arc<Self>, turn: StartTurn) -> Result<TurnHandle, CoreError> {
        self.start_turn_with_id(oi_protocol::ids::new_id(), turn)
            .await
    }

    /// [`Thread::start_turn`] with a caller-chosen id: the turn and all its events carry it.
    pub async fn start_turn_with_id(
        self: &Arc<Self>,
        id: String,
        turn: StartTurn,
    ) -> Result<TurnHandle, CoreError> {
        // Subscribed before the actor can start the turn, so its first event is seen.
        self.start_turn_on(self.subscribe(), id, turn).await
    }

    /// [`Thread::start_turn_with_id`] followed on a stream the caller already holds (the
    /// one [`NewThread`](crate::NewThread) came with): the handle first returns what that
    /// stream holds from before the turn, so nothing published since it opened is missed.
    pub async fn start_turn_on(
        self: &Arc<Self>,
        events: EventStream,
        id: String,
        turn: StartTurn,
    ) -> Result<TurnHandle, CoreError> {
        self.start_turn_with(events, id, turn, TurnOptions::default())
            .await
    }

    /// [`Thread::start_turn_on`] with [`TurnOptions`]: e.g. a turn whose approvals park it
    /// (it publishes `turn_parked` and stops; [`Thread::resume_parked`] continues it, here
    /// or on another process sharing the thread store). A turn left parked on the thread
    /// ends (`turn_aborted`, `replaced`) before this one starts.
    pub async fn start_turn_with(
        self: &Arc<Self>,
        events: EventStream,
        id: String,
        turn: StartTurn,
        options: TurnOptions,
    ) -> Result<TurnHandle, CoreError> {
        let (started, answer) = oneshot::channel();
        self.commands
            .send(Command::StartTurn {
                id: id.clone(),
                turn,
                options,
                started,
            })
            .map_err(|_| CoreError::ThreadClosed)?;
        answer.await.map_err(|_| CoreError::ThreadClosed)??;
        Ok(TurnHandle::new(self.clone(), id, events))
    }

    /// A handle on turn `id`, already running (another front end started it, or steering
    /// input that arrived as the last turn ended did), read from `events`: subscribe before
    /// checking that the turn runs, so none of its events is missed. It ends at the turn's
    /// terminal event like a handle from [`Thread::start_turn`].
    pub fn follow_turn(self: &Arc<Self>, events: EventStream, id: String) -> TurnHandle {
        TurnHandle::new(self.clone(), id, events)
    }

    /// Resumes the thread's parked turn `turn_id` at park `park_id` (from its
    /// `turn_parked` event, or [`crate::TurnState::Parked`]) with an answer to each request
    /// it waits for. The calls run as the answers say (approved ones without asking again),
    /// then the turn goes on under the same id; the handle follows it to its end, or to its
    /// next park. Answers that do not match what the turn waits for are refused (the turn
    /// stays parked); a park is resumed once: a second resume, here or by another process,
    /// finds it [`ParkError::NotParked`]. A park past its expiry is ended instead
    /// ([`ParkError::Expired`]).
    ///
    /// The thread must be loaded here: another process's parked turn is resumed after
    /// [`crate::ThreadManager::resume_thread`] (which takes the thread's lease) or with
    /// [`crate::ThreadManager::resume_parked_turn`].
    pub async fn resume_parked(
        self: &Arc<Self>,
        turn_id: &str,
        park_id: &str,
        answers: Vec<ParkedAnswer>,
    ) -> Result<TurnHandle, ParkError> {
        // Subscribed before the actor resumes the turn, so its first event is seen.
        let events = self.subscribe();
        let (resumed, answer) = oneshot::channel();
        self.commands
            .send(Command::ResumeParked {
                turn_id: turn_id.to_string(),
                park_id: park_id.to_string(),
                answers,
                resumed,
            })
            .map_err(|_| CoreError::ThreadClosed)?;
        answer.await.map_err(|_| CoreError::ThreadClosed)??;
        Ok(TurnHandle::new(self.clone(), turn_id.to_string(), events))
    }

    /// The thread's parked turn, if its last turn waits for approvals (as its
    /// `turn_parked` event said).
    pub fn parked_turn(&self) -> Option<TurnParkedEvent> {
        self.session
            .state()
            .parked
            .as_ref()
            .map(crate::parking::event_of)
    }

    /// Adds input to the running turn (the model sees it at its next request); with no
    /// turn running, starts one, as [`Op::UserInput`] does.
    pub async fn steer(&self, items: Vec<UserInput>) -> Result<String, CoreError> {
        self.submit(Op::UserInput {
            items,
            overrides: TurnOverrides::default(),
        })
        .await
    }

    /// Answers an approval or a question of the running turn (see [`PendingRequest`]).
    pub async fn answer(
        &self,
        request: &PendingRequest,
        decision: ReviewDecision,
    ) -> Result<(), CoreError> {
        self.submit(request.answer(decision)).await.map(drop)
    }

    /// Answers an MCP server's question with content (see [`PendingRequest`]).
    pub async fn answer_elicitation(
        &self,
        request: &PendingRequest,
        response: ElicitationResponse,
    ) -> Result<(), CoreError> {
        self.submit(request.elicitation_answer(response))
            .await
            .map(drop)
    }

    /// Asks the running turn to stop (nothing happens when none runs).
    pub async fn interrupt(&self) -> Result<(), CoreError> {
        self.submit(Op::Interrupt).await.map(drop)
    }

    /// Stops the thread: interrupts a running turn, flushes the rollout, stops MCP servers,
    /// lets a running `notify` program finish (bounded). Returns once the thread's stream
    /// ended, or after `limit`; `false` only in that last case.
    pub async fn shutdown(&self, limit: std::time::Duration) -> bool {
        let mut events = self.subscribe();
        if self.submit(Op::Shutdown).await.is_err() {
            return true;
        }
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, events.next()).await {
                Err(_) => return false,
                Ok(None) => return true,
                Ok(Some(_)) => {}
            }
        }
    }

    /// Submit an op with a fresh id (UUID v7), returned.
    pub async fn submit(&self, op: Op) -> Result<String, CoreError> {
        let id = oi_protocol::ids::new_id();
        self.submit_with_id(Submission { id: id.clone(), op })
            .await?;
        Ok(id)
    }

    /// Submit with a caller-chosen id: all the events it causes carry it (a turn started
    /// this way has that id).
    pub async fn submit_with_id(&self, sub: Submission) -> Result<(), CoreError> {
        self.commands
            .send(Command::Submit(sub))
            .map_err(|_| CoreError::ThreadClosed)
    }

    /// A turn is running.
    pub fn is_busy(&self) -> bool {
        self.session.state().active_turn.is_some()
    }

    /// The id of the running turn (its submission id), if one is running.
    pub fn active_turn_id(&self) -> Option<String> {
        self.session
            .state()
            .active_turn
            .as_ref()
            .map(|t| t.id.clone())
    }

    /// Where this thread is stored (`None` for an ephemeral thread).
    pub fn rollout_path(&self) -> Option<std::path::PathBuf> {
        self.session.rollout_path()
    }

    /// Why this thread could not be saved completely (the first write that failed, e.g. the
    /// disk is full), or `None` when everything so far reached its rollout file.
    pub fn save_error(&self) -> Option<String> {
        self.session.save_error()
    }

    /// What is recorded but not in the store right now: records kept for retry (the store
    /// is down) or lost. `None` when the stored thread has everything so far. Cheap, and
    /// never waits for the store: front ends ask it when a turn ends.
    pub fn unsaved(&self) -> Option<crate::Unsaved> {
        self.session.unsaved()
    }

    /// Makes everything the thread recorded so far durable, and says whether the store has
    /// all of it. For a front end that hands out a handle to a turn (an MCP task) only once
    /// any process sharing the store can find the turn there.
    pub async fn flush(&self) -> bool {
        self.session.flush_saved("").await
    }

    /// A copy of the config the next turn starts with (cwd, policies, model). Front ends
    /// that only read a few fields want [`Thread::settings`], which copies nothing.
    pub fn config(&self) -> oi_config::Config {
        self.session.config()
    }

    /// The config the next turn starts with, shared (an override replaces it, never changes
    /// it under a reader).
    pub fn settings(&self) -> Arc<oi_config::Config> {
        self.session.settings()
    }

    /// The conversation history so far (for fork and read).
    pub fn history(&self) -> Vec<ResponseItem> {
        self.session.state().history.clone()
    }

    /// The MCP tools the model can see now (empty when no server is configured). Front ends
    /// show these in their server listings (the TUI's `/mcp`).
    pub fn mcp_tools(&self) -> Vec<oi_mcp_client::McpToolInfo> {
        self.session
            .mcp
            .as_ref()
            .map(|m| m.tools())
            .unwrap_or_default()
    }

    /// A snapshot of every MCP server: state, tools, resources, prompts, last error.
    pub fn mcp_status(&self) -> Vec<oi_mcp_client::McpServerStatus> {
        self.session
            .mcp
            .as_ref()
            .map(|m| m.status())
            .unwrap_or_default()
    }

    /// The thread's MCP connections, for front ends that read resources or get prompts for
    /// the user (the TUI's `@server:uri` mentions and `/mcp__server__prompt` commands).
    pub fn mcp_manager(&self) -> Option<Arc<oi_mcp_client::McpConnectionManager>> {
        self.session.mcp.clone()
    }

    /// The startup error of an MCP server that failed to start, if it did.
    pub fn mcp_server_error(&self, server: &str) -> Option<String> {
        self.session.mcp.as_ref()?.server_error(server)
    }
}

/// The user's input as a history item and as the event that echoes it. Local images are
/// read here (off the runtime's worker threads) and inlined as data URLs.
async fn user_item(items: &[UserInput]) -> (ResponseItem, UserMessageEvent) {
    let mut content = Vec::new();
    let mut images = Vec::new();
    let mut local_images = Vec::new();
    for i in items {
        match i {
            UserInput::Text { text } => content.push(ContentItem::InputText { text: text.clone() }),
            UserInput::Image { image_url } => {
                images.push(image_url.clone());
                content.push(ContentItem::InputImage {
                    image_url: image_url.clone(),
                });
            }
            UserInput::LocalImage { path } => {
                local_images.push(path.clone());
                match local_image_data_url(path).await {
                    Ok(url) => content.push(ContentItem::InputImage { image_url: url }),
                    Err(e) => content.push(ContentItem::InputText {
                        text: format!("[image {} could not be read: {e}]", path.display()),
                    }),
                }
            }
        }
    }
    let message = oi_protocol::user_input::joined_text(items);
    (
        ResponseItem::Message {
            role: Role::User,
            content,
        },
        UserMessageEvent {
            message,
            images: (!images.is_empty()).then_some(images),
            local_images,
            text_elements: Vec::new(),
        },
    )
}

async fn local_image_data_url(
    path: &std::path::Path,
) -> Result<String, crate::image_input::ImageReadError> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || crate::image_input::image_data_url(&path)).await?
}

fn apply_overrides(sess: &Session, o: TurnOverrides) {
    let mut st = sess.state();
    let cfg = Arc::make_mut(&mut st.config);
    if let Some(cwd) = o.cwd {
        cfg.cwd = cwd;
    }
    if let Some(a) = o.approval_policy {
        cfg.approval_policy = a;
    }
    if let Some(s) = o.sandbox_policy {
        cfg.sandbox_mode = s.mode();
        cfg.sandbox_policy = s;
    }
    if let Some(m) = o.model {
        cfg.model = m;
    }
    if let Some(e) = o.effort {
        cfg.model_reasoning_effort = Some(e);
    }
    if let Some(h) = o.harness {
        cfg.harness = h;
    }
}

async fn run_actor(
    sess: Arc<Session>,
    mut rx: mpsc::UnboundedReceiver<Command>,
    notifier: Option<JoinHandle<()>>,
) {
    let mut turn_task: Option<JoinHandle<()>> = None;
    while let Some(command) = rx.recv().await {
        let sub = match command {
            Command::StartTurn {
                id,
                turn,
                options,
                started,
            } => {
                let result = start(&sess, id, turn, options, &mut turn_task).await;
                let _ = started.send(result);
                continue;
            }
            Command::ResumeParked {
                turn_id,
                park_id,
                answers,
                resumed,
            } => {
                let result = resume(&sess, turn_id, park_id, answers, &mut turn_task).await;
                let _ = resumed.send(result);
                continue;
            }
            Command::Submit(sub) => sub,
        };
        match sub.op {
            Op::UserInput { items, overrides } => {
                user_input(&sess, sub.id, items, overrides, &mut turn_task).await;
            }
            Op::Interrupt => {
                if let Some(t) = sess.state().active_turn.as_ref() {
                    t.cancel.cancel();
                    continue;
                }
                // No turn runs: a parked one ends (its waiting calls do not run).
                let _gate = sess.turn_end_gate().await;
                if sess.state().active_turn.is_none() {
                    crate::parking::settle_gated(&sess, Unparked::Interrupted).await;
                }
            }
            Op::ExecApproval { id, decision } | Op::PatchApproval { id, decision } => {
                let waiter = sess.state().pending_approvals.remove(&id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(decision);
                    }
                    None => sess.warn(
                        &sub.id,
                        format!("no pending approval with id `{id}` (it may have timed out or the turn ended)"),
                    ),
                }
            }
            Op::ResolveElicitation {
                server_name,
                request_id,
                response,
            } => {
                let key = (server_name, request_id.to_string());
                let waiter = sess.state().pending_elicitations.remove(&key);
                if let Some(tx) = waiter {
                    let _ = tx.send(response);
                }
            }
            Op::Compact => {
                let options = TurnOptions::default();
                let started = start(
                    &sess,
                    sub.id.clone(),
                    StartTurn::Compact,
                    options,
                    &mut turn_task,
                );
                if started.await.is_err() {
                    sess.send(
                        &sub.id,
                        EventMsg::Error(oi_protocol::protocol::ErrorEvent {
                            message: "cannot compact while a turn is running; interrupt it or wait for it to finish".into(),
                            codex_error_info: Some(oi_protocol::protocol::ErrorInfo::BadRequest),
                        }),
                    );
                }
            }
            Op::Shutdown => {
                shutdown(&sess, &sub.id, turn_task.take(), notifier).await;
                return;
            }
        }
    }
    // Every handle was dropped: stop like a shutdown, without anyone to tell.
    shutdown(&sess, "", turn_task.take(), notifier).await;
}

/// `Op::UserInput`: starts a turn, or steers the running one (it picks the input up at its
/// next model request).
async fn user_input(
    sess: &Arc<Session>,
    sub_id: String,
    items: Vec<UserInput>,
    overrides: TurnOverrides,
    turn_task: &mut Option<JoinHandle<()>>,
) {
    if items.is_empty() {
        sess.warn(&sub_id, "ignored empty user input");
        return;
    }
    if sess.state().active_turn.is_none() {
        let turn = StartTurn::Input { items, overrides };
        let options = TurnOptions::default();
        let _ = start(sess, sub_id, turn, options, turn_task).await;
        return;
    }
    apply_overrides(sess, overrides);
    let (item, event) = user_item(&items).await;
    let steered = {
        let mut st = sess.state();
        st.active_turn.as_mut().map(|active| {
            active.pending_input.push(item.clone());
            active.id.clone()
        })
    };
    match steered {
        Some(turn_id) => sess.send(&turn_id, EventMsg::UserMessage(event)),
        None => {
            // The turn ended (or parked) while the images were read: this input starts
            // one, after that turn's end is published.
            let _gate = sess.turn_end_gate().await;
            settle_parked_for_new_turn(sess).await;
            let waiting = std::mem::take(&mut sess.state().next_turn_overrides);
            apply_overrides(sess, waiting);
            let options = TurnOptions::default();
            let _ = begin(sess, sub_id, Some((item, event)), options, turn_task);
        }
    }
}

/// Starts `turn` as turn `id` unless one is running (the only place a turn starts, so
/// "busy" is exactly "a turn is active").
async fn start(
    sess: &Arc<Session>,
    id: String,
    turn: StartTurn,
    options: TurnOptions,
    turn_task: &mut Option<JoinHandle<()>>,
) -> Result<(), CoreError> {
    // A turn that is ending publishes its last events before this one's first.
    let _gate = sess.turn_end_gate().await;
    if let Some(active) = sess.state().active_turn.as_ref() {
        return Err(CoreError::TurnRunning {
            id: sess.id,
            turn_id: active.id.clone(),
        });
    }
    if let StartTurn::Input { items, .. } = &turn
        && items.is_empty()
    {
        return Err(CoreError::EmptyInput);
    }
    settle_parked_for_new_turn(sess).await;
    match turn {
        StartTurn::Compact => begin(sess, id, None, options, turn_task),
        StartTurn::Input { items, overrides } => {
            let waiting = std::mem::take(&mut sess.state().next_turn_overrides);
            apply_overrides(sess, waiting.overlaid_with(overrides));
            // Only the actor starts turns, so the thread is still idle after this await.
            let input = user_item(&items).await;
            begin(sess, id, Some(input), options, turn_task)
        }
    }
}

/// A new turn is about to start (the caller holds the turn-end gate): a turn left parked
/// ends first, as replaced (or expired, if it is past its expiry), so the history the new
/// turn sends is valid.
async fn settle_parked_for_new_turn(sess: &Session) {
    let expired = {
        let st = sess.state();
        match st.parked.as_ref() {
            None => return,
            Some(p) => chrono::Utc::now().timestamp() >= p.expires_at,
        }
    };
    let how = if expired {
        Unparked::Expired
    } else {
        Unparked::Replaced
    };
    crate::parking::settle_gated(sess, how).await;
}

/// Resumes a parked turn (see [`Thread::resume_parked`]): the checks, its records and its
/// answers in `parking::resume`, then its continuation, supervised like any turn.
async fn resume(
    sess: &Arc<Session>,
    turn_id: String,
    park_id: String,
    answers: Vec<ParkedAnswer>,
    turn_task: &mut Option<JoinHandle<()>>,
) -> Result<(), ParkError> {
    let cancel = CancellationToken::new();
    let resumed = crate::parking::resume(sess, &turn_id, &park_id, answers, cancel.clone()).await?;
    let task = crate::turn::run_resumed_turn(sess.clone(), turn_id.clone(), cancel, resumed);
    *turn_task = Some(crate::supervisor::spawn_supervised(
        sess.clone(),
        turn_id,
        task,
    ));
    Ok(())
}

/// Marks the turn active and spawns it, supervised: with `input`, a turn answering it;
/// without, a compaction.
fn begin(
    sess: &Arc<Session>,
    id: String,
    input: Option<(ResponseItem, UserMessageEvent)>,
    options: TurnOptions,
    turn_task: &mut Option<JoinHandle<()>>,
) -> Result<(), CoreError> {
    let cancel = CancellationToken::new();
    let event = {
        let mut st = sess.state();
        if let Some(active) = st.active_turn.as_ref() {
            return Err(CoreError::TurnRunning {
                id: sess.id,
                turn_id: active.id.clone(),
            });
        }
        let (pending_input, event) = match input {
            Some((item, event)) => {
                // The user's message first (it names the turn), then the context that
                // waited for it.
                let mut items = vec![item];
                items.append(&mut st.next_turn_context);
                (items, Some(event))
            }
            None => (Vec::new(), None),
        };
        st.active_turn = Some(ActiveTurn {
            id: id.clone(),
            cancel: cancel.clone(),
            pending_input,
            park_approvals: options.park_approvals,
        });
        event
    };
    // The turn announces itself (`task_started`) before echoing its input, so stored turns
    // begin with their start record.
    *turn_task = Some(match event {
        Some(event) => crate::supervisor::spawn_turn(sess.clone(), id, cancel, event),
        None => {
            let task = crate::turn::run_compact_turn(sess.clone(), id.clone(), cancel);
            crate::supervisor::spawn_supervised(sess.clone(), id, task)
        }
    });
    Ok(())
}

async fn shutdown(
    sess: &Arc<Session>,
    id: &str,
    turn: Option<JoinHandle<()>>,
    notifier: Option<JoinHandle<()>>,
) {
    // A tool call the server runs as a task is left running, not cancelled: the thread names
    // the task, and resuming it fetches the result.
    if let Some(m) = &sess.mcp {
        m.leave_tasks_running();
    }
    if let Some(t) = sess.state().active_turn.as_ref() {
        t.cancel.cancel();
    }
    if let Some(task) = turn {
        let _ = task.await;
    }
    if let Some(m) = &sess.mcp {
        m.shutdown().await;
    }
    sess.flush_async(id).await;
    // The thread's writer goes now, not when the last handle drops: once shutdown is
    // confirmed, the thread's lock or lease is free for another process (a server that lets
    // a thread go, e.g. a parked one, is answered by the next server at once).
    sess.close_recorder().await;
    sess.send(id, EventMsg::ShutdownComplete);
    // The notifier ends after `shutdown_complete`, once its programs have run (bounded).
    if let Some(n) = notifier {
        let _ = n.await;
    }
    sess.close_events();
}
