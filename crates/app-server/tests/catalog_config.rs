//! model/list, collaborationMode/list, app/list, config/read and config writes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_test_support::MockScript;
use serde_json::{Value, json};

#[tokio::test]
async fn model_list_merges_provider_models_with_builtin_metadata() {
    // The configured model is a well-known open model; the mock serves `mock-model`.
    let env = Env::new(MockScript::default(), "").await;
    let cfg = env
        .config_text()
        .replace("model = \"mock-model\"", "model = \"gpt-oss-20b\"");
    std::fs::write(env.home.join("config.toml"), cfg).unwrap();
    let mut c = env.client();
    let r = c.ok("model/list", json!({})).await;
    let data = r["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{r}");
    let gpt = &data[0];
    assert_eq!(gpt["id"], "gpt-oss-20b");
    assert_eq!(gpt["isDefault"], true);
    assert_eq!(gpt["modelProvider"], "mock");
    assert_eq!(gpt["contextWindow"], 131_072);
    let efforts: Vec<&str> = gpt["supportedReasoningEfforts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reasoningEffort"].as_str().unwrap())
        .collect();
    assert_eq!(efforts, ["low", "medium", "high"]);
    assert_eq!(gpt["defaultReasoningEffort"], "medium");
    let mock = &data[1];
    assert_eq!(mock["id"], "mock-model");
    assert_eq!(mock["isDefault"], false);
    assert_eq!(
        mock["contextWindow"],
        Value::Null,
        "unknown: honest default"
    );
    assert_eq!(mock["supportedReasoningEfforts"], json!([]));
    // Codex's schema wants a non-empty string; a model without metadata gets no effort.
    assert_eq!(mock["defaultReasoningEffort"], "none");
    assert_eq!(mock["inputModalities"], json!(["text"]));
    assert_eq!(r["nextCursor"], Value::Null);

    let p1 = c.ok("model/list", json!({"limit": 1})).await;
    assert_eq!(p1["data"].as_array().unwrap().len(), 1);
    let p2 = c
        .ok(
            "model/list",
            json!({"limit": 1, "cursor": p1["nextCursor"]}),
        )
        .await;
    assert_eq!(p2["data"][0]["id"], "mock-model");
    assert_eq!(p2["nextCursor"], Value::Null);
    let e = c.err("model/list", json!({"cursor": "x"})).await;
    assert!(
        e["message"].as_str().unwrap().contains("invalid cursor"),
        "{e}"
    );

    // `modelProvider` narrows the list to one configured provider.
    let only = c.ok("model/list", json!({"modelProvider": "mock"})).await;
    assert_eq!(only["data"].as_array().unwrap().len(), 2, "{only}");
    let e = c
        .err("model/list", json!({"modelProvider": "nowhere"}))
        .await;
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("unknown modelProvider `nowhere`") && message.contains("mock"),
        "{e}"
    );
}

#[tokio::test]
async fn model_list_survives_a_provider_without_a_models_endpoint() {
    // Nothing listens on this port: the list still has the configured model.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = Env::new(MockScript::default(), "").await;
    let cfg = env.config_text().replace(
        &env.model.base_url(),
        &format!("http://127.0.0.1:{port}/v1"),
    );
    std::fs::write(env.home.join("config.toml"), cfg).unwrap();
    let mut c = env.client();
    let r = c.ok("model/list", json!({})).await;
    assert_eq!(r["data"].as_array().unwrap().len(), 1);
    assert_eq!(r["data"][0]["id"], "mock-model");
}

#[tokio::test]
async fn collaboration_modes_and_apps() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let r = c.ok("collaborationMode/list", json!({})).await;
    assert_eq!(
        r,
        json!({"data": [
            {"name": "Plan", "mode": "plan", "model": null, "reasoning_effort": "medium"},
            {"name": "Default", "mode": "default", "model": null},
        ]})
    );
    let r = c.ok("app/list", json!({})).await;
    assert_eq!(r["data"], json!([]));
}

const USER_CONFIG: &str =
    "# Top comment: keep me\nmodel = \"mock-model\" # the model\n\n# providers below\n";

async fn config_env() -> Env {
    let env = Env::new(MockScript::default(), "").await;
    let text = env.config_text().replace("model = \"mock-model\"\n", "");
    std::fs::write(env.home.join("config.toml"), format!("{USER_CONFIG}{text}")).unwrap();
    env
}

#[tokio::test]
async fn config_read_reports_values_origins_and_layer_versions() {
    let env = config_env().await;
    let mut opts = env.options();
    opts.cli_overrides = vec![(
        "approval_policy".into(),
        toml::Value::String("never".into()),
    )];
    let mut c = Client::start(opts);
    let r = c.ok("config/read", json!({"includeLayers": true})).await;
    assert_eq!(r["config"]["model"], "mock-model");
    assert_eq!(r["config"]["approval_policy"], "never");
    assert_eq!(r["config"]["model_providers"]["mock"]["name"], "Mock");
    assert_eq!(r["origins"]["model"]["name"]["type"], "user");
    assert_eq!(
        r["origins"]["approval_policy"]["name"]["type"],
        "sessionFlags"
    );
    let layers = r["layers"].as_array().unwrap();
    assert_eq!(layers[0]["name"]["type"], "sessionFlags", "highest first");
    let user = layers.last().unwrap();
    assert_eq!(user["name"]["type"], "user");
    let version = user["version"].as_str().unwrap();
    assert!(version.starts_with("sha256:") && version.len() == 7 + 64);
    assert_eq!(r["origins"]["model"]["version"], version);
}

#[tokio::test]
async fn config_read_never_shows_a_password_of_a_url() {
    let env = Env::new(MockScript::default(), "").await;
    // Nothing listens on port 1: opening the store fails at once, and config/read must not
    // depend on it anyway.
    let text = format!(
        "{}\n[thread_store]\nurl = \"postgresql://oi:hunter2-secret@127.0.0.1:1/oi?password=other-secret\"\n",
        env.config_text()
    );
    std::fs::write(env.home.join("config.toml"), text).unwrap();
    let mut c = env.client();
    let r = c.ok("config/read", json!({"includeLayers": true})).await;
    let shown = r.to_string();
    assert!(!shown.contains("hunter2-secret"), "{shown}");
    assert!(!shown.contains("other-secret"), "{shown}");
    assert_eq!(
        r["config"]["thread_store"]["url"],
        "postgresql://oi:***@127.0.0.1:1/oi?password=***"
    );
}

#[tokio::test]
async fn config_writes_preserve_comments_and_check_versions() {
    let env = config_env().await;
    let mut c = env.client();
    let read = c.ok("config/read", json!({"includeLayers": true})).await;
    let v0 = read["layers"].as_array().unwrap().last().unwrap()["version"].clone();

    let r = c
        .ok(
            "config/value/write",
            json!({"keyPath": "model", "value": "other-model", "mergeStrategy": "replace", "expectedVersion": v0}),
        )
        .await;
    assert_eq!(r["status"], "ok");
    assert_eq!(r["filePath"], json!(env.home.join("config.toml")));
    let v1 = r["version"].clone();
    assert_ne!(v1, v0);
    let text = env.config_text();
    assert!(
        text.starts_with(
            "# Top comment: keep me\nmodel = \"other-model\" # the model\n\n# providers below\n"
        ),
        "{text}"
    );
    assert!(text.contains("[model_providers.mock]"));

    // A stale version is refused and nothing changes.
    let e = c
        .err(
            "config/value/write",
            json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace", "expectedVersion": v0}),
        )
        .await;
    assert_eq!(e["code"], -32600);
    assert_eq!(
        e["data"]["config_write_error_code"],
        "configVersionConflict"
    );
    // An invalid value is refused before anything is written.
    let e = c
        .err(
            "config/value/write",
            json!({"keyPath": "sandbox_mode", "value": "everything", "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        e["data"]["config_write_error_code"],
        "configValidationError"
    );
    assert!(
        e["message"].as_str().unwrap().contains("sandbox_mode"),
        "{e}"
    );
    let e = c
        .err(
            "config/value/write",
            json!({"keyPath": "modle", "value": "typo", "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(
        e["data"]["config_write_error_code"],
        "configSchemaUnknownKey"
    );
    let e = c
        .err(
            "config/value/write",
            json!({"keyPath": "model", "value": "x", "mergeStrategy": "replace", "filePath": "/etc/other.toml"}),
        )
        .await;
    assert_eq!(e["data"]["config_write_error_code"], "configLayerReadonly");
    assert_eq!(env.config_text(), text, "nothing written by failed writes");

    // A batch is all or nothing: removing the model of a non-default provider is invalid.
    let e = c
        .err(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "approval_policy", "value": "on-request", "mergeStrategy": "replace"},
                {"keyPath": "model", "value": null, "mergeStrategy": "replace"},
            ], "expectedVersion": v1}),
        )
        .await;
    assert_eq!(
        e["data"]["config_write_error_code"],
        "configValidationError"
    );
    assert!(
        e["message"].as_str().unwrap().contains("no model is set"),
        "{e}"
    );
    assert_eq!(env.config_text(), text);
    let r = c
        .ok(
            "config/batchWrite",
            json!({"edits": [
                {"keyPath": "sandbox_workspace_write", "value": {"network_access": true}, "mergeStrategy": "upsert"},
                {"keyPath": "approval_policy", "value": "on-request", "mergeStrategy": "replace"},
                {"keyPath": "model", "value": "third-model", "mergeStrategy": "replace"},
            ], "expectedVersion": v1}),
        )
        .await;
    assert_eq!(r["status"], "ok");
    let text = env.config_text();
    assert!(
        text.starts_with("# Top comment: keep me\nmodel = \"third-model\" # the model\n"),
        "{text}"
    );
    assert!(text.contains("approval_policy = \"on-request\""));
    assert!(
        text.contains("[sandbox_workspace_write]\nnetwork_access = true"),
        "{text}"
    );
    // The write took effect for readers.
    let read = c.ok("config/read", json!({})).await;
    assert_eq!(
        read["config"]["sandbox_workspace_write"]["network_access"],
        true
    );
    assert!(
        !env.home.read_dir().unwrap().any(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            // `.config.toml.lock` is the (empty, permanent) edit lock, not a leftover.
            name.starts_with(".config.toml") && name != ".config.toml.lock"
        }),
        "no temp files left"
    );
}

#[tokio::test]
async fn a_write_shadowed_by_a_flag_says_so() {
    let env = config_env().await;
    let mut opts = env.options();
    opts.cli_overrides = vec![(
        "approval_policy".into(),
        toml::Value::String("never".into()),
    )];
    let mut c = Client::start(opts);
    let r = c
        .ok(
            "config/value/write",
            json!({"keyPath": "approval_policy", "value": "untrusted", "mergeStrategy": "replace"}),
        )
        .await;
    assert_eq!(r["status"], "okOverridden");
    assert_eq!(r["overriddenMetadata"]["effectiveValue"], "never");
    assert_eq!(
        r["overriddenMetadata"]["overridingLayer"]["name"]["type"],
        "sessionFlags"
    );
}
