//! Record types stored in rollout files and the summaries the index returns.

use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

// A parked turn's rollout items and `RolloutItem` hold each other: a module and its child.
pub(crate) mod parked;

/// One record of a rollout file. On disk it is the `type`/`payload` pair of a
/// [`RolloutLine`]; `type` is the snake_case variant name.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", content = "payload", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)]
pub enum RolloutItem {
    /// Who created the thread, where and with what (the first line).
    SessionMeta(SessionMeta),
    /// A message, tool call or output of the model's history.
    ResponseItem(ResponseItem),
    /// The settings a turn ran with.
    TurnContext(TurnContextItem),
    /// An event the engine emitted.
    EventMsg(EventMsg),
    /// The history was compacted: from here on, the model's history is `replacement_history`
    /// (or, when a foreign writer left it out, just the summary `message`).
    Compacted(CompactedItem),
    /// The turn stopped at approvals and waits to be resumed (see [`crate::TurnParkedItem`]).
    TurnParked(parked::TurnParkedItem),
    /// A park ended: answered, expired, replaced or interrupted.
    TurnUnparked(parked::TurnUnparkedItem),
}

/// Payload of a `compacted` record (Codex's shape).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactedItem {
    /// The summary the model wrote of the conversation so far.
    pub message: String,
    /// The whole history that replaces everything before this record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_history: Option<Vec<ResponseItem>>,
}

impl RolloutItem {
    /// The `type` written on disk.
    pub fn kind(&self) -> &'static str {
        match self {
            RolloutItem::SessionMeta(_) => "session_meta",
            RolloutItem::ResponseItem(_) => "response_item",
            RolloutItem::TurnContext(_) => "turn_context",
            RolloutItem::EventMsg(_) => "event_msg",
            RolloutItem::Compacted(_) => "compacted",
            RolloutItem::TurnParked(_) => "turn_parked",
            RolloutItem::TurnUnparked(_) => "turn_unparked",
        }
    }
}

/// Whether an engine event belongs in a rollout: what a later reader needs to show the
/// conversation and rebuild its turns (messages, reasoning, turn start/end, token counts,
/// errors, and the end of each command, patch and MCP call). Streaming deltas, begin events,
/// approval prompts and session/MCP-startup chatter are not saved; MCP progress only when it
/// names the task behind a call. The writer stores whatever
/// it is given; the engine uses this to choose.
pub fn should_persist_event(ev: &EventMsg) -> bool {
    match ev {
        EventMsg::UserMessage(_)
        | EventMsg::AgentMessage(_)
        | EventMsg::AgentReasoning(_)
        | EventMsg::TokenCount(_)
        | EventMsg::TaskStarted(_)
        | EventMsg::TaskComplete(_)
        | EventMsg::TurnAborted(_)
        | EventMsg::Error(_)
        | EventMsg::ExecCommandEnd(_)
        | EventMsg::PatchApplyEnd(_)
        | EventMsg::McpToolCallEnd(_) => true,
        EventMsg::Warning(_)
        | EventMsg::StreamError(_)
        | EventMsg::SessionConfigured(_)
        | EventMsg::AgentMessageDelta(_)
        | EventMsg::AgentReasoningDelta(_)
        | EventMsg::ExecCommandBegin(_)
        | EventMsg::ExecCommandOutputDelta(_)
        | EventMsg::ExecApprovalRequest(_)
        | EventMsg::ApplyPatchApprovalRequest(_)
        | EventMsg::PatchApplyBegin(_)
        | EventMsg::McpStartupUpdate(_)
        | EventMsg::McpStartupComplete(_)
        | EventMsg::McpToolCallBegin(_)
        | EventMsg::ElicitationRequest(_)
        // The todo list is also the tool call's output, which history keeps.
        | EventMsg::PlanUpdate(_)
        // The `turn_parked` record holds the park (with what the continuation needs).
        | EventMsg::TurnParked(_)
        // The skill's text is the `load_skill` call's output, which history keeps.
        | EventMsg::SkillLoaded(_)
        // What a hook did is told live; what it said to the model is in the call's output.
        | EventMsg::HookStarted(_)
        | EventMsg::HookCompleted(_)
        | EventMsg::ShutdownComplete => false,
        EventMsg::ContextCompacted(_) => true,
        // Progress is chatter, except where it names the task behind a call: a resumed
        // thread fetches that task's result.
        EventMsg::McpToolCallProgress(p) => p.task.is_some(),
    }
}

/// One line of a rollout file: `{"timestamp":"2026-04-25T12:00:00.123Z","type":…,"payload":…}`.
/// The timestamp is UTC with milliseconds.
#[derive(Clone, Debug)]
pub struct RolloutLine {
    /// When it was written: RFC 3339 UTC with milliseconds.
    pub timestamp: String,
    /// The record.
    pub item: RolloutItem,
}

/// The outer shape of a line, with the payload left unparsed.
#[derive(Deserialize)]
pub(crate) struct RawLine<'a> {
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub payload: &'a RawValue,
}

/// Why a line could not be turned into a [`RolloutLine`].
#[derive(Debug)]
pub(crate) enum LineError {
    /// Not JSON, or not the `{timestamp,type,payload}` shape.
    Malformed(serde_json::Error),
    /// A `type` this version does not know (written by a newer or foreign writer).
    UnknownKind(String),
    /// A known `type` whose payload does not match.
    BadPayload {
        kind: String,
        error: serde_json::Error,
    },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::Malformed(e) => write!(f, "not a rollout record ({e})"),
            LineError::UnknownKind(k) => write!(f, "unknown record type `{k}`"),
            LineError::BadPayload { kind, error } => write!(f, "bad `{kind}` payload ({error})"),
        }
    }
}

impl RolloutLine {
    pub(crate) fn parse(line: &str) -> Result<RolloutLine, LineError> {
        let raw: RawLine<'_> = serde_json::from_str(line).map_err(LineError::Malformed)?;
        Self::from_raw(raw)
    }

    /// [`RolloutLine::parse`] for a reader that needs only some events: `Ok(None)` for an
    /// `event_msg` whose kind `wanted` refuses, found without parsing its payload. A payload
    /// that does not open with its `type` (not written by this program) is parsed whole.
    pub(crate) fn parse_if(
        line: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Option<RolloutLine>, LineError> {
        let raw: RawLine<'_> = serde_json::from_str(line).map_err(LineError::Malformed)?;
        if raw.kind == "event_msg"
            && let Some(kind) = leading_type(raw.payload.get())
            && !wanted(kind)
        {
            return Ok(None);
        }
        Self::from_raw(raw).map(Some)
    }

    fn from_raw(raw: RawLine<'_>) -> Result<RolloutLine, LineError> {
        let payload = raw.payload.get();
        let bad = |error| LineError::BadPayload {
            kind: raw.kind.to_string(),
            error,
        };
        let item = match raw.kind.as_ref() {
            "session_meta" => RolloutItem::SessionMeta(serde_json::from_str(payload).map_err(bad)?),
            "response_item" => {
                RolloutItem::ResponseItem(serde_json::from_str(payload).map_err(bad)?)
            }
            "turn_context" => RolloutItem::TurnContext(serde_json::from_str(payload).map_err(bad)?),
            "event_msg" => RolloutItem::EventMsg(serde_json::from_str(payload).map_err(bad)?),
            "compacted" => RolloutItem::Compacted(serde_json::from_str(payload).map_err(bad)?),
            "turn_parked" => RolloutItem::TurnParked(serde_json::from_str(payload).map_err(bad)?),
            "turn_unparked" => {
                RolloutItem::TurnUnparked(serde_json::from_str(payload).map_err(bad)?)
            }
            other => return Err(LineError::UnknownKind(other.to_string())),
        };
        Ok(RolloutLine {
            timestamp: raw.timestamp.unwrap_or_default(),
            item,
        })
    }
}

impl<'de> Deserialize<'de> for RolloutLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        RolloutLine::parse(&v.to_string()).map_err(serde::de::Error::custom)
    }
}

/// The first line of every rollout: who created the thread, where, and with what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The thread's id.
    pub id: ThreadId,
    /// The thread this one was forked from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from_id: Option<ThreadId>,
    /// Creation time, RFC 3339 UTC with milliseconds. Left empty, [`crate::ThreadStore::create`]
    /// fills it with the current time.
    #[serde(default)]
    pub timestamp: String,
    /// The working directory the thread started in.
    #[serde(default)]
    pub cwd: PathBuf,
    /// The program that wrote the file (e.g. `open_interpreter_cli`).
    #[serde(default)]
    pub originator: String,
    /// The version of the program that wrote the file.
    #[serde(default)]
    pub cli_version: String,
    /// The front end that started the thread.
    #[serde(default)]
    pub source: SessionSource,
    /// The config's id of the model provider.
    #[serde(default)]
    pub model_provider: String,
    /// The model the thread started with.
    #[serde(default)]
    pub model: String,
    /// The system prompt the thread started with, when it is not the built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_instructions: Option<String>,
    /// The working directory's git state, when it is a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
}

impl SessionMeta {
    /// A meta with a fresh id, the current time, and empty optional fields.
    pub fn new(
        cwd: impl Into<PathBuf>,
        model_provider: impl Into<String>,
        model: impl Into<String>,
        source: SessionSource,
    ) -> Self {
        SessionMeta {
            id: ThreadId::new(),
            forked_from_id: None,
            timestamp: format_timestamp(chrono::Utc::now()),
            cwd: cwd.into(),
            originator: String::new(),
            cli_version: String::new(),
            source,
            model_provider: model_provider.into(),
            model: model.into(),
            base_instructions: None,
            git: None,
        }
    }
}

/// Git state of the working directory when the thread started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitInfo {
    /// The `HEAD` commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    /// The checked-out branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The `origin` remote's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
}

impl GitInfo {
    /// The git facts of an index row (both backends keep commit, branch and origin in three
    /// nullable columns): `None` when the thread recorded none.
    pub(crate) fn from_columns(
        commit_hash: Option<String>,
        branch: Option<String>,
        repository_url: Option<String>,
    ) -> Option<GitInfo> {
        (commit_hash.is_some() || branch.is_some() || repository_url.is_some()).then_some(GitInfo {
            commit_hash,
            branch,
            repository_url,
        })
    }
}

/// Which front end started a thread.
///
/// On disk: `"cli"`, `"exec"`, `"mcp"` (the MCP server, as the reference writes it),
/// `"appServer"` (the v2 API), `"acp"` (an editor over the Agent Client Protocol),
/// `"unknown"`. Reading is lenient: `"app_server"` and
/// `"appserver"` mean [`SessionSource::AppServer`]; any other value (e.g. the reference's
/// `"vscode"` or `{"subagent":…}`) reads as [`SessionSource::Unknown`] instead of failing
/// the whole line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SessionSource {
    /// The interactive terminal UI.
    Cli,
    /// `interpreter exec`, non-interactive.
    Exec,
    /// The MCP server.
    Mcp,
    /// The v2 API (`interpreter app-server`).
    AppServer,
    /// `interpreter acp`: an editor.
    Acp,
    /// A source this version does not know.
    #[default]
    Unknown,
}

impl SessionSource {
    /// Every source, in declaration order.
    pub const ALL: [SessionSource; 6] = [
        SessionSource::Cli,
        SessionSource::Exec,
        SessionSource::Mcp,
        SessionSource::AppServer,
        SessionSource::Acp,
        SessionSource::Unknown,
    ];

    /// The on-disk (and index) spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            SessionSource::Cli => "cli",
            SessionSource::Exec => "exec",
            SessionSource::Mcp => "mcp",
            SessionSource::AppServer => "appServer",
            SessionSource::Acp => "acp",
            SessionSource::Unknown => "unknown",
        }
    }

    /// The v2 API spelling: the MCP server shows as `"appServer"`, as in the reference, and
    /// an editor's session as `"vscode"`, the reference's kind for IDE sessions.
    pub fn as_v2_str(&self) -> &'static str {
        match self {
            SessionSource::Mcp | SessionSource::AppServer => "appServer",
            SessionSource::Acp => "vscode",
            other => other.as_str(),
        }
    }

    fn from_lenient(s: &str) -> SessionSource {
        match s {
            "cli" => SessionSource::Cli,
            "exec" => SessionSource::Exec,
            "mcp" => SessionSource::Mcp,
            "appServer" | "app_server" | "appserver" => SessionSource::AppServer,
            "acp" => SessionSource::Acp,
            _ => SessionSource::Unknown,
        }
    }
}

impl fmt::Display for SessionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SessionSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cli" | "exec" | "mcp" | "appServer" | "app_server" | "appserver" | "acp"
            | "unknown" => Ok(SessionSource::from_lenient(s)),
            other => Err(format!(
                "unknown session source `{other}`; expected one of: cli, exec, mcp, appServer, acp, unknown"
            )),
        }
    }
}

impl Serialize for SessionSource {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SessionSource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            S(String),
            Other(IgnoredAny),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::S(s) => SessionSource::from_lenient(&s),
            Raw::Other(_) => SessionSource::Unknown,
        })
    }
}

/// The settings a turn ran with, written before the turn's first model request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnContextItem {
    /// The turn's id (empty in files written before turns had ids).
    #[serde(default)]
    pub turn_id: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// When the agent asked before acting.
    pub approval_policy: AskForApproval,
    /// The confinement commands ran under.
    pub sandbox_policy: SandboxPolicy,
    /// The model the turn was sent to.
    pub model: String,
    /// The reasoning effort asked for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<ReasoningEffort>,
}

/// One thread as the index knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSummary {
    /// The thread's id.
    pub id: ThreadId,
    /// Its rollout file.
    pub path: PathBuf,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds: the rollout file's last modification as last indexed.
    pub updated_at: i64,
    /// The working directory it started in.
    pub cwd: PathBuf,
    /// The config's id of its model provider.
    pub model_provider: String,
    /// The model it started with.
    pub model: String,
    /// The front end that started it.
    pub source: SessionSource,
    /// The first user message (truncated), or empty if the thread has none yet.
    pub preview: String,
    /// The name the user gave it, if any.
    pub name: Option<String>,
    /// Whether it is archived (hidden from the default list).
    pub archived: bool,
    /// The thread it was forked from, if any.
    pub forked_from_id: Option<ThreadId>,
    /// The version of the program that created it.
    pub cli_version: String,
    /// Its working directory's git state at the start.
    pub git: Option<GitInfo>,
}

impl ThreadSummary {
    /// The user-given name if any, else the preview.
    pub fn title(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.preview)
    }
}

/// Which timestamp [`crate::ThreadStore::list`] orders by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortKey {
    /// Creation time.
    CreatedAt,
    /// Most recent activity (the default).
    #[default]
    UpdatedAt,
}

/// What to list. `Default` is: first page, 25 threads, most recently updated first,
/// not archived, no other filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListQuery {
    /// `next_cursor` of a previous page with the same sort key and direction.
    pub cursor: Option<String>,
    /// Clamped to 1..=100.
    pub limit: usize,
    /// The timestamp to order by.
    pub sort_key: SortKey,
    /// Newest first when true.
    pub descending: bool,
    /// Only threads started in one of these directories (exact path match).
    /// `None` or empty: any.
    pub cwd: Option<Vec<PathBuf>>,
    /// `None` or empty: any.
    pub model_providers: Option<Vec<String>>,
    /// `None` or empty: every source.
    pub sources: Option<Vec<SessionSource>>,
    /// `None` and `Some(false)`: only threads that are not archived; `Some(true)`: only archived.
    pub archived: Option<bool>,
    /// Case-insensitive (ASCII) substring of the preview or the name.
    pub search: Option<String>,
}

impl ListQuery {
    /// Threads per page when the query does not say.
    pub const DEFAULT_LIMIT: usize = 25;
    /// The most threads one page holds.
    pub const MAX_LIMIT: usize = 100;
}

impl Default for ListQuery {
    fn default() -> Self {
        ListQuery {
            cursor: None,
            limit: Self::DEFAULT_LIMIT,
            sort_key: SortKey::UpdatedAt,
            descending: true,
            cwd: None,
            model_providers: None,
            sources: None,
            archived: None,
            search: None,
        }
    }
}

/// One page of [`crate::ThreadStore::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadPage {
    /// The page's threads, in the query's order.
    pub data: Vec<ThreadSummary>,
    /// Pass back as [`ListQuery::cursor`] for the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// The `type` of a JSON object written as `{"type":"…",…}` (how this program writes an
/// event's payload), read without parsing the rest; `None` for any other layout.
fn leading_type(payload: &str) -> Option<&str> {
    let rest = payload.strip_prefix("{\"type\":\"")?;
    let end = rest.find(['"', '\\'])?;
    (rest.as_bytes()[end] == b'"').then(|| &rest[..end])
}

/// `2026-04-25T12:00:00.123Z`
pub(crate) fn format_timestamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
