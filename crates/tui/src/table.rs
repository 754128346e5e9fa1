//! Markdown tables as aligned columns, or as one block per row when the columns cannot fit.
//!
//! Open models answer with tables often (file lists, comparisons). A table drawn cell after
//! cell with separators is unreadable once a column is wider than another row's, so columns
//! are padded to their widest cell; when that is wider than the screen, each row becomes a
//! small block of `header: value` lines, which wraps cleanly at any width.

use crate::theme::Theme;
use crate::wrap::wrap_line;
use pulldown_cmark::Alignment;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// One cell: its styled spans.
pub(crate) type Cell = Vec<Span<'static>>;

/// A table being collected from the Markdown events.
#[derive(Default)]
pub(crate) struct Table {
    pub aligns: Vec<Alignment>,
    pub header: Vec<Cell>,
    pub rows: Vec<Vec<Cell>>,
    pub row: Vec<Cell>,
}

fn cell_width(cell: &Cell) -> usize {
    cell.iter().map(|s| s.content.width()).sum()
}

fn cell_text(cell: &Cell) -> String {
    cell.iter().map(|s| s.content.as_ref()).collect()
}

impl Table {
    /// The table's lines for `width` columns, each starting with `prefix`.
    pub(crate) fn render(self, width: u16, prefix: &str, theme: &Theme) -> Vec<Line<'static>> {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        let mut widths = vec![0usize; columns];
        for row in self.rows.iter().chain([&self.header]) {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_width(cell));
            }
        }
        let separators = 3 * (columns - 1);
        let available = usize::from(width).saturating_sub(prefix.width());
        if widths.iter().sum::<usize>() + separators <= available {
            self.aligned(&widths, prefix, theme)
        } else {
            self.blocks(width, prefix, theme)
        }
    }

    fn aligned(self, widths: &[usize], prefix: &str, theme: &Theme) -> Vec<Line<'static>> {
        let Table {
            aligns,
            header,
            rows,
            ..
        } = self;
        let row_line = |row: Vec<Cell>, bold: bool| {
            let mut spans = vec![Span::styled(prefix.to_string(), theme.dim())];
            let mut cells = row.into_iter();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme.dim()));
                }
                let cell = cells.next().unwrap_or_default();
                let pad = width.saturating_sub(cell_width(&cell));
                let (before, after) = match aligns.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                spans.push(Span::raw(" ".repeat(before)));
                for s in cell {
                    spans.push(if bold { s.patch_style(theme.bold()) } else { s });
                }
                // No trailing blanks after the last column.
                if i + 1 < widths.len() {
                    spans.push(Span::raw(" ".repeat(after)));
                }
            }
            Line::from(spans)
        };
        let mut out = Vec::new();
        if !header.is_empty() {
            out.push(row_line(header, true));
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::from(vec![
                Span::styled(prefix.to_string(), theme.dim()),
                Span::styled(rule.join("─┼─"), theme.dim()),
            ]));
        }
        for row in rows {
            out.push(row_line(row, false));
        }
        out
    }

    fn blocks(mut self, width: u16, prefix: &str, theme: &Theme) -> Vec<Line<'static>> {
        if self.rows.is_empty() {
            // A header alone is shown as its one row.
            self.rows.push(std::mem::take(&mut self.header));
        }
        let mut out = Vec::new();
        for (n, row) in self.rows.into_iter().enumerate() {
            if n > 0 {
                out.push(Line::default());
            }
            for (i, cell) in row.into_iter().enumerate() {
                let marker = if i == 0 { "• " } else { "  " };
                let mut spans = vec![
                    Span::styled(prefix.to_string(), theme.dim()),
                    Span::styled(marker, theme.accent()),
                ];
                if let Some(h) = self.header.get(i).map(cell_text).filter(|h| !h.is_empty()) {
                    spans.push(Span::styled(format!("{h}: "), theme.bold()));
                }
                spans.extend(cell);
                out.extend(wrap_line(
                    &Line::from(spans),
                    width,
                    &format!("{prefix}    "),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(s: &str) -> Cell {
        vec![Span::raw(s.to_string())]
    }

    fn table() -> Table {
        Table {
            aligns: vec![Alignment::None, Alignment::Right],
            header: vec![cell("name"), cell("size")],
            rows: vec![
                vec![cell("a.txt"), cell("10")],
                vec![cell("b.txt"), cell("2000")],
            ],
            row: Vec::new(),
        }
    }

    fn plain(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn columns_are_padded_and_aligned() {
        let out = plain(&table().render(60, "", &Theme::mono()));
        assert_eq!(
            out,
            [
                "name  │ size",
                "──────┼─────",
                "a.txt │   10",
                "b.txt │ 2000"
            ]
        );
    }

    #[test]
    fn too_wide_tables_become_one_block_per_row() {
        let mut t = table();
        t.rows[0][0] = cell(&"q".repeat(40));
        let out = plain(&t.render(30, "", &Theme::mono()));
        assert!(out[0].starts_with("• name: "), "{out:?}");
        assert_eq!(out.concat().matches('q').count(), 40, "{out:?}");
        assert!(out.iter().all(|l| l.width() <= 30), "{out:?}");
        assert!(out.contains(&"  size: 10".to_string()), "{out:?}");
        assert!(out.contains(&"• name: b.txt".to_string()), "{out:?}");
    }
}
