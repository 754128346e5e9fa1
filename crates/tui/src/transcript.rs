//! The transcript overlay (Ctrl+T): the whole thread with command output uncut, paged with
//! ↑/↓, PgUp/PgDn, Space, Home/End, and searched with `/` (then `n` / `N` for the next and
//! previous match), as in a pager.

use crate::cells::HistoryCell;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;

/// Rows the title and the footer take.
pub(crate) const CHROME_ROWS: usize = 2;

/// The overlay's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TranscriptView {
    /// Rows up from the bottom (0: the end of the thread shows).
    pub scroll: usize,
    /// What `/` searched for; empty: no search.
    pub query: String,
    /// The query is being typed (after `/`, until Enter or Esc).
    pub typing: bool,
    /// The line of the current match, highlighted.
    pub found: Option<usize>,
    /// `(current, of)` for the footer, 1-based; `(0, 0)`: no match.
    pub position: (usize, usize),
}

/// What a key did.
pub enum Outcome {
    Stay,
    Close,
}

/// The transcript's lines at `width`: every cell whole.
pub(crate) fn lines(cells: &[HistoryCell], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    cells
        .iter()
        .flat_map(|c| c.transcript_lines(width, theme))
        .collect()
}

/// A line's text, without styles.
pub(crate) fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

impl TranscriptView {
    /// Handles a key. `texts` gives the transcript's lines as text (computed only for the
    /// keys that search); `body` is how many lines show at once.
    pub fn key(
        &mut self,
        key: KeyEvent,
        texts: impl FnOnce() -> Vec<String>,
        body: usize,
    ) -> Outcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if self.typing {
            match key.code {
                KeyCode::Enter => {
                    self.typing = false;
                    self.jump(&texts(), body, true, true);
                }
                KeyCode::Esc => {
                    self.typing = false;
                    self.query.clear();
                    self.found = None;
                    self.position = (0, 0);
                }
                KeyCode::Backspace => {
                    self.query.pop();
                }
                KeyCode::Char(c) if !ctrl => self.query.push(c),
                _ => {}
            }
            return Outcome::Stay;
        }
        let page = body.max(1);
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.scroll += 1,
            KeyCode::Down | KeyCode::Char('j') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageUp | KeyCode::Char('b') => self.scroll += page,
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.scroll = self.scroll.saturating_sub(page)
            }
            KeyCode::Home | KeyCode::Char('g') => self.scroll = usize::MAX / 2,
            KeyCode::End | KeyCode::Char('G') => self.scroll = 0,
            KeyCode::Char('/') if !ctrl => {
                self.typing = true;
                self.query.clear();
            }
            KeyCode::Char('n') if !ctrl && !self.query.is_empty() => {
                self.jump(&texts(), body, true, false)
            }
            KeyCode::Char('N') if !self.query.is_empty() => self.jump(&texts(), body, false, false),
            _ => return Outcome::Close,
        }
        Outcome::Stay
    }

    /// Moves to the next (or previous) line containing the query (case-insensitive), from
    /// the current match, or from the top of the page on a new search; wraps around.
    fn jump(&mut self, texts: &[String], body: usize, forward: bool, fresh: bool) {
        let needle = self.query.to_lowercase();
        let hits: Vec<usize> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !needle.is_empty() && t.to_lowercase().contains(&needle))
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            self.found = None;
            self.position = (0, 0);
            return;
        }
        let total = texts.len();
        let top = total.saturating_sub(body).saturating_sub(self.scroll);
        let pick = match (self.found, fresh, forward) {
            (_, true, _) | (None, _, true) => hits.iter().position(|h| *h >= top).unwrap_or(0),
            (None, _, false) => hits.len() - 1,
            (Some(cur), false, true) => hits.iter().position(|h| *h > cur).unwrap_or(0),
            (Some(cur), false, false) => hits
                .iter()
                .rposition(|h| *h < cur)
                .unwrap_or(hits.len() - 1),
        };
        let line = hits[pick];
        self.found = Some(line);
        self.position = (pick + 1, hits.len());
        // The match shows at the top of the page (or as far up as the end allows).
        self.scroll = total.saturating_sub(line + body);
    }

    /// The footer: the query being typed, the match position, or the keys.
    pub fn footer(&self) -> String {
        if self.typing {
            return format!("  /{}", self.query);
        }
        if !self.query.is_empty() {
            return match self.position {
                (0, _) => format!("  `{}` not found · / search again · Esc close", self.query),
                (i, n) => format!(
                    "  `{}` {i}/{n} · n next · N previous · / search · Esc close",
                    self.query
                ),
            };
        }
        "  ↑/↓ PgUp/PgDn scroll · / search · Esc close".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn typed(view: &mut TranscriptView, texts: &[String], s: &str) {
        for c in s.chars() {
            view.key(key(KeyCode::Char(c)), || texts.to_vec(), 10);
        }
    }

    #[test]
    fn slash_searches_and_n_moves_between_matches() {
        let texts: Vec<String> = (1..=50_000).map(|i| i.to_string()).collect();
        let mut v = TranscriptView::default();
        typed(&mut v, &texts, "/1234");
        assert!(v.typing);
        assert_eq!(v.footer(), "  /1234");
        v.key(key(KeyCode::Enter), || texts.clone(), 10);
        // From the end of the thread a new search wraps to the first match.
        assert_eq!(v.found.map(|l| texts[l].as_str()), Some("1234"));
        // The match is on the page the renderer shows: the `body` lines ending `scroll`
        // lines above the bottom.
        let end = texts.len() - v.scroll;
        assert!((end - 10..end).contains(&v.found.unwrap()));
        typed(&mut v, &texts, "n");
        assert_eq!(v.found.map(|l| texts[l].as_str()), Some("11234"));
        typed(&mut v, &texts, "n");
        assert_eq!(v.found.map(|l| texts[l].as_str()), Some("12340"));
        typed(&mut v, &texts, "N");
        assert_eq!(v.found.map(|l| texts[l].as_str()), Some("11234"));
        assert!(v.footer().contains("2/"), "{}", v.footer());
        typed(&mut v, &texts, "/nothing");
        v.key(key(KeyCode::Enter), || texts.clone(), 10);
        assert_eq!(v.found, None);
        assert!(v.footer().contains("not found"));
        assert!(matches!(
            v.key(key(KeyCode::Esc), || texts.clone(), 10),
            Outcome::Close
        ));
    }
}
