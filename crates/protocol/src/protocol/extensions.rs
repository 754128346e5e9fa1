//! The events of the extension points: hook runs, skills loaded, the model's plan.

use serde::{Deserialize, Serialize};

/// `hook_started` / `hook_completed`: one run of a configured hook, the same `id` at both
/// ends (the fields of Codex's `HookRunSummary`, snake_case like every event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookRunEvent {
    /// The run's id, the same at start and end.
    pub id: String,
    /// The turn it ran in; `None` for `sessionStart`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// `sessionStart`, `preToolUse`, `postToolUse` or `stop`.
    pub event_name: String,
    /// `thread` (`sessionStart`) or `turn`.
    pub scope: String,
    /// The command line.
    pub command: String,
    /// `user`, `project` or `sessionFlags`.
    pub source: String,
    /// The config file that defines it (`None` for `-c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_path: Option<std::path::PathBuf>,
    /// Its place among the configured hooks.
    pub display_order: i64,
    /// What the hook's config says to show while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Where the run is.
    pub status: HookRunStatus,
    /// What it said: a reason it blocked with, context it gave the model, why it failed.
    #[serde(default)]
    pub entries: Vec<HookOutputEntry>,
    /// Unix milliseconds.
    pub started_at: i64,
    /// Unix milliseconds; with `hook_completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    /// How long it ran, with `hook_completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Where a hook run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookRunStatus {
    /// It runs.
    Running,
    /// It ended and let the action go on.
    Completed,
    /// It blocked the tool call (`preToolUse`).
    Blocked,
    /// It could not start, exited with an error, timed out or was stopped.
    Failed,
}

/// One thing a hook said.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookOutputEntry {
    /// What kind of thing it said.
    pub kind: HookOutputKind,
    /// What it said.
    pub text: String,
}

/// What kind of thing a hook said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutputKind {
    /// What a hook that ran wrong printed, or why it did not run.
    Error,
    /// The reason it blocked a call with.
    Stop,
    /// A reason or note it added to the output the model reads.
    Feedback,
    /// Context it gave the model (`additionalContext`).
    Context,
}

/// `skill_loaded`: which skill was loaded for the model, by which call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillLoadedEvent {
    /// The id of the model's `load_skill` call, or `preload:<name>` when the engine loaded
    /// the skill the request names as the turn started (the `minimal` harness).
    pub call_id: String,
    /// The skill's name.
    pub name: String,
    /// Its `SKILL.md`.
    pub path: std::path::PathBuf,
    /// Where it was found: `repo`, `user`, `codex` or `claude`.
    pub scope: String,
}

/// `plan_update`: Codex's shape (`explanation`, `plan: [{step, status}]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanUpdateEvent {
    /// Why the plan is what it is, when the model says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// The steps, in order.
    pub plan: Vec<PlanStep>,
}

/// One step of the model's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// What the step is.
    pub step: String,
    /// Where it stands.
    pub status: PlanStepStatus,
}

/// Where a plan step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}
