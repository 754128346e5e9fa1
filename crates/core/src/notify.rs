//! `notify = ["program", "arg"...]`: when a turn completes, run the program with one more
//! argument, a JSON object describing the turn (the shape Codex sends, so existing notifier
//! scripts work):
//!
//! `{"type":"agent-turn-complete","thread-id":…,"turn-id":…,"cwd":…,"input-messages":[…],"last-assistant-message":…}`
//!
//! The notifier is a subscriber of the thread's events: the turn never waits for it and
//! holds no lock while it runs. The program is started through `oi-process`, so it cannot
//! outlive the agent; a thread that shuts down waits for running notifiers at most
//! [`SHUTDOWN_WAIT`] (under `exec` the process exits right after the turn, and a notifier
//! must get to run). A failure to start it is logged at warn level, not shown to the model. It gets the environment commands get: the
//! `[shell_environment_policy]` applied and this process's credentials removed.

use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a thread's shutdown waits for notifiers still running.
pub(crate) const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

pub(crate) struct Notifier {
    argv: Vec<String>,
    /// From an accepted project config: what the program may be (checked before each run).
    pins: Option<oi_config::launch_pins::LaunchPins>,
    cwd: PathBuf,
    env: HashMap<String, String>,
    /// User messages of the turn in progress, sent as `input-messages`.
    inputs: Vec<String>,
}

impl Notifier {
    /// `None` when `notify` is not configured.
    pub(crate) fn from_config(config: &oi_config::Config) -> Option<Self> {
        let argv = config.notify.clone().filter(|a| !a.is_empty())?;
        Some(Self {
            argv,
            pins: config.notify_pins.clone(),
            cwd: config.cwd.clone(),
            env: config.command_env(),
            inputs: Vec::new(),
        })
    }

    /// Follows the thread's events until it shuts down, running the program at each
    /// `task_complete`. The task ends after `shutdown_complete` once the notifiers it
    /// started have exited (or after [`SHUTDOWN_WAIT`]).
    pub(crate) fn watch(
        mut self,
        thread_id: ThreadId,
        mut events: crate::EventStream,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut running = tokio::task::JoinSet::new();
            while let Some(ev) = events.next().await {
                if matches!(ev.msg, EventMsg::ShutdownComplete) {
                    break;
                }
                let payload = self.observe(&thread_id, &ev.msg);
                if let Some(payload) = payload
                    && let Some(child) = self.run(payload).await
                {
                    running.spawn(async move {
                        let mut child = child;
                        let _ = child.wait().await;
                    });
                }
                // Reap the ones that are done, so a long session keeps no list.
                while running.try_join_next().is_some() {}
            }
            let all_done = async { while running.join_next().await.is_some() {} };
            if tokio::time::timeout(SHUTDOWN_WAIT, all_done).await.is_err() {
                tracing::warn!(
                    "notify: the program still runs {SHUTDOWN_WAIT:?} after the thread stopped; it is left to finish"
                );
                running.detach_all();
            }
        })
    }

    /// The payload to run the program with, at a turn's completion.
    fn observe(&mut self, thread_id: &ThreadId, msg: &EventMsg) -> Option<String> {
        match msg {
            EventMsg::TaskStarted(_) => self.inputs.clear(),
            EventMsg::UserMessage(m) => self.inputs.push(m.message.clone()),
            EventMsg::TaskComplete(done) => {
                let payload = serde_json::json!({
                    "type": "agent-turn-complete",
                    "thread-id": thread_id.to_string(),
                    "turn-id": done.turn_id,
                    "cwd": self.cwd,
                    "input-messages": std::mem::take(&mut self.inputs),
                    "last-assistant-message": done.last_agent_message,
                });
                return Some(payload.to_string());
            }
            _ => {}
        }
        None
    }

    async fn run(&self, payload: String) -> Option<tokio::process::Child> {
        let (program, args) = self.argv.split_first()?;
        // A script the turn that just ended rewrote is not what the user accepted: checked
        // before every run, not only when the session started.
        if let Some(pins) = self.pins.clone() {
            let (argv, cwd) = (self.argv.clone(), self.cwd.clone());
            let checked = tokio::task::spawn_blocking(move || pins.verify(&argv, &cwd)).await;
            match checked {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!("notify: not run: {e}");
                    return None;
                }
                Err(e) => {
                    tracing::warn!("notify: not run: its files could not be checked: {e}");
                    return None;
                }
            }
        }
        let mut cmd = oi_process::command(program);
        cmd.args(args)
            .arg(payload)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(&self.env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(false);
        match cmd.spawn() {
            Ok(child) => {
                tracing::debug!("notify: started `{program}` (pid {:?})", child.id());
                Some(child)
            }
            Err(e) => {
                tracing::warn!(
                    "notify: cannot run `{program}`: {e}; check `notify` in config.toml"
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_notifier_gets_the_command_environment_not_ours() {
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
            pins: None,
            cwd: dir.path().to_path_buf(),
            env: HashMap::from([
                ("PATH".to_string(), path),
                ("ONLY_THIS".to_string(), "1".to_string()),
            ]),
            inputs: Vec::new(),
        };
        let mut child = n
            .run(r#"{"type":"agent-turn-complete"}"#.into())
            .await
            .expect("started");
        child.wait().await.unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !out.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the notifier never ran"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("ONLY_THIS=1"), "{text}");
        assert!(text.contains("agent-turn-complete"), "{text}");
        // This process has HOME; the notifier gets only what it was given.
        assert!(!text.lines().any(|l| l.starts_with("HOME=")), "{text}");
    }
}
