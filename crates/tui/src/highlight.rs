//! Syntax highlighting of fenced code blocks with `syntect`'s bundled grammars. The syntax
//! and theme sets load once, on the first code block, so startup never pays for them.

use crate::theme::Theme;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;
use syntect::parsing::SyntaxSet;

struct Sets {
    syntaxes: SyntaxSet,
    theme: syntect::highlighting::Theme,
}

fn sets() -> Option<&'static Sets> {
    static SETS: OnceLock<Option<Sets>> = OnceLock::new();
    SETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let theme = themes.themes.remove("base16-ocean.dark")?;
        Some(Sets { syntaxes, theme })
    })
    .as_ref()
}

/// The lines of `code`, coloured for `lang` (a fence tag such as `rust` or `py`) when the
/// grammar is known and colour is on; plain code style otherwise.
pub fn highlight_code(lang: &str, code: &str, theme: &Theme) -> Vec<Line<'static>> {
    let plain = || {
        code.lines()
            .map(|l| Line::from(Span::styled(l.to_string(), theme.code())))
            .collect()
    };
    if !theme.color || lang.is_empty() {
        return plain();
    }
    let Some(sets) = sets() else {
        return plain();
    };
    let Some(syntax) = sets
        .syntaxes
        .find_syntax_by_token(lang)
        .or_else(|| sets.syntaxes.find_syntax_by_extension(lang))
    else {
        return plain();
    };
    let mut h = HighlightLines::new(syntax, &sets.theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let Ok(ranges) = h.highlight_line(line, &sets.syntaxes) else {
            return plain();
        };
        let spans: Vec<Span<'static>> = ranges
            .into_iter()
            .map(|(style, text)| {
                let c = style.foreground;
                Span::styled(
                    text.trim_end_matches(['\n', '\r']).to_string(),
                    Style::default().fg(Color::Rgb(c.r, c.g, c.b)),
                )
            })
            .filter(|s| !s.content.is_empty())
            .collect();
        out.push(Line::from(spans));
    }
    out
}
