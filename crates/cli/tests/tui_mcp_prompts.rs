//! MCP prompts as slash commands and MCP resources as `@` mentions, in a real
//! pseudo-terminal against the reference server (server-everything, which lists both). What
//! reaches the model is checked in the mock's recorded requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tui_pty;

use oi_test_support::{MockScript, MockTurn};
use tui_pty::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_with_arguments_asks_in_a_form_and_is_sent() {
    let env = env_with_mcp(MockScript::turns([
        MockTurn::text("sunny in Paris"),
        MockTurn::text("simple done"),
    ]))
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("MCP 1/1");
    // The popup lists the server's prompts as commands.
    tui.type_text("/mcp__every");
    tui.wait_for("/mcp__everything__args-prompt");
    tui.wait_for("MCP prompt · A prompt with two arguments");
    tui.type_text("thing__args-prompt");
    tui.send("\r");
    tui.wait_for("Arguments for the prompt `args-prompt`");
    // The required argument is checked before the prompt is asked for.
    tui.send("\r");
    tui.wait_for("`city` is required");
    tui.type_text("Paris");
    tui.send("\r");
    tui.wait_for("sunny in Paris");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    // A prompt without arguments runs at once; arguments may also be given inline.
    command(&tui, "/mcp__everything__simple-prompt");
    tui.wait_for("simple done");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].last_user_text().as_deref(),
        Some("What's weather in Paris?")
    );
    assert_eq!(
        reqs[1].last_user_text().as_deref(),
        Some("This is a simple prompt without arguments.")
    );
    // A prompt nobody offers is an error, not a message to the model.
    command(&tui, "/mcp__everything__no-such-prompt");
    tui.wait_for("no MCP server offers the prompt `/mcp__everything__no-such-prompt`");
    assert_eq!(env.mock.requests().len(), 2);
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resource_mention_is_completed_and_read_into_the_message() {
    let env = env_with_mcp(MockScript::turns([MockTurn::text("read it")])).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("MCP 1/1");
    tui.type_text("summarise @structure");
    let uri = "demo://resource/static/document/structure.md";
    tui.wait_for(&format!("@everything:{uri}"));
    tui.send("\t");
    tui.wait_for(&format!("summarise @everything:{uri}"));
    tui.send("\r");
    // The message's cell names the resource; its contents go to the model only.
    tui.wait_for(&format!("+ @everything:{uri} (read into the message)"));
    tui.wait_for("read it");
    assert!(!tui.text().contains("Everything Server - Project Structure"));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    let sent = reqs[0].all_text();
    assert!(
        sent.contains(&format!("summarise @everything:{uri}")),
        "{sent}"
    );
    // The resource's contents (the server's docs/structure.md) are in the message.
    assert!(
        sent.contains(&format!("Resource @everything:{uri}:")),
        "{sent}"
    );
    assert!(
        sent.contains("Everything Server - Project Structure"),
        "{sent}"
    );
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mention_that_cannot_be_read_sends_nothing() {
    let env = env_with_mcp(MockScript::turns([MockTurn::text("unused")])).await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("MCP 1/1");
    tui.type_text("look at @everything:demo://no/such/thing");
    tui.send("\r");
    tui.wait_for("cannot read @everything:demo://no/such/thing");
    // The draft is back in the composer.
    tui.wait_until("the draft to come back", |_| {
        tui.rows()
            .iter()
            .any(|r| r.starts_with("› look at @everything:demo://no/such/thing"))
    });
    assert!(env.mock.requests().is_empty());
}
