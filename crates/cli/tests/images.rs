//! Images for vision models end to end: `exec -i FILE` and a path pasted into the TUI reach
//! the model as image parts on both wires (what the mock received is checked), and a model
//! without vision, a file that is no image and a server's refusal each end in one line that
//! names the fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::tui_pty;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockResponse, MockScript, MockTurn};
use serde_json::Value;
use tui_pty::*;

/// A valid 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0xf8, 0xcf, 0x50,
    0x0f, 0x00, 0x03, 0x86, 0x01, 0x80, 0x5a, 0x34, 0x7d, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The image URLs of the last user message, as the wire carries them.
fn user_images(req: &oi_test_support::RecordedRequest) -> Vec<String> {
    let items = req.items();
    let Some(user) = items
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return Vec::new();
    };
    let parts = user["content"].as_array().cloned().unwrap_or_default();
    parts
        .iter()
        .filter_map(|p| match (req.wire_api(), p["type"].as_str()) {
            // Chat Completions: {"type":"image_url","image_url":{"url":"data:…"}}
            (WireApi::Chat, Some("image_url")) => p["image_url"]["url"].as_str(),
            // Responses: {"type":"input_image","image_url":"data:…"}
            (WireApi::Responses, Some("input_image")) => p["image_url"].as_str(),
            _ => None,
        })
        .map(str::to_string)
        .collect()
}

async fn exec_sends_the_image_on(wire: WireApi) {
    let env = TestEnv::new(MockScript::turns([MockTurn::text("a red dot")]), wire).await;
    std::fs::write(env.work.path().join("dot.png"), PNG).unwrap();
    std::fs::write(env.work.path().join("two.png"), PNG).unwrap();
    let out = env
        .run(&[
            "exec",
            "-i",
            "dot.png",
            "--image",
            "two.png",
            "what is this?",
        ])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("a red dot"));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    let images = user_images(&reqs[0]);
    assert_eq!(images.len(), 2, "{}", reqs[0].body);
    assert!(
        images[0].starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        images[0]
    );
    assert_eq!(reqs[0].last_user_text().as_deref(), Some("what is this?"));
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_i_sends_image_url_parts_on_the_chat_wire() {
    exec_sends_the_image_on(WireApi::Chat).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_i_sends_input_image_parts_on_the_responses_wire() {
    exec_sends_the_image_on(WireApi::Responses).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_i_refuses_a_model_without_vision_a_fake_image_and_a_huge_one() {
    let env = env([MockTurn::text("never")]).await;
    std::fs::write(env.work.path().join("dot.png"), PNG).unwrap();
    let out = env
        .run(&["exec", "-m", "qwen3-coder-30b", "-i", "dot.png", "describe"])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("the model `qwen3-coder-30b` does not accept images; choose a vision model"),
        "{err}"
    );

    std::fs::write(env.work.path().join("notes.png"), "just text").unwrap();
    let out = env.run(&["exec", "-i", "notes.png", "describe"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("notes.png is not a PNG, JPEG, GIF or WebP image"),
        "{}",
        stderr(&out)
    );

    let big = std::fs::File::create(env.work.path().join("big.png")).unwrap();
    big.set_len(oi_core::image_input::MAX_IMAGE_BYTES + 1)
        .unwrap();
    let out = env.run(&["exec", "-i", "big.png", "describe"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the limit is 10 MiB"),
        "{}",
        stderr(&out)
    );
    assert!(env.mock.requests().is_empty(), "nothing is sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_refusal_of_images_names_the_fix() {
    // vLLM's answer for a text-only model (the catalog does not know `mock-model`, so the
    // image is sent and the server decides).
    let env = TestEnv::new(
        MockScript::new(vec![MockResponse::error(
            400,
            r#"{"object":"error","message":"mock-model is not a multimodal model","type":"BadRequestError","code":400}"#,
        )]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work.path().join("dot.png"), PNG).unwrap();
    let out = env.run(&["exec", "-i", "dot.png", "describe"]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("is not a multimodal model")
            && err.contains("the model `mock-model` does not accept images; choose a vision model"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_pasted_into_the_tui_is_sent_as_an_image() {
    let env = env([MockTurn::text("a red dot"), MockTurn::text("no image here")]).await;
    let png = env.work().join("red dot.png");
    std::fs::write(&png, PNG).unwrap();
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    // What a terminal sends when a file is dropped on it: the path, spaces escaped, as a
    // bracketed paste.
    let pasted = png.display().to_string().replace(' ', "\\ ");
    tui.send(&format!("\x1b[200~{pasted}\x1b[201~"));
    tui.wait_for("[image 1: red dot.png]");
    tui.type_text(" what is it?");
    tui.send("\r");
    tui.wait_for("a red dot");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    // The next message carries no image: attachments go with one message.
    turn(&tui, "and now?", "no image here");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    let images = user_images(&reqs[0]);
    assert_eq!(images.len(), 1, "{}", reqs[0].body);
    assert!(images[0].starts_with("data:image/png;base64,iVBORw0KGgo"));
    assert_eq!(
        reqs[0].last_user_text().as_deref(),
        Some("[image 1: red dot.png] what is it?")
    );
    assert!(user_images(&reqs[1]).is_empty());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tui_refuses_an_image_for_a_model_without_vision() {
    let env = env([MockTurn::text("plain answer")]).await;
    let png = env.work().join("dot.png");
    std::fs::write(&png, PNG).unwrap();
    let tui = Tui::spawn(&env, &["-m", "qwen3-coder-30b"]);
    tui.wait_for("Ask anything");
    tui.send(&format!("\x1b[200~{}\x1b[201~", png.display()));
    tui.wait_for("does not accept images; choose a vision model");
    assert!(!tui.text().contains("[image 1:"));
    turn(&tui, "hello", "plain answer");
    assert!(user_images(&env.mock.requests()[0]).is_empty());
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn interpreter_i_attaches_the_image_to_the_first_message() {
    let env = env([MockTurn::text("a red dot")]).await;
    std::fs::write(env.work.path().join("dot.png"), PNG).unwrap();
    let tui = Tui::spawn(&env, &["-i", "dot.png"]);
    tui.wait_for("[image 1: dot.png]");
    tui.type_text(" describe");
    tui.send("\r");
    tui.wait_for("a red dot");
    assert_eq!(user_images(&env.mock.requests()[0]).len(), 1);
    quit(tui);
}
