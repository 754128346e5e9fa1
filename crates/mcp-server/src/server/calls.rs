//! `tools/call` and the Tasks extension's methods: a call runs its turn to the end, or — a
//! 2026-07-28 request — ends where the turn parks at approvals (`input_required` with a
//! sealed `requestState`, resumed by the call's retry), or returns a task at once when the
//! request declares the Tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`).

use super::{
    Arrival, CallSlot, Era, MAX_CONCURRENT_CALLS, MAX_STATELESS_CALLS, McpService, RequestMeta,
};
use crate::approvals::{self, Asker};
use crate::engine::TurnOptions;
use crate::mrtr::{self, InputResponses};
use crate::progress::Progress;
use crate::protocol::codex::tool_result;
use crate::protocol::input::ApprovalsRequired;
use crate::sealing::{ApprovalState, OpenError, Sealer, call_digest};
use crate::tasks::{self, Created};
use crate::tool_runner::{CallEnd, CallEnv};
use crate::tools;
use oi_jsonrpc::{RequestContext, RpcError};
use rmcp::model::{CallToolResponse, CreateTaskResult, CustomResult, ProgressToken, ServerResult};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CallToolParams {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<RequestMeta>,
    /// 2026-07-28: the answers to an `input_required` result's input requests.
    #[serde(default)]
    input_responses: Option<InputResponses>,
    /// 2026-07-28: the `requestState` of that result, as it was.
    #[serde(default)]
    request_state: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TaskParams {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateTaskParams {
    task_id: String,
    input_responses: InputResponses,
}

/// A typed result of our own (one rmcp's types would lose keys of) as a server result.
fn custom(value: impl serde::Serialize) -> Result<ServerResult, RpcError> {
    serde_json::to_value(value)
        .map(|v| ServerResult::CustomResult(CustomResult(v)))
        .map_err(|e| RpcError::internal(format!("the result could not be encoded: {e}")))
}

/// `data` of `-32021` for a request that needs the Tasks extension.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RequiredCapabilities {
    required_capabilities: rmcp::model::ClientCapabilities,
}

/// The Tasks extension's methods are for requests that declare it (`-32021`, naming it,
/// otherwise: SEP-2575's missing required client capability).
pub(super) fn require_tasks(method: &str, era: &Era) -> Result<(), RpcError> {
    if era
        .envelope()
        .is_some_and(|e| e.capabilities.supports_tasks())
    {
        return Ok(());
    }
    let mut required = rmcp::model::ClientCapabilities::default();
    required.extensions = Some(crate::protocol::extensions());
    Err(RpcError::new(
        oi_jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Missing required client capability: {method} belongs to the Tasks extension; declare `{}` under `extensions` in the request's `_meta.io.modelcontextprotocol/clientCapabilities`",
            rmcp::model::TASKS_EXTENSION_ID
        ),
    )
    .with_data(crate::protocol::era::error_data(RequiredCapabilities {
        required_capabilities: required,
    })))
}

/// Why a `requestState` was refused, and what to do.
fn state_refused(e: OpenError) -> RpcError {
    let why = match e {
        OpenError::Forged => {
            "`requestState` was not issued by this server (nor by a server sharing its state key: every server of a fleet needs the same mcp_state_key_file or OI_MCP_STATE_KEY), or it was changed; send it back exactly as it came"
        }
        OpenError::Expired => {
            "`requestState` has expired: the approval it asked for waited longer than the server keeps a turn parked (parked_turn_timeout_sec), and nothing it asked for ran; continue the thread with codex-reply"
        }
        OpenError::OtherPrincipal => {
            "`requestState` was issued to another client (another bearer token, or another user); only the client it was given to can answer it"
        }
        OpenError::OtherRequest => {
            "`requestState` belongs to another tool call; retry the call it came from (the same tool and the same arguments) with it"
        }
    };
    RpcError::invalid_params("tools/call", why)
}

impl McpService {
    fn sealer(&self) -> Result<&Sealer, RpcError> {
        // The reason names the server's files: logged, not told to the client.
        self.sealer.as_ref().map_err(|why| {
            tracing::warn!("cannot seal request states or task ids: {why}");
            RpcError::internal(
                "this server cannot seal request states or task ids: its state key is not loaded (its log says why)",
            )
        })
    }

    /// How many tool calls the service runs at once.
    fn call_cap(&self) -> usize {
        match self.arrival {
            Arrival::Connection => MAX_CONCURRENT_CALLS,
            Arrival::Alone => MAX_STATELESS_CALLS,
        }
    }

    /// Takes one of the service's tool-call slots; `None` when there are too many calls.
    fn call_slot(&self) -> Option<CallSlot> {
        let slot = CallSlot::take(&self.running_calls);
        (slot.before < self.call_cap()).then_some(slot)
    }

    /// The result of a call refused because too many run.
    fn too_many_calls(&self) -> CallEnd {
        let cap = self.call_cap();
        CallEnd::Result(tool_result(
            None,
            format!(
                "Too many tool calls are running ({cap}); wait for some to finish and try again."
            ),
            true,
        ))
    }

    /// How a call of `era` runs: who is asked its approvals, and whether they park.
    fn call_env(
        &self,
        ctx: RequestContext,
        era: &Era,
        meta: Option<RequestMeta>,
        slot: CallSlot,
    ) -> CallEnv {
        let can_ask = era
            .envelope()
            .is_some_and(|e| e.capabilities.elicitation.is_some());
        let parks = era.is_stateless() && can_ask && self.sealer.is_ok();
        let asker = match era {
            // The turn parks at approvals instead; what cannot park (an MCP server's
            // question inside a tool call) cannot be asked.
            Era::Stateless(_) if parks => Asker::Deny(approvals::STATELESS_NESTED),
            Era::Stateless(_) => Asker::Deny(approvals::STATELESS_NO_ELICITATION),
            Era::Handshake if self.client().is_some_and(|c| c.supports_elicitation) => {
                Asker::Elicit
            }
            Era::Handshake => Asker::Deny(approvals::NO_ELICITATION),
        };
        if era.is_stateless()
            && can_ask
            && let Err(why) = &self.sealer
        {
            tracing::warn!("approvals of 2026-07-28 requests are denied: {why}");
        }
        CallEnv {
            engine: self.engine.clone(),
            progress: meta
                .and_then(|m| m.progress_token)
                .and_then(|t| serde_json::from_value::<ProgressToken>(t).ok())
                .map(Progress::new),
            asker,
            log_level: era.envelope().and_then(|e| e.log_level),
            silent_after_cancel: era.is_stateless(),
            quiet: false,
            options: if parks {
                TurnOptions::parking()
            } else {
                TurnOptions::default()
            },
            slot: Some(slot),
            ctx,
        }
    }

    pub(super) async fn call_tool(
        self: Arc<Self>,
        ctx: RequestContext,
        era: Era,
        p: CallToolParams,
    ) -> Result<ServerResult, RpcError> {
        if p.name != tools::CODEX && p.name != tools::CODEX_REPLY {
            return Err(RpcError::invalid_params(
                "tools/call",
                format!(
                    "unknown tool `{}`; this server has `{}` and `{}`",
                    p.name,
                    tools::CODEX,
                    tools::CODEX_REPLY
                ),
            ));
        }
        let call = call_digest(&p.name, p.arguments.as_ref());
        let tool_call_id = ctx.id.to_string();
        let Some(slot) = self.call_slot() else {
            return self.respond(self.too_many_calls(), &call, &tool_call_id);
        };
        let env = self.call_env(ctx, &era, p.meta, slot);
        if let Some(envelope) = era.envelope() {
            if let Some(state) = p.request_state {
                let responses = p.input_responses.unwrap_or_default();
                let end = self.retry(env, &call, &state, &responses).await?;
                return self.respond(end, &call, &tool_call_id);
            }
            if p.input_responses.is_some() {
                return Err(RpcError::invalid_params(
                    "tools/call",
                    "`inputResponses` came without the `requestState` of the result they answer; send both, as the `input_required` result gave them",
                ));
            }
            if envelope.capabilities.supports_tasks() && self.sealer.is_ok() {
                return self
                    .start_task(env, &p.name, p.arguments.as_ref(), &call)
                    .await;
            }
        }
        let end = if p.name == tools::CODEX {
            match tools::parse_codex_args(p.arguments.as_ref(), &self.server_cwd) {
                Ok(args) => env.codex(args).await,
                Err(msg) => CallEnd::Result(tool_result(None, msg, true)),
            }
        } else {
            match tools::parse_reply_args(p.arguments.as_ref()) {
                Ok(args) => env.reply(args).await,
                Err(msg) => CallEnd::Result(tool_result(None, msg, true)),
            }
        };
        self.respond(end, &call, &tool_call_id)
    }

    /// The result of a call that ended with `end`: its tool result, or — its turn parked —
    /// `input_required` with the approvals and a `requestState` for the call's retry.
    fn respond(
        &self,
        end: CallEnd,
        call: &str,
        tool_call_id: &str,
    ) -> Result<ServerResult, RpcError> {
        let (thread, parked) = match end {
            CallEnd::Result(result) => return Ok(CallToolResponse::Complete(result).into()),
            CallEnd::Parked { thread, parked } => (thread, parked),
        };
        let sealer = self.sealer()?;
        let state = ApprovalState {
            thread,
            turn: parked.turn_id.clone(),
            park: parked.park_id.clone(),
            requests: mrtr::request_ids(&parked),
        };
        // The state lasts as long as the park waits (the engine refuses a later resume).
        let left = parked.expires_at - chrono::Utc::now().timestamp();
        let ttl = Duration::from_secs(u64::try_from(left).unwrap_or(0).max(1));
        let request_state = sealer.seal_approval(&state, call, ttl);
        let inputs = mrtr::input_requests(&parked, thread, tool_call_id);
        tracing::info!(
            "thread {thread}: turn {} waits for {} approval(s); asked as input_required",
            parked.turn_id,
            inputs.len()
        );
        custom(ApprovalsRequired::new(inputs, request_state))
    }

    /// The retry of a call that returned `input_required`: its state checked, its answers
    /// resume the parked turn here. Missing answers ask again.
    async fn retry(
        &self,
        env: CallEnv,
        call: &str,
        state: &str,
        responses: &InputResponses,
    ) -> Result<CallEnd, RpcError> {
        let state = self.sealer()?.open_approval(state, call).map_err(|e| {
            tracing::info!("tools/call retry refused: {e:?}");
            state_refused(e)
        })?;
        match mrtr::answers(&state.park, &state.requests, responses) {
            Ok(answers) => Ok(env
                .resume(state.thread, state.turn, state.park, answers)
                .await),
            Err(missing) => {
                tracing::debug!("tools/call retry without answers to {missing:?}: asking again");
                Ok(env.settle(state.thread, state.turn).await)
            }
        }
    }

    /// A call of a request that declared the Tasks extension: a task, once its turn is in
    /// the store.
    async fn start_task(
        &self,
        env: CallEnv,
        name: &str,
        arguments: Option<&Value>,
        call: &str,
    ) -> Result<ServerResult, RpcError> {
        let tool_call_id = env.ctx.id.to_string();
        let sealer = self.sealer()?;
        let created = if name == tools::CODEX {
            match tools::parse_codex_args(arguments, &self.server_cwd) {
                Ok(args) => {
                    tasks::create(env, sealer, async move |env: &mut CallEnv| {
                        env.start_codex(args).await
                    })
                    .await
                }
                Err(msg) => Created::Ended(CallEnd::Result(tool_result(None, msg, true))),
            }
        } else {
            match tools::parse_reply_args(arguments) {
                Ok(args) => {
                    tasks::create(env, sealer, async move |env: &mut CallEnv| {
                        env.start_reply(args).await
                    })
                    .await
                }
                Err(msg) => Created::Ended(CallEnd::Result(tool_result(None, msg, true))),
            }
        };
        match created {
            Created::Task(task) => Ok(CallToolResponse::Task(CreateTaskResult::new(task)).into()),
            Created::Ended(end) => self.respond(end, call, &tool_call_id),
        }
    }

    /// `tasks/get`.
    pub(super) async fn get_task(&self, era: Era, p: TaskParams) -> Result<ServerResult, RpcError> {
        require_tasks("tasks/get", &era)?;
        let view = tasks::get(self.engine.as_ref(), self.sealer()?, &p.task_id).await?;
        custom(view)
    }

    /// `tasks/update`: the answers resume the task's turn here (a tool-call slot of its own).
    pub(super) async fn update_task(
        &self,
        ctx: RequestContext,
        era: Era,
        p: UpdateTaskParams,
    ) -> Result<ServerResult, RpcError> {
        require_tasks("tasks/update", &era)?;
        let Some(slot) = self.call_slot() else {
            return Err(RpcError::invalid_request(
                "too many tool calls and tasks are running on this server; send the answers again later",
            ));
        };
        let env = self.call_env(ctx, &era, None, slot);
        tasks::update(env, self.sealer()?, &p.task_id, &p.input_responses).await?;
        Ok(ServerResult::task_ack(()))
    }

    /// `tasks/cancel`.
    pub(super) async fn cancel_task(
        &self,
        era: Era,
        p: TaskParams,
    ) -> Result<ServerResult, RpcError> {
        require_tasks("tasks/cancel", &era)?;
        tasks::cancel(self.engine.clone(), self.sealer()?, &p.task_id).await?;
        Ok(ServerResult::task_ack(()))
    }
}
