//! OAuth 2.1 login against fastmcp's in-memory OAuth provider (DCR + PKCE), then a tool
//! call with the stored token.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_client::oauth::{self, FileCredentialStore, LoginOptions};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Plays the browser: follow the authorization URL's redirect to our loopback callback.
fn browser(url: &str) {
    let url = url.to_string();
    tokio::spawn(async move {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let r = client.get(&url).send().await.unwrap();
        assert!(
            r.status().is_redirection(),
            "authorize answered {}",
            r.status()
        );
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let done = client.get(&location).send().await.unwrap();
        assert_eq!(done.status(), 200);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_then_call_with_the_stored_token() {
    let peer = HttpPeer::fastmcp_oauth();
    let plain = HttpPeer::fastmcp();
    assert_eq!(oauth::discover(&peer.url).await, Ok(true));
    assert_eq!(oauth::discover(&plain.url).await, Ok(false));

    // Not logged in: startup fails and says how to log in.
    let s = start(vec![("secure", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    let e = s.manager.server_error("secure").unwrap();
    assert!(e.contains("interpreter mcp login secure"), "{e}");
    let home = s.home.path().to_path_buf();

    let mut shown = String::new();
    oauth::login(
        LoginOptions {
            store: oi_config::OAuthCredentialsStoreMode::File,
            timeout: Duration::from_secs(60),
            ..LoginOptions::new("secure", &peer.url, &home)
        },
        |url| {
            shown = url.to_string();
            browser(url);
        },
    )
    .await
    .unwrap();
    assert!(shown.contains("/authorize?"), "{shown}");
    assert!(
        shown.contains("code_challenge_method=S256"),
        "PKCE: {shown}"
    );
    let store = FileCredentialStore::new(&home, "secure", &peer.url);
    assert!(store.has_tokens());
    let file = std::fs::read_to_string(home.join(".credentials.json")).unwrap();
    assert!(file.contains("\"mcp_oauth\""));

    // Same home: the manager now uses the stored token.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let m = oi_mcp_client::McpConnectionManager::start(
        std::collections::BTreeMap::from([("secure".to_string(), http(&peer.url))]),
        options(&home, &home, TestElicitation::accepting(json!({}))),
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

    assert!(store.delete().unwrap());
    assert!(!store.has_tokens());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_error_on_callback_is_reported() {
    let peer = HttpPeer::fastmcp_oauth();
    let home = tempfile::tempdir().unwrap();
    let err = oauth::login(
        LoginOptions {
            store: oi_config::OAuthCredentialsStoreMode::File,
            resource: Some("https://api.example.com".into()),
            timeout: Duration::from_secs(60),
            ..LoginOptions::new("secure", &peer.url, home.path())
        },
        |url| {
            assert!(
                url.contains("&resource=https%3A%2F%2Fapi.example.com"),
                "{url}"
            );
            // The user refuses: the provider redirects back with an error.
            let redirect = url
                .split("redirect_uri=")
                .nth(1)
                .and_then(|r| r.split('&').next())
                .unwrap()
                .replace("%3A", ":")
                .replace("%2F", "/");
            tokio::spawn(async move {
                let _ = reqwest::get(format!(
                    "{redirect}?error=access_denied&error_description=no%20thanks"
                ))
                .await;
            });
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(err, oauth::OAuthError::Provider { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "OAuth provider returned `access_denied`: no thanks"
    );
}

/// A 401 is one line naming the server, the status and what to do about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_is_one_line_with_the_right_hint() {
    let peer = HttpPeer::fastmcp_oauth();
    let home = tempfile::tempdir().unwrap();
    // Not logged in, no token configured.
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let servers = std::collections::BTreeMap::from([
        ("secure".to_string(), http(&peer.url)),
        ("badtoken".to_string(), {
            let mut c = http(&peer.url);
            if let oi_config::mcp::McpServerTransportConfig::StreamableHttp {
                bearer_token_env_var,
                ..
            } = &mut c.transport
            {
                *bearer_token_env_var = Some("OI_TEST_REJECTED_TOKEN".into());
            }
            c
        }),
    ]);
    // SAFETY: set before the manager reads it; no other test reads this variable.
    unsafe { std::env::set_var("OI_TEST_REJECTED_TOKEN", "not-a-valid-token") };
    let m = oi_mcp_client::McpConnectionManager::start(
        servers,
        options(
            home.path(),
            home.path(),
            TestElicitation::accepting(json!({})),
        ),
        tx,
    )
    .await
    .unwrap();
    m.wait_until_started().await;
    let missing = m.server_error("secure").expect("401 without a token");
    assert!(!missing.contains('\n'), "{missing}");
    assert!(
        missing.contains("`secure`") && missing.contains("401"),
        "{missing}"
    );
    assert!(
        missing.contains("interpreter mcp login secure"),
        "{missing}"
    );
    let rejected = m.server_error("badtoken").expect("401 with a bad token");
    assert!(!rejected.contains('\n'), "{rejected}");
    assert!(
        rejected.contains("`badtoken`") && rejected.contains("401"),
        "{rejected}"
    );
    assert!(
        rejected.contains("rejected") && rejected.contains("OI_TEST_REJECTED_TOKEN"),
        "{rejected}"
    );
    m.shutdown().await;
}
