//! `load_skill`: the tool through which the model reads a skill's instructions when it
//! decides to (progressive disclosure). Offered on every harness profile whenever a skill
//! is enabled; its output is the `SKILL.md` body, the skill's folder and files, and what it
//! needs that is missing (an MCP server not configured, or not logged in).

use super::Skill;
use crate::session::Session;
use crate::tools::call::{ToolCall, ToolOutcome, parse_args};
use oi_protocol::models::ToolSpec;
use oi_protocol::protocol::{EventMsg, SkillLoadedEvent};
use serde::Deserialize;
use serde_json::json;
use std::path::Path;

/// The tool's name.
pub(crate) const LOAD_SKILL: &str = "load_skill";
/// Files of a skill's folder named in the output, at most.
const MAX_FILES_SHOWN: usize = 40;

/// The tool's schema, when `sess`'s turn has an enabled skill.
pub(crate) fn spec(sess: &Session) -> Option<ToolSpec> {
    let ctx = sess.turn_context();
    let names: Vec<&str> = ctx.skills.enabled().map(|s| s.name.as_str()).collect();
    if names.is_empty() {
        return None;
    }
    Some(ToolSpec {
        name: LOAD_SKILL.into(),
        description: "Loads a skill: its instructions for a task, and the files and scripts in its folder. Call it before working on a task that matches a skill in the <skills> list.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as listed."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    })
}

#[derive(Deserialize)]
struct Args {
    name: String,
}

/// Runs `load_skill`: reads the skill's body afresh, announces it (`skill_loaded`), and
/// returns it with where its files are.
pub(crate) async fn handle(sess: &Session, call: &ToolCall<'_>) -> ToolOutcome {
    let args: Args = match parse_args(LOAD_SKILL, call.arguments, r#"{"name": "pdf"}"#) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let ctx = sess.turn_context();
    let wanted = args.name.trim().trim_start_matches('$');
    let Some(skill) = ctx.skills.get(wanted).cloned() else {
        let names: Vec<&str> = ctx.skills.enabled().map(|s| s.name.as_str()).collect();
        return ToolOutcome::err(format!(
            "there is no skill `{}`; the skills are: {}",
            args.name,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    match load(sess, call.turn_id, call.call_id, &skill).await {
        Ok(text) => ToolOutcome::ok(text),
        Err(e) => ToolOutcome::err(e.0),
    }
}

/// A skill whose `SKILL.md` could not be read when it was loaded: the line the user was
/// warned with, which the model is given too.
#[derive(Debug)]
pub(crate) struct Unreadable(pub String);

/// Loads `skill` for the model: reads its body afresh (bounded like any `SKILL.md`), warns
/// about what it needs that is missing, announces it (`skill_loaded`, with `call_id`) and
/// returns what the model is given. The `load_skill` tool and the up-front load of a
/// matching skill (`preload`) both come here, so both are bounded and announced alike.
pub(crate) async fn load(
    sess: &Session,
    turn_id: &str,
    call_id: &str,
    skill: &Skill,
) -> Result<String, Unreadable> {
    let ctx = sess.turn_context();
    let config = ctx.config.clone();
    let read = {
        let skill = skill.clone();
        tokio::task::spawn_blocking(move || {
            let body = super::read_body(&skill, &config)?;
            Ok::<_, super::SkillFileError>((body, folder_files(&skill.dir)))
        })
        .await
        .unwrap_or_else(|e| Err(super::SkillFileError::Stopped(e.to_string())))
    };
    let (body, files) = match read {
        Ok(r) => r,
        Err(e) => {
            let line = format!("the skill `{}` cannot be read: {e}", skill.name);
            sess.warn(turn_id, line.clone());
            return Err(Unreadable(line));
        }
    };
    let missing = super::missing_mcp_servers(skill, &ctx.config);
    let not_ready = not_ready_servers(sess, skill, &missing);
    for line in missing
        .iter()
        .map(|s| missing_line(skill, s))
        .chain(not_ready.iter().cloned())
    {
        sess.warn(turn_id, line);
    }
    sess.send(
        turn_id,
        EventMsg::SkillLoaded(SkillLoadedEvent {
            call_id: call_id.to_string(),
            name: skill.name.clone(),
            path: skill.path.clone(),
            scope: skill.scope.as_str().to_string(),
        }),
    );
    Ok(output(skill, &body, &files, &missing, &not_ready))
}

fn missing_line(skill: &Skill, server: &str) -> String {
    format!(
        "the skill `{}` uses the MCP server `{server}`, which is not configured: add it with `interpreter mcp add {server} …` (see docs/skills.md)",
        skill.name
    )
}

/// The servers `skill` names that are configured but failed to start, each with the fix
/// (`mcp login` when the server asked for a login).
fn not_ready_servers(sess: &Session, skill: &Skill, missing: &[String]) -> Vec<String> {
    let Some(mcp) = &sess.mcp else {
        return Vec::new();
    };
    let status = mcp.status();
    skill
        .mcp_servers
        .iter()
        .filter(|s| !missing.contains(s))
        .filter_map(|name| {
            let st = status.iter().find(|st| st.name == *name)?;
            let error = st.last_error.as_deref()?;
            let lower = error.to_ascii_lowercase();
            let fix = if lower.contains("login") || lower.contains("401") || lower.contains("oauth")
            {
                format!("run `interpreter mcp login {name}`")
            } else {
                "`/mcp` shows its state".to_string()
            };
            Some(format!(
                "the skill `{}` uses the MCP server `{name}`, which did not start ({error}); {fix}",
                skill.name
            ))
        })
        .collect()
}

/// How a loaded skill's text starts: `preload` finds a skill loaded before by it.
pub(crate) fn loaded_head(skill: &Skill) -> String {
    format!("Skill `{}` (folder {}).", skill.name, skill.dir.display())
}

fn output(
    skill: &Skill,
    body: &str,
    files: &[String],
    missing: &[String],
    not_ready: &[String],
) -> String {
    let mut out = format!(
        "{} Paths in it are relative to that folder.\n",
        loaded_head(skill)
    );
    if !files.is_empty() {
        out.push_str(&format!("Files: {}\n", files.join(", ")));
    }
    for server in missing {
        out.push_str(&format!(
            "Note: it uses the MCP server `{server}`, which is not configured here; do without its tools or tell the user.\n"
        ));
    }
    for line in not_ready {
        out.push_str(&format!("Note: {line}.\n"));
    }
    out.push('\n');
    out.push_str(body);
    out
}

/// The files of a skill's folder other than `SKILL.md`, relative, breadth-first, at most
/// [`MAX_FILES_SHOWN`] (then `…`). Links are named, not followed.
fn folder_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([dir.to_path_buf()]);
    let mut seen_dirs = 0;
    while let Some(d) = queue.pop_front() {
        seen_dirs += 1;
        if seen_dirs > 50 {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') {
                continue;
            }
            let path = e.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            match e.file_type() {
                Ok(t) if t.is_dir() => queue.push_back(path),
                Ok(_) if rel == super::SKILL_FILE => {}
                Ok(_) => {
                    if out.len() == MAX_FILES_SHOWN {
                        out.push("…".to_string());
                        return out;
                    }
                    out.push(rel);
                }
                Err(_) => {}
            }
        }
    }
    out
}
