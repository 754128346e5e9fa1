//! History cells: one finished (or still running) piece of the conversation, rendered to
//! lines for a given width. Finished cells go into the terminal's scrollback; running ones
//! (streaming text, a command's live output) are drawn in the live area.

use crate::markdown::render_markdown;
use crate::theme::Theme;
use crate::wrap::{truncate, wrap_line, wrap_lines};
use oi_protocol::protocol::FileChange;
use ratatui::text::{Line, Span};
use std::path::PathBuf;

/// Output rows a finished command shows before it is collapsed.
pub const EXEC_OUTPUT_ROWS: usize = 6;
/// Output rows a running command shows (the tail).
pub const EXEC_LIVE_ROWS: usize = 4;

/// How a command or patch ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Still running.
    Running,
    /// Ran to its end.
    Done {
        /// The command's exit code.
        exit_code: i32,
        /// How long it ran.
        duration_ms: u64,
    },
    /// The user declined to run it.
    Declined,
    /// Stopped because the user interrupted the turn (its exit code says only "killed").
    Interrupted,
}

/// One cell of the transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum HistoryCell {
    /// The session banner: model, provider, directory.
    Header {
        /// The model in use.
        model: String,
        /// The config's id of its provider.
        provider: String,
        /// The thread's working directory.
        cwd: PathBuf,
        /// The thread's id.
        thread_id: String,
    },
    /// A message the user sent.
    User {
        /// What they typed.
        text: String,
    },
    /// Assistant text, Markdown.
    Assistant {
        /// The answer's text.
        markdown: String,
    },
    /// More of the same answer: the blocks that followed the ones already committed to the
    /// scrollback while it streamed (no bullet, so the answer reads as one cell).
    AssistantMore {
        /// The rest of the answer's text.
        markdown: String,
    },
    /// The first part of a block of the answer (code lines, list items) cut where the
    /// screen ran out while it streamed: the block goes on below it, so no blank row
    /// follows. `first` when it begins the answer (it has the bullet).
    AssistantPart {
        /// The part's text.
        markdown: String,
        /// Whether it begins the answer.
        first: bool,
    },
    /// The model's reasoning.
    Reasoning {
        /// Its text.
        text: String,
    },
    /// A command the model or the user ran.
    Exec {
        /// The command line.
        command: String,
        /// Its output, stdout then stderr.
        output: String,
        /// How it ended, or that it runs.
        outcome: Outcome,
    },
    /// A patch the model applied or proposed.
    Patch {
        /// The files it changes and how.
        changes: Vec<(PathBuf, FileChange)>,
        /// Whether it applied; `None` while it is pending.
        ok: Option<bool>,
    },
    /// A call of an MCP server's tool.
    McpCall {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The call's arguments (JSON text).
        arguments: String,
        /// `None` while running; `Ok(summary)` / `Err(message)` when done.
        result: Option<Result<String, String>>,
        /// How long it took, once done.
        duration_ms: Option<u64>,
        /// The server's latest progress while it runs (its message, `n/total`, or a task's
        /// status).
        progress: Option<String>,
    },
    /// Something failed.
    Error {
        /// What failed, and the fix where there is one.
        message: String,
    },
    /// Something the user should know about, that did not stop anything.
    Warning {
        /// The warning.
        message: String,
    },
    /// Output of a slash command: a title and preformatted lines.
    Info {
        /// The title line.
        title: String,
        /// The lines under it.
        lines: Vec<String>,
    },
    /// The end of a turn.
    TurnEnded {
        /// The user interrupted it.
        interrupted: bool,
        /// How long it took, when known.
        duration_ms: Option<u64>,
    },
    /// `/diff` output: a unified diff.
    Diff {
        /// The diff.
        text: String,
    },
}

/// `1.2s`, `850ms`, `2m 05s`.
pub fn format_duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m {:02}s", ms / 60_000, (ms / 1000) % 60)
    }
}

/// `+added -removed` of a unified diff body.
pub fn diff_counts(diff: &str) -> (usize, usize) {
    let mut add = 0;
    let mut del = 0;
    for l in diff.lines() {
        if l.starts_with("+++") || l.starts_with("---") {
            continue;
        }
        if l.starts_with('+') {
            add += 1;
        } else if l.starts_with('-') {
            del += 1;
        }
    }
    (add, del)
}

fn change_diff(change: &FileChange) -> String {
    match change {
        FileChange::Add { content } => content.lines().map(|l| format!("+{l}\n")).collect(),
        FileChange::Delete { content } => content.lines().map(|l| format!("-{l}\n")).collect(),
        FileChange::Update { unified_diff, .. } => unified_diff.clone(),
    }
}

/// The per-file header and coloured diff of a patch (used by cells and the approval overlay).
pub fn patch_lines(
    changes: &[(PathBuf, FileChange)],
    theme: &Theme,
    max_rows: usize,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (path, change) in changes {
        let diff = change_diff(change);
        let (add, del) = diff_counts(&diff);
        let verb = match change {
            FileChange::Add { .. } => "added",
            FileChange::Delete { .. } => "deleted",
            FileChange::Update {
                move_path: Some(_), ..
            } => "moved",
            FileChange::Update { .. } => "edited",
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {verb} "), theme.plain()),
            Span::styled(path.display().to_string(), theme.bold()),
            Span::raw(" ("),
            Span::styled(format!("+{add}"), theme.added()),
            Span::raw(" "),
            Span::styled(format!("-{del}"), theme.removed()),
            Span::raw(")"),
        ]));
        out.extend(crate::diff_view::diff_lines(
            &diff,
            Some(&path.to_string_lossy()),
            theme,
            max_rows,
        ));
    }
    out
}

/// A one-line summary of an MCP `CallToolResult` (its first text block, else the JSON).
pub fn mcp_result_summary(result: &serde_json::Value) -> String {
    let text = result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|blocks| {
            blocks
                .iter()
                .find_map(|b| b.get("text").and_then(|t| t.as_str()))
        })
        .map(str::to_string)
        .unwrap_or_else(|| result.to_string());
    text.lines().next().unwrap_or_default().to_string()
}

fn bullet(style: ratatui::style::Style) -> Span<'static> {
    Span::styled("• ", style)
}

/// How much of a command's output a cell shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ExecRows {
    /// The last [`EXEC_LIVE_ROWS`] (while it runs).
    Tail,
    /// The first [`EXEC_OUTPUT_ROWS`] (in the scrollback).
    Head,
    /// All of it, lines wrapped (in the transcript).
    All,
}

impl HistoryCell {
    /// The cell as the transcript shows it: like in the scrollback, but a command's output
    /// whole.
    pub fn transcript_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        match self {
            HistoryCell::Exec {
                command,
                output,
                outcome,
            } => exec_lines(command, output, outcome, width, theme, ExecRows::All),
            _ => self.lines(width, theme, false),
        }
    }

    /// The cell as lines wrapped to `width`. `live` draws a running cell (output tail only).
    pub fn lines(&self, width: u16, theme: &Theme, live: bool) -> Vec<Line<'static>> {
        let mut out: Vec<Line<'static>> = match self {
            HistoryCell::Header {
                model,
                provider,
                cwd,
                thread_id,
            } => header_lines(model, provider, cwd, thread_id, width, theme),
            HistoryCell::User { text } => {
                let mut lines = Vec::new();
                for (i, l) in text.lines().enumerate() {
                    let lead = if i == 0 { "› " } else { "  " };
                    lines.push(Line::from(vec![
                        Span::styled(lead, theme.user()),
                        Span::styled(l.to_string(), theme.plain()),
                    ]));
                }
                wrap_lines(&lines, width, "  ")
            }
            HistoryCell::Assistant { markdown }
            | HistoryCell::AssistantMore { markdown }
            | HistoryCell::AssistantPart { markdown, .. } => {
                let first = matches!(
                    self,
                    HistoryCell::Assistant { .. } | HistoryCell::AssistantPart { first: true, .. }
                );
                assistant_lines(markdown, first, width, theme)
            }
            HistoryCell::Reasoning { text } => {
                let lines: Vec<Line<'static>> = text
                    .lines()
                    .map(|l| Line::styled(format!("  {l}"), theme.dim().patch(theme.italic())))
                    .collect();
                let mut out = vec![Line::styled("• thinking", theme.dim())];
                out.extend(wrap_lines(&lines, width, "  "));
                out
            }
            HistoryCell::Exec {
                command,
                output,
                outcome,
            } => exec_lines(
                command,
                output,
                outcome,
                width,
                theme,
                if live { ExecRows::Tail } else { ExecRows::Head },
            ),
            HistoryCell::Patch { changes, ok } => {
                let (title, style) = match ok {
                    None => ("Applying patch", theme.bold()),
                    Some(true) => ("Applied patch", theme.ok()),
                    Some(false) => ("Patch failed", theme.error()),
                };
                let mut out = vec![Line::from(vec![bullet(style), Span::styled(title, style)])];
                out.extend(patch_lines(changes, theme, 40));
                wrap_lines(&out, width, "    ")
            }
            HistoryCell::McpCall {
                server,
                tool,
                arguments,
                result,
                duration_ms,
                progress,
            } => {
                let call = McpCallView {
                    server,
                    tool,
                    arguments,
                    result: result
                        .as_ref()
                        .map(|r| r.as_deref().map_err(String::as_str)),
                    duration_ms: *duration_ms,
                    progress: progress.as_deref(),
                };
                mcp_call_lines(&call, width, theme)
            }
            HistoryCell::Error { message } => {
                marked_message("■ ", theme.error(), message, theme.removed(), width)
            }
            HistoryCell::Warning { message } => {
                marked_message("⚠ ", theme.warning(), message, theme.plain(), width)
            }
            HistoryCell::Info { title, lines } => {
                let mut out = vec![Line::from(vec![
                    bullet(theme.accent()),
                    Span::styled(title.clone(), theme.bold()),
                ])];
                out.extend(lines.iter().map(|l| Line::raw(format!("  {l}"))));
                wrap_lines(&out, width, "    ")
            }
            HistoryCell::Diff { text } => diff_summary_lines(text, width, theme),
            HistoryCell::TurnEnded {
                interrupted,
                duration_ms,
            } => turn_ended_lines(*interrupted, *duration_ms, width, theme),
        };
        // A blank row separates cells in the scrollback.
        if !live
            && !matches!(
                self,
                HistoryCell::TurnEnded { .. } | HistoryCell::AssistantPart { .. }
            )
        {
            out.push(Line::default());
        }
        out
    }
}

/// `/diff`: the files and lines it changes, then the diff itself.
fn diff_summary_lines(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let files = text.lines().filter(|l| l.starts_with("diff --git")).count();
    let (add, del) = diff_counts(text);
    let mut out = vec![Line::from(vec![
        bullet(theme.accent()),
        Span::styled(format!("git diff: {files} file(s) "), theme.bold()),
        Span::styled(format!("+{add}"), theme.added()),
        Span::raw(" "),
        Span::styled(format!("-{del}"), theme.removed()),
    ])];
    out.extend(crate::diff_view::diff_lines(text, None, theme, 2000));
    wrap_lines(&out, width, "    ")
}

/// The session's header: who answers, where, which thread.
fn header_lines(
    model: &str,
    provider: &str,
    cwd: &std::path::Path,
    thread_id: &str,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    wrap_lines(
        &[
            Line::from(vec![
                Span::styled(">_ ", theme.accent()),
                Span::styled("Open Interpreter", theme.bold()),
                Span::styled(format!("  {model} via {provider}"), theme.plain()),
            ]),
            Line::styled(format!("   {}", cwd.display()), theme.dim()),
            Line::styled(format!("   thread {thread_id}"), theme.dim()),
            Line::styled("   /help for commands · Ctrl+T transcript", theme.dim()),
        ],
        width,
        "   ",
    )
}

/// The answer's Markdown, with the bullet on its `first` part only.
fn assistant_lines(markdown: &str, first: bool, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let body = render_markdown(markdown, width.saturating_sub(2).max(8), theme);
    body.into_iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 && first {
                bullet(theme.plain())
            } else {
                Span::raw("  ")
            };
            let mut spans = vec![lead];
            spans.extend(l.spans);
            Line::from(spans)
        })
        .collect()
}

/// An MCP tool call as [`HistoryCell::McpCall`] holds it, borrowed for drawing.
#[derive(Clone, Copy)]
struct McpCallView<'a> {
    server: &'a str,
    tool: &'a str,
    arguments: &'a str,
    /// `None` while running; the summary or the error when done.
    result: Option<Result<&'a str, &'a str>>,
    duration_ms: Option<u64>,
    progress: Option<&'a str>,
}

/// A tool call's head line (status, name, arguments, time) and its result or progress.
fn mcp_call_lines(call: &McpCallView<'_>, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let McpCallView {
        server,
        tool,
        arguments,
        result,
        duration_ms,
        progress,
    } = *call;
    let w = usize::from(width);
    let (style, status) = match result {
        None => (theme.bold(), "Calling".to_string()),
        Some(Ok(_)) => (theme.ok(), "Called".to_string()),
        Some(Err(_)) => (theme.error(), "Failed".to_string()),
    };
    let mut head = vec![
        bullet(style),
        Span::styled(format!("{status} "), style),
        Span::styled(format!("{server}.{tool}"), theme.accent()),
        Span::styled(
            format!("({})", truncate(arguments, w.saturating_sub(20).max(10))),
            theme.dim(),
        ),
    ];
    if let Some(ms) = duration_ms {
        head.push(Span::styled(
            format!(" · {}", format_duration(ms)),
            theme.dim(),
        ));
    }
    let mut out = vec![Line::from(head)];
    match result {
        Some(Ok(s)) if !s.is_empty() => out.push(Line::styled(format!("  └ {s}"), theme.dim())),
        Some(Err(e)) => out.push(Line::styled(format!("  └ {e}"), theme.removed())),
        None => {
            if let Some(p) = progress {
                out.push(Line::styled(format!("  └ {p}"), theme.dim()));
            }
        }
        _ => {}
    }
    wrap_lines(&out, width, "    ")
}

/// The rule that ends a turn, across the whole window.
fn turn_ended_lines(
    interrupted: bool,
    duration_ms: Option<u64>,
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = usize::from(width);
    let what = if interrupted {
        "turn interrupted"
    } else {
        "turn done"
    };
    let mut label = format!(" {what} ");
    if let Some(ms) = duration_ms {
        label = format!(" {what} in {} ", format_duration(ms));
    }
    // Across the whole window, however wide.
    let rule = w.saturating_sub(label.chars().count() + 2);
    vec![Line::styled(
        format!("──{label}{}", "─".repeat(rule)),
        if interrupted {
            theme.warning()
        } else {
            theme.dim()
        },
    )]
}

fn exec_lines(
    command: &str,
    output: &str,
    outcome: &Outcome,
    width: u16,
    theme: &Theme,
    rows_shown: ExecRows,
) -> Vec<Line<'static>> {
    let live = rows_shown == ExecRows::Tail;
    let (style, verb) = match outcome {
        Outcome::Running => (theme.bold(), "Running"),
        Outcome::Done { exit_code: 0, .. } => (theme.ok(), "Ran"),
        Outcome::Done { .. } => (theme.error(), "Ran"),
        Outcome::Declined => (theme.warning(), "Declined"),
        Outcome::Interrupted => (theme.warning(), "Interrupted"),
    };
    let mut head = vec![
        bullet(style),
        Span::styled(format!("{verb} "), style),
        Span::styled(format!("$ {command}"), theme.accent()),
    ];
    if let Outcome::Done {
        exit_code,
        duration_ms,
    } = outcome
    {
        let status = if *exit_code == 0 {
            Span::styled(" ✓", theme.ok())
        } else {
            Span::styled(format!(" exit {exit_code}"), theme.error())
        };
        head.push(status);
        head.push(Span::styled(
            format!(" · {}", format_duration(*duration_ms)),
            theme.dim(),
        ));
    }
    let mut out = wrap_line(&Line::from(head), width, "    ");
    let rows: Vec<&str> = output.lines().collect();
    let max = match rows_shown {
        ExecRows::Tail => EXEC_LIVE_ROWS,
        ExecRows::Head => EXEC_OUTPUT_ROWS,
        ExecRows::All => usize::MAX,
    };
    let (shown, hidden) = if rows.len() > max {
        if live {
            (&rows[rows.len() - max..], rows.len() - max)
        } else {
            (&rows[..max], rows.len() - max)
        }
    } else {
        (&rows[..], 0)
    };
    let inner = usize::from(width).saturating_sub(4).max(8);
    if live && hidden > 0 {
        out.push(Line::styled(
            format!("  │ … {hidden} earlier lines"),
            theme.dim(),
        ));
    }
    for (i, l) in shown.iter().enumerate() {
        let lead = if i == 0 && !live { "  └ " } else { "    " };
        if rows_shown == ExecRows::All {
            let line = Line::from(vec![
                Span::styled(lead, theme.dim()),
                Span::styled(l.to_string(), theme.dim()),
            ]);
            out.extend(wrap_line(&line, width, "    "));
            continue;
        }
        out.push(Line::from(vec![
            Span::styled(lead, theme.dim()),
            Span::styled(truncate(l, inner), theme.dim()),
        ]));
    }
    if !live && hidden > 0 {
        out.push(Line::styled(
            format!("    … {hidden} more lines (Ctrl+T shows the transcript)"),
            theme.dim(),
        ));
    }
    out
}

/// An error or warning: the mark, then every line of the message (the later lines of an
/// error are usually the config to add or the command to run), each wrapped under the first.
fn marked_message(
    mark: &'static str,
    mark_style: ratatui::style::Style,
    message: &str,
    style: ratatui::style::Style,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or_default().to_string();
    let mut out = vec![Line::from(vec![
        Span::styled(mark, mark_style),
        Span::styled(first, style),
    ])];
    out.extend(lines.map(|l| Line::from(Span::styled(format!("  {l}"), style))));
    wrap_lines(&out, width, "  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_counts_skip_file_headers() {
        assert_eq!(diff_counts("--- a\n+++ b\n@@\n-x\n+y\n+z\n ctx\n"), (2, 1));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(850), "850ms");
        assert_eq!(format_duration(1250), "1.2s");
        assert_eq!(format_duration(125_000), "2m 05s");
    }

    #[test]
    fn the_turn_done_rule_spans_the_width() {
        let theme = Theme::mono();
        for width in [40u16, 80, 100, 200] {
            let cell = HistoryCell::TurnEnded {
                interrupted: false,
                duration_ms: Some(4200),
            };
            let lines = cell.lines(width, &theme, false);
            let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(text.starts_with("── turn done in 4.2s ──"), "{text}");
            assert_eq!(text.chars().count(), usize::from(width), "{text}");
        }
    }

    #[test]
    fn mcp_summary_takes_first_text_line() {
        let v = serde_json::json!({"content":[{"type":"text","text":"hello\nworld"}]});
        assert_eq!(mcp_result_summary(&v), "hello");
    }
}
