//! Slash commands: the table, parsing, and the popup's filtering.

/// Every command the composer understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/model`: Choose the model and reasoning effort.
    Model,
    /// `/harness`: Choose the tools and prompt the model gets.
    Harness,
    /// `/approvals`: Choose what runs without asking.
    Approvals,
    /// `/new`: Start a new thread.
    New,
    /// `/resume`: Resume a stored thread.
    Resume,
    /// `/fork`: Fork this thread into a new one.
    Fork,
    /// `/compact`: Summarise the thread to free context.
    Compact,
    /// `/diff`: Show git diff, untracked files included.
    Diff,
    /// `/plan`: Show the model's plan for this task.
    Plan,
    /// `/mention`: Mention a file (same as typing @).
    Mention,
    /// `/status`: Show config, thread, token usage.
    Status,
    /// `/mcp`: List MCP servers (`/mcp verbose` for tools).
    Mcp,
    /// `/skills`: List the skills the model can load.
    Skills,
    /// `/init`: Write an AGENTS.md for this project.
    Init,
    /// `/logout`: Remove stored credentials.
    Logout,
    /// `/review`: Ask the model to review the working tree's git diff.
    Review,
    /// `/copy`: Copy the last answer to the clipboard (OSC 52).
    Copy,
    /// `/rename`: Rename this thread: /rename NAME.
    Rename,
    /// `/undo`: Revert the last patch applied in this session.
    Undo,
    /// `/clear`: Clear the screen and start a new thread.
    Clear,
    /// `/export`: Write this thread as Markdown: /export [PATH].
    Export,
    /// `/archive`: Archive this or another thread (hidden from /resume).
    Archive,
    /// `/delete`: Delete this or another thread, after asking.
    Delete,
    /// `/theme`: Choose the colour theme.
    Theme,
    /// `/statusline`: Choose what the status line shows.
    Statusline,
    /// `/config`: Show the effective settings and where each came from.
    Config,
    /// `/title`: Show or set this thread's title: /title NAME.
    Title,
    /// `/quit`: Exit interpreter.
    Quit,
    /// `/exit`: Exit interpreter.
    Exit,
    /// `/help`: List commands and keys.
    Help,
}

/// `(name, command, one-line description)`, in popup order.
pub const COMMANDS: &[(&str, SlashCommand, &str)] = &[
    (
        "model",
        SlashCommand::Model,
        "choose the model and reasoning effort",
    ),
    (
        "harness",
        SlashCommand::Harness,
        "choose the tools and prompt the model gets",
    ),
    (
        "approvals",
        SlashCommand::Approvals,
        "choose what runs without asking",
    ),
    ("new", SlashCommand::New, "start a new thread"),
    (
        "clear",
        SlashCommand::Clear,
        "clear the screen and start a new thread",
    ),
    ("resume", SlashCommand::Resume, "resume a stored thread"),
    (
        "fork",
        SlashCommand::Fork,
        "fork this thread into a new one",
    ),
    (
        "archive",
        SlashCommand::Archive,
        "archive this or another thread (hidden from /resume)",
    ),
    (
        "delete",
        SlashCommand::Delete,
        "delete this or another thread, after asking",
    ),
    (
        "compact",
        SlashCommand::Compact,
        "summarise the thread to free context",
    ),
    (
        "diff",
        SlashCommand::Diff,
        "show git diff, untracked files included",
    ),
    (
        "plan",
        SlashCommand::Plan,
        "show the model's plan for this task",
    ),
    (
        "mention",
        SlashCommand::Mention,
        "mention a file (same as typing @)",
    ),
    (
        "status",
        SlashCommand::Status,
        "show config, thread, token usage",
    ),
    (
        "statusline",
        SlashCommand::Statusline,
        "choose what the status line shows",
    ),
    (
        "config",
        SlashCommand::Config,
        "show the effective settings and where each came from",
    ),
    ("theme", SlashCommand::Theme, "choose the colour theme"),
    (
        "mcp",
        SlashCommand::Mcp,
        "list MCP servers (`/mcp verbose` for tools)",
    ),
    (
        "skills",
        SlashCommand::Skills,
        "list the skills the model can load",
    ),
    (
        "init",
        SlashCommand::Init,
        "write an AGENTS.md for this project",
    ),
    ("logout", SlashCommand::Logout, "remove stored credentials"),
    (
        "review",
        SlashCommand::Review,
        "ask the model to review the working tree's git diff",
    ),
    (
        "copy",
        SlashCommand::Copy,
        "copy the last answer to the clipboard (OSC 52)",
    ),
    (
        "export",
        SlashCommand::Export,
        "write this thread as Markdown: /export [PATH]",
    ),
    (
        "rename",
        SlashCommand::Rename,
        "rename this thread: /rename NAME",
    ),
    (
        "title",
        SlashCommand::Title,
        "show or set this thread's title: /title NAME",
    ),
    (
        "undo",
        SlashCommand::Undo,
        "revert the last patch applied in this session",
    ),
    ("quit", SlashCommand::Quit, "exit interpreter"),
    ("exit", SlashCommand::Exit, "exit interpreter"),
    ("help", SlashCommand::Help, "list commands and keys"),
];

/// A parsed `/command args` line.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A known command and what followed it.
    Command(SlashCommand, String),
    /// A `/word` that is no command.
    Unknown(String),
}

/// Parses composer text that starts with `/`; `None` when it is not a command line.
pub fn parse(text: &str) -> Option<Parsed> {
    let rest = text.trim().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    // `/path/to/file …` is text, not a command.
    if name.contains('/') {
        return None;
    }
    Some(
        COMMANDS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, c, _)| Parsed::Command(*c, args.trim().to_string()))
            .unwrap_or_else(|| Parsed::Unknown(name.to_string())),
    )
}

/// Commands matching what is typed after `/` (prefix matches first, then substring).
pub fn filter(typed: &str) -> Vec<&'static (&'static str, SlashCommand, &'static str)> {
    let mut prefix: Vec<_> = COMMANDS
        .iter()
        .filter(|(n, _, _)| n.starts_with(typed))
        .collect();
    let more = COMMANDS
        .iter()
        .filter(|(n, _, _)| !n.starts_with(typed) && n.contains(typed));
    prefix.extend(more);
    prefix
}

/// The `/help` text.
pub fn help_lines() -> Vec<String> {
    let mut out: Vec<String> = COMMANDS
        .iter()
        .map(|(n, _, d)| format!("/{n:<10} {d}"))
        .collect();
    out.push(String::new());
    out.extend(
        [
            "/prompts:NAME args  send the prompt file NAME.md ($1…$9, $ARGUMENTS, KEY=value)",
            "Enter send · Shift+Enter or Ctrl+J newline · Up/Down history · @ file picker",
            "while a turn runs: Enter steers it · Tab queues for after it · Alt+Up edits the last queued",
            "Ctrl+R search history · Ctrl+G edit in $VISUAL/$EDITOR · !cmd run a shell command",
            "Esc or Ctrl+C interrupt · Ctrl+C twice or Ctrl+D on empty composer exit",
            "Ctrl+T transcript · Ctrl+L redraw · Ctrl+Z suspend (fg resumes)",
        ]
        .map(String::from),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_unknown_and_paths() {
        assert_eq!(
            parse("/mcp verbose"),
            Some(Parsed::Command(SlashCommand::Mcp, "verbose".into()))
        );
        assert_eq!(
            parse("/frobnicate"),
            Some(Parsed::Unknown("frobnicate".into()))
        );
        assert_eq!(parse("/usr/bin/env is odd"), None);
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn filter_prefers_prefixes() {
        let names: Vec<&str> = filter("m").iter().map(|(n, _, _)| *n).collect();
        assert_eq!(names[..3], ["model", "mention", "mcp"]);
        assert!(names.contains(&"compact"));
    }
}
