//! Approvals of MCP 2026-07-28 requests as multi round-trip requests (scripted engine): the
//! turn parks, the call answers `input_required` with the approval and a sealed
//! `requestState`, the retry resumes the turn — on this server or another one sharing the
//! store and the key — and a state that was changed, expired, given to someone else or for
//! another call is refused with a message that says so.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_server::engine::TurnState;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

const ASKS: &str = r#"{"elicitation": {}}"#;

fn asks() -> Value {
    serde_json::from_str(ASKS).unwrap()
}

/// `tools/call codex` at 2026-07-28 from a client that can be asked; the response.
async fn codex(c: &mut Client, prompt: &str) -> Value {
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": prompt}}),
            asks(),
        )
        .await;
    c.response(id).await
}

/// The retry of `codex` with `prompt`, answering with `responses` and handing back `state`.
async fn retry(c: &mut Client, prompt: &str, responses: Value, state: &Value) -> (i64, Value) {
    let id = c
        .modern(
            "tools/call",
            json!({
                "name": "codex",
                "arguments": {"prompt": prompt},
                "inputResponses": responses,
                "requestState": state,
            }),
            asks(),
        )
        .await;
    (id, c.response(id).await)
}

/// The one input request of an `input_required` response: its key and params.
fn the_request(r: &Value) -> (String, Value) {
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{r}");
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    (key.clone(), request["params"].clone())
}

fn error_message(r: &Value) -> String {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    r["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn an_approval_is_input_required_and_the_retry_resumes_the_turn() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    let r = codex(&mut c, "approve").await;
    let (key, params) = the_request(&r);
    // The prompt and the correlation keys the initialize era's elicitation carries.
    assert_eq!(params["mode"], "form");
    assert!(
        params["message"]
            .as_str()
            .unwrap()
            .contains("Allow Open Interpreter to run `touch x`"),
        "{params}"
    );
    assert_eq!(params["codex_elicitation"], "exec-approval");
    assert_eq!(params["codex_call_id"], "call-1");
    assert_eq!(params["codex_command"], json!(["touch", "x"]));
    assert_eq!(params["requestedSchema"]["type"], "object");
    let thread = params["threadId"].as_str().unwrap().to_string();
    let state = r["result"]["requestState"].clone();
    assert!(state.as_str().is_some_and(|s| !s.is_empty()), "{r}");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "openinterpreter-mcp-server"
    );
    // The turn is parked in the store and its thread let go.
    let turn = params["codex_event_id"].as_str().unwrap();
    assert!(matches!(
        engine.store.state(thread.parse().unwrap(), turn),
        Some(TurnState::Parked(_))
    ));
    assert_eq!(
        engine.released.lock().unwrap().as_slice(),
        [thread.parse().unwrap()]
    );

    let (id, r) = retry(
        &mut c,
        "approve",
        json!({ key: {"action": "accept"} }),
        &state,
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(text(&r), "call-1: approved");
    assert_eq!(r["result"]["structuredContent"]["threadId"], thread);
    // The resumed turn streams its events with the retry, as a call does.
    let types = c.event_types(id);
    assert!(types.iter().any(|t| t == "agent_message"), "{types:?}");
    assert_eq!(types.last().map(String::as_str), Some("task_complete"));
}

#[tokio::test]
async fn decline_and_cancel_deny_and_abort() {
    for (action, decision) in [("decline", "denied"), ("cancel", "abort")] {
        let mut c = start(FakeEngine::new());
        let r = codex(&mut c, "approve").await;
        let (key, _) = the_request(&r);
        let state = r["result"]["requestState"].clone();
        let (_, r) = retry(
            &mut c,
            "approve",
            json!({ key: {"action": action} }),
            &state,
        )
        .await;
        assert_eq!(text(&r), format!("call-1: {decision}"), "{action}");
    }
}

#[tokio::test]
async fn a_turn_that_parks_again_asks_again_with_a_new_state() {
    let mut c = start(FakeEngine::new());
    let r = codex(&mut c, "approve-twice").await;
    let (first_key, _) = the_request(&r);
    let state = r["result"]["requestState"].clone();
    let (_, r) = retry(
        &mut c,
        "approve-twice",
        json!({ first_key.clone(): {"action": "accept"} }),
        &state,
    )
    .await;
    let (second_key, params) = the_request(&r);
    assert_eq!(params["codex_call_id"], "call-2");
    assert_ne!(first_key, second_key, "keys name their park");
    let second_state = r["result"]["requestState"].clone();
    assert_ne!(second_state, state);
    let (_, r) = retry(
        &mut c,
        "approve-twice",
        json!({ second_key: {"action": "decline"} }),
        &second_state,
    )
    .await;
    assert_eq!(text(&r), "call-1: approved, call-2: denied");
}

#[tokio::test]
async fn a_retry_without_the_answer_is_asked_again() {
    let mut c = start(FakeEngine::new());
    let r = codex(&mut c, "approve").await;
    let (key, _) = the_request(&r);
    let state = r["result"]["requestState"].clone();
    let (_, r) = retry(&mut c, "approve", json!({"something-else": {}}), &state).await;
    let (again, _) = the_request(&r);
    assert_eq!(again, key);
    let state = r["result"]["requestState"].clone();
    let (_, r) = retry(
        &mut c,
        "approve",
        json!({ key: {"action": "accept"} }),
        &state,
    )
    .await;
    assert_eq!(text(&r), "call-1: approved");
}

#[tokio::test]
async fn a_replayed_retry_reports_the_turn_it_already_resumed() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    let r = codex(&mut c, "approve").await;
    let (key, _) = the_request(&r);
    let state = r["result"]["requestState"].clone();
    let answers = json!({ key: {"action": "accept"} });
    let (_, first) = retry(&mut c, "approve", answers.clone(), &state).await;
    // The client lost the answer (a broken stream) and sends the retry again: the turn is
    // not run twice; the call reports its result.
    let (_, again) = retry(&mut c, "approve", answers, &state).await;
    assert_eq!(text(&first), "call-1: approved");
    assert_eq!(text(&again), "call-1: approved");
    assert_eq!(engine.store.resumes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_changed_or_misplaced_state_is_refused() {
    let mut c = start(FakeEngine::new());
    let r = codex(&mut c, "approve").await;
    let (key, _) = the_request(&r);
    let state = r["result"]["requestState"].as_str().unwrap().to_string();
    let answers = json!({ key: {"action": "accept"} });

    // One character changed.
    let mut changed: Vec<char> = state.chars().collect();
    let mid = changed.len() / 2;
    changed[mid] = if changed[mid] == 'A' { 'B' } else { 'A' };
    let changed: String = changed.into_iter().collect();
    let (_, r) = retry(&mut c, "approve", answers.clone(), &json!(changed)).await;
    let msg = error_message(&r);
    assert!(
        msg.contains("not issued by this server") && msg.contains("mcp_state_key_file"),
        "{msg}"
    );

    // The right state on another call (other arguments).
    let (_, r) = retry(&mut c, "something else", answers.clone(), &json!(state)).await;
    assert!(error_message(&r).contains("belongs to another tool call"));

    // Answers without a state, and a state that is not a string.
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "approve"}, "inputResponses": answers}),
            asks(),
        )
        .await;
    let r = c.response(id).await;
    assert!(error_message(&r).contains("without the `requestState`"));
    let (_, r) = retry(&mut c, "approve", answers.clone(), &json!(42)).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");

    // The untouched state still works.
    let (_, r) = retry(&mut c, "approve", answers, &json!(state)).await;
    assert_eq!(text(&r), "call-1: approved");
}

#[tokio::test]
async fn a_state_is_refused_on_another_fleet_and_to_another_principal() {
    let store = FakeStore::new();
    let mut alice = start_sealed(
        FakeEngine::on_store(store.clone()),
        fleet_key(),
        "bearer:alice",
    );
    let r = codex(&mut alice, "approve").await;
    let (key, _) = the_request(&r);
    let state = r["result"]["requestState"].clone();
    let answers = json!({ key: {"action": "accept"} });

    // Another client of the fleet (another token) cannot answer it.
    let mut bob = start_sealed(
        FakeEngine::on_store(store.clone()),
        fleet_key(),
        "bearer:bob",
    );
    let (_, r) = retry(&mut bob, "approve", answers.clone(), &state).await;
    assert!(error_message(&r).contains("issued to another client"));

    // A server with another key (another fleet, or a fleet member without the shared
    // key) does not trust it.
    let mut stranger = start(FakeEngine::on_store(store.clone()));
    let (_, r) = retry(&mut stranger, "approve", answers.clone(), &state).await;
    assert!(error_message(&r).contains("every server of a fleet needs the same"));

    assert_eq!(store.resumes.load(Ordering::SeqCst), 0, "nothing resumed");
    let (_, r) = retry(&mut alice, "approve", answers, &state).await;
    assert_eq!(text(&r), "call-1: approved");
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let store = FakeStore::new();
    // The park expires at once; its state lives the shortest time the server gives (1 s).
    *store.park_secs.lock().unwrap() = 0;
    let mut c = start(FakeEngine::on_store(store.clone()));
    let r = codex(&mut c, "approve").await;
    let (key, _) = the_request(&r);
    let state = r["result"]["requestState"].clone();
    let answers = json!({ key: {"action": "accept"} });
    let msg = tokio::time::timeout(WAIT, async {
        loop {
            let (_, r) = retry(&mut c, "approve", answers.clone(), &state).await;
            if r.get("error").is_some() {
                return error_message(&r);
            }
            // Before the state expired, the engine says the park did: the call says so.
            assert!(text(&r).contains("expired"), "{r}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the state never expired");
    assert!(msg.contains("has expired"), "{msg}");
    assert_eq!(store.resumes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_turn_parked_on_one_server_is_resumed_by_a_retry_sent_to_another() {
    let store = FakeStore::new();
    let engine_a = FakeEngine::on_store(store.clone());
    let engine_b = FakeEngine::on_store(store.clone());
    let mut a = start_sealed(engine_a.clone(), fleet_key(), "bearer:fleet-client");
    let mut b = start_sealed(engine_b.clone(), fleet_key(), "bearer:fleet-client");
    let r = codex(&mut a, "approve").await;
    let (key, params) = the_request(&r);
    let thread: oi_protocol::ThreadId = params["threadId"].as_str().unwrap().parse().unwrap();
    let state = r["result"]["requestState"].clone();
    assert_eq!(engine_a.released.lock().unwrap().as_slice(), [thread]);

    let (id, r) = retry(
        &mut b,
        "approve",
        json!({ key: {"action": "accept"} }),
        &state,
    )
    .await;
    assert_eq!(text(&r), "call-1: approved");
    assert!(b.event_types(id).iter().any(|t| t == "task_complete"));
    // B resumed it, and let it go again at its end.
    assert_eq!(engine_b.released.lock().unwrap().as_slice(), [thread]);
    assert_eq!(store.resumes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_old_era_still_asks_with_elicitation_create() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "approve"})).await;
    let req = c.server_request("elicitation/create").await;
    assert_eq!(req["params"]["codex_elicitation"], "exec-approval");
    c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}))
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "call-1: approved");
    assert!(r["result"].get("resultType").is_none(), "{r}");
}
