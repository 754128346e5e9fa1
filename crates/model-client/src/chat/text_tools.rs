//! Tool calls left in the answer text because the server's tool-call parser is off.
//!
//! Open models write their calls in their chat template's own markup; a server with its
//! tool parser on (vLLM `--enable-auto-tool-choice --tool-call-parser …`, llama.cpp
//! `--jinja`) turns that markup into `tool_calls`. Without it the markup arrives as text.
//! Four families cover the models we target:
//!
//! * Hermes / Qwen2.5 / Qwen3: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
//! * Qwen3-Coder: `<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>`
//!   (the outer `<tool_call>` is sometimes missing)
//! * GLM-4.5/4.6: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`
//! * Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0
//!   <|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>`
//!
//! and the special-token forms of Mistral, Llama 3, DeepSeek V3 and gpt-oss harmony
//! ([`tokens`]).
//!
//! Only calls of tools offered in the request are taken, and never markup inside a Markdown
//! code block or inline code span (a model explaining the format is not calling a tool).

use oi_protocol::models::{ResponseItem, ToolSpec};
use serde_json::{Map, Value};

pub(crate) mod json_calls;
use crate::{ResponseEvent, synthesize_call_id};

mod tokens;

/// Which markup the calls were written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextToolFormat {
    Hermes,
    Qwen3Coder,
    Glm,
    Kimi,
    Mistral,
    Llama,
    DeepSeek,
    Harmony,
    /// `{"name": …, "arguments": …}` as plain JSON, fenced or bare (see `json_calls`).
    Json,
    /// `<function name="NAME" arguments='{…}'/>` (or the JSON as the element's body), often
    /// inside `<tools>`: no template's markup, but what small Qwen models write when the
    /// tools are not Codex's.
    FunctionTag,
}

impl TextToolFormat {
    /// What the user can change on the server so it parses these calls itself.
    pub(crate) fn server_hint(self) -> &'static str {
        match self {
            TextToolFormat::Hermes => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser hermes`; llama.cpp: `llama-server --jinja`; LM Studio: use a model build whose template supports tools"
            }
            TextToolFormat::Qwen3Coder => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser qwen3_coder`; llama.cpp: `llama-server --jinja`; Ollama: update Ollama and the model (`ollama pull`)"
            }
            TextToolFormat::Glm => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser glm45`; SGLang: `--tool-call-parser glm45`; llama.cpp: `llama-server --jinja`"
            }
            TextToolFormat::Kimi => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser kimi_k2`; SGLang: `--tool-call-parser kimi_k2`"
            }
            TextToolFormat::Mistral => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser mistral` (with `--tokenizer-mode mistral`); llama.cpp: `llama-server --jinja`"
            }
            TextToolFormat::Llama => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser llama3_json`; llama.cpp: `llama-server --jinja`"
            }
            TextToolFormat::DeepSeek => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser deepseek_v3` (V3.1: `deepseek_v31`); SGLang: `--tool-call-parser deepseekv3`; llama.cpp: `llama-server --jinja`"
            }
            TextToolFormat::Harmony => {
                "vLLM: `--enable-auto-tool-choice --tool-call-parser openai --reasoning-parser openai_gptoss`; llama.cpp: `llama-server --jinja`; Ollama and LM Studio parse harmony themselves (update them)"
            }
            TextToolFormat::Json | TextToolFormat::FunctionTag => {
                "this shape is not the model's template markup, so no server parser catches it (llama.cpp parses only the template's `<tool_call>`); set `tool_call_format = \"text\"` for this model (docs/providers.md, \"Tool calls as text\") so it is taught one format and holds to it"
            }
        }
    }

    /// Whether this is the chat template's own markup, which a server with its tool-call
    /// parser on turns into `tool_calls`: then calls in the text mean the parser is off.
    /// Plain JSON and function tags are shapes no parser catches.
    pub(crate) fn is_template_markup(self) -> bool {
        !matches!(self, TextToolFormat::Json | TextToolFormat::FunctionTag)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            TextToolFormat::Hermes => "Hermes/Qwen `<tool_call>`",
            TextToolFormat::Qwen3Coder => "Qwen3-Coder `<function=…>`",
            TextToolFormat::Glm => "GLM `<arg_key>`",
            TextToolFormat::Kimi => "Kimi `<|tool_call_begin|>`",
            TextToolFormat::Mistral => "Mistral `[TOOL_CALLS]`",
            TextToolFormat::Llama => "Llama 3 `<|python_tag|>`",
            TextToolFormat::DeepSeek => "DeepSeek `<｜tool▁calls▁begin｜>`",
            TextToolFormat::Harmony => "gpt-oss harmony `to=functions.…`",
            TextToolFormat::Json => "plain JSON `{\"name\": …, \"arguments\": …}`",
            TextToolFormat::FunctionTag => "`<function name=… arguments=…/>`",
        }
    }
}

/// A call recovered from text: tool name and JSON arguments.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TextToolCall {
    pub name: String,
    pub arguments: String,
}

/// The answer with its call markup taken out, and the calls.
#[derive(Debug, PartialEq)]
pub(crate) struct Extracted {
    pub text: String,
    pub calls: Vec<TextToolCall>,
    pub format: TextToolFormat,
}

impl Extracted {
    /// The event that says the calls came from the text, naming the format (and so the
    /// server's tool parser to turn on).
    pub(crate) fn recovered_event(&self) -> ResponseEvent {
        ResponseEvent::ToolCallsRecoveredFromText {
            format: self.format.name().to_string(),
            server_hint: self.format.server_hint().to_string(),
            parser_off: self.format.is_template_markup(),
        }
    }
}

impl TextToolCall {
    /// The call as a finished item, like a call the server parsed, under a new call id.
    pub(crate) fn into_done(self) -> ResponseEvent {
        ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
            call_id: synthesize_call_id(),
            name: self.name,
            arguments: self.arguments,
        })
    }
}

const MARKERS: [&str; 9] = [
    "<tool_call>",
    "<function=",
    "<function name=",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    tokens::PYTHON_TAG,
    tokens::DEEPSEEK_CALLS_BEGIN,
    tokens::DEEPSEEK_CALL_BEGIN,
    "to=functions.",
];

/// Cheap test run on every finished text answer before the real parse.
pub(crate) fn may_contain_calls(text: &str) -> bool {
    (text.contains('<') && MARKERS.iter().any(|m| text.contains(m)))
        || text.contains(tokens::MISTRAL)
}

/// Kimi's call markup, as servers leak it beside parsed calls.
const KIMI_MARKERS: [&str; 5] = [
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_call_argument_begin|>",
];

/// `text` without call markup a server leaked beside the calls it parsed: whole Kimi call
/// sections (`<|tool_call_begin|> functions.f:0 {…} <|tool_call_end|>`) and stray markers.
/// Text outside them is kept.
pub(crate) fn without_call_markup(text: &str) -> String {
    if !text.contains("<|tool_call") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<|tool_call") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        // A call runs to its end marker; a section marker alone is dropped.
        let end = if after.starts_with("<|tool_call_begin|>") {
            after
                .find("<|tool_call_end|>")
                .map_or(after.len(), |i| i + "<|tool_call_end|>".len())
        } else {
            KIMI_MARKERS
                .iter()
                .find(|m| after.starts_with(**m))
                .map_or("<|tool_call".len(), |m| m.len())
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// Finds the tool calls in `text`. `None` when there is no call of an offered tool outside
/// code; then the text stays as it is.
pub(crate) fn extract(text: &str, tools: &[ToolSpec]) -> Option<Extracted> {
    if tools.is_empty() {
        return None;
    }
    let mut found = extract_markup(text, tools).or_else(|| {
        json_calls::extract(text, tools).map(|(text, calls)| Extracted {
            text,
            calls,
            format: TextToolFormat::Json,
        })
    })?;
    for call in &mut found.calls {
        if let Some(tool) = tools.iter().find(|t| t.name == call.name)
            && let Some(args) = json_calls::lenient_json(&call.arguments)
        {
            call.arguments = json_calls::fit_arguments(args, &tool.parameters).to_string();
        }
    }
    Some(found)
}

/// A tool call left in a final answer that [`extract`] did not take (inside prose, of a tool
/// that was not offered, or not parseable): the name it calls, or `"?"` for template markup
/// whose name could not be read. Code blocks that show markup are not calls; JSON calls are
/// found anywhere, since a fenced JSON call is exactly how small models write real calls.
pub(crate) fn unrun_call(text: &str, tools: &[ToolSpec]) -> Option<String> {
    if let Some(name) = json_calls::unrun_call(text, tools) {
        return Some(name);
    }
    if !may_contain_calls(text) {
        return None;
    }
    let code = code_regions(text);
    let in_code = |at: usize| code.iter().any(|(s, e)| (*s..*e).contains(&at));
    let mut pos = 0;
    while let Some((start, end, _)) = next_block(text, pos) {
        if !in_code(start) {
            let block = &text[start..end];
            let name = block
                .split_once("<function=")
                .map(|(_, r)| r.split('>').next().unwrap_or("").trim().to_string())
                .or_else(|| attribute(block, "name"))
                .filter(|n| !n.is_empty());
            return Some(name.unwrap_or_else(|| "?".to_string()));
        }
        pos = end;
    }
    None
}

fn extract_markup(text: &str, tools: &[ToolSpec]) -> Option<Extracted> {
    if !may_contain_calls(text) {
        return None;
    }
    let code = code_regions(text);
    let in_code = |at: usize| code.iter().any(|(s, e)| (*s..*e).contains(&at));
    let mut calls = Vec::new();
    let mut kept = String::new();
    let mut format = None;
    let mut pos = 0;
    while let Some((start, end, found)) = next_block(text, pos) {
        let block = &text[start..end];
        let (parsed, found_format) = if in_code(start) {
            (Vec::new(), found.0)
        } else {
            parse_block(block, found, tools)
        };
        kept.push_str(&text[pos..start]);
        if parsed.is_empty() {
            kept.push_str(block);
        } else {
            format.get_or_insert(found_format);
            calls.extend(parsed);
        }
        pos = end;
    }
    kept.push_str(&text[pos..]);
    let format = format?;
    Some(Extracted {
        text: kept.trim().to_string(),
        calls,
        format,
    })
}

/// Which kind of block starts at a marker: its format guess and its end marker.
type Found = (TextToolFormat, &'static str);

/// The next call block at or after `from`: (start, end, kind). An unterminated block runs to
/// the end of the text (the model stopped right after writing it, as many do).
fn next_block(text: &str, from: usize) -> Option<(usize, usize, Found)> {
    let rest = &text[from..];
    let harmony = tokens::HARMONY_STARTS
        .iter()
        .filter_map(|m| rest.find(m))
        .min();
    let candidates: [(Option<usize>, Found); 8] = [
        (
            rest.find("<|tool_calls_section_begin|>")
                .or_else(|| rest.find("<|tool_call_begin|>")),
            (TextToolFormat::Kimi, "<|tool_calls_section_end|>"),
        ),
        (
            rest.find(tokens::DEEPSEEK_CALLS_BEGIN)
                .or_else(|| rest.find(tokens::DEEPSEEK_CALL_BEGIN)),
            (TextToolFormat::DeepSeek, tokens::DEEPSEEK_CALLS_END),
        ),
        // The calls run to the end of the answer (Mistral's `</s>` if the server prints it).
        (
            rest.find(tokens::MISTRAL),
            (TextToolFormat::Mistral, "</s>"),
        ),
        (
            rest.find(tokens::PYTHON_TAG),
            (TextToolFormat::Llama, "<|eom_id|>"),
        ),
        (harmony, (TextToolFormat::Harmony, tokens::HARMONY_CALL)),
        (
            rest.find("<tool_call>"),
            (TextToolFormat::Hermes, "</tool_call>"),
        ),
        (
            rest.find("<function="),
            (TextToolFormat::Qwen3Coder, "</function>"),
        ),
        (
            rest.find("<function name="),
            (TextToolFormat::FunctionTag, "/>"),
        ),
    ];
    let (at, found) = candidates
        .into_iter()
        .filter_map(|(at, f)| at.map(|a| (a, f)))
        .min_by_key(|(a, _)| *a)?;
    let start = from + at;
    let (format, end_marker) = found;
    let after_start = &text[start..];
    // A function tag closes with `/>` or, when the JSON is its body, `</function>`.
    let closing = |marker: &str| after_start.find(marker).map(|i| i + marker.len());
    let end_at = match format {
        TextToolFormat::FunctionTag => match (closing("</function>"), tag_end(after_start)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        _ => closing(end_marker),
    };
    let end = match end_at {
        Some(i) => start + i,
        // Kimi's and DeepSeek's section ends are optional after the last call's end.
        None if format == TextToolFormat::Kimi => after_start
            .rfind("<|tool_call_end|>")
            .map(|i| start + i + "<|tool_call_end|>".len())
            .unwrap_or(text.len()),
        None if format == TextToolFormat::DeepSeek => after_start
            .rfind(tokens::DEEPSEEK_CALL_END)
            .map(|i| start + i + tokens::DEEPSEEK_CALL_END.len())
            .unwrap_or(text.len()),
        None => text.len(),
    };
    Some((start, end, found))
}

/// The calls in one block and the family they turned out to be written in.
fn parse_block(
    block: &str,
    found: Found,
    tools: &[ToolSpec],
) -> (Vec<TextToolCall>, TextToolFormat) {
    let (calls, format): (Vec<TextToolCall>, TextToolFormat) = match found.0 {
        TextToolFormat::Kimi => (parse_kimi(block), TextToolFormat::Kimi),
        TextToolFormat::Mistral => (tokens::parse_mistral(block), TextToolFormat::Mistral),
        TextToolFormat::Llama => (tokens::parse_llama(block), TextToolFormat::Llama),
        TextToolFormat::DeepSeek => (tokens::parse_deepseek(block), TextToolFormat::DeepSeek),
        TextToolFormat::Harmony => (
            tokens::parse_harmony(block).into_iter().collect(),
            TextToolFormat::Harmony,
        ),
        // `next_block` finds only markup; JSON calls are `json_calls`' business.
        TextToolFormat::Json => (Vec::new(), TextToolFormat::Json),
        TextToolFormat::FunctionTag => (
            parse_function_tag(block).into_iter().collect(),
            TextToolFormat::FunctionTag,
        ),
        TextToolFormat::Qwen3Coder => (
            parse_qwen3_coder(block, tools).into_iter().collect(),
            TextToolFormat::Qwen3Coder,
        ),
        TextToolFormat::Hermes | TextToolFormat::Glm => {
            let inner = between(block, "<tool_call>", "</tool_call>").trim();
            if inner.starts_with('{') {
                (
                    parse_hermes(inner).into_iter().collect(),
                    TextToolFormat::Hermes,
                )
            } else if inner.starts_with("<function=") {
                (
                    parse_qwen3_coder(inner, tools).into_iter().collect(),
                    TextToolFormat::Qwen3Coder,
                )
            } else {
                (
                    parse_glm(inner, tools).into_iter().collect(),
                    TextToolFormat::Glm,
                )
            }
        }
    };
    // A block with a call of a tool that was not offered is left as text entirely.
    if calls
        .iter()
        .any(|c| !tools.iter().any(|t| t.name == c.name))
    {
        return (Vec::new(), format);
    }
    (calls, format)
}

/// Where a `<function name=… arguments='…'/>` tag ends (after its `/>`): the first `/>`
/// outside a quoted attribute value, so a `/>` inside the JSON does not end it.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '>' && prev == '/' => return Some(i + 1),
            // `<function name="x">{…}</function>`: the body form, closed elsewhere.
            None if c == '>' => return None,
            None => {}
        }
        prev = c;
    }
    None
}

/// The value of attribute `key` in the first tag of `block`, quoted with `"` or `'`.
fn attribute(block: &str, key: &str) -> Option<String> {
    let tag = block.split_once("<function")?.1;
    let mut rest = tag;
    while let Some(at) = rest.find(key) {
        let after = &rest[at + key.len()..];
        let before_ok = rest[..at].ends_with(char::is_whitespace);
        if let Some(value) = after.trim_start().strip_prefix('=')
            && before_ok
        {
            let value = value.trim_start();
            let q = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let inner = &value[1..];
            return inner.find(q).map(|end| inner[..end].to_string());
        }
        rest = after;
    }
    None
}

fn parse_function_tag(block: &str) -> Option<TextToolCall> {
    let name = attribute(block, "name")?;
    let arguments = match attribute(block, "arguments") {
        Some(a) => a,
        None => {
            let body = block.split_once('>')?.1;
            body.split("</function>")
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        }
    };
    let arguments = if arguments.is_empty() {
        "{}".to_string()
    } else {
        arguments
    };
    Some(TextToolCall { name, arguments })
}

/// `s` after `open` (if present) and before `close` (if present).
fn between<'a>(s: &'a str, open: &str, close: &str) -> &'a str {
    let s = s.find(open).map(|i| &s[i + open.len()..]).unwrap_or(s);
    s.find(close).map(|i| &s[..i]).unwrap_or(s)
}

fn parse_hermes(inner: &str) -> Option<TextToolCall> {
    let v: Value = json_calls::lenient_json(inner)?;
    let name = v.get("name")?.as_str()?.to_string();
    let arguments = match v.get("arguments").or_else(|| v.get("parameters")) {
        Some(Value::String(s)) => s.clone(),
        Some(a @ Value::Object(_)) => a.to_string(),
        None | Some(Value::Null) => "{}".to_string(),
        // A bare value (e.g. the argv list for `shell`); `extract` fits it to the schema.
        Some(other) => other.to_string(),
    };
    Some(TextToolCall { name, arguments })
}

fn parse_qwen3_coder(block: &str, tools: &[ToolSpec]) -> Option<TextToolCall> {
    let body = block.split_once("<function=")?.1;
    let (name, mut rest) = body.split_once('>')?;
    let name = name.trim().to_string();
    rest = rest.split("</function>").next().unwrap_or(rest);
    let mut args = Map::new();
    while let Some((_, after)) = rest.split_once("<parameter=") {
        let (key, after_key) = after.split_once('>')?;
        let (value, tail) = after_key
            .split_once("</parameter>")
            // The closing tag is optional before the next parameter or the end.
            .or_else(|| {
                after_key
                    .find("<parameter=")
                    .map(|i| (&after_key[..i], &after_key[i..]))
            })
            .unwrap_or((after_key, ""));
        let key = key.trim();
        args.insert(
            key.to_string(),
            typed_value(tools, &name, key, trim_newlines(value)),
        );
        rest = tail;
    }
    Some(TextToolCall {
        name,
        arguments: Value::Object(args).to_string(),
    })
}

fn parse_glm(inner: &str, tools: &[ToolSpec]) -> Option<TextToolCall> {
    let (name, mut rest) = match inner.find("<arg_key>") {
        Some(i) => (&inner[..i], &inner[i..]),
        None => (inner, ""),
    };
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let mut args = Map::new();
    while let Some((_, after)) = rest.split_once("<arg_key>") {
        let (key, after_key) = after.split_once("</arg_key>")?;
        let value_part = after_key.split_once("<arg_value>")?.1;
        let (value, tail) = value_part
            .split_once("</arg_value>")
            .unwrap_or((value_part, ""));
        let key = key.trim();
        args.insert(key.to_string(), typed_value(tools, name, key, value));
        rest = tail;
    }
    Some(TextToolCall {
        name: name.to_string(),
        arguments: Value::Object(args).to_string(),
    })
}

fn parse_kimi(block: &str) -> Vec<TextToolCall> {
    let mut calls = Vec::new();
    let mut rest = block;
    while let Some((_, after)) = rest.split_once("<|tool_call_begin|>") {
        let Some((id, after_id)) = after.split_once("<|tool_call_argument_begin|>") else {
            break;
        };
        let (args, tail) = after_id
            .split_once("<|tool_call_end|>")
            .unwrap_or((after_id, ""));
        // `functions.NAME:INDEX`
        let id = id.trim();
        let id = id.strip_prefix("functions.").unwrap_or(id);
        let name = id.rsplit_once(':').map(|(n, _)| n).unwrap_or(id).trim();
        let args = args.trim();
        if !name.is_empty() && serde_json::from_str::<Value>(args).is_ok() {
            calls.push(TextToolCall {
                name: name.to_string(),
                arguments: args.to_string(),
            });
        }
        rest = tail;
    }
    calls
}

/// A parameter value as the tool's schema wants it: strings stay strings; other declared
/// types (and undeclared parameters) are parsed as JSON when they are valid JSON.
fn typed_value(tools: &[ToolSpec], tool: &str, key: &str, raw: &str) -> Value {
    let declared = tools
        .iter()
        .find(|t| t.name == tool)
        .and_then(|t| t.parameters.pointer(&format!("/properties/{key}/type")))
        .and_then(Value::as_str);
    if declared == Some("string") {
        return Value::String(raw.to_string());
    }
    serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// One leading and one trailing newline are part of the markup, not the value.
fn trim_newlines(v: &str) -> &str {
    let v = v.strip_prefix('\n').unwrap_or(v);
    v.strip_suffix('\n').unwrap_or(v)
}

/// Byte ranges of Markdown code: fenced blocks (``` or ~~~, to the closing fence or the end)
/// and inline code spans (a run of backticks to the next run of the same length).
fn code_regions(text: &str) -> Vec<(usize, usize)> {
    let mut regions = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        if line_start && let Some((fence, len)) = fence_at(text, i) {
            // Find a closing fence line of the same char, at least as long.
            let body_start = text[i..]
                .find('\n')
                .map(|n| i + n + 1)
                .unwrap_or(text.len());
            let mut j = body_start;
            let mut end = text.len();
            while j < text.len() {
                let line_end = text[j..]
                    .find('\n')
                    .map(|n| j + n + 1)
                    .unwrap_or(text.len());
                if let Some((f, l)) = fence_at(text, j)
                    && f == fence
                    && l >= len
                    && text[j..line_end].trim().chars().all(|c| c == fence)
                {
                    end = line_end;
                    break;
                }
                j = line_end;
            }
            regions.push((i, end));
            i = end;
            line_start = true;
            continue;
        }
        match bytes[i] {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b'`' => {
                let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
                let close = find_backtick_run(bytes, i + run, run);
                match close {
                    Some(c) => {
                        regions.push((i, c + run));
                        i = c + run;
                    }
                    None => i += run,
                }
                line_start = false;
            }
            b' ' | b'\t' if line_start => i += 1,
            _ => {
                line_start = false;
                i += 1;
            }
        }
    }
    regions
}

/// A fence (```` ``` ```` or `~~~`, 3+ chars) starting at `at`: its char and length.
fn fence_at(text: &str, at: usize) -> Option<(char, usize)> {
    let c = text[at..].chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let len = text[at..].chars().take_while(|x| *x == c).count();
    (len >= 3).then_some((c, len))
}

fn find_backtick_run(bytes: &[u8], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests;
