//! The conformance host: a test program, not part of the product. It serves our real MCP
//! server (this crate's tables, both eras, the HTTP transport, sealing, subscriptions) over
//! streamable HTTP, with the fixtures the MCP conformance suite
//! (`@modelcontextprotocol/conformance`) calls on its reference server added through the
//! server's extension point ([`oi_mcp_server::additions`]). Each fixture answers through the
//! server's own machinery — a missing client capability is the server's `-32021`, input
//! is asked with its multi round-trip results and sealed `requestState`, logs go out only
//! when a request asked for a level, list changes reach `subscriptions/listen` — so the
//! suite's checks that need a fixture test our code, not canned JSON.
//!
//! `cargo run -p oi-mcp-server --example conformance-host -- [mcp-server] --listen 127.0.0.1:0`
//! prints `listening on <url>` on stderr (as `interpreter mcp-server --listen` does) and
//! serves without a token, on loopback only. `--no-auth-on-loopback` is accepted (and
//! implied) so test scripts can start it like the product. The home is
//! `$OPENINTERPRETER_HOME` (its `prompts/` folder is where `test_trigger_prompt_change`
//! writes a prompt file).

use oi_jsonrpc::RpcError;
use oi_mcp_server::additions::{AddedRequest, Additions, Outcome};
use oi_mcp_server::protocol::log::LogLevel;
use rmcp::model::{
    CallToolResult, ClientCapabilities, GetPromptResult, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, Tool,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
/// A WAV file of one silent sample.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA==";

type Reply<T> = Result<Outcome<T>, RpcError>;

/// The additions, for the fixtures that change them.
static ADDITIONS: OnceLock<Arc<Additions>> = OnceLock::new();

fn from_json<T: DeserializeOwned>(v: Value) -> T {
    // The fixtures' JSON is written here; a shape rmcp refuses is a bug of this file.
    serde_json::from_value(v).unwrap_or_else(|e| panic!("fixture JSON does not fit: {e}"))
}

fn tool(name: &str, description: &str) -> Tool {
    from_json(json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}}
    }))
}

fn content(items: Value) -> Reply<CallToolResult> {
    Ok(Outcome::Complete(from_json(json!({ "content": items }))))
}

fn text(t: impl Into<String>) -> Reply<CallToolResult> {
    content(json!([{"type": "text", "text": t.into()}]))
}

fn capability(name: &str) -> ClientCapabilities {
    from_json(json!({ name: {} }))
}

fn elicit(message: &str, field: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": "string"}},
                "required": [field]
            }
        }
    })
}

fn sample(question: &str) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": question}}],
            "maxTokens": 100
        }
    })
}

fn list_roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// What the client answered to a form elicitation, field `field`, if it accepted.
fn answered(r: &AddedRequest, key: &str, field: &str) -> Option<String> {
    let reply = r.response(key)?;
    if reply.get("action")?.as_str()? != "accept" {
        return None;
    }
    match reply.get("content")?.get(field)? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn inputs(items: Vec<(&str, Value)>) -> BTreeMap<String, Value> {
    items.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn ask(r: &AddedRequest, items: Vec<(&str, Value)>, state: Option<Value>) -> Reply<CallToolResult> {
    Ok(Outcome::InputRequired(
        r.input_required(inputs(items), state.as_ref())?,
    ))
}

/// The content tools of `tools-call-*`.
fn content_tools(a: Additions) -> Additions {
    a.with_tool(tool("test_simple_text", "Returns a text"), |_| async {
        text("This is a simple text response for testing.")
    })
    .with_tool(tool("test_image_content", "Returns an image"), |_| async {
        content(json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]))
    })
    .with_tool(tool("test_audio_content", "Returns audio"), |_| async {
        content(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]))
    })
    .with_tool(
        tool("test_embedded_resource", "Returns an embedded resource"),
        |_| async {
            content(json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}]))
        },
    )
    .with_tool(
        tool("test_multiple_content_types", "Returns text, an image and a resource"),
        |_| async {
            content(json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"
                }}
            ]))
        },
    )
    .with_tool(
        tool("test_error_handling", "Fails as a tool (isError)"),
        |_| async {
            Ok(Outcome::Complete(from_json(json!({
                "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
                "isError": true
            }))))
        },
    )
    .with_tool(
        tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100"),
        |r| async move {
            for step in [0.0, 50.0, 100.0] {
                r.progress(step, Some(100.0), Some(format!("Completed step {step} of 100")))
                    .await;
            }
            text("progress reported")
        },
    )
    .with_tool(
        tool("test_tool_with_logging", "Logs three messages at info"),
        |r| async move {
            for m in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                r.log(LogLevel::Info, m).await;
            }
            text("Tool with logging executed successfully")
        },
    )
}

/// The diagnostic tools of `server-stateless`.
fn stateless_tools(a: Additions, home: Option<PathBuf>) -> Additions {
    a.with_tool(
        tool("test_missing_capability", "Needs the sampling capability"),
        |r| async move {
            r.require(
                &capability("sampling"),
                "test_missing_capability samples the client's model",
            )?;
            text("Success")
        },
    )
    .with_tool(
        tool(
            "test_streaming_elicitation",
            "Asks a question through input_required",
        ),
        |r| async move {
            r.require(
                &capability("elicitation"),
                "test_streaming_elicitation asks the user",
            )?;
            r.log(LogLevel::Debug, "asking the user").await;
            if let Some(answer) = answered(&r, "answer", "answer")
                && r.state::<Value>()?.is_some()
            {
                return text(format!("The user said: {answer}"));
            }
            ask(
                &r,
                vec![("answer", elicit("Anything to say?", "answer"))],
                Some(json!({"asked": 1})),
            )
        },
    )
    .with_tool(
        tool("test_logging_tool", "Logs at every level"),
        |r| async move {
            for level in [
                LogLevel::Debug,
                LogLevel::Info,
                LogLevel::Warning,
                LogLevel::Error,
            ] {
                r.log(level, format!("a message at {level:?}")).await;
            }
            text("logged")
        },
    )
    .with_tool(
        tool(
            "test_trigger_tool_change",
            "Adds or removes the tool test_dynamic_tool",
        ),
        |_| async {
            let Some(a) = ADDITIONS.get() else {
                return text("not ready");
            };
            if !a.remove_tool("test_dynamic_tool") {
                a.set_tool(tool("test_dynamic_tool", "Comes and goes"), |_| async {
                    text("still here")
                });
            }
            text("the tool list changed")
        },
    )
    .with_tool(
        tool(
            "test_trigger_prompt_change",
            "Writes a prompt file in the home's prompts folder",
        ),
        move |_| {
            let home = home.clone();
            async move {
                let Some(home) = home else {
                    return Err(RpcError::internal("no home: set OPENINTERPRETER_HOME"));
                };
                let dir = home.join("prompts");
                let n = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default();
                std::fs::create_dir_all(&dir)
                    .and_then(|_| {
                        std::fs::write(
                            dir.join(format!("changed-{n}.md")),
                            "A prompt that came later.\n",
                        )
                    })
                    .map_err(|e| RpcError::internal(format!("cannot write a prompt file: {e}")))?;
                text("the prompt list changed")
            }
        },
    )
}

/// The multi round-trip tools of `input-required-result-*`.
fn input_required_tools(a: Additions) -> Additions {
    a.with_tool(
        tool(
            "test_input_required_result_elicitation",
            "Asks the user's name",
        ),
        |r| async move {
            r.require(&capability("elicitation"), "the tool asks the user")?;
            match answered(&r, "user_name", "name") {
                Some(name) => text(format!("Hello, {name}!")),
                None => ask(
                    &r,
                    vec![("user_name", elicit("What is your name?", "name"))],
                    None,
                ),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_sampling",
            "Asks the client's model",
        ),
        |r| async move {
            r.require(
                &capability("sampling"),
                "the tool samples the client's model",
            )?;
            match r
                .response("capital")
                .and_then(|v| v.get("content")?.get("text")?.as_str())
            {
                Some(t) => text(format!("The model said: {t}")),
                None => ask(
                    &r,
                    vec![("capital", sample("What is the capital of France?"))],
                    None,
                ),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_list_roots",
            "Asks the client's roots",
        ),
        |r| async move {
            r.require(&capability("roots"), "the tool reads the client's roots")?;
            match r.response("roots").and_then(|v| v.get("roots")?.as_array()) {
                Some(roots) => text(format!("{} root(s)", roots.len())),
                None => ask(&r, vec![("roots", list_roots())], None),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_request_state",
            "Round-trips a sealed requestState",
        ),
        |r| async move {
            r.require(&capability("elicitation"), "the tool asks the user")?;
            match (r.state::<Value>()?, r.response("confirm")) {
                (Some(state), Some(_)) if state["step"] == 1 => {
                    text("state-ok: the requestState came back intact")
                }
                _ => ask(
                    &r,
                    vec![("confirm", elicit("Continue?", "ok"))],
                    Some(json!({"step": 1})),
                ),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks the user, the model and the roots",
        ),
        |r| async move {
            let mut needed = capability("elicitation");
            needed.sampling = Some(Default::default());
            needed.roots = Some(Default::default());
            r.require(
                &needed,
                "the tool asks the user, the client's model and its roots",
            )?;
            let keys = ["user_name", "greeting", "roots"];
            if r.state::<Value>()?.is_some() && keys.iter().all(|k| r.response(k).is_some()) {
                return text("all three answers arrived");
            }
            ask(
                &r,
                vec![
                    ("user_name", elicit("What is your name?", "name")),
                    ("greeting", sample("Generate a greeting")),
                    ("roots", list_roots()),
                ],
                Some(json!({"asked": keys})),
            )
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_multi_round",
            "Asks twice, then answers",
        ),
        |r| async move {
            r.require(&capability("elicitation"), "the tool asks the user")?;
            let state = r.state::<Value>()?;
            match state.as_ref().and_then(|s| s["round"].as_u64()) {
                Some(1) => match answered(&r, "step1", "name") {
                    Some(name) => ask(
                        &r,
                        vec![("step2", elicit("Your favourite colour?", "color"))],
                        Some(json!({"round": 2, "name": name})),
                    ),
                    None => ask(
                        &r,
                        vec![("step1", elicit("What is your name?", "name"))],
                        state,
                    ),
                },
                Some(2) => match answered(&r, "step2", "color") {
                    Some(color) => {
                        let name = state
                            .as_ref()
                            .and_then(|s| s["name"].as_str())
                            .unwrap_or("");
                        text(format!("{name} likes {color}"))
                    }
                    None => ask(
                        &r,
                        vec![("step2", elicit("Your favourite colour?", "color"))],
                        state,
                    ),
                },
                _ => ask(
                    &r,
                    vec![("step1", elicit("What is your name?", "name"))],
                    Some(json!({"round": 1})),
                ),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_tampered_state",
            "Refuses a changed requestState",
        ),
        |r| async move {
            r.require(&capability("elicitation"), "the tool asks the user")?;
            match (r.state::<Value>()?, r.response("confirm")) {
                (Some(_), Some(_)) => text("the requestState was intact"),
                _ => ask(
                    &r,
                    vec![("confirm", elicit("Continue?", "ok"))],
                    Some(json!({"step": 1})),
                ),
            }
        },
    )
    .with_tool(
        tool(
            "test_input_required_result_capabilities",
            "Asks only what the client can answer",
        ),
        |r| async move {
            let caps = r.capabilities();
            if r.state::<Value>()?.is_some() {
                return text("answered");
            }
            let mut asked = Vec::new();
            if caps.elicitation.is_some() {
                asked.push(("user_name", elicit("What is your name?", "name")));
            }
            if caps.sampling.is_some() {
                asked.push(("greeting", sample("Generate a greeting")));
            }
            if asked.is_empty() {
                r.require(
                    &capability("sampling"),
                    "the tool asks the client's model or the user",
                )?;
            }
            ask(&r, asked, Some(json!({"asked": true})))
        },
    )
}

/// The prompts of `prompts-get-*` and `input-required-result-non-tool-request`.
fn prompts(a: Additions) -> Additions {
    fn prompt(v: Value) -> Prompt {
        from_json(v)
    }
    fn messages(v: Value) -> Reply<GetPromptResult> {
        Ok(Outcome::Complete(from_json(json!({ "messages": v }))))
    }
    a.with_prompt(
        prompt(json!({"name": "test_simple_prompt", "description": "A simple prompt"})),
        |_| async { messages(json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])) },
    )
    .with_prompt(
        prompt(json!({"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
            "arguments": [{"name": "arg1", "required": true}, {"name": "arg2", "required": true}]})),
        |r| async move {
            let (a1, a2) = (r.argument("arg1").unwrap_or(""), r.argument("arg2").unwrap_or(""));
            messages(json!([{"role": "user", "content": {"type": "text",
                "text": format!("Prompt with arguments: arg1='{a1}', arg2='{a2}'")}}]))
        },
    )
    .with_prompt(
        prompt(json!({"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource",
            "arguments": [{"name": "resourceUri", "required": true}]})),
        |r| async move {
            let uri = r.argument("resourceUri").unwrap_or("test://example-resource").to_string();
            messages(json!([
                {"role": "user", "content": {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
            ]))
        },
    )
    .with_prompt(
        prompt(json!({"name": "test_prompt_with_image", "description": "A prompt with an image"})),
        |_| async {
            messages(json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
            ]))
        },
    )
    .with_prompt(
        prompt(json!({"name": "test_input_required_result_prompt", "description": "A prompt that asks the user first"})),
        |r| async move {
            r.require(&capability("elicitation"), "the prompt asks the user")?;
            match answered(&r, "user_context", "context") {
                Some(c) => messages(json!([{"role": "user", "content": {"type": "text", "text": format!("Prompt with context: {c}")}}])),
                None => Ok(Outcome::InputRequired(r.input_required(
                    inputs(vec![("user_context", elicit("What context should the prompt use?", "context"))]),
                    Some(&json!({"prompt": 1})),
                )?)),
            }
        },
    )
}

/// The `test://` resources of `resources-read-*` and `resources-templates-read`.
fn resources(a: Additions) -> Additions {
    let listed: Vec<Resource> = from_json(json!([
        {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"}
    ]));
    let templates: Vec<ResourceTemplate> = from_json(json!([
        {"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json"}
    ]));
    a.with_resources(listed, templates, |uri| {
        let contents = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            _ => {
                let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
                if id.is_empty() || id.contains('/') {
                    return None;
                }
                json!({"uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()})
            }
        };
        // Fixed content: anyone may keep it for a minute.
        Some(from_json::<ReadResourceResult>(
            json!({ "contents": [contents], "ttlMs": 60_000, "cacheScope": "public" }),
        ))
    })
}

fn fixtures(home: Option<PathBuf>) -> Additions {
    let a = Additions::default();
    let a = content_tools(a);
    let a = stateless_tools(a, home);
    let a = input_required_tools(a);
    let a = prompts(a);
    resources(a).with_completion(|p| {
        // The suite's prompt argument values: what starts with what was typed.
        let typed = p.argument.value.to_lowercase();
        let values: Vec<String> = ["paris", "park", "party", "test", "testing"]
            .into_iter()
            .filter(|v| v.starts_with(&typed))
            .map(String::from)
            .collect();
        from_json(json!({ "values": values, "hasMore": false }))
    })
}

fn listen_address() -> Result<SocketAddr, String> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("mcp-server") {
        args.next();
    }
    let mut listen = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => listen = args.next(),
            "--no-auth-on-loopback" => {}
            other => {
                return Err(format!(
                    "unknown argument {other}; use --listen 127.0.0.1:PORT"
                ));
            }
        }
    }
    let listen = listen.ok_or("--listen 127.0.0.1:PORT is required")?;
    let addr: SocketAddr = listen
        .parse()
        .map_err(|e| format!("--listen {listen}: {e}"))?;
    if !addr.ip().is_loopback() {
        return Err("the conformance host serves loopback only (it has no token)".into());
    }
    Ok(addr)
}

#[tokio::main]
async fn main() {
    let addr = match listen_address() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let home = oi_config::find_home().ok();
    if let Some(home) = &home
        && let Err(e) = oi_mcp_server::check_state_key(home)
    {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let additions = Arc::new(fixtures(home));
    let _ = ADDITIONS.set(additions.clone());
    let session = additions.clone();
    let services =
        oi_host::Services::new(move |ctx| oi_mcp_server::methods_with(ctx, session.clone()))
            .with_stateless(move |ctx| {
                oi_mcp_server::stateless_methods_with(ctx, additions.clone())
            });
    let options = oi_host::HostOptions::new(oi_core::SessionSource::Mcp);
    let code = oi_host::run_http(options, oi_jsonrpc::http::HttpOptions::new(addr), services).await;
    std::process::exit(code);
}
