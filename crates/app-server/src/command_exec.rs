//! `command/exec`: one command outside any thread, through the engine's execution seam
//! (`oi_core::run_command`): the configured sandbox unless the request names another
//! policy, the credential-free environment, a timeout and an output cap. Buffered only
//! (the streaming variants `command/exec/write|resize|terminate` are not offered).

use crate::protocol::methods as m;
use crate::protocol::wire::{CommandExecParams, CommandExecResponse};
use crate::protocol::{ThreadOverrides, V2SandboxPolicy};
use crate::{Conn, invalid, method};
use oi_core::{CommandRequest, run_command};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use std::sync::Arc;
use std::time::Duration;

/// Default timeout (as Codex's).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default bytes kept of each of stdout and stderr.
pub(crate) const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::CommandExec, _, _>(t, conn, Execution::Spawn, exec);
}

fn request(p: CommandExecParams, config: &oi_config::Config) -> Result<CommandRequest, RpcError> {
    if p.command.is_empty() {
        return Err(invalid(
            "command must not be empty: pass the program and its arguments, e.g. [\"ls\", \"-la\"]",
        ));
    }
    if p.disable_timeout && p.timeout_ms.is_some() {
        return Err(invalid(
            "timeoutMs cannot be combined with disableTimeout; send one of them",
        ));
    }
    if p.disable_output_cap && p.output_bytes_cap.is_some() {
        return Err(invalid(
            "outputBytesCap cannot be combined with disableOutputCap; send one of them",
        ));
    }
    let sandbox_policy = match p.sandbox_policy {
        None => config.sandbox_policy.clone(),
        Some(v) => serde_json::from_value::<V2SandboxPolicy>(v)
            .map_err(|e| {
                invalid(format!(
                    "invalid sandboxPolicy ({e}); expected e.g. {{\"type\": \"readOnly\"}} or {{\"type\": \"workspaceWrite\"}}"
                ))
            })?
            .into(),
    };
    let cwd = match p.cwd {
        None => config.cwd.clone(),
        Some(c) if c.is_absolute() => c,
        Some(c) => config.cwd.join(c),
    };
    if !cwd.is_dir() {
        return Err(invalid(format!(
            "cwd {} is not a directory; pass an existing directory",
            cwd.display()
        )));
    }
    Ok(CommandRequest {
        argv: p.command,
        cwd,
        timeout: if p.disable_timeout {
            None
        } else {
            Some(p.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis))
        },
        sandbox_policy,
        env: p.env.unwrap_or_default().into_iter().collect(),
        output_cap: if p.disable_output_cap {
            None
        } else {
            Some(p.output_bytes_cap.unwrap_or(DEFAULT_OUTPUT_CAP))
        },
    })
}

async fn exec(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: CommandExecParams,
) -> Result<CommandExecResponse, RpcError> {
    let loaded = conn
        .load_session_config(&ThreadOverrides::default())
        .await?;
    let req = request(p, &loaded.config)?;
    let out = run_command(&loaded.config, req, &ctx.cancel)
        .await
        .map_err(|e| invalid(e.to_string()))?;
    Ok(CommandExecResponse {
        exit_code: out.exit_code,
        stdout: out.stdout,
        stderr: out.stderr,
    })
}
