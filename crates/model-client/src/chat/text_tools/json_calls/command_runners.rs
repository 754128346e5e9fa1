//! A written call of a command runner the agent does not offer under that name
//! (`{"name": "python", "arguments": {"command": "python3 t.py"}}`, `"name": "terminal"`):
//! small models name the runner they were trained on. When the arguments hold a command
//! (or, for a Python runner, Python code) and a shell tool is offered, the call is that
//! shell tool's call. Recorded on Qwen2.5-Coder-1.5B: `python`, `bash` where `shell` is
//! offered, `run_command`, `run_bash`.

use oi_protocol::models::ToolSpec;
use serde_json::{Value, json};

/// Names a model gives a tool that runs a command line.
const SHELL_RUNNERS: [&str; 17] = [
    "bash",
    "sh",
    "shell",
    "terminal",
    "run",
    "run_command",
    "run_shell",
    "run_shell_command",
    "run_terminal_cmd",
    "execute",
    "execute_command",
    "exec",
    "exec_command",
    "shell_command",
    "command",
    "cmd",
    "container.exec",
];

/// Names a model gives a tool that runs Python code.
const PYTHON_RUNNERS: [&str; 7] = [
    "python",
    "python3",
    "run_python",
    "execute_python",
    "python_interpreter",
    "code_interpreter",
    "ipython",
];

/// Offered tools that run a command line, by the names the agent's harnesses give them.
const SHELL_TOOLS: [&str; 9] = [
    "shell",
    "Shell",
    "bash",
    "Bash",
    "shell_command",
    "exec_command",
    "exec_shell",
    "run_shell_command",
    "container.exec",
];

/// The offered shell tool and its arguments for a call of `name` that is not offered, when
/// `name` is a command runner and `args` hold what it would run.
pub(crate) fn as_shell_call<'a>(
    name: &str,
    args: &Value,
    tools: &'a [ToolSpec],
) -> Option<(&'a ToolSpec, Value)> {
    let runner = name.trim().to_ascii_lowercase();
    // `run_bash`, `execute_shell`, `python_exec` (recorded in round 16: `run_bash`): a name
    // with a runner's name as one of its words.
    let words: Vec<&str> = runner.split(['_', '-', '.']).collect();
    let python = PYTHON_RUNNERS.contains(&runner.as_str())
        || words.iter().any(|w| matches!(*w, "python" | "python3"));
    let shell = SHELL_RUNNERS.contains(&runner.as_str())
        || words
            .iter()
            .any(|w| matches!(*w, "bash" | "sh" | "shell" | "terminal" | "command" | "cmd"));
    if !python && !shell {
        return None;
    }
    let tool = tools
        .iter()
        .find(|t| SHELL_TOOLS.contains(&t.name.as_str()) && takes_command(&t.parameters))?;
    let line = command_line(args, python)?;
    let wants_argv = tool
        .parameters
        .pointer("/properties/command/type")
        .and_then(Value::as_str)
        == Some("array");
    let command = if wants_argv {
        json!(["bash", "-lc", line])
    } else {
        json!(line)
    };
    Some((tool, json!({ "command": command })))
}

fn takes_command(schema: &Value) -> bool {
    schema.pointer("/properties/command").is_some()
}

/// The command line the arguments ask for. A shell runner's `command` (or `cmd`, `script`,
/// `code`, `input`, or the bare value) is the line itself; an argv list is joined. A Python
/// runner's `code` or `script` is Python fed to `python3`, and so is a `command` that does
/// not start with a command (`print(1)` rather than `python3 t.py`).
fn command_line(args: &Value, python: bool) -> Option<String> {
    let field = |keys: &[&str]| keys.iter().find_map(|k| args.get(*k)).cloned();
    let (value, is_code) = match args {
        Value::String(_) | Value::Array(_) => (args.clone(), false),
        _ => match field(&["command", "cmd"]) {
            Some(v) => (v, false),
            None => (field(&["code", "script", "source", "input"])?, python),
        },
    };
    let text = match value {
        Value::String(s) => s,
        Value::Array(items) => {
            let words: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            words?
                .iter()
                .map(|w| quoted(w))
                .collect::<Vec<_>>()
                .join(" ")
        }
        _ => return None,
    };
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if python && (is_code || !starts_with_a_command(text)) {
        return Some(format!("python3 - <<'PYTHON'\n{text}\nPYTHON"));
    }
    Some(text.to_string())
}

/// Whether `line` begins with a program a Python runner's `command` may name.
fn starts_with_a_command(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    let program = first.rsplit('/').next().unwrap_or(first);
    program.starts_with("python")
        || program.starts_with("pip")
        || matches!(
            program,
            "pytest" | "bash" | "sh" | "cat" | "ls" | "echo" | "cd" | "uv"
        )
        || first.starts_with("./")
}

/// `word` as one shell word.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, command_type: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": command_type}},
                "required": ["command"],
            }),
        }
    }

    #[test]
    fn a_python_runner_with_a_command_line_runs_it_in_the_shell() {
        let tools = [tool("bash", "string")];
        let args = json!({"command": "python -c 'print(1)'"});
        let (t, args) = as_shell_call("python", &args, &tools).unwrap();
        assert_eq!(t.name, "bash");
        assert_eq!(args, json!({"command": "python -c 'print(1)'"}));
    }

    #[test]
    fn a_name_with_a_runner_among_its_words_is_that_runner() {
        let tools = [tool("bash", "string")];
        let args = json!({"command": "python text_utils.py"});
        for name in ["run_bash", "execute_shell", "Terminal-Command"] {
            let (_, got) = as_shell_call(name, &args, &tools).unwrap();
            assert_eq!(got, args, "{name}");
        }
        let (_, got) = as_shell_call("python_exec", &json!({"code": "print(3)"}), &tools).unwrap();
        assert_eq!(
            got,
            json!({"command": "python3 - <<'PYTHON'\nprint(3)\nPYTHON"})
        );
    }

    #[test]
    fn python_code_goes_to_python3_on_its_standard_input() {
        let tools = [tool("bash", "string")];
        for args in [json!({"code": "print(2)"}), json!({"command": "print(2)"})] {
            let (_, args) = as_shell_call("python", &args, &tools).unwrap();
            assert_eq!(
                args,
                json!({"command": "python3 - <<'PYTHON'\nprint(2)\nPYTHON"})
            );
        }
    }

    #[test]
    fn an_argv_shell_gets_an_argv_and_an_argv_call_is_joined() {
        let tools = [tool("shell", "array")];
        let args = json!({"command": ["ls", "-la", "my dir"]});
        let (t, args) = as_shell_call("terminal", &args, &tools).unwrap();
        assert_eq!(t.name, "shell");
        assert_eq!(args, json!({"command": ["bash", "-lc", "ls -la 'my dir'"]}));
    }

    #[test]
    fn only_command_runners_with_something_to_run_and_a_shell_to_run_it() {
        let tools = [tool("bash", "string")];
        let args = json!({"command": "ls"});
        assert!(as_shell_call("rename_function", &args, &tools).is_none());
        assert!(as_shell_call("run_tests", &args, &tools).is_none());
        assert!(as_shell_call("load_settings", &args, &tools).is_none());
        assert!(as_shell_call("python", &json!({"path": "a.py"}), &tools).is_none());
        assert!(as_shell_call("bash", &json!({"command": "  "}), &tools).is_none());
        assert!(as_shell_call("bash", &args, &[tool("read", "string")]).is_none());
    }
}
