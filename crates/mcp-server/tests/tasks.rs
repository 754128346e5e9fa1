//! Long turns as tasks (the Tasks extension, scripted engine): a request that declares
//! `io.modelcontextprotocol/tasks` gets a task at once; `tasks/get` reports it from the
//! store (on any server of a fleet), `tasks/update` answers its approvals, `tasks/cancel`
//! interrupts it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use serde_json::{Value, json};

fn caps(elicitation: bool) -> Value {
    let mut caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    if elicitation {
        caps["elicitation"] = json!({});
    }
    caps
}

/// Starts `codex` as a task; the response.
async fn start_task(c: &mut Client, prompt: &str, elicitation: bool) -> Value {
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": prompt}}),
            caps(elicitation),
        )
        .await;
    c.response(id).await
}

async fn task_call(c: &mut Client, method: &str, params: Value) -> Value {
    let id = c.modern(method, params, caps(true)).await;
    c.response(id).await
}

/// Polls `tasks/get` until the task's status is `status`; the last result.
async fn poll_until(c: &mut Client, task: &str, status: &str) -> Value {
    tokio::time::timeout(WAIT, async {
        loop {
            let r = task_call(c, "tasks/get", json!({"taskId": task})).await;
            let result = r["result"].clone();
            assert_eq!(result["resultType"], "complete", "{r}");
            assert_eq!(result["taskId"], task);
            if result["status"] == status {
                return result;
            }
            assert!(
                ["working", "input_required"].contains(&result["status"].as_str().unwrap()),
                "the task ended as {result} before reaching {status}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("task never reached {status}"))
}

fn task_id(r: &Value) -> String {
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    r["result"]["taskId"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_task_is_returned_at_once_and_completes_with_the_plain_result() {
    let mut c = start(FakeEngine::new());
    let r = start_task(&mut c, "hello", true).await;
    let task = task_id(&r);
    let created = &r["result"];
    assert_eq!(created["status"], "working");
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(created["ttlMs"], 7 * 24 * 3600 * 1000);
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0);
    let done = poll_until(&mut c, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "hi there");
    assert!(done["result"]["structuredContent"]["threadId"].is_string());
    assert!(done["result"].get("isError").is_none(), "{done}");
    assert_eq!(done["statusMessage"], "the turn is over");
}

#[tokio::test]
async fn a_task_waits_for_its_approval_which_tasks_update_gives() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    let task = task_id(&start_task(&mut c, "approve-twice", true).await);
    let waiting = poll_until(&mut c, &task, "input_required").await;
    let requests = waiting["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["codex_elicitation"], "exec-approval");
    assert_eq!(request["params"]["codex_call_id"], "call-1");
    assert!(
        waiting["statusMessage"]
            .as_str()
            .unwrap()
            .contains("waiting for approval: `touch x`"),
        "{waiting}"
    );
    let ack = task_call(
        &mut c,
        "tasks/update",
        json!({"taskId": task, "inputResponses": { key.clone(): {"action": "accept"} }}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    // The second approval comes with a new key (unique over the task's life).
    let again = tokio::time::timeout(WAIT, async {
        loop {
            let r = poll_until(&mut c, &task, "input_required").await;
            if !r["inputRequests"].as_object().unwrap().contains_key(key) {
                return r;
            }
        }
    })
    .await
    .unwrap();
    let (second, _) = again["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    // An answer to the old key is ignored; the task still waits.
    let ack = task_call(
        &mut c,
        "tasks/update",
        json!({"taskId": task, "inputResponses": { key.clone(): {"action": "accept"} }}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    poll_until(&mut c, &task, "input_required").await;
    task_call(
        &mut c,
        "tasks/update",
        json!({"taskId": task, "inputResponses": { second.clone(): {"action": "decline"} }}),
    )
    .await;
    let done = poll_until(&mut c, &task, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "call-1: approved, call-2: denied"
    );
}

#[tokio::test]
async fn tasks_cancel_interrupts_a_running_or_parked_task() {
    let mut c = start(FakeEngine::new());
    let running = task_id(&start_task(&mut c, "hang", true).await);
    poll_until(&mut c, &running, "working").await;
    let ack = task_call(&mut c, "tasks/cancel", json!({"taskId": running})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let cancelled = poll_until(&mut c, &running, "cancelled").await;
    assert_eq!(cancelled["statusMessage"], "the turn was interrupted");

    let parked = task_id(&start_task(&mut c, "approve", true).await);
    poll_until(&mut c, &parked, "input_required").await;
    task_call(&mut c, "tasks/cancel", json!({"taskId": parked})).await;
    poll_until(&mut c, &parked, "cancelled").await;
    // Cancelling what is over is acknowledged (nothing to do).
    let ack = task_call(&mut c, "tasks/cancel", json!({"taskId": parked})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
}

#[tokio::test]
async fn any_server_of_a_fleet_answers_for_a_task() {
    let store = FakeStore::new();
    let engine_a = FakeEngine::on_store(store.clone());
    let engine_b = FakeEngine::on_store(store.clone());
    let mut a = start_sealed(engine_a, fleet_key(), "bearer:t");
    let mut b = start_sealed(engine_b.clone(), fleet_key(), "bearer:t");
    let task = task_id(&start_task(&mut a, "approve", true).await);
    // B reports it, takes its answer and resumes its turn.
    let waiting = poll_until(&mut b, &task, "input_required").await;
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    task_call(
        &mut b,
        "tasks/update",
        json!({"taskId": task, "inputResponses": { key: {"action": "accept"} }}),
    )
    .await;
    let done = poll_until(&mut a, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "call-1: approved");
    assert_eq!(engine_b.released.lock().unwrap().len(), 1, "B let it go");

    // A parked task started on A is cancelled through B.
    let task = task_id(&start_task(&mut a, "approve", true).await);
    poll_until(&mut b, &task, "input_required").await;
    task_call(&mut b, "tasks/cancel", json!({"taskId": task})).await;
    poll_until(&mut a, &task, "cancelled").await;
}

#[tokio::test]
async fn a_task_id_is_only_good_for_its_client_and_its_fleet() {
    let store = FakeStore::new();
    let mut a = start_sealed(
        FakeEngine::on_store(store.clone()),
        fleet_key(),
        "bearer:alice",
    );
    let task = task_id(&start_task(&mut a, "hello", true).await);
    let mut bob = start_sealed(
        FakeEngine::on_store(store.clone()),
        fleet_key(),
        "bearer:bob",
    );
    let r = task_call(&mut bob, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another client")
    );
    let mut stranger = start(FakeEngine::on_store(store));
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let r = task_call(
            &mut stranger,
            method,
            json!({"taskId": task, "inputResponses": {}}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Failed to retrieve task"),
            "{r}"
        );
    }
    let r = task_call(&mut a, "tasks/get", json!({"taskId": "no such task"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = task_call(&mut a, "tasks/get", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn without_elicitation_a_tasks_approvals_are_denied_and_failures_complete_as_errors() {
    let mut c = start(FakeEngine::new());
    let task = task_id(&start_task(&mut c, "approve", false).await);
    let done = poll_until(&mut c, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "call-1: denied");
    let task = task_id(&start_task(&mut c, "fail", true).await);
    let done = poll_until(&mut c, &task, "completed").await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("model exploded")
    );
}

#[tokio::test]
async fn a_bad_call_is_answered_at_once_without_a_task() {
    let mut c = start(FakeEngine::new());
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex-reply", "arguments": {"prompt": "x", "threadId": "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11"}}),
            caps(true),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(is_error(&r));
    assert!(text(&r).contains("Session not found"), "{r}");
}

#[tokio::test]
async fn the_task_methods_need_the_extension_declared() {
    let mut c = start(FakeEngine::new());
    let task = task_id(&start_task(&mut c, "hello", true).await);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let id = c
            .modern(
                method,
                json!({"taskId": task, "inputResponses": {}}),
                json!({"elicitation": {}}),
            )
            .await;
        let r = c.response(id).await;
        assert_eq!(r["error"]["code"], -32021, "{method}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"]["extensions"],
            json!({"io.modelcontextprotocol/tasks": {}}),
            "{r}"
        );
    }
    // Without the extension a call is a plain call (no task).
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "hello"}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(text(&r), "hi there");
}

#[tokio::test]
async fn subscriptions_listen_sends_a_tasks_status_until_it_is_over() {
    let mut c = start(FakeEngine::new());
    let task = task_id(&start_task(&mut c, "approve", true).await);
    let listen = c
        .modern(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task, "not a task of ours"]}}),
            caps(true),
        )
        .await;
    let ack = c
        .read_until(|v| v["method"] == "notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([task]),
        "{ack}"
    );
    let status = |v: &Value| v["method"] == "notifications/tasks";
    let first = c.read_until(status).await;
    let mut current = first["params"].clone();
    assert_eq!(current["taskId"], task);
    assert_eq!(
        current["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    while current["status"] != "input_required" {
        current = c.read_until(status).await["params"].clone();
    }
    let key = current["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let id = c
        .modern(
            "tasks/update",
            json!({"taskId": task, "inputResponses": { key: {"action": "accept"} }}),
            caps(true),
        )
        .await;
    while current["status"] != "completed" {
        current = c.read_until(status).await["params"].clone();
    }
    assert_eq!(current["result"]["content"][0]["text"], "call-1: approved");
    assert!(
        c.seen.iter().any(|v| v["id"] == id),
        "the update was answered"
    );

    // Task ids need the extension declared.
    let id = c
        .modern(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task]}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
}
