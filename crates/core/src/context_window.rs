//! How big the model's context window is, how many tokens a request takes, and how much
//! of it one tool output may use.
//!
//! The window comes from, in order: what a context-length error taught us (the server is
//! always right), `model_context_window` in config, the built-in table of common open
//! models, what the server reports for the model, and a safe default. Token counts come from
//! the server's usage reports when there are any, else from an estimate (bytes / 4, digits
//! counted as a token each) that is scaled by how far off it was at the last report.

use oi_model_client::Prompt;
use oi_protocol::models::{ContentItem, FunctionCallOutput, ResponseItem};

/// The window assumed when nothing better is known. Small enough that most local servers
/// really have it; a bigger real window only means compacting earlier than needed, a smaller
/// one is learned from the first context-length error.
pub const DEFAULT_CONTEXT_WINDOW: i64 = 32_768;

/// Share of the window at which auto-compaction starts, when
/// `model_auto_compact_token_limit` is not set. Leaves room for the model's answer.
pub const AUTO_COMPACT_PERCENT: i64 = 85;

/// Share of the window one tool output may take (in tokens, converted to bytes).
const TOOL_OUTPUT_PERCENT: i64 = 10;
/// No tool output is cut below this, however small the window.
const TOOL_OUTPUT_MIN_BYTES: usize = 2 * 1024;

/// Built-in windows of common open models, matched as a substring of the model name's last
/// path segment, lowercased (so `Qwen/Qwen3-Coder-30B-A3B-Instruct`, `qwen3-coder:30b` and
/// `qwen3-coder-plus` all match `qwen3-coder`). First match wins: more specific names first.
/// These are the models' native windows; a server started with less is corrected by its
/// context-length error.
const WINDOW_TABLE: &[(&str, i64)] = &[
    ("qwen3-coder", 262_144),
    ("qwen3-2507", 262_144),
    ("qwen3-next", 262_144),
    ("qwen3", 40_960),
    ("qwq", 131_072),
    ("qwen2.5-coder", 32_768),
    ("qwen2.5", 32_768),
    ("glm-4.6", 202_752),
    ("glm-4.5", 131_072),
    ("glm-z1", 32_768),
    ("glm-4", 131_072),
    ("kimi-k2-0905", 262_144),
    ("kimi-k2", 131_072),
    ("kimi", 131_072),
    ("deepseek-v3", 131_072),
    ("deepseek-r1", 131_072),
    ("deepseek-coder-v2", 131_072),
    ("deepseek-chat", 131_072),
    ("deepseek-reasoner", 131_072),
    ("deepseek", 65_536),
    ("llama-4", 1_048_576),
    ("llama4", 1_048_576),
    ("llama3.1", 131_072),
    ("llama-3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama-3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.3", 131_072),
    ("llama3", 8_192),
    ("llama-3", 8_192),
    ("gpt-oss", 131_072),
    ("devstral", 131_072),
    ("codestral", 262_144),
    ("mistral-small", 131_072),
    ("mistral-medium", 131_072),
    ("mistral-large", 131_072),
    ("mixtral", 32_768),
    ("mistral", 32_768),
    ("gemma3", 131_072),
    ("gemma-3", 131_072),
    ("phi4", 16_384),
    ("phi-4", 16_384),
];

/// The built-in window of `model`, if it is a model the table knows.
pub fn builtin_context_window(model: &str) -> Option<i64> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    WINDOW_TABLE
        .iter()
        .find(|(pattern, _)| name.contains(pattern))
        .map(|(_, window)| *window)
}

/// The token count at which to compact: the configured limit when set (never above the
/// window, or compaction would come too late), else [`AUTO_COMPACT_PERCENT`] of the window.
pub fn auto_compact_limit(window: i64, configured: Option<i64>) -> i64 {
    match configured {
        Some(limit) if limit > 0 => limit.min(window),
        _ => window * AUTO_COMPACT_PERCENT / 100,
    }
}

/// The default bound on one answer: a quarter of the window, at most this. A call or an
/// answer rarely needs more (4,096 tokens is a file of some 300 lines; a bigger one is
/// written in parts, which the model is told when a call is cut off), and a model that
/// loops stops within minutes on a slow machine instead of ten (recorded at 8,192 on two
/// cores). Repetition is also stopped earlier by the client.
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: i64 = 4096;
/// The bound never goes below this, so a nearly full window still leaves room for an answer
/// (the server then refuses or compacts, which is better than a one-word answer).
const MIN_OUTPUT_TOKENS: i64 = 256;

/// `max_tokens` for a request of `prompt_tokens` in `window`: `model_max_output_tokens`
/// when set (0: no bound), else a quarter of the window up to
/// [`DEFAULT_MAX_OUTPUT_TOKENS`]; never more than the window leaves after the prompt.
/// Without a bound a small model that starts reciting generates for minutes.
pub(crate) fn output_token_bound(
    configured: Option<i64>,
    window: i64,
    prompt_tokens: i64,
) -> Option<u32> {
    let wanted = match configured {
        Some(0) => return None,
        Some(n) if n > 0 => n,
        _ => (window / 4).clamp(MIN_OUTPUT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS),
    };
    let room = (window - prompt_tokens).max(MIN_OUTPUT_TOKENS);
    u32::try_from(wanted.min(room)).ok()
}

/// The answer bound of a question's requests under the `minimal` profile (the smallest
/// models), unless `model_max_output_tokens` is set. Recorded on the real tier: "which file
/// defines load_settings?" drew two answers of 4,096 tokens at 10 tokens/s, neither a loop
/// the detector stops, and the run never answered within ten minutes. A question's answer,
/// or the command that finds it, fits in far less.
pub(crate) const QUESTION_OUTPUT_TOKENS: u32 = 1024;

/// [`output_token_bound`], tightened to [`QUESTION_OUTPUT_TOKENS`] for a question under the
/// `minimal` profile when nothing is configured.
pub(crate) fn answer_token_bound(
    bound: Option<u32>,
    configured: Option<i64>,
    minimal: bool,
    question: bool,
) -> Option<u32> {
    match bound {
        Some(b) if configured.is_none() && minimal && question => {
            Some(b.min(QUESTION_OUTPUT_TOKENS))
        }
        other => other,
    }
}

/// Tokens for text of `size` (see [`text_size`]): size / 4, rounded up. Close for English
/// and code with the tokenizers of the common open models; corrected by [`TokenEstimator`].
pub(crate) fn estimate_tokens(size: usize) -> i64 {
    (size as i64 + 3) / 4
}

/// The size of `text` as the token estimate counts it: its bytes, each ASCII digit as four.
/// Qwen's and DeepSeek's tokenizers give every digit its own token (Llama 3's one per three),
/// so a list of numbers takes four times the tokens its bytes suggest; counted as plain
/// bytes, a summary full of numbers once put a request 25% past the window the estimate had
/// allowed. Other text is left at bytes: it errs on the side of more tokens.
pub(crate) fn text_size(text: &str) -> usize {
    text.len() + 3 * text.bytes().filter(u8::is_ascii_digit).count()
}

/// Size (see [`text_size`]) of a request as the server will see it: instructions, every
/// item and every tool schema, serialized. Serializing is what the client does anyway; this
/// is the same order of cost, paid once per request.
pub(crate) fn prompt_size(prompt: &Prompt) -> usize {
    let items = serde_json::to_string(&prompt.input).map_or(0, |s| text_size(&s));
    let tools = serde_json::to_string(&prompt.tools).map_or(0, |s| text_size(&s));
    text_size(&prompt.instructions) + items + tools
}

/// The request's plain size in bytes (see [`prompt_size`], without counting digits as
/// tokens): what [`TokenEstimator::least_tokens`] reads.
pub(crate) fn plain_prompt_size(prompt: &Prompt) -> usize {
    let items = serde_json::to_string(&prompt.input).map_or(0, |s| s.len());
    let tools = serde_json::to_string(&prompt.tools).map_or(0, |s| s.len());
    prompt.instructions.len() + items + tools
}

/// Turns request sizes into token counts, learning from the server's reports how far the
/// bytes/4 estimate is off for this model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenEstimator {
    /// Reported tokens per estimated token, from the last report. Starts at 1.
    ratio: f64,
    /// The highest ratio reported (0: none yet). A server that cuts prompts reports low
    /// ratios, never high ones, so this is the reference for telling a cut prompt from a
    /// dense tokenizer.
    peak: f64,
}

impl Default for TokenEstimator {
    fn default() -> Self {
        Self {
            ratio: 1.0,
            peak: 0.0,
        }
    }
}

impl TokenEstimator {
    /// Estimated tokens of a request of `size` (see [`text_size`]).
    pub(crate) fn tokens(&self, size: usize) -> i64 {
        (estimate_tokens(size) as f64 * self.ratio).ceil() as i64
    }

    /// The estimate with the highest ratio seen: what an uncut prompt of `size` would be
    /// counted at, at most.
    pub(crate) fn uncut_tokens(&self, size: usize) -> i64 {
        let ratio = if self.peak > 0.0 {
            self.peak
        } else {
            self.ratio
        };
        (estimate_tokens(size) as f64 * ratio).ceil() as i64
    }

    /// The fewest tokens a request of `plain_bytes` (see [`plain_prompt_size`]) can be
    /// counted at, uncut: its bytes / 4 at the highest ratio seen.
    pub(crate) fn least_tokens(&self, plain_bytes: usize) -> i64 {
        self.uncut_tokens(plain_bytes)
    }

    /// The size (see [`text_size`]) of text that makes about `tokens` tokens; as many plain
    /// bytes of text make at least that many.
    pub(crate) fn size_for(&self, tokens: i64) -> usize {
        (tokens.max(0) as f64 * 4.0 / self.ratio).ceil() as usize
    }

    /// The ratio reports have shown so far (1 before any).
    pub(crate) fn ratio(&self) -> f64 {
        self.ratio
    }

    /// Start from a ratio an earlier session measured for this model, so the first request
    /// of a resumed thread is not judged with the bare bytes/4 guess.
    pub(crate) fn seed(&mut self, ratio: f64) {
        if (0.25..=4.0).contains(&ratio) {
            self.ratio = ratio;
        }
    }

    /// The server said a request of `size` (see [`text_size`]) took `reported` input
    /// tokens. Absurd ratios (a server reporting 0 or cached-only counts) are ignored.
    pub(crate) fn observe(&mut self, size: usize, reported: i64) {
        let raw = estimate_tokens(size);
        if raw <= 0 || reported <= 0 {
            return;
        }
        let ratio = reported as f64 / raw as f64;
        if (0.25..=4.0).contains(&ratio) {
            self.ratio = ratio;
            self.peak = self.peak.max(ratio);
        }
    }

    /// After the server was caught cutting prompts, the last reports were of cut prompts:
    /// estimate with the highest ratio seen, so requests are not underestimated.
    pub(crate) fn distrust_low_reports(&mut self) {
        if self.peak > 0.0 {
            self.ratio = self.peak;
        }
    }
}

/// Prompts smaller than this are never judged cut: a small prompt's token count depends
/// too much on the tokenizer for the comparison to mean anything.
const SILENT_CUT_MIN_TOKENS: i64 = 2048;
/// The server counted less than this share of the prompt's estimated tokens: it cut the
/// prompt (Ollama drops the oldest messages rather than refuse). Tokenizers differ from the
/// estimate by well under 2x on text and code.
const SILENT_CUT_PERCENT: i64 = 50;
/// A cut-off answer whose prompt and output fill this share of the window ran out of
/// window, not out of output budget.
const CONTEXT_FULL_PERCENT: i64 = 95;

/// What a completed response says about the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowSignal {
    /// The server reported `used` prompt tokens where about `sent` were sent: it cut the
    /// prompt to a window smaller than ours instead of refusing it.
    SilentTruncation { sent: i64, used: i64, output: i64 },
    /// The answer was cut off because prompt and answer filled the window (`used` tokens).
    ContextFull { used: i64 },
}

/// Judges a completed response: `estimated_prompt` is our estimate of the request's tokens
/// (before learning from this response), `least_prompt` the fewest tokens the request can
/// take (digits counted as plain bytes: Llama 3's and gpt-oss's tokenizers put three in a
/// token, and a tool output full of numbers once made the estimate 2.6 times the server's
/// count, which read as a cut prompt), `usage` what the server reported, `truncated`
/// whether it stopped at a length limit, `max_output` the bound the request carried.
/// `has_images`: the estimate counts image bytes, so it cannot be compared.
pub(crate) fn window_signal(
    estimated_prompt: i64,
    least_prompt: i64,
    usage: Option<&oi_protocol::models::TokenUsage>,
    truncated: bool,
    window: i64,
    max_output: Option<u32>,
    has_images: bool,
) -> Option<WindowSignal> {
    // The decoders report the whole prompt as `input_tokens`, the cached part included (the
    // Messages wire adds Anthropic's cache counts back in). Chat proxies in front of
    // Anthropic-style servers leave the cached part out: a cached count above the input
    // count can only mean that. Below it, the input count alone is at least half the
    // prompt either way, which the 50% check never takes for a cut; adding the two there
    // would double a whole prompt and hide a real cut behind a cache hit.
    let counted = usage.map(|u| {
        let cached = u.cached_input_tokens.max(0);
        if cached > u.input_tokens {
            u.input_tokens + cached
        } else {
            u.input_tokens
        }
    });
    if let (Some(u), Some(counted)) = (usage, counted)
        && !has_images
        && u.input_tokens > 0
        && least_prompt >= SILENT_CUT_MIN_TOKENS
        && counted * 100 < least_prompt * SILENT_CUT_PERCENT
    {
        return Some(WindowSignal::SilentTruncation {
            sent: estimated_prompt,
            used: u.input_tokens,
            output: u.output_tokens.max(0),
        });
    }
    // llama.cpp's Responses endpoint says "completed" for an answer the full window cut:
    // prompt and answer adding up to the whole window say it instead.
    let filled =
        usage.is_some_and(|u| u.input_tokens > 0 && u.input_tokens + u.output_tokens >= window);
    if !truncated && !filled {
        return None;
    }
    let used = match usage {
        Some(u) if u.input_tokens > 0 => u.input_tokens + u.output_tokens.max(0),
        _ => estimated_prompt + i64::from(max_output?),
    };
    (used * 100 >= window * CONTEXT_FULL_PERCENT).then_some(WindowSignal::ContextFull { used })
}

/// Bytes one tool output may take in a request to a model with `window` tokens: a share of
/// the window, at least [`TOOL_OUTPUT_MIN_BYTES`], at most `configured_max`
/// (`tool_output_max_bytes`).
pub fn tool_output_budget(window: i64, configured_max: usize) -> usize {
    let share = (window.max(0) * TOOL_OUTPUT_PERCENT / 100 * 4) as usize;
    share.max(TOOL_OUTPUT_MIN_BYTES).min(configured_max.max(1))
}

/// `output` cut to `budget` bytes head + tail, with a note on what was left out and how to
/// get at it. Unchanged when it fits. Only the copy sent to the model is cut: history and
/// the rollout keep the whole output.
pub(crate) fn budget_tool_output(
    output: &FunctionCallOutput,
    budget: usize,
) -> Option<FunctionCallOutput> {
    let text_bytes: usize = output
        .content
        .iter()
        .map(|c| match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => text.len(),
            ContentItem::InputImage { .. } => 0,
        })
        .sum();
    if text_bytes <= budget {
        return None;
    }
    let text = output.text_content();
    let mut cut = oi_protocol::truncate::truncate_head_tail(&text, budget);
    cut.push_str(
        "\n[output shortened to fit the model's context window; the full output is kept in the thread's history. To see a part of it, run the command again through `head`, `tail`, `sed -n` or `grep`.]",
    );
    Some(FunctionCallOutput {
        content: vec![ContentItem::InputText { text: cut }],
        success: output.success,
    })
}

/// Apply [`budget_tool_output`] to every tool output in `items`.
pub(crate) fn budget_tool_outputs(items: &mut [ResponseItem], budget: usize) {
    for item in items {
        if let ResponseItem::FunctionCallOutput { output, .. } = item
            && let Some(cut) = budget_tool_output(output, budget)
        {
            *output = cut;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn output_bound_fits_the_window() {
        // Default: a quarter of the window, at most 4096 (issue 43: a loop at 8192 ran for ten
        // minutes on two cores).
        assert_eq!(output_token_bound(None, 16_384, 1_000), Some(4_096));
        assert_eq!(output_token_bound(None, 262_144, 1_000), Some(4_096));
        assert_eq!(output_token_bound(None, 8_192, 1_000), Some(2_048));
        // Never more than the window leaves, never less than 256.
        assert_eq!(output_token_bound(None, 16_384, 14_000), Some(2_384));
        assert_eq!(output_token_bound(None, 16_384, 16_300), Some(256));
        // Configured: as set (bounded by the room), 0 sends none.
        assert_eq!(output_token_bound(Some(1_000), 16_384, 1_000), Some(1_000));
        assert_eq!(
            output_token_bound(Some(100_000), 16_384, 1_000),
            Some(15_384)
        );
        assert_eq!(output_token_bound(Some(0), 16_384, 1_000), None);
        // A question under `minimal`, nothing configured: the tighter bound.
        assert_eq!(
            answer_token_bound(Some(4_096), None, true, true),
            Some(1_024)
        );
        assert_eq!(answer_token_bound(Some(512), None, true, true), Some(512));
        assert_eq!(
            answer_token_bound(Some(4_096), None, true, false),
            Some(4_096)
        );
        assert_eq!(
            answer_token_bound(Some(4_096), None, false, true),
            Some(4_096)
        );
        assert_eq!(
            answer_token_bound(Some(8_000), Some(8_000), true, true),
            Some(8_000)
        );
        assert_eq!(answer_token_bound(None, Some(0), true, true), None);
    }

    use super::*;

    fn usage(input: i64, output: i64) -> oi_protocol::models::TokenUsage {
        oi_protocol::models::TokenUsage {
            input_tokens: input,
            output_tokens: output,
            total_tokens: input + output,
            ..Default::default()
        }
    }

    #[test]
    fn a_prompt_the_server_cut_is_recognised() {
        // Ollama with num_ctx 4096 kept 3,900 of ~9,000 tokens.
        assert_eq!(
            window_signal(
                9_000,
                9_000,
                Some(&usage(3_900, 100)),
                false,
                32_768,
                None,
                false
            ),
            Some(WindowSignal::SilentTruncation {
                sent: 9_000,
                used: 3_900,
                output: 100
            })
        );
        // A tokenizer denser than the estimate is not a cut; nor is a small prompt, a
        // prompt with images, or a server that reports no usage.
        assert_eq!(
            window_signal(
                9_000,
                9_000,
                Some(&usage(6_000, 10)),
                false,
                32_768,
                None,
                false
            ),
            None
        );
        assert_eq!(
            window_signal(
                1_500,
                1_500,
                Some(&usage(300, 10)),
                false,
                32_768,
                None,
                false
            ),
            None
        );
        assert_eq!(
            window_signal(
                9_000,
                9_000,
                Some(&usage(300, 10)),
                false,
                32_768,
                None,
                true
            ),
            None
        );
        assert_eq!(
            window_signal(9_000, 9_000, None, false, 32_768, None, false),
            None
        );
    }

    #[test]
    fn cached_counts_are_read_by_who_sent_them() {
        let cached = |input: i64, cached: i64| oi_protocol::models::TokenUsage {
            cached_input_tokens: cached,
            ..usage(input, 10)
        };
        let signal = |u| window_signal(9_000, 9_000, Some(&u), false, 32_768, None, false);
        // A proxy that leaves the cached part out of the input: a hit, not a cut.
        assert_eq!(signal(cached(200, 8_800)), None);
        // The whole prompt with its cached part (OpenAI's way, and what the Messages
        // decoder reports): a server that kept 3,000 tokens, all from the cache, cut it.
        assert!(matches!(
            signal(cached(3_000, 3_000)),
            Some(WindowSignal::SilentTruncation { used: 3_000, .. })
        ));
    }

    #[test]
    fn a_full_window_is_not_an_output_limit() {
        // 2048-token window: a 1,700-token prompt and 340 tokens of answer filled it.
        assert_eq!(
            window_signal(
                1_700,
                1_700,
                Some(&usage(1_700, 340)),
                true,
                2_048,
                Some(348),
                false
            ),
            Some(WindowSignal::ContextFull { used: 2_040 })
        );
        // Without usage, the estimate and the bound tell the same.
        assert_eq!(
            window_signal(1_700, 1_700, None, true, 2_048, Some(348), false),
            Some(WindowSignal::ContextFull { used: 2_048 })
        );
        // Cut off far from the window: the output bound, not the window.
        assert_eq!(
            window_signal(
                1_000,
                1_000,
                Some(&usage(1_000, 512)),
                true,
                16_384,
                Some(512),
                false
            ),
            None
        );
        // Not cut off at all.
        assert_eq!(
            window_signal(
                1_700,
                1_700,
                Some(&usage(1_700, 340)),
                false,
                2_048,
                Some(348),
                false
            ),
            None
        );
        // Not flagged, but prompt and answer are the whole window (llama.cpp, Responses).
        assert_eq!(
            window_signal(
                1_700,
                1_700,
                Some(&usage(1_778, 270)),
                false,
                2_048,
                Some(348),
                false
            ),
            Some(WindowSignal::ContextFull { used: 2_048 })
        );
    }

    #[test]
    fn table_matches_common_open_model_names() {
        for (name, window) in [
            ("qwen3-coder:30b", 262_144),
            ("Qwen/Qwen3-Coder-30B-A3B-Instruct", 262_144),
            ("qwen3:8b", 40_960),
            ("qwen2.5-coder:7b", 32_768),
            ("zai-org/GLM-4.6", 202_752),
            ("glm-4.5-air", 131_072),
            ("moonshotai/Kimi-K2-Instruct", 131_072),
            ("deepseek-ai/DeepSeek-V3.1", 131_072),
            ("llama3.1:8b", 131_072),
            ("llama3:8b", 8_192),
            ("openai/gpt-oss-20b", 131_072),
            ("gpt-oss:120b", 131_072),
            ("devstral:24b", 131_072),
            ("mistral:7b", 32_768),
        ] {
            assert_eq!(builtin_context_window(name), Some(window), "{name}");
        }
        assert_eq!(builtin_context_window("my-own-finetune"), None);
    }

    #[test]
    fn auto_compact_limit_defaults_to_a_share_and_never_exceeds_the_window() {
        assert_eq!(auto_compact_limit(10_000, None), 8_500);
        assert_eq!(auto_compact_limit(10_000, Some(6_000)), 6_000);
        assert_eq!(auto_compact_limit(10_000, Some(50_000)), 10_000);
        assert_eq!(auto_compact_limit(10_000, Some(0)), 8_500);
    }

    #[test]
    fn estimate_is_bytes_over_four_and_follows_the_last_report() {
        let mut e = TokenEstimator::default();
        assert_eq!(e.tokens(4000), 1000);
        assert_eq!(e.tokens(1), 1);
        // The server counted twice as many tokens as we guessed: later guesses follow.
        e.observe(4000, 2000);
        assert_eq!(e.tokens(8000), 4000);
        // Nonsense reports do not move it.
        e.observe(4000, 0);
        e.observe(4000, 1_000_000);
        assert_eq!(e.tokens(8000), 4000);
        e.observe(4000, 1000);
        assert_eq!(e.tokens(8000), 2000);
    }

    #[test]
    fn digits_count_as_a_token_each() {
        // What Qwen2.5's tokenizer (llama-server /tokenize) makes of these: 28 tokens for a
        // list of numbers, 7 for an English phrase of 37 bytes.
        let numbers = "0, 7, 14, 21, 28, 35, 42, 49";
        assert_eq!(estimate_tokens(text_size(numbers)), 18);
        assert_eq!(
            estimate_tokens(numbers.len()),
            7,
            "plain bytes/4 was four times low"
        );
        let words = "the build on machine passed its tests";
        assert_eq!(text_size(words), words.len());
    }

    #[test]
    fn tool_output_budget_scales_with_the_window() {
        assert_eq!(tool_output_budget(6_000, 32 * 1024), 2_400);
        assert_eq!(tool_output_budget(1_000, 32 * 1024), 2 * 1024);
        assert_eq!(tool_output_budget(32_768, 32 * 1024), 13_104);
        assert_eq!(tool_output_budget(262_144, 32 * 1024), 32 * 1024);
    }

    #[test]
    fn long_outputs_keep_head_and_tail_with_a_note() {
        let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let out = FunctionCallOutput::text(text.clone(), true);
        let cut = budget_tool_output(&out, 2048).expect("cut");
        let t = cut.text_content();
        assert!(t.starts_with("line 0\n"), "{t}");
        assert!(t.contains("line 1999"), "{t}");
        assert!(t.contains("bytes omitted"), "{t}");
        assert!(t.contains("full output is kept"), "{t}");
        assert!(t.len() < 2048 + 400, "{}", t.len());
        assert_eq!(cut.success, Some(true));
        assert!(budget_tool_output(&FunctionCallOutput::text("short", true), 2048).is_none());

        let mut items = vec![
            ResponseItem::user_text(text.clone()),
            ResponseItem::FunctionCallOutput {
                call_id: "c".into(),
                output: out,
            },
        ];
        budget_tool_outputs(&mut items, 2048);
        assert_eq!(items[0].message_text().as_deref(), Some(text.as_str()));
        assert!(
            matches!(&items[1], ResponseItem::FunctionCallOutput { output, .. } if output.text_content().len() < 3000)
        );
    }
}
