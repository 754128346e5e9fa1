//! `notify = ["program", "arg"...]`: when a turn completes, run the program with one more
//! argument, a JSON object describing the turn (the shape Codex sends, so existing notifier
//! scripts work):
//!
//! `{"type":"agent-turn-complete","thread-id":…,"turn-id":…,"cwd":…,"input-messages":[…],"last-assistant-message":…}`
//!
//! The program runs detached: the turn never waits for it (it is started off the caller's
//! thread, which may hold the session lock), and a failure to start it is logged at warn
//! level, not shown to the model. It gets the environment commands get: the
//! `[shell_environment_policy]` applied and this process's credentials removed.

use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

pub(crate) struct Notifier {
    argv: Vec<String>,
    cwd: PathBuf,
    env: HashMap<String, String>,
    /// User messages of the turn in progress, sent as `input-messages`.
    inputs: Mutex<Vec<String>>,
}

impl Notifier {
    /// `None` when `notify` is not configured.
    pub fn from_config(config: &oi_config::Config) -> Option<Self> {
        let argv = config.notify.clone().filter(|a| !a.is_empty())?;
        Some(Self {
            argv,
            cwd: config.cwd.clone(),
            env: config.command_env(),
            inputs: Mutex::new(Vec::new()),
        })
    }

    /// Watch the thread's events; on `task_complete`, run the program.
    pub fn observe(&self, thread_id: &ThreadId, msg: &EventMsg) {
        let mut inputs = self.inputs.lock().unwrap_or_else(|p| p.into_inner());
        match msg {
            EventMsg::TaskStarted(_) => inputs.clear(),
            EventMsg::UserMessage(m) => inputs.push(m.message.clone()),
            EventMsg::TaskComplete(done) => {
                let payload = serde_json::json!({
                    "type": "agent-turn-complete",
                    "thread-id": thread_id.to_string(),
                    "turn-id": done.turn_id,
                    "cwd": self.cwd,
                    "input-messages": std::mem::take(&mut *inputs),
                    "last-assistant-message": done.last_agent_message,
                });
                self.run(payload.to_string());
            }
            _ => {}
        }
    }

    fn run(&self, payload: String) {
        let Some((program, args)) = self.argv.split_first() else {
            return;
        };
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .arg(payload)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(&self.env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let program = program.clone();
        // Spawned and reaped on a thread of its own: `fork` is not done under the session
        // lock the caller may hold, and the child does not linger as a zombie.
        let started = std::thread::Builder::new()
            .name("notify".into())
            .spawn(move || match cmd.spawn() {
                Ok(mut child) => {
                    tracing::debug!("notify: started `{program}` (pid {})", child.id());
                    let _ = child.wait();
                }
                Err(e) => tracing::warn!(
                    "notify: cannot run `{program}`: {e}; check `notify` in config.toml"
                ),
            });
        if let Err(e) = started {
            tracing::warn!("notify: cannot start a thread for the notifier: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notifier_gets_the_command_environment_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("env.txt");
        let path = std::env::var("PATH").unwrap_or_default();
        let n = Notifier {
            // `$0` is the output file, `$1` the payload.
            argv: vec![
                "sh".into(),
                "-c".into(),
                "env > \"$0.tmp\" && echo \"$1\" >> \"$0.tmp\" && mv \"$0.tmp\" \"$0\"".into(),
                out.display().to_string(),
            ],
            cwd: dir.path().to_path_buf(),
            env: HashMap::from([
                ("PATH".to_string(), path),
                ("ONLY_THIS".to_string(), "1".to_string()),
            ]),
            inputs: Mutex::new(Vec::new()),
        };
        n.run(r#"{"type":"agent-turn-complete"}"#.into());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !out.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the notifier never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("ONLY_THIS=1"), "{text}");
        assert!(text.contains("agent-turn-complete"), "{text}");
        // This process has HOME; the notifier gets only what it was given.
        assert!(!text.lines().any(|l| l.starts_with("HOME=")), "{text}");
    }
}
