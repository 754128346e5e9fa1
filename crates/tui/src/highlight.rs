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
    dark: syntect::highlighting::Theme,
    /// For the `light` theme: colours that read on a light background.
    light: syntect::highlighting::Theme,
}

impl Sets {
    fn for_theme(&self, theme: &Theme) -> &syntect::highlighting::Theme {
        match theme.name {
            crate::theme::ThemeName::Light => &self.light,
            _ => &self.dark,
        }
    }
}

fn sets() -> Option<&'static Sets> {
    static SETS: OnceLock<Option<Sets>> = OnceLock::new();
    SETS.get_or_init(|| {
        let syntaxes = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults();
        let dark = themes.themes.remove("base16-ocean.dark")?;
        let light = themes.themes.remove("InspiredGitHub")?;
        Some(Sets {
            syntaxes,
            dark,
            light,
        })
    })
    .as_ref()
}

/// The lines of `code`, coloured for `lang` (a fence tag such as `rust` or `py`) when the
/// grammar is known and colour is on; plain code style otherwise.
pub(crate) fn highlight_code(lang: &str, code: &str, theme: &Theme) -> Vec<Line<'static>> {
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
    let mut h = HighlightLines::new(syntax, sets.for_theme(theme));
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

/// Highlights one file's lines one at a time (a diff's lines are highlighted in the order
/// they show, so a construct spanning lines keeps its colour).
pub(crate) struct LineHighlighter {
    lines: HighlightLines<'static>,
    syntaxes: &'static SyntaxSet,
}

impl LineHighlighter {
    /// A highlighter for the file at `path` (by its extension or name), when its grammar is
    /// known and colour is on.
    pub(crate) fn for_path(path: &str, theme: &Theme) -> Option<Self> {
        if !theme.color {
            return None;
        }
        let sets = sets()?;
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or(name);
        let syntax = sets
            .syntaxes
            .find_syntax_by_extension(ext)
            .or_else(|| sets.syntaxes.find_syntax_by_extension(name))?;
        Some(Self {
            lines: HighlightLines::new(syntax, sets.for_theme(theme)),
            syntaxes: &sets.syntaxes,
        })
    }

    /// One line's spans, each with its syntax colour over `base` (`None` if the grammar
    /// fails on it).
    pub(crate) fn line(&mut self, text: &str, base: Style) -> Option<Vec<Span<'static>>> {
        let with_end = format!("{text}\n");
        let ranges = self.lines.highlight_line(&with_end, self.syntaxes).ok()?;
        Some(
            ranges
                .into_iter()
                .map(|(style, part)| {
                    let c = style.foreground;
                    Span::styled(
                        part.trim_end_matches(['\n', '\r']).to_string(),
                        base.fg(Color::Rgb(c.r, c.g, c.b)),
                    )
                })
                .filter(|s| !s.content.is_empty())
                .collect(),
        )
    }
}
