//! Modal overlays over the composer: approvals, MCP elicitation forms, pickers, and the
//! transcript. Each takes keys first while it is open.

use oi_protocol::ThreadId;
use oi_protocol::config_types::ReasoningEffort;
use oi_protocol::protocol::FileChange;
use std::path::PathBuf;

/// What an approval overlay asks about.
#[derive(Clone, Debug, PartialEq)]
pub enum ApprovalSubject {
    Exec {
        command: String,
        cwd: PathBuf,
    },
    /// An MCP tool call (the engine asks for these as a command `mcp__server__tool ARGS`).
    McpTool {
        server: String,
        tool: String,
        arguments: String,
    },
    Patch {
        changes: Vec<(PathBuf, FileChange)>,
    },
}

impl ApprovalSubject {
    /// The subject of an exec approval request: an MCP tool call when the engine asks about
    /// one (`["mcp__server__tool", "{json args}"]`), else a command.
    pub fn from_exec(argv: &[String], command: String, cwd: PathBuf) -> Self {
        if let [name, arguments] = argv
            && let Some((server, tool)) = name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
        {
            return ApprovalSubject::McpTool {
                server: server.to_string(),
                tool: tool.to_string(),
                arguments: arguments.clone(),
            };
        }
        ApprovalSubject::Exec { command, cwd }
    }
}

/// A pending approval request: answered with one key.
#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    /// What the answer goes to (it knows the op and the id).
    pub request: oi_core::PendingRequest,
    pub subject: ApprovalSubject,
    pub reason: Option<String>,
}

/// One option of a choice field: the value sent back and the label shown.
#[derive(Clone, Debug, PartialEq)]
pub struct ChoiceOption {
    pub value: String,
    pub label: String,
}

/// The kind of value an elicitation field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these values (Left/Right or Space cycles).
    Choice(Vec<ChoiceOption>),
    /// Any number of these values (Left/Right moves, Space toggles); answered as an array.
    MultiChoice(Vec<ChoiceOption>),
}

/// The options of an enum schema: `enum` (with `enumNames` as labels) or
/// `oneOf`/`anyOf` of `{const, title}`, as the MCP elicitation schemas allow.
fn choice_options(schema: &serde_json::Value) -> Option<Vec<ChoiceOption>> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string).unwrap_or(v.to_string());
    if let Some(values) = schema.get("enum").and_then(|e| e.as_array()) {
        let names = schema.get("enumNames").and_then(|n| n.as_array());
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| ChoiceOption {
                    value: text(v),
                    label: names
                        .and_then(|n| n.get(i))
                        .and_then(|n| n.as_str())
                        .map(str::to_string)
                        .unwrap_or_else(|| text(v)),
                })
                .collect(),
        );
    }
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(|o| o.as_array())?;
    let options: Vec<ChoiceOption> = titled
        .iter()
        .filter_map(|o| {
            let value = text(o.get("const")?);
            let label = o
                .get("title")
                .and_then(|t| t.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| value.clone());
            Some(ChoiceOption { value, label })
        })
        .collect();
    (!options.is_empty()).then_some(options)
}

/// One field of an elicitation form.
#[derive(Clone, Debug, PartialEq)]
pub struct FormField {
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    /// The typed text, `true`/`false`, or the chosen option's value.
    pub value: String,
    /// Multi-choice fields: which options are picked, and the one the cursor is on.
    pub picked: Vec<bool>,
    pub option: usize,
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
        // Fields in the order the server wrote them (the workspace's serde_json keeps
        // object order).
        if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
            for (name, prop) in props {
                let kind = if prop.get("type").and_then(|t| t.as_str()) == Some("array") {
                    let items = prop.get("items").cloned().unwrap_or_default();
                    FieldKind::MultiChoice(choice_options(&items).unwrap_or_default())
                } else if let Some(options) = choice_options(prop) {
                    FieldKind::Choice(options)
                } else {
                    match prop.get("type").and_then(|t| t.as_str()) {
                        Some("boolean") => FieldKind::Boolean,
                        Some("number") => FieldKind::Number,
                        Some("integer") => FieldKind::Integer,
                        _ => FieldKind::Text,
                    }
                };
                let default = prop.get("default");
                let value = match (&kind, default) {
                    (FieldKind::MultiChoice(_), _) => String::new(),
                    (_, Some(serde_json::Value::String(s))) => s.clone(),
                    (_, Some(d)) => d.to_string(),
                    (FieldKind::Boolean, None) => "false".into(),
                    (FieldKind::Choice(c), None) => {
                        c.first().map(|o| o.value.clone()).unwrap_or_default()
                    }
                    (_, None) => String::new(),
                };
                let picked = match &kind {
                    FieldKind::MultiChoice(options) => {
                        let defaults: Vec<String> = default
                            .and_then(|d| d.as_array())
                            .map(|a| {
                                a.iter()
                                    .map(|v| {
                                        v.as_str().map(str::to_string).unwrap_or(v.to_string())
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        options
                            .iter()
                            .map(|o| defaults.contains(&o.value))
                            .collect()
                    }
                    _ => Vec::new(),
                };
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
                    picked,
                    option: 0,
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
            if let FieldKind::MultiChoice(options) = &f.kind {
                let values: Vec<serde_json::Value> = options
                    .iter()
                    .zip(&f.picked)
                    .filter(|(_, picked)| **picked)
                    .map(|(o, _)| serde_json::Value::String(o.value.clone()))
                    .collect();
                if values.is_empty() {
                    if f.required {
                        return Err(format!("pick at least one `{}`", f.title));
                    }
                    continue;
                }
                out.insert(f.name.clone(), serde_json::Value::Array(values));
                continue;
            }
            if f.value.is_empty() {
                if f.required {
                    return Err(format!("`{}` is required", f.title));
                }
                continue;
            }
            let v = match f.kind {
                FieldKind::Text | FieldKind::Choice(_) | FieldKind::MultiChoice(_) => {
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
                let i = c.iter().position(|o| o.value == f.value).unwrap_or(0);
                let n = if forward {
                    (i + 1) % c.len()
                } else {
                    (i + c.len() - 1) % c.len()
                };
                f.value = c[n].value.clone();
            }
            FieldKind::MultiChoice(c) if !c.is_empty() => {
                f.option = if forward {
                    (f.option + 1) % c.len()
                } else {
                    (f.option + c.len() - 1) % c.len()
                };
            }
            _ => {}
        }
    }

    /// Space on a multi-choice field: picks or unpicks the option under the cursor.
    pub fn toggle(&mut self) {
        if let Some(f) = self.fields.get_mut(self.focus)
            && let Some(p) = f.picked.get_mut(f.option)
        {
            *p = !*p;
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
    Harness(oi_protocol::config_types::Harness),
    Thread(ThreadId),
    /// `/undo`'s confirmation: revert (`true`) or keep.
    Undo(bool),
    /// A row of `/archive`, `/delete`, `/export`, `/theme` or `/statusline`.
    Daily(DailyChoice),
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
    /// The whole thread, paged and searchable.
    Transcript(crate::transcript::TranscriptView),
    /// `/diff`, paged and searchable like the transcript.
    Diff(crate::pager::DiffPager),
    /// The arguments of an MCP prompt run as a slash command.
    PromptArgs(PromptArgs),
}

/// The form asking for an MCP prompt's arguments (an elicitation form the app answers
/// itself: Enter gets the prompt, Esc cancels).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptArgs {
    pub server: String,
    pub prompt: String,
    pub form: ElicitationForm,
}

impl Overlay {
    /// Overlays drawn full screen on the alternate screen.
    pub fn is_full_screen(&self) -> bool {
        matches!(self, Overlay::Transcript(_) | Overlay::Diff(_))
    }
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
        let names: Vec<&str> = f.fields.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["name", "age", "ok", "color"], "the server's order");
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

    #[test]
    fn titled_and_multi_choice_fields() {
        let req = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "zeta": {"type": "string"},
            "hero": {"type": "string", "oneOf": [
                {"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
            "fish": {"type": "array", "items": {"anyOf": [
                {"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Salmon"}]},
                "default": ["f2"]},
            "alpha": {"type": "string", "enum": ["a", "b"], "enumNames": ["A!", "B!"]}
        }, "required": ["fish"]}});
        let mut f = ElicitationForm::from_request("s", json!(1), &req);
        let at =
            |f: &ElicitationForm, name: &str| f.fields.iter().position(|x| x.name == name).unwrap();
        let hero = at(&f, "hero");
        let FieldKind::Choice(heroes) = &f.fields[hero].kind else {
            panic!("{:?}", f.fields[hero].kind)
        };
        assert_eq!(heroes[1].label, "Batman");
        let alpha = at(&f, "alpha");
        let FieldKind::Choice(letters) = &f.fields[alpha].kind else {
            panic!()
        };
        assert_eq!(letters[0].label, "A!");
        f.focus = hero;
        f.cycle(true);
        f.focus = at(&f, "fish");
        // The cursor starts on Tuna: pick it too (Salmon is picked by default).
        f.toggle();
        assert_eq!(
            f.content().unwrap(),
            json!({"hero": "h2", "fish": ["f1", "f2"], "alpha": "a"})
        );
        f.toggle();
        f.cycle(true);
        f.toggle();
        assert!(f.content().unwrap_err().contains("pick at least one"));
    }
}

/// What a row of one of these commands' pickers does.
#[derive(Clone, Debug, PartialEq)]
pub enum DailyChoice {
    /// Archive this thread.
    Archive(ThreadId),
    /// `/delete`'s first step: ask before deleting (label = how the thread is shown).
    AskDelete(ThreadId, String),
    /// `/delete` confirmed.
    Delete(ThreadId),
    /// Do not delete after all.
    KeepThread,
    /// `/export` to a file that exists: replace it.
    ReplaceExport(PathBuf),
    /// Do not replace the file after all.
    KeepExport,
    /// Use this colour theme.
    Theme(crate::theme::ThemeName),
    /// Show or hide this item of the status line.
    ToggleStatusItem(crate::status_items::StatusItem),
    /// Put the status line's default items back.
    ResetStatusLine,
}
