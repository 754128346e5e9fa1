//! A model stuck in a loop: small models at greedy decoding can answer every tool result
//! with the very same call (seen: Qwen2.5-Coder-1.5B writing `hello.txt` with the same
//! content 20 times, until the 15-minute test timeout). The turn loop counts how many model
//! responses in a row asked for exactly the same calls; past a few, the calls are not run
//! and the model is told to answer or change course, and if it still repeats them the turn
//! ends as failed instead of running until `max_turn_steps`.

use crate::tools::call::PendingCall;
use serde_json::Value;

/// Runs of the same calls allowed in a row (a command polled a few times is fine).
pub(crate) const ALLOWED_RUNS: usize = 3;

/// What to do with a response's calls.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// Run them.
    Run,
    /// The same calls, for the `n`-th response in a row, one more than allowed: answer
    /// them with [`nudge`] instead of running them.
    Refuse(usize),
    /// Still the same after being refused: end the turn.
    Stop(usize),
}

/// The calls of the latest responses, compared by name and arguments (as JSON values, so
/// spacing and key order do not matter). Kept with a parked turn, so a loop goes on being
/// counted across the park.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct RepeatedCalls {
    last: Vec<(String, Value)>,
    times: usize,
}

impl RepeatedCalls {
    pub(crate) fn observe(&mut self, calls: &[PendingCall]) -> Repeat {
        let now: Vec<(String, Value)> = calls
            .iter()
            .map(|(_, name, args)| {
                let args =
                    serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.clone()));
                (name.clone(), args)
            })
            .collect();
        if !now.is_empty() && now == self.last {
            self.times += 1;
        } else {
            self.last = now;
            self.times = 1;
        }
        match self.times {
            n if n <= ALLOWED_RUNS => Repeat::Run,
            n if n == ALLOWED_RUNS + 1 => Repeat::Refuse(n),
            n => Repeat::Stop(n),
        }
    }
}

/// The output each refused call gets.
pub(crate) fn nudge(times: usize) -> String {
    format!(
        "not run: this is the {times}th time in a row you asked for exactly this call, and it already ran {ALLOWED_RUNS} times. Running it again changes nothing. If the task is done, stop calling tools and give your final answer; otherwise do something different."
    )
}

/// Why the turn stopped.
pub(crate) fn failure(times: usize, names: &str) -> String {
    format!(
        "stopped this turn: the model asked for the same call ({names}) {times} times in a row, even after being told it changes nothing, so it was not making progress. What the first runs did is kept; check the working directory."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> PendingCall {
        ("id".into(), name.into(), args.into())
    }

    #[test]
    fn the_same_calls_run_a_few_times_then_are_refused_then_stop_the_turn() {
        let mut r = RepeatedCalls::default();
        let write = [call("write_file", r#"{"path":"a","content":"hi"}"#)];
        // The same arguments written differently are the same call.
        let respaced = [call("write_file", r#"{ "content": "hi", "path": "a" }"#)];
        assert_eq!(r.observe(&write), Repeat::Run);
        assert_eq!(r.observe(&respaced), Repeat::Run);
        assert_eq!(r.observe(&write), Repeat::Run);
        assert_eq!(r.observe(&write), Repeat::Refuse(4));
        assert_eq!(r.observe(&write), Repeat::Stop(5));
    }

    #[test]
    fn anything_different_in_between_starts_the_count_again() {
        let mut r = RepeatedCalls::default();
        let test = [call("shell", r#"{"command":["cargo","test"]}"#)];
        let edit = [call("apply_patch", r#"{"input":"..."}"#)];
        for _ in 0..3 {
            assert_eq!(r.observe(&test), Repeat::Run);
            assert_eq!(r.observe(&edit), Repeat::Run);
        }
        // Other arguments, or one more call beside it, are progress too.
        assert_eq!(r.observe(&test), Repeat::Run);
        assert_eq!(r.observe(&test), Repeat::Run);
        let two = [test[0].clone(), edit[0].clone()];
        assert_eq!(r.observe(&two), Repeat::Run);
        assert_eq!(r.observe(&test), Repeat::Run);
    }
}
