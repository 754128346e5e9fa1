//! The HTTP listener cannot be locked up (issue 29, item 3), over real sockets: slow and
//! idle connections are closed, one peer address cannot take every connection, unused
//! sessions end, and the bearer scheme is matched as RFC 6750 says. The timeouts are set
//! small here; every wait is for an event (EOF, a status) under an overall deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_jsonrpc::http::{HttpOptions, MethodsFactory, serve_http};
use oi_jsonrpc::{Execution, MethodTable};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

/// Generous: only reached when the behaviour under test is missing.
const DEADLINE: Duration = Duration::from_secs(30);

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;

struct Server {
    addr: SocketAddr,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(configure: impl FnOnce(&mut HttpOptions)) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut opts = HttpOptions::new(addr);
    configure(&mut opts);
    let methods: MethodsFactory = Arc::new(|_conn| {
        let mut table = MethodTable::new();
        table.request("initialize", Execution::Inline, |_ctx, _p: Value| async {
            Ok(json!({"ok": true}))
        });
        table.request("ping", Execution::Inline, |_ctx, _p: Value| async {
            Ok(json!({}))
        });
        table
    });
    let stop = CancellationToken::new();
    tokio::spawn(serve_http(listener, opts, methods, stop.clone()));
    Server { addr, stop }
}

/// A connection to `server` from the local address `from` (any 127.x.y.z works on Linux),
/// so a test can play two peers.
async fn connect_from(from: [u8; 4], server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::from((from, 0)))
        .unwrap_or_else(|e| panic!("cannot bind {from:?}: {e}"));
    socket.connect(server).await.unwrap()
}

fn request(method: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut text = format!(
        "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// Reads one response with a `content-length` body: (status, head, body).
async fn read_response(stream: &mut TcpStream) -> (u16, String, String) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(
            n > 0,
            "EOF before a response: {}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let status: u16 = head[9..12].parse().unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "EOF inside a body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
    (status, head, body)
}

/// One request on a fresh connection from 127.0.0.1.
async fn call(server: &Server, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(request("POST", headers, body).as_bytes())
        .await
        .unwrap();
    tokio::time::timeout(DEADLINE, read_response(&mut stream))
        .await
        .expect("no response")
}

fn session_of(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("no mcp-session-id")
        .trim()
        .to_string()
}

/// Reads until the server closes the connection; what it sent meanwhile.
async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let read_all = async {
        let mut chunk = [0u8; 4096];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
        }
    };
    tokio::time::timeout(DEADLINE, read_all)
        .await
        .expect("the server kept the connection open");
    String::from_utf8_lossy(&all).into_owned()
}

#[tokio::test]
async fn a_client_trickling_its_request_head_is_cut_off() {
    let server = start(|o| o.header_timeout = Duration::from_millis(300)).await;
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    let head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ";
    let closed = async {
        // One byte, then a short wait for the server to hang up; forever, like slowloris.
        for byte in head.iter().chain(std::iter::repeat(&b'a')) {
            if slow.write_all(&[*byte]).await.is_err() {
                return;
            }
            let mut buf = [0u8; 64];
            match tokio::time::timeout(Duration::from_millis(50), slow.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return,
                Ok(Ok(_)) | Err(_) => {}
            }
        }
    };
    tokio::time::timeout(DEADLINE, closed)
        .await
        .expect("a client sending a header byte now and then kept its connection");
    // The server still serves everyone else.
    let (status, _, body) = call(&server, &[], INIT).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let server = start(|o| o.header_timeout = Duration::from_millis(200)).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    read_until_closed(&mut silent).await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let server = start(|o| o.idle_timeout = Duration::from_millis(300)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(request("POST", &[("accept", "application/json")], INIT).as_bytes())
        .await
        .unwrap();
    let (status, head, body) = read_response(&mut stream).await;
    assert_eq!(status, 200, "{body}");
    assert!(!head.contains("connection: close"), "{head}");
    // Kept alive for a next request that never comes: closed once idle.
    let rest = read_until_closed(&mut stream).await;
    assert!(rest.is_empty(), "{rest}");
}

#[tokio::test]
async fn an_open_event_stream_outlives_the_idle_timeout_through_keep_alives() {
    let server = start(|o| o.idle_timeout = Duration::from_millis(300)).await;
    let (_, head, _) = call(&server, &[], INIT).await;
    let session = session_of(&head);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let get = request(
        "GET",
        &[
            ("mcp-session-id", &session),
            ("accept", "text/event-stream"),
        ],
        "",
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    // Keep-alive comments come every 100 ms: ten of them span three idle timeouts.
    let keep_alives = async {
        let mut seen = String::new();
        let mut chunk = [0u8; 1024];
        while seen.matches("\n:").count() < 10 {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the stream closed after: {seen}");
            seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
        seen
    };
    let seen = tokio::time::timeout(DEADLINE, keep_alives)
        .await
        .expect("no keep-alives");
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
}

/// One request on `stream`, kept alive: its status.
async fn served_on(stream: &mut TcpStream, headers: &[(&str, &str)]) -> u16 {
    stream
        .write_all(request("POST", headers, INIT).as_bytes())
        .await
        .unwrap();
    let (status, _, _) = tokio::time::timeout(DEADLINE, read_response(stream))
        .await
        .expect("no response");
    status
}

#[tokio::test]
async fn one_peer_cannot_take_every_connection() {
    let server = start(|o| o.max_connections_per_peer = 4).await;
    // Four connections from one address, each served once and kept open.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut s = connect_from([127, 0, 0, 2], server.addr).await;
        assert_eq!(served_on(&mut s, &[]).await, 200);
        held.push(s);
    }
    // A fifth from the same address is told why and closed.
    let mut extra = connect_from([127, 0, 0, 2], server.addr).await;
    extra
        .write_all(request("POST", &[], INIT).as_bytes())
        .await
        .unwrap();
    let refusal = read_until_closed(&mut extra).await;
    assert!(refusal.starts_with("HTTP/1.1 503"), "{refusal}");
    assert!(
        refusal.contains("too many connections from 127.0.0.2 (at most 4 at once)"),
        "{refusal}"
    );
    // Another address is served meanwhile.
    let (status, _, body) = call(&server, &[], INIT).await;
    assert_eq!(status, 200, "{body}");
    // A closed connection gives its slot back.
    drop(held.pop());
    let served = async {
        loop {
            let mut again = connect_from([127, 0, 0, 2], server.addr).await;
            again
                .write_all(request("POST", &[("connection", "close")], INIT).as_bytes())
                .await
                .unwrap();
            let reply = read_until_closed(&mut again).await;
            if reply.starts_with("HTTP/1.1 200") {
                return;
            }
            // The server may not have seen the close yet.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(DEADLINE, served)
        .await
        .expect("the slot of a closed connection was not given back");
}

/// How many of `streams` the server still keeps open.
fn still_open(streams: &[TcpStream]) -> usize {
    let mut buf = [0u8; 64];
    streams
        .iter()
        .filter(|s| matches!(s.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock))
        .count()
}

#[tokio::test]
async fn a_client_with_the_token_gets_in_while_a_local_process_holds_half_open_requests() {
    let server = start(|o| o.auth_token = Some("the-right-token".into())).await;
    // A local process without the token: 256 requests whose head never ends, from the
    // address the client uses too.
    let mut held = Vec::new();
    for _ in 0..256 {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: a")
            .await
            .unwrap();
        held.push(s);
    }
    for probe in 0..5 {
        let (status, _, body) = call(
            &server,
            &[("authorization", "Bearer the-right-token")],
            INIT,
        )
        .await;
        assert_eq!(status, 200, "probe {probe}: {body}");
    }
    // The half-open requests were pushed out to make room: at most the budget of
    // unauthenticated connections is left.
    let settled = async {
        while still_open(&held) > 32 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(DEADLINE, settled)
        .await
        .unwrap_or_else(|_| panic!("{} half-open requests still held", still_open(&held)));
    // A wrong token is still refused.
    let (status, _, _) = call(&server, &[("authorization", "Bearer wrong")], INIT).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn an_unauthenticated_connection_gets_a_short_deadline() {
    // The listener's own header timeout is far beyond the test's deadline: only the short
    // one of unauthenticated connections can close these.
    let server = start(|o| {
        o.auth_token = Some("the-right-token".into());
        o.header_timeout = Duration::from_secs(600);
        o.idle_timeout = Duration::from_secs(600);
    })
    .await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    read_until_closed(&mut silent).await;
    let mut refused = TcpStream::connect(server.addr).await.unwrap();
    refused
        .write_all(request("POST", &[("authorization", "Bearer wrong")], INIT).as_bytes())
        .await
        .unwrap();
    let rest = read_until_closed(&mut refused).await;
    assert!(rest.starts_with("HTTP/1.1 401"), "{rest}");
    // Authenticated, the listener's own timeouts apply: still open after a refused one's
    // deadline has passed.
    let mut ok = TcpStream::connect(server.addr).await.unwrap();
    assert_eq!(
        served_on(&mut ok, &[("authorization", "Bearer the-right-token")]).await,
        200
    );
    let mut late = TcpStream::connect(server.addr).await.unwrap();
    read_until_closed(&mut late).await;
    assert_eq!(still_open(std::slice::from_ref(&ok)), 1);
}

#[tokio::test]
async fn an_unused_session_ends_and_one_in_use_does_not() {
    let server = start(|o| {
        o.max_sessions = 1;
        o.session_idle_timeout = Some(Duration::from_millis(200));
        o.idle_timeout = Duration::from_millis(300);
    })
    .await;
    let (status, head, _) = call(&server, &[], INIT).await;
    assert_eq!(status, 200);
    let first = session_of(&head);

    // In use: its event stream is open. Ten keep-alives (100 ms apart) outlast the timeout.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let get = request(
        "GET",
        &[("mcp-session-id", &first), ("accept", "text/event-stream")],
        "",
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    let keep_alives = async {
        let mut seen = String::new();
        let mut chunk = [0u8; 1024];
        while seen.matches("\n:").count() < 10 {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the stream closed after: {seen}");
            seen.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    };
    tokio::time::timeout(DEADLINE, keep_alives)
        .await
        .expect("no keep-alives");
    let (status, _, body) = call(&server, &[], INIT).await;
    assert_eq!(status, 503, "the session in use was ended: {body}");
    assert!(body.contains("end by themselves"), "{body}");
    drop(stream);

    // Unused now: it ends, and its place goes to a new session.
    let replaced = async {
        loop {
            let (status, _, _) = call(&server, &[], INIT).await;
            if status == 200 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(DEADLINE, replaced)
        .await
        .expect("an unused session never ended");
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let (status, _, body) = call(&server, &[("mcp-session-id", &first)], ping).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("unused too long"), "{body}");
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let token = "0123456789abcdef0123456789abcdef";
    let server = start(|o| o.auth_token = Some(token.to_string())).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let value = format!("{scheme} {token}");
        let (status, _, body) = call(&server, &[("authorization", &value)], INIT).await;
        assert_eq!(status, 200, "{value}: {body}");
    }
    let value = format!("Bearer   {token}");
    assert_eq!(
        call(&server, &[("authorization", &value)], INIT).await.0,
        200
    );
    for wrong in [
        format!("Basic {token}"),
        format!("Bearer{token}"),
        "Bearer wrong".to_string(),
        format!("Bearer {token}x"),
    ] {
        let (status, head, _) = call(&server, &[("authorization", &wrong)], INIT).await;
        assert_eq!(status, 401, "{wrong}");
        assert!(head.contains("www-authenticate: bearer"), "{head}");
    }
    assert_eq!(call(&server, &[], INIT).await.0, 401);
}

#[tokio::test]
async fn a_body_that_never_arrives_gets_408() {
    let server = start(|o| o.body_timeout = Duration::from_millis(200)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // The head promises 100 bytes; only one comes.
    let head = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{";
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_until_closed(&mut stream).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("send the whole body at once"), "{reply}");
}
