//! Skills and custom prompts in the TUI: `/skills` lists the skills the model can load,
//! `/prompts:<name> args` sends a prompt file with its arguments in place, and the slash
//! popup offers the prompt files as commands. The runner does the reading
//! (`oi_core::skills`, `oi_core::custom_prompts`); this is what is shown and sent.

use super::*;

/// The prefix of a custom prompt's command: `/prompts:<name>` (Codex's spelling).
pub const PROMPT_COMMAND_PREFIX: &str = "prompts:";

/// One skill as `/skills` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillRow {
    /// The skill's name.
    pub name: String,
    /// What it is for, from its `SKILL.md`.
    pub description: String,
    /// Where it was found (`repo`, `user`, `codex`, `claude`).
    pub scope: String,
    /// Its `SKILL.md`.
    pub path: String,
    /// Whether the model is offered it.
    pub enabled: bool,
    /// MCP servers it needs that are not configured.
    pub missing_mcp: Vec<String>,
}

impl App {
    /// Replaces the custom prompts the slash popup offers: (name, description).
    pub fn set_custom_prompts(&mut self, prompts: Vec<(String, String)>) {
        self.custom_prompts = prompts;
    }

    /// The popup's rows for the custom prompts matching what is typed after `/`.
    pub(super) fn custom_prompt_entries(&self, typed: &str) -> Vec<(String, String)> {
        self.custom_prompts
            .iter()
            .map(|(name, d)| (format!("{PROMPT_COMMAND_PREFIX}{name}"), d))
            .filter(|(command, _)| command.contains(typed))
            .map(|(command, d)| (command, format!("prompt · {d}")))
            .collect()
    }

    /// `/skills`: the skills found, then the files that were not used.
    pub fn show_skills(&mut self, rows: Vec<SkillRow>, errors: Vec<(String, String)>) {
        if rows.is_empty() && errors.is_empty() {
            self.push_info(
                "No skills",
                vec![
                    "put skill folders (each with a SKILL.md) in $OPENINTERPRETER_HOME/skills/ or a trusted project's .openinterpreter/skills/".into(),
                    "`[skills] other_agents = [\"codex\", \"claude\"]` also reads ~/.codex/skills and ~/.claude/skills".into(),
                ],
            );
            return;
        }
        let mut lines = Vec::new();
        for r in &rows {
            let off = if r.enabled { "" } else { " (off)" };
            lines.push(format!("{} · {}{off} · {}", r.name, r.scope, r.description));
            lines.push(format!("    {}", r.path));
            for server in &r.missing_mcp {
                lines.push(format!(
                    "    ⚠ needs the MCP server `{server}`, which is not configured (interpreter mcp add {server} …)"
                ));
            }
        }
        for (path, why) in &errors {
            lines.push(format!("⚠ not loaded: {path}: {why}"));
        }
        let title = format!(
            "Skills ({} the model can load with load_skill)",
            rows.iter().filter(|r| r.enabled).count()
        );
        self.push_info(&title, lines);
    }

    /// A custom prompt read and expanded by the runner: sent as the user's message, or the
    /// reason it was not.
    pub fn send_custom_prompt(
        &mut self,
        name: &str,
        text: Result<String, oi_core::custom_prompts::PromptError>,
    ) -> Vec<AppAction> {
        let text = match text {
            Ok(t) if !t.trim().is_empty() => t,
            Ok(_) => {
                self.push_error(format!("the prompt `{name}` is empty; nothing was sent"));
                return vec![];
            }
            Err(e) => {
                self.push_error(format!("{e}. It was not sent to the model."));
                return vec![];
            }
        };
        if self.is_running() {
            return vec![self.steer(text)];
        }
        vec![AppAction::Op(Op::UserInput {
            items: vec![UserInput::text(text)],
            overrides: std::mem::take(&mut self.pending_overrides),
        })]
    }
}
