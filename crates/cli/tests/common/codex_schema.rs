//! Checks live messages against Codex 0.171's app-server schema, through the fact list
//! the schema test also uses (`crates/app-server-protocol/tests/fixtures/codex-0.171-facts.json`,
//! made from Codex's generated schema by `scripts/codex-schema-facts.py`): every field
//! Codex requires is there, no field is null where Codex wants a value, and a tagged union
//! has a variant Codex knows. Nested objects Codex's clients decode (threads, turns, items,
//! statuses, usage, models) are checked the same way.
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use serde_json::Value;
use std::collections::BTreeSet;

/// Which Codex type a field holds, by field name (objects, or arrays of them).
const NESTED: &[(&str, &str)] = &[
    ("thread", "Thread"),
    ("turn", "Turn"),
    ("turns", "Turn"),
    ("item", "ThreadItem"),
    ("items", "ThreadItem"),
    ("status", "ThreadStatus"),
    ("gitInfo", "GitInfo"),
    ("tokenUsage", "ThreadTokenUsage"),
    ("threadSettings", "ThreadSettings"),
    ("total", "TokenUsageBreakdown"),
    ("last", "TokenUsageBreakdown"),
    ("supportedReasoningEfforts", "ReasoningEffortOption"),
];

/// What `data` holds, by method.
const DATA: &[(&str, &str)] = &[
    ("thread/list", "Thread"),
    ("thread/turns/list", "Turn"),
    ("model/list", "Model"),
];

pub struct CodexSchema {
    facts: Value,
    /// Methods whose messages were checked, by kind.
    pub checked: BTreeSet<String>,
    /// Methods seen that the fact list does not cover.
    pub unchecked: BTreeSet<String>,
}

impl CodexSchema {
    pub fn load() -> Self {
        let facts = serde_json::from_str(include_str!(
            "../../../app-server-protocol/tests/fixtures/codex-0.171-facts.json"
        ))
        .expect("the fact list is JSON");
        Self {
            facts,
            checked: BTreeSet::new(),
            unchecked: BTreeSet::new(),
        }
    }

    /// Problems with one message: a response to `method` (`result`), a notification, or a
    /// server request (`params`).
    pub fn check(&mut self, msg: &Value, response_to: Option<&str>) -> Vec<String> {
        let mut problems = Vec::new();
        let (table, method, body, part) = match (response_to, msg.get("method")) {
            (Some(m), _) => ("requests", m.to_string(), &msg["result"], "result"),
            (None, Some(m)) if msg.get("id").is_some() => (
                "serverRequests",
                m.as_str().unwrap_or_default().to_string(),
                &msg["params"],
                "params",
            ),
            (None, Some(m)) => (
                "notifications",
                m.as_str().unwrap_or_default().to_string(),
                &msg["params"],
                "params",
            ),
            (None, None) => return problems,
        };
        if msg.get("error").is_some() {
            return problems;
        }
        let Some(shape) = self.facts[table]
            .get(&method)
            .map(|m| m[part].clone())
            .filter(|s| !s.is_null())
        else {
            self.unchecked.insert(method);
            return problems;
        };
        self.checked.insert(method.clone());
        self.object(&format!("{method} {part}"), body, &shape, &mut problems);
        if let Some((_, ty)) = DATA.iter().find(|(m, _)| *m == method)
            && let Some(rows) = body["data"].as_array()
        {
            for (i, row) in rows.iter().enumerate() {
                self.typed(&format!("{method} data[{i}]"), ty, row, &mut problems);
            }
        }
        problems
    }

    fn object(&self, at: &str, v: &Value, shape: &Value, problems: &mut Vec<String>) {
        let Some(obj) = v.as_object() else {
            problems.push(format!("{at}: not an object: {v}"));
            return;
        };
        let list = |k: &str| -> BTreeSet<String> {
            shape[k]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        };
        let (fields, required, nullable) = (list("fields"), list("required"), list("nullable"));
        for f in &required {
            if !obj.contains_key(f) {
                problems.push(format!("{at}: Codex requires `{f}`, which is missing"));
            }
        }
        for (k, val) in obj {
            if val.is_null() && fields.contains(k) && !nullable.contains(k) {
                problems.push(format!("{at}: `{k}` is null where Codex wants a value"));
            }
            let Some((_, ty)) = NESTED.iter().find(|(name, _)| name == k) else {
                continue;
            };
            match val {
                Value::Object(_) => self.typed(&format!("{at}.{k}"), ty, val, problems),
                Value::Array(rows) => {
                    for (i, row) in rows.iter().enumerate() {
                        if row.is_object() {
                            self.typed(&format!("{at}.{k}[{i}]"), ty, row, problems);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn typed(&self, at: &str, ty: &str, v: &Value, problems: &mut Vec<String>) {
        let Some(shape) = self.facts["types"].get(ty) else {
            return;
        };
        match shape.get("variants").and_then(Value::as_object) {
            Some(variants) => {
                let tag = v["type"].as_str().unwrap_or_default();
                match variants.get(tag) {
                    Some(variant) => self.object(&format!("{at} ({tag})"), v, variant, problems),
                    None => {
                        problems.push(format!("{at}: `{tag}` is not a {ty} variant Codex knows"))
                    }
                }
            }
            None => self.object(at, v, shape, problems),
        }
    }
}
