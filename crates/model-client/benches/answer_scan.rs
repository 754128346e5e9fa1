//! What the end-of-answer checks cost (`cargo bench -p oi-model-client --bench answer_scan`):
//! every final answer is scanned for tool calls nobody ran ([`unrun_tool_call`]), which
//! must stay negligible beside a model's answer even for a long one full of code and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_model_client::unrun_tool_call;
use oi_protocol::models::ToolSpec;
use serde_json::json;
use std::time::Instant;

fn main() {
    let tools = vec![
        ToolSpec {
            name: "shell".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{"command":{"type":"array"}},"required":["command"]}),
        },
        ToolSpec {
            name: "apply_patch".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}),
        },
    ];
    // A long answer: prose, code blocks and JSON that is not a call, ~100 KB.
    let chunk = "Here is what changed in `src/lib.rs`, and why it matters for the parser.\n\n```rust\nfn parse(input: &str) -> Result<Value, Error> {\n    let v: Value = serde_json::from_str(input)?;\n    Ok(v)\n}\n```\n\nThe config is `{\"name\": \"demo\", \"version\": \"1.0\"}` and\n```json\n{\"name\": \"demo\", \"dependencies\": {\"serde\": \"1\"}}\n```\n";
    let answer = chunk.repeat(100_000 / chunk.len());
    let n = 200;
    let start = Instant::now();
    let mut found = 0;
    for _ in 0..n {
        found += usize::from(unrun_tool_call(&answer, &tools).is_some());
    }
    let per = start.elapsed() / n;
    assert_eq!(found, 0, "no call in the answer");
    println!(
        "unrun_tool_call on a {} KB answer: {:.3} ms per answer ({:.0} MB/s)",
        answer.len() / 1024,
        per.as_secs_f64() * 1e3,
        answer.len() as f64 / per.as_secs_f64() / 1e6
    );
    let short = "I created `hello.txt` with `hi` in it and checked it with `cat hello.txt`.";
    let start = Instant::now();
    for _ in 0..100_000 {
        assert!(unrun_tool_call(short, &tools).is_none());
    }
    println!(
        "unrun_tool_call on a one-line answer: {:.2} µs",
        start.elapsed().as_secs_f64() * 1e6 / 100_000.0
    );
}
