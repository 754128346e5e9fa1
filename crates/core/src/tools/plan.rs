//! `update_plan`: the model's plan as a checklist (Codex's tool: an optional `explanation`
//! and the whole `plan`, each step `pending`, `in_progress` or `completed`). It changes
//! nothing on disk: the engine publishes it as a `plan_update` event, which every front end
//! shows (the TUI's checklist and `/plan`, `exec --json`, v2 `turn/plan/updated`, ACP plans).
//! A harness profile's own todo tool (`TodoWrite`, `todo_write`, `SetTodoList`) becomes the
//! same event (`tools::profile`); `update_plan` is understood on every profile.

use super::call::{ToolCall, ToolOutcome};
use crate::session::Session;
use oi_protocol::models::ToolSpec;
use oi_protocol::protocol::{EventMsg, PlanStep, PlanStepStatus, PlanUpdateEvent};
use serde_json::{Value, json};

pub(crate) const UPDATE_PLAN: &str = "update_plan";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: UPDATE_PLAN.into(),
        description: "Keeps your plan for a task of several steps as a checklist the user sees. Send the whole plan each time, with each step's status; keep one step in_progress at a time and mark steps completed as you finish them.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string", "description": "Optional: why the plan changed."},
                "plan": {
                    "type": "array",
                    "description": "Every step, in order.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string", "description": "What the step is."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        }),
    }
}

pub(crate) fn handle(sess: &Session, call: &ToolCall<'_>) -> ToolOutcome {
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments
    };
    let args: Value = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(e) => return usage(&format!("the arguments are not JSON ({e})")),
    };
    // A bare list is the plan too (small models drop the wrapper).
    let (explanation, steps) = match &args {
        Value::Array(steps) => (None, steps.clone()),
        Value::Object(o) => match o.get("plan") {
            Some(Value::Array(steps)) => (
                o.get("explanation")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .filter(|e| !e.trim().is_empty()),
                steps.clone(),
            ),
            _ => return usage("`plan` is missing or not a list"),
        },
        _ => return usage("send a JSON object"),
    };
    let mut plan = Vec::with_capacity(steps.len());
    for (i, v) in steps.iter().enumerate() {
        match crate::harness::todo_item(v) {
            Some(item) if !item.text.trim().is_empty() => plan.push(PlanStep {
                step: item.text,
                status: item.status,
            }),
            _ => return usage(&format!("step {} has no `step` text", i + 1)),
        }
    }
    let done = plan
        .iter()
        .filter(|s| s.status == PlanStepStatus::Completed)
        .count();
    let total = plan.len();
    sess.send(
        call.turn_id,
        EventMsg::PlanUpdate(PlanUpdateEvent { explanation, plan }),
    );
    ToolOutcome::ok(format!("Plan updated ({done} of {total} steps completed)."))
}

fn usage(what: &str) -> ToolOutcome {
    ToolOutcome::err(format!(
        "invalid arguments for `update_plan`: {what}. Send {{\"plan\": [{{\"step\": \"…\", \"status\": \"in_progress\"}}, {{\"step\": \"…\", \"status\": \"pending\"}}]}}"
    ))
}
