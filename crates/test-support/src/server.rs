//! The HTTP side of the mock: accept loop, routing, streaming bodies.
//!
//! Every connection task lives in a `JoinSet` owned by the accept-loop task, so aborting
//! that one task (what dropping [`crate::MockModelServer`] does) ends all connections too,
//! including streams that were told to stall forever.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::HeaderValue;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use oi_protocol::config_types::WireApi;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::recorded::RecordedRequest;
use crate::render::render;
use crate::script::{MockResponse, MockScript, MockTurn};

type Body = BoxBody<Bytes, std::io::Error>;

/// Largest request body accepted (histories with images can be big).
const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

pub(crate) struct State {
    script: Mutex<Cursor>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Paths of every request so far (model requests or not), for `MockEndpoint::after`.
    paths: Mutex<Vec<String>>,
    /// Number of recorded requests, for event-driven waiting.
    pub(crate) count: watch::Sender<usize>,
    /// Tokens of the last model request: the prefix a server's prompt cache holds.
    last_prompt: Mutex<u64>,
}

struct Cursor {
    script: MockScript,
    next: usize,
    cycle_uses: usize,
    /// Model requests answered so far; numbers ids in the rendered streams.
    served: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    pub(crate) fn new(script: MockScript) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(Cursor {
                script,
                next: 0,
                cycle_uses: 0,
                served: 0,
            }),
            requests: Mutex::new(Vec::new()),
            paths: Mutex::new(Vec::new()),
            count: watch::channel(0).0,
            last_prompt: Mutex::new(0),
        })
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }

    pub(crate) fn clear_requests(&self) {
        lock(&self.requests).clear();
        self.count.send_replace(0);
    }

    pub(crate) fn set_script(&self, script: MockScript) {
        let mut cursor = lock(&self.script);
        cursor.script = script;
        cursor.next = 0;
        cursor.cycle_uses = 0;
    }

    fn record(&self, request: RecordedRequest) {
        let n = {
            let mut requests = lock(&self.requests);
            requests.push(request);
            requests.len()
        };
        self.count.send_replace(n);
    }

    /// The script's `context_window` and `list_context_window`.
    fn window_and_listing(&self) -> (Option<u64>, bool) {
        let c = lock(&self.script);
        (c.script.context_window, c.script.list_context_window)
    }

    /// The script's `context_window`, `report_usage` and `silently_truncate_at`.
    fn window_and_usage(&self) -> (Option<u64>, bool, Option<u64>) {
        let c = lock(&self.script);
        (
            c.script.context_window,
            c.script.report_usage,
            c.script.silently_truncate_at,
        )
    }

    /// The body of the last endpoint matching `method path` whose `after` is satisfied.
    fn endpoint(&self, method: &Method, path: &str) -> Option<Value> {
        let seen = lock(&self.paths).clone();
        let c = lock(&self.script);
        c.script
            .endpoints
            .iter()
            .rev()
            .find(|e| {
                e.method.eq_ignore_ascii_case(method.as_str())
                    && path.ends_with(e.path.trim_end_matches('/'))
                    && e.after
                        .as_deref()
                        .is_none_or(|a| seen.iter().any(|p| p.ends_with(a)))
            })
            .map(|e| e.body.clone())
    }

    /// The response of the first rule whose text the body contains (the script does not
    /// advance), with its sequence number.
    fn rule_response(&self, body: &str) -> Option<(MockResponse, u64)> {
        let mut c = lock(&self.script);
        let response = c
            .script
            .rules
            .iter()
            .find(|r| body.contains(&r.contains))?
            .response
            .clone();
        c.served += 1;
        Some((response, c.served))
    }

    /// The next scripted response and its sequence number.
    fn next_response(&self) -> (MockResponse, u64) {
        let mut c = lock(&self.script);
        c.served += 1;
        let served = c.served;
        let picked = if let Some(r) = c.script.responses.get(c.next).cloned() {
            c.next += 1;
            r
        } else if let Some(f) = c.script.fallback.clone() {
            f
        } else {
            MockResponse::Error {
                status: 500,
                body: json!({ "error": { "message": format!(
                    "mock script exhausted: all {} scripted responses were used and there is no fallback (this is request #{served})",
                    c.script.responses.len()
                ), "type": "mock_script_exhausted" } })
                .to_string(),
                retry_after: None,
                retry_after_ms: None,
            }
        };
        // Resolve round-robin entries (nested ones too, to a sane depth).
        let mut resolved = picked;
        for _ in 0..8 {
            match resolved {
                MockResponse::Cycle { responses } if !responses.is_empty() => {
                    let i = c.cycle_uses % responses.len();
                    c.cycle_uses += 1;
                    resolved = responses[i].clone();
                }
                MockResponse::Cycle { .. } => {
                    resolved = MockResponse::error(500, "mock script: empty `cycle`");
                }
                other => return (other, served),
            }
        }
        (
            MockResponse::error(500, "mock script: `cycle` nested too deep"),
            served,
        )
    }
}

/// Serves connections until the task is aborted.
pub(crate) async fn accept_loop(listener: TcpListener, state: Arc<State>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                // Latency matters for benchmarks: no Nagle delay on small SSE frames.
                let _ = stream.set_nodelay(true);
                let state = state.clone();
                conns.spawn(async move {
                    let svc = service_fn(move |req| handle(state.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let trimmed = path.trim_end_matches('/');
    if let Some(resp) = answer_without_body(&state, &method, trimmed) {
        return Ok(resp);
    }
    let wire = wire_of(trimmed);
    let is_script = trimmed == "/__mock/script";
    if method != Method::POST || (wire.is_none() && !is_script) {
        return Ok(error_response(
            StatusCode::NOT_FOUND,
            &format!(
                "mock-model has no route for {method} {path}; model requests go to POST <base_url>/chat/completions, <base_url>/responses or <base_url>/messages"
            ),
        ));
    }

    let bytes = match read_body(req).await {
        Ok(bytes) => bytes,
        Err(refused) => return Ok(refused),
    };
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);

    if is_script {
        return Ok(post_script(&state, parsed));
    }

    let body_ok = parsed.is_ok();
    let body =
        parsed.unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_string();
    let refused = (wire == Some(WireApi::Messages) && body_ok)
        .then(|| {
            let version = headers.iter().any(|(n, _)| n == "anthropic-version");
            messages_request_error(&body, version)
        })
        .flatten();
    state.record(RecordedRequest {
        method: method.to_string(),
        path,
        query,
        headers,
        body,
    });
    if !body_ok {
        return Ok(error_response(
            StatusCode::BAD_REQUEST,
            "the request body is not valid JSON",
        ));
    }
    if let Some(why) = refused {
        return Ok(json_response(
            StatusCode::BAD_REQUEST,
            json!({ "type": "error",
                "error": { "type": "invalid_request_error", "message": why } }),
        ));
    }
    let tokens = crate::approx_tokens(bytes.len());
    let (window, report_usage, truncate_at) = state.window_and_usage();
    if let Some(window) = window.filter(|w| tokens > *w) {
        return Ok(context_window_exceeded(wire, tokens, window));
    }
    let (response, seq) = match state.rule_response(&String::from_utf8_lossy(&bytes)) {
        Some(hit) => hit,
        None => state.next_response(),
    };
    let wire = wire.unwrap_or_default();
    let previous_prompt = std::mem::replace(
        &mut *lock(&state.last_prompt),
        truncate_at.map_or(tokens, |n| tokens.min(n)),
    );
    Ok(match response {
        MockResponse::Turn(mut turn) => {
            if (report_usage || truncate_at.is_some()) && turn.usage.is_none() {
                // A server that cuts the prompt counts what it kept.
                let counted = truncate_at.map_or(tokens, |n| tokens.min(n));
                turn.usage = Some(usage_of(&turn, wire, counted, previous_prompt));
            }
            sse_response(&turn, wire, &model, seq)
        }
        MockResponse::Error {
            status,
            body,
            retry_after,
            retry_after_ms,
        } => scripted_error(status, body, retry_after, retry_after_ms),
        MockResponse::NotSse {
            status,
            content_type,
            body,
        } => {
            let mut resp = full(status_or_500(status), body);
            set_header(&mut resp, "content-type", &content_type);
            resp
        }
        MockResponse::Recorded { body, write_bytes } => recorded_response(body, write_bytes),
        MockResponse::Cycle { .. } => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "mock script: unresolved `cycle`",
        ),
    })
}

/// The answers that need no request body: the recorded requests (`/__mock/requests`), a
/// canned endpoint, and the model listing. Every other path is recorded as asked for.
fn answer_without_body(state: &State, method: &Method, trimmed: &str) -> Option<Response<Body>> {
    if trimmed == "/__mock/requests" {
        return Some(match *method {
            Method::DELETE => {
                state.clear_requests();
                json_response(StatusCode::OK, json!({ "cleared": true }))
            }
            _ => json_response(StatusCode::OK, json!(state.requests())),
        });
    }
    let canned = state.endpoint(method, trimmed);
    lock(&state.paths).push(trimmed.to_string());
    if let Some(body) = canned {
        return Some(json_response(StatusCode::OK, body));
    }
    if method == Method::GET && trimmed.ends_with("/models") {
        let mut model = json!({ "id": "mock-model", "object": "model", "owned_by": "mock" });
        if let (Some(window), true) = state.window_and_listing() {
            model["max_model_len"] = json!(window);
        }
        return Some(json_response(
            StatusCode::OK,
            json!({ "object": "list", "data": [model] }),
        ));
    }
    None
}

/// The request's body, up to [`MAX_REQUEST_BODY`] bytes; a longer one is refused.
async fn read_body(req: Request<Incoming>) -> Result<hyper::body::Bytes, Response<Body>> {
    match http_body_util::Limited::new(req.into_body(), MAX_REQUEST_BODY)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => Err(error_response(
            StatusCode::BAD_REQUEST,
            &format!("could not read the request body: {e}"),
        )),
    }
}

/// `POST /__mock/script`: the new script, or why it is not one.
fn post_script(state: &State, parsed: serde_json::Result<Value>) -> Response<Body> {
    match parsed.and_then(serde_json::from_value::<MockScript>) {
        Ok(script) => {
            state.set_script(script);
            json_response(StatusCode::OK, json!({ "ok": true }))
        }
        Err(e) => error_response(
            StatusCode::BAD_REQUEST,
            &format!("the posted mock script is not valid: {e}"),
        ),
    }
}

/// A scripted HTTP error: its body (typed JSON or text by what it is) and retry hints.
fn scripted_error(
    status: u16,
    body: String,
    retry_after: Option<String>,
    retry_after_ms: Option<String>,
) -> Response<Body> {
    let is_json = serde_json::from_str::<Value>(&body).is_ok();
    let mut resp = full(status_or_500(status), body);
    set_header(
        &mut resp,
        "content-type",
        if is_json {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        },
    );
    if let Some(ra) = retry_after {
        set_header(&mut resp, "retry-after", &ra);
    }
    if let Some(ms) = retry_after_ms {
        set_header(&mut resp, "retry-after-ms", &ms);
    }
    resp
}

/// The model wire a path speaks, by its ending (any base URL before it).
fn wire_of(trimmed: &str) -> Option<WireApi> {
    if trimmed.ends_with("/chat/completions") {
        Some(WireApi::Chat)
    } else if trimmed.ends_with("/responses") {
        Some(WireApi::Responses)
    } else if trimmed.ends_with("/messages") {
        Some(WireApi::Messages)
    } else {
        None
    }
}

/// A prompt over the context window, refused as the server the wire stands for words it.
fn context_window_exceeded(wire: Option<WireApi>, tokens: u64, window: u64) -> Response<Body> {
    if wire == Some(WireApi::Messages) {
        // Anthropic's wording and shape.
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({ "type": "error", "error": { "type": "invalid_request_error",
                "message": format!("prompt is too long: {tokens} tokens > {window} maximum") } }),
        );
    }
    // vLLM's wording and shape (OpenAI-compatible servers mostly copy it).
    json_response(
        StatusCode::BAD_REQUEST,
        json!({ "object": "error", "type": "BadRequestError", "param": null, "code": 400,
            "message": format!(
            "This model's maximum context length is {window} tokens. However, your request has {tokens} input tokens. Please reduce the length of the input messages."
        ) }),
    )
}

/// The usage a scripted turn reports when its script asks for usage but gives none: the
/// prompt as `counted`, the output as a quarter of its text's bytes.
fn usage_of(
    turn: &MockTurn,
    wire: WireApi,
    counted: u64,
    previous_prompt: u64,
) -> crate::TokenUsage {
    let output = turn.text.as_deref().map_or(0, str::len) as i64 / 4;
    // On the Messages wire the mock reports a prompt cache as llama-server does: the
    // previous request's size is the prefix read from the cache (reported apart from
    // `input_tokens`, the Anthropic way).
    let cached = match wire {
        WireApi::Messages => previous_prompt.min(counted),
        _ => 0,
    };
    crate::TokenUsage {
        input_tokens: counted as i64,
        cached_input_tokens: cached as i64,
        output_tokens: output,
        reasoning_output_tokens: 0,
        total_tokens: counted as i64 + output,
    }
}

/// What Anthropic's API refuses in a Messages request (the checks a wrong request body would
/// fail there): no `anthropic-version`, no `max_tokens`, roles that do not alternate starting
/// with `user`, a `tool_result` that answers no `tool_use` of the assistant message before
/// it, or a `tool_use` left without its result.
fn messages_request_error(body: &Value, version_header: bool) -> Option<String> {
    if !version_header {
        return Some("anthropic-version: header is required".into());
    }
    if body.get("max_tokens").and_then(Value::as_u64).is_none() {
        return Some("max_tokens: Field required".into());
    }
    let messages = body.get("messages").and_then(Value::as_array)?;
    let ids = |m: &Value, kind: &str, key: &str| -> Vec<String> {
        m.get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
            .filter_map(|b| b.get(key).and_then(Value::as_str).map(str::to_string))
            .collect()
    };
    let mut expected = "user";
    let mut open_calls: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        if role != expected {
            return Some(format!(
                "messages.{i}: roles must alternate between \"user\" and \"assistant\", starting with \"user\""
            ));
        }
        if role == "user" {
            let results = ids(m, "tool_result", "tool_use_id");
            if let Some(stray) = results.iter().find(|r| !open_calls.contains(r)) {
                return Some(format!(
                    "messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {stray}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                ));
            }
            if let Some(missing) = open_calls.iter().find(|c| !results.contains(c)) {
                return Some(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {missing}"
                ));
            }
            open_calls.clear();
            expected = "assistant";
        } else {
            open_calls = ids(m, "tool_use", "id");
            expected = "user";
        }
    }
    None
}

fn sse_response(turn: &MockTurn, wire: WireApi, model: &str, seq: u64) -> Response<Body> {
    let frames = render(turn, wire, model, seq);
    let delay = turn
        .delay_ms_between_chunks
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis);
    let disconnect_after = turn.disconnect_after_chunks;
    let stall_after = turn.stall_after_chunks;
    // State: index of the next frame, `None` once a scripted disconnect has been sent.
    let stream = futures::stream::unfold(Some(0usize), move |state| {
        let frame = state.and_then(|i| frames.get(i).cloned());
        async move {
            let i = state?;
            if stall_after == Some(i) {
                futures::future::pending::<()>().await;
            }
            if disconnect_after == Some(i) {
                // Returning Pending once lets hyper flush the headers and frames sent so far;
                // then an error from the body makes it drop the connection without the final
                // chunk, which the client sees as a stream cut mid-way.
                tokio::task::yield_now().await;
                let err = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "mock: scripted disconnect",
                );
                return Some((Err(err), None));
            }
            let frame = frame?;
            if let (Some(d), true) = (delay, i > 0) {
                tokio::time::sleep(d).await;
            }
            Some((Ok(Frame::data(Bytes::from(frame))), Some(i + 1)))
        }
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    set_header(&mut resp, "content-type", "text/event-stream");
    set_header(&mut resp, "cache-control", "no-cache");
    for (name, value) in &turn.headers {
        set_header(&mut resp, name, value);
    }
    resp
}

/// The writes of a recorded body: `n`-byte pieces, or one per SSE event (a blank line ends
/// an event; the separator stays with the event before it).
fn recorded_writes(body: &str, write_bytes: Option<usize>) -> Vec<Bytes> {
    let bytes = body.as_bytes();
    if let Some(n) = write_bytes.filter(|n| *n > 0) {
        return bytes.chunks(n).map(Bytes::copy_from_slice).collect();
    }
    let mut writes = Vec::new();
    let mut start = 0;
    while let Some(i) = body[start..].find("\n\n") {
        let end = start + i + 2;
        writes.push(Bytes::copy_from_slice(&bytes[start..end]));
        start = end;
    }
    if start < bytes.len() {
        writes.push(Bytes::copy_from_slice(&bytes[start..]));
    }
    writes
}

fn recorded_response(body: String, write_bytes: Option<usize>) -> Response<Body> {
    let writes = recorded_writes(&body, write_bytes);
    let stream = futures::stream::iter(
        writes
            .into_iter()
            .map(|b| Ok::<_, std::io::Error>(Frame::data(b))),
    );
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    set_header(&mut resp, "content-type", "text/event-stream");
    set_header(&mut resp, "cache-control", "no-cache");
    resp
}

fn status_or_500(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn full(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let body = Full::new(body.into()).map_err(|never: Infallible| match never {});
    let mut resp = Response::new(BodyExt::boxed(body));
    *resp.status_mut() = status;
    resp
}

fn json_response(status: StatusCode, v: Value) -> Response<Body> {
    let mut resp = full(status, v.to_string());
    set_header(&mut resp, "content-type", "application/json");
    resp
}

fn error_response(status: StatusCode, message: &str) -> Response<Body> {
    json_response(
        status,
        json!({ "error": { "message": message, "type": "mock_error" } }),
    )
}

fn set_header(resp: &mut Response<Body>, name: &str, value: &str) {
    if let (Ok(n), Ok(v)) = (
        hyper::header::HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        resp.headers_mut().insert(n, v);
    }
}

#[cfg(test)]
mod tests {
    use super::recorded_writes;

    #[test]
    fn recorded_bodies_are_written_per_event_or_per_n_bytes() {
        let body = ": source: test\n\ndata: {\"a\":1}\n\ndata: [DONE]\n\n";
        let per_event: Vec<&[u8]> = vec![
            b": source: test\n\n",
            b"data: {\"a\":1}\n\n",
            b"data: [DONE]\n\n",
        ];
        assert_eq!(
            recorded_writes(body, None)
                .iter()
                .map(|b| b.as_ref())
                .collect::<Vec<_>>(),
            per_event
        );
        let pieces = recorded_writes(body, Some(5));
        assert!(pieces.iter().all(|p| p.len() <= 5));
        assert_eq!(pieces.concat(), body.as_bytes());
        // A body without a final blank line still goes out whole.
        assert_eq!(recorded_writes("data: x", None).concat(), b"data: x");
    }
}
