//! Registration and the schema come from one declaration (`oi-app-server-protocol`'s
//! method list): every declared request is answered by this crate's method table.

use crate::common::Env;
use oi_app_server_protocol::export::methods;
use oi_app_server_protocol::schema::Kind;
use oi_test_support::MockScript;
use serde_json::json;

/// Every declared request is answered. Params of the wrong JSON type are refused with
/// -32602 before any handler runs, so this touches nothing; an undeclared or unregistered
/// name would get -32601.
#[tokio::test]
async fn every_declared_request_is_registered() {
    let env = Env::new(MockScript::default(), "").await;
    let mut client = env.client();
    let mut checked = 0;
    for m in methods().iter().filter(|m| m.kind == Kind::Request) {
        let err = client.err(m.method, json!(["not", "an", "object"])).await;
        assert_eq!(err["code"], -32602, "{}: {err}", m.method);
        checked += 1;
    }
    assert!(checked >= 38, "only {checked} requests declared");
    let err = client.err("surely/notAMethod", json!({})).await;
    assert_eq!(err["code"], -32601, "{err}");
}
