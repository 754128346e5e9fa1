//! Input typed while a turn runs. Enter *steers*: the engine adds the message to the
//! running turn and the model sees it at its next request, so the message is kept out of
//! the scrollback until then and shown where it takes effect (before the output of the
//! request that carries it), not in the middle of the answer that was streaming when it was
//! typed. Tab *queues* a follow-up: each queued message is sent as a turn of its own when
//! the running turn completes. Both are listed above the composer; Alt+Up takes the newest
//! queued message back for editing, and an interrupted turn gives every message the model
//! has not seen back to the composer.

use crate::theme::Theme;
use crate::wrap::truncate;
use ratatui::text::{Line, Span};
use std::collections::VecDeque;

/// Steering and queued follow-ups of the running turn.
#[derive(Debug, Default)]
pub struct FollowUps {
    /// Sent as steering; the engine has not echoed them yet (`user_message`).
    sent: VecDeque<String>,
    /// Echoed by the engine and waiting for the model's next request.
    waiting: Vec<String>,
    /// To send, one turn each, after the running turn completes.
    queued: VecDeque<String>,
    /// A model response ended (`token_count`) and nothing of the next one has come yet.
    between_responses: bool,
}

impl FollowUps {
    /// A steering message was submitted to the running turn.
    pub fn steered(&mut self, text: String) {
        self.sent.push_back(text);
    }

    /// The engine echoed a user message during the turn: true when it is one of ours
    /// (it is then held until the model's next request instead of shown at once).
    pub fn echoed(&mut self, message: &str) -> bool {
        let pos = self
            .sent
            .iter()
            .position(|s| s.trim() == message.trim())
            .or_else(|| (!self.sent.is_empty()).then_some(0));
        match pos.and_then(|i| self.sent.remove(i)) {
            Some(text) => {
                self.waiting.push(text);
                true
            }
            None => false,
        }
    }

    /// A model response ended. Returns the steering messages that take effect now: those
    /// waiting when a response ends without any output since the previous one ended.
    pub fn response_ended(&mut self) -> Vec<String> {
        let due = if self.between_responses {
            std::mem::take(&mut self.waiting)
        } else {
            Vec::new()
        };
        self.between_responses = true;
        due
    }

    /// The model produced output. Returns the steering messages that its request carried
    /// (all that waited when the previous response ended).
    pub fn output_began(&mut self) -> Vec<String> {
        if std::mem::replace(&mut self.between_responses, false) {
            std::mem::take(&mut self.waiting)
        } else {
            Vec::new()
        }
    }

    /// The turn completed: every steering message was seen (the engine goes on rather
    /// than complete with unseen input). Returns them, and the next queued follow-up.
    pub fn turn_completed(&mut self) -> (Vec<String>, Option<String>) {
        self.between_responses = false;
        let mut seen: Vec<String> = std::mem::take(&mut self.waiting);
        seen.extend(self.sent.drain(..));
        (seen, self.queued.pop_front())
    }

    /// The turn was interrupted: what the model never saw (steering still waiting, and
    /// every queued message), oldest first, for the composer.
    pub fn turn_interrupted(&mut self) -> Vec<String> {
        self.between_responses = false;
        let mut back: Vec<String> = std::mem::take(&mut self.waiting);
        back.extend(self.sent.drain(..));
        back.extend(self.queued.drain(..));
        back
    }

    /// Queues a follow-up.
    pub fn queue(&mut self, text: String) {
        self.queued.push_back(text);
    }

    /// Takes the newest queued message back (to edit it).
    pub fn take_last_queued(&mut self) -> Option<String> {
        self.queued.pop_back()
    }

    /// Queued messages, oldest first.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.queued.iter().map(String::as_str)
    }

    /// Nothing listed.
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty() && self.waiting.is_empty() && self.queued.is_empty()
    }

    /// The rows listed above the composer.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let room = usize::from(width).saturating_sub(4);
        let row = |mark: &str, label: &str, text: &str| {
            let first = text.lines().next().unwrap_or_default();
            let more = if text.lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            let label = format!("  {mark} {label}: ");
            let body = truncate(
                &format!("{first}{more}"),
                room.saturating_sub(label.chars().count()),
            );
            Line::from(vec![
                Span::styled(label, theme.dim()),
                Span::styled(body, theme.plain()),
            ])
        };
        let mut out: Vec<Line<'static>> = self
            .sent
            .iter()
            .chain(&self.waiting)
            .map(|t| row("↳", "steering (the model sees it at its next step)", t))
            .collect();
        out.extend(
            self.queued
                .iter()
                .map(|t| row("⏵", "queued for after this turn", t)),
        );
        if !self.queued.is_empty() {
            out.push(Line::styled(
                "    Alt+↑ edits the last queued message · Esc interrupts and returns them to the composer",
                theme.dim(),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steering_takes_effect_at_the_next_response() {
        let mut f = FollowUps::default();
        // Typed while the first response streams.
        f.steered("go left".into());
        assert!(f.echoed("go left"));
        assert!(f.output_began().is_empty(), "still the same response");
        assert!(f.response_ended().is_empty(), "its tools run first");
        assert_eq!(f.output_began(), ["go left"]);
        assert!(f.is_empty());
    }

    #[test]
    fn a_response_without_output_still_carries_it() {
        let mut f = FollowUps::default();
        f.steered("stop".into());
        assert!(f.echoed("stop"));
        assert!(f.response_ended().is_empty());
        assert_eq!(f.response_ended(), ["stop"]);
    }

    #[test]
    fn other_user_messages_are_not_ours() {
        let mut f = FollowUps::default();
        assert!(!f.echoed("typed elsewhere"));
    }

    #[test]
    fn queued_follow_ups_go_one_per_turn_and_come_back_on_interrupt() {
        let mut f = FollowUps::default();
        f.queue("one".into());
        f.queue("two".into());
        assert_eq!(f.turn_completed(), (vec![], Some("one".to_string())));
        f.queue("three".into());
        f.steered("unseen".into());
        assert_eq!(f.turn_interrupted(), ["unseen", "two", "three"]);
        assert!(f.is_empty());
    }

    #[test]
    fn the_last_queued_comes_back_to_edit() {
        let mut f = FollowUps::default();
        f.queue("one".into());
        f.queue("two".into());
        assert_eq!(f.take_last_queued().as_deref(), Some("two"));
        assert_eq!(f.queued().collect::<Vec<_>>(), ["one"]);
    }
}
