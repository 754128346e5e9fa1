//! Tool calls written as plain JSON in the answer, the way small open models write them when
//! they do not use their template's markup: a fenced ```` ```json ```` block, bare JSON, or
//! JSON inside `<tools>`/`<function_call>` tags, holding `{"name": …, "arguments": …}`.
//!
//! JSON is also how a model *explains* a call, so the rule is stricter than for template
//! markup: the calls must end the answer (only whitespace after and between them), the text
//! before them is a short lead-in without code of its own, and every call names an offered
//! tool. Anything else stays text; [`unrun_call`] then tells the engine that the answer holds
//! a call nobody ran, so the turn does not end as a false success.

use oi_protocol::models::ToolSpec;
use serde_json::{Map, Value};

use super::TextToolCall;

mod command_runners;

/// Longest lead-in (in bytes) accepted before the calls: a sentence or two, not a tutorial.
const MAX_LEAD_IN: usize = 600;

/// Info strings of fences that may hold a call.
const CALL_FENCES: [&str; 7] = [
    "",
    "json",
    "jsonc",
    "json5",
    "tool_call",
    "tool_code",
    "function_call",
];

/// Tags some models wrap JSON calls in (besides `<tool_call>`, handled with the markup).
pub(crate) const JSON_WRAPPERS: [(&str, &str); 2] = [
    ("<tools>", "</tools>"),
    ("<function_call>", "</function_call>"),
];

/// The calls when the answer is nothing but a lead-in and JSON calls of offered tools, with
/// the lead-in (trimmed) that stays as the answer text.
pub(crate) fn extract(text: &str, tools: &[ToolSpec]) -> Option<(String, Vec<TextToolCall>)> {
    if tools.is_empty() || !text.contains('{') {
        return None;
    }
    let mut blocks = call_blocks(text);
    let first_start = blocks.first()?.start;
    // Only whitespace between and after the blocks; what a model makes up as the calls'
    // output ends them (the calls before it are run, the fiction is dropped).
    let mut end = first_start;
    let mut taken = 0;
    for b in &blocks {
        let gap = &text[end..b.start];
        if made_up_output(gap) {
            break;
        }
        if !gap.trim().is_empty() {
            return None;
        }
        // An output fence after the calls is a block too, but no call.
        if taken > 0 && parse_calls(&b.body).is_none() && made_up_output(&text[b.start..]) {
            break;
        }
        end = b.end;
        taken += 1;
    }
    let rest = &text[end..];
    if !rest.trim().is_empty() && !made_up_output(rest) {
        return None;
    }
    blocks.truncate(taken);
    let lead_in = text[..first_start].trim();
    if lead_in.len() > MAX_LEAD_IN || lead_in.contains("```") || lead_in.contains("~~~") {
        return None;
    }
    let mut calls = Vec::new();
    for b in &blocks {
        let parsed = parse_calls(&b.body)?;
        for (name, args) in parsed {
            calls.push(offered_call(name, args, tools)?);
        }
    }
    (!calls.is_empty()).then(|| (lead_in.to_string(), calls))
}

/// Whether `rest`, the text right after a call, starts with the call's output the model made
/// up instead of waiting for it (recorded on small Qwen models: a `<tool_response>` block in
/// its template's markup, an `Output:` line, or an output code block). The call is complete
/// and valid before it: it is run, and the made-up part dropped.
fn made_up_output(rest: &str) -> bool {
    let t = rest.trim_start();
    let lower: String = t.chars().take(40).collect::<String>().to_ascii_lowercase();
    const TAGS: [&str; 6] = [
        "<tool_response>",
        "<tool_result>",
        "<|im_start|>",
        "<|im_end|>",
        "<output>",
        "<result>",
    ];
    if TAGS.iter().any(|tag| lower.starts_with(tag)) {
        return true;
    }
    let first_line = lower.lines().next().unwrap_or("").trim();
    const LABELS: [&str; 7] = [
        "output:",
        "result:",
        "results:",
        "response:",
        "tool output:",
        "tool response:",
        "stdout:",
    ];
    if LABELS.contains(&first_line) {
        return true;
    }
    // An output fence: ```output, ```text, ```console, or one without an info string.
    fence_open(t.lines().next().unwrap_or("").trim()).is_some_and(|(_, _, info)| {
        matches!(
            info.as_str(),
            "" | "output" | "text" | "txt" | "console" | "stdout" | "plaintext" | "shell-session"
        )
    })
}

/// A call anywhere in `text` that was not run: the name it calls. Used on a final answer
/// after extraction found nothing to run. Finds call-shaped JSON (fenced, bare, wrapped or
/// inside a line of prose), a call block too broken to parse that still names an offered
/// tool (`"name": "shell"`), and a pseudo call of an offered tool on a line of its own in a
/// code block (`shell ["python3", "t.py"]`, `apply_patch({...})`).
pub(crate) fn unrun_call(text: &str, tools: &[ToolSpec]) -> Option<String> {
    for b in call_blocks(text) {
        if let Some(calls) = parse_calls(&b.body)
            && let Some((name, _)) = calls.into_iter().next()
        {
            return Some(name);
        }
        if let Some(t) = tools.iter().find(|t| names_tool(&b.body, &t.name)) {
            return Some(t.name.clone());
        }
    }
    if let Some(name) = pseudo_call(text, tools) {
        return Some(name);
    }
    if !text.contains('{') {
        return None;
    }
    // JSON in the middle of a line of prose: try every `{"name"` as the start of an object.
    let mut from = 0;
    while let Some(i) = text[from..].find("{\"name\"") {
        let start = from + i;
        if let Some(end) = object_end(text, start)
            && let Some(calls) = parse_calls(&text[start..end])
            && let Some((name, _)) = calls.into_iter().next()
        {
            return Some(name);
        }
        from = start + 1;
    }
    None
}

/// The calls of offered tools written as JSON anywhere in `text` (fenced, bare, wrapped or
/// inside a line of prose), parsed, with their arguments shaped for the tool. For an answer
/// [`extract`] left as text.
pub(crate) fn written_calls(text: &str, tools: &[ToolSpec]) -> Vec<TextToolCall> {
    let mut found: Vec<(String, Value)> = Vec::new();
    let mut covered: Vec<(usize, usize)> = Vec::new();
    for b in call_blocks(text) {
        if let Some(calls) = parse_calls(&b.body) {
            found.extend(calls);
            covered.push((b.start, b.end));
        }
    }
    let mut from = 0;
    while let Some(i) = text[from..].find("{\"name\"") {
        let start = from + i;
        from = start + 1;
        if covered.iter().any(|(s, e)| (*s..*e).contains(&start)) {
            continue;
        }
        if let Some(end) = object_end(text, start)
            && let Some(calls) = parse_calls(&text[start..end])
        {
            found.extend(calls);
            covered.push((start, end));
        }
    }
    found
        .into_iter()
        .filter_map(|(name, args)| offered_call(name, args, tools))
        .collect()
}

/// A written call as the call of an offered tool: the tool it names, or the offered shell
/// when it names a command runner that is not offered (see [`command_runners`]).
fn offered_call(name: String, args: Value, tools: &[ToolSpec]) -> Option<TextToolCall> {
    if let Some(tool) = tools.iter().find(|t| t.name == name) {
        return Some(TextToolCall {
            name,
            arguments: fit_arguments(args, &tool.parameters).to_string(),
        });
    }
    let (tool, args) = command_runners::as_shell_call(&name, &args, tools)?;
    Some(TextToolCall {
        name: tool.name.clone(),
        arguments: args.to_string(),
    })
}

/// `"name": "<tool>"` in a block: a call, whatever else is wrong with it.
fn names_tool(body: &str, tool: &str) -> bool {
    let compact: String = body.split_whitespace().collect();
    compact.contains(&format!("\"name\":\"{tool}\""))
}

/// A line in a fenced block that starts with an offered tool's name followed by its
/// arguments: `shell ["ls"]`, `shell(["ls"])`, `apply_patch {"input": …}`.
fn pseudo_call(text: &str, tools: &[ToolSpec]) -> Option<String> {
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            continue;
        }
        for tool in tools {
            if let Some(rest) = t.strip_prefix(tool.name.as_str())
                && matches!(rest.trim_start().chars().next(), Some('(' | '[' | '{'))
            {
                return Some(tool.name.clone());
            }
        }
    }
    None
}

/// A stretch of the answer that may hold calls: a fenced block, a wrapper tag, or bare JSON
/// starting a line.
struct Block {
    start: usize,
    end: usize,
    body: String,
}

fn call_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |n| pos + n + 1);
        let line = &text[pos..line_end];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(fence) = fence_open(trimmed) {
            let body_start = line_end;
            let (body_end, end) = fence_close(text, body_start, fence.0, fence.1);
            if CALL_FENCES.contains(&fence.2.as_str()) {
                blocks.push(Block {
                    start: pos,
                    end,
                    body: text[body_start..body_end].to_string(),
                });
            }
            pos = end;
            continue;
        }
        if let Some((open, close)) = JSON_WRAPPERS.iter().find(|(o, _)| trimmed.starts_with(o)) {
            let inner_start = pos + indent + open.len();
            let (inner_end, end) = match text[inner_start..].find(close) {
                Some(i) => (inner_start + i, inner_start + i + close.len()),
                None => (text.len(), text.len()),
            };
            blocks.push(Block {
                start: pos,
                end,
                body: text[inner_start..inner_end].to_string(),
            });
            pos = end;
            continue;
        }
        if trimmed.starts_with('{') || trimmed.starts_with('[') {
            let start = pos + indent;
            if let Some(end) = object_end(text, start) {
                blocks.push(Block {
                    start: pos,
                    end,
                    body: text[start..end].to_string(),
                });
                pos = end;
                continue;
            }
        }
        pos = line_end;
    }
    blocks
}

/// A fence line: its character, length and lower-case info string.
fn fence_open(line: &str) -> Option<(char, usize, String)> {
    let c = line.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let len = line.chars().take_while(|x| *x == c).count();
    if len < 3 {
        return None;
    }
    let info = line[len..].trim().to_ascii_lowercase();
    // A one-line ```{...}``` is not a fence opener.
    if c == '`' && info.contains('`') {
        return None;
    }
    Some((c, len, info))
}

/// Where a fenced body ends (before the closing fence line) and where the block ends (after
/// it). An unclosed fence runs to the end.
fn fence_close(text: &str, from: usize, c: char, len: usize) -> (usize, usize) {
    let mut j = from;
    while j < text.len() {
        let line_end = text[j..].find('\n').map_or(text.len(), |n| j + n + 1);
        let t = text[j..line_end].trim();
        if t.chars().count() >= len && t.chars().all(|x| x == c) {
            return (j, line_end);
        }
        j = line_end;
    }
    (text.len(), text.len())
}

/// The end (exclusive) of the JSON object or array starting at `start`, by bracket matching
/// outside strings.
pub(crate) fn object_end(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The calls in one block: a call object, an array of them, or several objects one after
/// another (separated by whitespace, commas, or Llama's `;`). `None` when any part is not a
/// call.
pub(crate) fn parse_calls(body: &str) -> Option<Vec<(String, Value)>> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let end = object_end(rest, 0)?;
        let piece = &rest[..end];
        let value = lenient_json(piece).or_else(|| lenient_json(without_doubled_braces(piece)?))?;
        match value {
            Value::Array(items) if !items.is_empty() => {
                for item in items {
                    calls.push(call_of(&item)?);
                }
            }
            other => calls.push(call_of(&other)?),
        }
        rest = rest[end..].trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == ';');
    }
    (!calls.is_empty()).then_some(calls)
}

/// A call written with doubled braces, `{{"name": …, "arguments": {…}}}`, as a template's
/// escaped example reads (recorded on Qwen2.5-Coder-1.5B, several times a round): the object
/// inside them.
fn without_doubled_braces(piece: &str) -> Option<&str> {
    piece
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .map(str::trim)
        .filter(|inner| inner.starts_with('{') && inner.ends_with('}'))
}

/// `{"name", "arguments"|"parameters"}`, or the same inside `{"function": …}` (OpenAI's
/// `tool_calls` entry written out as text).
fn call_of(v: &Value) -> Option<(String, Value)> {
    let obj = v.as_object()?;
    if let Some(f) = obj.get("function").filter(|f| f.is_object()) {
        return call_of(f);
    }
    let name = obj.get("name")?.as_str()?.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let args = obj.get("arguments").or_else(|| obj.get("parameters"))?;
    let args = match args {
        // Arguments as a JSON string, as on the wire.
        Value::String(s) => lenient_json(s).unwrap_or_else(|| Value::String(s.clone())),
        other => other.clone(),
    };
    Some((name.to_string(), args))
}

/// JSON as models write it by hand: raw newlines and tabs inside strings, trailing commas,
/// `//` or `/* */` comments, and Python's `"""triple-quoted"""` strings are accepted.
pub(crate) fn lenient_json(s: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(s) {
        return Some(v);
    }
    let mut fixed = String::with_capacity(s.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = s.chars().collect();
    let mut skip_to: usize = 0;
    for (i, &c) in chars.iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if in_string {
            match (escaped, c) {
                // An escape JSON does not have (`\$`, written for the shell): the
                // backslash is kept as written.
                (true, c) if !matches!(c, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u') => {
                    escaped = false;
                    fixed.push('\\');
                    fixed.push(c);
                }
                (true, _) => {
                    escaped = false;
                    fixed.push(c);
                }
                (false, '\\') => {
                    escaped = true;
                    fixed.push(c);
                }
                (false, '"') => {
                    in_string = false;
                    fixed.push(c);
                }
                (false, '\n') => fixed.push_str("\\n"),
                (false, '\r') => fixed.push_str("\\r"),
                (false, '\t') => fixed.push_str("\\t"),
                (false, c) if (c as u32) < 0x20 => fixed.push_str(&format!("\\u{:04x}", c as u32)),
                (false, c) => fixed.push(c),
            }
            continue;
        }
        match c {
            '"' if chars[i..].starts_with(&['"', '"', '"']) => {
                let body_start = i + 3;
                let len = chars[body_start..]
                    .windows(3)
                    .position(|w| w == ['"', '"', '"'])?;
                let body: String = chars[body_start..body_start + len].iter().collect();
                fixed.push_str(&Value::String(body).to_string());
                skip_to = body_start + len + 3;
            }
            '"' => {
                in_string = true;
                fixed.push(c);
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                skip_to = chars[i..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(chars.len(), |n| i + n);
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                skip_to = chars[i + 2..]
                    .windows(2)
                    .position(|w| w == ['*', '/'])
                    .map_or(chars.len(), |n| i + 2 + n + 2);
            }
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if !matches!(next, Some('}') | Some(']')) {
                    fixed.push(c);
                }
            }
            c => fixed.push(c),
        }
    }
    serde_json::from_str(&fixed).ok()
}

/// Arguments shaped the way the tool's schema wants them, where a small model's shape is
/// unambiguous: a bare value (e.g. the argv list `["bash", "-lc", "…"]` for `shell`) goes
/// under the tool's one required parameter, and a list of lists where a list of strings is
/// wanted is flattened when it holds one list. Anything else is passed on as written; the
/// tool then reports what does not fit, and the model can fix it.
pub(crate) fn fit_arguments(args: Value, schema: &Value) -> Value {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut obj = match args {
        Value::Object(obj) => obj,
        Value::Null => Map::new(),
        bare => {
            let Some(key) = sole_parameter(schema) else {
                return bare;
            };
            let mut obj = Map::new();
            obj.insert(key, bare);
            obj
        }
    };
    if let Some(props) = props {
        for (key, value) in obj.iter_mut() {
            // A text parameter sent as its list of lines (recorded: a patch as
            // `["*** Begin Patch", "*** Add File: …", …]`).
            let wants_string = props
                .get(key)
                .is_some_and(|p| p.get("type").and_then(Value::as_str) == Some("string"));
            if wants_string
                && let Value::Array(items) = value
                && !items.is_empty()
                && items.iter().all(Value::is_string)
            {
                let lines: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                *value = Value::String(lines.join("\n"));
                continue;
            }
            let wants_string_list = props.get(key).is_some_and(|p| {
                p.get("type").and_then(Value::as_str) == Some("array")
                    && p.pointer("/items/type").and_then(Value::as_str) == Some("string")
            });
            if wants_string_list
                && let Value::Array(items) = value
                && items.len() == 1
                && items[0]
                    .as_array()
                    .is_some_and(|a| a.iter().all(Value::is_string))
            {
                let inner = items.remove(0);
                *value = inner;
            }
        }
    }
    Value::Object(obj)
}

/// The parameter a bare value belongs to: the only required one, or the only one.
fn sole_parameter(schema: &Value) -> Option<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let [one] = required.as_slice() {
        return Some((*one).to_string());
    }
    let props = schema.get("properties")?.as_object()?;
    (props.len() == 1)
        .then(|| props.keys().next().cloned())
        .flatten()
}

#[cfg(test)]
mod tests;
