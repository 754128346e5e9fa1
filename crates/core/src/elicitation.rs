//! MCP servers asking the user something (`elicitation/create`): the question becomes an
//! `elicitation_request` event and the answer an `Op::ResolveElicitation`. Fails closed:
//! no answer in time, approval policy `never`, or a thread that is gone all decline.

use crate::session::Session;
use futures::future::BoxFuture;
use oi_mcp_client::ElicitationHandler;
use oi_protocol::config_types::AskForApproval;
use oi_protocol::protocol::{
    ElicitationAction, ElicitationRequestEvent, ElicitationResponse, EventMsg,
};
use std::sync::{OnceLock, Weak};

#[derive(Default)]
pub(crate) struct EngineElicitation {
    /// Set once the session exists (the MCP manager starts before it).
    pub session: OnceLock<Weak<Session>>,
}

fn decline() -> ElicitationResponse {
    ElicitationResponse {
        action: ElicitationAction::Decline,
        content: None,
    }
}

impl ElicitationHandler for EngineElicitation {
    fn elicit(
        &self,
        server: String,
        request_id: serde_json::Value,
        params: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse> {
        let sess = self.session.get().and_then(Weak::upgrade);
        Box::pin(async move {
            let Some(sess) = sess else {
                return decline();
            };
            let ctx = sess.turn_context();
            let config = &ctx.config;
            if config.approval_policy == AskForApproval::Never {
                return decline();
            }
            let (tx, rx) = tokio::sync::oneshot::channel();
            let key = (server.clone(), request_id.to_string());
            let turn_id = {
                let mut st = sess.state();
                st.pending_elicitations.insert(key.clone(), tx);
                st.active_turn.as_ref().map(|t| t.id.clone())
            };
            let event_id = turn_id.clone().unwrap_or_default();
            sess.send(
                &event_id,
                EventMsg::ElicitationRequest(ElicitationRequestEvent {
                    turn_id,
                    server_name: server,
                    id: request_id,
                    request: params,
                }),
            );
            let answer = tokio::time::timeout(config.approval_timeout, rx).await;
            sess.state().pending_elicitations.remove(&key);
            match answer {
                Ok(Ok(r)) => r,
                _ => decline(),
            }
        })
    }
}
