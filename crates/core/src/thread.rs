//! A thread handle and its actor loop.

use crate::error::CoreError;
use crate::session::{ActiveTurn, Session};
use oi_protocol::ThreadId;
use oi_protocol::models::{ContentItem, ResponseItem, Role};
use oi_protocol::protocol::{Event, EventMsg, Op, Submission, TurnOverrides, UserMessageEvent};
use oi_protocol::user_input::UserInput;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// One conversation. Submit [`Op`]s, read [`Event`]s. Reading is single-consumer: one front
/// end task at a time should call [`Thread::next_event`].
pub struct Thread {
    id: ThreadId,
    submissions: mpsc::UnboundedSender<Submission>,
    events: Mutex<mpsc::UnboundedReceiver<Event>>,
    session: Arc<Session>,
}

impl Thread {
    pub(crate) fn spawn(
        session: Arc<Session>,
        events: mpsc::UnboundedReceiver<Event>,
    ) -> Arc<Thread> {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run_actor(session.clone(), rx));
        Arc::new(Thread {
            id: session.id,
            submissions: tx,
            events: Mutex::new(events),
            session,
        })
    }

    /// This thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// Submit an op with a fresh id (UUID v7), returned.
    pub async fn submit(&self, op: Op) -> Result<String, CoreError> {
        let id = oi_protocol::ids::new_id();
        self.submit_with_id(Submission { id: id.clone(), op })
            .await?;
        Ok(id)
    }

    /// Submit with a caller-chosen id: a turn started this way has that id, and all its
    /// events carry it.
    pub async fn submit_with_id(&self, sub: Submission) -> Result<(), CoreError> {
        self.submissions
            .send(sub)
            .map_err(|_| CoreError::ThreadClosed)
    }

    /// The next event. `Err(ThreadClosed)` once the thread has shut down and every event
    /// has been read.
    pub async fn next_event(&self) -> Result<Event, CoreError> {
        self.events
            .lock()
            .await
            .recv()
            .await
            .ok_or(CoreError::ThreadClosed)
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

    /// The current turn context (cwd, policies, model).
    pub fn config(&self) -> oi_config::Config {
        self.session.config()
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

async fn local_image_data_url(path: &std::path::Path) -> Result<String, String> {
    use base64::Engine;
    let mime = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg") | Some("jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => return Err("unsupported image type (use png, jpeg, gif or webp)".into()),
    };
    let bytes = tokio::fs::read(path).await.map_err(|e| e.to_string())?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

fn apply_overrides(sess: &Session, o: TurnOverrides) {
    let mut st = sess.state();
    let cfg = &mut st.config;
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
}

async fn run_actor(sess: Arc<Session>, mut rx: mpsc::UnboundedReceiver<Submission>) {
    let mut turn_task: Option<JoinHandle<()>> = None;
    while let Some(sub) = rx.recv().await {
        match sub.op {
            Op::UserInput { items, overrides } => {
                if items.is_empty() {
                    sess.warn(&sub.id, "ignored empty user input");
                    continue;
                }
                apply_overrides(&sess, overrides);
                let (item, event) = user_item(&items).await;
                let mut st = sess.state();
                if let Some(active) = st.active_turn.as_mut() {
                    // Steering: the running turn picks it up at its next model request.
                    active.pending_input.push(item);
                    let turn_id = active.id.clone();
                    drop(st);
                    sess.send(&turn_id, EventMsg::UserMessage(event));
                    continue;
                }
                let cancel = CancellationToken::new();
                st.active_turn = Some(ActiveTurn {
                    id: sub.id.clone(),
                    cancel: cancel.clone(),
                    pending_input: vec![item],
                });
                drop(st);
                // The turn announces itself (`task_started`) before echoing its input, so
                // stored turns begin with their start record.
                turn_task = Some(crate::supervisor::spawn_turn(
                    sess.clone(),
                    sub.id,
                    cancel,
                    event,
                ));
            }
            Op::Interrupt => {
                if let Some(t) = sess.state().active_turn.as_ref() {
                    t.cancel.cancel();
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
                let mut st = sess.state();
                if st.active_turn.is_some() {
                    drop(st);
                    sess.send(
                        &sub.id,
                        EventMsg::Error(oi_protocol::protocol::ErrorEvent {
                            message: "cannot compact while a turn is running; interrupt it or wait for it to finish".into(),
                            codex_error_info: Some(oi_protocol::protocol::ErrorInfo::BadRequest),
                        }),
                    );
                    continue;
                }
                let cancel = CancellationToken::new();
                st.active_turn = Some(ActiveTurn {
                    id: sub.id.clone(),
                    cancel: cancel.clone(),
                    pending_input: Vec::new(),
                });
                drop(st);
                let task = crate::turn::run_compact_turn(sess.clone(), sub.id.clone(), cancel);
                turn_task = Some(crate::supervisor::spawn_supervised(
                    sess.clone(),
                    sub.id,
                    task,
                ));
            }
            Op::Shutdown => {
                shutdown(&sess, &sub.id, turn_task.take()).await;
                return;
            }
        }
    }
    // Every handle was dropped: stop like a shutdown, without anyone to tell.
    shutdown(&sess, "", turn_task.take()).await;
}

async fn shutdown(sess: &Arc<Session>, id: &str, turn: Option<JoinHandle<()>>) {
    if let Some(t) = sess.state().active_turn.as_ref() {
        t.cancel.cancel();
    }
    if let Some(task) = turn {
        let _ = task.await;
    }
    if let Some(m) = &sess.mcp {
        m.shutdown().await;
    }
    sess.flush(id);
    sess.send(id, EventMsg::ShutdownComplete);
    sess.close_events();
}
