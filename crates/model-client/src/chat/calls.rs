//! Tool calls streamed in pieces: which call a delta belongs to, and the finished calls.
//!
//! Servers differ: most number calls with `index` and send the `id` once; some send every call
//! as index 0 and tell them apart by `id`; some proxies (DeepSeek, GLM and Kimi through
//! OpenAI-compatible gateways) give parallel calls the same `id` and different indices; some
//! send neither. vLLM's GLM-4.7 parser resends the complete arguments as the last delta
//! (vLLM `tests/tool_parsers/test_glm47_final_delta_bug.py`).

use serde_json::Value;

use crate::synthesize_call_id;

#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    /// Whether `index` was sent (not inferred from the position in the array).
    indexed: bool,
    id: Option<String>,
    name: String,
    arguments: String,
    /// The last arguments delta and how many there were, to undo a resend of the whole.
    last_fragment: String,
    fragments: usize,
}

/// A finished call: id, name, arguments.
pub(crate) type Call = (String, String, String);

#[derive(Debug, Default)]
pub(crate) struct Calls {
    calls: Vec<PartialCall>,
}

impl Calls {
    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Adds one entry of a delta's `tool_calls` array, at `position` in that array.
    pub(crate) fn merge(&mut self, position: usize, call: &Value) {
        let explicit_index = call.get("index").and_then(Value::as_u64);
        // A missing index means "the call at this position of the array" (0 for the usual
        // single call).
        let index = explicit_index.unwrap_or(position as u64);
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            // Non-standard: arguments as a JSON object instead of a string.
            Some(other) => other.to_string(),
        };
        let slot = self.slot_for(index, explicit_index.is_some(), id, name, &arguments);
        let target = &mut self.calls[slot];
        if target.id.is_none() {
            target.id = id.map(str::to_string);
        }
        // Names normally arrive whole. A server that streams them in pieces (before the
        // arguments) gets them joined; one that repeats the name in every chunk does not get
        // it doubled.
        if target.name.is_empty() {
            target.name = name.to_string();
        } else if !name.is_empty() && target.name != name && target.arguments.is_empty() {
            target.name.push_str(name);
        }
        if !arguments.is_empty() {
            target.arguments.push_str(&arguments);
            target.fragments += 1;
            target.last_fragment = arguments;
        }
    }

    /// Which partial call a delta belongs to. A sent `index` decides first: a new index is a
    /// new call even when its id repeats an earlier call's (proxies that reuse ids for
    /// parallel calls). Without an index the id decides. Either way a delta that plainly
    /// starts another call (a different id, or a name and arguments after the previous
    /// call's arguments already form complete JSON) is a new call, which is how servers that
    /// number every call 0 are told apart.
    fn slot_for(
        &mut self,
        index: u64,
        indexed: bool,
        id: Option<&str>,
        name: &str,
        arguments: &str,
    ) -> usize {
        let by_id = id.and_then(|id| self.calls.iter().position(|c| c.id.as_deref() == Some(id)));
        if let Some(pos) = by_id
            && !(indexed && self.calls[pos].indexed && self.calls[pos].index != index)
        {
            return pos;
        }
        if let Some(pos) = self.calls.iter().rposition(|c| c.index == index) {
            let c = &self.calls[pos];
            let other_id = id.is_some() && c.id.is_some() && c.id.as_deref() != id;
            let restarts = !name.is_empty()
                && !arguments.is_empty()
                && !c.name.is_empty()
                && is_complete_json(&c.arguments);
            if !other_id && !restarts {
                return pos;
            }
        }
        self.calls.push(PartialCall {
            index,
            indexed,
            ..PartialCall::default()
        });
        self.calls.len() - 1
    }

    /// The finished calls in arrival order of each call's first delta (index order on every
    /// server seen, and the only order that exists for calls told apart by the heuristics
    /// above). Ids missing or already used by an earlier call of this response are made up,
    /// so each call gets its own output. `cut_off`: the response hit its output limit, so
    /// invalid arguments are left as they are.
    pub(crate) fn finish(&mut self, cut_off: bool) -> Vec<Call> {
        let mut used: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for mut call in std::mem::take(&mut self.calls) {
            if call.name.is_empty() && call.arguments.is_empty() {
                continue;
            }
            let id = match call.id.take() {
                Some(id) if !used.contains(&id) => id,
                _ => synthesize_call_id(),
            };
            used.push(id.clone());
            let name = clean_tool_name(&std::mem::take(&mut call.name));
            let arguments = if cut_off {
                call.arguments
            } else {
                repaired_arguments(call)
            };
            out.push((id, name, arguments));
        }
        out
    }
}

/// A tool name without the special tokens a server let into it: vLLM with gpt-oss sends
/// `shell<|channel|>commentary` (vllm-project/vllm#32587), which names no tool.
pub(crate) fn clean_tool_name(name: &str) -> String {
    let cut = name.find("<|").unwrap_or(name.len());
    name[..cut].trim().to_string()
}

/// The arguments, or the last fragment alone when the server resent the complete arguments
/// as its last delta: the joined text is not JSON, the last fragment is a complete object,
/// and what came before it is an object still open (the start of the same arguments).
fn repaired_arguments(call: PartialCall) -> String {
    if call.fragments < 2 || is_complete_json(&call.arguments) {
        return call.arguments;
    }
    let last = call.last_fragment.trim();
    let before = &call.arguments[..call.arguments.len() - call.last_fragment.len()];
    let resent = last.starts_with('{')
        && serde_json::from_str::<Value>(last).is_ok_and(|v| v.is_object())
        && before.trim_start().starts_with('{')
        && !is_complete_json(before);
    if resent {
        last.to_string()
    } else {
        call.arguments
    }
}

pub(crate) fn is_complete_json(s: &str) -> bool {
    !s.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
}
