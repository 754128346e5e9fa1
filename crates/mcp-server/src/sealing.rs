//! Sealed handles: what the server gives a 2026-07-28 client to hold and hand back — the
//! `requestState` of an approval asked as a multi round-trip request, and a task's id — and
//! the key that seals them.
//!
//! A handle says where a turn is (thread, turn, park…), signed with HMAC-SHA256 (rmcp's
//! request-state codec) under a key every server of a fleet shares, so whichever server the
//! client's next request reaches can trust it with no session and nothing kept in memory.
//! Handles are signed, not encrypted: they carry ids the client knows anyway, never a
//! secret. Each names the principal it was given to (who the transport let in: the user of a
//! stdio server, the holders of a listener's bearer token) and what it is for; opening one
//! checks, in order, the signature (forged, changed, or sealed under another key), the
//! expiry, the principal and the request it belongs to, each failure with its own message.
//!
//! The key: `OI_MCP_STATE_KEY` (the key itself), else the file `mcp_state_key_file` of the
//! user config names, else `$OPENINTERPRETER_HOME/mcp-state-key`, made (random, 0600) when
//! there is none. At least 32 bytes; never logged.

use oi_protocol::ThreadId;
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The environment variable holding the key itself (overrides the file).
pub const KEY_ENV: &str = "OI_MCP_STATE_KEY";

/// The key file made in the home when none is configured.
pub const KEY_FILE: &str = "mcp-state-key";

/// Shortest key accepted (the codec's minimum).
pub const MIN_KEY_LEN: usize = RequestStateCodec::MIN_KEY_LENGTH;

/// How long a task id stays valid after the task was created.
pub const TASK_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Where the key came from (for the log line at start; never the key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// The `OI_MCP_STATE_KEY` environment variable.
    Env,
    /// The configured `mcp_state_key_file`.
    File(PathBuf),
    /// The home's key file, made now.
    Made(PathBuf),
    /// The home's key file, made earlier.
    Home(PathBuf),
    /// A key of this process alone (tests, or a server that serves no 2026-07-28 handle
    /// across restarts).
    Ephemeral,
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Env => write!(f, "${KEY_ENV}"),
            KeySource::File(p) => write!(f, "{} (mcp_state_key_file)", p.display()),
            KeySource::Made(p) => write!(f, "{} (made now)", p.display()),
            KeySource::Home(p) => write!(f, "{}", p.display()),
            KeySource::Ephemeral => f.write_str("a key of this process"),
        }
    }
}

/// Why the sealing key could not be had. The text says what to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// `OI_MCP_STATE_KEY` is set, but too short.
    #[error(
        "{KEY_ENV} holds {len} bytes; the key that seals MCP request states and task ids must be at least {MIN_KEY_LEN} (e.g. export {KEY_ENV}=$(openssl rand -hex 32))"
    )]
    EnvTooShort {
        /// The variable's length in bytes.
        len: usize,
    },
    /// The configured key file cannot be used.
    #[error("mcp_state_key_file {}: {problem}", path.display())]
    File {
        /// The configured file.
        path: PathBuf,
        /// What is wrong with it.
        problem: FileProblem,
    },
    /// The config (or the home) cannot be read.
    #[error("{0}")]
    Config(String),
    /// The home's key file cannot be made.
    #[error(
        "cannot keep the key that seals MCP request states in {}: {problem}; make its folder writable, or set mcp_state_key_file or {KEY_ENV}",
        path.display()
    )]
    Make {
        /// The key file it would be.
        path: PathBuf,
        /// Why it cannot be made.
        problem: String,
    },
    /// No key was loaded for this home when the server started.
    #[error(
        "no state key was loaded for {} (a server loads it at start: oi_mcp_server::check_state_key)",
        home.display()
    )]
    NotLoaded {
        /// The home asked for.
        home: PathBuf,
    },
}

/// Why a key file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileProblem {
    /// It cannot be read (the system's reason).
    #[error("{0}; the file holds the key every server of the fleet shares")]
    Unreadable(String),
    /// Others may read or change it.
    #[error(
        "other users may read or change it (mode {mode:o}); make it private: chmod 600 {}",
        path.display()
    )]
    NotPrivate {
        /// Its permission bits.
        mode: u32,
        /// The file.
        path: PathBuf,
    },
    /// It holds no key long enough.
    #[error(
        "the file holds no usable key (at least {MIN_KEY_LEN} bytes of text, e.g. openssl rand -hex 32 > FILE)"
    )]
    NoKey,
}

impl KeyError {
    /// Whether the user configured the key (so a failure is theirs to fix before serving),
    /// rather than the server failing to make its own.
    pub fn is_configured(&self) -> bool {
        matches!(
            self,
            KeyError::EnvTooShort { .. } | KeyError::File { .. } | KeyError::Config(_)
        )
    }
}

/// The sealing key. Its `Debug` never shows it.
#[derive(Clone)]
pub struct StateKey {
    codec: RequestStateCodec,
    /// Where it came from.
    pub source: KeySource,
}

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateKey")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl StateKey {
    /// A key from `bytes`; `None` when they are fewer than [`MIN_KEY_LEN`].
    pub fn new(bytes: &[u8], source: KeySource) -> Option<Self> {
        let codec = RequestStateCodec::try_new(bytes.to_vec()).ok()?;
        Some(Self { codec, source })
    }

    /// A random key of this process alone (no file is read).
    pub fn ephemeral() -> Self {
        // 64 bytes: over the minimum, so the unchecked constructor is the checked one.
        let codec = RequestStateCodec::new_unchecked(random_hex().into_bytes());
        Self {
            codec,
            source: KeySource::Ephemeral,
        }
    }
}

/// Loads the key of the server whose home is `home` (see the module's doc), making the
/// home's key file if needed. Blocking: reads (and may write) files.
pub fn load_key(home: &Path) -> Result<StateKey, KeyError> {
    let short = |len| KeyError::EnvTooShort { len };
    if let Ok(value) = std::env::var(KEY_ENV)
        && !value.trim().is_empty()
    {
        let key = value.trim();
        return StateKey::new(key.as_bytes(), KeySource::Env).ok_or(short(key.len()));
    }
    let configured =
        oi_config::mcp_state_key_file(home).map_err(|e| KeyError::Config(e.to_string()))?;
    if let Some(path) = configured {
        let file_error = |problem: FileProblem| KeyError::File {
            path: path.clone(),
            problem,
        };
        let key = read_key_file(&path, true)
            .map_err(file_error)?
            .ok_or_else(|| file_error(FileProblem::NoKey))?;
        return StateKey::new(key.as_bytes(), KeySource::File(path.clone()))
            .ok_or_else(|| file_error(FileProblem::NoKey));
    }
    let path = home.join(KEY_FILE);
    let make_error = |problem: String| KeyError::Make {
        path: path.clone(),
        problem,
    };
    if let Some(key) = read_key_file(&path, false).map_err(|e| make_error(e.to_string()))?
        && let Some(key) = StateKey::new(key.as_bytes(), KeySource::Home(path.clone()))
    {
        return Ok(key);
    }
    let key = make_key_file(home, &path).map_err(|e| make_error(e.to_string()))?;
    StateKey::new(key.as_bytes(), KeySource::Made(path.clone()))
        .ok_or_else(|| make_error("the key made is too short".into()))
}

/// The keys loaded in this process, by home.
fn keys() -> &'static Mutex<HashMap<PathBuf, Arc<StateKey>>> {
    static KEYS: OnceLock<Mutex<HashMap<PathBuf, Arc<StateKey>>>> = OnceLock::new();
    KEYS.get_or_init(Mutex::default)
}

/// [`load_key`], once per home per process: every connection's service shares it. Blocking
/// the first time; servers call it at start ([`crate::check_state_key`]).
pub fn shared_key(home: &Path) -> Result<Arc<StateKey>, KeyError> {
    if let Some(key) = loaded_key(home) {
        return Ok(key);
    }
    let key = Arc::new(load_key(home)?);
    tracing::info!(
        "MCP request states and task ids are sealed with {}",
        key.source
    );
    keys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(home.to_path_buf(), key.clone());
    Ok(key)
}

/// The key [`shared_key`] loaded for `home`, if it did (never reads a file).
pub fn loaded_key(home: &Path) -> Option<Arc<StateKey>> {
    keys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(home)
        .cloned()
}

/// The key in `path`: `None` when there is no file (or, for the home's own file, one that
/// is not private or holds no usable key: it is then made anew). A configured file others
/// can read is refused: the key would not be secret.
fn read_key_file(path: &Path, configured: bool) -> Result<Option<String>, FileProblem> {
    use std::os::unix::fs::MetadataExt;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !configured => return Ok(None),
        Err(e) => return Err(FileProblem::Unreadable(e.to_string())),
    };
    if meta.mode() & 0o077 != 0 {
        if configured {
            return Err(FileProblem::NotPrivate {
                mode: meta.mode() & 0o777,
                path: path.to_path_buf(),
            });
        }
        tracing::warn!(
            "{} is not private (mode 0600); a new key replaces it",
            path.display()
        );
        return Ok(None);
    }
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_string(&mut text));
    if let Err(e) = read {
        if configured {
            return Err(FileProblem::Unreadable(e.to_string()));
        }
        return Ok(None);
    }
    let key = text.trim();
    let usable = key.len() >= MIN_KEY_LEN && key.len() < 4096;
    Ok(usable.then(|| key.to_string()))
}

/// 244 random bits from the OS's source (two version-4 UUIDs, whose 122 bits each are
/// `getrandom`'s), as 64 hex digits: no file to open, so no error and nothing blocking.
fn random_hex() -> String {
    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    format!("{}{}", hex::encode(a.as_bytes()), hex::encode(b.as_bytes()))
}

/// Makes the home's key file: a new random key, written 0600 through a temporary file and a
/// link, so no one sees it half-written; when another process made one first, that one is
/// used.
fn make_key_file(home: &Path, path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    oi_config::owner_only::create_dir_all(home)?;
    let key = random_hex();
    let tmp = home.join(format!(".{KEY_FILE}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(key.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()?;
    drop(file);
    // A file left too open is replaced; a private one another process just made wins.
    if std::fs::symlink_metadata(path).is_ok() {
        if let Ok(Some(theirs)) = read_key_file(path, false) {
            let _ = std::fs::remove_file(&tmp);
            return Ok(theirs);
        }
        std::fs::rename(&tmp, path)?;
        return Ok(key);
    }
    match std::fs::hard_link(&tmp, path) {
        Ok(()) => {
            let _ = std::fs::remove_file(&tmp);
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(&tmp);
            read_key_file(path, false)
                .map_err(std::io::Error::other)?
                .ok_or_else(|| {
                    std::io::Error::other("another process is writing the key file; try again")
                })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

// ---------------------------------------------------------------- handles

/// Where an approval asked as a multi round-trip request stands: the `requestState` of its
/// `input_required` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalState {
    /// The thread of the parked turn.
    pub thread: ThreadId,
    /// The parked turn.
    pub turn: String,
    /// The park the approvals belong to.
    pub park: String,
    /// The ids of the requests the park waits for, in order: the `inputRequests` keys name
    /// them by position.
    pub requests: Vec<String>,
}

/// What a task id stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskHandle {
    /// The thread the task's turn runs on.
    pub thread: ThreadId,
    /// The task's turn.
    pub turn: String,
    /// When the task was created (unix milliseconds).
    pub created_at_ms: i64,
    /// The `tools/call` request that created it (for the approvals' correlation keys).
    pub call: String,
}

/// What a sealed handle holds besides its body.
#[derive(Serialize, Deserialize)]
struct Sealed<T> {
    /// `approval` or `task`: one is never taken for the other.
    kind: String,
    /// Who it was given to.
    principal: String,
    /// The request it belongs to (approvals: a digest of the tool call), else empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    request: String,
    #[serde(flatten)]
    body: T,
}

/// Why a handle was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Not a handle of ours at all, forged, changed, or sealed under another key.
    Forged,
    /// Valid, but past its expiry.
    Expired,
    /// Given to another principal.
    OtherPrincipal,
    /// Given for another request.
    OtherRequest,
}

/// Seals and opens the handles of one principal's requests.
#[derive(Clone, Debug)]
pub struct Sealer {
    key: Arc<StateKey>,
    principal: String,
}

const APPROVAL: &str = "approval";
const TASK: &str = "task";
const ADDED: &str = "added";

/// The state of a request to an added tool or prompt ([`crate::additions`]).
#[derive(Serialize, Deserialize)]
struct AddedState<T> {
    state: T,
}

impl Sealer {
    /// The sealer of `principal`'s handles with `key`.
    pub fn new(key: Arc<StateKey>, principal: impl Into<String>) -> Self {
        Self {
            key,
            principal: principal.into(),
        }
    }

    /// The principal whose handles these are.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    fn seal<T: Serialize>(&self, kind: &str, request: &str, body: &T, ttl: Duration) -> String {
        let sealed = Sealed {
            kind: kind.to_string(),
            principal: self.principal.clone(),
            request: request.to_string(),
            body,
        };
        // Serializing plain ids cannot fail; an empty payload would be refused on open.
        let payload = serde_json::to_vec(&sealed).unwrap_or_default();
        self.key
            .codec
            .seal_with(&payload, &SealOptions::new().ttl(ttl))
    }

    fn open<T: DeserializeOwned>(
        &self,
        kind: &str,
        request: &str,
        sealed: &str,
    ) -> Result<T, OpenError> {
        let payload = self.key.codec.open(sealed).map_err(|e| match e {
            RequestStateError::Expired => OpenError::Expired,
            _ => OpenError::Forged,
        })?;
        let opened: Sealed<T> = serde_json::from_slice(&payload).map_err(|_| OpenError::Forged)?;
        if opened.kind != kind {
            return Err(OpenError::Forged);
        }
        if opened.principal != self.principal {
            return Err(OpenError::OtherPrincipal);
        }
        if opened.request != request {
            return Err(OpenError::OtherRequest);
        }
        Ok(opened.body)
    }

    /// The `requestState` of `state`, for the tool call whose digest is `call`, valid for
    /// `ttl` (as long as the park waits).
    pub fn seal_approval(&self, state: &ApprovalState, call: &str, ttl: Duration) -> String {
        self.seal(APPROVAL, call, state, ttl)
    }

    /// The approval state sealed in `sealed` for the call whose digest is `call`, or why it is not one.
    pub fn open_approval(&self, sealed: &str, call: &str) -> Result<ApprovalState, OpenError> {
        self.open(APPROVAL, call, sealed)
    }

    /// A task id for `task`, valid for [`TASK_TTL`].
    pub fn seal_task(&self, task: &TaskHandle) -> String {
        self.seal(TASK, "", task, TASK_TTL)
    }

    /// The task a task id stands for, or why it is not one of this principal's.
    pub fn open_task(&self, sealed: &str) -> Result<TaskHandle, OpenError> {
        self.open(TASK, "", sealed)
    }

    /// The `requestState` of a request to an added tool or prompt (`request`: what it is
    /// bound to), valid for `ttl`.
    pub fn seal_added<T: Serialize>(&self, request: &str, state: &T, ttl: Duration) -> String {
        self.seal(ADDED, request, &AddedState { state }, ttl)
    }

    /// The state sealed for an added tool or prompt's `request`, or why it is not one.
    pub fn open_added<T: DeserializeOwned>(
        &self,
        request: &str,
        sealed: &str,
    ) -> Result<T, OpenError> {
        self.open::<AddedState<T>>(ADDED, request, sealed)
            .map(|a| a.state)
    }
}

/// A digest naming one tool call: the tool and its arguments (keys in any order), so a
/// `requestState` is honoured only on a retry of the call it was given for.
pub fn call_digest(tool: &str, arguments: Option<&serde_json::Value>) -> String {
    fn canonical(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&map[k], out);
                    out.push(',');
                }
                out.push('}');
            }
            serde_json::Value::Array(items) => {
                out.push('[');
                for item in items {
                    canonical(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut text = format!("tools/call {tool} ");
    canonical(arguments.unwrap_or(&serde_json::Value::Null), &mut text);
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(byte: u8) -> Arc<StateKey> {
        Arc::new(StateKey::new(&[byte; 32], KeySource::Ephemeral).unwrap())
    }

    #[test]
    fn the_call_digest_ignores_key_order_only() {
        let a = call_digest("codex", Some(&json!({"prompt": "x", "cwd": "/w"})));
        let b = call_digest("codex", Some(&json!({"cwd": "/w", "prompt": "x"})));
        assert_eq!(a, b);
        assert_ne!(
            a,
            call_digest("codex", Some(&json!({"prompt": "y", "cwd": "/w"})))
        );
        assert_ne!(
            a,
            call_digest("codex-reply", Some(&json!({"prompt": "x", "cwd": "/w"})))
        );
    }

    #[test]
    fn an_approval_state_opens_only_for_its_principal_and_call() {
        let state = ApprovalState {
            thread: ThreadId::new(),
            turn: "t".into(),
            park: "p".into(),
            requests: vec!["call-1".into()],
        };
        let alice = Sealer::new(key(1), "bearer:alice");
        let sealed = alice.seal_approval(&state, "call", Duration::from_secs(60));
        assert_eq!(alice.open_approval(&sealed, "call"), Ok(state.clone()));
        assert_eq!(
            alice.open_approval(&sealed, "other call"),
            Err(OpenError::OtherRequest)
        );
        let bob = Sealer::new(key(1), "bearer:bob");
        assert_eq!(
            bob.open_approval(&sealed, "call"),
            Err(OpenError::OtherPrincipal)
        );
        // Another fleet's key, a task id in its place, a changed byte: forged.
        let other_fleet = Sealer::new(key(2), "bearer:alice");
        assert_eq!(
            other_fleet.open_approval(&sealed, "call"),
            Err(OpenError::Forged)
        );
        assert_eq!(alice.open_task(&sealed), Err(OpenError::Forged));
        let mut changed = sealed.into_bytes();
        let last = changed.len() - 1;
        changed[last] = if changed[last] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap();
        assert_eq!(
            alice.open_approval(&changed, "call"),
            Err(OpenError::Forged)
        );
        assert_eq!(
            alice.open_approval("not a state", "call"),
            Err(OpenError::Forged)
        );
    }

    #[test]
    fn an_expired_state_is_refused_as_expired() {
        let alice = Sealer::new(key(1), "local:1000");
        let state = ApprovalState {
            thread: ThreadId::new(),
            turn: "t".into(),
            park: "p".into(),
            requests: vec![],
        };
        let sealed = alice.seal_approval(&state, "call", Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            alice.open_approval(&sealed, "call"),
            Err(OpenError::Expired)
        );
    }

    #[test]
    fn a_key_is_made_private_once_and_kept() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let first = load_key(home.path()).unwrap();
        assert!(matches!(first.source, KeySource::Made(_)));
        let path = home.path().join(KEY_FILE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let second = load_key(home.path()).unwrap();
        assert!(matches!(second.source, KeySource::Home(_)));
        // The same key: what one sealed, the other opens.
        let state = TaskHandle {
            thread: ThreadId::new(),
            turn: "t".into(),
            created_at_ms: 1,
            call: "1".into(),
        };
        let a = Sealer::new(Arc::new(first), "p");
        let b = Sealer::new(Arc::new(second), "p");
        assert_eq!(b.open_task(&a.seal_task(&state)), Ok(state));
    }

    #[test]
    fn a_server_loads_its_key_once_and_services_only_look_it_up() {
        let home = tempfile::tempdir().unwrap();
        // Nothing loaded yet: a service gets no key (and reads no file to get one).
        assert!(loaded_key(home.path()).is_none());
        assert!(!home.path().join(KEY_FILE).exists());
        let loaded = shared_key(home.path()).unwrap();
        let looked_up = loaded_key(home.path()).unwrap();
        assert!(Arc::ptr_eq(&loaded, &looked_up));
        // A made key that is not the home's own (e.g. left short) is made anew.
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join(KEY_FILE), "short\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let file = other.path().join(KEY_FILE);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let made = load_key(other.path()).unwrap();
        assert!(matches!(made.source, KeySource::Made(_)));
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim().len(), 64);
        // Ephemeral keys are random: what one sealed, another cannot open.
        let state = TaskHandle {
            thread: ThreadId::new(),
            turn: "t".into(),
            created_at_ms: 1,
            call: "1".into(),
        };
        let a = Sealer::new(Arc::new(StateKey::ephemeral()), "p");
        let b = Sealer::new(Arc::new(StateKey::ephemeral()), "p");
        assert_eq!(b.open_task(&a.seal_task(&state)), Err(OpenError::Forged));
        assert_eq!(a.open_task(&a.seal_task(&state)), Ok(state));
    }

    #[test]
    fn a_configured_key_file_must_be_private_and_long_enough() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("fleet-key");
        std::fs::write(
            home.path().join("config.toml"),
            format!("mcp_state_key_file = \"{}\"\n", file.display()),
        )
        .unwrap();
        let err = load_key(home.path()).unwrap_err().to_string();
        assert!(err.contains("fleet-key"), "{err}");
        std::fs::write(&file, "short\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_key(home.path()).unwrap_err();
        assert!(err.is_configured());
        let err = err.to_string();
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = load_key(home.path()).unwrap_err().to_string();
        assert!(err.contains("at least 32 bytes"), "{err}");
        std::fs::write(&file, format!("{}\n", "k".repeat(40))).unwrap();
        let key = load_key(home.path()).unwrap();
        assert_eq!(key.source, KeySource::File(file));
        assert!(!format!("{key:?}").contains("kkkk"));
        // Nothing was made in the home.
        assert!(!home.path().join(KEY_FILE).exists());
    }
}
