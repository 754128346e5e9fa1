//! What a turn runs with, fixed when it starts: the config as overrides left it (cwd,
//! policies, model, limits) and the project's AGENTS.md. Tools and the turn loop read this
//! snapshot instead of locking the session state and cloning the whole config at every
//! step, and an override that arrives mid-turn (input with a new cwd or policy) takes effect
//! at the next turn, never half-way through this one.
//!
//! What may change during a turn stays in the session state: the history, pending answers,
//! usage, what is known about the window, and the tool catalog (MCP servers come and go,
//! `tool_search` loads schemas).

use crate::project_doc::ProjectDoc;
use oi_config::Config;

pub(crate) struct TurnContext {
    pub config: Config,
    pub project_doc: Option<ProjectDoc>,
}
