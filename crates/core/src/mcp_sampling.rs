//! MCP servers asking the session's model to sample (`sampling/createMessage`), for servers
//! whose `sampling` setting offers it. `prompt` asks the user through the thread's normal
//! approval path (an `exec_approval_request` whose command is
//! [`MCP_SAMPLING_APPROVAL_COMMAND`], answered by `Op::ExecApproval`); `approve` does not ask.
//! Fails closed: `approval_policy = "never"`, no running turn, no answer in time, an
//! interrupted turn or a thread that is gone all deny. The request goes to the session's
//! provider and model with the server's system prompt, messages, `maxTokens`, temperature and
//! stop sequences (model hints are advisory: the session's model answers); its usage joins
//! the thread's token usage.

use crate::approval::{ExecApprovalAsk, request_exec_approval};
use crate::session::Session;
use futures::StreamExt;
use futures::future::BoxFuture;
use oi_mcp_client::{
    McpSamplingMode, SamplingContent, SamplingError, SamplingHandler, SamplingReply,
    SamplingRequest, SamplingRole, SamplingStop,
};
use oi_model_client::{ModelError, Prompt, ResponseEvent};
use oi_protocol::models::{ContentItem, ResponseItem, Role, TokenUsage};
use oi_protocol::protocol::ReviewDecision;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use tokio_util::sync::CancellationToken;

/// The first word of the command in a sampling request's `exec_approval_request`: front ends
/// that cannot ask anyone (`exec`) recognise it to say what was denied and how to allow it.
pub const MCP_SAMPLING_APPROVAL_COMMAND: &str = "sampling/createMessage";

/// The longest answer passed back to a server, whatever the model produced.
const MAX_REPLY_BYTES: usize = 256 * 1024;

/// How much of the request the approval question shows.
const PREVIEW_CHARS: usize = 200;

#[derive(Default)]
pub(crate) struct EngineSampling {
    /// Set once the session exists (the MCP manager starts before it).
    pub session: OnceLock<Weak<Session>>,
}

impl SamplingHandler for EngineSampling {
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'static, Result<SamplingReply, SamplingError>> {
        let sess = self.session.get().and_then(Weak::upgrade);
        Box::pin(async move {
            let Some(sess) = sess else {
                return Err(SamplingError::Failed(
                    "the session this MCP server belongs to has ended".into(),
                ));
            };
            serve(&sess, request).await
        })
    }
}

/// Cancels `token` when the turn's own token fires; stops watching when dropped.
struct TurnWatch(Option<tokio::task::JoinHandle<()>>);

impl Drop for TurnWatch {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

async fn serve(
    sess: &Arc<Session>,
    request: SamplingRequest,
) -> Result<SamplingReply, SamplingError> {
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let turn = {
        let st = sess.state();
        st.active_turn
            .as_ref()
            .map(|t| (t.id.clone(), t.cancel.clone()))
    };
    // Stops on the server's withdrawal and on the user's interrupt of the running turn.
    let cancel = request.cancel.child_token();
    let _watch = TurnWatch(turn.as_ref().map(|(_, turn_cancel)| {
        let (turn_cancel, cancel) = (turn_cancel.clone(), cancel.clone());
        tokio::spawn(async move {
            turn_cancel.cancelled().await;
            cancel.cancel();
        })
    }));
    let turn_id = turn.map(|(id, _)| id);
    check_images(&config.model, &request)?;
    approve(sess, &request, turn_id.as_deref(), config, &cancel).await?;

    let prompt = prompt_for(&request, config);
    let sampled = tokio::select! {
        r = tokio::time::timeout(request.timeout, collect(sess, &prompt)) => r,
        _ = cancel.cancelled() => {
            return Err(SamplingError::Failed("the sampling request was cancelled".into()));
        }
    };
    let sampled = match sampled {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            return Err(SamplingError::Failed(format!(
                "the model request for MCP server `{}` failed: {e}",
                request.server
            )));
        }
        Err(_) => {
            return Err(SamplingError::Failed(format!(
                "the model did not answer MCP server `{}` within {} s (its tool_timeout_sec)",
                request.server,
                request.timeout.as_secs_f64()
            )));
        }
    };
    let usage = sampled
        .usage
        .unwrap_or_else(|| estimated_usage(&prompt, &sampled.text));
    crate::turn::count_usage(sess, turn_id.as_deref().unwrap_or_default(), usage);
    let (text, stop_reason) = finish(sampled.text, sampled.truncated, &request.stop_sequences);
    tracing::info!(server = %request.server, bytes = text.len(), ?stop_reason, "sampled for MCP server");
    Ok(SamplingReply {
        text,
        model: config.model.clone(),
        stop_reason,
    })
}

/// Images only go to a model the built-in table knows to take them: an open model behind a
/// text-only server fails on them in ways that say little.
fn check_images(model: &str, request: &SamplingRequest) -> Result<(), SamplingError> {
    if !request.has_images() {
        return Ok(());
    }
    let takes_images =
        oi_model_client::catalog::builtin_info(model).is_some_and(|info| info.image_input);
    if takes_images {
        return Ok(());
    }
    Err(SamplingError::Unsupported(format!(
        "the sampling request of MCP server `{}` holds an image, and the session's model `{model}` is not known to take images; send text only",
        request.server
    )))
}

/// The user's yes, as the server's `sampling` setting and the approval policy require.
async fn approve(
    sess: &Arc<Session>,
    request: &SamplingRequest,
    turn_id: Option<&str>,
    config: &oi_config::Config,
    cancel: &CancellationToken,
) -> Result<(), SamplingError> {
    let server = &request.server;
    match request.mode {
        McpSamplingMode::Approve => return Ok(()),
        McpSamplingMode::Off => {
            return Err(SamplingError::Rejected(format!(
                "sampling is off for MCP server `{server}`"
            )));
        }
        McpSamplingMode::Prompt => {}
    }
    let session_key = (
        vec![MCP_SAMPLING_APPROVAL_COMMAND.to_string(), server.clone()],
        false,
    );
    if sess.state().approved_commands.contains(&session_key) {
        return Ok(());
    }
    let allow_hint = format!(
        "set `sampling = \"approve\"` in [mcp_servers.{server}] to allow it without asking"
    );
    if config.approval_policy == oi_protocol::config_types::AskForApproval::Never {
        return Err(SamplingError::Rejected(format!(
            "sampling by MCP server `{server}` needs approval (sampling = \"prompt\"), and approval_policy \"never\" asks nobody, so it is denied; {allow_hint}"
        )));
    }
    let Some(turn_id) = turn_id else {
        return Err(SamplingError::Rejected(format!(
            "sampling by MCP server `{server}` needs approval, and no turn is running to ask in, so it is denied; {allow_hint}"
        )));
    };
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let call_id = format!("mcp-sampling-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let argv = vec![
        MCP_SAMPLING_APPROVAL_COMMAND.to_string(),
        server.clone(),
        preview(request),
    ];
    let decision = request_exec_approval(
        sess,
        ExecApprovalAsk {
            turn_id,
            call_id: &call_id,
            approval_id: None,
            argv: &argv,
            cwd: &config.cwd,
            reason: Some(format!(
                "MCP server `{server}` asks the model `{}` to write up to {} tokens for it. Allow?",
                config.model, request.max_tokens
            )),
        },
        cancel,
    )
    .await;
    match decision {
        ReviewDecision::Approved => Ok(()),
        ReviewDecision::ApprovedForSession => {
            sess.state().approved_commands.insert(session_key);
            Ok(())
        }
        ReviewDecision::TimedOut => Err(SamplingError::Rejected(format!(
            "the sampling request of MCP server `{server}` was not approved in time (denied)"
        ))),
        ReviewDecision::Abort => Err(SamplingError::Rejected(format!(
            "the sampling request of MCP server `{server}` was cancelled"
        ))),
        _ => Err(SamplingError::Rejected(format!(
            "the user rejected the sampling request of MCP server `{server}`"
        ))),
    }
}

/// The last message's text on one line, cut, for the approval question.
fn preview(request: &SamplingRequest) -> String {
    let text: String = request
        .messages
        .last()
        .map(|m| {
            m.content
                .iter()
                .map(|c| match c {
                    SamplingContent::Text(t) => t.as_str(),
                    SamplingContent::Image { .. } => "[image]",
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= PREVIEW_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(PREVIEW_CHARS).collect();
    format!("{cut}…")
}

/// The model request: the server's system prompt and messages, no tools, its bounds.
fn prompt_for(request: &SamplingRequest, config: &oi_config::Config) -> Prompt {
    let input = request
        .messages
        .iter()
        .map(|m| {
            let assistant = m.role == SamplingRole::Assistant;
            let content = m
                .content
                .iter()
                .map(|c| match c {
                    SamplingContent::Text(text) if assistant => {
                        ContentItem::OutputText { text: text.clone() }
                    }
                    SamplingContent::Text(text) => ContentItem::InputText { text: text.clone() },
                    SamplingContent::Image { data, mime_type } => ContentItem::InputImage {
                        image_url: format!("data:{mime_type};base64,{data}"),
                    },
                })
                .collect();
            ResponseItem::Message {
                role: if assistant {
                    Role::Assistant
                } else {
                    Role::User
                },
                content,
            }
        })
        .collect();
    // The server's bound, and the user's if lower.
    let max_output_tokens = match config.model_max_output_tokens {
        Some(user) => request
            .max_tokens
            .min(u32::try_from(user.max(1)).unwrap_or(u32::MAX)),
        None => request.max_tokens,
    };
    Prompt {
        model: config.model.clone(),
        instructions: request.system_prompt.clone().unwrap_or_default(),
        input,
        max_output_tokens: Some(max_output_tokens),
        temperature: request.temperature,
        stop: request.stop_sequences.clone(),
        ..Prompt::default()
    }
}

struct Sampled {
    text: String,
    usage: Option<TokenUsage>,
    truncated: bool,
}

/// Streams the answer and keeps its text (reasoning and stray calls are dropped).
async fn collect(sess: &Session, prompt: &Prompt) -> Result<Sampled, ModelError> {
    let no_notice = |_| {};
    let mut stream = sess.client.stream(prompt, &no_notice).await?;
    let (mut text, mut deltas, mut truncated) = (String::new(), String::new(), false);
    loop {
        match stream.next().await {
            Some(Ok(ResponseEvent::OutputItemDone(
                item @ ResponseItem::Message {
                    role: Role::Assistant,
                    ..
                },
            ))) => text.push_str(&item.message_text().unwrap_or_default()),
            Some(Ok(ResponseEvent::OutputTextDelta(d))) => {
                if deltas.len() < MAX_REPLY_BYTES * 2 {
                    deltas.push_str(&d);
                }
            }
            Some(Ok(ResponseEvent::OutputLimitReached)) => truncated = true,
            Some(Ok(ResponseEvent::Completed { token_usage, .. })) => {
                let text = if text.is_empty() { deltas } else { text };
                return Ok(Sampled {
                    text,
                    usage: token_usage,
                    truncated,
                });
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => {
                return Err(ModelError::StreamDisconnected(
                    "the stream ended before the answer was complete".into(),
                ));
            }
        }
    }
}

/// The answer cut at the first stop sequence (Responses cannot send them; a Chat server may
/// take only four), and at [`MAX_REPLY_BYTES`], with the reason it ended.
fn finish(mut text: String, truncated: bool, stop_sequences: &[String]) -> (String, SamplingStop) {
    let first_stop = stop_sequences
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| text.find(s.as_str()))
        .min();
    if let Some(at) = first_stop {
        text.truncate(at);
        return (text, SamplingStop::StopSequence);
    }
    if text.len() > MAX_REPLY_BYTES {
        let mut at = MAX_REPLY_BYTES;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        return (text, SamplingStop::MaxTokens);
    }
    let stop = if truncated {
        SamplingStop::MaxTokens
    } else {
        SamplingStop::EndTurn
    };
    (text, stop)
}

/// What the request and answer cost when the server reported no usage.
fn estimated_usage(prompt: &Prompt, text: &str) -> TokenUsage {
    let input = crate::context_window::estimate_tokens(crate::context_window::prompt_size(prompt));
    let output = crate::context_window::estimate_tokens(crate::context_window::text_size(text));
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: 0,
        output_tokens: output,
        reasoning_output_tokens: 0,
        total_tokens: input + output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request(content: Vec<SamplingContent>) -> SamplingRequest {
        SamplingRequest {
            server: "s".into(),
            mode: McpSamplingMode::Prompt,
            messages: vec![oi_mcp_client::SamplingMessage {
                role: SamplingRole::User,
                content,
            }],
            system_prompt: None,
            max_tokens: 10,
            temperature: None,
            stop_sequences: Vec::new(),
            model_hints: Vec::new(),
            timeout: Duration::from_secs(1),
            cancel: CancellationToken::new(),
        }
    }

    #[test]
    fn images_go_only_to_models_known_to_take_them() {
        let image = request(vec![SamplingContent::Image {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        }]);
        let e = check_images("gpt-oss-20b", &image).unwrap_err();
        assert!(e.to_string().contains("not known to take images"), "{e}");
        assert!(matches!(e, SamplingError::Unsupported(_)));
        let e = check_images("some-unknown-model", &image).unwrap_err();
        assert!(e.to_string().contains("`some-unknown-model`"), "{e}");
        check_images(
            "gpt-oss-20b",
            &request(vec![SamplingContent::Text("hi".into())]),
        )
        .unwrap();
        let vision = oi_model_client::catalog::builtin_info("glm-4.5v").unwrap();
        assert!(vision.image_input);
        check_images("glm-4.5v", &image).unwrap();
    }

    #[test]
    fn the_answer_ends_at_a_stop_sequence_and_is_bounded() {
        let stops = vec!["END".to_string(), "".to_string()];
        assert_eq!(
            finish("one two END three".into(), false, &stops),
            ("one two ".to_string(), SamplingStop::StopSequence)
        );
        assert_eq!(
            finish("all of it".into(), false, &stops),
            ("all of it".to_string(), SamplingStop::EndTurn)
        );
        assert_eq!(
            finish("cut".into(), true, &[]),
            ("cut".to_string(), SamplingStop::MaxTokens)
        );
        let (long, stop) = finish("é".repeat(MAX_REPLY_BYTES), false, &[]);
        assert!(long.len() <= MAX_REPLY_BYTES);
        assert_eq!(stop, SamplingStop::MaxTokens);
    }

    #[test]
    fn the_question_previews_the_last_message_on_one_line() {
        let r = request(vec![SamplingContent::Text(format!(
            "line one\nline two {}",
            "x".repeat(500)
        ))]);
        let p = preview(&r);
        assert!(p.starts_with("line one line two x"), "{p}");
        assert!(p.chars().count() <= PREVIEW_CHARS + 1, "{}", p.len());
    }
}
