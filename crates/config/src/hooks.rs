//! `[hooks]`: commands run at points of a session, in Codex's config shape, so a Codex or
//! Claude Code hook setup carries over:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "Bash|shell"          # optional: a regex over the whole tool name
//! [[hooks.PreToolUse.hooks]]
//! type = "command"
//! command = "python3 ~/.openinterpreter/guard.py"
//! timeout = 30                   # seconds; default 600
//! statusMessage = "checking the command"
//!
//! [hooks.state."<key>"]           # Codex's per-hook state: `enabled = false` turns one off
//! enabled = false
//! ```
//!
//! Each layer's hooks are read from that layer's own table (user, trusted project, `-c`),
//! and all of them run, the user's first: a project cannot replace the user's hooks by
//! naming the same event. A project layer's hooks widen the session (they run outside the
//! sandbox), so they apply only once the user accepted that file (`project_consent`), and
//! the files their command lines name are pinned (`launch_pins`). Hooks of a project config
//! that was not accepted are still listed (v2 `hooks/list`) as untrusted, and never run.

use crate::ConfigError;
use crate::launch_pins::LaunchPins;
use crate::layer::ConfigLayer;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A command's timeout when `timeout` is not set (Codex's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The events Open Interpreter runs hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// A thread starts (new or resumed).
    SessionStart,
    /// Before a tool call runs (before its approval): the hook may block it.
    PreToolUse,
    /// After a tool call ran, with its output: the hook may add a note for the model.
    PostToolUse,
    /// A turn ended with the model's answer.
    Stop,
}

impl HookEvent {
    /// Every event a hook runs on, in the order they happen in a session.
    pub const ALL: [HookEvent; 4] = [
        HookEvent::SessionStart,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
    ];

    /// The config key and the `hook_event_name` of the payload (`PreToolUse`).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
        }
    }

    /// The v2 wire name (`preToolUse`).
    pub fn wire_name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "sessionStart",
            HookEvent::PreToolUse => "preToolUse",
            HookEvent::PostToolUse => "postToolUse",
            HookEvent::Stop => "stop",
        }
    }

    /// The label of the event in a hook's key (`pre_tool_use`), as Codex writes it.
    fn key_label(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session_start",
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
            HookEvent::Stop => "stop",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Codex events a config may name that Open Interpreter does not run (accepted with a warning).
const NOT_RUN_EVENTS: &[&str] = &[
    "PermissionRequest",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "Interrupt",
    "PreModelRequest",
    "PostModelRequest",
];

/// Which config layer a hook comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookSource {
    /// The user's own `config.toml`.
    User,
    /// A project's `.openinterpreter/config.toml`.
    Project,
    /// `-c hooks…` on the command line.
    SessionFlags,
}

impl HookSource {
    /// The v2 wire name.
    pub fn wire_name(self) -> &'static str {
        match self {
            HookSource::User => "user",
            HookSource::Project => "project",
            HookSource::SessionFlags => "sessionFlags",
        }
    }
}

/// Whether a hook may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookTrust {
    /// The user's own config, or a project config the user accepted as it is.
    Trusted,
    /// A project config not accepted (yet): listed, never run.
    Untrusted,
    /// A project config accepted once, changed since: listed, never run.
    Modified,
}

impl HookTrust {
    /// The v2 wire name.
    pub fn wire_name(self) -> &'static str {
        match self {
            HookTrust::Trusted => "trusted",
            HookTrust::Untrusted => "untrusted",
            HookTrust::Modified => "modified",
        }
    }
}

/// A compiled `matcher`: the whole tool name must match.
#[derive(Clone, Debug)]
pub struct Matcher {
    pattern: String,
    regex: Option<Arc<regex_automata::meta::Regex>>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Matcher {
    fn new(pattern: &str) -> Result<Self, Box<regex_automata::meta::BuildError>> {
        let trimmed = pattern.trim();
        // Empty and `*` match every tool, as in Claude Code and Codex.
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Self {
                pattern: pattern.to_string(),
                regex: None,
            });
        }
        let anchored = format!("^(?:{trimmed})$");
        let regex = regex_automata::meta::Regex::new(&anchored).map_err(Box::new)?;
        Ok(Self {
            pattern: pattern.to_string(),
            regex: Some(Arc::new(regex)),
        })
    }

    /// The pattern as written in the config.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the tool `name` is matched.
    pub fn matches(&self, name: &str) -> bool {
        self.regex.as_ref().is_none_or(|r| r.is_match(name))
    }
}

/// One configured hook command.
#[derive(Clone, Debug, PartialEq)]
pub struct HookCommand {
    /// When it runs.
    pub event: HookEvent,
    /// For tool events: which tools (`None`: all).
    pub matcher: Option<Matcher>,
    /// Run with `sh -c`.
    pub command: String,
    /// How long it may run before it is stopped.
    pub timeout: Duration,
    /// What a front end shows while it runs.
    pub status_message: Option<String>,
    /// The config layer it comes from.
    pub source: HookSource,
    /// The file that defines it (`None` for `-c`).
    pub source_path: Option<PathBuf>,
    /// Codex's key: `<file>:<event>:<group>:<handler>`, what `[hooks.state."<key>"]` names.
    pub key: String,
    /// Hex SHA-256 of what the hook is (event, matcher, command, timeout).
    pub hash: String,
    /// `[hooks.state."<key>"] enabled = false` turns it off.
    pub enabled: bool,
    /// Whether it may run.
    pub trust: HookTrust,
    /// From an accepted project config: the files its command line names, pinned to their
    /// accepted content (checked before each run).
    pub pins: Option<LaunchPins>,
    /// Its place among all hooks (the order they run in).
    pub display_order: i64,
}

impl HookCommand {
    /// Whether it runs at all (enabled and trusted).
    pub fn runs(&self) -> bool {
        self.enabled && self.trust == HookTrust::Trusted
    }

    /// The words of its command line, as the launch pins see them.
    pub fn argv(&self) -> Vec<String> {
        command_words(&self.command)
    }

    /// One line naming it, for messages: "PreToolUse hook `./guard.sh`".
    pub fn describe(&self) -> String {
        format!("{} hook `{}`", self.event.name(), self.command)
    }
}

/// The words of a hook's command line (what the launch pins look at).
pub fn command_words(command: &str) -> Vec<String> {
    shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect())
}

/// Every configured hook, in the order they run, and what was wrong with the config.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hooks {
    /// The hook commands, in the order they run.
    pub commands: Vec<HookCommand>,
    /// Problems that did not stop the session (an event we do not run, a prompt hook).
    pub warnings: Vec<String>,
}

impl Hooks {
    /// The hooks of `event` that run for the tool `tool` (`None` for events without one).
    pub fn matching<'a>(
        &'a self,
        event: HookEvent,
        tool: Option<&'a [&'a str]>,
    ) -> impl Iterator<Item = &'a HookCommand> + 'a {
        self.commands.iter().filter(move |h| {
            h.event == event
                && h.runs()
                && match (&h.matcher, tool) {
                    (Some(m), Some(names)) => names.iter().any(|n| m.matches(n)),
                    _ => true,
                }
        })
    }

    /// Whether any hook of `event` runs.
    pub fn has(&self, event: HookEvent) -> bool {
        self.commands.iter().any(|h| h.event == event && h.runs())
    }

    /// The hooks a project layer adds.
    pub fn from_project(&self) -> impl Iterator<Item = &HookCommand> {
        self.commands
            .iter()
            .filter(|h| h.source == HookSource::Project)
    }
}

#[derive(Deserialize)]
struct MatcherGroupToml {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<HandlerToml>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum HandlerToml {
    #[serde(rename = "command")]
    Command {
        command: String,
        #[serde(default)]
        timeout: Option<u64>,
        #[serde(default, rename = "statusMessage")]
        status_message: Option<String>,
    },
    #[serde(rename = "prompt")]
    Prompt {},
    #[serde(rename = "agent")]
    Agent {},
}

#[derive(Deserialize, Default)]
struct HookStateToml {
    #[serde(default)]
    enabled: Option<bool>,
}

fn invalid(origin: &str, key: String, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.to_string(),
        key,
        message: message.into(),
    }
}

const SHAPE_HINT: &str = "expected [[hooks.<Event>]] tables with `matcher` and [[hooks.<Event>.hooks]] entries `type = \"command\"`, `command = \"…\"`, `timeout = <seconds>` (see docs/hooks.md)";

/// The hooks of every layer, lowest precedence first (user, project, `-c`). `[hooks.state]`
/// entries of any layer apply to every hook (Codex keeps them in the user config).
pub(crate) fn from_layers(layers: &[ConfigLayer]) -> Result<Hooks, ConfigError> {
    let mut hooks = Hooks::default();
    let mut states: BTreeMap<String, bool> = BTreeMap::new();
    for layer in layers {
        let Some(value) = layer.value.get("hooks") else {
            continue;
        };
        let origin = layer
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "-c override".to_string());
        let Some(table) = value.as_table() else {
            return Err(invalid(&origin, "hooks".into(), SHAPE_HINT));
        };
        if let Some(state) = table.get("state") {
            let parsed: BTreeMap<String, HookStateToml> = serde_path_to_error::deserialize(
                state.clone(),
            )
            .map_err(|e: serde_path_to_error::Error<toml::de::Error>| {
                invalid(
                    &origin,
                    format!("hooks.state.{}", e.path()),
                    "expected [hooks.state.\"<key>\"] tables with `enabled = true|false`",
                )
            })?;
            for (key, s) in parsed {
                if let Some(enabled) = s.enabled {
                    states.insert(key, enabled);
                }
            }
        }
        read_layer(layer, &origin, table, &mut hooks)?;
    }
    for h in &mut hooks.commands {
        if let Some(enabled) = states.get(&h.key) {
            h.enabled = *enabled;
        }
    }
    Ok(hooks)
}

fn read_layer(
    layer: &ConfigLayer,
    origin: &str,
    table: &toml::Table,
    hooks: &mut Hooks,
) -> Result<(), ConfigError> {
    let source = match layer.name {
        "project" => HookSource::Project,
        "user" => HookSource::User,
        _ => HookSource::SessionFlags,
    };
    for (name, groups) in table {
        if name == "state" {
            continue;
        }
        let Some(event) = HookEvent::from_name(name) else {
            let why = if NOT_RUN_EVENTS.contains(&name.as_str()) {
                "Open Interpreter does not run hooks for this event"
            } else {
                "not a hook event"
            };
            hooks.warnings.push(format!(
                "{origin}: `hooks.{name}`: {why}; the events that run are SessionStart, PreToolUse, PostToolUse and Stop"
            ));
            continue;
        };
        let groups: Vec<MatcherGroupToml> = serde_path_to_error::deserialize(groups.clone())
            .map_err(|e: serde_path_to_error::Error<toml::de::Error>| {
                let at = e.path().to_string();
                let key = if at == "." || at.is_empty() {
                    format!("hooks.{name}")
                } else {
                    format!(
                        "hooks.{name}{}{at}",
                        if at.starts_with('[') { "" } else { "." }
                    )
                };
                let inner = crate::de_error::toml_message(e.inner());
                invalid(origin, key, format!("{inner}; {SHAPE_HINT}"))
            })?;
        for (g, group) in groups.into_iter().enumerate() {
            let matcher = match group.matcher.as_deref() {
                // Session and turn events have no tool to match: Codex ignores their matcher.
                Some(m) if matches!(event, HookEvent::PreToolUse | HookEvent::PostToolUse) => {
                    Some(Matcher::new(m).map_err(|e| {
                        invalid(
                            origin,
                            format!("hooks.{name}[{g}].matcher"),
                            format!("not a regular expression: {e}"),
                        )
                    })?)
                }
                _ => None,
            };
            for (h, handler) in group.hooks.into_iter().enumerate() {
                let (command, timeout, status_message) = match handler {
                    HandlerToml::Command {
                        command,
                        timeout,
                        status_message,
                    } => (command, timeout, status_message),
                    HandlerToml::Prompt {} | HandlerToml::Agent {} => {
                        hooks.warnings.push(format!(
                            "{origin}: `hooks.{name}[{g}].hooks[{h}]`: only `type = \"command\"` hooks run; this one is skipped"
                        ));
                        continue;
                    }
                };
                if command.trim().is_empty() {
                    hooks.warnings.push(format!(
                        "{origin}: `hooks.{name}[{g}].hooks[{h}]`: an empty command is skipped"
                    ));
                    continue;
                }
                let timeout = timeout
                    .map(|s| Duration::from_secs(s.max(1)))
                    .unwrap_or(DEFAULT_TIMEOUT);
                let key = format!("{origin}:{}:{g}:{h}", event.key_label());
                let hash = hex::encode(Sha256::digest(
                    format!(
                        "{}\0{}\0{command}\0{}",
                        event.name(),
                        matcher.as_ref().map(Matcher::pattern).unwrap_or_default(),
                        timeout.as_secs()
                    )
                    .as_bytes(),
                ));
                let display_order = hooks.commands.len() as i64;
                hooks.commands.push(HookCommand {
                    event,
                    matcher: matcher.clone(),
                    command,
                    timeout,
                    status_message,
                    source,
                    source_path: layer.path.clone(),
                    key,
                    hash,
                    enabled: true,
                    trust: HookTrust::Trusted,
                    pins: None,
                    display_order,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(name: &'static str, text: &str) -> ConfigLayer {
        ConfigLayer {
            name,
            path: Some(PathBuf::from(format!("/cfg/{name}.toml"))),
            value: text.parse().unwrap(),
        }
    }

    #[test]
    fn codex_shaped_hooks_are_read_from_every_layer_in_order() {
        let user = layer(
            "user",
            r#"
[[hooks.PreToolUse]]
matcher = "Bash|shell"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./guard.sh"
timeout = 5
statusMessage = "checking"

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "echo done"
"#,
        );
        let project = layer(
            "project",
            r#"
[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = "./project.sh"
"#,
        );
        let hooks = from_layers(&[user, project]).unwrap();
        assert_eq!(hooks.commands.len(), 3, "{hooks:?}");
        let guard = &hooks.commands[0];
        assert_eq!(guard.event, HookEvent::PreToolUse);
        assert_eq!(guard.timeout, Duration::from_secs(5));
        assert_eq!(guard.key, "/cfg/user.toml:pre_tool_use:0:0");
        let m = guard.matcher.as_ref().unwrap();
        assert!(m.matches("shell") && m.matches("Bash"));
        // The whole name must match: `Bash` is not `BashOutput`.
        assert!(!m.matches("BashOutput"));
        assert_eq!(hooks.commands[1].timeout, DEFAULT_TIMEOUT);
        assert_eq!(hooks.commands[2].source, HookSource::Project);
        let pre: Vec<_> = hooks
            .matching(HookEvent::PreToolUse, Some(&["apply_patch"]))
            .map(|h| h.command.as_str())
            .collect();
        assert_eq!(pre, ["./project.sh"]);
    }

    #[test]
    fn state_turns_a_hook_off_and_unknown_events_warn() {
        let user = layer(
            "user",
            r#"
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "echo done"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "echo prompt"

[hooks.state."/cfg/user.toml:stop:0:0"]
enabled = false
"#,
        );
        let hooks = from_layers(&[user]).unwrap();
        assert_eq!(hooks.commands.len(), 1);
        assert!(!hooks.commands[0].enabled);
        assert!(!hooks.has(HookEvent::Stop));
        assert!(
            hooks.warnings[0].contains("hooks.UserPromptSubmit"),
            "{:?}",
            hooks.warnings
        );
    }

    #[test]
    fn a_bad_hook_names_its_key() {
        let bad = layer(
            "user",
            "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = 5\n",
        );
        let err = from_layers(&[bad]).unwrap_err().to_string();
        assert!(err.contains("hooks.PreToolUse[0].hooks[0]"), "{err}");
        let regex = layer(
            "user",
            "[[hooks.PreToolUse]]\nmatcher = \"(\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"x\"\n",
        );
        let err = from_layers(&[regex]).unwrap_err().to_string();
        assert!(err.contains("hooks.PreToolUse[0].matcher"), "{err}");
    }
}
