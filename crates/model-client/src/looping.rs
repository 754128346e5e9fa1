//! Stopping an answer that repeats itself. A small model that falls into a loop writes the
//! same line (or paragraph, or word) until its output bound: recorded, one answer ran for
//! ten minutes on two cores. The decoders feed everything the model writes (text and tool
//! call arguments) to a [`LoopGuard`]; once the end of the output is one piece repeated
//! many times over, the stream is ended there (which closes the connection, so the server
//! stops generating) and the repeated tail is cut from the answer.

/// Bytes of the latest output kept for the check.
const TAIL: usize = 12 * 1024;
/// The repeated stretch must be at least this long, and at least [`MIN_PERIODS`] copies
/// (of a piece up to [`LONG_PERIOD`] bytes; [`MIN_LONG_PERIODS`] of a longer one): long
/// enough that content asked for (a few identical lines) is not taken for a loop.
const MIN_SPAN: usize = 1536;
const MIN_PERIODS: usize = 8;
const LONG_PERIOD: usize = 192;
const MIN_LONG_PERIODS: usize = 4;
/// The longest repeated piece looked for: a block of several calls (recorded on the real
/// tier: five `<function_call>` blocks, 1,100 bytes, written again and again until the
/// output bound, nine minutes on two cores).
const MAX_PERIOD: usize = 2048;
/// Output between checks.
const CHECK_EVERY: usize = 64;
/// Pieces longer than this are looked for at every [`LONG_CHECK_EVERY`]-th check only: a
/// long loop takes kilobytes to show, and the search over long periods is most of a check.
const SHORT_PERIOD: usize = 512;
const LONG_CHECK_EVERY: usize = 8;

#[derive(Debug, Default)]
pub(crate) struct LoopGuard {
    tail: Vec<u8>,
    unchecked: usize,
    checks: usize,
    tripped: bool,
}

impl LoopGuard {
    /// Takes the next piece of output; `true` once the output has fallen into a loop.
    pub(crate) fn feed(&mut self, piece: &str) -> bool {
        if self.tripped || piece.is_empty() {
            return self.tripped;
        }
        self.tail.extend_from_slice(piece.as_bytes());
        if self.tail.len() > TAIL {
            let extra = self.tail.len() - TAIL;
            self.tail.drain(..extra);
        }
        self.unchecked += piece.len();
        if self.unchecked >= CHECK_EVERY {
            self.unchecked = 0;
            self.checks += 1;
            let longest = if self.checks.is_multiple_of(LONG_CHECK_EVERY) {
                MAX_PERIOD
            } else {
                SHORT_PERIOD
            };
            self.tripped = periodic_tail(&self.tail, longest).is_some();
        }
        self.tripped
    }

    pub(crate) fn tripped(&self) -> bool {
        self.tripped
    }
}

/// The smallest period `p` with which `bytes` ends in a repeated stretch (each of its last
/// `max(MIN_SPAN, MIN_PERIODS * p)` bytes equals the one `p` before it), and where that
/// stretch starts.
fn periodic_tail(bytes: &[u8], longest: usize) -> Option<(usize, usize)> {
    let n = bytes.len();
    for p in 1..=longest {
        let copies = if p <= LONG_PERIOD {
            MIN_PERIODS
        } else {
            MIN_LONG_PERIODS
        };
        let span = MIN_SPAN.max(copies * p);
        if span + p > n {
            break;
        }
        if (n - span..n).all(|i| bytes[i] == bytes[i - p]) {
            let mut start = n - span;
            while start > p && bytes[start - 1] == bytes[start - 1 - p] {
                start -= 1;
            }
            return Some((p, start - p));
        }
    }
    None
}

/// `text` without the repeated tail: one copy of the repeated piece is kept.
pub(crate) fn cut_loop(text: &mut String) {
    if let Some((period, start)) = periodic_tail(text.as_bytes(), MAX_PERIOD) {
        let mut keep = (start + period).min(text.len());
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        text.truncate(keep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(text: &str) -> bool {
        let mut g = LoopGuard::default();
        // In model-sized pieces, as a stream brings them.
        let mut tripped = false;
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(5) {
            tripped = g.feed(&chunk.iter().collect::<String>());
        }
        tripped
    }

    #[test]
    fn a_repeated_line_paragraph_or_word_trips_the_guard() {
        let line = "print('hello world')\n".repeat(120);
        assert!(fed(&format!("Here is the script:\n{line}")));
        let paragraph =
            "I will now create the file. The file will contain the text.\n\n".repeat(40);
        assert!(fed(&paragraph));
        assert!(fed(&"the ".repeat(600)));
    }

    /// Recorded in round 14: a block of five text calls, written again and again.
    #[test]
    fn a_repeated_block_of_calls_trips_the_guard_and_two_copies_do_not() {
        let block: String = ["racecar", "noon", "level", "python", "ok"]
            .iter()
            .map(|w| {
                format!(
                    "<function_call>\n  <name>bash</name>\n  <arguments>\n    <command>\nbash -c 'echo \"assert is_palindrome(\\\"{w}\\\")\" | python -m text_utils'\n    </command>\n  </arguments>\n</function_call>\n\n"
                )
            })
            .collect();
        assert!(
            block.len() > 512 && block.len() <= MAX_PERIOD,
            "{}",
            block.len()
        );
        assert!(fed(&block.repeat(6)));
        assert!(!fed(&block.repeat(2)));
    }

    #[test]
    fn ordinary_output_and_short_repeats_do_not() {
        let numbers: String = (1..=400).map(|i| format!("{i}\n")).collect();
        assert!(!fed(&numbers));
        let few = "hello\n".repeat(50);
        assert!(!fed(&few), "fifty short lines asked for are not a loop");
        let code = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        assert!(!fed(&code.repeat(3)));
    }

    #[test]
    fn the_repeated_tail_is_cut_to_one_copy() {
        let mut text = format!("Start.\n{}", "loop line\n".repeat(300));
        cut_loop(&mut text);
        // One copy is kept (the repetition may be read from any phase of the line).
        assert_eq!(text, "Start.\nloop line");
        let mut plain = "nothing repeats here".to_string();
        cut_loop(&mut plain);
        assert_eq!(plain, "nothing repeats here");
    }
}
