//! `/diff` in a pager: the working tree's diff full screen on the alternate screen, like the
//! transcript (Ctrl+T), with the same keys (↑/↓, PgUp/PgDn, Space, Home/End, `/` search,
//! `n`/`N`, Esc), line numbers and syntax colours. The scrollback gets a one-line summary
//! instead of the whole diff, so a large change does not push the conversation away.

use crate::cells::diff_counts;
use crate::theme::Theme;
use crate::transcript::TranscriptView;
use crate::wrap::wrap_lines;
use ratatui::text::Line;

/// Most diff lines the pager shows (then `… N more lines`).
pub(crate) const PAGER_MAX_ROWS: usize = 20_000;

/// The open `/diff` pager.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffPager {
    pub diff: String,
    pub view: TranscriptView,
}

impl DiffPager {
    /// The title line's text.
    pub fn title(&self) -> String {
        let files = self
            .diff
            .lines()
            .filter(|l| l.starts_with("diff --git"))
            .count();
        let (add, del) = diff_counts(&self.diff);
        format!("git diff: {files} file(s) +{add} -{del}")
    }

    /// The diff's lines wrapped to `width`.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let lines = crate::diff_view::diff_lines(&self.diff, None, theme, PAGER_MAX_ROWS);
        wrap_lines(&lines, width, "      ")
    }
}
