//! SWE-agent's file viewer, as this project runs it: one open file per session and a window
//! of [`WINDOW`] numbered lines on it that `open`, `goto` and the scrolls move, and `edit`
//! replacing a line range of that file. The window is rendered here from the file's text
//! (read with the patch path's bounded reader); an edit is a whole-file change planned
//! through the patch path like every other profile edit, so it gets the approval, the diff
//! and the `patch_apply_*` events.

use super::{Action, Args};
use std::path::PathBuf;

/// Lines a window shows.
pub(crate) const WINDOW: usize = 100;
/// Lines a scroll keeps from the window before, so the reader keeps their place.
const OVERLAP: usize = 2;
/// A longer line is cut in the window (a minified file must not flood the context).
const MAX_LINE_CHARS: usize = 1_000;

/// What a viewer call asks for.
#[derive(Debug, PartialEq)]
pub(crate) enum ViewRequest {
    /// Open `path` (and show `line` in the window).
    Open { path: String, line: Option<u64> },
    /// Move the window of the open file to `line`.
    Goto(u64),
    /// Move the window down (or up) by a window less the overlap.
    Scroll { down: bool },
}

/// The session's open file: what the viewer state is. One per session, so it is bounded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OpenFile {
    /// Resolved against the session's cwd.
    pub path: PathBuf,
    /// As the model named it (shown in the window's header).
    pub shown: String,
    /// The window's first line, 1-based.
    pub top: usize,
}

/// A viewer call without the argument it needs (the message tells the model what to send).
#[derive(Debug, thiserror::Error)]
pub(crate) enum MissingArgument {
    #[error("`open` needs `path`: the file to show, e.g. {{\"path\": \"src/app.py\"}}")]
    Path,
    #[error(
        "`goto` needs `line_number`: the line of the open file to show, e.g. {{\"line_number\": 120}}"
    )]
    LineNumber,
    #[error("`search_file` needs `search_term`: the text to look for in the open file")]
    SearchTerm,
}

/// A line range `edit` cannot apply (the message says what to send instead).
#[derive(Debug, PartialEq, thiserror::Error)]
pub(crate) enum BadRange {
    #[error("lines are numbered from 1, as the viewer shows them")]
    FromZero,
    #[error(
        "`start_line` {first} is past the end of the file ({total} lines); to add lines at the end, use `start_line` {} and `end_line` {total}",
        total + 1
    )]
    PastEnd { first: usize, total: usize },
    #[error(
        "`end_line` ({last}) is before `start_line` ({first}); give the range of lines to replace, e.g. `start_line` {first} and `end_line` {first}"
    )]
    Backwards { first: usize, last: usize },
}

/// The action of viewer tool `name` (`open`, `goto`, `scroll_up`, `scroll_down`,
/// `search_file`).
pub(super) fn request(name: &str, a: &Args) -> Result<Action, MissingArgument> {
    Ok(Action::View(match name {
        "open" => {
            let path = a.target().ok_or(MissingArgument::Path)?;
            ViewRequest::Open {
                path,
                line: a.line_number,
            }
        }
        "goto" => ViewRequest::Goto(a.line_number.ok_or(MissingArgument::LineNumber)?),
        "scroll_up" => ViewRequest::Scroll { down: false },
        "scroll_down" => ViewRequest::Scroll { down: true },
        _ => {
            let term = a
                .pattern
                .clone()
                .filter(|t| !t.is_empty())
                .ok_or(MissingArgument::SearchTerm)?;
            return Ok(Action::SearchFile {
                term,
                file: a.target(),
            });
        }
    }))
}

/// The first line of a window that shows `line` about a third of the way down (so what
/// follows it is in view), kept inside a file of `total` lines.
pub(crate) fn top_for_line(line: usize, total: usize) -> usize {
    clamp_top(line.saturating_sub(WINDOW / 3), total)
}

/// `top` kept so the window ends at or before the last line (and starts at line 1 or
/// later).
pub(crate) fn clamp_top(top: usize, total: usize) -> usize {
    top.min(total.saturating_sub(WINDOW) + 1).max(1)
}

/// The window's first line after a scroll from `top`.
pub(crate) fn scrolled(top: usize, down: bool, total: usize) -> usize {
    let step = WINDOW - OVERLAP;
    clamp_top(
        if down {
            top + step
        } else {
            top.saturating_sub(step)
        },
        total,
    )
}

/// How many lines `text` has (a last line without a line break counts).
pub(crate) fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// The window of `text` from line `top`: a header with the file's length, the lines above
/// and below it counted, each shown line numbered.
pub(crate) fn render(shown: &str, text: &str, top: usize) -> String {
    let total = line_count(text);
    let top = clamp_top(top, total);
    let mut out = format!("[File: {shown} ({total} lines total)]\n");
    if top > 1 {
        out.push_str(&format!("({} more lines above)\n", top - 1));
    }
    let mut last = top.saturating_sub(1);
    for (i, line) in text
        .split_inclusive('\n')
        .enumerate()
        .skip(top - 1)
        .take(WINDOW)
    {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        last = i + 1;
        match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => out.push_str(&format!(
                "{last}:{}… ({} more characters)\n",
                &line[..cut],
                line[cut..].chars().count()
            )),
            None => out.push_str(&format!("{last}:{line}\n")),
        }
    }
    if last < total {
        out.push_str(&format!("({} more lines below)\n", total - last));
    }
    out
}

/// `text` with lines `first..=last` (1-based, as the window numbers them) replaced by
/// `replacement`. `last` past the end means "to the end"; `last = first - 1` inserts before
/// `first`; `first` one past the end appends. The error says what the model must change.
pub(crate) fn replace_lines(
    text: &str,
    first: u64,
    last: u64,
    replacement: &str,
) -> Result<String, BadRange> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    let first = usize::try_from(first).unwrap_or(usize::MAX);
    let last = usize::try_from(last).unwrap_or(usize::MAX).min(total);
    if first == 0 {
        return Err(BadRange::FromZero);
    }
    if first > total + 1 {
        return Err(BadRange::PastEnd { first, total });
    }
    if last + 1 < first {
        return Err(BadRange::Backwards { first, last });
    }
    let mut out = String::with_capacity(text.len() + replacement.len());
    for line in &lines[..first - 1] {
        out.push_str(line);
    }
    // A last line without a line break gets one before new lines follow it.
    if first > 1 && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(replacement);
    let rest = &lines[last.max(first - 1)..];
    if !replacement.is_empty() && !replacement.ends_with('\n') && !rest.is_empty() {
        out.push('\n');
    }
    for line in rest {
        out.push_str(line);
    }
    // The file keeps its last line break when the edit reached the end.
    if rest.is_empty() && text.ends_with('\n') && !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_window_numbers_its_lines_and_counts_the_rest() {
        let text = numbered(250);
        let shown = render("f.txt", &text, 101);
        assert!(
            shown.starts_with(
                "[File: f.txt (250 lines total)]\n(100 more lines above)\n101:line 101\n"
            ),
            "{shown}"
        );
        assert!(
            shown.ends_with("200:line 200\n(50 more lines below)\n"),
            "{shown}"
        );
        // Past the end, the window is the last one.
        let end = render("f.txt", &text, 900);
        assert!(
            end.contains("151:line 151\n") && end.ends_with("250:line 250\n"),
            "{end}"
        );
        let short = render("s.txt", "a\nb", 1);
        assert_eq!(short, "[File: s.txt (2 lines total)]\n1:a\n2:b\n");
        assert_eq!(render("e.txt", "", 1), "[File: e.txt (0 lines total)]\n");
    }

    #[test]
    fn long_lines_are_cut() {
        let text = format!("{}\n", "x".repeat(MAX_LINE_CHARS + 5));
        let shown = render("m.js", &text, 1);
        assert!(shown.contains("… (5 more characters)"), "{shown}");
    }

    #[test]
    fn scrolling_and_goto_stay_inside_the_file() {
        assert_eq!(scrolled(1, true, 250), 99);
        assert_eq!(scrolled(99, true, 250), 151);
        assert_eq!(scrolled(151, true, 250), 151);
        assert_eq!(scrolled(151, false, 250), 53);
        assert_eq!(scrolled(53, false, 250), 1);
        assert_eq!(scrolled(1, true, 40), 1);
        assert_eq!(top_for_line(120, 250), 87);
        assert_eq!(top_for_line(5, 250), 1);
        assert_eq!(top_for_line(249, 250), 151);
    }

    #[test]
    fn a_line_range_is_replaced() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(replace_lines(text, 2, 3, "B\nC\n").unwrap(), "a\nB\nC\nd\n");
        // Without a final line break, one is added before the lines that follow.
        assert_eq!(replace_lines(text, 2, 2, "x").unwrap(), "a\nx\nc\nd\n");
        // More or fewer lines than replaced.
        assert_eq!(
            replace_lines(text, 2, 2, "1\n2\n3\n").unwrap(),
            "a\n1\n2\n3\nc\nd\n"
        );
        assert_eq!(replace_lines(text, 2, 3, "").unwrap(), "a\nd\n");
        // Insert before a line, append at the end, an end past the end.
        assert_eq!(
            replace_lines(text, 3, 2, "new\n").unwrap(),
            "a\nb\nnew\nc\nd\n"
        );
        assert_eq!(replace_lines(text, 5, 4, "e").unwrap(), "a\nb\nc\nd\ne\n");
        assert_eq!(replace_lines(text, 4, 99, "D").unwrap(), "a\nb\nc\nD\n");
        // An empty file.
        assert_eq!(replace_lines("", 1, 1, "hello").unwrap(), "hello");
        assert_eq!(replace_lines("x", 2, 1, "y").unwrap(), "x\ny");
    }

    #[test]
    fn a_bad_range_says_how_to_fix_it() {
        let text = "a\nb\n";
        let err = |first, last| {
            replace_lines(text, first, last, "x")
                .unwrap_err()
                .to_string()
        };
        assert!(err(0, 1).contains("numbered from 1"));
        let past = err(7, 8);
        assert!(
            past.contains("past the end") && past.contains("`start_line` 3"),
            "{past}"
        );
        let backwards = err(2, 0);
        assert!(backwards.contains("before `start_line`"), "{backwards}");
    }
}
