//! Diffs that read well: a unified diff as lines with each line's number in the file (the
//! new number for added and context lines, the old one for removed lines, read from the
//! `@@ -a,b +c,d @@` headers), the sign coloured, and the code in its syntax colours on a
//! tint that says added or removed. Used by patch approvals, applied-patch cells and the
//! `/diff` pager; a patch of a new file without hunk headers is numbered from 1.

use crate::highlight::LineHighlighter;
use crate::theme::Theme;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

/// What a line of a unified diff is.
enum Kind {
    /// `diff --git`, `index`, `---`, `+++`, mode lines: about the file, not its content.
    FileHeader,
    Hunk,
    Added,
    Removed,
    Context,
    /// `\ No newline at end of file`.
    Note,
}

fn kind(line: &str, in_hunk: bool) -> Kind {
    if line.starts_with("@@") {
        return Kind::Hunk;
    }
    let header = line.starts_with("diff --git ")
        || line.starts_with("+++ ")
        || line.starts_with("--- ")
        || line.starts_with("index ")
        || line.starts_with("new file mode")
        || line.starts_with("deleted file mode")
        || line.starts_with("similarity index")
        || line.starts_with("rename from")
        || line.starts_with("rename to")
        || line.starts_with("old mode")
        || line.starts_with("new mode")
        || line.starts_with("Binary files");
    // Inside a hunk `--- x` can be a removed line `-- x`; only `diff --git` ends a hunk.
    if header && (!in_hunk || line.starts_with("diff --git ")) {
        return Kind::FileHeader;
    }
    match line.chars().next() {
        Some('+') => Kind::Added,
        Some('-') => Kind::Removed,
        Some('\\') => Kind::Note,
        _ => Kind::Context,
    }
}

/// `(old start, new start)` of a `@@ -a,b +c,d @@` header.
fn hunk_starts(line: &str) -> Option<(usize, usize)> {
    let mut parts = line.split_whitespace().skip(1);
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let start = |r: &str| r.split(',').next()?.parse::<usize>().ok();
    Some((start(old)?, start(new)?))
}

/// The file a `diff --git a/x b/y` or `+++ b/y` header names.
fn header_path(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("diff --git ") {
        return rest.rsplit_once(" b/").map(|(_, p)| p);
    }
    let rest = line.strip_prefix("+++ ")?;
    (rest != "/dev/null").then(|| rest.strip_prefix("b/").unwrap_or(rest))
}

/// The widest line number the diff reaches, for the gutter's width.
fn max_line_number(diff: &str) -> usize {
    let (mut old, mut new, mut max) = (1usize, 1usize, 1usize);
    let mut in_hunk = false;
    for l in diff.lines() {
        match kind(l, in_hunk) {
            Kind::Hunk => {
                in_hunk = true;
                if let Some((o, n)) = hunk_starts(l) {
                    (old, new) = (o, n);
                }
            }
            Kind::FileHeader if l.starts_with("diff --git ") => {
                in_hunk = false;
                (old, new) = (1, 1);
            }
            Kind::Added => {
                max = max.max(new);
                new += 1;
            }
            Kind::Removed => {
                max = max.max(old);
                old += 1;
            }
            Kind::Context => {
                max = max.max(new);
                old += 1;
                new += 1;
            }
            Kind::FileHeader | Kind::Note => {}
        }
    }
    max
}

fn tint(theme: &Theme, added: bool) -> Style {
    if !theme.color {
        return Style::default();
    }
    // Dark tints that keep syntax colours readable on dark and light terminals alike.
    Style::default().bg(if added {
        Color::Rgb(0x12, 0x3a, 0x1f)
    } else {
        Color::Rgb(0x4a, 0x16, 0x1b)
    })
}

/// The lines of `diff` (one file's, or `git diff`'s several), at most `max_rows` of its
/// lines and then a `… N more lines` note. `path` names the file when the diff has no
/// headers (an approval's or a patch cell's change).
pub(crate) fn diff_lines(
    diff: &str,
    path: Option<&str>,
    theme: &Theme,
    max_rows: usize,
) -> Vec<Line<'static>> {
    let digits = max_line_number(diff).max(1).to_string().len();
    let blank_gutter = " ".repeat(digits);
    let mut highlighter = path.and_then(|p| LineHighlighter::for_path(p, theme));
    let (mut old, mut new) = (1usize, 1usize);
    let mut in_hunk = false;
    let mut out: Vec<Line<'static>> = Vec::new();
    let total = diff.lines().count();
    for l in diff.lines().take(max_rows) {
        let k = kind(l, in_hunk);
        let (number, sign_style, body) = match k {
            Kind::FileHeader => {
                if l.starts_with("diff --git ") {
                    in_hunk = false;
                    (old, new) = (1, 1);
                }
                if let Some(p) = header_path(l) {
                    highlighter = LineHighlighter::for_path(p, theme);
                }
                out.push(Line::from(vec![
                    Span::raw("    "),
                    Span::styled(l.to_string(), theme.bold()),
                ]));
                continue;
            }
            Kind::Hunk => {
                in_hunk = true;
                if let Some((o, n)) = hunk_starts(l) {
                    (old, new) = (o, n);
                }
                out.push(Line::from(vec![
                    Span::raw("    "),
                    Span::styled(l.to_string(), theme.accent()),
                ]));
                continue;
            }
            Kind::Note => {
                out.push(Line::from(vec![
                    Span::raw(format!("    {blank_gutter} ")),
                    Span::styled(l.to_string(), theme.dim()),
                ]));
                continue;
            }
            Kind::Added => {
                new += 1;
                (new - 1, theme.added(), &l[1..])
            }
            Kind::Removed => {
                old += 1;
                (old - 1, theme.removed(), &l[1..])
            }
            Kind::Context => {
                old += 1;
                new += 1;
                (new - 1, theme.dim(), l.strip_prefix(' ').unwrap_or(l))
            }
        };
        let (sign, base) = match k {
            Kind::Added => ("+", tint(theme, true)),
            Kind::Removed => ("-", tint(theme, false)),
            _ => (" ", Style::default()),
        };
        let mut spans = vec![
            Span::raw("    "),
            Span::styled(format!("{number:>digits$} "), theme.dim()),
            Span::styled(sign.to_string(), sign_style.patch(base)),
        ];
        let code = highlighter
            .as_mut()
            .and_then(|h| h.line(body, base))
            .unwrap_or_else(|| {
                let style = match k {
                    Kind::Added => theme.added(),
                    Kind::Removed => theme.removed(),
                    _ => theme.plain(),
                };
                vec![Span::styled(body.to_string(), style.patch(base))]
            });
        spans.extend(code);
        out.push(Line::from(spans));
    }
    if total > max_rows {
        out.push(Line::styled(
            format!("    … {} more lines", total - max_rows),
            theme.dim(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn numbers_come_from_the_hunk_headers() {
        let diff = "@@ -9,3 +9,4 @@ fn main() {\n ctx\n-old\n+new\n+more\n ctx2\n\\ No newline at end of file\n";
        let plain = Theme::mono();
        let got = text(&diff_lines(diff, Some("src/main.rs"), &plain, 100));
        assert_eq!(
            got,
            [
                "    @@ -9,3 +9,4 @@ fn main() {",
                "     9  ctx",
                "    10 -old",
                "    10 +new",
                "    11 +more",
                "    12  ctx2",
                "       \\ No newline at end of file",
            ]
        );
    }

    #[test]
    fn git_diffs_restart_numbers_per_file_and_code_is_coloured() {
        let diff = "diff --git a/a.rs b/a.rs\nindex 1..2 100644\n--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-fn a() {}\n+fn b() {}\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n";
        let colour = Theme::dark();
        let lines = diff_lines(diff, None, &colour, 100);
        let got = text(&lines);
        assert!(got.contains(&"    1 +fn b() {}".to_string()), "{got:?}");
        assert!(got.contains(&"    2 +y".to_string()), "{got:?}");
        // `fn` in Rust gets a syntax colour on the added-line tint.
        let added = &lines[6];
        let keyword = added
            .spans
            .iter()
            .find(|s| s.content.contains("fn"))
            .unwrap();
        assert!(
            matches!(keyword.style.fg, Some(Color::Rgb(..))),
            "{added:?}"
        );
        assert!(keyword.style.bg.is_some());
    }

    #[test]
    fn a_new_file_without_headers_counts_from_one_and_is_cut() {
        let diff: String = (1..=50).map(|i| format!("+line {i}\n")).collect();
        let plain = Theme::mono();
        let got = text(&diff_lines(&diff, Some("x.txt"), &plain, 40));
        assert_eq!(got[0], "     1 +line 1");
        assert_eq!(got[39], "    40 +line 40");
        assert_eq!(got[40], "    … 10 more lines");
    }
}
