//! A coarse classification of shell commands, shown to users in approval prompts
//! (`parsed_cmd` / `codex_parsed_cmd`).

use serde::{Deserialize, Serialize};

/// What a shell command does, as far as its words tell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParsedCommand {
    /// Reads one file.
    Read {
        /// The command line, as run.
        cmd: String,
        /// The file's name.
        name: String,
        /// The file's path.
        path: String,
    },
    /// Lists files.
    ListFiles {
        /// The command line, as run.
        cmd: String,
        /// The folder listed, when named.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// Searches files.
    Search {
        /// The command line, as run.
        cmd: String,
        /// What it searches for, when it says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        query: Option<String>,
        /// Where it searches, when named.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// Anything else.
    Unknown {
        /// The command line, as run.
        cmd: String,
    },
}

/// Join argv the way a shell user would type it (`bash -lc 'x y'` stays readable), quoting
/// only the words that need it. This is for display: an argument with a NUL byte (which no
/// shell word can hold) is shown as is.
pub fn shell_join(argv: &[String]) -> String {
    shlex::Quoter::new()
        .allow_nul(true)
        .join(argv.iter().map(String::as_str))
        .unwrap_or_else(|_| argv.join(" "))
}

/// The script of a `bash -lc "<script>"` (or `sh -c`, `zsh -c`, `dash -c`) command.
pub fn shell_script(argv: &[String]) -> Option<&str> {
    match argv {
        [sh, flag, script] if is_shell(sh) && (flag == "-lc" || flag == "-c") => Some(script),
        _ => None,
    }
}

/// A command as people read it: `bash -lc "<script>"` is the script alone, anything else
/// is joined as a shell user would type it.
pub fn display_command(argv: &[String]) -> String {
    match shell_script(argv) {
        Some(script) => script.to_string(),
        None => shell_join(argv),
    }
}

/// Classify a command. `bash -lc "<script>"` is unwrapped to its script.
pub fn parse_command(argv: &[String]) -> Vec<ParsedCommand> {
    let script: String;
    let words: Vec<String> = match shell_script(argv) {
        Some(s) => {
            script = s.to_string();
            if script.contains(['|', ';', '&', '>', '<', '$', '`']) {
                return vec![ParsedCommand::Unknown { cmd: script }];
            }
            // Quotes group words (`cat 'my notes.txt'` reads one file); a script the shell
            // could not parse either is left unclassified.
            match shlex::split(&script) {
                Some(words) => words,
                None => return vec![ParsedCommand::Unknown { cmd: script }],
            }
        }
        None => {
            script = shell_join(argv);
            argv.to_vec()
        }
    };
    let Some(first) = words.first() else {
        return vec![ParsedCommand::Unknown { cmd: script }];
    };
    let prog = first.rsplit('/').next().unwrap_or(first).to_string();
    let operands: Vec<&String> = words[1..].iter().filter(|w| !w.starts_with('-')).collect();
    match prog.as_str() {
        "cat" | "head" | "tail" | "less" | "more" | "nl" if operands.len() == 1 => {
            let path = operands[0].clone();
            let name = path.rsplit('/').next().unwrap_or(&path).to_string();
            vec![ParsedCommand::Read {
                cmd: script,
                name,
                path,
            }]
        }
        "ls" | "tree" | "find" if operands.len() <= 1 => vec![ParsedCommand::ListFiles {
            cmd: script,
            path: operands.first().map(|s| s.to_string()),
        }],
        "grep" | "rg" | "ag" | "ack" => vec![ParsedCommand::Search {
            cmd: script,
            query: operands.first().map(|s| s.to_string()),
            path: operands.get(1).map(|s| s.to_string()),
        }],
        _ => vec![ParsedCommand::Unknown { cmd: script }],
    }
}

/// True when `program` (a name or a path) is a POSIX shell that takes `-c SCRIPT`.
pub fn is_shell(program: &str) -> bool {
    matches!(
        program.rsplit('/').next().unwrap_or(program),
        "bash" | "sh" | "zsh" | "dash"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_command_shows_shell_scripts_alone() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            display_command(&argv(&["/bin/bash", "-lc", "ls | wc"])),
            "ls | wc"
        );
        assert_eq!(
            display_command(&argv(&["dash", "-c", "echo hi"])),
            "echo hi"
        );
        assert_eq!(
            display_command(&argv(&["python3", "-c", "print(1)"])),
            "python3 -c 'print(1)'"
        );
        assert_eq!(display_command(&argv(&["bash", "-x", "s"])), "bash -x s");
        assert!(is_shell("/usr/bin/zsh") && !is_shell("fish"));
    }

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn classifies_common_commands() {
        assert_eq!(
            parse_command(&v(&["cat", "src/main.rs"])),
            vec![ParsedCommand::Read {
                cmd: "cat src/main.rs".into(),
                name: "main.rs".into(),
                path: "src/main.rs".into()
            }]
        );
        assert!(matches!(
            parse_command(&v(&["bash", "-lc", "ls -la"]))[0],
            ParsedCommand::ListFiles { .. }
        ));
        assert!(matches!(
            parse_command(&v(&["bash", "-lc", "touch a > b"]))[0],
            ParsedCommand::Unknown { .. }
        ));
    }

    #[test]
    fn shell_join_quotes_when_needed() {
        let argv = v(&["echo", "a b", "it's", "", "$HOME", "src/main.rs"]);
        let joined = shell_join(&argv);
        assert_eq!(joined, r#"echo 'a b' "it's" '' '$HOME' src/main.rs"#);
        // What is shown is what a shell would run: it splits back into the same argv.
        assert_eq!(shlex::split(&joined).unwrap(), argv);
    }

    #[test]
    fn quoted_words_in_a_script_stay_one_operand() {
        assert_eq!(
            parse_command(&v(&["bash", "-lc", "cat 'my notes.txt'"])),
            vec![ParsedCommand::Read {
                cmd: "cat 'my notes.txt'".into(),
                name: "my notes.txt".into(),
                path: "my notes.txt".into()
            }]
        );
        assert!(matches!(
            parse_command(&v(&["bash", "-lc", "cat 'unbalanced"]))[0],
            ParsedCommand::Unknown { .. }
        ));
    }
}
