//! Human-readable progress for headless runs (stderr), one line per interesting event.

use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{EventMsg, McpStartupStatus, PlanStepStatus};
use std::io::Write;

/// How the model's reasoning is shown (`hide_agent_reasoning`, `show_raw_agent_reasoning`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ReasoningDisplay {
    /// The first line of each reasoning block (the default).
    #[default]
    FirstLine,
    /// The whole text.
    Full,
    /// Nothing.
    Hidden,
}

impl ReasoningDisplay {
    pub(crate) fn from_config(config: &oi_config::Config) -> Self {
        if config.hide_agent_reasoning {
            Self::Hidden
        } else if config.show_raw_agent_reasoning {
            Self::Full
        } else {
            Self::FirstLine
        }
    }

    /// Whether a reasoning event is shown at all (also decides `exec --json` output).
    pub(crate) fn shows(&self, msg: &EventMsg) -> bool {
        !(*self == Self::Hidden
            && matches!(
                msg,
                EventMsg::AgentReasoning(_) | EventMsg::AgentReasoningDelta(_)
            ))
    }
}

pub(crate) struct HumanRenderer {
    err: std::io::Stderr,
    reasoning: ReasoningDisplay,
}

impl HumanRenderer {
    pub(crate) fn new(reasoning: ReasoningDisplay) -> Self {
        Self {
            err: std::io::stderr(),
            reasoning,
        }
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.err.lock(), "{s}");
    }

    pub(crate) fn render(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::SessionConfigured(e) => self.line(&format!(
                "[interpreter] model {} via {} · cwd {} · sandbox {} · approvals {}",
                e.model,
                e.model_provider_id,
                e.cwd.display(),
                e.sandbox_policy.mode(),
                e.approval_policy
            )),
            EventMsg::McpStartupUpdate(u) => match &u.status {
                McpStartupStatus::Starting => self.line(&format!("[mcp] {} starting", u.server)),
                McpStartupStatus::Ready => self.line(&format!("[mcp] {} ready", u.server)),
                // One line: a headless run must say why a server's tools are not offered.
                McpStartupStatus::Failed { error } => self.line(&format!(
                    "[mcp] {} failed, its tools are not offered: {}",
                    u.server,
                    one_line(error, 400)
                )),
                McpStartupStatus::Cancelled => self.line(&format!("[mcp] {} cancelled", u.server)),
            },
            EventMsg::AgentReasoning(r) => match self.reasoning {
                ReasoningDisplay::Hidden => {}
                ReasoningDisplay::FirstLine => {
                    let first = r.text.lines().next().unwrap_or_default();
                    self.line(&format!("[thinking] {first}"));
                }
                ReasoningDisplay::Full => self.line(&format!("[thinking] {}", r.text.trim_end())),
            },
            EventMsg::AgentMessage(m) => self.line(&format!("[agent] {}", m.message)),
            EventMsg::ExecCommandBegin(b) => {
                self.line(&format!("[exec] $ {}", shell_join(&b.command)))
            }
            EventMsg::ExecCommandEnd(e) => self.line(&format!(
                "[exec] exit {} in {:.1}s",
                e.exit_code,
                e.duration.as_millis() as f64 / 1000.0
            )),
            EventMsg::PatchApplyEnd(p) => {
                let files: Vec<String> =
                    p.changes.keys().map(|k| k.display().to_string()).collect();
                let verb = if p.success { "applied" } else { "failed" };
                self.line(&format!("[patch] {verb}: {}", files.join(", ")));
            }
            EventMsg::McpToolCallBegin(c) => self.line(&format!(
                "[mcp] calling {}.{}",
                c.invocation.server, c.invocation.tool
            )),
            EventMsg::McpToolCallEnd(c) => self.line(&format!(
                "[mcp] {}.{} {}",
                c.invocation.server,
                c.invocation.tool,
                if c.result.is_ok() { "done" } else { "failed" }
            )),
            EventMsg::Warning(w) => self.line(&format!("[warning] {}", w.message)),
            EventMsg::StreamError(s) => self.line(&format!("[retry] {}", s.message)),
            EventMsg::SkillLoaded(s) => {
                self.line(&format!("[skill] loaded {} ({})", s.name, s.path.display()))
            }
            EventMsg::ContextCompacted(c) => self.line(&format!(
                "[context] conversation compacted to fit the model's window (~{} → ~{} tokens)",
                c.tokens_before.unwrap_or(0),
                c.tokens_after.unwrap_or(0)
            )),
            EventMsg::PlanUpdate(p) => {
                for step in &p.plan {
                    let mark = match step.status {
                        PlanStepStatus::Completed => "[x]",
                        PlanStepStatus::InProgress => "[~]",
                        PlanStepStatus::Pending => "[ ]",
                    };
                    self.line(&format!("[plan] {mark} {}", step.step));
                }
            }
            EventMsg::Error(e) => self.line(&format!("[error] {}", e.message)),
            EventMsg::TurnAborted(_) => self.line("[interpreter] turn interrupted"),
            _ => {}
        }
    }
}

/// `text` on one line (newlines become spaces), cut to about `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    format!("{cut}…")
}
