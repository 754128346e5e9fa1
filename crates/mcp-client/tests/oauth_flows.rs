//! OAuth against the scriptable fixture (tests/fixtures/mcp/oauth_fixture_server.py): a server
//! that announces its metadata only in its challenge, an authorization server that moves, a
//! pre-registered client that must not follow it, tokens that keep being refused, and a
//! redirect from the wrong issuer. Each test reads the fixture's log of what the client did.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use oi_mcp_client::McpConnectionManager;
use oi_mcp_client::oauth::{self, LoginOptions, OAuthError};
use oi_mcp_client::oauth_session::OAuthBrowser;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Plays the user who approves: follows the authorization URL's redirect back to our
/// loopback callback.
fn approve(url: &str) {
    let url = url.to_string();
    tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let r = client.get(&url).send().await.unwrap();
        assert!(r.status().is_redirection(), "authorize: {}", r.status());
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let _ = client.get(&location).send().await;
    });
}

struct Approver;

impl OAuthBrowser for Approver {
    fn open(&self, _server: &str, url: &str) {
        approve(url);
    }
}

/// A manager for one server with a browser that approves (or none: headless).
async fn session(
    home: &Path,
    name: &str,
    config: McpServerConfig,
    browser: bool,
) -> Arc<McpConnectionManager> {
    let mut opts = options(home, home, TestElicitation::accepting(json!({})));
    if browser {
        opts.oauth_browser = Some(Arc::new(Approver));
    }
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let m = McpConnectionManager::start(BTreeMap::from([(name.to_string(), config)]), opts, tx)
        .await
        .unwrap();
    m.wait_until_started().await;
    m
}

async fn whoami(m: &McpConnectionManager, name: &str) -> Result<String, String> {
    m.call_tool(name, "whoami", None, None, CancellationToken::new())
        .await
        .map(|r| text_of(&r))
        .map_err(|e| e.to_string())
}

fn events<'a>(log: &'a [Value], at: &str, kind: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|e| e["at"] == at && e["kind"] == kind)
        .collect()
}

/// The stored entry of `server` in the credentials file.
fn stored_entry(home: &Path, server: &str) -> Value {
    let all: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".credentials.json")).unwrap())
            .unwrap();
    all["mcp_oauth"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with(&format!("{server}|")))
        .map(|(_, v)| v.clone())
        .unwrap()
}

fn with_oauth(url: &str, set: impl FnOnce(&mut oi_config::mcp::McpOAuthConfig)) -> McpServerConfig {
    let mut c = http(url);
    if let McpServerTransportConfig::StreamableHttp { oauth, .. } = &mut c.transport {
        set(oauth);
    }
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_reads_the_metadata_location_and_scope_from_the_challenge() {
    let peer =
        HttpPeer::oauth_fixture(&["--prm-in-challenge-only", "--challenge-scope", "files:read"]);
    let home = tempfile::tempdir().unwrap();
    let config = http(&peer.url);

    // Announced nowhere else: without the challenge there is nothing to log in to.
    let blind = LoginOptions {
        store: oi_config::OAuthCredentialsStoreMode::File,
        timeout: Duration::from_secs(30),
        ..LoginOptions::new("docs", &peer.url, home.path())
    };
    assert!(oauth::login(blind, approve).await.is_err());

    let challenge = oauth::login_challenge("docs", &config)
        .await
        .unwrap()
        .expect("the server challenges an unauthenticated client");
    assert!(
        challenge.contains("/meta/prm.json") && challenge.contains("scope=\"files:read\""),
        "{challenge}"
    );
    let opts = LoginOptions {
        store: oi_config::OAuthCredentialsStoreMode::File,
        timeout: Duration::from_secs(30),
        challenge: Some(challenge),
        ..LoginOptions::new("docs", &peer.url, home.path())
    };
    let mut shown = String::new();
    oauth::login(opts, |url| {
        shown = url.to_string();
        approve(url);
    })
    .await
    .unwrap();
    assert!(shown.contains("scope=files%3Aread"), "{shown}");
    let log = peer.log().await;
    let prm_fetches = events(&log, "resource", "prm").len();
    let entry = stored_entry(home.path(), "docs");
    assert_eq!(
        entry["credentials"]["issuer"],
        format!("{}/as1", peer.base())
    );
    assert_eq!(
        entry["authorization_server"]["token_endpoint"],
        format!("{}/as1/token", peer.base())
    );

    // A session uses the stored tokens at once, without discovering anything again.
    let m = session(home.path(), "docs", config, false).await;
    assert_eq!(m.server_error("docs"), None);
    let who = whoami(&m, "docs").await.unwrap();
    assert!(
        who.starts_with("hello as1-client-") && who.ends_with(" from as1"),
        "{who}"
    );
    let log = peer.log().await;
    assert_eq!(events(&log, "resource", "prm").len(), prm_fetches);
    m.shutdown().await;
}

/// A server of protocol 2026-07-28 only, which checks the request's era (its `_meta` version,
/// the `Mcp-Method` header) before its credentials and names its metadata only in its
/// challenge: `mcp login` asks it in its own era, so it sees the challenge (an `initialize`
/// would be refused with -32022 and show none), and a session then uses the tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_reads_the_challenge_of_a_modern_only_server() {
    let peer = HttpPeer::oauth_fixture(&[
        "--modern-only",
        "--prm-in-challenge-only",
        "--challenge-scope",
        "files:read",
    ]);
    let home = tempfile::tempdir().unwrap();
    let config = http(&peer.url);
    let challenge = oauth::login_challenge("docs", &config)
        .await
        .unwrap()
        .expect("the modern-only server challenges an unauthenticated client");
    assert!(
        challenge.contains("/meta/prm.json") && challenge.contains("scope=\"files:read\""),
        "{challenge}"
    );
    let log = peer.log().await;
    assert_eq!(
        events(&log, "resource", "era-refused"),
        Vec::<&Value>::new()
    );
    assert_eq!(
        events(&log, "resource", "header-refused"),
        Vec::<&Value>::new()
    );

    // The same for a server pinned to the revision in the config.
    let mut pinned = config.clone();
    pinned.protocol_version = oi_config::mcp::McpProtocolVersion::V2026_07_28;
    let again = oauth::login_challenge("docs", &pinned).await.unwrap();
    assert_eq!(again.as_deref(), Some(challenge.as_str()));

    let opts = LoginOptions {
        store: oi_config::OAuthCredentialsStoreMode::File,
        timeout: Duration::from_secs(30),
        challenge: Some(challenge),
        ..LoginOptions::new("docs", &peer.url, home.path())
    };
    oauth::login(opts, approve).await.unwrap();
    let m = session(home.path(), "docs", config, false).await;
    assert_eq!(m.server_error("docs"), None);
    let who = whoami(&m, "docs").await.unwrap();
    assert!(
        who.starts_with("hello as1-client-") && who.ends_with(" from as1"),
        "{who}"
    );
    let log = peer.log().await;
    assert_eq!(
        events(&log, "resource", "era-refused"),
        Vec::<&Value>::new()
    );
    m.shutdown().await;
}

/// A 403 `insufficient_scope` naming only the scope the call needs: the step-up asks for
/// what was granted (at the login, in an earlier run) plus that scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_up_keeps_the_scopes_already_granted() {
    let peer = HttpPeer::oauth_fixture(&["--challenge-scope", "files:read"]);
    let home = tempfile::tempdir().unwrap();
    let config = http(&peer.url);
    let opts = LoginOptions {
        store: oi_config::OAuthCredentialsStoreMode::File,
        timeout: Duration::from_secs(30),
        challenge: oauth::login_challenge("docs", &config).await.unwrap(),
        ..LoginOptions::new("docs", &peer.url, home.path())
    };
    oauth::login(opts, approve).await.unwrap();

    // Headless, the step-up names the command and every scope it needs.
    let m = session(home.path(), "docs", config.clone(), false).await;
    let e = m
        .call_tool("docs", "admin", None, None, CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "MCP server `docs` needs more OAuth scopes (HTTP 403 insufficient_scope: admin): run `interpreter mcp login docs --scopes files:read,admin`"
    );
    m.shutdown().await;

    let m = session(home.path(), "docs", config, true).await;
    let r = m
        .call_tool("docs", "admin", None, None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(text_of(&r), "admin ok");
    let log = peer.log().await;
    let asked: Vec<&str> = events(&log, "as1", "authorize")
        .iter()
        .map(|e| e["scope"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(asked, ["files:read", "files:read admin"], "{log:?}");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_authorization_server_gets_a_new_registration_and_nothing_of_the_old_one() {
    let peer = HttpPeer::oauth_fixture(&["--migrate-after-list", "--refresh"]);
    let home = tempfile::tempdir().unwrap();
    let m = session(home.path(), "docs", http(&peer.url), true).await;
    assert_eq!(m.server_error("docs"), None);
    // The first tools/list moved the server to as2: its first call meets the 401.
    let before = peer.log().await.len();
    let who = whoami(&m, "docs").await.unwrap();
    assert!(
        who.starts_with("hello as2-client-") && who.ends_with(" from as2"),
        "{who}"
    );

    let log = peer.log().await;
    let after = &log[before..];
    assert_eq!(events(after, "as2", "register").len(), 1, "{after:?}");
    // Nothing of as1's is used after the move: no refresh there, no as1 client at as2.
    assert!(events(after, "as1", "token").is_empty(), "{after:?}");
    let old_client = events(&log, "as1", "register")[0]["client_id"].clone();
    assert!(
        !log.iter()
            .any(|e| e["at"] == "as2" && e["client_id"] == old_client),
        "{log:?}"
    );
    let entry = stored_entry(home.path(), "docs");
    assert_eq!(
        entry["credentials"]["issuer"],
        format!("{}/as2", peer.base())
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preregistered_client_is_not_sent_to_another_authorization_server() {
    let peer =
        HttpPeer::oauth_fixture(&["--migrate-after-list", "--no-dcr", "--client", "app:s3cret"]);
    let home = tempfile::tempdir().unwrap();
    // SAFETY: set before any manager reads it; no other test reads this variable.
    unsafe { std::env::set_var("OI_TEST_APP_SECRET", "s3cret") };
    let preregistered = |issuer: Option<String>| {
        with_oauth(&peer.url, |o| {
            o.client_id = Some("app".into());
            o.client_secret_env_var = Some("OI_TEST_APP_SECRET".into());
            o.issuer = issuer;
        })
    };
    let m = session(home.path(), "crm", preregistered(None), true).await;
    assert_eq!(m.server_error("crm"), None);
    let before = peer.log().await.len();
    let e = whoami(&m, "crm").await.unwrap_err();
    let as1 = format!("{}/as1", peer.base());
    let as2 = format!("{}/as2", peer.base());
    assert_eq!(
        e,
        format!(
            "MCP server `crm` now uses the authorization server `{as2}`, but the `client_id` in [mcp_servers.crm.oauth] belongs to `{as1}`, so it is not sent there. Register a client with `{as2}`, set its `client_id` (and secret), and set `issuer = \"{as2}\"` in [mcp_servers.crm.oauth]"
        )
    );
    let log = peer.log().await;
    assert!(
        !log[before..]
            .iter()
            .any(|e| e["at"] == "as2" && (e["kind"] == "authorize" || e["kind"] == "token")),
        "{log:?}"
    );
    m.shutdown().await;

    // The user says the client is registered there too: it is used there.
    let m = session(home.path(), "crm", preregistered(Some(as2.clone())), true).await;
    assert_eq!(m.server_error("crm"), None, "{:?}", m.server_error("crm"));
    assert_eq!(whoami(&m, "crm").await.unwrap(), "hello app from as2");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_machine_client_is_not_sent_to_another_authorization_server_either() {
    let peer = HttpPeer::oauth_fixture(&["--migrate-after-list", "--client", "m2m:m2m-secret"]);
    let home = tempfile::tempdir().unwrap();
    // SAFETY: set before any manager reads it; no other test reads this variable.
    unsafe { std::env::set_var("OI_TEST_M2M_SECRET", "m2m-secret") };
    let config = with_oauth(&peer.url, |o| {
        o.grant_type = oi_config::mcp::McpOAuthGrant::ClientCredentials;
        o.client_id = Some("m2m".into());
        o.client_secret_env_var = Some("OI_TEST_M2M_SECRET".into());
    });
    // Headless: a machine grant needs nobody.
    let m = session(home.path(), "billing", config, false).await;
    assert_eq!(m.server_error("billing"), None);
    let before = peer.log().await.len();
    let e = whoami(&m, "billing").await.unwrap_err();
    assert!(
        e.starts_with(&format!(
            "MCP server `billing` now uses the authorization server `{}/as2`, but the `client_id` in [mcp_servers.billing.oauth] belongs to `{}/as1`",
            peer.base(),
            peer.base()
        )),
        "{e}"
    );
    let log = peer.log().await;
    assert!(
        events(&log[before..], "as2", "token").is_empty(),
        "the secret went to as2: {log:?}"
    );
    // What is remembered is the binding, not a token.
    let entry = stored_entry(home.path(), "billing");
    assert_eq!(
        entry["credentials"]["issuer"],
        format!("{}/as1", peer.base())
    );
    assert!(entry["credentials"]["token_response"].is_null(), "{entry}");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_keep_being_refused_cost_a_bounded_number_of_retries() {
    let peer = HttpPeer::oauth_fixture(&["--refuse-after-list", "--refresh"]);
    let home = tempfile::tempdir().unwrap();
    let m = session(home.path(), "docs", http(&peer.url), true).await;
    assert_eq!(m.server_error("docs"), None);
    let e = whoami(&m, "docs").await.unwrap_err();
    assert_eq!(
        e,
        "MCP server `docs` still refuses access after 3 authorizations in this session; check the account's permissions, then run `interpreter mcp login docs`"
    );
    let log = peer.log().await;
    assert_eq!(events(&log, "as1", "authorize").len(), 3, "{log:?}");
    let refreshes = log
        .iter()
        .filter(|e| e["kind"] == "token" && e["grant"] == "refresh_token")
        .count();
    // One refresh per authorization: a refreshed token that is refused is not refreshed.
    assert_eq!(refreshes, 3, "{log:?}");
    m.shutdown().await;

    // Headless, the same server costs one refresh and then names the fix.
    let m = session(home.path(), "docs", http(&peer.url), false).await;
    let e = m.server_error("docs").unwrap();
    assert!(e.contains("run `interpreter mcp login docs`"), "{e}");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_from_another_issuer_is_refused_before_the_code_is_used() {
    let peer = HttpPeer::oauth_fixture(&["--iss", "wrong"]);
    let home = tempfile::tempdir().unwrap();
    let config = http(&peer.url);
    let opts = LoginOptions {
        store: oi_config::OAuthCredentialsStoreMode::File,
        timeout: Duration::from_secs(30),
        challenge: oauth::login_challenge("docs", &config).await.unwrap(),
        ..LoginOptions::new("docs", &peer.url, home.path())
    };
    let e = oauth::login(opts, approve).await.unwrap_err();
    assert_eq!(
        e,
        OAuthError::IssuerMismatch {
            expected: format!("{}/as1", peer.base()),
            received: "https://evil.example.com".into(),
        }
    );
    assert!(
        e.to_string()
            .starts_with("the OAuth redirect came back from `https://evil.example.com`, not from the authorization server the login was sent to"),
        "{e}"
    );
    let log = peer.log().await;
    assert!(events(&log, "as1", "token").is_empty(), "{log:?}");
    assert!(
        !home.path().join(".credentials.json").exists() || {
            let text = std::fs::read_to_string(home.path().join(".credentials.json")).unwrap();
            !text.contains("access_token")
        }
    );
}
