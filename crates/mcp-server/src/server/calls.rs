//! `tools/call` and the Tasks extension's methods: a call runs its turn to the end, or — a
//! 2026-07-28 request — ends where the turn parks at approvals (`input_required` with a
//! sealed `requestState`, resumed by the call's retry), or returns a task at once when the
//! request declares the Tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`).

use super::{
    Arrival, CallSlot, Era, MAX_CONCURRENT_CALLS, MAX_STATELESS_CALLS, McpService, RequestMeta,
};
use crate::additions::{AddedRequest, Arrived, InputRequired, Outcome};
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

/// The Tasks extension's methods are for requests that declare it (`-32021`, naming it,
/// otherwise: SEP-2575's missing required client capability).
pub(super) fn require_tasks(method: &str, era: &Era) -> Result<(), RpcError> {
    let mut required = rmcp::model::ClientCapabilities::default();
    required.extensions = Some(crate::protocol::extensions());
    let declared = era
        .envelope()
        .map(|e| e.capabilities.clone())
        .unwrap_or_default();
    crate::protocol::era::require_capabilities(
        &declared,
        &required,
        &format!(
            "{method} belongs to the Tasks extension; declare `{}` under `extensions`",
            rmcp::model::TASKS_EXTENSION_ID
        ),
    )
}

/// An addition's `input_required` result, for a request of `era` (only 2026-07-28 has
/// multi round-trip requests).
pub(super) fn input_required(
    era: &Era,
    method: &str,
    input: InputRequired,
) -> Result<ServerResult, RpcError> {
    if !era.is_stateless() {
        return Err(RpcError::invalid_request(format!(
            "this {method} needs input from the client, which only MCP 2026-07-28 requests can give (multi round-trip requests); send it with a 2026-07-28 `_meta`"
        )));
    }
    custom(input)
}

/// `env` for a task's turn: the request that started it was answered with the task, so
/// there is no request left to fail with `-32021`; approvals a client without elicitation
/// cannot give are denied (the model is told), as its status reports.
fn for_task(mut env: CallEnv) -> CallEnv {
    if env.asker == Asker::Refuse {
        env.asker = Asker::Deny(approvals::STATELESS_NO_ELICITATION);
    }
    env
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
            Era::Stateless(_) if can_ask => Asker::Deny(approvals::STATELESS_NO_ELICITATION),
            Era::Stateless(_) => Asker::Refuse,
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
            if let Some(handler) = self.additions.tool(&p.name) {
                return self.call_added(ctx, era, p, handler).await;
            }
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
                    .start_task(for_task(env), &p.name, p.arguments.as_ref(), &call)
                    .await;
            }
        }
        let end = if p.name == tools::CODEX {
            match tools::parse_codex_args(p.arguments.as_ref(), &self.server_cwd) {
                Ok(args) => env.codex(args).await,
                Err(e) => CallEnd::Result(tool_result(None, e.to_string(), true)),
            }
        } else {
            match tools::parse_reply_args(p.arguments.as_ref()) {
                Ok(args) => env.reply(args).await,
                Err(e) => CallEnd::Result(tool_result(None, e.to_string(), true)),
            }
        };
        self.respond(end, &call, &tool_call_id)
    }

    /// A call of a tool a program added ([`crate::additions`]): served by its handler with
    /// the server's own ways of answering (capability checks, sealed states, logs, progress).
    async fn call_added(
        &self,
        ctx: RequestContext,
        era: Era,
        p: CallToolParams,
        handler: crate::additions::ToolHandler,
    ) -> Result<ServerResult, RpcError> {
        let Some(_slot) = self.call_slot() else {
            return Err(RpcError::invalid_request(format!(
                "too many tool calls are running ({}); wait for some to finish and try again",
                self.call_cap()
            )));
        };
        let request = self.added_request(
            "tools/call",
            p.name,
            p.arguments,
            p.input_responses,
            p.request_state,
            era.clone(),
            ctx,
            p.meta.and_then(|m| m.progress_token),
        )?;
        match handler(request).await? {
            Outcome::Complete(result) => Ok(CallToolResponse::Complete(result).into()),
            Outcome::InputRequired(input) => input_required(&era, "tools/call", input),
        }
    }

    /// The request to an addition, as its handler sees it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn added_request(
        &self,
        method: &'static str,
        name: String,
        arguments: Option<Value>,
        input_responses: Option<InputResponses>,
        request_state: Option<String>,
        era: Era,
        ctx: RequestContext,
        progress_token: Option<Value>,
    ) -> Result<AddedRequest, RpcError> {
        AddedRequest::new(Arrived {
            method,
            name,
            arguments,
            input_responses,
            request_state,
            era,
            ctx,
            progress_token: progress_token
                .and_then(|t| serde_json::from_value::<ProgressToken>(t).ok()),
            sealer: self.sealer.as_ref().ok().cloned(),
            handshake_elicitation: self.client().is_some_and(|c| c.supports_elicitation),
        })
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
            CallEnd::NeedsElicitation { thread, what } => {
                let mut required = rmcp::model::ClientCapabilities::default();
                required.elicitation = Some(Default::default());
                let why = format!(
                    "the turn of thread {thread} stopped at an approval (of {what}) that only the user can give, and approvals are asked with elicitation; nothing it asked for ran. Declare `elicitation` (approvals then come back as `input_required` results) and continue the thread with codex-reply, or run it with approval-policy `never` and a sandbox"
                );
                tracing::info!("{why}");
                crate::protocol::era::require_capabilities(
                    &rmcp::model::ClientCapabilities::default(),
                    &required,
                    &why,
                )?;
                return Err(RpcError::internal("an approval was refused"));
            }
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
                Err(e) => Created::Ended(CallEnd::Result(tool_result(None, e.to_string(), true))),
            }
        } else {
            match tools::parse_reply_args(arguments) {
                Ok(args) => {
                    tasks::create(env, sealer, async move |env: &mut CallEnv| {
                        env.start_reply(args).await
                    })
                    .await
                }
                Err(e) => Created::Ended(CallEnd::Result(tool_result(None, e.to_string(), true))),
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
        let env = for_task(self.call_env(ctx, &era, None, slot));
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
