//! Setup shared by the engine's integration tests: a config that points at the mock model
//! with no sandbox and no approvals, and running one op to the end of its turn.
#![allow(dead_code)] // each test file uses a different subset

use oi_core::Thread;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use std::path::Path;
use std::time::Duration;

/// Writes `toml` as `home`'s config.toml and loads it with `cwd = home`, full access and
/// `approval_policy = never` (the tests script the model, not the user).
pub fn load_unconfined(home: &Path, toml: &str) -> oi_config::Config {
    std::fs::write(home.join("config.toml"), toml).unwrap();
    oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(SandboxMode::DangerFullAccess),
            approval_policy: Some(AskForApproval::Never),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap()
    .config
}

/// A user message as an op.
pub fn user(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::text(text)],
        overrides: TurnOverrides::default(),
    }
}

/// Submits `op` and returns every event up to the end of its turn (a generous deadline per
/// event, never a fixed sleep).
pub async fn run_op(thread: &Thread, op: Op) -> Vec<Event> {
    let id = thread.submit(op).await.unwrap();
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), thread.next_event())
            .await
            .expect("no event within 60 s")
            .expect("thread closed");
        let end = ev.id == id && ev.msg.ends_turn();
        out.push(ev);
        if end {
            return out;
        }
    }
}
