//! Where the context window comes from, and remembering what was learned about it.
//!
//! In order: what this session learned from the server's behaviour (a context-length error,
//! or a prompt it silently cut), `model_context_window` in config, the window the server
//! reports it runs the model with, a window learned in an earlier session for the same
//! provider and model, the built-in table of native windows, a trained maximum the server
//! reported, and a default. Local servers rarely run a model at its native window, so a
//! running window the server reports beats the table.
//!
//! One bad number must not poison later sessions (recorded: a proxy that reported a low
//! prompt count once left a 1,024-token window in `model-windows.json`, and every later
//! session compacted on every turn). So a window learned from a refusal is kept, since the
//! server said it; one inferred from a prompt the server seemed to cut needs corroboration
//! (seen again, in this session or a later one, at about the same size) before a later
//! session uses it, and is never learned below the window the server says it runs. Every
//! remembered window expires after [`MEMORY_TTL_SECS`].

use crate::context_window::{DEFAULT_CONTEXT_WINDOW, builtin_context_window};
use oi_config::Config;
use oi_model_client::ServerWindow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a session knows about its window, besides config and the built-in table.
#[derive(Clone, Debug, Default)]
pub(crate) struct WindowKnowledge {
    /// Learned in this session from the server's behaviour; beats every other source.
    pub learned: Option<Learned>,
    /// What the server reported: `None` = not asked yet, `Some(None)` = it reports nothing.
    pub server: Option<Option<ServerWindow>>,
    /// Learned in an earlier session for this provider and model.
    pub remembered: Option<Learned>,
    /// The memory file was read (once per session).
    pub memory_read: bool,
    /// The tokens-per-estimate ratio the memory holds for this provider and model.
    pub remembered_ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Learned {
    pub tokens: i64,
    /// How it was learned, in words (see [`LearnedFrom`]).
    pub how: String,
}

/// How a window was learned from the server's behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LearnedFrom {
    /// A context-length error stated (or implied) it.
    Overflow,
    /// The server reported far fewer prompt tokens than were sent: it cut the prompt.
    SilentTruncation,
}

impl LearnedFrom {
    fn words(self) -> &'static str {
        match self {
            LearnedFrom::Overflow => "the server's context-length error",
            LearnedFrom::SilentTruncation => "the server silently cutting a prompt",
        }
    }
}

/// The window to use and where it came from.
pub(crate) fn resolve(knowledge: &WindowKnowledge, cfg: &Config) -> (i64, String) {
    if let Some(l) = &knowledge.learned {
        return (l.tokens, format!("learned from {}", l.how));
    }
    if let Some(w) = cfg.model_context_window.filter(|w| *w > 0) {
        return (w, "model_context_window in config".into());
    }
    let server = knowledge.server.as_ref().and_then(Option::as_ref);
    if let Some(s) = server.filter(|s| s.running) {
        return (s.tokens, s.source.clone());
    }
    if let Some(l) = &knowledge.remembered {
        return (
            l.tokens,
            format!(
                "remembered from an earlier session (learned from {})",
                l.how
            ),
        );
    }
    if let Some(w) = builtin_context_window(&cfg.model) {
        return (w, "built-in table (the model's native window)".into());
    }
    if let Some(s) = server {
        return (s.tokens, s.source.clone());
    }
    (
        DEFAULT_CONTEXT_WINDOW,
        "default (neither config nor the server says)".into(),
    )
}

/// Hosted APIs whose listings can be large (OpenRouter's is megabytes) and whose models run
/// at their native windows: for models the built-in table knows, they are not asked.
const HOSTED_APIS: &[&str] = &[
    "openrouter.ai",
    "api.openai.com",
    "api.moonshot.ai",
    "api.moonshot.cn",
    "api.deepseek.com",
    "api.z.ai",
    "open.bigmodel.cn",
    "api.mistral.ai",
    "api.together.xyz",
    "api.groq.com",
    "api.fireworks.ai",
];

/// Whether to ask the server for its window: always, unless it is a hosted API and the
/// table knows the model (a local server's window is what it was started with; a hosted
/// API's is the model's own).
pub(crate) fn worth_asking(cfg: &Config) -> bool {
    if builtin_context_window(&cfg.model).is_none() {
        return true;
    }
    let host = cfg
        .model_provider
        .base_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    !host.is_some_and(|h| {
        HOSTED_APIS
            .iter()
            .any(|api| h == *api || h.ends_with(&format!(".{api}")))
    })
}

impl WindowKnowledge {
    /// Record a window learned from the server's behaviour, for this session. `None` when the
    /// server's own report contradicts it: a cut below the window the server says it runs
    /// is a wrong count (a proxy's, or one of cached tokens only), not a smaller window.
    pub(crate) fn learn(&mut self, tokens: i64, from: LearnedFrom) -> Option<Learned> {
        let running = self
            .server
            .as_ref()
            .and_then(Option::as_ref)
            .filter(|s| s.running)
            .map(|s| s.tokens);
        if from == LearnedFrom::SilentTruncation && running.is_some_and(|r| tokens < r) {
            return None;
        }
        let learned = Learned {
            tokens,
            how: from.words().to_string(),
        };
        self.learned = Some(learned.clone());
        Some(learned)
    }
}

/// The file under the home directory that keeps learned windows across sessions.
const MEMORY_FILE: &str = "model-windows.json";
/// Larger files are not ours (or not sane): ignored, and rewritten on the next learning.
const MEMORY_MAX_BYTES: u64 = 256 * 1024;
/// Entries kept; the oldest go first.
const MEMORY_MAX_ENTRIES: usize = 200;

#[derive(Default, Serialize, Deserialize)]
struct Memory {
    #[serde(default)]
    windows: BTreeMap<String, MemoryEntry>,
    /// Reported tokens per estimated token (see `TokenEstimator`), per provider and model.
    #[serde(default)]
    ratios: BTreeMap<String, RatioEntry>,
}

#[derive(Serialize, Deserialize)]
struct RatioEntry {
    ratio: f64,
    at: i64,
}

#[derive(Serialize, Deserialize)]
struct MemoryEntry {
    tokens: i64,
    how: String,
    /// Unix seconds, to drop the oldest entries and let old ones expire.
    at: i64,
    /// How many times a silent cut at about this size was seen (entries written before this
    /// field existed count once: unconfirmed).
    #[serde(default = "one")]
    seen: u32,
}

fn one() -> u32 {
    1
}

/// Remembered windows are not used after this long (a server is restarted with other
/// settings; a wrong one must not last).
pub(crate) const MEMORY_TTL_SECS: i64 = 7 * 24 * 3600;
/// Tokenizer ratios are kept longer: they belong to the model, not to how it is served.
const RATIO_TTL_SECS: i64 = 30 * 24 * 3600;

impl MemoryEntry {
    /// Whether a later session may use it: learned from a refusal, or a silent cut seen at
    /// least twice; and not expired.
    fn usable(&self, now: i64) -> bool {
        let confirmed = self.how != LearnedFrom::SilentTruncation.words() || self.seen >= 2;
        self.tokens > 0 && confirmed && now - self.at <= MEMORY_TTL_SECS
    }
}

/// Which provider and model a memory entry is for: the provider's id and URL (the same id
/// may point elsewhere in another config) and the model name.
pub(crate) fn memory_key(cfg: &Config) -> String {
    format!(
        "{} {} {}",
        cfg.model_provider_id,
        cfg.model_provider.base_url.as_deref().unwrap_or(""),
        cfg.model
    )
}

fn memory_path(home: &Path) -> PathBuf {
    home.join(MEMORY_FILE)
}

/// Reads the memory file with the bounded reader (opened without blocking, a regular file
/// only: a FIFO at that name is no memory, not a wait); anything unreadable counts as empty.
fn read_memory(home: &Path) -> Memory {
    match oi_config::project_file::read_text_capped(&memory_path(home), MEMORY_MAX_BYTES) {
        Ok(text) => serde_json::from_str(&text).unwrap_or_default(),
        Err(e) => {
            if !e.is_not_found() {
                tracing::warn!("learned model windows not read: {e}");
            }
            Memory::default()
        }
    }
}

/// The window learned in an earlier session for `key`, if a later session may use it (see
/// [`MemoryEntry::usable`]).
pub(crate) fn recall(home: &Path, key: &str) -> Option<Learned> {
    let memory = read_memory(home);
    let e = memory.windows.get(key)?;
    e.usable(chrono::Utc::now().timestamp()).then(|| Learned {
        tokens: e.tokens,
        how: e.how.clone(),
    })
}

/// The tokens-per-estimate ratio an earlier session measured for `key`, if any.
pub(crate) fn recall_ratio(home: &Path, key: &str) -> Option<f64> {
    let now = chrono::Utc::now().timestamp();
    read_memory(home)
        .ratios
        .get(key)
        .filter(|e| now - e.at <= RATIO_TTL_SECS)
        .map(|e| e.ratio)
}

/// Keep `learned` for `key` (0600 file, replaced atomically, under the file's lock so two
/// writers — this session's ratio and window, or two processes — never lose each other's
/// entry). A silent cut is counted: seen again at about the same size (within a quarter)
/// it is confirmed. Best effort: a window that cannot be remembered is learned again.
pub(crate) fn remember(home: &Path, key: &str, learned: &Learned) -> std::io::Result<()> {
    update_memory(home, |memory| {
        let now = chrono::Utc::now().timestamp();
        let cut = learned.how == LearnedFrom::SilentTruncation.words();
        let seen = match memory.windows.get(key) {
            Some(e)
                if cut
                    && e.how == learned.how
                    && now - e.at <= MEMORY_TTL_SECS
                    && (e.tokens - learned.tokens).abs() * 4 <= e.tokens.max(learned.tokens) =>
            {
                e.seen.saturating_add(1)
            }
            _ => 1,
        };
        memory.windows.insert(
            key.to_string(),
            MemoryEntry {
                tokens: learned.tokens,
                how: learned.how.clone(),
                at: now,
                seen,
            },
        );
        trim_oldest(&mut memory.windows, key, |e| e.at);
    })
}

/// Keep the tokens-per-estimate `ratio` measured for `key`.
pub(crate) fn remember_ratio(home: &Path, key: &str, ratio: f64) -> std::io::Result<()> {
    update_memory(home, |memory| {
        let at = chrono::Utc::now().timestamp();
        memory
            .ratios
            .insert(key.to_string(), RatioEntry { ratio, at });
        trim_oldest(&mut memory.ratios, key, |e| e.at);
    })
}

/// Drops the oldest entries (never `keep`) beyond [`MEMORY_MAX_ENTRIES`].
fn trim_oldest<T>(map: &mut BTreeMap<String, T>, keep: &str, at: impl Fn(&T) -> i64) {
    while map.len() > MEMORY_MAX_ENTRIES {
        let oldest = map
            .iter()
            .filter(|(k, _)| k.as_str() != keep)
            .min_by_key(|(_, e)| at(e))
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => map.remove(&k),
            None => break,
        };
    }
}

/// Read, change and write the memory file under its lock (a sibling `.lock` file, as every
/// writer of the user's files does: `oi_config::edit`).
fn update_memory(home: &Path, change: impl FnOnce(&mut Memory)) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    let path = memory_path(home);
    let _lock = oi_config::edit::lock(&path)?;
    let mut memory = read_memory(home);
    change(&mut memory);
    let text = serde_json::to_string_pretty(&memory).map_err(std::io::Error::other)?;
    oi_config::edit::write_atomically(&path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(tokens: i64, running: bool) -> Option<Option<ServerWindow>> {
        Some(Some(ServerWindow {
            tokens,
            source: if running { "running" } else { "native" }.into(),
            running,
        }))
    }

    fn cfg(model: &str, configured: Option<i64>) -> Config {
        let home = tempfile::tempdir().unwrap();
        let mut c = oi_config::load_config(oi_config::ConfigLoadOptions {
            home: Some(home.path().to_path_buf()),
            ..Default::default()
        })
        .unwrap()
        .config;
        c.model = model.into();
        c.model_context_window = configured;
        c
    }

    #[test]
    fn sources_in_order() {
        let qwen = cfg("qwen2.5-coder-1.5b-instruct", None);
        let mut k = WindowKnowledge::default();
        assert_eq!(resolve(&k, &qwen).0, 32_768, "the table");
        k.server = server(100_000, false);
        assert_eq!(
            resolve(&k, &qwen).0,
            32_768,
            "a trained maximum is not the running window"
        );
        k.remembered = Some(Learned {
            tokens: 4096,
            how: "x".into(),
        });
        assert_eq!(resolve(&k, &qwen).0, 4096, "remembered beats the table");
        k.server = server(2048, true);
        let (w, source) = resolve(&k, &qwen);
        assert_eq!(
            (w, source.as_str()),
            (2048, "running"),
            "the server's running window"
        );
        assert_eq!(
            resolve(&k, &cfg("qwen2.5-coder", Some(8000))).0,
            8000,
            "config beats the server"
        );
        k.learn(1500, LearnedFrom::Overflow);
        let (w, source) = resolve(&k, &cfg("qwen2.5-coder", Some(8000)));
        assert_eq!(w, 1500, "what the server did beats config");
        assert!(source.contains("context-length error"), "{source}");
        let unknown = cfg("my-finetune", None);
        let k = WindowKnowledge {
            server: server(65_536, false),
            ..Default::default()
        };
        assert_eq!(
            resolve(&k, &unknown).0,
            65_536,
            "a trained maximum beats the default"
        );
        assert_eq!(
            resolve(&WindowKnowledge::default(), &unknown).0,
            DEFAULT_CONTEXT_WINDOW
        );
    }

    #[test]
    fn hosted_apis_are_not_asked_about_models_the_table_knows() {
        let mut c = cfg("qwen2.5-coder-7b", None);
        c.model_provider.base_url = Some("https://openrouter.ai/api/v1".into());
        assert!(!worth_asking(&c));
        c.model = "some-new-model".into();
        assert!(worth_asking(&c), "the table does not know it");
        c.model = "qwen2.5-coder-7b".into();
        c.model_provider.base_url = Some("http://gpu-box.lan:8000/v1".into());
        assert!(
            worth_asking(&c),
            "a self-hosted server runs what it was started with"
        );
        c.model_provider.base_url = Some("https://evil-openrouter.ai.example/v1".into());
        assert!(worth_asking(&c));
    }

    #[test]
    fn memory_round_trip_is_private_and_bounded() {
        let home = tempfile::tempdir().unwrap();
        assert!(recall(home.path(), "k").is_none());
        let l = Learned {
            tokens: 4096,
            how: "the server's context-length error".into(),
        };
        remember(home.path(), "k", &l).unwrap();
        assert_eq!(recall(home.path(), "k"), Some(l));
        assert!(recall(home.path(), "other").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(home.path().join(MEMORY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Garbage or an oversized file counts as empty, and is replaced by the next write.
        std::fs::write(home.path().join(MEMORY_FILE), "not json").unwrap();
        assert!(recall(home.path(), "k").is_none());
        std::fs::write(
            home.path().join(MEMORY_FILE),
            vec![b' '; MEMORY_MAX_BYTES as usize + 1],
        )
        .unwrap();
        assert!(recall(home.path(), "k").is_none());
        for i in 0..MEMORY_MAX_ENTRIES + 5 {
            remember(
                home.path(),
                &format!("k{i}"),
                &Learned {
                    tokens: 1000 + i as i64,
                    how: "x".into(),
                },
            )
            .unwrap();
        }
        assert_eq!(read_memory(home.path()).windows.len(), MEMORY_MAX_ENTRIES);
        // Ratios live beside the windows without disturbing them (the last key written is
        // surely kept, whatever second each write fell in).
        let last = format!("k{}", MEMORY_MAX_ENTRIES + 4);
        remember_ratio(home.path(), &last, 1.18).unwrap();
        assert_eq!(recall_ratio(home.path(), &last), Some(1.18));
        assert!(recall(home.path(), &last).is_some());
        assert!(recall_ratio(home.path(), "k4").is_none());
    }

    fn cut(tokens: i64) -> Learned {
        Learned {
            tokens,
            how: LearnedFrom::SilentTruncation.words().into(),
        }
    }

    /// Issue 43 item 4: one low count must not set the window of every later session.
    #[test]
    fn a_cut_seen_once_is_kept_but_not_used_until_seen_again() {
        let home = tempfile::tempdir().unwrap();
        remember(home.path(), "k", &cut(1024)).unwrap();
        assert_eq!(
            recall(home.path(), "k"),
            None,
            "one sighting is no evidence"
        );
        // Seen again at about the same size (here, in another session): confirmed.
        remember(home.path(), "k", &cut(1100)).unwrap();
        assert_eq!(recall(home.path(), "k").map(|l| l.tokens), Some(1100));
        // A cut at a very different size starts over.
        remember(home.path(), "k", &cut(6000)).unwrap();
        assert_eq!(recall(home.path(), "k"), None);
        // A refusal is the server's word: used at once.
        let refused = Learned {
            tokens: 4096,
            how: LearnedFrom::Overflow.words().into(),
        };
        remember(home.path(), "k", &refused).unwrap();
        assert_eq!(recall(home.path(), "k"), Some(refused));
    }

    #[test]
    fn remembered_windows_expire_and_old_unconfirmed_cuts_are_ignored() {
        let home = tempfile::tempdir().unwrap();
        let now = chrono::Utc::now().timestamp();
        let file = |entries: serde_json::Value| {
            std::fs::write(
                home.path().join(MEMORY_FILE),
                serde_json::json!({ "windows": entries }).to_string(),
            )
            .unwrap();
        };
        // Written before entries counted sightings: a cut of unknown standing.
        file(
            serde_json::json!({"k": {"tokens": 1024, "how": LearnedFrom::SilentTruncation.words(), "at": now}}),
        );
        assert_eq!(recall(home.path(), "k"), None);
        file(
            serde_json::json!({"k": {"tokens": 4096, "how": LearnedFrom::Overflow.words(), "at": now - MEMORY_TTL_SECS - 1}}),
        );
        assert_eq!(recall(home.path(), "k"), None, "expired");
        file(
            serde_json::json!({"k": {"tokens": 4096, "how": LearnedFrom::Overflow.words(), "at": now - 60}}),
        );
        assert_eq!(recall(home.path(), "k").map(|l| l.tokens), Some(4096));
    }

    #[test]
    fn a_cut_below_the_window_the_server_runs_is_not_learned() {
        let mut k = WindowKnowledge {
            server: server(16_384, true),
            ..Default::default()
        };
        assert_eq!(k.learn(1024, LearnedFrom::SilentTruncation), None);
        assert!(k.learned.is_none());
        // A refusal beats the report (the server may run fewer slots' worth than it lists).
        assert!(k.learn(8192, LearnedFrom::Overflow).is_some());
        // A trained maximum is no running window.
        let mut k = WindowKnowledge {
            server: server(32_768, false),
            ..Default::default()
        };
        assert!(k.learn(2048, LearnedFrom::SilentTruncation).is_some());
    }

    /// Recorded as a flaky test: the ratio written beside a learned window replaced the file
    /// read before the window was written, and the window was lost.
    #[test]
    fn concurrent_writers_keep_each_others_entries() {
        let home = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let home = home.path().to_path_buf();
                std::thread::spawn(move || {
                    for j in 0..10 {
                        let key = format!("k{i}-{j}");
                        if i % 2 == 0 {
                            remember(
                                &home,
                                &key,
                                &Learned {
                                    tokens: 4096,
                                    how: LearnedFrom::Overflow.words().into(),
                                },
                            )
                            .unwrap();
                        } else {
                            remember_ratio(&home, &key, 1.1).unwrap();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let memory = read_memory(home.path());
        assert_eq!(memory.windows.len() + memory.ratios.len(), 80);
    }
}
