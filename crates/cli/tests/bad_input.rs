//! Bad input gets one clear message and the right exit code; nothing panics.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockResponse, MockScript, MockTurn};

fn assert_no_panic(o: &std::process::Output) {
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

#[tokio::test]
async fn invalid_toml_names_file_line_and_column() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    std::fs::write(
        env.home.path().join("config.toml"),
        "model = \"x\"\nmodel_provider = = 3\n",
    )
    .unwrap();
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("config.toml") && err.contains("line 2") && err.contains("column"),
        "{err}"
    );
    assert_no_panic(&out);
}

#[tokio::test]
async fn unknown_cli_override_key_is_a_usage_error() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let out = env.run(&["exec", "-c", "modle=x", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown config key `modle`"),
        "{}",
        stderr(&out)
    );
    assert!(env.mock.requests().is_empty());
}

#[tokio::test]
async fn unreadable_config_is_reported() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let cfg = env.home.path().join("config.toml");
    std::fs::remove_file(&cfg).unwrap();
    std::fs::create_dir(&cfg).unwrap();
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("config.toml"), "{}", stderr(&out));
    assert_no_panic(&out);
}

#[tokio::test]
async fn missing_api_key_names_the_variable() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let out = env
        .command(&[
            "exec",
            "-c",
            "model_provider=deepseek",
            "-m",
            "deepseek-chat",
            "hi",
        ])
        .env_remove("DEEPSEEK_API_KEY")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("DEEPSEEK_API_KEY"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn unreachable_endpoint_fails_with_the_url() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    // A port that nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = env
        .run(&[
            "exec",
            "-c",
            &format!("model_providers.mock.base_url=\"{url}\""),
            "hi",
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("127.0.0.1:{port}")),
        "{}",
        stderr(&out)
    );
    assert_no_panic(&out);
}

#[tokio::test]
async fn wrong_key_non_sse_and_malformed_sse() {
    let cases: Vec<(MockResponse, &str)> = vec![
        (
            MockResponse::error(401, r#"{"error":{"message":"Invalid API key"}}"#),
            "401",
        ),
        (
            MockResponse::not_sse(200, "text/html", "<html>hello</html>"),
            "text/html",
        ),
    ];
    for (resp, needle) in cases {
        let env = TestEnv::new(MockScript::new(vec![resp]), WireApi::Chat).await;
        let out = env.run(&["exec", "hi"]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
        assert_no_panic(&out);
    }
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("fine").with_malformed_line()]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "hi"]).await;
    assert_no_panic(&out);
    assert!(out.status.code() == Some(0) || out.status.code() == Some(1));
    assert!(!stderr(&out).is_empty() || stdout(&out).contains("fine"));
}

#[tokio::test]
async fn empty_prompt_is_a_usage_error() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let out = env.run(&["exec", "  "]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
}
