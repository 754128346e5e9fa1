//! Change notifications: the stream of a 2026-07-28 `subscriptions/listen` request, and the
//! per-connection `resources/subscribe` of the `initialize` era, both fed by [`watch`].
//!
//! What is watched:
//! * a thread resource: a thread loaded in this process is followed through its events (an
//!   update for every event that changes its stored items: messages, commands, file
//!   changes, tool calls, errors, turn starts and ends — a turn's end is saved before it
//!   is published, so a client that reads on that update sees the whole turn); a thread
//!   that is not loaded here (stored, or running in another server on a shared store) is
//!   polled: its stored summary's modification time, every [`POLL`];
//! * the thread list (threads started, deleted, archived): its first page, every [`POLL`];
//! * the prompt files: their names, sizes and times, every [`POLL`];
//! * tasks (the Tasks extension's `taskIds`): their state in the store, every [`POLL`], sent
//!   whole as `notifications/tasks` (what `tasks/get` would say) when it changes, first when
//!   the subscription starts, last when the task is over.
//!
//! * the tool list: ours never changes, so `toolsListChanged` is honoured only where a
//!   program added tools that can come and go ([`crate::additions`]), from their change
//!   signal; otherwise the acknowledgement leaves it out, as the spec says for what a server
//!   does not support.

use crate::engine::{Engine, EngineTurn};
use crate::prompts;
use crate::protocol::input::TaskView;
use crate::resources::ThreadUri;
use crate::sealing::TaskHandle;
use oi_jsonrpc::{OutgoingSender, RequestId};
use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use rmcp::model::{
    NotificationMetaObject, ResourceUpdatedNotificationParam, SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often what has no events of its own is looked at again.
pub(crate) const POLL: Duration = Duration::from_secs(1);

pub(crate) const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
pub(crate) const RESOURCE_UPDATED: &str = "notifications/resources/updated";
pub(crate) const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
pub(crate) const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
pub(crate) const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// The Tasks extension's status notification.
pub(crate) const TASK_STATUS: &str = "notifications/tasks";

/// What a watch reports.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wanted {
    pub thread_list: bool,
    pub prompt_list: bool,
    /// The added tools' change signal, when tool list changes are wanted and can happen.
    pub tool_list: Option<tokio::sync::watch::Receiver<u64>>,
    /// The thread resources (their base URIs) whose updates are wanted.
    pub threads: Vec<ThreadUri>,
    /// The tasks whose status is wanted: their ids and what they stand for.
    pub tasks: Vec<(String, TaskHandle)>,
}

impl Wanted {
    /// The part of `filter` this server honours, and the filter that says so; `tools` is
    /// the change signal of a tool list that can change, if there is one.
    pub(crate) fn from_filter(
        filter: &SubscriptionFilter,
        tools: Option<tokio::sync::watch::Receiver<u64>>,
    ) -> (Wanted, SubscriptionFilter) {
        let mut threads: Vec<ThreadUri> = Vec::new();
        let mut uris = Vec::new();
        for uri in filter.resource_subscriptions.iter().flatten() {
            match ThreadUri::parse(uri) {
                Some(t) if !threads.iter().any(|w| w.id == t.id) => {
                    threads.push(t);
                    uris.push(uri.clone());
                }
                Some(_) => uris.push(uri.clone()),
                None => tracing::debug!("not subscribing to {uri}: not a resource of this server"),
            }
        }
        let wanted = Wanted {
            thread_list: filter.resources_list_changed == Some(true),
            prompt_list: filter.prompts_list_changed == Some(true),
            tool_list: tools.filter(|_| filter.tools_list_changed == Some(true)),
            threads,
            tasks: Vec::new(),
        };
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = wanted.thread_list.then_some(true);
        accepted.prompts_list_changed = wanted.prompt_list.then_some(true);
        accepted.tools_list_changed = wanted.tool_list.is_some().then_some(true);
        accepted.resource_subscriptions = (!uris.is_empty()).then_some(uris);
        (wanted, accepted)
    }
}

/// Where a watch's notifications go: a `subscriptions/listen` request's stream (tagged
/// with its id) or a connection.
#[derive(Clone)]
pub(crate) struct Sink {
    pub outgoing: OutgoingSender,
    /// The `subscriptions/listen` request's id, for `_meta.subscriptionId`.
    pub subscription: Option<RequestId>,
}

/// `notifications/subscriptions/acknowledged` params: the filter honoured, with the task
/// ids (the Tasks extension's addition to it).
#[derive(Serialize)]
struct Acknowledged {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<NotificationMetaObject>,
    notifications: AcceptedFilter,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AcceptedFilter {
    #[serde(flatten)]
    filter: SubscriptionFilter,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    task_ids: Vec<String>,
}

/// `notifications/tasks` params: the task whole.
#[derive(Serialize)]
struct TaskStatus<'a> {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<NotificationMetaObject>,
    #[serde(flatten)]
    task: &'a TaskView,
}

#[derive(Serialize)]
struct Bare {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<NotificationMetaObject>,
}

impl Sink {
    fn meta(&self) -> Option<NotificationMetaObject> {
        let id = self.subscription.as_ref()?;
        let id = serde_json::to_value(id)
            .ok()
            .and_then(|v| serde_json::from_value::<rmcp::model::RequestId>(v).ok())?;
        let mut meta = NotificationMetaObject::new();
        meta.set_subscription_id(id);
        Some(meta)
    }

    async fn send(&self, method: &str, params: impl Serialize) {
        match serde_json::to_value(params) {
            Ok(p) => {
                self.outgoing.notify(method, p).await;
            }
            Err(e) => tracing::warn!("could not encode {method}: {e}"),
        }
    }

    pub(crate) async fn acknowledge(&self, accepted: SubscriptionFilter, task_ids: Vec<String>) {
        if task_ids.is_empty() {
            let mut params = SubscriptionsAcknowledgedNotificationParams::new(accepted);
            params.meta = self.meta();
            self.send(ACKNOWLEDGED, params).await;
            return;
        }
        let params = Acknowledged {
            meta: self.meta(),
            notifications: AcceptedFilter {
                filter: accepted,
                task_ids,
            },
        };
        self.send(ACKNOWLEDGED, params).await;
    }

    async fn task(&self, task: &TaskView) {
        let params = TaskStatus {
            meta: self.meta(),
            task,
        };
        self.send(TASK_STATUS, params).await;
    }

    async fn updated(&self, uri: String) {
        let mut params = ResourceUpdatedNotificationParam::new(uri);
        params.meta = self.meta();
        self.send(RESOURCE_UPDATED, params).await;
    }

    async fn changed(&self, method: &str) {
        self.send(method, Bare { meta: self.meta() }).await;
    }
}

/// Whether an event changes what a thread's resource shows.
fn changes_the_thread(msg: &EventMsg) -> bool {
    matches!(
        msg,
        EventMsg::UserMessage(_)
            | EventMsg::AgentMessage(_)
            | EventMsg::AgentReasoning(_)
            | EventMsg::ExecCommandEnd(_)
            | EventMsg::PatchApplyEnd(_)
            | EventMsg::McpToolCallEnd(_)
            | EventMsg::Error(_)
            | EventMsg::TaskStarted(_)
            | EventMsg::TaskComplete(_)
            | EventMsg::TurnAborted(_)
            | EventMsg::ContextCompacted(_)
    )
}

/// A task watched: what it stands for and what was last sent about it.
struct WatchedTask {
    id: String,
    handle: TaskHandle,
    /// The last state sent (without its `lastUpdatedAt`, which moves by itself).
    sent: Option<serde_json::Value>,
    /// Over: nothing more to send.
    done: bool,
}

struct Watched {
    id: ThreadId,
    uri: String,
    feed: Option<Box<dyn EngineTurn>>,
    updated_at: Option<i64>,
}

/// A watch with its starting point taken: what changes after [`Watch::start`] returns is
/// reported, so a subscription is acknowledged only once it has one.
pub(crate) struct Watch {
    engine: Arc<dyn Engine>,
    list: Option<BTreeSet<ThreadId>>,
    prompt_files: Option<PromptStamp>,
    watched: Vec<Watched>,
    tasks: Vec<WatchedTask>,
    tools: Option<tokio::sync::watch::Receiver<u64>>,
}

impl Watch {
    /// Takes the current state of what `wanted` asks for.
    pub(crate) async fn start(engine: Arc<dyn Engine>, mut wanted: Wanted) -> Watch {
        // What changed before now is not news.
        let mut tools = wanted.tool_list.take();
        if let Some(t) = tools.as_mut() {
            t.mark_unchanged();
        }
        let list = if wanted.thread_list {
            Some(thread_ids(engine.as_ref()).await)
        } else {
            None
        };
        let prompt_files = if wanted.prompt_list {
            Some(prompt_stamp(engine.as_ref()).await)
        } else {
            None
        };
        let mut watched = Vec::new();
        for t in &wanted.threads {
            let feed = engine.watch_thread(t.id);
            let updated_at = summary_time(engine.as_ref(), t.id).await;
            watched.push(Watched {
                id: t.id,
                uri: t.base(),
                feed,
                updated_at,
            });
        }
        let tasks = wanted
            .tasks
            .into_iter()
            .map(|(id, handle)| WatchedTask {
                id,
                handle,
                sent: None,
                done: false,
            })
            .collect();
        Watch {
            engine,
            list,
            prompt_files,
            watched,
            tasks,
            tools,
        }
    }

    /// Sends every change to `sink` until `cancel` fires.
    pub(crate) async fn run(mut self, sink: Sink, cancel: CancellationToken) {
        let engine = self.engine.clone();
        let mut tick = tokio::time::interval(POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        // A task's state is sent at once: the subscriber learns where it stands.
        self.poll_tasks(engine.as_ref(), &sink).await;
        loop {
            let woke = tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => None,
                changed = tools_changed(&mut self.tools) => {
                    if changed {
                        sink.changed(TOOLS_LIST_CHANGED).await;
                    } else {
                        self.tools = None;
                    }
                    continue;
                }
                ev = next_event(&mut self.watched) => Some(ev),
            };
            match woke {
                Some((i, Some(msg))) => {
                    if changes_the_thread(&msg) {
                        sink.updated(self.watched[i].uri.clone()).await;
                    }
                }
                // The thread was unloaded here: look at the store from now on.
                Some((i, None)) => self.watched[i].feed = None,
                None => self.poll(engine.as_ref(), &sink).await,
            }
        }
    }

    /// Looks again at what has no events of its own.
    async fn poll(&mut self, engine: &dyn Engine, sink: &Sink) {
        if let Some(known) = &mut self.list {
            let now = thread_ids(engine).await;
            if now != *known {
                *known = now;
                sink.changed(RESOURCES_LIST_CHANGED).await;
            }
        }
        if let Some(known) = &mut self.prompt_files {
            let now = prompt_stamp(engine).await;
            if now != *known {
                *known = now;
                sink.changed(PROMPTS_LIST_CHANGED).await;
            }
        }
        for w in self.watched.iter_mut().filter(|w| w.feed.is_none()) {
            w.feed = engine.watch_thread(w.id);
            let now = summary_time(engine, w.id).await;
            if now != w.updated_at {
                w.updated_at = now;
                sink.updated(w.uri.clone()).await;
            }
        }
        self.poll_tasks(engine, sink).await;
    }

    /// Sends the state of each watched task that changed since it was last sent.
    async fn poll_tasks(&mut self, engine: &dyn Engine, sink: &Sink) {
        for t in self.tasks.iter_mut().filter(|t| !t.done) {
            let state = engine
                .turn_state(t.handle.thread, t.handle.turn.clone())
                .await;
            let Ok(Some(state)) = state else {
                continue;
            };
            let view = crate::tasks::view(&t.id, &t.handle, state);
            let mut seen = serde_json::to_value(&view).unwrap_or_default();
            if let Some(m) = seen.as_object_mut() {
                m.remove("lastUpdatedAt");
            }
            if t.sent.as_ref() != Some(&seen) {
                sink.task(&view).await;
                t.sent = Some(seen);
                t.done = view.task.status.is_terminal();
            }
        }
    }
}

/// Whether the tool list changed (`false`: its sender is gone); pending without one.
async fn tools_changed(tools: &mut Option<tokio::sync::watch::Receiver<u64>>) -> bool {
    match tools {
        Some(t) => t.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// The next event of any followed thread: `(index, Some(event))`, or `(index, None)` when
/// that thread's feed ended. Pending while no thread is followed.
async fn next_event(watched: &mut [Watched]) -> (usize, Option<EventMsg>) {
    let feeds: Vec<_> = watched
        .iter_mut()
        .enumerate()
        .filter_map(|(i, w)| {
            let feed = w.feed.as_mut()?;
            Some(Box::pin(async move {
                (i, feed.next_event().await.map(|e| e.msg))
            }))
        })
        .collect();
    if feeds.is_empty() {
        return std::future::pending().await;
    }
    futures::future::select_all(feeds).await.0
}

async fn thread_ids(engine: &dyn Engine) -> BTreeSet<ThreadId> {
    match engine.list_threads(None).await {
        Ok(page) => page.threads.iter().map(|t| t.id).collect(),
        Err(e) => {
            tracing::debug!("cannot list threads for a subscription: {e:?}");
            BTreeSet::new()
        }
    }
}

async fn summary_time(engine: &dyn Engine, id: ThreadId) -> Option<i64> {
    engine
        .thread_summary(id)
        .await
        .ok()
        .flatten()
        .map(|s| s.updated_at)
}

type PromptStamp = Vec<(
    String,
    std::path::PathBuf,
    (u64, Option<std::time::SystemTime>),
)>;

async fn prompt_stamp(engine: &dyn Engine) -> PromptStamp {
    let folders = engine.prompt_folders().await;
    tokio::task::spawn_blocking(move || prompts::prompt_fingerprint(&folders))
        .await
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_served_is_acknowledged() {
        let id = ThreadId::new();
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(true);
        filter.prompts_list_changed = Some(true);
        filter.resource_subscriptions = Some(vec![
            format!("interpreter://threads/{id}"),
            "file:///etc/passwd".into(),
        ]);
        let (wanted, accepted) = Wanted::from_filter(&filter, None);
        assert!(wanted.prompt_list && !wanted.thread_list);
        assert_eq!(wanted.threads.len(), 1);
        assert_eq!(accepted.tools_list_changed, None);
        // Tools that can change: their changes are honoured.
        let signal = tokio::sync::watch::Sender::new(0u64);
        let (wanted, accepted) = Wanted::from_filter(&filter, Some(signal.subscribe()));
        assert!(wanted.tool_list.is_some());
        assert_eq!(accepted.tools_list_changed, Some(true));
        assert_eq!(accepted.prompts_list_changed, Some(true));
        assert_eq!(
            accepted.resource_subscriptions,
            Some(vec![format!("interpreter://threads/{id}")])
        );
    }
}
