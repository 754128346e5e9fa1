//! Thinking left in the answer text by a server started without a reasoning parser.
//!
//! Four shapes reach us: `<think>…</think>` at the start of the answer (Qwen3, GLM,
//! DeepSeek-R1 templates that let the model open the tag), a closing `</think>` only
//! (templates that already put `<think>` in the prompt, so everything before the tag was
//! thinking), Kimi's `◁think▷…◁/think▷`, and gpt-oss harmony channels
//! (`<|channel|>analysis<|message|>…<|end|>` is the chain of thought, the answer follows
//! `<|start|>assistant<|channel|>final<|message|>`; OpenAI cookbook "OpenAI harmony response
//! format"). Tags may be split across deltas at any byte.
//!
//! [`ThinkSplitter`] sees every content delta, so its common path has to be cheap: once the
//! answer is known to be plain text it only looks for a `<`/`◁` in each delta and passes the
//! delta through untouched.

use std::borrow::Cow;

/// Opening tags (after optional leading whitespace) and the closing tag each expects.
const OPENERS: [(&str, &str); 4] = [
    ("<think>", "</think>"),
    ("◁think▷", "◁/think▷"),
    ("<|channel|>analysis<|message|>", "<|end|>"),
    (
        "<|start|>assistant<|channel|>analysis<|message|>",
        "<|end|>",
    ),
];
/// Harmony's header before the answer: markup, not part of it.
const FINAL_HEADERS: [&str; 2] = [
    "<|start|>assistant<|channel|>final<|message|>",
    "<|channel|>final<|message|>",
];
/// Closing tags recognised without an opening tag.
const BARE_CLOSERS: [&str; 2] = ["</think>", "◁/think▷"];

/// A piece of the split stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Reasoning(&'a str),
    /// A closing tag without an opening one: all the text emitted so far was thinking.
    /// It was already streamed as text (it cannot be recalled); the final items move it
    /// into the reasoning.
    EarlierTextWasReasoning,
}

#[derive(Debug, Default, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace seen: an opening tag may still come.
    #[default]
    Start,
    /// Inside a thinking block that ends with this tag.
    Inside { close: &'static str },
    /// Plain text; a bare closing tag may still come.
    Text,
    /// After the thinking block: leading whitespace of the answer is dropped.
    AfterThink,
    /// Plain text to the end of the response.
    Passthrough,
}

/// Splits content deltas into answer text and reasoning.
#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    state: State,
    /// Bytes that may be the start of a tag, held until the next delta decides.
    held: String,
    /// The text emitted last ended with a backtick: a closing tag right after it is quoted
    /// code (`` `</think>` ``), not the end of thinking.
    after_backtick: bool,
}

impl ThinkSplitter {
    /// Stops looking for tags (the server reports reasoning in its own field, so the text is
    /// the answer). Held text is released.
    pub(crate) fn disable(&mut self, emit: &mut dyn FnMut(Piece<'_>)) {
        if self.state != State::Passthrough {
            self.finish(emit);
            self.state = State::Passthrough;
        }
    }

    pub(crate) fn feed(&mut self, delta: &str, emit: &mut dyn FnMut(Piece<'_>)) {
        if delta.is_empty() {
            return;
        }
        // The common paths: no tag is possible in this delta.
        match self.state {
            State::Passthrough => return emit(Piece::Text(delta)),
            State::Text if self.held.is_empty() && !may_hold_tag(delta) => {
                self.after_backtick = delta.ends_with('`');
                return emit(Piece::Text(delta));
            }
            _ => {}
        }
        let input: Cow<'_, str> = if self.held.is_empty() {
            Cow::Borrowed(delta)
        } else {
            let mut s = std::mem::take(&mut self.held);
            s.push_str(delta);
            Cow::Owned(s)
        };
        self.step(&input, emit);
    }

    /// The response ended: releases whatever was held back.
    pub(crate) fn finish(&mut self, emit: &mut dyn FnMut(Piece<'_>)) {
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return;
        }
        match self.state {
            State::Inside { .. } => emit(Piece::Reasoning(&held)),
            State::AfterThink => {
                let t = held.trim_start();
                if !t.is_empty() {
                    emit(Piece::Text(t));
                }
            }
            _ => emit(Piece::Text(&held)),
        }
    }

    fn step(&mut self, mut s: &str, emit: &mut dyn FnMut(Piece<'_>)) {
        loop {
            if s.is_empty() {
                return;
            }
            match self.state {
                State::Start => {
                    let t = s.trim_start();
                    if t.is_empty() {
                        self.held.push_str(s);
                        return;
                    }
                    if let Some((open, close)) = OPENERS.iter().find(|(o, _)| t.starts_with(o)) {
                        self.state = State::Inside { close };
                        s = &t[open.len()..];
                        continue;
                    }
                    if let Some(h) = FINAL_HEADERS.iter().find(|h| t.starts_with(*h)) {
                        self.state = State::Passthrough;
                        s = &t[h.len()..];
                        continue;
                    }
                    if OPENERS.iter().any(|(o, _)| o.starts_with(t))
                        || FINAL_HEADERS.iter().any(|h| h.starts_with(t))
                    {
                        self.held.push_str(s);
                        return;
                    }
                    self.state = State::Text;
                }
                State::Inside { close } => {
                    if let Some(i) = s.find(close) {
                        if i > 0 {
                            emit(Piece::Reasoning(&s[..i]));
                        }
                        self.state = State::AfterThink;
                        s = &s[i + close.len()..];
                        continue;
                    }
                    let keep = partial_tag_suffix(s, &[close]);
                    let (now, later) = s.split_at(s.len() - keep);
                    if !now.is_empty() {
                        emit(Piece::Reasoning(now));
                    }
                    self.held.push_str(later);
                    return;
                }
                State::Text => {
                    if let Some((i, tag)) = BARE_CLOSERS
                        .iter()
                        .filter_map(|t| s.find(t).map(|i| (i, *t)))
                        .min_by_key(|(i, _)| *i)
                    {
                        let quoted = if i > 0 {
                            s.as_bytes()[i - 1] == b'`'
                        } else {
                            self.after_backtick
                        };
                        if quoted {
                            let end = i + tag.len();
                            emit(Piece::Text(&s[..end]));
                            self.after_backtick = false;
                            s = &s[end..];
                            continue;
                        }
                        if i > 0 {
                            emit(Piece::Text(&s[..i]));
                        }
                        emit(Piece::EarlierTextWasReasoning);
                        self.state = State::AfterThink;
                        s = &s[i + tag.len()..];
                        continue;
                    }
                    let keep = partial_tag_suffix(s, &BARE_CLOSERS);
                    let (now, later) = s.split_at(s.len() - keep);
                    if !now.is_empty() {
                        self.after_backtick = now.ends_with('`');
                        emit(Piece::Text(now));
                    }
                    self.held.push_str(later);
                    return;
                }
                State::AfterThink => {
                    let t = s.trim_start();
                    if t.is_empty() {
                        return;
                    }
                    if let Some(h) = FINAL_HEADERS.iter().find(|h| t.starts_with(*h)) {
                        self.state = State::Passthrough;
                        s = &t[h.len()..];
                        continue;
                    }
                    if FINAL_HEADERS.iter().any(|h| h.starts_with(t)) {
                        self.held.push_str(t);
                        return;
                    }
                    self.state = State::Passthrough;
                    s = t;
                }
                State::Passthrough => return emit(Piece::Text(s)),
            }
        }
    }
}

/// Whether `s` contains the first byte of any tag.
fn may_hold_tag(s: &str) -> bool {
    s.bytes().any(|b| b == b'<' || b == 0xE2) // '◁' is E2 97 81 in UTF-8
}

/// Length of the longest suffix of `s` that is a proper prefix of one of `tags` (bytes that
/// must wait for the next delta). Always on a char boundary, since tags are whole chars.
fn partial_tag_suffix(s: &str, tags: &[&str]) -> usize {
    let mut best = 0;
    for tag in tags {
        let max = (tag.len() - 1).min(s.len());
        for n in (best + 1..=max).rev() {
            if s.is_char_boundary(s.len() - n) && tag.starts_with(&s[s.len() - n..]) {
                best = n;
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds the deltas and returns (text, reasoning, whether a bare close was seen).
    fn split(deltas: &[&str]) -> (String, String, bool) {
        let mut s = ThinkSplitter::default();
        let (mut text, mut reasoning, mut bare) = (String::new(), String::new(), false);
        let mut emit = |p: Piece<'_>| match p {
            Piece::Text(t) => text.push_str(t),
            Piece::Reasoning(r) => reasoning.push_str(r),
            Piece::EarlierTextWasReasoning => bare = true,
        };
        for d in deltas {
            s.feed(d, &mut emit);
        }
        s.finish(&mut emit);
        (text, reasoning, bare)
    }

    /// Every way of cutting `whole` into two deltas gives the same result.
    fn at_every_split(whole: &str) -> (String, String, bool) {
        let expected = split(&[whole]);
        for i in 1..whole.len() {
            if whole.is_char_boundary(i) {
                assert_eq!(split(&[&whole[..i], &whole[i..]]), expected, "split at {i}");
            }
        }
        let bytes: Vec<String> = whole.chars().map(String::from).collect();
        let refs: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(split(&refs), expected, "one char per delta");
        expected
    }

    #[test]
    fn think_block_at_the_start_becomes_reasoning() {
        assert_eq!(
            at_every_split("\n<think>\nplan it</think>\n\nThe answer."),
            ("The answer.".into(), "\nplan it".into(), false)
        );
    }

    #[test]
    fn kimi_markers() {
        assert_eq!(
            at_every_split("◁think▷hmm◁/think▷Done"),
            ("Done".into(), "hmm".into(), false)
        );
    }

    #[test]
    fn closing_tag_only_marks_earlier_text_as_reasoning() {
        assert_eq!(
            at_every_split("I should list files.\n</think>\n\nHere they are."),
            (
                "I should list files.\nHere they are.".into(),
                String::new(),
                true
            )
        );
    }

    #[test]
    fn harmony_analysis_is_reasoning_and_final_is_the_answer() {
        assert_eq!(
            at_every_split(
                "<|channel|>analysis<|message|>User greets. Reply.<|end|><|start|>assistant<|channel|>final<|message|>Hello!"
            ),
            ("Hello!".into(), "User greets. Reply.".into(), false)
        );
        // Low effort: straight to the final channel.
        assert_eq!(
            at_every_split("<|channel|>final<|message|>Hi."),
            ("Hi.".into(), String::new(), false)
        );
        // A tool call after the analysis stays text for the call recogniser.
        let call = "<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{}<|call|>";
        assert_eq!(
            at_every_split(&format!(
                "<|channel|>analysis<|message|>Run ls.<|end|>{call}"
            )),
            (call.into(), "Run ls.".into(), false)
        );
    }

    #[test]
    fn plain_text_passes_untouched() {
        assert_eq!(
            at_every_split("a < b and x<y, ◁ arrow"),
            ("a < b and x<y, ◁ arrow".into(), String::new(), false)
        );
        // An opening tag after the answer started is just text, and so is a quoted
        // closing tag.
        assert_eq!(
            at_every_split("Use <think> tags"),
            ("Use <think> tags".into(), String::new(), false)
        );
        assert_eq!(
            at_every_split("Close it with `</think>` or `◁/think▷`."),
            (
                "Close it with `</think>` or `◁/think▷`.".into(),
                String::new(),
                false
            )
        );
    }

    #[test]
    fn unterminated_block_is_all_reasoning_and_held_prefixes_are_released() {
        assert_eq!(split(&["<think>still going</thi"]).1, "still going</thi");
        assert_eq!(split(&["<thi"]).0, "<thi");
        assert_eq!(split(&["   "]).0, "   ");
    }

    #[test]
    fn disabled_splitter_passes_tags_through() {
        let mut s = ThinkSplitter::default();
        let mut text = String::new();
        s.feed("<th", &mut |p| {
            if let Piece::Text(t) = p {
                text.push_str(t)
            }
        });
        s.disable(&mut |p| {
            if let Piece::Text(t) = p {
                text.push_str(t)
            }
        });
        s.feed("ink>x</think>", &mut |p| {
            if let Piece::Text(t) = p {
                text.push_str(t)
            }
        });
        assert_eq!(text, "<think>x</think>");
    }
}
