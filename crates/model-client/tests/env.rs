//! Everything that reads environment variables, in one test binary with one test, so setting
//! variables cannot race with other tests' threads.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::{prompt, run_with};
use oi_model_client::{ModelClient, ModelError};
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn};

const KEY_VAR: &str = "OI_MODEL_CLIENT_TEST_KEY";
const HEADER_VAR: &str = "OI_MODEL_CLIENT_TEST_ORG";
const UNSET_VAR: &str = "OI_MODEL_CLIENT_TEST_UNSET";

#[test]
fn environment_driven_behaviour() {
    // SAFETY: this binary has exactly one test, and no other thread exists yet.
    unsafe {
        std::env::set_var(KEY_VAR, "sk-test-123");
        std::env::set_var(HEADER_VAR, "org-42");
        std::env::remove_var(UNSET_VAR);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        missing_key_is_reported_before_any_request().await;
        key_and_env_headers_are_sent().await;
        unauthorized_names_the_key_variable().await;
        messages_key_goes_as_x_api_key_or_bearer().await;
    });
}

async fn missing_key_is_reported_before_any_request() {
    let server = MockModelServer::start(MockScript::default()).await.unwrap();
    let mut provider = server.provider(WireApi::Chat);
    provider.env_key = Some(UNSET_VAR.into());
    let err = ModelClient::new(
        provider,
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap_err();
    assert!(matches!(err, ModelError::MissingApiKey(_)), "{err:?}");
    assert!(err.to_string().contains(UNSET_VAR), "{err}");
    assert!(server.requests().is_empty());
}

async fn key_and_env_headers_are_sent() {
    let server = MockModelServer::start(MockScript::turns([MockTurn::text("ok")]))
        .await
        .unwrap();
    let mut provider = server.provider(WireApi::Responses);
    provider.env_key = Some(KEY_VAR.into());
    provider.env_http_headers = Some(
        [
            ("OpenAI-Organization".to_string(), HEADER_VAR.to_string()),
            ("X-Skipped".to_string(), UNSET_VAR.to_string()),
        ]
        .into(),
    );
    let client = ModelClient::new(
        provider,
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    assert!(
        !format!("{client:?}").contains("sk-test-123"),
        "the key never shows in debug output"
    );
    run_with(&client, &prompt()).await.ok();
    let req = &server.requests()[0];
    assert_eq!(req.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(req.header("openai-organization"), Some("org-42"));
    assert_eq!(req.header("x-skipped"), None, "unset env header is skipped");
}

async fn unauthorized_names_the_key_variable() {
    let server = MockModelServer::start(MockScript::new(vec![MockResponse::error(
        401,
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#,
    )]))
    .await
    .unwrap();
    let mut provider = server.provider(WireApi::Chat);
    provider.env_key = Some(KEY_VAR.into());
    provider.request_max_retries = Some(3);
    let client = ModelClient::new(
        provider,
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let out = run_with(&client, &prompt()).await;
    let err = out.err();
    assert_eq!(err.http_status(), Some(401));
    let msg = err.to_string();
    assert!(msg.contains(KEY_VAR), "{msg}");
    assert!(msg.contains("Incorrect API key provided"), "{msg}");
    assert!(!msg.contains("sk-test-123"), "{msg}");
    assert_eq!(server.requests().len(), 1, "401 is not retried");
}

/// The Messages wire sends the key as `x-api-key` (Anthropic's scheme) unless the provider
/// says `auth_header = "bearer"` (endpoints documented with `ANTHROPIC_AUTH_TOKEN`), and
/// always `anthropic-version`.
async fn messages_key_goes_as_x_api_key_or_bearer() {
    use oi_protocol::config_types::AuthHeader;
    for (auth, header, value) in [
        (None, "x-api-key", "sk-test-123"),
        (
            Some(AuthHeader::Bearer),
            "authorization",
            "Bearer sk-test-123",
        ),
    ] {
        let server = MockModelServer::start(MockScript::turns([MockTurn::text("ok")]))
            .await
            .unwrap();
        let mut provider = server.provider(WireApi::Messages);
        provider.env_key = Some(KEY_VAR.into());
        provider.auth_header = auth;
        let client = ModelClient::new(
            provider,
            "mock".into(),
            std::path::Path::new(common::NO_HOME),
        )
        .unwrap();
        run_with(&client, &prompt()).await.ok();
        let req = &server.requests()[0];
        assert_eq!(req.header(header), Some(value), "{auth:?}");
        let other = if header == "x-api-key" {
            "authorization"
        } else {
            "x-api-key"
        };
        assert_eq!(req.header(other), None, "{auth:?}: the key goes once");
        assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    }
}
