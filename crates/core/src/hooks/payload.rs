//! The JSON a hook reads on stdin: the fields Codex and Claude Code send, so their hook
//! scripts read ours unchanged.

use super::cwd_of;
use crate::session::Session;
use crate::tools::call::ToolCall;
use oi_config::hooks::HookEvent;
use oi_protocol::config_types::AskForApproval;
use serde_json::{Value, json};

/// The fields every event has.
pub(super) fn common(
    session_id: &str,
    config: &oi_config::Config,
    event: HookEvent,
) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("session_id".into(), json!(session_id));
    // Rollouts are not a transcript format hooks know; Codex sends null when it has none.
    m.insert("transcript_path".into(), Value::Null);
    m.insert("cwd".into(), json!(cwd_of(config)));
    m.insert("hook_event_name".into(), json!(event.name()));
    m.insert("model".into(), json!(config.model));
    m.insert(
        "permission_mode".into(),
        json!(match config.approval_policy {
            AskForApproval::Never => "bypassPermissions",
            _ => "default",
        }),
    );
    m
}

/// A tool event (`PreToolUse`, `PostToolUse`); `response` is the output for `PostToolUse`.
pub(super) fn tool_event(
    sess: &Session,
    config: &oi_config::Config,
    event: HookEvent,
    call: &ToolCall<'_>,
    tool_name: &str,
    tool_input: &Value,
    response: Option<&str>,
) -> Value {
    let mut m = common(&sess.id.to_string(), config, event);
    m.insert("turn_id".into(), json!(call.turn_id));
    m.insert("tool_name".into(), json!(tool_name));
    m.insert("tool_use_id".into(), json!(call.call_id));
    m.insert("tool_input".into(), tool_input.clone());
    if let Some(r) = response {
        m.insert("tool_response".into(), json!(r));
    }
    Value::Object(m)
}

/// The name and input a hook sees for a call to `name` with `arguments`. Every command tool
/// (`shell` and its aliases, a harness profile's shell) is `Bash` with `{"command": "<the
/// command line>"}`, as Codex reports its shell to hooks; other tools keep their name and
/// arguments. Matchers are tried against both names.
pub(crate) fn tool_identity(name: &str, arguments: &str) -> (String, Value) {
    let args: Value = if arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments))
    };
    if !crate::tools::call::is_shell_tool(name) {
        return (name.to_string(), args);
    }
    let line = match args.get("command") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(words)) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                // `["bash", "-lc", "script"]`: the script is the command line.
                [shell, flag, script]
                    if matches!(*shell, "bash" | "sh" | "zsh" | "/bin/bash" | "/bin/sh")
                        && matches!(*flag, "-c" | "-lc") =>
                {
                    script.to_string()
                }
                _ => shlex::try_join(words.iter().copied()).unwrap_or_else(|_| words.join(" ")),
            }
        }
        _ => String::new(),
    };
    let mut input = serde_json::Map::new();
    input.insert("command".into(), json!(line));
    if let Some(obj) = args.as_object() {
        for (k, v) in obj {
            if k != "command" {
                input.insert(k.clone(), v.clone());
            }
        }
    }
    ("Bash".to_string(), Value::Object(input))
}

#[cfg(test)]
mod tests {
    use super::tool_identity;
    use serde_json::json;

    #[test]
    fn commands_are_bash_with_their_command_line() {
        let (name, input) = tool_identity("shell", r#"{"command":["bash","-lc","ls -la"]}"#);
        assert_eq!(name, "Bash");
        assert_eq!(input["command"], "ls -la");
        let (name, input) = tool_identity("shell", r#"{"command":["rm","-rf","a b"]}"#);
        assert_eq!(name, "Bash");
        assert_eq!(input["command"], "rm -rf 'a b'");
        let (name, input) = tool_identity("run_shell_command", r#"{"command":"make"}"#);
        assert_eq!((name.as_str(), &input["command"]), ("Bash", &json!("make")));
        let (name, input) = tool_identity("apply_patch", r#"{"input":"x"}"#);
        assert_eq!(
            (name.as_str(), input),
            ("apply_patch", json!({"input": "x"}))
        );
    }
}
