//! The composer: a multi-line text editor with Emacs keys, history and paste placeholders.
//! It knows nothing about turns; the app decides what Enter means.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Pastes longer than this many characters are shown as a placeholder.
pub const LARGE_PASTE_CHARS: usize = 1000;
/// History entries kept for Up/Down.
const HISTORY_LIMIT: usize = 500;

/// What a key did to the composer.
#[derive(Debug, PartialEq, Eq)]
pub enum ComposerResult {
    /// The key was handled (text or cursor changed).
    Handled,
    /// Enter on a non-empty composer: the text, placeholders expanded.
    Submitted(String),
    /// Not a composer key.
    Ignored,
}

/// Editable text with a cursor (a byte offset on a char boundary).
#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// Index into `history` while browsing with Up/Down.
    browsing: Option<usize>,
    /// `(placeholder, pasted text)` for large pastes still in the text.
    pastes: Vec<(String, String)>,
    /// The text the last Ctrl+K/U/W (or Alt+D, Alt+Backspace) removed, for Ctrl+Y.
    killed: String,
}

impl Composer {
    /// A composer whose Up/Down recall starts with `history` (oldest first), as read by
    /// `oi_config::history::PromptHistory`, which also saves what is sent.
    pub fn with_history(history: Vec<String>) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    /// Removes `range` of the text into the kill buffer; the cursor goes to its start.
    fn kill(&mut self, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.killed = self.text[range.clone()].to_string();
        self.text.replace_range(range.clone(), "");
        self.cursor = range.start;
    }

    /// The prompt history, oldest first (Ctrl+R searches it).
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// The draft's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset in the text.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether the draft is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the draft, the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Puts back a draft taken earlier with [`Composer::text`] and [`Composer::cursor`].
    pub fn restore(&mut self, text: &str, cursor: usize) {
        self.set_text(text);
        if text.is_char_boundary(cursor) {
            self.cursor = cursor;
        }
    }

    /// Empties the draft and forgets its pastes.
    pub fn clear(&mut self) {
        self.set_text("");
        self.pastes.clear();
    }

    /// Inserts `s` at the cursor.
    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// A paste: inserted as is, or as `[Pasted N chars]` when large.
    pub fn paste(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let chars = s.chars().count();
        if chars > LARGE_PASTE_CHARS {
            let mut placeholder = format!("[Pasted {chars} chars]");
            let same = self
                .pastes
                .iter()
                .filter(|(p, _)| p.starts_with(&placeholder[..placeholder.len() - 1]))
                .count();
            if same > 0 {
                placeholder = format!("[Pasted {chars} chars #{}]", same + 1);
            }
            self.insert_str(&placeholder);
            self.pastes.push((placeholder, s));
        } else {
            self.insert_str(&s);
        }
    }

    /// The token under the cursor if it starts with `@` (the file picker's query), with its
    /// byte range.
    pub fn at_token(&self) -> Option<(usize, String)> {
        let before = &self.text[..self.cursor];
        let start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let token = &before[start..];
        token.strip_prefix('@').map(|q| (start, q.to_string()))
    }

    /// Replaces the `@token` under the cursor with `replacement` and a space.
    pub fn replace_at_token(&mut self, replacement: &str) {
        if let Some((start, _)) = self.at_token() {
            self.text
                .replace_range(start..self.cursor, &format!("{replacement} "));
            self.cursor = start + replacement.len() + 1;
        }
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map(|(i, _)| i)
            .unwrap_or(0)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map(|c| self.cursor + c.len_utf8())
            .unwrap_or(self.cursor)
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor]
            .rfind('\n')
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map(|i| self.cursor + i)
            .unwrap_or(self.text.len())
    }

    fn word_left(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    fn word_right(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start().len();
        let rest = &after[skip..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor + skip + word
    }

    fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    fn history_up(&mut self) {
        if self.history.is_empty() {
            return;
        }
        let idx = match self.browsing {
            None => self.history.len() - 1,
            Some(0) => 0,
            Some(i) => i - 1,
        };
        self.browsing = Some(idx);
        self.text = self.history[idx].clone();
        self.cursor = self.text.len();
    }

    fn history_down(&mut self) {
        match self.browsing {
            Some(i) if i + 1 < self.history.len() => {
                self.browsing = Some(i + 1);
                self.text = self.history[i + 1].clone();
            }
            Some(_) => {
                self.browsing = None;
                self.text.clear();
            }
            None => return,
        }
        self.cursor = self.text.len();
    }

    /// Records a submitted entry for Up/Down recall (in memory; saving it is the app's).
    pub fn remember(&mut self, entry: &str) {
        if entry.trim().is_empty() || self.history.last().map(String::as_str) == Some(entry) {
            return;
        }
        self.history.push(entry.to_string());
        if self.history.len() > HISTORY_LIMIT {
            self.history.drain(..self.history.len() - HISTORY_LIMIT);
        }
    }

    /// The text with paste placeholders expanded.
    pub fn expanded(&self) -> String {
        let mut out = self.text.clone();
        for (placeholder, content) in &self.pastes {
            out = out.replacen(placeholder.as_str(), content, 1);
        }
        out
    }

    /// Handles one key press.
    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerResult {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.insert_str("\n"),
            KeyCode::Char('j') if ctrl => self.insert_str("\n"),
            KeyCode::Enter => {
                if self.text.trim().is_empty() {
                    return ComposerResult::Handled;
                }
                let out = self.expanded();
                self.remember(&self.text.clone());
                self.clear();
                return ComposerResult::Submitted(out);
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char('b') if ctrl => self.cursor = self.prev_boundary(),
            KeyCode::Char('f') if ctrl => self.cursor = self.next_boundary(),
            KeyCode::Char('b') if alt => self.cursor = self.word_left(),
            KeyCode::Char('f') if alt => self.cursor = self.word_right(),
            KeyCode::Char('k') if ctrl => {
                let end = self.line_end();
                // At the end of a line, the line break goes (so lines can be joined).
                let end = if end == self.cursor && end < self.text.len() {
                    end + 1
                } else {
                    end
                };
                self.kill(self.cursor..end);
            }
            KeyCode::Char('u') if ctrl => {
                let start = self.line_start();
                // At the start of a line, the line break before it goes.
                let start = if start == self.cursor && start > 0 {
                    start - 1
                } else {
                    start
                };
                self.kill(start..self.cursor);
            }
            KeyCode::Char('w') if ctrl => self.kill(self.word_left()..self.cursor),
            KeyCode::Backspace if alt || ctrl => self.kill(self.word_left()..self.cursor),
            KeyCode::Char('d') if alt => self.kill(self.cursor..self.word_right()),
            KeyCode::Char('y') if ctrl => {
                let text = self.killed.clone();
                self.insert_str(&text);
            }
            KeyCode::Left if ctrl || alt => self.cursor = self.word_left(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_right(),
            KeyCode::Char('h') if ctrl => self.backspace(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => {
                let end = self.next_boundary();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Char('d') if ctrl => {
                if self.text.is_empty() {
                    return ComposerResult::Ignored;
                }
                let end = self.next_boundary();
                self.text.replace_range(self.cursor..end, "");
            }
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up | KeyCode::Char('p') if key.code == KeyCode::Up || ctrl => {
                if self.browsing.is_some() || self.text.is_empty() {
                    self.history_up();
                } else if !self.on_first_line() {
                    let col = self.cursor - self.line_start();
                    let prev_end = self.line_start() - 1;
                    let prev_start = self.text[..prev_end]
                        .rfind('\n')
                        .map(|i| i + 1)
                        .unwrap_or(0);
                    self.cursor =
                        clamp_boundary(&self.text, prev_start + col.min(prev_end - prev_start));
                } else {
                    self.cursor = 0;
                }
            }
            KeyCode::Down | KeyCode::Char('n') if key.code == KeyCode::Down || ctrl => {
                if self.browsing.is_some() {
                    self.history_down();
                } else if !self.on_last_line() {
                    let col = self.cursor - self.line_start();
                    let next_start = self.line_end() + 1;
                    let next_end = self.text[next_start..]
                        .find('\n')
                        .map(|i| next_start + i)
                        .unwrap_or(self.text.len());
                    self.cursor =
                        clamp_boundary(&self.text, next_start + col.min(next_end - next_start));
                } else {
                    self.cursor = self.text.len();
                }
            }
            KeyCode::Tab => return ComposerResult::Ignored,
            KeyCode::Char(c) if !ctrl && !alt => {
                let mut buf = [0u8; 4];
                self.insert_str(c.encode_utf8(&mut buf));
                self.browsing = None;
            }
            _ => return ComposerResult::Ignored,
        }
        ComposerResult::Handled
    }

    fn backspace(&mut self) {
        // A placeholder goes away whole.
        if let Some(idx) = self
            .pastes
            .iter()
            .position(|(p, _)| self.text[..self.cursor].ends_with(p.as_str()))
        {
            let (p, _) = self.pastes.remove(idx);
            let start = self.cursor - p.len();
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
            return;
        }
        let start = self.prev_boundary();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }
}

fn clamp_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn typed(c: &mut Composer, s: &str) {
        for ch in s.chars() {
            c.handle_key(key(KeyCode::Char(ch)));
        }
    }

    #[test]
    fn emacs_keys_edit_the_line() {
        let mut c = Composer::default();
        typed(&mut c, "hello world");
        c.handle_key(ctrl('a'));
        c.handle_key(ctrl('k'));
        assert_eq!(c.text(), "");
        typed(&mut c, "one two");
        c.handle_key(ctrl('w'));
        assert_eq!(c.text(), "one ");
        c.handle_key(ctrl('u'));
        assert_eq!(c.text(), "");
        // Ctrl+Y puts back what was cut last.
        c.handle_key(ctrl('y'));
        assert_eq!(c.text(), "one ");
    }

    #[test]
    fn word_moves_alt_d_and_joining_lines() {
        let alt = |code| KeyEvent::new(code, KeyModifiers::ALT);
        let ctrl_key = |code| KeyEvent::new(code, KeyModifiers::CONTROL);
        let mut c = Composer::default();
        typed(&mut c, "alpha beta gamma");
        c.handle_key(ctrl_key(KeyCode::Left));
        c.handle_key(alt(KeyCode::Left));
        c.handle_key(alt(KeyCode::Char('d')));
        assert_eq!(c.text(), "alpha  gamma");
        c.handle_key(ctrl_key(KeyCode::Right));
        typed(&mut c, "!");
        assert_eq!(c.text(), "alpha  gamma!");
        // Ctrl+U at the start of the second line joins it to the first.
        let mut c = Composer::default();
        typed(&mut c, "first");
        c.handle_key(ctrl('j'));
        typed(&mut c, "second");
        c.handle_key(ctrl('a'));
        c.handle_key(ctrl('u'));
        assert_eq!(c.text(), "firstsecond");
    }

    #[test]
    fn ctrl_j_and_shift_enter_insert_newlines_enter_submits() {
        let mut c = Composer::default();
        typed(&mut c, "a");
        c.handle_key(ctrl('j'));
        typed(&mut c, "b");
        c.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
        typed(&mut c, "c");
        assert_eq!(
            c.handle_key(key(KeyCode::Enter)),
            ComposerResult::Submitted("a\nb\nc".into())
        );
        assert!(c.is_empty());
    }

    #[test]
    fn history_browses_with_up_down() {
        let mut c = Composer::with_history(vec!["from disk".into()]);
        typed(&mut c, "first");
        c.handle_key(key(KeyCode::Enter));
        typed(&mut c, "second\nline");
        c.handle_key(key(KeyCode::Enter));
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), "second\nline");
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), "first");
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), "from disk");
        c.handle_key(key(KeyCode::Down));
        assert_eq!(c.text(), "first");
        c.handle_key(key(KeyCode::Down));
        c.handle_key(key(KeyCode::Down));
        assert_eq!(c.text(), "");
    }

    #[test]
    fn large_paste_becomes_a_placeholder_and_expands_on_submit() {
        let mut c = Composer::default();
        let big = "x".repeat(1500);
        typed(&mut c, "see ");
        c.paste(&big);
        assert_eq!(c.text(), "see [Pasted 1500 chars]");
        match c.handle_key(key(KeyCode::Enter)) {
            ComposerResult::Submitted(s) => assert_eq!(s, format!("see {big}")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn backspace_removes_a_placeholder_whole() {
        let mut c = Composer::default();
        c.paste(&"y".repeat(2000));
        c.handle_key(key(KeyCode::Backspace));
        assert_eq!(c.text(), "");
        assert_eq!(c.expanded(), "");
    }

    #[test]
    fn at_token_is_found_and_replaced() {
        let mut c = Composer::default();
        typed(&mut c, "look at @src/ma");
        assert_eq!(c.at_token(), Some((8, "src/ma".into())));
        c.replace_at_token("src/main.rs");
        assert_eq!(c.text(), "look at src/main.rs ");
    }
}
