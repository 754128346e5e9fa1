//! The host serves any method table over in-memory pipes: connections on one host share
//! its engine, and a stream served with its own engine shuts that engine down at the end.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_core::SessionSource;
use oi_host::{Host, HostOptions, ServiceContext, Services};
use oi_jsonrpc::{Execution, MethodTable, RpcError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio_util::sync::CancellationToken;

/// `start` starts a thread on the host's engine with the host's config; `turn` starts a turn
/// on the last thread started; `loaded` lists the engine's threads; `source` names the
/// host's session source.
fn services() -> Services {
    Services::new(|ctx: &ServiceContext| {
        let mut table = MethodTable::new();
        let host = ctx.host.clone();
        table.request("start", Execution::Spawn, move |_, _: Value| {
            let host = host.clone();
            async move {
                let load = host.config_load();
                let loaded = tokio::task::spawn_blocking(move || oi_config::load_config(load))
                    .await
                    .map_err(RpcError::internal)?
                    .map_err(RpcError::internal)?;
                let new = host
                    .manager()
                    .start_thread(loaded.config)
                    .await
                    .map_err(RpcError::internal)?;
                Ok(json!(new.thread.id().to_string()))
            }
        });
        let host = ctx.host.clone();
        table.request("turn", Execution::Spawn, move |_, p: Value| {
            let host = host.clone();
            async move {
                let id = p["thread"]
                    .as_str()
                    .unwrap_or_default()
                    .parse()
                    .map_err(RpcError::internal)?;
                let thread = host
                    .manager()
                    .get_thread(&id)
                    .ok_or_else(|| RpcError::internal("no such thread"))?;
                let input =
                    oi_core::StartTurn::input(vec![oi_protocol::user_input::UserInput::text("hi")]);
                // The handle is dropped: the turn runs on; only the engine can stop it.
                thread.start_turn(input).await.map_err(RpcError::internal)?;
                Ok(json!(null))
            }
        });
        let host = ctx.host.clone();
        table.request("loaded", Execution::Spawn, move |_, _: Value| {
            let ids: Vec<String> = host
                .manager()
                .loaded_thread_ids()
                .iter()
                .map(ToString::to_string)
                .collect();
            async move { Ok(json!(ids)) }
        });
        let source = format!("{:?}", ctx.host.options().source);
        table.request("source", Execution::Spawn, move |_, _: Value| {
            let source = source.clone();
            async move { Ok(json!(source)) }
        });
        table
    })
}

struct Peer {
    writer: tokio::io::WriteHalf<DuplexStream>,
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    next_id: i64,
}

impl Peer {
    /// Calls `method` and returns its result (the test fails on an error answer).
    async fn call(&mut self, method: &str) -> Value {
        self.call_with(method, Value::Null).await
    }

    async fn call_with(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let line =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let mut bytes = serde_json::to_vec(&line).unwrap();
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.unwrap();
        loop {
            let mut answer = String::new();
            assert!(
                self.reader.read_line(&mut answer).await.unwrap() > 0,
                "server hung up"
            );
            let msg: Value = serde_json::from_str(&answer).unwrap();
            if msg["id"] == self.next_id {
                assert!(msg["error"].is_null(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }
}

fn pipe() -> (Peer, DuplexStream) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(client);
    let peer = Peer {
        writer: w,
        reader: BufReader::new(r),
        next_id: 0,
    };
    (peer, server)
}

fn home_with_config() -> tempfile::TempDir {
    // The model is never called: starting a thread does not talk to it.
    home_with_model("http://127.0.0.1:9/v1")
}

fn home_with_model(base_url: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"m\"\nmodel_provider = \"local\"\ncwd = {:?}\napproval_policy = \"never\"\n[model_providers.local]\nname = \"local\"\nbase_url = \"{base_url}\"\nwire_api = \"chat\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            home.path().display().to_string()
        ),
    )
    .unwrap();
    home
}

fn options(home: &tempfile::TempDir, source: SessionSource) -> HostOptions {
    HostOptions {
        home: Some(home.path().to_path_buf()),
        ..HostOptions::new(source)
    }
}

#[tokio::test]
async fn connections_on_one_host_share_its_threads() {
    let home = home_with_config();
    let host = Host::new(options(&home, SessionSource::AppServer));
    let services = services();
    let (mut a, a_server) = pipe();
    let (mut b, b_server) = pipe();
    let serve = |server: DuplexStream| {
        let (host, services) = (host.clone(), services.clone());
        tokio::spawn(async move {
            let (r, w) = tokio::io::split(server);
            host.serve(r, w, CancellationToken::new(), &services).await
        })
    };
    let a_done = serve(a_server);
    let _b_done = serve(b_server);

    let id = a.call("start").await;
    assert_eq!(b.call("loaded").await, json!([id]), "B sees A's thread");
    assert_eq!(b.call("source").await, json!("AppServer"));

    // A hanging up ends A's connection, not the engine: B still sees the thread.
    drop(a);
    assert_eq!(a_done.await.unwrap(), 0);
    assert_eq!(b.call("loaded").await, json!([id]));
    host.shutdown().await;
    assert_eq!(
        b.call("loaded").await,
        json!([]),
        "shutdown stops every thread"
    );
}

#[tokio::test]
async fn a_stream_with_its_own_engine_stops_it_when_the_input_ends() {
    // A model that takes its time: the turn is still running when the connection ends.
    let model = oi_test_support::MockModelServer::start(oi_test_support::MockScript::turns([
        oi_test_support::MockTurn::text("a long answer")
            .chunked(1)
            .with_delay_ms(2_000),
    ]))
    .await
    .unwrap();
    let home = home_with_model(&model.base_url());
    let (mut peer, server) = pipe();
    let (r, w) = tokio::io::split(server);
    let stop = CancellationToken::new();
    let served = tokio::spawn(oi_host::serve_stream(
        options(&home, SessionSource::Mcp),
        r,
        w,
        stop.clone(),
        services(),
    ));
    let id = peer.call("start").await;
    peer.call_with("turn", json!({ "thread": id })).await;
    let asked = model
        .wait_for_requests(1, std::time::Duration::from_secs(30))
        .await;
    assert_eq!(asked.len(), 1, "the turn reached the model");
    // `stop` (what a termination signal fires) ends the connection like end of input, and
    // the engine with it: by the time serve_stream returns (and a server process would
    // exit), the running turn is interrupted and recorded as such. (Dropping the engine
    // also stops its threads, but in the background: only the awaited shutdown makes
    // "recorded before return" hold every time.)
    stop.cancel();
    assert_eq!(served.await.unwrap(), 0);
    let id: String = serde_json::from_value(id).unwrap();
    let store = oi_core::open_thread_store(home.path()).unwrap();
    let loaded = store.load(&id.parse().unwrap()).unwrap();
    assert_eq!(loaded.meta.source, SessionSource::Mcp);
    assert!(
        loaded.items.iter().any(|i| matches!(
            i,
            oi_thread_store::RolloutItem::EventMsg(oi_protocol::protocol::EventMsg::TurnAborted(_))
        )),
        "the running turn was not stopped and recorded: {:?}",
        loaded.items
    );
}
