//! Word wrapping of styled lines to a width: history is printed into the scrollback as
//! rows that already fit the screen, and the live area knows how many rows it needs.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Wraps `line` to `width` columns, breaking at spaces where it can and inside words
/// longer than a row. `indent` prefixes every continuation row (hanging indent).
pub(crate) fn wrap_line(line: &Line<'static>, width: u16, indent: &str) -> Vec<Line<'static>> {
    let width = usize::from(width.max(8));
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<Span<'static>> = Vec::new();
    let mut cur_w = 0usize;
    let indent_w = indent.width();
    for span in &line.spans {
        for word in span.content.split_inclusive(' ') {
            let mut word = word.to_string();
            loop {
                let w = word.width();
                if cur_w + w <= width {
                    cur_w += w;
                    cur.push(Span::styled(word, span.style));
                    break;
                }
                // The trailing space may hang past the edge.
                let trimmed = word.trim_end_matches(' ');
                if cur_w + trimmed.width() <= width {
                    cur_w += trimmed.width();
                    cur.push(Span::styled(trimmed.to_string(), span.style));
                    break;
                }
                if cur_w > indent_w && w <= width - indent_w {
                    rows.push(finish_row(std::mem::take(&mut cur), line));
                    cur.push(Span::raw(indent.to_string()));
                    cur_w = indent_w;
                    continue;
                }
                // A word longer than a row: hard-split it at the edge.
                let room = width.saturating_sub(cur_w).max(1);
                let (head, tail) = split_at_width(&word, room);
                cur.push(Span::styled(head, span.style));
                rows.push(finish_row(std::mem::take(&mut cur), line));
                cur.push(Span::raw(indent.to_string()));
                cur_w = indent_w;
                if tail.is_empty() {
                    break;
                }
                word = tail;
            }
        }
    }
    rows.push(finish_row(cur, line));
    rows
}

/// A wrapped row without the spaces it ended on.
fn finish_row(mut spans: Vec<Span<'static>>, line: &Line<'static>) -> Line<'static> {
    let n = spans.len();
    while let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end_matches(' ').to_string();
        if trimmed.is_empty() && n > 1 {
            spans.pop();
            if spans.len() <= 1 {
                break;
            }
            continue;
        }
        if trimmed.len() != last.content.len() {
            last.content = trimmed.into();
        }
        break;
    }
    Line::from(spans).style(line.style)
}

/// Wraps every line (see [`wrap_line`]).
pub(crate) fn wrap_lines(lines: &[Line<'static>], width: u16, indent: &str) -> Vec<Line<'static>> {
    lines
        .iter()
        .flat_map(|l| wrap_line(l, width, indent))
        .collect()
}

/// Splits `s` after at most `cols` display columns (at least one char).
pub(crate) fn split_at_width(s: &str, cols: usize) -> (String, String) {
    let mut w = 0;
    for (i, ch) in s.char_indices() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if w + cw > cols && i > 0 {
            return (s[..i].to_string(), s[i..].to_string());
        }
        w += cw;
    }
    (s.to_string(), String::new())
}

/// `s` cut to `cols` columns with a trailing `…` when it was longer.
pub(crate) fn truncate(s: &str, cols: usize) -> String {
    if s.width() <= cols {
        return s.to_string();
    }
    let (head, _) = split_at_width(s, cols.saturating_sub(1));
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Line<'static>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn wraps_at_spaces_with_hanging_indent() {
        let rows = wrap_line(&Line::from("alpha beta gamma delta"), 12, "  ");
        assert_eq!(text(&rows), vec!["alpha beta", "  gamma", "  delta"]);
    }

    #[test]
    fn splits_words_longer_than_a_row() {
        let rows = wrap_line(&Line::from("abcdefghijklmnop"), 8, "");
        assert_eq!(text(&rows), vec!["abcdefgh", "ijklmnop"]);
    }

    #[test]
    fn truncates_with_ellipsis() {
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hi", 6), "hi");
    }
}
