//! The model's plan (`plan_update`: `update_plan`, or a profile's todo tool) as a checklist:
//! printed into the scrollback each time it changes, and again on `/plan`.

use super::App;
use oi_protocol::protocol::{PlanStepStatus, PlanUpdateEvent};

/// The checklist of `plan`: the explanation, then one line per step.
pub(crate) fn checklist(plan: &PlanUpdateEvent) -> Vec<String> {
    let mut lines: Vec<String> = plan.explanation.iter().cloned().collect();
    lines.extend(plan.plan.iter().map(|s| {
        let mark = match s.status {
            PlanStepStatus::Completed => "✔",
            PlanStepStatus::InProgress => "▶",
            PlanStepStatus::Pending => "○",
        };
        format!("{mark} {}", s.step)
    }));
    lines
}

/// "Plan (2/5 done)".
fn title(plan: &PlanUpdateEvent) -> String {
    let done = plan
        .plan
        .iter()
        .filter(|s| s.status == PlanStepStatus::Completed)
        .count();
    format!("Plan ({done}/{} done)", plan.plan.len())
}

impl App {
    pub(super) fn on_plan_update(&mut self, plan: &PlanUpdateEvent) {
        self.push_info(&title(plan), checklist(plan));
        self.plan = Some(plan.clone());
    }

    /// `/plan`: the latest plan of this thread.
    pub(super) fn show_plan(&mut self) {
        match self.plan.clone() {
            Some(plan) if !plan.plan.is_empty() => self.push_info(&title(&plan), checklist(&plan)),
            Some(_) => self.push_info("Plan", vec!["The plan is empty.".into()]),
            None => self.push_info(
                "Plan",
                vec!["No plan yet in this thread: the model makes one with its plan tool when a task has several steps.".into()],
            ),
        }
    }
}
