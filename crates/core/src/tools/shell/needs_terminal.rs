//! Commands that open a program needing a terminal.
//!
//! Commands run without a terminal, so an editor the model opens waits for keys nobody
//! types, or fails, after the rest of the command has run. Recorded on the real tier for
//! "rename compute_total in shop.py and main.py": `mv shop.py shop.py.bak; mv main.py
//! main.py.bak; nano shop.py; nano main.py`, which moved both files away and changed
//! nothing. Such a command is not run at all, and the model is told how to write files
//! here instead.

/// Programs that do nothing useful without a terminal: full-screen editors and monitors.
/// (`less` and `more` print the file when their output is not a terminal; `ed` reads its
/// commands from standard input.)
const NEEDS_TERMINAL: &[&str] = &[
    "nano", "vim", "vi", "nvim", "view", "emacs", "pico", "micro", "joe", "mcedit", "top", "htop",
];

/// Words that run the command after them.
const PREFIXES: &[&str] = &["sudo", "exec", "command", "env", "nohup", "time", "nice"];

/// Why `argv` is not run, when one of its simple commands starts a program that needs a
/// terminal.
pub(super) fn refusal(argv: &[String]) -> Option<String> {
    let script = match oi_protocol::parse_command::shell_script(argv) {
        Some(script) => script.to_string(),
        None => argv.first()?.clone(),
    };
    let program = script
        .split(['\n', ';', '&', '|', '(', ')', '{', '}'])
        .find_map(|part| {
            let mut words = part.split_whitespace();
            let first = words.find(|w| !w.contains('=') && !PREFIXES.contains(w))?;
            let name = first.rsplit('/').next().unwrap_or(first);
            NEEDS_TERMINAL.contains(&name).then(|| name.to_string())
        })?;
    Some(format!(
        "`{program}` needs a terminal, and commands here run without one: nothing of this command ran. Write a whole file with `cat > FILE <<'EOF'` … `EOF`, or change one with `sed -i 's/OLD/NEW/' FILE` or a short python3 script, and look at a file with `cat FILE`."
    ))
}

#[cfg(test)]
mod tests {
    use super::refusal;

    fn bash(script: &str) -> Vec<String> {
        vec!["bash".into(), "-lc".into(), script.into()]
    }

    #[test]
    fn an_editor_anywhere_in_the_command_stops_all_of_it() {
        for script in [
            "mv shop.py shop.py.bak; mv main.py main.py.bak; nano shop.py; nano main.py",
            "vim notes.txt",
            "cd src && /usr/bin/vi app.py",
            "sudo nano /etc/hosts",
            "EDITOR=x emacs file",
            "top",
        ] {
            let why = refusal(&bash(script)).unwrap_or_else(|| panic!("{script}"));
            assert!(
                why.contains("needs a terminal") && why.contains("nothing of this command ran"),
                "{why}"
            );
        }
        assert!(refusal(&["vim".into(), "a.txt".into()]).is_some());
    }

    #[test]
    fn commands_that_only_mention_an_editor_run() {
        for script in [
            "less notes.txt",
            "grep -rn vim .",
            "echo nano",
            "cat vim.txt",
            "sed -i 's/vi/vim/' notes.txt",
            "ls ~/.vim",
        ] {
            assert_eq!(refusal(&bash(script)), None, "{script}");
        }
    }
}
