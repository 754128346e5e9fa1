//! MCP OAuth tokens in a real Secret Service (GNOME Keyring in a D-Bus session of its own),
//! the 0600 file, `auto`'s fallback when no Secret Service answers, and token refreshes
//! serialized across stores so a rotating refresh token is never sent twice.
//!
//! The tests named `in_session_*` and `no_bus_*` are ignored in a plain run: the two tests
//! that start with `run_` run them in a child process of this binary, inside
//! `dbus-run-session` with an unlocked `gnome-keyring-daemon`, or with a D-Bus address that
//! leads nowhere. Under `OI_REQUIRE_PEERS=1` a missing `dbus-run-session` or
//! `gnome-keyring-daemon` fails the run instead of skipping it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_client::oauth::{self, LoginOptions};
use oi_mcp_client::oauth_store::{
    KEYRING_SERVICE, OAuthCredentialsStoreMode as Mode, OAuthTokenStore, TokenLocation,
};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

/// Set in the child process that runs the ignored tests.
const CHILD: &str = "OI_KEYRING_TEST_CHILD";

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs this binary's ignored tests whose names start with `prefix` in a child process
/// (`program` and `args` go before the test binary: a D-Bus session, or nothing) and checks
/// that all `expected` ran and passed.
/// Returns the child's stderr.
fn run_child_tests(
    prefix: &str,
    expected: usize,
    program: &str,
    args: &[&str],
    env: &[(&str, String)],
) -> String {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["data", "config", "cache", "run"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(program)
        .args(args)
        .arg(&exe)
        .args([prefix, "--ignored", "--test-threads=1"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env(CHILD, "1")
        // GNOME Keyring keeps its files under these: a throwaway home, never the user's.
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("XDG_RUNTIME_DIR", dir.path().join("run"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the {prefix}* tests failed:\n{stdout}\n{stderr}"
    );
    let summary = format!("test result: ok. {expected} passed");
    assert!(
        stdout.contains(&summary),
        "expected {expected} {prefix}* tests to run and pass:\n{stdout}\n{stderr}"
    );
    stderr.into_owned()
}

/// The keyring tests, in a D-Bus session of their own with GNOME Keyring unlocked.
#[test]
fn run_the_keyring_tests_under_gnome_keyring() {
    let missing: Vec<&str> = ["dbus-run-session", "gnome-keyring-daemon", "dbus-send"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !missing.is_empty() {
        let why = format!(
            "{} not installed: tools/peers/install.sh installs Debian's gnome-keyring (and dbus)",
            missing.join(", ")
        );
        if std::env::var("OI_REQUIRE_PEERS").as_deref() == Ok("1") {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    // `--unlock` reads the login keyring's password on stdin (creating the keyring with it);
    // the daemon then serves org.freedesktop.secrets on this session's bus.
    let script =
        "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$@\"";
    run_child_tests(
        "in_session_",
        4,
        "dbus-run-session",
        &["--", "sh", "-c", script, "sh"],
        &[],
    );
}

/// `auto` and `keyring` when no Secret Service answers: a D-Bus address that leads nowhere.
#[test]
fn run_the_tests_without_a_secret_service() {
    let nowhere = tempfile::tempdir().unwrap();
    let address = format!("unix:path={}", nowhere.path().join("no-bus").display());
    let log = run_child_tests(
        "no_bus_",
        2,
        "env",
        &[],
        &[("DBUS_SESSION_BUS_ADDRESS", address)],
    );
    // `auto` said once why the file is used, though it saved and read many times.
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("the OS keyring is not reachable"))
        .collect();
    assert_eq!(said.len(), 1, "{log}");
    assert!(said[0].contains(".credentials.json (mode 0600)"), "{log}");
    assert!(!log.contains("refresh-0"), "a token was logged: {log}");
}

fn in_child() {
    assert!(
        std::env::var_os(CHILD).is_some(),
        "run by run_the_keyring_tests_under_gnome_keyring / run_the_tests_without_a_secret_service"
    );
    // The log goes to the child's real stderr (not the test harness's capture), for the
    // parent to read.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("oi_mcp_client=debug"))
        .with_writer(std::io::stderr)
        .try_init();
}

/// What the Secret Service holds for `server` at `url`, read with the keyring crate itself
/// (on a thread of its own: its D-Bus client runs a runtime of its own).
fn keyring_secret(server: &str, url: &str) -> Option<String> {
    let account = oauth::credential_key(server, url);
    std::thread::spawn(move || {
        let credential =
            keyring::secret_service::SsCredential::new_with_target(None, KEYRING_SERVICE, &account)
                .unwrap();
        match keyring::Entry::new_with_credential(Box::new(credential)).get_password() {
            Ok(secret) => Some(secret),
            Err(keyring::Error::NoEntry) => None,
            Err(e) => panic!("reading the keyring: {e}"),
        }
    })
    .join()
    .unwrap()
}

fn file_section(home: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(home.join(".credentials.json")).ok()?;
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    all.get("mcp_oauth").cloned()
}

fn file_mode(home: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(home.join(".credentials.json"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

/// Tokens whose access token expired long ago, with refresh token `refresh`.
fn expired_tokens(refresh: &str) -> StoredCredentials {
    serde_json::from_value(json!({
        "client_id": "test-client",
        "token_response": {
            "access_token": "access-0",
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
        },
        "granted_scopes": [],
        "token_received_at": 1,
    }))
    .unwrap()
}

/// Plays the browser: follow the authorization URL's redirect to our loopback callback.
fn browser(url: &str) {
    let url = url.to_string();
    tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let r = client.get(&url).send().await.unwrap();
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let done = client.get(&location).send().await.unwrap();
        assert_eq!(done.status(), 200);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_keyring_tests_under_gnome_keyring"]
async fn in_session_login_saves_tokens_in_the_keyring_not_the_file() {
    in_child();
    let peer = HttpPeer::fastmcp_oauth();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // A copy left in the file by an earlier `file` login: the keyring login replaces it.
    OAuthTokenStore::new(home, "secure", &peer.url, Mode::File)
        .save(expired_tokens("stale"))
        .await
        .unwrap();
    assert!(file_section(home).is_some());

    oauth::login(
        LoginOptions {
            store: Mode::Auto,
            timeout: Duration::from_secs(60),
            ..LoginOptions::new("secure", &peer.url, home)
        },
        browser,
    )
    .await
    .unwrap();

    let secret = keyring_secret("secure", &peer.url).expect("the tokens are in the keyring");
    let entry: serde_json::Value = serde_json::from_str(&secret).unwrap();
    assert_eq!(entry["server_name"], "secure");
    assert!(entry["credentials"]["token_response"]["access_token"].is_string());
    assert_eq!(file_section(home), None, "no copy left in the file");
    let store = OAuthTokenStore::new(home, "secure", &peer.url, Mode::Keyring);
    assert_eq!(store.location(), Some(TokenLocation::Keyring));

    // A session reads the token from the keyring and calls a tool with it.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let mut opts = options(home, home, TestElicitation::accepting(json!({})));
    opts.oauth_store = Mode::Keyring;
    let m = oi_mcp_client::McpConnectionManager::start(
        std::collections::BTreeMap::from([("secure".to_string(), http(&peer.url))]),
        opts,
        tx,
    )
    .await
    .unwrap();
    m.wait_until_started().await;
    assert_eq!(m.server_error("secure"), None);
    let r = m
        .call_tool("secure", "whoami", None, None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(text_of(&r), "hello, authenticated caller");
    m.shutdown().await;

    // Logout removes them from both places.
    assert!(store.delete().unwrap());
    assert_eq!(keyring_secret("secure", &peer.url), None);
    assert!(!store.delete().unwrap(), "nothing left to remove");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_keyring_tests_under_gnome_keyring"]
async fn in_session_file_mode_writes_the_private_file_even_with_a_keyring() {
    in_child();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let url = "http://127.0.0.1:1/mcp";
    let store = OAuthTokenStore::new(home, "filed", url, Mode::File);
    store.save(expired_tokens("refresh-0")).await.unwrap();
    assert_eq!(file_mode(home), 0o600);
    let section = file_section(home).unwrap();
    assert_eq!(
        section[oauth::credential_key("filed", url)]["credentials"]["token_response"]["refresh_token"],
        "refresh-0"
    );
    assert_eq!(keyring_secret("filed", url), None, "nothing in the keyring");
    assert_eq!(store.location(), Some(TokenLocation::File));
    // `auto` still finds tokens saved under `file`.
    let auto = OAuthTokenStore::new(home, "filed", url, Mode::Auto);
    assert!(auto.has_tokens());
    assert_eq!(auto.location(), Some(TokenLocation::File));
    // Logout under `keyring` removes the file's copy too.
    assert!(
        OAuthTokenStore::new(home, "filed", url, Mode::Keyring)
            .delete()
            .unwrap()
    );
    assert_eq!(file_section(home), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_keyring_tests_under_gnome_keyring"]
async fn in_session_concurrent_refreshes_in_the_keyring_do_not_clobber() {
    in_child();
    refresh_race(Mode::Keyring).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_keyring_tests_under_gnome_keyring"]
// Named to run last (tests run in name order with one thread): it locks the keyring.
async fn in_session_when_locked_auto_uses_the_file() {
    in_child();
    // Lock every collection: reading a secret now needs a password prompt nobody can answer.
    let locked = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ])
        .output()
        .unwrap();
    assert!(
        locked.status.success(),
        "{}",
        String::from_utf8_lossy(&locked.stderr)
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let url = "http://127.0.0.1:1/mcp";
    let strict = OAuthTokenStore::new(home, "locked", url, Mode::Keyring);
    let err = strict.save(expired_tokens("r")).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("mcp_oauth_credentials_store = \"file\""),
        "{err}"
    );
    assert_eq!(file_section(home), None, "`keyring` never writes the file");
    // `auto` falls back to the file.
    let auto = OAuthTokenStore::new(home, "locked", url, Mode::Auto);
    auto.save(expired_tokens("r")).await.unwrap();
    assert_eq!(file_mode(home), 0o600);
    assert_eq!(auto.location(), Some(TokenLocation::File));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_tests_without_a_secret_service"]
async fn no_bus_auto_falls_back_to_the_private_file() {
    in_child();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let url = "http://127.0.0.1:1/mcp";
    let store = OAuthTokenStore::new(home, "srv", url, Mode::Auto);
    store.save(expired_tokens("refresh-0")).await.unwrap();
    assert_eq!(file_mode(home), 0o600);
    assert!(file_section(home).unwrap()[oauth::credential_key("srv", url)].is_object());
    assert_eq!(store.location(), Some(TokenLocation::File));
    // A fresh store (as in the next run) reads them back; logout removes them.
    let again = OAuthTokenStore::new(home, "srv", url, Mode::Auto);
    assert!(again.has_tokens());
    assert!(again.delete().unwrap());
    assert_eq!(file_section(home), None);
    // The refresh lock works the same whatever holds the tokens.
    refresh_race(Mode::Auto).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by run_the_tests_without_a_secret_service"]
async fn no_bus_keyring_mode_is_a_clear_error() {
    in_child();
    let home = tempfile::tempdir().unwrap();
    let store = OAuthTokenStore::new(home.path(), "srv", "http://127.0.0.1:1/mcp", Mode::Keyring);
    let err = store
        .save(expired_tokens("refresh-0"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("OS keyring is not usable"), "{err}");
    assert!(
        err.contains("mcp_oauth_credentials_store = \"file\""),
        "{err}"
    );
    assert!(!err.contains("refresh-0"), "never the secret: {err}");
    assert_eq!(file_section(home.path()), None);
    assert!(store.delete().is_err(), "logout says it could not reach it");
}

/// The refresh lock in a plain run (the file store).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_in_the_file_do_not_clobber() {
    refresh_race(Mode::File).await;
}

/// A token endpoint that rotates refresh tokens: each one works once, a reused one gets
/// `invalid_grant`. The first refresh request is held until the test releases it.
#[derive(Default)]
struct TokenEndpoint {
    /// The refresh token the server will honour next.
    valid: Mutex<String>,
    /// Refresh tokens received, in order.
    received: Mutex<Vec<String>>,
    first_arrived: Notify,
    release_first: Mutex<Option<oneshot::Receiver<()>>>,
}

async fn serve_token_endpoint(state: Arc<TokenEndpoint>) -> String {
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
    });
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || {
                let metadata = metadata.clone();
                async move { axum::Json(metadata) }
            }),
        )
        .route(
            "/token",
            post(
                move |axum::Form(form): axum::Form<std::collections::HashMap<String, String>>| {
                    let state = state.clone();
                    async move {
                        assert_eq!(form["grant_type"], "refresh_token");
                        let sent = form["refresh_token"].clone();
                        let (n, honoured) = {
                            let mut received = state.received.lock().unwrap();
                            received.push(sent.clone());
                            let mut valid = state.valid.lock().unwrap();
                            let honoured = *valid == sent;
                            if honoured {
                                *valid = format!("refresh-{}", received.len());
                            }
                            (received.len(), honoured)
                        };
                        if n == 1 {
                            state.first_arrived.notify_one();
                            let release = state.release_first.lock().unwrap().take().unwrap();
                            release.await.unwrap();
                        }
                        if !honoured {
                            return (
                                axum::http::StatusCode::BAD_REQUEST,
                                axum::Json(json!({"error": "invalid_grant"})),
                            );
                        }
                        (
                            axum::http::StatusCode::OK,
                            axum::Json(json!({
                                "access_token": format!("access-{n}"),
                                "token_type": "Bearer",
                                "expires_in": 3600,
                                "refresh_token": format!("refresh-{n}"),
                            })),
                        )
                    }
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("{base}/mcp")
}

/// A store that says when a refresh starts waiting for its guard.
struct Observed {
    inner: OAuthTokenStore,
    waiting_for_guard: Arc<Notify>,
}

#[async_trait::async_trait]
impl CredentialStore for Observed {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.inner.load().await
    }
    async fn save(&self, c: StoredCredentials) -> Result<(), AuthError> {
        self.inner.save(c).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.inner.clear().await
    }
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.waiting_for_guard.notify_one();
        self.inner.acquire_refresh_guard().await
    }
}

async fn manager(url: &str, store: impl CredentialStore + 'static) -> AuthorizationManager {
    let mut m = AuthorizationManager::new(url).await.unwrap();
    m.set_credential_store(store);
    assert!(m.initialize_from_store().await.unwrap());
    m
}

/// Two stores of the same server (two processes) refresh an expired token at once. The
/// second refresh starts while the first one's request is at the server; it must wait, then
/// use the refresh token the first one saved, so the server honours both.
async fn refresh_race(mode: Mode) {
    let endpoint = Arc::new(TokenEndpoint::default());
    *endpoint.valid.lock().unwrap() = "refresh-0".into();
    let (release, released) = oneshot::channel();
    *endpoint.release_first.lock().unwrap() = Some(released);
    let url = serve_token_endpoint(endpoint.clone()).await;
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_path_buf();
    OAuthTokenStore::new(&home, "rotating", &url, mode)
        .save(expired_tokens("refresh-0"))
        .await
        .unwrap();

    let first = manager(&url, OAuthTokenStore::new(&home, "rotating", &url, mode)).await;
    let waiting = Arc::new(Notify::new());
    let second = manager(
        &url,
        Observed {
            inner: OAuthTokenStore::new(&home, "rotating", &url, mode),
            waiting_for_guard: waiting.clone(),
        },
    )
    .await;

    let first = tokio::spawn(async move { first.get_access_token().await });
    endpoint.first_arrived.notified().await;
    let second = tokio::spawn(async move { second.get_access_token().await });
    waiting.notified().await;
    release.send(()).unwrap();
    let first = first.await.unwrap().unwrap();
    let second = second.await.unwrap();

    assert_eq!(first, "access-1");
    assert_eq!(
        second.as_deref().ok(),
        Some("access-2"),
        "the second refresh used the rotated token: {second:?}"
    );
    assert_eq!(
        *endpoint.received.lock().unwrap(),
        ["refresh-0", "refresh-1"],
        "no refresh token was sent twice"
    );
    // What is stored is what the server honours next.
    let stored = OAuthTokenStore::new(&home, "rotating", &url, mode)
        .load()
        .await
        .unwrap()
        .unwrap();
    let stored = serde_json::to_value(stored).unwrap();
    assert_eq!(
        stored["token_response"]["refresh_token"],
        *endpoint.valid.lock().unwrap()
    );
    if mode == Mode::Keyring {
        assert!(
            !home.join(".credentials.json").exists(),
            "`keyring` never writes the file"
        );
    }
}
