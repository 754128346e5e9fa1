//! Colours and text styles. With `NO_COLOR` set the UI keeps bold/dim/italic (they carry
//! meaning without colour) and drops every foreground and background colour.

use ratatui::style::{Color, Modifier, Style};

/// The palette every renderer draws with.
#[derive(Clone, Copy, Debug)]
pub struct Theme {
    /// `false` under `NO_COLOR`.
    pub color: bool,
}

impl Theme {
    /// Colours unless the `NO_COLOR` convention (any non-empty value) says otherwise.
    pub fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self { color: !no_color }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn plain(&self) -> Style {
        Style::default()
    }
    pub fn dim(&self) -> Style {
        Style::default().add_modifier(Modifier::DIM)
    }
    pub fn bold(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
    pub fn italic(&self) -> Style {
        Style::default().add_modifier(Modifier::ITALIC)
    }
    pub fn accent(&self) -> Style {
        self.fg(Color::Cyan)
    }
    pub fn user(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn added(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn removed(&self) -> Style {
        self.fg(Color::Red)
    }
    pub fn ok(&self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn warning(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    pub fn code(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn link(&self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }
    /// The selected row of a popup or picker: reversed, so it shows without colour too.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
