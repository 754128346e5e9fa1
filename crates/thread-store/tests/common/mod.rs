//! Helpers shared by the integration tests.
#![allow(dead_code)]
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use oi_protocol::ThreadId;
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{
    AgentMessageEvent, EventMsg, TaskCompleteEvent, TaskStartedEvent, UserMessageEvent,
};
use oi_thread_store::{RolloutItem, SessionMeta, SessionSource, ThreadStore};
use std::path::Path;
use std::time::{Duration, SystemTime};

pub fn user_message(text: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::UserMessage(UserMessageEvent {
        message: text.into(),
        images: None,
        local_images: Vec::new(),
        text_elements: Vec::new(),
    }))
}

pub fn agent_message(text: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::AgentMessage(AgentMessageEvent {
        message: text.into(),
        phase: None,
        memory_citation: None,
    }))
}

pub fn task_started(turn_id: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::TaskStarted(TaskStartedEvent {
        turn_id: turn_id.into(),
        started_at: None,
        model_context_window: None,
        model_context_window_source: None,
        collaboration_mode_kind: "default".into(),
    }))
}

pub fn task_complete(turn_id: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: turn_id.into(),
        last_agent_message: None,
        completed_at: None,
        duration_ms: None,
    }))
}

pub fn call(call_id: &str) -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::FunctionCall {
        call_id: call_id.into(),
        name: "shell".into(),
        arguments: r#"{"command":["ls"]}"#.into(),
    })
}

pub fn output(call_id: &str, text: &str) -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput {
        call_id: call_id.into(),
        output: FunctionCallOutput::text(text, true),
    })
}

/// `2026-01-01T00:00:00.000Z` plus `secs`.
pub fn ts(secs: i64) -> String {
    let t = chrono::DateTime::from_timestamp(1_767_225_600 + secs, 0).unwrap();
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

pub struct Spec<'a> {
    pub cwd: &'a str,
    pub provider: &'a str,
    pub source: SessionSource,
    pub prompt: &'a str,
    pub created_secs: i64,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Spec {
            cwd: "/work/a",
            provider: "ollama",
            source: SessionSource::Cli,
            prompt: "hello",
            created_secs: 0,
        }
    }
}

/// One complete turn: task_started, user message, reply, task_complete.
pub fn make_thread(store: &ThreadStore, spec: Spec<'_>) -> ThreadId {
    let mut meta = SessionMeta::new(spec.cwd, spec.provider, "qwen3", spec.source);
    meta.timestamp = ts(spec.created_secs);
    meta.cli_version = "0.1.0".into();
    let id = meta.id;
    let mut w = store.create(meta).unwrap();
    w.append_all(&[
        task_started("t1"),
        user_message(spec.prompt),
        RolloutItem::ResponseItem(ResponseItem::user_text(spec.prompt)),
        RolloutItem::ResponseItem(ResponseItem::assistant_text("hi")),
        agent_message("hi"),
        task_complete("t1"),
    ])
    .unwrap();
    id
}

/// Sets a rollout's mtime to `2026-01-01 + secs`; `rebuild_index` then uses it as updated_at.
pub fn set_mtime(path: &Path, secs: i64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs((1_767_225_600 + secs) as u64);
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

pub fn remove_index(home: &Path) {
    for name in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let _ = std::fs::remove_file(home.join(name));
    }
}
