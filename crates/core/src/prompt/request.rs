//! The next request: instructions, environment context, history (each tool output cut to
//! the window's budget; history itself keeps the whole output), tools.

use super::{base_instructions, context_items};
use crate::context_window::{
    answer_token_bound, budget_tool_outputs, output_token_bound, tool_output_budget,
};
use crate::session::Session;
use crate::tools::tool_specs;
use oi_model_client::Prompt;
use oi_protocol::models::ResponseItem;

/// The next request.
pub(crate) fn build_prompt(sess: &Session) -> Prompt {
    build_sized_prompt(sess).0
}

/// [`build_prompt`] and the request's size (`context_window::text_size`), measured once (the
/// output bound and the token estimate both need it; serializing the history again per
/// request is wasted work).
pub(crate) fn build_sized_prompt(sess: &Session) -> (Prompt, usize) {
    build_sized_prompt_with(sess, None)
}

/// Estimated tokens of the next request if the history were `history` (compaction checks
/// that its new history fits before installing it).
pub(crate) fn estimate_with_history(sess: &Session, history: &[ResponseItem]) -> i64 {
    let (_, bytes) = build_sized_prompt_with(sess, Some(history));
    sess.state().estimator.tokens(bytes)
}

fn build_sized_prompt_with(sess: &Session, history: Option<&[ResponseItem]>) -> (Prompt, usize) {
    let tools = tool_specs(sess);
    let window = sess.context_window();
    let ctx = sess.turn_context();
    let cfg = &ctx.config;
    let st = sess.state();
    let mut input = context_items(
        cfg,
        ctx.project_doc.as_ref(),
        &ctx.skills,
        st.session_context.as_deref(),
    );
    let start = input.len();
    input.extend(history.unwrap_or(&st.history).iter().cloned());
    budget_tool_outputs(
        &mut input[start..],
        tool_output_budget(window, cfg.tool_output_max_bytes),
    );
    let tools_as_text = st.tools_as_text();
    let mut prompt = Prompt {
        model: cfg.model.clone(),
        instructions: base_instructions(cfg),
        input,
        tools,
        reasoning_effort: cfg.model_reasoning_effort,
        reasoning_summary: cfg.model_reasoning_summary.clone(),
        verbosity: cfg.model_verbosity.clone(),
        parallel_tool_calls: true,
        max_output_tokens: None,
        tools_as_text,
        temperature: None,
        stop: Vec::new(),
    };
    let mut prompt_size = crate::context_window::prompt_size(&prompt);
    if tools_as_text {
        prompt_size +=
            crate::context_window::text_size(&oi_model_client::text_tools_section(&prompt.tools));
    }
    let minimal = crate::harness::resolve(cfg) == oi_protocol::config_types::Harness::Minimal;
    let question = minimal
        && crate::answer_check::is_question(&crate::answer_check::request_of(
            history.unwrap_or(&st.history),
        ));
    prompt.max_output_tokens = answer_token_bound(
        output_token_bound(
            cfg.model_max_output_tokens,
            window,
            st.estimator.tokens(prompt_size),
        ),
        cfg.model_max_output_tokens,
        minimal,
        question,
    );
    (prompt, prompt_size)
}

/// Whether the request carries images (their bytes make the token estimate meaningless).
pub(crate) fn prompt_has_images(prompt: &Prompt) -> bool {
    prompt.input.iter().any(|item| match item {
        ResponseItem::Message { content, .. } => content
            .iter()
            .any(|c| matches!(c, oi_protocol::models::ContentItem::InputImage { .. })),
        ResponseItem::FunctionCallOutput { output, .. } => output
            .content
            .iter()
            .any(|c| matches!(c, oi_protocol::models::ContentItem::InputImage { .. })),
        _ => false,
    })
}
