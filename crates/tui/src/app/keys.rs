//! Keys, pastes, overlays and popups.

use super::*;
use crate::overlay::PromptArgs;

/// Shown from Ctrl+C during a turn until the turn ends.
pub(super) const INTERRUPTING_HINT: &str =
    "interrupting… (Ctrl+C again on an empty composer quits)";

impl App {
    /// A bracketed paste.
    pub fn on_paste(&mut self, text: &str) -> Vec<AppAction> {
        if let Some(Overlay::Elicitation(form) | Overlay::PromptArgs(PromptArgs { form, .. })) =
            &mut self.overlay
        {
            if let Some(f) = form.fields.get_mut(form.focus) {
                f.value.push_str(text.lines().next().unwrap_or_default());
            }
            return vec![];
        }
        if self.overlay.is_none() {
            self.remember_draft();
            if self.paste_image(text) {
                return self.refresh_popup();
            }
            self.composer.paste(text);
            return self.refresh_popup();
        }
        vec![]
    }

    /// One key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<AppAction> {
        if key.kind == KeyEventKind::Release {
            return vec![];
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code != KeyCode::Char('c') {
            self.last_ctrl_c = None;
        }
        if ctrl && key.code == KeyCode::Char('l') {
            return vec![AppAction::Redraw];
        }
        if ctrl && key.code == KeyCode::Char('z') {
            return vec![AppAction::Suspend];
        }
        match self.overlay.take() {
            Some(Overlay::Approval(a)) => return self.approval_key(a, key),
            Some(Overlay::Elicitation(f)) => return self.elicitation_key(f, key),
            Some(Overlay::Picker(p)) => return self.picker_key(p, key),
            Some(Overlay::PromptArgs(p)) => return self.prompt_args_key(p, key),
            Some(Overlay::Transcript(view)) => {
                self.transcript_key(view, key);
                return vec![];
            }
            Some(Overlay::Diff(pager)) => {
                self.diff_key(pager, key);
                return vec![];
            }
            None => {}
        }
        self.remember_draft();
        if self.extras.history_search.is_some() {
            self.history_search_key(key);
            return self.refresh_popup();
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if ctrl => {
                self.open_history_search();
                return vec![];
            }
            KeyCode::Char('g') if ctrl => {
                return vec![AppAction::EditDraft(self.composer.text().to_string())];
            }
            KeyCode::Tab
                if self.is_running() && self.popup.is_none() && !self.composer.is_empty() =>
            {
                self.queue_composer();
                return vec![];
            }
            KeyCode::Up if alt => {
                self.edit_last_queued();
                return vec![];
            }
            _ => {}
        }
        match key.code {
            KeyCode::Char('c') if ctrl => return self.ctrl_c(),
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => {
                self.should_quit = true;
                return vec![AppAction::Quit];
            }
            KeyCode::Char('t') if ctrl => {
                self.overlay = Some(Overlay::Transcript(Default::default()));
                return vec![];
            }
            KeyCode::Esc => {
                if let Some(popup) = self.popup.take() {
                    if matches!(popup, Popup::Commands { .. }) {
                        let (text, cursor) = std::mem::take(&mut self.slash_draft);
                        self.composer.restore(&text, cursor);
                    }
                    return vec![];
                }
                if self.is_running() {
                    self.interrupt_requested = true;
                    return vec![AppAction::Op(Op::Interrupt)];
                }
                if self.shell_running() {
                    return vec![AppAction::CancelShell];
                }
                return vec![];
            }
            _ => {}
        }
        self.last_ctrl_c = None;
        self.hint = None;
        if let Some(actions) = self.popup_key(key) {
            return actions;
        }
        match self.composer.handle_key(key) {
            ComposerResult::Submitted(text) => {
                self.popup = None;
                self.submit(text)
            }
            ComposerResult::Handled => self.refresh_popup(),
            ComposerResult::Ignored => vec![],
        }
    }

    /// A key on the full-screen transcript (Ctrl+T): scroll, search, or close it.
    fn transcript_key(&mut self, mut view: crate::transcript::TranscriptView, key: KeyEvent) {
        let (width, height) = self.screen;
        let body = usize::from(height).saturating_sub(crate::transcript::CHROME_ROWS);
        let texts = || {
            let plain = crate::theme::Theme::mono();
            crate::transcript::lines(&self.transcript, width, &plain)
                .iter()
                .map(crate::transcript::line_text)
                .collect()
        };
        if let crate::transcript::Outcome::Stay = view.key(key, texts, body) {
            self.overlay = Some(Overlay::Transcript(view));
        }
    }

    /// A key on the `/diff` pager: scroll, search, or close it.
    fn diff_key(&mut self, mut pager: crate::pager::DiffPager, key: KeyEvent) {
        let (width, height) = self.screen;
        let body = usize::from(height).saturating_sub(crate::transcript::CHROME_ROWS);
        let plain = crate::theme::Theme::mono();
        let texts: Vec<String> = pager
            .lines(width, &plain)
            .iter()
            .map(crate::transcript::line_text)
            .collect();
        let mut view = pager.view.clone();
        // The pager opens at the top (a scroll past it): count from the top itself,
        // so the first PgDn moves.
        view.scroll = view.scroll.min(texts.len().saturating_sub(body));
        let texts = || texts;
        if let crate::transcript::Outcome::Stay = view.key(key, texts, body) {
            pager.view = view;
            self.overlay = Some(Overlay::Diff(pager));
        }
    }

    /// Keeps the draft while it is no slash command, for Esc on the slash popup.
    fn remember_draft(&mut self) {
        if !self.composer.text().starts_with('/') {
            self.slash_draft = (self.composer.text().to_string(), self.composer.cursor());
        }
    }

    fn ctrl_c(&mut self) -> Vec<AppAction> {
        if self.is_running() {
            self.hint = Some(INTERRUPTING_HINT.into());
            self.last_ctrl_c = Some(Instant::now());
            self.interrupt_requested = true;
            return vec![AppAction::Op(Op::Interrupt)];
        }
        if !self.composer.is_empty() {
            self.composer.clear();
            self.popup = None;
            return vec![];
        }
        if self
            .last_ctrl_c
            .is_some_and(|t| t.elapsed() < QUIT_CONFIRM_WINDOW)
        {
            self.should_quit = true;
            return vec![AppAction::Quit];
        }
        self.last_ctrl_c = Some(Instant::now());
        self.hint = Some("press Ctrl+C again to quit".into());
        vec![]
    }

    fn approval_key(&mut self, a: Approval, key: KeyEvent) -> Vec<AppAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let decision = match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') if !ctrl => ReviewDecision::Approved,
            KeyCode::Char('a') | KeyCode::Char('A') if !ctrl => ReviewDecision::ApprovedForSession,
            KeyCode::Char('n') | KeyCode::Char('N') if !ctrl => ReviewDecision::Denied,
            KeyCode::Esc => ReviewDecision::Abort,
            KeyCode::Char('c') if ctrl => ReviewDecision::Abort,
            _ => {
                self.overlay = Some(Overlay::Approval(a));
                return vec![];
            }
        };
        let what = match &a.subject {
            ApprovalSubject::Exec { command, .. } => format!("`{command}`"),
            ApprovalSubject::McpTool { server, tool, .. } => format!("MCP tool `{server}.{tool}`"),
            ApprovalSubject::Patch { changes } => format!("patch to {} file(s)", changes.len()),
        };
        let verdict = match decision {
            ReviewDecision::Approved => "approved",
            ReviewDecision::ApprovedForSession => "approved for this session",
            ReviewDecision::Abort => "denied; turn stopped",
            _ => "denied",
        };
        self.push_cell(HistoryCell::Info {
            title: format!("{what} {verdict}"),
            lines: vec![],
        });
        let op = a.request.answer(decision);
        self.close_overlay();
        vec![AppAction::Op(op)]
    }

    fn elicitation_key(&mut self, mut form: ElicitationForm, key: KeyEvent) -> Vec<AppAction> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let answer = |form: &ElicitationForm, action, content| {
            AppAction::Op(Op::ResolveElicitation {
                server_name: form.server.clone(),
                request_id: form.request_id.clone(),
                response: ElicitationResponse { action, content },
            })
        };
        match key.code {
            KeyCode::Esc => {
                self.close_overlay();
                return vec![answer(&form, ElicitationAction::Decline, None)];
            }
            KeyCode::Char('c') if ctrl => {
                self.close_overlay();
                return vec![answer(&form, ElicitationAction::Cancel, None)];
            }
            KeyCode::Enter => match form.content() {
                Ok(content) => {
                    self.close_overlay();
                    return vec![answer(&form, ElicitationAction::Accept, Some(content))];
                }
                Err(e) => form.error = Some(e),
            },
            _ => edit_form(&mut form, key),
        }
        self.overlay = Some(Overlay::Elicitation(form));
        vec![]
    }

    fn picker_key(&mut self, mut p: Picker, key: KeyEvent) -> Vec<AppAction> {
        let n = p.visible().len();
        match key.code {
            KeyCode::Esc => return vec![],
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down if n > 0 => p.selected = (p.selected + 1).min(n - 1),
            KeyCode::Backspace => {
                p.query.pop();
                p.selected = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                p.query.push(c);
                p.selected = 0;
            }
            KeyCode::Enter => {
                let Some(item) = p.visible().get(p.selected).map(|i| i.value.clone()) else {
                    self.overlay = Some(Overlay::Picker(p));
                    return vec![];
                };
                return self.picked(item);
            }
            _ => {}
        }
        self.overlay = Some(Overlay::Picker(p));
        vec![]
    }

    fn picked(&mut self, value: PickerValue) -> Vec<AppAction> {
        match value {
            PickerValue::Model { model, effort } => {
                self.status.model = model.clone();
                self.status.effort = effort;
                self.pending_overrides.model = Some(model.clone());
                self.pending_overrides.effort = effort;
                let effort = effort
                    .map(|e| format!(" ({})", e.as_str()))
                    .unwrap_or_default();
                self.push_info(
                    &format!("Model set to {model}{effort}"),
                    vec!["applies from the next turn".into()],
                );
                vec![]
            }
            PickerValue::ApprovalPreset(i) => {
                let Some((label, _, sandbox, approval)) = APPROVAL_PRESETS.get(i) else {
                    return vec![];
                };
                self.status.sandbox = Some(*sandbox);
                self.status.approval = Some(*approval);
                self.approvals_choice = Some((*sandbox, *approval));
                self.pending_overrides.sandbox_policy = Some(sandbox_policy_for(*sandbox));
                self.pending_overrides.approval_policy = Some(*approval);
                self.push_info(
                    &format!("Approvals: {label}"),
                    vec![format!(
                        "sandbox {sandbox} · approval {approval}; applies from the next turn"
                    )],
                );
                vec![]
            }
            PickerValue::Harness(h) => {
                self.harness_choice = Some(h);
                self.pending_overrides.harness = Some(h);
                self.push_info(
                    &format!("Harness: {h}"),
                    vec!["the model gets this profile's tools and prompt from the next turn (docs/harness.md)".into()],
                );
                vec![]
            }
            PickerValue::Thread(id) => vec![AppAction::Resume(id)],
            PickerValue::Undo(true) => self.undo_confirmed(),
            PickerValue::Undo(false) => {
                self.push_info("Kept the last patch", vec![]);
                vec![]
            }
            PickerValue::Daily(choice) => self.daily_chosen(choice),
        }
    }

    /// Keys for the open popup; `None` lets the composer have the key.
    fn popup_key(&mut self, key: KeyEvent) -> Option<Vec<AppAction>> {
        let popup = self.popup.clone()?;
        match popup {
            Popup::Commands { selected } => {
                let typed = self.composer.text().trim_start_matches('/').to_string();
                let matches = self.command_entries(&typed);
                match key.code {
                    KeyCode::Up => {
                        self.popup = Some(Popup::Commands {
                            selected: selected.saturating_sub(1),
                        });
                        Some(vec![])
                    }
                    KeyCode::Down => {
                        self.popup = Some(Popup::Commands {
                            selected: (selected + 1).min(matches.len().saturating_sub(1)),
                        });
                        Some(vec![])
                    }
                    KeyCode::Tab => {
                        if let Some((name, _)) = matches.get(selected) {
                            self.composer.set_text(&format!("/{name} "));
                        }
                        self.popup = None;
                        Some(vec![])
                    }
                    KeyCode::Enter if key.modifiers.is_empty() => {
                        // Enter runs the highlighted command unless the exact name is typed.
                        let exact = matches.iter().any(|(n, _)| *n == typed);
                        if !exact && let Some((name, _)) = matches.get(selected) {
                            self.composer.set_text(&format!("/{name}"));
                        }
                        None
                    }
                    _ => None,
                }
            }
            Popup::Files { selected } => match key.code {
                KeyCode::Up => {
                    self.popup = Some(Popup::Files {
                        selected: selected.saturating_sub(1),
                    });
                    Some(vec![])
                }
                KeyCode::Down => {
                    self.popup = Some(Popup::Files {
                        selected: (selected + 1)
                            .min(self.file_popup_entries().len().saturating_sub(1)),
                    });
                    Some(vec![])
                }
                KeyCode::Tab | KeyCode::Enter if key.modifiers.is_empty() => {
                    if let Some(path) = self.file_popup_entries().get(selected).cloned() {
                        self.composer.replace_at_token(&path);
                        self.popup = None;
                        Some(vec![])
                    } else {
                        self.popup = None;
                        None
                    }
                }
                _ => None,
            },
        }
    }

    /// Opens, updates or closes the popup after the composer text changed.
    pub(super) fn refresh_popup(&mut self) -> Vec<AppAction> {
        let text = self.composer.text();
        if text.starts_with('/') && !text.contains(char::is_whitespace) {
            let typed = &text[1..];
            let entries = self.command_entries(typed).len();
            if entries > 0 {
                let (selected, opened) = match self.popup {
                    Some(Popup::Commands { selected }) => (selected, false),
                    _ => (0, true),
                };
                self.popup = Some(Popup::Commands {
                    selected: selected.min(entries - 1),
                });
                // Opening the popup asks the servers for their prompts once.
                return if opened {
                    vec![AppAction::RefreshMcpCatalog]
                } else {
                    vec![]
                };
            }
        }
        if let Some((_, query)) = self.composer.at_token() {
            let opened = !matches!(self.popup, Some(Popup::Files { .. }));
            if opened {
                self.file_matches.clear();
            }
            self.popup = Some(Popup::Files { selected: 0 });
            // Opening the popup asks the servers for their resources once.
            return if opened {
                vec![AppAction::RefreshMcpCatalog, AppAction::SearchFiles(query)]
            } else {
                vec![AppAction::SearchFiles(query)]
            };
        }
        self.popup = None;
        vec![]
    }

    /// Results of a file search for the `@` popup.
    pub fn set_file_matches(&mut self, query: &str, matches: Vec<String>) {
        if self.composer.at_token().map(|(_, q)| q).as_deref() == Some(query) {
            self.file_matches = matches;
        }
    }
}

/// A key that edits an elicitation-style form: moves between fields, types, toggles and
/// cycles choices (Enter and Esc are the caller's).
pub(super) fn edit_form(form: &mut ElicitationForm, key: KeyEvent) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let kind = form.fields.get(form.focus).map(|f| f.kind.clone());
    match key.code {
        KeyCode::Tab | KeyCode::Down if !form.fields.is_empty() => {
            form.focus = (form.focus + 1) % form.fields.len()
        }
        KeyCode::BackTab | KeyCode::Up if !form.fields.is_empty() => {
            form.focus = (form.focus + form.fields.len() - 1) % form.fields.len()
        }
        KeyCode::Char(' ') if matches!(kind, Some(FieldKind::MultiChoice(_))) => form.toggle(),
        KeyCode::Left | KeyCode::Right | KeyCode::Char(' ')
            if matches!(
                kind,
                Some(FieldKind::Boolean | FieldKind::Choice(_) | FieldKind::MultiChoice(_))
            ) =>
        {
            form.cycle(key.code != KeyCode::Left)
        }
        KeyCode::Backspace => {
            if let Some(f) = form.fields.get_mut(form.focus) {
                f.value.pop();
            }
        }
        KeyCode::Char(c)
            if !ctrl
                && matches!(
                    kind,
                    Some(FieldKind::Text | FieldKind::Number | FieldKind::Integer)
                ) =>
        {
            if let Some(f) = form.fields.get_mut(form.focus) {
                f.value.push(c);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(app: &mut App, code: KeyCode) {
        let _ = app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn type_str(app: &mut App, s: &str) {
        for c in s.chars() {
            press(app, KeyCode::Char(c));
        }
    }

    #[test]
    fn esc_on_the_slash_popup_puts_the_draft_back() {
        let mut app = App::new(Composer::default());
        // `/` on an empty composer: Esc leaves it empty.
        type_str(&mut app, "/mo");
        assert!(matches!(app.popup, Some(Popup::Commands { .. })));
        press(&mut app, KeyCode::Esc);
        assert_eq!((app.popup.clone(), app.composer.text()), (None, ""));
        // `/` typed before a draft: Esc gives back the draft and its cursor.
        type_str(&mut app, "st");
        press(&mut app, KeyCode::Home);
        type_str(&mut app, "/");
        assert_eq!(app.composer.text(), "/st");
        assert!(matches!(app.popup, Some(Popup::Commands { .. })));
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.composer.text(), "st");
        assert_eq!(app.composer.cursor(), 0);
        // Esc on the `@` popup closes it and keeps the text.
        app.composer.clear();
        type_str(&mut app, "read @src");
        assert!(matches!(app.popup, Some(Popup::Files { .. })));
        press(&mut app, KeyCode::Esc);
        assert_eq!(
            (app.popup.clone(), app.composer.text()),
            (None, "read @src")
        );
    }
}
