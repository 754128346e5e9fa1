//! Unit tests of the item mapper.

use super::*;
use oi_protocol::protocol::*;

fn ev(msg: EventMsg) -> Event {
    Event {
        id: "t1".into(),
        msg,
    }
}

fn methods(notes: &[Note]) -> Vec<&str> {
    notes.iter().map(|n| n.method).collect()
}

#[test]
fn agent_message_deltas_share_one_item() {
    let mut m = ItemMapper::new("th", "t1");
    let a = m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
        delta: "Hel".into(),
    })));
    let b = m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
        delta: "lo".into(),
    })));
    let c = m.on_event(&ev(EventMsg::AgentMessage(AgentMessageEvent {
        message: "Hello".into(),
        phase: None,
        memory_citation: None,
    })));
    assert_eq!(methods(&a), ["item/started", "item/agentMessage/delta"]);
    assert_eq!(methods(&b), ["item/agentMessage/delta"]);
    assert_eq!(methods(&c), ["item/completed"]);
    let id = &a[0].params["item"]["id"];
    assert_eq!(&b[0].params["itemId"], id);
    assert_eq!(&c[0].params["item"]["id"], id);
    assert_eq!(c[0].params["item"]["text"], "Hello");
    assert_eq!(c[0].params["threadId"], "th");
    assert_eq!(c[0].params["turnId"], "t1");
}

#[test]
fn commands_map_with_output_and_split_utf8() {
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let mut m = ItemMapper::new("th", "t1");
    let argv: Vec<String> = ["bash", "-lc", "echo é"].map(String::from).to_vec();
    let begin = m.on_event(&ev(EventMsg::ExecCommandBegin(ExecCommandBeginEvent {
        call_id: "c1".into(),
        turn_id: "t1".into(),
        command: argv.clone(),
        cwd: "/w".into(),
        parsed_cmd: vec![],
        source: ExecCommandSource::Agent,
    })));
    assert_eq!(begin[0].params["item"]["command"], "echo é");
    let e = "é".as_bytes();
    let d1 = m.on_event(&ev(EventMsg::ExecCommandOutputDelta(
        ExecCommandOutputDeltaEvent {
            call_id: "c1".into(),
            stream: ExecOutputStream::Stdout,
            chunk: b64(&e[..1]),
        },
    )));
    assert!(d1.is_empty(), "half a character is held back");
    let d2 = m.on_event(&ev(EventMsg::ExecCommandOutputDelta(
        ExecCommandOutputDeltaEvent {
            call_id: "c1".into(),
            stream: ExecOutputStream::Stdout,
            chunk: b64(&[e[1], b'\n']),
        },
    )));
    assert_eq!(d2[0].params["delta"], "é\n");
    let end = m.on_event(&ev(EventMsg::ExecCommandEnd(ExecCommandEndEvent {
        call_id: "c1".into(),
        turn_id: "t1".into(),
        command: argv,
        cwd: "/w".into(),
        parsed_cmd: vec![],
        source: ExecCommandSource::Agent,
        stdout: "é\n".into(),
        stderr: String::new(),
        aggregated_output: "é\n".into(),
        exit_code: 0,
        duration: std::time::Duration::from_millis(12).into(),
        formatted_output: String::new(),
        status: ExecCommandStatus::Completed,
    })));
    assert_eq!(methods(&end), ["item/completed"]);
    let item = &end[0].params["item"];
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert_eq!(item["durationMs"], 12);
}

#[test]
fn errors_fail_the_turn_and_aborts_interrupt_it() {
    let mut m = ItemMapper::new("th", "t1");
    m.on_event(&ev(EventMsg::Error(ErrorEvent {
        message: "boom".into(),
        codex_error_info: Some(ErrorInfo::HttpConnectionFailed {
            http_status_code: Some(500),
        }),
    })));
    let done = m.on_event(&ev(EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: "t1".into(),
        last_agent_message: None,
        completed_at: None,
        duration_ms: None,
    })));
    let t = &done.last().unwrap().params["turn"];
    assert_eq!(t["status"], "failed");
    assert_eq!(t["error"]["message"], "boom");
    assert_eq!(
        t["error"]["codexErrorInfo"]["httpConnectionFailed"]["httpStatusCode"],
        500
    );

    let mut m = ItemMapper::new("th", "t1");
    m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
        delta: "partial".into(),
    })));
    let done = m.on_event(&ev(EventMsg::TurnAborted(TurnAbortedEvent {
        turn_id: Some("t1".into()),
        reason: TurnAbortReason::Interrupted,
        completed_at: None,
        duration_ms: None,
    })));
    assert_eq!(methods(&done), ["item/completed", "turn/completed"]);
    assert_eq!(done[0].params["item"]["text"], "partial");
    assert_eq!(done[1].params["turn"]["status"], "interrupted");
    assert_eq!(m.ended, Some(TurnEnd::Interrupted));
}

#[test]
fn compaction_is_an_item_and_a_thread_compacted_note() {
    let mut m = ItemMapper::new("th", "t1");
    let notes = m.on_event(&ev(EventMsg::ContextCompacted(
        oi_protocol::protocol::ContextCompactedEvent {
            tokens_before: Some(5000),
            tokens_after: Some(900),
            automatic: true,
        },
    )));
    assert_eq!(
        methods(&notes),
        ["item/started", "item/completed", "thread/compacted"]
    );
    assert_eq!(notes[1].params["item"]["type"], "contextCompaction");
    assert!(notes[1].params["item"]["id"].is_string());
    assert_eq!(notes[2].params["threadId"], "th");
    assert_eq!(notes[2].params["turnId"], "t1");
}

#[test]
fn other_turns_only_yield_thread_level_notes() {
    let mut m = ItemMapper::new("th", "t1");
    let other = Event {
        id: "t0".into(),
        msg: EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta: "x".into() }),
    };
    assert!(m.on_event(&other).is_empty());
    let warn = Event {
        id: String::new(),
        msg: EventMsg::Warning(WarningEvent {
            message: "careful".into(),
        }),
    };
    assert_eq!(methods(&m.on_event(&warn)), ["warning"]);
}

#[test]
fn utf8_tail_detection() {
    assert_eq!(incomplete_utf8_tail(b"abc"), 0);
    assert_eq!(incomplete_utf8_tail(&[b'a', 0xC3]), 1);
    assert_eq!(incomplete_utf8_tail(&[0xE2, 0x82]), 2);
    assert_eq!(incomplete_utf8_tail(&[0xE2, 0x82, 0xAC]), 0);
    assert_eq!(incomplete_utf8_tail(&[0xF0, 0x9F, 0x98]), 3);
}

#[test]
fn turn_completed_carries_the_input_and_the_final_answer() {
    let mut m = ItemMapper::new("th", "t1");
    m.on_event(&ev(EventMsg::UserMessage(UserMessageEvent {
        message: "question".into(),
        images: None,
        local_images: Vec::new(),
        text_elements: Vec::new(),
    })));
    for answer in ["thinking out loud", "the answer"] {
        m.on_event(&ev(EventMsg::AgentMessage(AgentMessageEvent {
            message: answer.into(),
            phase: None,
            memory_citation: None,
        })));
    }
    let done = m.on_event(&ev(EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: "t1".into(),
        last_agent_message: None,
        completed_at: None,
        duration_ms: None,
    })));
    let turn = &done.last().unwrap().params["turn"];
    assert_eq!(turn["itemsView"], "summary");
    let items = turn["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{turn}");
    assert_eq!(items[0]["type"], "userMessage");
    assert_eq!(items[0]["content"][0]["text"], "question");
    assert_eq!(items[1]["text"], "the answer");
}
