//! A `shell` call's arguments, read in the shapes models send (not only the schema's), and
//! the argv and working directory they come to.

use super::super::ToolOutcome;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum CommandArg {
    Argv(Vec<String>),
    /// Open models often send a string; run it with bash.
    Script(String),
}

#[derive(Deserialize)]
pub(super) struct ShellArgs {
    /// `cmd`: Codex 0.171's `exec_command` spelling, which models trained on it send.
    #[serde(alias = "cmd")]
    pub command: CommandArg,
    #[serde(default)]
    pub workdir: Option<String>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default, alias = "timeout")]
    _timeout_alias: Option<serde_json::Value>,
    #[serde(default, alias = "sandbox_permissions")]
    pub with_escalated_permissions: Option<serde_json::Value>,
    #[serde(default)]
    pub justification: Option<String>,
}

pub(super) fn wants_escalation(v: &Option<serde_json::Value>) -> bool {
    match v {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => s == "require_escalated" || s == "true",
        _ => false,
    }
}

/// Option keys of a `shell` call, as they may stray into the argv list.
const OPTION_KEYS: &[&str] = &[
    "workdir",
    "timeout_ms",
    "timeout",
    "justification",
    "with_escalated_permissions",
    "sandbox_permissions",
];

/// A `shell` call's arguments in the shapes models send, not only the schema's: an argv list
/// followed by an options object (`["ls"], {"workdir": "src"}`), options inside the argv
/// list (`["ls", {"workdir": "src"}]`, or `"workdir": "src"` written into the list), the
/// whole arguments as the argv list, numbers as argv words, and an argv list sent as a JSON
/// string (vLLM with Qwen3-Coder). The error is one plain sentence for the model, never a
/// parser's type name.
pub(super) fn shell_args(tool: &str, raw: &str) -> Result<ShellArgs, ToolOutcome> {
    let invalid =
        |message: String| ToolOutcome::err(format!("invalid arguments for `{tool}`: {message}"));
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    let values = json_values(raw)
        .or_else(|| json_values(&options_out_of_argv(raw)?))
        .ok_or_else(|| {
            invalid(format!(
                "the arguments are not JSON ({}). Send an object such as {{\"command\": [\"ls\", \"-la\"], \"workdir\": \"src\"}}",
                one_line(raw)
            ))
        })?;
    let mut obj = Map::new();
    for value in values {
        merge_call_value(&mut obj, value);
    }
    let command = obj.remove("command").or_else(|| obj.remove("cmd"));
    let mut options = Map::new();
    let command = command.map(|c| argv_value(c, &mut options));
    for (k, v) in options {
        obj.entry(k).or_insert(v);
    }
    if let Some(command) = command {
        obj.insert("command".into(), command);
    }
    serde_json::from_value::<ShellArgs>(Value::Object(obj.clone())).map_err(|e| {
        let got = obj.get("command").map_or("nothing".to_string(), |c| one_line(&c.to_string()));
        invalid(if obj.contains_key("command") {
            format!(
                "`command` must be a list of strings such as [\"ls\", \"-la\"], or one command line as a string; got {got}"
            )
        } else if e.to_string().contains("missing field") {
            "`command` is missing. Send an object such as {\"command\": [\"ls\", \"-la\"]}".to_string()
        } else {
            format!("{e}. Send an object such as {{\"command\": [\"ls\", \"-la\"]}}")
        })
    })
}

/// `raw` as one JSON value, or several written one after another (with or without commas
/// between them).
fn json_values(raw: &str) -> Option<Vec<Value>> {
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(raw)
        .into_iter::<Value>()
        .collect();
    if let Ok(values) = values
        .map_err(drop)
        .and_then(|v| if v.is_empty() { Err(()) } else { Ok(v) })
    {
        return Some(values);
    }
    match serde_json::from_str::<Value>(&format!("[{raw}]")) {
        Ok(Value::Array(items)) if !items.is_empty() => Some(items),
        _ => None,
    }
}

/// Merges one JSON value of a call's arguments: an object's keys, or an array or string as
/// the command when there is none yet (an array may itself end with an options object).
fn merge_call_value(obj: &mut Map<String, Value>, value: Value) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                obj.entry(k).or_insert(v);
            }
        }
        Value::Array(items) if !obj.contains_key("command") => {
            obj.insert("command".into(), Value::Array(items));
        }
        Value::String(s) if !obj.contains_key("command") => {
            obj.insert("command".into(), Value::String(s));
        }
        _ => {}
    }
}

/// The command as argv words: objects inside it are options (moved to `options`), a lone
/// nested list is the list, numbers and booleans are words, and a string that holds a JSON
/// list of strings is that list.
fn argv_value(command: Value, options: &mut Map<String, Value>) -> Value {
    match command {
        Value::String(s) => {
            let t = s.trim();
            if t.starts_with('[')
                && let Ok(Value::Array(items)) = serde_json::from_str::<Value>(t)
                && !items.is_empty()
                && items.iter().all(Value::is_string)
            {
                return Value::Array(items);
            }
            Value::String(s)
        }
        Value::Array(items) => {
            let mut words = Vec::new();
            for item in items {
                match item {
                    Value::String(_) => words.push(item),
                    Value::Number(n) => words.push(Value::String(n.to_string())),
                    Value::Bool(b) => words.push(Value::String(b.to_string())),
                    Value::Object(m) => {
                        for (k, v) in m {
                            options.entry(k).or_insert(v);
                        }
                    }
                    Value::Array(inner) if inner.iter().all(Value::is_string) => {
                        words.extend(inner)
                    }
                    Value::Array(_) | Value::Null => {}
                }
            }
            Value::Array(words)
        }
        other => other,
    }
}

/// `{"command": ["ls", "workdir": "src"]}` (an option key written inside the argv list,
/// which is not JSON) with the option moved after the list: `{"command": ["ls"],
/// "workdir": "src"}`. `None` when there is no such key to move.
fn options_out_of_argv(raw: &str) -> Option<String> {
    let open = raw.find("\"command\"").or_else(|| raw.find("\"cmd\""))?;
    let start = open + raw[open..].find('[')?;
    // The list's closing bracket.
    let end = oi_model_client::json_value_end(raw, start)? - 1;
    let inner = &raw[start + 1..end];
    let cut = OPTION_KEYS
        .iter()
        .filter_map(|k| inner.find(&format!("\"{k}\"")))
        .min()?;
    // The option and everything after it in the list were meant as keys of the object.
    let words = inner[..cut].trim_end().trim_end_matches(',');
    let moved = &inner[cut..];
    Some(format!(
        "{}[{words}], {moved}{}",
        &raw[..start],
        &raw[end + 1..]
    ))
}

fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= 120 {
        return flat;
    }
    let cut: String = flat.chars().take(120).collect();
    format!("{cut}…")
}

/// The argv to run: an array as is, a string as a `bash -lc` script (open models often send
/// one). Empty either way is the model's mistake, explained.
pub(super) fn command_argv(command: CommandArg) -> Result<Vec<String>, ToolOutcome> {
    match command {
        CommandArg::Argv(v) if !v.is_empty() => Ok(shell_syntax_as_script(
            v.into_iter()
                .map(crate::harness::word_boundaries_kept)
                .collect(),
        )),
        CommandArg::Script(s) if !s.trim().is_empty() => Ok(vec![
            "bash".to_string(),
            "-lc".to_string(),
            crate::harness::word_boundaries_kept(s),
        ]),
        _ => Err(ToolOutcome::err(
            "`command` is empty; pass an argv array such as [\"ls\", \"-la\"]",
        )),
    }
}

/// Shell operators given as separate argv words (`["echo", "hi", ">", "f"]`), or a whole
/// command line as the only word (`["echo hi > f"]`), which small models often send: run
/// through bash, as they meant, instead of failing or echoing the operator. Decided before
/// approval, so the user approves what really runs.
fn shell_syntax_as_script(argv: Vec<String>) -> Vec<String> {
    const OPERATORS: &[&str] = &[
        ">", ">>", "<", "|", "||", "&&", ";", "2>", "2>&1", "&>", "2>>", "|&",
    ];
    let script = match argv.as_slice() {
        [program, ..] if oi_protocol::parse_command::is_shell(program) => return argv,
        [only] if only.trim().contains(char::is_whitespace) && !Path::new(only).exists() => {
            only.clone()
        }
        words if words[1..].iter().any(|w| OPERATORS.contains(&w.as_str())) => words
            .iter()
            .map(|w| {
                if OPERATORS.contains(&w.as_str()) {
                    w.clone()
                } else {
                    shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned())
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => return argv,
    };
    vec!["bash".to_string(), "-lc".to_string(), script]
}

/// The directory to run in: `workdir` (relative to the session's cwd), or the cwd itself.
pub(super) fn workdir(workdir: Option<&str>, session_cwd: &Path) -> Result<PathBuf, ToolOutcome> {
    let cwd = match workdir {
        Some(w) if !w.trim().is_empty() => {
            let p = PathBuf::from(w);
            if p.is_absolute() {
                p
            } else {
                session_cwd.join(p)
            }
        }
        _ => session_cwd.to_path_buf(),
    };
    if !cwd.is_dir() {
        return Err(ToolOutcome::err(format!(
            "workdir {} does not exist or is not a directory",
            cwd.display()
        )));
    }
    Ok(cwd)
}

#[cfg(test)]
mod tests {
    use super::{ShellArgs, command_argv, shell_syntax_as_script};

    fn shell_args(raw: &str) -> Result<ShellArgs, String> {
        super::shell_args("shell", raw).map_err(|e| e.output.text_content())
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn shell_syntax_in_argv_runs_through_bash() {
        assert_eq!(
            shell_syntax_as_script(argv(&["echo", "hi there", ">", "hello.txt"])),
            argv(&["bash", "-lc", "echo 'hi there' > hello.txt"])
        );
        assert_eq!(
            shell_syntax_as_script(argv(&["echo hi > hello.txt"])),
            argv(&["bash", "-lc", "echo hi > hello.txt"])
        );
        assert_eq!(
            shell_syntax_as_script(argv(&["cat", "a", "|", "wc", "-l"])),
            argv(&["bash", "-lc", "cat a | wc -l"])
        );
    }

    #[test]
    fn plain_argv_and_shells_are_left_alone() {
        for words in [
            &["ls", "-la"][..],
            &["bash", "-lc", "echo hi > f"],
            &["grep", "-r", "a > b", "."],
            &["/bin/echo"],
        ] {
            assert_eq!(shell_syntax_as_script(argv(words)), argv(words));
        }
    }

    #[test]
    fn codex_exec_command_arguments_are_understood() {
        // Codex 0.171's `exec_command` sends the script as `cmd`, with fields of its own.
        let args: ShellArgs = serde_json::from_str(
            r#"{"cmd": "touch approved.txt", "yield_time_ms": 1000, "max_output_tokens": 100}"#,
        )
        .unwrap();
        let Ok(argv) = command_argv(args.command) else {
            panic!("no argv");
        };
        assert_eq!(argv.last().map(String::as_str), Some("touch approved.txt"));
    }

    #[test]
    fn a_json_backspace_is_the_regex_word_boundary_it_was_written_as() {
        let raw = r#"{"command": "sed -i 's/\bcompute_total\b/calculate_total/g' shop.py"}"#;
        assert_eq!(
            argv_of(raw),
            argv(&[
                "bash",
                "-lc",
                r"sed -i 's/\bcompute_total\b/calculate_total/g' shop.py"
            ])
        );
        let raw = r#"{"command": ["grep", "-P", "\bload\b", "a.py"]}"#;
        assert_eq!(argv_of(raw), argv(&["grep", "-P", r"\bload\b", "a.py"]));
    }

    fn argv_of(raw: &str) -> Vec<String> {
        let args = shell_args(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
        command_argv(args.command).unwrap_or_else(|_| panic!("{raw}: no argv"))
    }

    /// Issue 43 items 3 and 5: shapes that came back to the model as "data did not match
    /// any variant of untagged enum CommandArg".
    #[test]
    fn argv_lists_with_options_around_or_inside_them_are_run() {
        for raw in [
            r#"["ls", "-la"], {"workdir": "src"}"#,
            r#"{"command": ["ls", "-la"]}, {"workdir": "src"}"#,
            r#"{"command": ["ls", "-la", {"workdir": "src"}]}"#,
            r#"{"command": ["ls", "-la", "workdir": "src"]}"#,
            r#"[["ls", "-la"], {"workdir": "src"}]"#,
        ] {
            assert_eq!(argv_of(raw), argv(&["ls", "-la"]), "{raw}");
            let args = shell_args(raw).unwrap();
            assert_eq!(args.workdir.as_deref(), Some("src"), "{raw}");
        }
        // vLLM with Qwen3-Coder: the argv list as a JSON string.
        assert_eq!(
            argv_of(r#"{"command": "[\"python3\", \"t.py\"]"}"#),
            argv(&["python3", "t.py"])
        );
        assert_eq!(
            argv_of(r#"{"command": ["head", "-n", 5, "a.txt"]}"#),
            argv(&["head", "-n", "5", "a.txt"])
        );
        // What cannot be a command is said plainly.
        let err = match shell_args(r#"{"command": {"program": "ls"}}"#) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert!(
            err.starts_with("invalid arguments for `shell`: `command` must be a list of strings"),
            "{err}"
        );
        assert!(!err.contains("untagged"), "{err}");
        let err = match shell_args(r#"{"workdir": "src"}"#) {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
        assert!(err.contains("`command` is missing"), "{err}");
    }
}
