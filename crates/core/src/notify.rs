//! `notify = ["program", "arg"...]`: when a turn completes, run the program with one more
//! argument, a JSON object describing the turn (the shape Codex sends, so existing notifier
//! scripts work):
//!
//! `{"type":"agent-turn-complete","thread-id":…,"turn-id":…,"cwd":…,"input-messages":[…],"last-assistant-message":…}`
//!
//! The program runs detached: the turn never waits for it, and a failure to start it is logged
//! at warn level, not shown to the model.

use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use std::path::PathBuf;
use std::sync::Mutex;

pub(crate) struct Notifier {
    argv: Vec<String>,
    cwd: PathBuf,
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
        let (program, args) = match self.argv.split_first() {
            Some(split) => split,
            None => return,
        };
        let spawned = std::process::Command::new(program)
            .args(args)
            .arg(payload)
            .current_dir(&self.cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match spawned {
            Ok(mut child) => {
                tracing::debug!("notify: started `{program}` (pid {})", child.id());
                // Reap it off the turn's path so it does not linger as a zombie.
                std::thread::spawn(move || {
                    let _ = child.wait();
                });
            }
            Err(e) => {
                tracing::warn!("notify: cannot run `{program}`: {e}; check `notify` in config.toml")
            }
        }
    }
}
