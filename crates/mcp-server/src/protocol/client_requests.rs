//! The requests `interpreter mcp-server` sends its client, each declared once as a
//! [`ClientRequest`]: its method name, what goes out and what the client answers. The
//! service asks only through a declaration (`crate::asking::ask::<M>`), so a reply comes
//! back decoded into the declared result or as an error naming the method.
//!
//! Only the `initialize` era has server→client requests; the one we send is
//! `elicitation/create` (approvals, and questions of the MCP servers the agent uses). On the
//! 2026-07-28 wire the same prompt travels as an input request ([`super::input`]).

use super::codex::ApprovalPrompt;
use oi_protocol::ThreadId;
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse, ReviewDecision};
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A request the server sends the client.
pub(crate) trait ClientRequest {
    /// The JSON-RPC method.
    const METHOD: &'static str;
    /// What goes out as `params`.
    type Params: Serialize;
    /// What the client's `result` must decode into.
    type Result: DeserializeOwned;
}

/// `elicitation/create`: ask the user, through the client.
pub(crate) struct CreateElicitation;

impl ClientRequest for CreateElicitation {
    const METHOD: &'static str = "elicitation/create";
    type Params = ElicitationPrompt;
    type Result = ElicitationReply;
}

/// The params of `elicitation/create`: the MCP `ElicitRequestParams` (`message`,
/// `requestedSchema`) with the reference's `codex_*` keys saying what is asked.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ElicitationPrompt {
    /// An approval of a command or a patch.
    Approval(ApprovalPrompt),
    /// A question an MCP server the agent uses asks the user.
    Nested(NestedElicitation),
}

/// A question an MCP server we are a client of asks the user, passed through and tagged so
/// the client can tell it from an approval.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct NestedElicitation {
    /// The server's own `ElicitRequestParams` (`message`, `requestedSchema`, …), as sent.
    #[serde(flatten)]
    pub request: Map<String, Value>,
    #[serde(rename = "threadId")]
    pub thread_id: ThreadId,
    pub codex_elicitation: &'static str,
    pub codex_mcp_server: String,
}

/// The result of `elicitation/create`, in either form clients send: the MCP spec's
/// `ElicitResult` (`action`, and `content` on accept) or the reference's `{decision}`.
/// Every field may be absent (an empty reply decides nothing: denied); a field of the wrong
/// type makes the whole reply unreadable, which also denies.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct ElicitationReply {
    /// The reference's form; when present (even `null`) it alone decides an approval.
    #[serde(default, deserialize_with = "present")]
    pub decision: Option<Decision>,
    /// The MCP form: `accept`, `decline` or `cancel`.
    #[serde(default)]
    pub action: Option<ElicitationAction>,
    /// What the user filled in (on `accept`); an approval may pick its decision here
    /// (`content.decision`, e.g. `approved_for_session`).
    #[serde(default)]
    pub content: Option<Value>,
}

/// A `decision` as the reference sends it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Decision {
    /// `approved`, `approved_for_session`, `denied`, `abort`, `timed_out`.
    Named(ReviewDecision),
    /// Anything else: a policy amendment (`{"approved_execpolicy_amendment": …}`), which
    /// we count as a plain approval since we keep no rule store, or a word we do not know
    /// (denied).
    Other(Value),
}

/// A field that is there, even as `null`, is `Some` (`Option`'s own decoding would make
/// `"decision": null` look absent and let `action` decide instead).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decision>, D::Error> {
    Decision::deserialize(d).map(Some)
}

impl Decision {
    fn review(&self) -> Option<ReviewDecision> {
        match self {
            Decision::Named(d) => Some(*d),
            Decision::Other(Value::Object(o))
                if o.contains_key("approved_execpolicy_amendment")
                    || o.contains_key("network_policy_amendment") =>
            {
                Some(ReviewDecision::Approved)
            }
            Decision::Other(_) => None,
        }
    }
}

impl ElicitationReply {
    /// The decision on an approval: `decision` if given; else `accept` → approved (or
    /// `content.decision`), `decline` → denied, `cancel` → abort; anything else denied.
    pub(crate) fn review_decision(&self) -> ReviewDecision {
        if let Some(d) = &self.decision {
            return d.review().unwrap_or(ReviewDecision::Denied);
        }
        match self.action {
            Some(ElicitationAction::Accept) => self
                .content
                .as_ref()
                .and_then(|c| c.get("decision"))
                .and_then(|d| Decision::deserialize(d).ok())
                .and_then(|d| d.review())
                .unwrap_or(ReviewDecision::Approved),
            Some(ElicitationAction::Decline) | None => ReviewDecision::Denied,
            Some(ElicitationAction::Cancel) => ReviewDecision::Abort,
        }
    }

    /// The answer to an MCP server's question: the action (none given: declined), and the
    /// content only with `accept`.
    pub(crate) fn elicitation_response(self) -> ElicitationResponse {
        let action = self.action.unwrap_or(ElicitationAction::Decline);
        let content = match action {
            ElicitationAction::Accept => self.content.filter(|c| !c.is_null()),
            _ => None,
        };
        ElicitationResponse { action, content }
    }
}
