//! Colours and text styles. With `NO_COLOR` set the UI keeps bold/dim/italic (they carry
//! meaning without colour) and drops every foreground and background colour.
//!
//! `/theme` chooses among [`THEMES`]; `[tui] theme` in config.toml keeps the choice.

use ratatui::style::{Color, Modifier, Style};

/// The themes `/theme` offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThemeName {
    /// Cyan accents, for dark backgrounds (the default).
    #[default]
    Dark,
    /// Darker colours that read on a light background.
    Light,
    /// The bright colours, for low-contrast terminals and projectors.
    HighContrast,
    /// No colour at all, as under `NO_COLOR`.
    Mono,
}

/// `(theme, name in config and /theme, description)`, in picker order.
pub const THEMES: &[(ThemeName, &str, &str)] = &[
    (ThemeName::Dark, "dark", "cyan accents for dark backgrounds"),
    (
        ThemeName::Light,
        "light",
        "darker colours for light backgrounds",
    ),
    (
        ThemeName::HighContrast,
        "high-contrast",
        "the bright colours, for low-contrast screens",
    ),
    (
        ThemeName::Mono,
        "mono",
        "no colour, only bold, dim and reverse",
    ),
];

impl ThemeName {
    /// The theme called `name` in config.toml or `/theme NAME`.
    pub fn parse(name: &str) -> Option<Self> {
        THEMES
            .iter()
            .find(|(_, n, _)| n.eq_ignore_ascii_case(name.trim()))
            .map(|(t, _, _)| *t)
    }

    /// The theme's name as `[tui] theme` takes it.
    pub fn as_str(self) -> &'static str {
        THEMES
            .iter()
            .find(|(t, _, _)| *t == self)
            .map_or("dark", |(_, n, _)| n)
    }
}

/// The palette every renderer draws with.
#[derive(Clone, Copy, Debug)]
pub struct Theme {
    /// `false` under `NO_COLOR` and with the `mono` theme.
    pub color: bool,
    /// Which theme it is.
    pub name: ThemeName,
}

/// The colours of one theme.
struct Palette {
    accent: Color,
    added: Color,
    removed: Color,
    warning: Color,
    code: Color,
    link: Color,
}

impl Theme {
    /// Colours unless the `NO_COLOR` convention (any non-empty value) says otherwise.
    pub fn from_env() -> Self {
        Self::named(ThemeName::Dark)
    }

    /// The theme `name`, unless `NO_COLOR` is set (then no colour, whatever the name).
    pub fn named(name: ThemeName) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !no_color && name != ThemeName::Mono,
            name,
        }
    }

    /// No colour (for text that is searched or measured, and tests).
    pub const fn mono() -> Self {
        Self {
            color: false,
            name: ThemeName::Mono,
        }
    }

    /// The default colours, whatever the environment (tests).
    pub const fn dark() -> Self {
        Self {
            color: true,
            name: ThemeName::Dark,
        }
    }

    fn palette(&self) -> Palette {
        match self.name {
            ThemeName::Dark | ThemeName::Mono => Palette {
                accent: Color::Cyan,
                added: Color::Green,
                removed: Color::Red,
                warning: Color::Yellow,
                code: Color::Yellow,
                link: Color::Blue,
            },
            ThemeName::Light => Palette {
                accent: Color::Blue,
                added: Color::Indexed(28),
                removed: Color::Indexed(124),
                warning: Color::Indexed(130),
                code: Color::Magenta,
                link: Color::Blue,
            },
            ThemeName::HighContrast => Palette {
                accent: Color::LightCyan,
                added: Color::LightGreen,
                removed: Color::LightRed,
                warning: Color::LightYellow,
                code: Color::LightYellow,
                link: Color::LightBlue,
            },
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    /// Text without styling.
    pub fn plain(&self) -> Style {
        Style::default()
    }
    /// Secondary text: dimmed.
    pub fn dim(&self) -> Style {
        Style::default().add_modifier(Modifier::DIM)
    }
    /// Emphasis: bold.
    pub fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    /// Emphasis: italic.
    pub fn italic(&self) -> Style {
        Style::default().add_modifier(Modifier::ITALIC)
    }
    /// Highlights: the accent colour.
    pub fn accent(&self) -> Style {
        self.fg(self.palette().accent)
    }
    /// The user's own messages.
    pub fn user(&self) -> Style {
        self.fg(self.palette().accent).add_modifier(Modifier::BOLD)
    }
    /// Added lines of a diff.
    pub fn added(&self) -> Style {
        self.fg(self.palette().added)
    }
    /// Removed lines of a diff.
    pub fn removed(&self) -> Style {
        self.fg(self.palette().removed)
    }
    /// Success marks.
    pub fn ok(&self) -> Style {
        self.fg(self.palette().added).add_modifier(Modifier::BOLD)
    }
    /// Errors.
    pub fn error(&self) -> Style {
        self.fg(self.palette().removed).add_modifier(Modifier::BOLD)
    }
    /// Warnings.
    pub fn warning(&self) -> Style {
        self.fg(self.palette().warning).add_modifier(Modifier::BOLD)
    }
    /// Inline code and code blocks.
    pub fn code(&self) -> Style {
        self.fg(self.palette().code)
    }
    /// Links.
    pub fn link(&self) -> Style {
        self.fg(self.palette().link)
            .add_modifier(Modifier::UNDERLINED)
    }
    /// The selected row of a popup or picker: reversed, so it shows without colour too.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_mono_has_no_colour() {
        for (t, name, _) in THEMES {
            assert_eq!(ThemeName::parse(name), Some(*t));
            assert_eq!(t.as_str(), *name);
        }
        assert_eq!(ThemeName::parse("nope"), None);
        assert!(!Theme::named(ThemeName::Mono).color);
        assert_eq!(Theme::mono().accent(), Style::default());
        assert_ne!(
            Theme::dark().accent(),
            Theme {
                color: true,
                name: ThemeName::Light
            }
            .accent()
        );
    }
}
