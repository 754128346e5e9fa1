use super::*;
use oi_protocol::protocol::{
    AgentMessageDeltaEvent, AgentMessageEvent, ExecApprovalRequestEvent, ExecCommandBeginEvent,
    ExecCommandSource, PatchApplyBeginEvent, PlanStep, PlanUpdateEvent,
};
use serde_json::{Value, json};
use std::time::Duration;

fn wire(updates: &[SessionUpdate]) -> Vec<Value> {
    updates
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

fn exec_end(call: &str, status: ExecCommandStatus, output: &str) -> EventMsg {
    EventMsg::ExecCommandEnd(ExecCommandEndEvent {
        call_id: call.into(),
        turn_id: "t".into(),
        command: vec!["bash".into(), "-lc".into(), "make test".into()],
        cwd: "/w".into(),
        parsed_cmd: vec![],
        source: ExecCommandSource::Agent,
        stdout: output.into(),
        stderr: String::new(),
        aggregated_output: output.into(),
        exit_code: 0,
        duration: Duration::from_millis(5).into(),
        formatted_output: String::new(),
        status,
    })
}

#[test]
fn a_streamed_message_is_sent_once() {
    let mut t = Translator::live(Arc::default());
    let d = t.updates(&EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
        delta: "Hel".into(),
    }));
    assert_eq!(wire(&d)[0]["sessionUpdate"], "agent_message_chunk");
    assert_eq!(wire(&d)[0]["content"]["text"], "Hel");
    let full = t.updates(&EventMsg::AgentMessage(AgentMessageEvent {
        message: "Hello".into(),
        phase: None,
        memory_citation: None,
    }));
    assert!(
        full.is_empty(),
        "the whole message repeated: {:?}",
        wire(&full)
    );
    // Replayed, the whole message is the chunk.
    let mut r = Translator::replay();
    let full = r.updates(&EventMsg::AgentMessage(AgentMessageEvent {
        message: "Hello".into(),
        phase: None,
        memory_citation: None,
    }));
    assert_eq!(wire(&full)[0]["content"]["text"], "Hello");
}

#[test]
fn a_command_is_announced_once_then_updated() {
    let mut t = Translator::live(Arc::default());
    let ask = t.updates(&EventMsg::ExecApprovalRequest(ExecApprovalRequestEvent {
        call_id: "c1".into(),
        approval_id: None,
        turn_id: "t".into(),
        command: vec!["touch".into(), "x".into()],
        cwd: "/w".into(),
        reason: None,
        parsed_cmd: vec![],
    }));
    let ask = wire(&ask);
    assert_eq!(ask[0]["sessionUpdate"], "tool_call");
    // `pending` is the default, which the wire leaves out.
    assert_eq!(ask[0]["status"].as_str().unwrap_or("pending"), "pending");
    assert_eq!(ask[0]["kind"], "execute");
    assert_eq!(ask[0]["title"], "touch x");
    let begin = t.updates(&EventMsg::ExecCommandBegin(ExecCommandBeginEvent {
        call_id: "c1".into(),
        turn_id: "t".into(),
        command: vec!["touch".into(), "x".into()],
        cwd: "/w".into(),
        parsed_cmd: vec![],
        source: ExecCommandSource::Agent,
    }));
    let begin = wire(&begin);
    assert_eq!(begin[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(begin[0]["status"], "in_progress");
    let end = wire(&t.updates(&exec_end("c1", ExecCommandStatus::Completed, "ok\n")));
    assert_eq!(end[0]["sessionUpdate"], "tool_call_update");
    assert_eq!(end[0]["status"], "completed");
    assert_eq!(end[0]["content"][0]["content"]["text"], "```\nok\n```");
    assert_eq!(end[0]["rawOutput"]["exitCode"], 0);
}

#[test]
fn a_declined_command_fails_and_a_replayed_one_is_announced_whole() {
    let mut t = Translator::replay();
    let end = wire(&t.updates(&exec_end("c2", ExecCommandStatus::Declined, "")));
    assert_eq!(end[0]["sessionUpdate"], "tool_call");
    assert_eq!(end[0]["status"], "failed");
    assert_eq!(
        end[0]["content"][0]["content"]["text"],
        "Not run: declined."
    );
}

#[test]
fn an_edit_shows_whole_text_diffs_when_it_was_planned_here() {
    let planned: Arc<Mutex<HashMap<String, Vec<PlannedFile>>>> = Arc::default();
    planned.lock().unwrap().insert(
        "p1".into(),
        vec![PlannedFile {
            path: "/w/a.txt".into(),
            old_text: Some("one\n".into()),
            new_text: Some("two\n".into()),
            move_to: None,
        }],
    );
    let mut t = Translator::live(planned);
    let mut changes = BTreeMap::new();
    changes.insert(
        PathBuf::from("/w/a.txt"),
        FileChange::Update {
            unified_diff: "@@ -1 +1 @@\n-one\n+two\n".into(),
            move_path: None,
        },
    );
    let u = wire(&t.updates(&EventMsg::PatchApplyBegin(PatchApplyBeginEvent {
        call_id: "p1".into(),
        turn_id: "t".into(),
        auto_approved: true,
        changes,
    })));
    assert_eq!(u[0]["kind"], "edit");
    assert_eq!(u[0]["title"], "Edit a.txt");
    assert_eq!(
        u[0]["content"][0],
        json!({"type": "diff", "path": "/w/a.txt", "oldText": "one\n", "newText": "two\n"})
    );
    assert_eq!(u[0]["locations"][0]["path"], "/w/a.txt");
}

#[test]
fn plans_and_terminals() {
    let mut t = Translator::live(Arc::default());
    let plan = wire(&t.updates(&EventMsg::PlanUpdate(PlanUpdateEvent {
        explanation: None,
        plan: vec![
            PlanStep {
                step: "read".into(),
                status: PlanStepStatus::Completed,
            },
            PlanStep {
                step: "write".into(),
                status: PlanStepStatus::InProgress,
            },
        ],
    })));
    assert_eq!(plan[0]["sessionUpdate"], "plan");
    assert_eq!(plan[0]["entries"][1]["status"], "in_progress");
    let term = wire(&t.terminal("c9", "term-1"));
    assert_eq!(term[0]["sessionUpdate"], "tool_call");
    assert_eq!(
        term[0]["content"][0],
        json!({"type": "terminal", "terminalId": "term-1"})
    );
    let end = wire(&t.updates(&exec_end("c9", ExecCommandStatus::Completed, "x")));
    assert_eq!(end[0]["content"][0]["type"], "terminal");
}
