use super::*;
use crate::outgoing::Routed;

#[test]
fn loopback_origins_and_hosts_only_by_default() {
    for ok in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:8080",
        "http://localhost",
    ] {
        assert!(origin_allowed(ok, &[]), "{ok}");
    }
    for bad in [
        "http://evil.example",
        "http://localhost.evil.example",
        "null",
        "http://127.0.0.1.nip.io",
    ] {
        assert!(!origin_allowed(bad, &[]), "{bad}");
    }
    let extra = vec!["https://app.example.com".to_string()];
    assert!(origin_allowed("https://app.example.com", &extra));
    assert!(host_allowed("app.example.com", &extra));
    assert!(host_allowed("127.0.0.1:8080", &[]));
    assert!(!host_allowed("evil.example:8080", &[]));
    assert!(!host_allowed("[::2]:80", &[]));
}

#[test]
fn events_reach_the_stream_of_their_request_and_replay_after_an_id() {
    let mut routes = Routes {
        next_stream: 1,
        ..Routes::default()
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    routes.streams.insert(
        1,
        StreamState {
            live: Some(tx),
            ..Default::default()
        },
    );
    let call = RequestId::Integer(7);
    routes
        .requests
        .insert(call.clone(), RequestRoute::Stream(1));
    let note = |origin: Option<RequestId>| Routed {
        origin,
        msg: Outgoing::Notification {
            method: "codex/event".into(),
            params: serde_json::json!({}),
            emitted_at_ms: None,
        },
    };
    routes.route(note(Some(call.clone())));
    routes.route(note(None));
    routes.route(Routed {
        origin: Some(call.clone()),
        msg: Outgoing::Response {
            id: call,
            result: serde_json::json!({}),
        },
    });
    let first = rx.try_recv().unwrap();
    assert_eq!(first.id, "1/0");
    assert!(first.data.contains("codex/event"));
    assert_eq!(rx.try_recv().unwrap().id, "1/1");
    // The response closed the request's stream.
    assert!(rx.try_recv().is_err());
    // The unrelated notification waits on the standalone stream.
    let (tx, mut rx) = mpsc::unbounded_channel();
    routes
        .streams
        .get_mut(&STANDALONE)
        .unwrap()
        .attach(STANDALONE, None, tx);
    assert_eq!(rx.try_recv().unwrap().id, "0/0");
    // Resuming the finished request stream after its first event replays the rest.
    let (tx, mut rx) = mpsc::unbounded_channel();
    routes.streams.get_mut(&1).unwrap().attach(1, Some(0), tx);
    assert_eq!(rx.try_recv().unwrap().id, "1/1");
}

#[test]
fn tokens_compare_whole() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"abc", b"abcd"));
}

#[test]
fn debug_never_shows_the_token() {
    let mut opts = HttpOptions::new("127.0.0.1:1".parse().unwrap());
    opts.auth_token = Some("super-secret-token-value".into());
    let shown = format!("{opts:?}");
    assert!(!shown.contains("super-secret"), "{shown}");
    assert!(shown.contains("<redacted>"), "{shown}");
}
