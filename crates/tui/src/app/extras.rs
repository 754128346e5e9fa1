//! What the user does besides sending prompts: steering and queued follow-ups (Enter and
//! Tab while a turn runs), Ctrl+R history search, `!cmd` shell commands whose output the
//! model gets with the next prompt, and the patches `/undo` can revert.

use super::*;
use crate::history_search::{HistorySearch, SearchOutcome};
use crate::queue::FollowUps;
use oi_protocol::protocol::FileChange;

/// The id of the running cell of a `!cmd`.
const USER_SHELL_ID: &str = "user-shell-command";

/// The first line of `/review`'s prompt (the user cell shows it, not the diff).
const REVIEW_HEAD: &str =
    "Review the uncommitted changes of this working tree (`git diff`, below).";
const REVIEW_ASK: &str = "Look for bugs, missing error handling, security problems, unclear names and missing tests. \
For each finding give the file and line, what is wrong and how to fix it; say plainly when you find nothing wrong. \
Do not change any file.";
/// How much of the diff `/review` sends (head and tail).
const REVIEW_DIFF_BYTES: usize = 48 * 1024;

/// The state of the features above.
#[derive(Debug, Default)]
pub struct Extras {
    pub followups: FollowUps,
    /// Actions the app decided on while applying events (a queued follow-up to send).
    deferred: Vec<AppAction>,
    pub history_search: Option<HistorySearch>,
    /// Context for the model from `!cmd` runs and `/undo`, sent before the next prompt.
    context: Vec<String>,
    /// Patches applied in this session, oldest first, per thread (by id), for `/undo`:
    /// after `/new` or `/resume` it reverts the patches of the thread on screen, never
    /// those of the one left (whose model would be told of it in the wrong thread).
    applied: std::collections::HashMap<String, Vec<Vec<(PathBuf, FileChange)>>>,
}

impl App {
    /// Actions decided while applying events, for the runner (call after `on_event`).
    pub fn take_deferred(&mut self) -> Vec<AppAction> {
        std::mem::take(&mut self.extras.deferred)
    }

    /// Adds context the model gets with the next prompt.
    pub fn add_model_context(&mut self, text: String) {
        self.extras.context.push(text);
    }

    /// A prompt as the items of a turn: the prompt, then the context gathered since the
    /// last one (after it, so the thread's title and preview stay the prompt).
    pub(super) fn prompt_items(&mut self, text: String) -> Vec<UserInput> {
        let mut items = vec![UserInput::text(text)];
        items.extend(self.extras.context.drain(..).map(UserInput::text));
        items
    }

    /// A user message as the conversation shows it: without the context blocks the TUI
    /// added (their commands have cells of their own), and `/review`'s diff summarised.
    pub(super) fn shown_user_text(message: &str) -> String {
        let mut text = message.to_string();
        for (open, close) in [
            ("<user_shell_command>", "</user_shell_command>"),
            ("<user_undo>", "</user_undo>"),
        ] {
            while let Some(start) = text.find(open)
                && let Some(len) = text[start..].find(close)
            {
                text.replace_range(start..start + len + close.len(), "");
            }
        }
        let text = text.trim_end().to_string();
        if text.starts_with(REVIEW_HEAD) {
            let lines = text.lines().count();
            return format!("/review ({lines} lines of prompt and diff)");
        }
        text
    }

    /// A prompt sent while a turn runs steers it.
    pub(super) fn steer(&mut self, text: String) -> AppAction {
        self.extras.followups.steered(text.clone());
        AppAction::Op(Op::UserInput {
            items: self.prompt_items(text),
            overrides: std::mem::take(&mut self.pending_overrides),
        })
    }

    /// Tab while a turn runs: the composer's text waits for the turn to end.
    pub(super) fn queue_composer(&mut self) {
        if let ComposerResult::Submitted(text) = self
            .composer
            .handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
        {
            self.popup = None;
            self.extras.followups.queue(text);
        }
    }

    /// Alt+Up: the newest queued message back in the composer (a draft there takes its
    /// place in the queue).
    pub(super) fn edit_last_queued(&mut self) {
        let Some(text) = self.extras.followups.take_last_queued() else {
            return;
        };
        if !self.composer.is_empty() {
            self.queue_composer();
        }
        self.composer.set_text(&text);
    }

    /// A user message echoed by the engine: a steering message is held until it takes
    /// effect; others are shown.
    pub(super) fn on_user_message(&mut self, message: &str) {
        if self.is_running() && self.extras.followups.echoed(message) {
            return;
        }
        let text = Self::shown_user_text(message);
        if !text.trim().is_empty() {
            self.push_cell(HistoryCell::User { text });
        }
    }

    fn show_steering(&mut self, texts: Vec<String>) {
        if texts.is_empty() {
            return;
        }
        self.flush_streaming();
        for t in texts {
            let text = Self::shown_user_text(&t);
            self.push_cell(HistoryCell::User { text });
        }
    }

    /// The model began output: steering its request carried shows now, above it.
    pub(super) fn model_output_began(&mut self) {
        let due = self.extras.followups.output_began();
        self.show_steering(due);
    }

    /// A model response ended (`token_count`).
    pub(super) fn model_response_ended(&mut self) {
        let due = self.extras.followups.response_ended();
        self.show_steering(due);
    }

    /// The turn ended: steering it took is shown; a queued follow-up is sent; after an
    /// interrupt, everything the model did not see goes back to the composer.
    pub(super) fn followups_at_turn_end(&mut self, interrupted: bool) {
        if interrupted {
            let back = self.extras.followups.turn_interrupted();
            if back.is_empty() {
                return;
            }
            let mut texts: Vec<String> = back.iter().map(|t| Self::shown_user_text(t)).collect();
            if !self.composer.is_empty() {
                texts.push(self.composer.text().to_string());
            }
            self.composer.set_text(&texts.join("\n"));
            self.hint = Some(format!(
                "{} message(s) the model did not see are back in the composer",
                back.len()
            ));
            return;
        }
        let (seen, next) = self.extras.followups.turn_completed();
        self.show_steering(seen);
        if let Some(text) = next {
            // As if typed now: a queued `/command` or `!cmd` runs as one.
            let actions = self.submit(text);
            self.extras.deferred.extend(actions);
        }
    }

    /// Ctrl+R.
    pub(super) fn open_history_search(&mut self) {
        self.popup = None;
        self.extras.history_search = Some(HistorySearch::new(self.composer.text().to_string()));
    }

    /// A key while the history search is open.
    pub(super) fn history_search_key(&mut self, key: KeyEvent) {
        let Some(mut search) = self.extras.history_search.take() else {
            return;
        };
        match search.key(key, self.composer.history()) {
            SearchOutcome::Stay => self.extras.history_search = Some(search),
            SearchOutcome::Accept(text) | SearchOutcome::Cancel(text) => {
                self.composer.set_text(&text)
            }
        }
    }

    /// Records a patch the engine applied (for `/undo`).
    pub(super) fn patch_applied(&mut self, changes: Vec<(PathBuf, FileChange)>) {
        self.applied_here().push(changes);
    }

    /// The patches `/undo` can revert in the thread on screen.
    fn applied_here(&mut self) -> &mut Vec<Vec<(PathBuf, FileChange)>> {
        self.extras
            .applied
            .entry(self.status.thread_id.clone())
            .or_default()
    }

    /// `/undo`: asks to confirm reverting the last applied patch.
    pub(super) fn ask_undo(&mut self) -> Vec<AppAction> {
        let Some(last) = self.applied_here().last() else {
            self.push_info(
                "Nothing to undo: no patch was applied in this thread during this session",
                vec![],
            );
            return vec![];
        };
        let files: Vec<String> = last.iter().map(|(p, _)| p.display().to_string()).collect();
        let items = vec![
            PickerItem {
                label: "Revert it".into(),
                detail: files.join(", "),
                value: PickerValue::Undo(true),
            },
            PickerItem {
                label: "Keep it".into(),
                detail: String::new(),
                value: PickerValue::Undo(false),
            },
        ];
        self.overlay = Some(Overlay::Picker(Picker::new(
            "Undo the last applied patch?",
            items,
        )));
        vec![]
    }

    /// The user confirmed `/undo`.
    pub(super) fn undo_confirmed(&mut self) -> Vec<AppAction> {
        match self.applied_here().last() {
            Some(changes) => vec![AppAction::Undo(changes.clone())],
            None => vec![],
        }
    }

    /// The runner reverted the last patch (`Ok(files)`) or refused (`Err(why)`).
    pub(crate) fn undo_done(&mut self, result: Result<Vec<String>, crate::undo::UndoError>) {
        match result {
            Ok(files) => {
                self.applied_here().pop();
                self.add_model_context(format!(
                    "<user_undo>\nThe user reverted the last patch you applied; these files are back as they were before it: {}\n</user_undo>",
                    files.join(", ")
                ));
                self.push_info("Reverted the last applied patch", files);
            }
            Err(why) => self.push_error(format!("/undo changed nothing: {why}")),
        }
    }

    /// True while a `!cmd` runs.
    pub fn shell_running(&self) -> bool {
        self.running.iter().any(|(id, _)| id == USER_SHELL_ID)
    }

    /// `/review`: a turn asking for a review of `diff` (the working tree's `git diff`).
    pub fn review_turn(&mut self, diff: &str) -> AppAction {
        let diff = oi_core::truncate_head_tail(diff, REVIEW_DIFF_BYTES);
        self.user_turn(format!(
            "{REVIEW_HEAD}\n{REVIEW_ASK}\n\n```diff\n{}\n```",
            diff.trim_end()
        ))
    }

    /// `!cmd` started: shown as a running command until [`App::shell_done`].
    pub fn shell_started(&mut self, command: &str) {
        self.running.push((
            USER_SHELL_ID.to_string(),
            HistoryCell::Exec {
                command: command.to_string(),
                output: String::new(),
                outcome: Outcome::Running,
            },
        ));
    }

    /// `!cmd` ended: its cell, and its output for the model with the next prompt.
    pub fn shell_done(
        &mut self,
        command: &str,
        result: Result<oi_core::CommandOutput, oi_core::CommandError>,
        duration: Duration,
    ) {
        self.running.retain(|(id, _)| id != USER_SHELL_ID);
        match result {
            Ok(out) => {
                let mut output = out.stdout;
                if !out.stderr.is_empty() {
                    if !output.is_empty() && !output.ends_with('\n') {
                        output.push('\n');
                    }
                    output.push_str(&out.stderr);
                }
                self.add_model_context(oi_core::user_shell_context(
                    command,
                    out.exit_code,
                    &output,
                ));
                self.push_cell(HistoryCell::Exec {
                    command: command.to_string(),
                    output,
                    outcome: Outcome::Done {
                        exit_code: out.exit_code,
                        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                    },
                });
            }
            Err(e) => self.push_error(format!("`{command}` did not run: {e}")),
        }
    }

    /// The last answer of the conversation (for `/copy`).
    pub fn last_answer(&self) -> Option<String> {
        let mut parts: Vec<&str> = Vec::new();
        for cell in self.transcript.iter().rev() {
            match cell {
                HistoryCell::Assistant { markdown } => {
                    parts.push(markdown);
                    break;
                }
                HistoryCell::AssistantMore { markdown }
                | HistoryCell::AssistantPart { markdown, .. } => parts.push(markdown),
                _ if !parts.is_empty() => break,
                _ => {}
            }
        }
        if parts.is_empty() {
            return None;
        }
        parts.reverse();
        Some(parts.concat())
    }
}
