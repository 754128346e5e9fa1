//! The client's `fs/*` and `terminal/*` as the engine's client tools (`oi_core::ClientTools`):
//! what the client declared in `initialize` is what it is asked to do.
//!
//! * Reads (`fs/read_text_file`): a change is planned against the editor's buffer, saved or
//!   not.
//! * Writes (`fs/write_text_file`): an approved change lands in the editor. It was reviewed
//!   as a diff first: the engine shows the planned files' whole texts, which become the tool
//!   call's diffs.
//! * Commands (`terminal/create`, `wait_for_exit`, `output`, `kill`, `release`): the
//!   terminal is shown in the command's tool call. A command the policy confines runs inside
//!   our sandbox there (the binary's [`SandboxLauncher`]); without a launcher it runs in the
//!   engine's own sandbox instead, never unconfined.
//!
//! Every request has a deadline; a client that does not answer fails the tool call, which
//! the model is told.

use crate::SandboxLauncher;
use crate::schema::{
    CreateTerminalRequest, CreateTerminalResponse, EnvVariable, KillTerminalRequest,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, SessionId,
    TerminalOutputRequest, TerminalOutputResponse, WaitForTerminalExitRequest,
    WriteTextFileRequest,
};
use crate::updates::SessionOut;
use oi_core::{
    ClientCommand, ClientCommandOutput, ClientFuture, ClientToolError, ClientTools, PlannedFile,
};
use oi_jsonrpc::OutgoingSender;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a file request may take.
const FS_DEADLINE: Duration = Duration::from_secs(60);
/// How long a terminal request other than waiting for the exit may take.
const TERMINAL_DEADLINE: Duration = Duration::from_secs(30);
/// The most output the client keeps of a command (it truncates from the start).
const OUTPUT_BYTE_LIMIT: u64 = 1024 * 1024;

/// What the client declared it offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offered {
    /// The client reads text files for the agent (`fs/read_text_file`).
    pub read: bool,
    /// The client writes text files for the agent (`fs/write_text_file`).
    pub write: bool,
    /// The client runs commands in its terminals (`terminal/*`).
    pub terminal: bool,
}

/// One session's client tools.
pub struct AcpClientTools {
    pub(crate) session_id: SessionId,
    pub(crate) outgoing: OutgoingSender,
    pub(crate) out: Arc<SessionOut>,
    pub(crate) offered: Offered,
    pub(crate) launcher: Option<SandboxLauncher>,
    /// The config home a sandboxed command's `interpreter sandbox` reads.
    pub(crate) home: PathBuf,
    /// Planned changes by call id, shared with the session's translator.
    pub(crate) planned: Arc<Mutex<HashMap<String, Vec<PlannedFile>>>>,
}

impl AcpClientTools {
    async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        deadline: Duration,
    ) -> Result<R, ClientToolError> {
        let params = serde_json::to_value(params)
            .map_err(|e| ClientToolError::Failed(format!("could not encode {method}: {e}")))?;
        let (id, reply) = self.outgoing.request(method, params).await;
        let reply = match tokio::time::timeout(deadline, reply).await {
            Ok(r) => r,
            Err(_) => {
                if self.outgoing.forget(&id) {
                    self.outgoing
                        .notify(
                            crate::permission::CANCEL_REQUEST,
                            serde_json::json!({ "requestId": id }),
                        )
                        .await;
                }
                return Err(ClientToolError::Failed(format!(
                    "the editor did not answer {method} within {} s",
                    deadline.as_secs()
                )));
            }
        };
        match reply {
            Ok(Ok(v)) => serde_json::from_value(v).map_err(|e| {
                ClientToolError::Failed(format!(
                    "the editor's answer to {method} is malformed: {e}"
                ))
            }),
            Ok(Err(e)) => Err(ClientToolError::Failed(format!(
                "the editor refused {method}: {}",
                e.message
            ))),
            Err(_) => Err(ClientToolError::Failed(format!(
                "the editor went away before answering {method}"
            ))),
        }
    }

    async fn run(
        &self,
        command: ClientCommand<'_>,
        cancel: &CancellationToken,
    ) -> Result<ClientCommandOutput, ClientToolError> {
        let (argv, env) = match command.sandbox {
            None => (command.argv.to_vec(), Vec::new()),
            Some(policy) => {
                let Some(launch) = &self.launcher else {
                    return Err(ClientToolError::Unsupported(
                        "no way to confine a command in the editor's terminal".into(),
                    ));
                };
                (
                    launch(policy, command.cwd, &self.home, command.argv),
                    // The sandbox reads the same config as the agent.
                    vec![EnvVariable::new(
                        "OPENINTERPRETER_HOME",
                        self.home.display().to_string(),
                    )],
                )
            }
        };
        let Some((program, args)) = argv.split_first() else {
            return Err(ClientToolError::Failed("the command is empty".into()));
        };
        let create = CreateTerminalRequest::new(self.session_id.clone(), program.clone())
            .args(args.to_vec())
            .env(env)
            .cwd(command.cwd.to_path_buf())
            .output_byte_limit(OUTPUT_BYTE_LIMIT);
        let created: CreateTerminalResponse = self
            .call("terminal/create", &create, TERMINAL_DEADLINE)
            .await?;
        let terminal = created.terminal_id;
        self.out.terminal(command.call_id, &terminal.0).await;
        let wait = WaitForTerminalExitRequest::new(self.session_id.clone(), terminal.clone());
        // The command's own timeout, and a little for the editor to report the exit.
        let waited = tokio::select! {
            r = self.call::<_, serde_json::Value>("terminal/wait_for_exit", &wait, command.timeout + Duration::from_secs(5)) => Some(r),
            _ = cancel.cancelled() => None,
        };
        let (timed_out, aborted) = match &waited {
            Some(Ok(_)) => (false, false),
            Some(Err(_)) => (true, false),
            None => (false, true),
        };
        if timed_out || aborted {
            let kill = KillTerminalRequest::new(self.session_id.clone(), terminal.clone());
            if let Err(e) = self
                .call::<_, serde_json::Value>("terminal/kill", &kill, TERMINAL_DEADLINE)
                .await
            {
                tracing::warn!("could not kill terminal {}: {e}", terminal.0);
            }
        }
        let output: Result<TerminalOutputResponse, _> = self
            .call(
                "terminal/output",
                &TerminalOutputRequest::new(self.session_id.clone(), terminal.clone()),
                TERMINAL_DEADLINE,
            )
            .await;
        let release = ReleaseTerminalRequest::new(self.session_id.clone(), terminal.clone());
        if let Err(e) = self
            .call::<_, serde_json::Value>("terminal/release", &release, TERMINAL_DEADLINE)
            .await
        {
            tracing::debug!("could not release terminal {}: {e}", terminal.0);
        }
        let output = output?;
        let exit_code = output
            .exit_status
            .as_ref()
            .and_then(|s| s.exit_code)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(-1);
        let mut text = output.output;
        if output.truncated {
            text.insert_str(0, "[earlier output was cut by the editor]\n");
        }
        Ok(ClientCommandOutput {
            exit_code,
            output: text,
            timed_out,
            aborted,
        })
    }
}

impl ClientTools for AcpClientTools {
    fn reads_files(&self) -> bool {
        self.offered.read
    }

    fn writes_files(&self) -> bool {
        self.offered.write
    }

    fn runs_commands(&self) -> bool {
        self.offered.terminal
    }

    fn read_text_file<'a>(
        &'a self,
        path: &'a Path,
    ) -> ClientFuture<'a, Result<Option<String>, ClientToolError>> {
        Box::pin(async move {
            if !self.offered.read {
                return Err(ClientToolError::Unsupported("fs/read_text_file".into()));
            }
            let req = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
            let r: ReadTextFileResponse = self.call("fs/read_text_file", &req, FS_DEADLINE).await?;
            Ok(Some(r.content))
        })
    }

    fn write_text_file<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> ClientFuture<'a, Result<(), ClientToolError>> {
        Box::pin(async move {
            if !self.offered.write {
                return Err(ClientToolError::Unsupported("fs/write_text_file".into()));
            }
            let req =
                WriteTextFileRequest::new(self.session_id.clone(), path.to_path_buf(), content);
            self.call::<_, serde_json::Value>("fs/write_text_file", &req, FS_DEADLINE)
                .await
                .map(drop)
        })
    }

    fn run_command<'a>(
        &'a self,
        command: ClientCommand<'a>,
        cancel: &'a CancellationToken,
    ) -> ClientFuture<'a, Result<ClientCommandOutput, ClientToolError>> {
        Box::pin(async move {
            if !self.offered.terminal {
                return Err(ClientToolError::Unsupported("terminal/create".into()));
            }
            self.run(command, cancel).await
        })
    }

    fn change_planned(&self, call_id: &str, files: &[PlannedFile]) {
        self.planned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(call_id.to_string(), files.to_vec());
    }
}
