//! Drawing the live area (everything below the scrollback): running cells, the streaming
//! answer, popups, overlays, the composer and the status line. Pure over [`App`].

use crate::app::{App, Popup};
use crate::cells::{HistoryCell, format_duration, patch_lines};
use crate::overlay::{ApprovalSubject, FieldKind, Overlay};
use crate::theme::Theme;
use crate::transcript::{self, TranscriptView};
use crate::wrap::{truncate, wrap_line};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use std::time::Instant;
use unicode_width::UnicodeWidthChar;

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Most rows the composer grows to.
const COMPOSER_MAX_ROWS: usize = 6;
/// Most rows a popup shows.
const POPUP_ROWS: usize = 8;
/// Most rows of an MCP tool's arguments an approval shows.
const APPROVAL_ARG_ROWS: usize = 8;

/// The live area's rows (at most `max_rows`, newest at the bottom) and where the cursor
/// belongs in them (row, column).
pub struct LiveLines {
    /// The rows, top to bottom.
    pub lines: Vec<Line<'static>>,
    /// Where the cursor goes: (row, column).
    pub cursor: Option<(usize, u16)>,
}

/// The live area's height, and what a narrower window would make of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveSize {
    /// Rows the live area wants at the width on a screen of that many rows: its content
    /// (running cells, the open tail of the answer, a popup or overlay, the composer and
    /// the status line), so no blank rows show while idle. The transcript takes the whole
    /// screen.
    pub rows: u16,
    /// Rows more it would take in a window half as wide: a terminal that re-wraps its
    /// contents on a resize (tmux, most modern ones) splits every row longer than the new
    /// width, and whatever then no longer fits below the top of the screen goes into the
    /// scrollback (see `draw_committing`).
    pub extra_when_halved: u16,
}

/// The live area's [`LiveSize`] at `width` on a screen of `screen_rows`.
pub fn live_size(app: &App, width: u16, screen_rows: u16, theme: &Theme, now: Instant) -> LiveSize {
    if app.overlay.as_ref().is_some_and(Overlay::is_full_screen) {
        return LiveSize {
            rows: screen_rows,
            extra_when_halved: 0,
        };
    }
    let lines = live_lines(app, width, usize::from(screen_rows), theme, now).lines;
    let half = usize::from(width.div_ceil(2)).max(1);
    let extra: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(half).saturating_sub(1))
        .sum();
    LiveSize {
        rows: u16::try_from(lines.len())
            .unwrap_or(screen_rows)
            .min(screen_rows),
        extra_when_halved: u16::try_from(extra).unwrap_or(u16::MAX),
    }
}

/// Draws the live area into `area` (bottom-aligned) and returns where the cursor belongs.
pub fn render_live(
    app: &App,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    now: Instant,
) -> Option<Position> {
    if let Some(Overlay::Transcript(view)) = &app.overlay {
        render_transcript(app, view, area, buf, theme);
        return None;
    }
    if let Some(Overlay::Diff(pager)) = &app.overlay {
        let lines = pager.lines(area.width, theme);
        let title = |range: &str| format!("{} ({range})", pager.title());
        render_paged(title, &lines, &pager.view, area, buf, theme);
        return None;
    }
    let LiveLines { lines, cursor } =
        live_lines(app, area.width, usize::from(area.height), theme, now);
    let pad = usize::from(area.height).saturating_sub(lines.len());
    let mut all = vec![Line::default(); pad];
    all.extend(lines);
    Paragraph::new(all).render(area, buf);
    cursor.and_then(|(row, col)| {
        Some(Position::new(
            area.x + col,
            area.y + u16::try_from(pad + row).ok()?,
        ))
    })
}

/// The first row a popup of `len` rows shows so that `selected` is always in its window of
/// [`POPUP_ROWS`] (the window follows the selection past the bottom).
pub fn popup_top(selected: usize, len: usize) -> usize {
    let selected = selected.min(len.saturating_sub(1));
    (selected + 1)
        .saturating_sub(POPUP_ROWS)
        .min(len.saturating_sub(POPUP_ROWS))
}

/// The live area's content at `width`, cut to the newest `max_rows` rows.
pub fn live_lines(
    app: &App,
    width: u16,
    max_rows: usize,
    theme: &Theme,
    now: Instant,
) -> LiveLines {
    // Popup above the composer.
    let mut bottom = popup_lines(app, width, theme);
    let mut cursor: Option<(usize, u16)> = None; // (row index in `bottom`, column)

    // Composer, or the overlay that replaces it (sharing the rows with the status line and
    // the hint below it).
    let below = 1 + usize::from(app.hint.is_some());
    match &app.overlay {
        Some(overlay) => bottom.extend(overlay_lines(
            overlay,
            width,
            max_rows.saturating_sub(below),
            theme,
        )),
        None => {
            // Steering and queued follow-ups of the running turn, above the composer.
            bottom.extend(app.extras.followups.lines(width, theme));
            bottom.push(Line::styled("─".repeat(usize::from(width)), theme.dim()));
            let (rows, (crow, ccol)) = match &app.extras.history_search {
                Some(search) => {
                    let line = search.line(app.composer.history(), width, theme);
                    let col = u16::try_from(line.width())
                        .unwrap_or(width)
                        .min(width.saturating_sub(1));
                    (vec![line], (0, col))
                }
                None => composer_rows(app, width, theme),
            };
            let skip = rows.len().saturating_sub(COMPOSER_MAX_ROWS).min(crow);
            let start = bottom.len();
            bottom.extend(rows.into_iter().skip(skip).take(COMPOSER_MAX_ROWS));
            cursor = Some((start + crow - skip, ccol));
        }
    }
    if let Some(hint) = &app.hint {
        bottom.push(Line::styled(format!("  {hint}"), theme.dim()));
    }
    bottom.push(status_line(app, width, theme, now));

    // Live cells fill what is left, bottom-aligned (newest at the bottom).
    let room = max_rows.saturating_sub(bottom.len());
    let mut live: Vec<Line<'static>> = Vec::new();
    if !app.streaming_reasoning.is_empty() {
        live.extend(
            HistoryCell::Reasoning {
                text: app.streaming_reasoning.clone(),
            }
            .lines(width, theme, true),
        );
    }
    for (_, cell) in &app.running {
        live.extend(cell.lines(width, theme, true));
    }
    if !app.streaming.trim().is_empty() {
        let cell = if app.streaming_continues {
            HistoryCell::AssistantMore {
                markdown: app.streaming.clone(),
            }
        } else {
            HistoryCell::Assistant {
                markdown: app.streaming.clone(),
            }
        };
        live.extend(cell.lines(width, theme, true));
    }
    let live_start = live.len().saturating_sub(room);
    let mut lines: Vec<Line<'static>> = live.split_off(live_start);
    let offset = lines.len();
    lines.extend(bottom);
    let top = lines.len().saturating_sub(max_rows);
    let lines = lines.split_off(top);
    let cursor = cursor.and_then(|(row, col)| Some(((offset + row).checked_sub(top)?, col)));
    LiveLines { lines, cursor }
}

/// The `/` command or `@` file popup's rows, if one is open.
fn popup_lines(app: &App, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut bottom: Vec<Line<'static>> = Vec::new();
    match &app.popup {
        Some(Popup::Commands { selected }) => {
            let typed = app.composer.text().trim_start_matches('/');
            let matches = app.command_entries(typed);
            let top = popup_top(*selected, matches.len());
            for (i, (name, desc)) in matches.iter().enumerate().skip(top).take(POPUP_ROWS) {
                let style = if i == *selected {
                    theme.selected()
                } else {
                    theme.plain()
                };
                let label = format!("  /{name:<10} ");
                let rest = truncate(desc, usize::from(width).saturating_sub(label.len() + 1));
                bottom.push(Line::from(vec![
                    Span::styled(label, style.patch(theme.accent())),
                    Span::styled(rest, style.patch(theme.dim())),
                ]));
            }
        }
        Some(Popup::Files { selected }) => {
            let entries = app.file_popup_entries();
            if entries.is_empty() {
                bottom.push(Line::styled("  (no matching files)", theme.dim()));
            }
            let top = popup_top(*selected, entries.len());
            for (i, path) in entries.iter().enumerate().skip(top).take(POPUP_ROWS) {
                let style = if i == *selected {
                    theme.selected()
                } else {
                    theme.plain()
                };
                bottom.push(Line::styled(
                    format!("  {}", truncate(path, usize::from(width).saturating_sub(3))),
                    style,
                ));
            }
        }
        None => {}
    }
    bottom
}

/// The composer's rows (prompt `› ` then the text, char-wrapped) and the cursor's
/// (row, column).
fn composer_rows(app: &App, width: u16, theme: &Theme) -> (Vec<Line<'static>>, (usize, u16)) {
    let text = app.composer.text();
    let cursor_byte = app.composer.cursor();
    let inner = usize::from(width).saturating_sub(2).max(4);
    let mut rows: Vec<String> = vec![String::new()];
    let mut col = 0usize;
    let mut cur = (0usize, 2u16);
    for (i, ch) in text.char_indices() {
        if i == cursor_byte {
            cur = (rows.len() - 1, (col + 2) as u16);
        }
        if ch == '\n' {
            rows.push(String::new());
            col = 0;
            continue;
        }
        let w = ch.width().unwrap_or(0);
        if col + w > inner {
            rows.push(String::new());
            col = 0;
        }
        if let Some(r) = rows.last_mut() {
            r.push(ch);
        }
        col += w;
    }
    if cursor_byte >= text.len() {
        if col >= inner {
            rows.push(String::new());
            col = 0;
        }
        cur = (rows.len() - 1, (col + 2) as u16);
    }
    let placeholder = text.is_empty();
    let lines = rows
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let lead = if i == 0 { "› " } else { "  " };
            if placeholder {
                Line::from(vec![
                    Span::styled(lead, theme.user()),
                    Span::styled("Ask anything · / for commands · @ for files", theme.dim()),
                ])
            } else {
                Line::from(vec![Span::styled(lead, theme.user()), Span::raw(r)])
            }
        })
        .collect();
    (lines, cur)
}

/// The status line: spinner and elapsed time while a turn runs, then the session facts.
pub fn status_line(app: &App, width: u16, theme: &Theme, now: Instant) -> Line<'static> {
    let s = &app.status;
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    if let Some(started) = s.turn_started {
        let elapsed = now.saturating_duration_since(started);
        let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
        let text = format!(
            "{frame} Working {} · Esc to interrupt",
            format_duration(elapsed.as_secs() * 1000)
        );
        used += text.chars().count() + 3;
        spans.push(Span::styled(text, theme.accent()));
        spans.push(Span::styled(" │ ", theme.dim()));
    }
    // The items `/statusline` chose (see `status_items`).
    let facts = crate::status_items::facts(&app.status_items, s);
    let text = truncate(&facts, usize::from(width).saturating_sub(used));
    spans.push(Span::styled(text, theme.dim()));
    // Written to the right edge (dim blanks, which a terminal writes out), so the line
    // always ends where the window does.
    let line = Line::from(spans);
    let pad = usize::from(width).saturating_sub(line.width());
    let mut spans = line.spans;
    spans.push(Span::styled(
        " ".repeat(pad),
        ratatui::style::Style::new().add_modifier(ratatui::style::Modifier::DIM),
    ));
    Line::from(spans)
}

/// At most `max_rows` of `lines`: the first `head` and last `tail` always, and of the rows
/// between them a window that shows row `focus`.
fn window_around(
    lines: Vec<Line<'static>>,
    max_rows: usize,
    head: usize,
    tail: usize,
    focus: usize,
) -> Vec<Line<'static>> {
    let len = lines.len();
    if len <= max_rows || head + tail >= len {
        return lines;
    }
    let room = max_rows.saturating_sub(head + tail);
    if room == 0 {
        // Not even the title and the keys fit: keep the newest rows, as everywhere else.
        return lines.into_iter().skip(len - max_rows).collect();
    }
    let last_start = len - tail - room;
    let start = focus.saturating_sub(room / 2).clamp(head, last_start);
    let mut out: Vec<Line<'static>> = lines[..head].to_vec();
    out.extend_from_slice(&lines[start..start + room]);
    out.extend_from_slice(&lines[len - tail..]);
    out
}

/// An overlay's title as a full-width rule: `── Title ─────`.
fn overlay_rule(title: &str, width: u16, theme: &Theme) -> Line<'static> {
    let t = format!("── {title} ");
    let n = usize::from(width).saturating_sub(t.chars().count());
    Line::styled(format!("{t}{}", "─".repeat(n)), theme.warning())
}

/// An approval: title, what is asked (command, tool and arguments, or patch), the reason
/// and the keys. On a short screen the middle is cut so the title and the keys still show.
fn approval_lines(
    a: &crate::overlay::Approval,
    width: u16,
    max_rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = usize::from(width);
    let rule = |title: &str| overlay_rule(title, width, theme);
    let mut body = Vec::new();
    let title = match &a.subject {
        ApprovalSubject::Exec { command, cwd } => {
            body.extend(wrap_line(
                &Line::from(vec![
                    Span::styled("  $ ", theme.dim()),
                    Span::styled(command.clone(), theme.bold()),
                ]),
                width,
                "    ",
            ));
            body.push(Line::styled(format!("  in {}", cwd.display()), theme.dim()));
            rule("Run this command?")
        }
        ApprovalSubject::McpTool {
            server,
            tool,
            arguments,
        } => {
            body.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(format!("{server}.{tool}"), theme.bold()),
            ]));
            // Arguments pretty-printed when they are JSON, at most a few rows.
            let pretty = serde_json::from_str::<serde_json::Value>(arguments)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or_else(|| arguments.clone());
            let rows: Vec<&str> = pretty.lines().collect();
            for row in rows.iter().take(APPROVAL_ARG_ROWS) {
                body.extend(wrap_line(
                    &Line::styled(format!("    {row}"), theme.dim()),
                    width,
                    "      ",
                ));
            }
            if rows.len() > APPROVAL_ARG_ROWS {
                body.push(Line::styled(
                    format!("    … {} more lines", rows.len() - APPROVAL_ARG_ROWS),
                    theme.dim(),
                ));
            }
            rule("Call this MCP tool?")
        }
        ApprovalSubject::Patch { changes } => {
            body.extend(patch_lines(changes, theme, 12));
            rule("Apply this patch?")
        }
    };
    let mut tail = Vec::new();
    if let Some(r) = &a.reason {
        tail.extend(wrap_line(
            &Line::styled(format!("  {r}"), theme.italic()),
            width,
            "  ",
        ));
    }
    let keys = |yes_always: &'static str, stop: &'static str, gap: &'static str| {
        Line::from(vec![
            Span::styled("  y", theme.ok()),
            Span::raw(format!(" yes{gap}")),
            Span::styled("a", theme.ok()),
            Span::raw(format!(" {yes_always}{gap}")),
            Span::styled("n", theme.error()),
            Span::raw(format!(" no{gap}")),
            Span::styled("Esc", theme.error()),
            Span::raw(format!(" {stop}")),
        ])
    };
    let full = keys("yes, don't ask again this session", "no, stop", "   ");
    let keys = if full.width() <= w {
        full
    } else {
        keys("yes for the session", "stop", "  ")
    };
    tail.extend(wrap_line(&keys, width, "  "));
    let body: Vec<Line<'static>> = body
        .into_iter()
        .flat_map(|l| wrap_line(&l, width, "  "))
        .collect();
    let room = max_rows.saturating_sub(1 + tail.len());
    let mut out = vec![title];
    if body.len() <= room {
        out.extend(body);
    } else {
        // Keep the start of what is asked, and say how much is not shown.
        let shown = room.saturating_sub(1);
        let hidden = body.len() - shown;
        out.extend(body.into_iter().take(shown));
        if room > 0 {
            out.push(Line::styled(
                format!("    … {hidden} more rows (a taller terminal shows them)"),
                theme.dim(),
            ));
        }
    }
    out.extend(tail);
    out
}

fn overlay_lines(
    overlay: &Overlay,
    width: u16,
    max_rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let w = usize::from(width);
    let rule = |title: &str| overlay_rule(title, width, theme);
    let mut out = Vec::new();
    match overlay {
        Overlay::Approval(a) => out = approval_lines(a, width, max_rows, theme),
        Overlay::PromptArgs(p) => {
            out = overlay_lines(
                &Overlay::Elicitation(p.form.clone()),
                width,
                max_rows,
                theme,
            )
        }
        Overlay::Elicitation(f) => out = elicitation_lines(f, width, max_rows, theme),
        Overlay::Picker(p) => {
            out.push(rule(&p.title));
            if !p.query.is_empty() {
                out.push(Line::styled(
                    format!("  search: {}", p.query),
                    theme.accent(),
                ));
            }
            let visible = p.visible();
            let start = p.selected.saturating_sub(POPUP_ROWS - 1);
            for (i, item) in visible.iter().enumerate().skip(start).take(POPUP_ROWS) {
                let style = if i == p.selected {
                    theme.selected()
                } else {
                    theme.plain()
                };
                let label = format!("  {} ", item.label);
                let detail = truncate(&item.detail, w.saturating_sub(label.chars().count() + 1));
                out.push(Line::from(vec![
                    Span::styled(label, style),
                    Span::styled(detail, style.patch(theme.dim())),
                ]));
            }
            if visible.is_empty() {
                out.push(Line::styled("  (nothing matches)", theme.dim()));
            }
            out.push(Line::styled(
                "  ↑/↓ move · Enter choose · Esc close",
                theme.dim(),
            ));
        }
        Overlay::Transcript(_) | Overlay::Diff(_) => {}
    }
    out
}

/// An MCP server's question as a form: its fields, the focused one's description, and
/// the keys; a long form on a short screen scrolls with the focused field.
fn elicitation_lines(
    f: &crate::overlay::ElicitationForm,
    width: u16,
    max_rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![overlay_rule(&format!("{} asks", f.server), width, theme)];
    out.extend(wrap_line(
        &Line::raw(format!("  {}", f.message)),
        width,
        "  ",
    ));
    let mut focus_row = out.len();
    for (i, field) in f.fields.iter().enumerate() {
        let focused = i == f.focus;
        if focused {
            focus_row = out.len();
        }
        let marker = if focused { "› " } else { "  " };
        let req = if field.required { "*" } else { "" };
        let style = if focused { theme.bold() } else { theme.plain() };
        let mut spans = vec![Span::styled(
            format!("{marker}{}{req}: ", field.title),
            style,
        )];
        match &field.kind {
            FieldKind::Boolean => spans.push(Span::styled(
                format!("[{}]", if field.value == "true" { "x" } else { " " }),
                theme.accent(),
            )),
            FieldKind::Choice(options) => {
                let label = options
                    .iter()
                    .find(|o| o.value == field.value)
                    .map_or(field.value.as_str(), |o| o.label.as_str());
                spans.push(Span::styled(format!("‹ {label} ›"), theme.accent()));
            }
            FieldKind::MultiChoice(options) => {
                for (j, o) in options.iter().enumerate() {
                    let mark = if field.picked.get(j).copied().unwrap_or(false) {
                        "x"
                    } else {
                        " "
                    };
                    let under_cursor = focused && j == field.option;
                    spans.push(Span::styled(
                        format!("[{mark}] {}", o.label),
                        if under_cursor {
                            theme.selected()
                        } else {
                            theme.accent()
                        },
                    ));
                    spans.push(Span::raw("  "));
                }
            }
            _ => spans.push(Span::styled(field.value.clone(), theme.accent())),
        }
        out.extend(wrap_line(&Line::from(spans), width, "      "));
        if focused && let Some(d) = &field.description {
            out.push(Line::styled(format!("    {d}"), theme.dim()));
        }
    }
    let mut tail = 1;
    if let Some(e) = &f.error {
        out.push(Line::styled(format!("  {e}"), theme.error()));
        tail += 1;
    }
    out.push(Line::styled(
        "  Enter submit · Tab next field · Space toggle · Esc decline",
        theme.dim(),
    ));
    // A long form on a short screen scrolls with the focused field.
    window_around(out, max_rows, 1, tail, focus_row)
}

fn render_transcript(
    app: &App,
    view: &TranscriptView,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let lines = transcript::lines(&app.transcript, area.width, theme);
    let cells = app.transcript.len();
    let title = |range: &str| format!("Transcript ({cells} cells, {range})");
    render_paged(title, &lines, view, area, buf, theme);
}

/// A full-screen pager page: the title (given the range of lines shown), the page, the
/// footer.
fn render_paged(
    title: impl Fn(&str) -> String,
    lines: &[Line<'static>],
    view: &TranscriptView,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let body = usize::from(area.height).saturating_sub(transcript::CHROME_ROWS);
    let max_scroll = lines.len().saturating_sub(body);
    let scroll = view.scroll.min(max_scroll);
    let end = lines.len() - scroll;
    let start = end.saturating_sub(body);
    let range = format!("lines {}–{} of {}", start + 1, end, lines.len());
    let title = format!("── {} ", title(&range));
    let fill = usize::from(area.width).saturating_sub(title.chars().count());
    let mut out = vec![Line::styled(
        format!("{title}{}", "─".repeat(fill)),
        theme.accent(),
    )];
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        if view.found == Some(i) {
            out.push(Line::styled(transcript::line_text(line), theme.selected()));
        } else {
            out.push(line.clone());
        }
    }
    while out.len() < usize::from(area.height).saturating_sub(1) {
        out.push(Line::default());
    }
    out.push(Line::styled(view.footer(), theme.dim()));
    Paragraph::new(out).render(area, buf);
}

/// `cells` as lines wrapped to `width`, ready to be printed into the scrollback.
pub fn cells_to_lines(cells: &[HistoryCell], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    cells
        .iter()
        .flat_map(|c| c.lines(width, theme, false))
        .collect()
}
