//! Ctrl+R: reverse search through the prompt history (the one `oi_config::history` keeps
//! for both interactive front ends), as a shell's `reverse-i-search` does: typing narrows
//! to the newest prompt containing the query, Ctrl+R again goes to an older one, Enter
//! takes the match into the composer to edit or send, Esc puts the draft back.

use crate::theme::Theme;
use crate::wrap::truncate;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

/// An open search.
#[derive(Clone, Debug, Default)]
pub struct HistorySearch {
    pub query: String,
    /// The index (into the history, oldest first) of the prompt shown.
    pub matched: Option<usize>,
    /// What the composer held when the search opened.
    pub draft: String,
}

/// What a key did to the search.
#[derive(Debug, PartialEq, Eq)]
pub enum SearchOutcome {
    Stay,
    /// Put this text in the composer and close the search.
    Accept(String),
    /// Close the search, the draft back in the composer.
    Cancel(String),
}

impl HistorySearch {
    pub fn new(draft: String) -> Self {
        Self {
            draft,
            ..Self::default()
        }
    }

    /// The newest prompt older than `before` containing the query (case-insensitive).
    fn find(&self, history: &[String], before: usize) -> Option<usize> {
        let q = self.query.to_lowercase();
        history[..before.min(history.len())]
            .iter()
            .rposition(|h| h.to_lowercase().contains(&q))
    }

    /// Handles one key.
    pub fn key(&mut self, key: KeyEvent, history: &[String]) -> SearchOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('r') if ctrl => {
                // Older than the match shown; the newest when none is.
                let before = self.matched.unwrap_or(history.len());
                if let Some(i) = self.find(history, before) {
                    self.matched = Some(i);
                }
            }
            KeyCode::Esc => return SearchOutcome::Cancel(std::mem::take(&mut self.draft)),
            KeyCode::Char('c') | KeyCode::Char('g') if ctrl => {
                return SearchOutcome::Cancel(std::mem::take(&mut self.draft));
            }
            KeyCode::Enter | KeyCode::Tab | KeyCode::Right | KeyCode::Left => {
                let text = match self.matched.and_then(|i| history.get(i)) {
                    Some(h) => h.clone(),
                    None => std::mem::take(&mut self.draft),
                };
                return SearchOutcome::Accept(text);
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.matched = self.find(history, history.len());
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.matched = self.find(history, history.len());
            }
            _ => {}
        }
        SearchOutcome::Stay
    }

    /// The row shown in place of the composer.
    pub fn line(&self, history: &[String], width: u16, theme: &Theme) -> Line<'static> {
        let found = self.matched.and_then(|i| history.get(i));
        let label = match (found, self.query.is_empty()) {
            (None, false) => format!("(failed reverse-i-search)`{}': ", self.query),
            _ => format!("(reverse-i-search)`{}': ", self.query),
        };
        let shown = found.map(|h| h.replace('\n', " ⏎ ")).unwrap_or_default();
        let room = usize::from(width).saturating_sub(label.chars().count() + 1);
        Line::from(vec![
            Span::styled(label, theme.accent()),
            Span::styled(truncate(&shown, room), theme.plain()),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl_r() -> KeyEvent {
        KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL)
    }

    #[test]
    fn narrows_to_the_newest_then_goes_older() {
        let history: Vec<String> = ["make tests pass", "fix the parser", "make it faster"]
            .map(String::from)
            .to_vec();
        let mut s = HistorySearch::new("draft".into());
        for c in "make".chars() {
            s.key(key(KeyCode::Char(c)), &history);
        }
        assert_eq!(s.matched, Some(2));
        s.key(ctrl_r(), &history);
        assert_eq!(s.matched, Some(0));
        // Nothing older: stays on the oldest match.
        s.key(ctrl_r(), &history);
        assert_eq!(s.matched, Some(0));
        assert_eq!(
            s.key(key(KeyCode::Enter), &history),
            SearchOutcome::Accept("make tests pass".into())
        );
    }

    #[test]
    fn esc_gives_the_draft_back() {
        let history = vec!["a".to_string()];
        let mut s = HistorySearch::new("my draft".into());
        s.key(key(KeyCode::Char('z')), &history);
        assert_eq!(s.matched, None);
        assert_eq!(
            s.key(key(KeyCode::Esc), &history),
            SearchOutcome::Cancel("my draft".into())
        );
    }
}
