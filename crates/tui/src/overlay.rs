//! Modal overlays over the composer: approvals, MCP elicitation forms, pickers, and the
//! transcript. Each takes keys first while it is open.

use oi_protocol::ThreadId;
use oi_protocol::config_types::ReasoningEffort;
use oi_protocol::protocol::FileChange;
use std::path::PathBuf;

/// What an approval overlay asks about.
#[derive(Clone, Debug, PartialEq)]
pub enum ApprovalSubject {
    Exec { command: String, cwd: PathBuf },
    Patch { changes: Vec<(PathBuf, FileChange)> },
}

/// A pending approval request: answered with one key.
#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    /// The id to answer with (`approval_id`/`call_id`).
    pub id: String,
    pub subject: ApprovalSubject,
    pub reason: Option<String>,
}

/// The kind of value an elicitation field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these values (Left/Right or Space cycles).
    Choice(Vec<String>),
}

/// One field of an elicitation form.
#[derive(Clone, Debug, PartialEq)]
pub struct FormField {
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    pub value: String,
}

/// An MCP server's `elicitation/create`, as a form.
#[derive(Clone, Debug, PartialEq)]
pub struct ElicitationForm {
    pub server: String,
    pub request_id: serde_json::Value,
    pub message: String,
    pub fields: Vec<FormField>,
    pub focus: usize,
    /// Why the last submit was refused.
    pub error: Option<String>,
}

impl ElicitationForm {
    /// Builds the form from the request's `requestedSchema` (flat object of primitives, as
    /// the MCP spec allows).
    pub fn from_request(server: &str, id: serde_json::Value, request: &serde_json::Value) -> Self {
        let message = request
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_string();
        let schema = request.get("requestedSchema").cloned().unwrap_or_default();
        let required: Vec<String> = schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            for (name, prop) in props {
                let kind = if let Some(values) = prop.get("enum").and_then(|e| e.as_array()) {
                    FieldKind::Choice(
                        values
                            .iter()
                            .map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()))
                            .collect(),
                    )
                } else {
                    match prop.get("type").and_then(|t| t.as_str()) {
                        Some("boolean") => FieldKind::Boolean,
                        Some("number") => FieldKind::Number,
                        Some("integer") => FieldKind::Integer,
                        _ => FieldKind::Text,
                    }
                };
                let default = prop.get("default").map(|d| match d {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                let value = default.unwrap_or_else(|| match &kind {
                    FieldKind::Boolean => "false".into(),
                    FieldKind::Choice(c) => c.first().cloned().unwrap_or_default(),
                    _ => String::new(),
                });
                fields.push(FormField {
                    title: prop
                        .get("title")
                        .and_then(|t| t.as_str())
                        .unwrap_or(name)
                        .to_string(),
                    description: prop
                        .get("description")
                        .and_then(|t| t.as_str())
                        .map(str::to_string),
                    required: required.contains(name),
                    name: name.clone(),
                    kind,
                    value,
                });
            }
        }
        Self {
            server: server.to_string(),
            request_id: id,
            message,
            fields,
            focus: 0,
            error: None,
        }
    }

    /// The answer's `content`, or what is wrong with the input.
    pub fn content(&self) -> Result<serde_json::Value, String> {
        let mut out = serde_json::Map::new();
        for f in &self.fields {
            if f.value.is_empty() {
                if f.required {
                    return Err(format!("`{}` is required", f.title));
                }
                continue;
            }
            let v = match f.kind {
                FieldKind::Text | FieldKind::Choice(_) => {
                    serde_json::Value::String(f.value.clone())
                }
                FieldKind::Boolean => serde_json::Value::Bool(f.value == "true"),
                FieldKind::Integer => f
                    .value
                    .trim()
                    .parse::<i64>()
                    .map(Into::into)
                    .map_err(|_| format!("`{}` must be a whole number", f.title))?,
                FieldKind::Number => f
                    .value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(serde_json::Value::Number)
                    .ok_or_else(|| format!("`{}` must be a number", f.title))?,
            };
            out.insert(f.name.clone(), v);
        }
        Ok(serde_json::Value::Object(out))
    }

    /// Space/Left/Right on a boolean or choice field.
    pub fn cycle(&mut self, forward: bool) {
        let Some(f) = self.fields.get_mut(self.focus) else {
            return;
        };
        match &f.kind {
            FieldKind::Boolean => f.value = if f.value == "true" { "false" } else { "true" }.into(),
            FieldKind::Choice(c) if !c.is_empty() => {
                let i = c.iter().position(|v| *v == f.value).unwrap_or(0);
                let n = if forward {
                    (i + 1) % c.len()
                } else {
                    (i + c.len() - 1) % c.len()
                };
                f.value = c[n].clone();
            }
            _ => {}
        }
    }
}

/// What choosing a picker row does.
#[derive(Clone, Debug, PartialEq)]
pub enum PickerValue {
    Model {
        model: String,
        effort: Option<ReasoningEffort>,
    },
    /// Index into [`crate::app::APPROVAL_PRESETS`].
    ApprovalPreset(usize),
    Thread(ThreadId),
}

#[derive(Clone, Debug, PartialEq)]
pub struct PickerItem {
    pub label: String,
    pub detail: String,
    pub value: PickerValue,
}

/// A list to choose from, filtered by what is typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Picker {
    pub title: String,
    pub items: Vec<PickerItem>,
    pub query: String,
    pub selected: usize,
}

impl Picker {
    pub fn new(title: &str, items: Vec<PickerItem>) -> Self {
        Self {
            title: title.to_string(),
            items,
            query: String::new(),
            selected: 0,
        }
    }

    /// Items whose label or detail contains the query (case-insensitive).
    pub fn visible(&self) -> Vec<&PickerItem> {
        let q = self.query.to_lowercase();
        self.items
            .iter()
            .filter(|i| {
                q.is_empty()
                    || i.label.to_lowercase().contains(&q)
                    || i.detail.to_lowercase().contains(&q)
            })
            .collect()
    }
}

/// The open overlay.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    Approval(Approval),
    Elicitation(ElicitationForm),
    Picker(Picker),
    /// The whole thread; `scroll` rows up from the bottom.
    Transcript {
        scroll: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn form_reads_schema_and_validates() {
        let req = json!({
            "message": "Who are you?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name"},
                    "age": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "color": {"type": "string", "enum": ["red", "blue"]}
                },
                "required": ["name"]
            }
        });
        let mut f = ElicitationForm::from_request("s", json!(1), &req);
        assert_eq!(f.fields.len(), 4);
        assert!(f.content().unwrap_err().contains("Name"));
        let name = f.fields.iter().position(|x| x.name == "name").unwrap();
        f.fields[name].value = "Ada".into();
        let age = f.fields.iter().position(|x| x.name == "age").unwrap();
        f.fields[age].value = "x".into();
        assert!(f.content().unwrap_err().contains("whole number"));
        f.fields[age].value = "36".into();
        f.focus = f.fields.iter().position(|x| x.name == "color").unwrap();
        f.cycle(true);
        assert_eq!(
            f.content().unwrap(),
            json!({"name": "Ada", "age": 36, "ok": false, "color": "blue"})
        );
    }
}
