//! What a turn runs with, fixed when it starts: the config as overrides left it (cwd,
//! policies, model, limits; shared with the session state, not copied), the harness profile
//! it resolves to, the project's AGENTS.md and the skills found. Tools and the turn loop read
//! this snapshot instead of locking the session state at every step, and an override that
//! arrives mid-turn (input with a new cwd or policy) takes effect at the next turn, never
//! half-way through this one.
//!
//! What may change during a turn stays in the session state: the history, pending answers,
//! usage, what is known about the window, and the tool catalog (MCP servers come and go,
//! `tool_search` loads schemas).

use crate::project_doc::ProjectDoc;
use oi_config::Config;

pub(crate) struct TurnContext {
    /// Shared with the session state until an override there copies it.
    pub config: std::sync::Arc<Config>,
    /// The harness profile the config resolves to (`harness = auto` picks by model).
    pub harness: oi_protocol::config_types::Harness,
    pub project_doc: Option<ProjectDoc>,
    /// The skills found when the turn started (`skills`).
    pub skills: std::sync::Arc<crate::skills::SkillsFound>,
}
