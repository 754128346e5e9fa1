//! Markdown (as models write it) to styled lines: headings, emphasis, inline code, lists,
//! block quotes, links (`text (url)`), rules and fenced code blocks with syntax highlighting.

use crate::highlight::highlight_code;
use crate::table::Table;
use crate::theme::Theme;
use crate::wrap::wrap_line;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Renders `src` to lines wrapped to `width`.
pub(crate) fn render_markdown(src: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut r = Renderer {
        theme: *theme,
        width,
        out: Vec::new(),
        cur: Vec::new(),
        styles: vec![Style::default()],
        lists: Vec::new(),
        quote: 0,
        code: None,
        link: None,
        item_prefix: None,
        table: None,
    };
    let parser = Parser::new_ext(
        src,
        Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS,
    );
    for ev in parser {
        r.event(ev);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.spans.is_empty()) {
        r.out.pop();
    }
    r.out
}

/// How much of a streaming answer is finished Markdown: the bytes up to the last blank line
/// (or closing code fence) outside an open code fence, when that prefix has any text. What
/// follows may still change how it renders (a paragraph or code block still growing), so it
/// stays in the live area; the prefix can go to the scrollback while the answer streams.
pub(crate) fn committable_prefix(text: &str) -> usize {
    let mut fence: Option<(char, usize)> = None;
    let mut cut = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        pos += line.len();
        if !line.ends_with('\n') {
            break;
        }
        let body = line.trim_end();
        let trimmed = body.trim_start_matches(' ');
        let indent = body.len() - trimmed.len();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|c| *c == m).count());
        match (fence, marker) {
            (None, Some(m)) if indent < 4 && run >= 3 => fence = Some((m, run)),
            (Some((open, len)), Some(m))
                if m == open && run >= len && trimmed[run..].trim().is_empty() =>
            {
                fence = None;
                cut = pos;
            }
            (None, _) if body.trim().is_empty() => cut = pos,
            _ => {}
        }
    }
    if text[..cut].trim().is_empty() {
        0
    } else {
        cut
    }
}

/// A place where the open block of a streaming answer can be cut at a line so that the two
/// parts, rendered one after the other, read as the whole block does: between the lines of
/// a fenced code block (the first part closed with `close`, the rest reopened with
/// `reopen`), or before an item of a top-level list. Used when the open block is taller
/// than the screen: what is above the cut goes to the scrollback, once.
#[derive(Debug, PartialEq)]
pub(crate) struct SoftCut {
    /// Bytes of the text before the cut.
    pub at: usize,
    /// Appended to the first part (a closing fence).
    pub close: String,
    /// Put before the rest (the opening fence again).
    pub reopen: String,
}

/// The latest [`SoftCut`] in `text` (an open block, as [`committable_prefix`] leaves it,
/// which may begin with the blank line that ended the block before it).
pub(crate) fn soft_cut(text: &str) -> Option<SoftCut> {
    let blank = text.len() - text.trim_start_matches(|c: char| c.is_whitespace()).len();
    // Back to the start of the first line with text.
    let lead = text[..blank].rfind('\n').map_or(0, |i| i + 1);
    let mut cut = soft_cut_at_start(&text[lead..])?;
    cut.at += lead;
    Some(cut)
}

/// [`soft_cut`] for a block that begins on the first line of `text`.
fn soft_cut_at_start(text: &str) -> Option<SoftCut> {
    let first_end = text.find('\n')? + 1;
    let first = &text[..first_end];
    let trimmed = first.trim_start_matches(' ');
    let indent = first.len() - trimmed.len();
    let fence = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
    if let (Some(m), true) = (fence, indent < 4) {
        let run = trimmed.chars().take_while(|c| *c == m).count();
        if run < 3 {
            return None;
        }
        // After the last finished line of code, if there is one.
        let at = text.rfind('\n')? + 1;
        return (at > first_end).then(|| SoftCut {
            at,
            close: format!("{}\n", m.to_string().repeat(run)),
            reopen: first.to_string(),
        });
    }
    let kind = list_marker(first)?;
    // Before the last line that starts another item of the same list.
    let mut at = None;
    let mut pos = first_end;
    for line in text[first_end..].split_inclusive('\n') {
        if list_marker(line) == Some(kind) {
            at = Some(pos);
        }
        pos += line.len();
    }
    at.map(|at| SoftCut {
        at,
        close: String::new(),
        reopen: String::new(),
    })
}

/// The kind of list item `line` begins at the left margin (`-`, `*`, `+`, or `.`/`)` for
/// ordered items), if it begins one.
fn list_marker(line: &str) -> Option<char> {
    let mut chars = line.chars();
    let c = chars.next()?;
    if matches!(c, '-' | '*' | '+') {
        return (chars.next() == Some(' ')).then_some(c);
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let mut rest = line[digits..].chars();
    let mark = rest.next().filter(|m| *m == '.' || *m == ')')?;
    (rest.next() == Some(' ')).then_some(mark)
}

struct Renderer {
    theme: Theme,
    width: u16,
    out: Vec<Line<'static>>,
    cur: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// Open lists: `Some(next number)` for ordered ones.
    lists: Vec<Option<u64>>,
    quote: usize,
    code: Option<(String, String)>,
    link: Option<String>,
    item_prefix: Option<String>,
    /// The table being read; its cells collect in `cur`.
    table: Option<Table>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, add: Style) {
        let s = self.style().patch(add);
        self.styles.push(s);
    }

    fn prefix(&self) -> String {
        let mut p = "│ ".repeat(self.quote);
        p.push_str(&"  ".repeat(self.lists.len().saturating_sub(1)));
        p
    }

    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let mut spans = vec![Span::styled(self.prefix(), self.theme.dim())];
        let indent = match self.item_prefix.take() {
            Some(p) => {
                let w = p.chars().count();
                spans.push(Span::styled(p, self.theme.accent()));
                format!("{}{}", self.prefix(), " ".repeat(w))
            }
            None if !self.lists.is_empty() => format!("{}  ", self.prefix()),
            None => self.prefix(),
        };
        if !self.lists.is_empty() && spans.len() == 1 {
            spans.push(Span::raw("  "));
        }
        spans.append(&mut self.cur);
        let line = Line::from(spans);
        self.out.extend(wrap_line(&line, self.width, &indent));
    }

    fn blank(&mut self) {
        self.flush();
        if self.out.last().is_some_and(|l| !l.spans.is_empty()) {
            self.out.push(Line::default());
        }
    }

    fn event(&mut self, ev: Event<'_>) {
        if let Some((_, code)) = &mut self.code {
            match ev {
                Event::Text(t) => code.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, code) = self.code.take().unwrap_or_default();
                    let prefix = format!("{}  ", self.prefix());
                    for l in highlight_code(&lang, &code, &self.theme) {
                        let mut spans = vec![Span::raw(prefix.clone())];
                        spans.extend(l.spans);
                        self.out
                            .extend(wrap_line(&Line::from(spans), self.width, &prefix));
                    }
                    self.blank();
                }
                _ => {}
            }
            return;
        }
        match ev {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.cur.push(Span::styled(t.into_string(), self.style())),
            Event::Code(t) => self.cur.push(Span::styled(
                t.into_string(),
                self.style().patch(self.theme.code()),
            )),
            Event::SoftBreak => self.cur.push(Span::styled(" ", self.style())),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                let w = usize::from(self.width.clamp(8, 80));
                self.out.push(Line::styled("─".repeat(w), self.theme.dim()));
            }
            // A task item shows its box in place of the bullet (`☐ todo`, `☑ done`).
            Event::TaskListMarker(done) => {
                let mark = if done { "☑ " } else { "☐ " };
                match &mut self.item_prefix {
                    Some(p) if p == "• " => *p = mark.to_string(),
                    _ => self.cur.push(Span::raw(mark)),
                }
            }
            Event::Html(t) | Event::InlineHtml(t) => self
                .cur
                .push(Span::styled(t.into_string(), self.theme.dim())),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.blank();
                // As many marks as the level, so `####` reads as a level below `###`;
                // levels 4-6 are bold without the accent colour of the top three.
                let marks = format!("{} ", "#".repeat(level as usize));
                self.cur.push(Span::styled(marks, self.theme.dim()));
                let style = if level <= HeadingLevel::H3 {
                    self.theme.bold().patch(self.theme.accent())
                } else {
                    self.theme.bold()
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
                self.push_style(self.theme.italic());
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split([',', ' ']).next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.item_prefix = Some(marker);
            }
            Tag::Emphasis => self.push_style(self.theme.italic()),
            Tag::Strong => self.push_style(self.theme.bold()),
            Tag::Strikethrough => {
                self.push_style(Style::default().add_modifier(Modifier::CROSSED_OUT))
            }
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.into_string());
                self.push_style(self.theme.link());
            }
            Tag::Table(aligns) => {
                self.flush();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableCell => self.cur.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                if self.lists.is_empty() {
                    self.blank();
                } else {
                    self.flush();
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.blank();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.styles.pop();
                self.quote = self.quote.saturating_sub(1);
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.cur.iter().map(|s| s.content.as_ref()).collect();
                    if !shown.ends_with(url.as_str()) {
                        self.cur
                            .push(Span::styled(format!(" ({url})"), self.theme.dim()));
                    }
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.cur);
                if let Some(t) = &mut self.table {
                    t.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.header = std::mem::take(&mut t.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    let row = std::mem::take(&mut t.row);
                    t.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    let prefix = self.prefix();
                    self.out.extend(t.render(self.width, &prefix, &self.theme));
                }
                self.blank();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn soft_cuts_fall_between_code_lines_and_before_list_items() {
        let code = "```python\nprint(1)\nprint(2)\nprint(";
        assert_eq!(
            soft_cut(code),
            Some(SoftCut {
                at: code.len() - "print(".len(),
                close: "```\n".into(),
                reopen: "```python\n".into(),
            })
        );
        assert_eq!(soft_cut("```\nonly the first"), None);
        let list = "- one\n  more of one\n- two\n- thr";
        assert_eq!(
            soft_cut(list).map(|c| c.at),
            Some(list.len() - "- thr".len())
        );
        let ordered = "1. one\n2. two\n";
        assert_eq!(soft_cut(ordered).map(|c| c.at), Some("1. one\n".len()));
        // The blank line that ended the block before stays with the open one.
        let after_blank = "\n- one\n- two\n- th";
        assert_eq!(
            soft_cut(after_blank).map(|c| c.at),
            Some(after_blank.len() - "- th".len())
        );
        let fenced = "\n\n```\nx = 1\nx";
        assert_eq!(
            soft_cut(fenced).map(|c| (c.at, c.reopen)),
            Some((fenced.len() - 1, "```\n".to_string()))
        );
        assert_eq!(soft_cut("a paragraph\nof two lines\n"), None);
        assert_eq!(soft_cut("| a | b |\n|---|---|\n| 1 | 2 |\n"), None);
    }

    #[test]
    fn committable_prefix_stops_at_the_last_finished_block() {
        assert_eq!(committable_prefix("one para"), 0);
        assert_eq!(committable_prefix("one para\n"), 0);
        let text = "first para\n\nsecond is still";
        assert_eq!(&text[..committable_prefix(text)], "first para\n\n");
        // A blank line inside an open fence is not a block boundary.
        let text = "intro\n\n```rust\nfn a() {}\n\nfn b";
        assert_eq!(&text[..committable_prefix(text)], "intro\n\n");
        // A closed fence is finished.
        let text = "```\ncode\n\nmore\n```\nafter";
        assert_eq!(
            &text[..committable_prefix(text)],
            "```\ncode\n\nmore\n```\n"
        );
        // A shorter or different marker does not close the fence.
        let text = "````\na\n```\n\nb";
        assert_eq!(committable_prefix(text), 0);
        assert_eq!(committable_prefix("\n\n\nx"), 0);
    }

    use super::*;

    fn plain(lines: &[Line<'static>]) -> String {
        lines
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn renders_structure_as_text() {
        let md = "# Title\n\nSome *emphasis* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n```rust\nfn main() {}\n```\n\nSee [docs](https://example.com).";
        let out = plain(&render_markdown(md, 60, &Theme::mono()));
        assert_eq!(
            out,
            "# Title\n\nSome emphasis and code.\n\n• one\n• two\n\n1. first\n2. second\n\n  fn main() {}\n\nSee docs (https://example.com)."
        );
    }

    #[test]
    fn each_heading_level_has_its_own_marks_and_the_top_three_the_accent() {
        let md = "# a\n\n## b\n\n### c\n\n#### d\n\n##### e\n\n###### f";
        let theme = Theme::dark();
        let lines = render_markdown(md, 60, &theme);
        assert_eq!(
            plain(&lines),
            "# a\n\n## b\n\n### c\n\n#### d\n\n##### e\n\n###### f"
        );
        let accent = theme.bold().patch(theme.accent());
        let headings: Vec<&Line> = lines.iter().filter(|l| !l.spans.is_empty()).collect();
        for (level, line) in headings.iter().enumerate() {
            let title = line.spans.last().unwrap();
            if level < 3 {
                assert_eq!(title.style, accent, "level {}", level + 1);
            } else {
                assert_eq!(title.style, theme.bold(), "level {}", level + 1);
            }
        }
    }

    #[test]
    fn task_list_items_show_a_box_instead_of_the_bullet() {
        let md = "- [ ] todo\n- [x] done\n- plain\n\n1. [x] numbered";
        let out = plain(&render_markdown(md, 60, &Theme::mono()));
        assert_eq!(out, "☐ todo\n☑ done\n• plain\n\n1. ☑ numbered");
        // A long task wraps under its text, past the box.
        let out = plain(&render_markdown(
            "- [ ] one two three four",
            12,
            &Theme::mono(),
        ));
        assert_eq!(out, "☐ one two\n  three four");
    }

    #[test]
    fn tables_are_drawn_in_aligned_columns() {
        let md = "Files:\n\n| name | size |\n|---|---:|\n| a.txt | 10 |\n| b.txt | 2000 |\n\nDone.";
        let out = plain(&render_markdown(md, 60, &Theme::mono()));
        assert_eq!(
            out,
            "Files:\n\nname  │ size\n──────┼─────\na.txt │   10\nb.txt │ 2000\n\nDone."
        );
    }

    #[test]
    fn code_blocks_are_highlighted_when_colour_is_on() {
        let lines = render_markdown("```rust\nlet x = 1;\n```", 60, &Theme::dark());
        let styled = lines[0]
            .spans
            .iter()
            .filter(|s| s.style.fg.is_some())
            .count();
        assert!(styled >= 2, "{lines:?}");
    }
}
