//! A session's skills, found again for each turn: kept in the session state, with what could
//! not be used said once. Apart from `skills` itself so the catalog knows no session.

use super::{discover_async, missing_mcp_servers};
use crate::session::Session;
use oi_config::Config;

/// Finds the skills for the turn that is starting (off the runtime; read once per turn, as
/// the project doc is) and keeps them in the session state. The `SKILL.md` files that could
/// not be used, and the MCP servers skills name that are not configured, are warned about
/// once per session.
pub(crate) async fn for_turn(sess: &Session) {
    let config = sess.state().config.clone();
    let found = discover_async(Config::clone(&config)).await;
    let turn_id = {
        let mut st = sess.state();
        st.skills = std::sync::Arc::new(found.clone());
        st.active_turn.as_ref().map(|t| t.id.clone())
    };
    let Some(turn_id) = turn_id else {
        return;
    };
    if !found.errors.is_empty() {
        sess.warn_once(&turn_id, "skill_errors", || {
            let lines: Vec<String> = found
                .errors
                .iter()
                .map(|e| format!("{}: {}", e.path.display(), e.message))
                .collect();
            format!("skills not loaded: {}", lines.join("; "))
        });
    }
    let missing: Vec<String> = found
        .enabled()
        .flat_map(|s| {
            missing_mcp_servers(s, &config)
                .into_iter()
                .map(move |m| format!("`{}` needs `{m}`", s.name))
        })
        .collect();
    if !missing.is_empty() {
        sess.warn_once(&turn_id, "skill_mcp_missing", || {
            format!(
                "skills name MCP servers that are not configured ({}); add them with `interpreter mcp add`",
                missing.join(", ")
            )
        });
    }
}
