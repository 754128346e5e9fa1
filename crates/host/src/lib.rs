//! The neutral host the servers run on: one engine serving method tables.
//!
//! `interpreter mcp-server` and `interpreter app-server` are the same program with different
//! method tables. What they share lives here, and nothing here knows either protocol:
//!
//! * [`Host`]: the engine of one server process — the thread manager every connection
//!   shares (so a thread started on one connection or HTTP session can be continued on
//!   another), the config settings from the command line, the directory the server started
//!   in, and the orderly [`Host::shutdown`] (interrupt turns, stop their commands, flush
//!   threads, within [`ENGINE_GRACE`]).
//! * [`Services`]: how a front end turns one connection ([`ServiceContext`]) into a
//!   [`MethodTable`]. `oi-mcp-server` and `oi-app-server` each offer one; the CLI composes
//!   them.
//! * Transports: [`run_stdio`] / [`run_http`] (what the binary calls: logging, termination
//!   signals, exit codes), and below them [`Host::serve`] (any byte streams, one
//!   connection), [`serve_stream`] and [`serve_listener`] for tests and benchmarks.
//!
//! Layers: framing, dispatch and the HTTP/WebSocket session machinery are `oi-jsonrpc`'s;
//! threads are `oi-core`'s. This crate only wires them: it must not name a wire method.

use oi_config::{ConfigLoadOptions, ConfigOverrides};
use oi_core::{SessionSource, ThreadManager, ThreadManagerOptions};
use oi_jsonrpc::connection::serve_connection;
use oi_jsonrpc::http::{HttpOptions, MethodsFactory, Tables};
use oi_jsonrpc::transport::ThreadStdin;
use oi_jsonrpc::{Connection, MethodTable};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

/// On shutdown: how long the engine gets to flush threads and stop children.
pub const ENGINE_GRACE: Duration = Duration::from_secs(10);

/// Server-wide settings from the command line.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// `-c key=value` overrides, parsed, in command-line order.
    pub cli_overrides: Vec<(String, toml::Value)>,
    /// Typed overrides from global flags (`-m`, `-p`, `-s`, `-a`, `-C`).
    pub overrides: ConfigOverrides,
    /// `None`: `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: Option<PathBuf>,
    /// Stamped on every thread this server creates (`mcp`, `app_server`), as `sessions list`
    /// and the v2 source filters show it.
    pub source: SessionSource,
}

impl HostOptions {
    /// Settings with nothing from the command line, for threads stamped `source`.
    pub fn new(source: SessionSource) -> Self {
        Self {
            cli_overrides: Vec::new(),
            overrides: ConfigOverrides::default(),
            home: None,
            source,
        }
    }

    /// How to load the config with these settings (before any per-thread overrides).
    pub fn config_load(&self) -> ConfigLoadOptions {
        ConfigLoadOptions {
            home: self.home.clone(),
            cli_overrides: self.cli_overrides.clone(),
            overrides: self.overrides.clone(),
        }
    }
}

/// The engine of one server process, shared by every connection it serves. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

struct HostInner {
    manager: ThreadManager,
    options: HostOptions,
    cwd: PathBuf,
}

impl Host {
    /// A host whose threads persist (rollouts and the index, in the configured store).
    pub fn new(options: HostOptions) -> Self {
        let manager = ThreadManager::new(ThreadManagerOptions {
            source: options.source,
            persist: true,
        });
        Self {
            inner: Arc::new(HostInner {
                manager,
                options,
                // Relative `cwd`s in requests resolve against where the server started.
                cwd: std::env::current_dir().unwrap_or_default(),
            }),
        }
    }

    /// The thread manager every connection shares.
    pub fn manager(&self) -> &ThreadManager {
        &self.inner.manager
    }

    /// The server's command-line settings.
    pub fn options(&self) -> &HostOptions {
        &self.inner.options
    }

    /// How to load the config (home, `-c` overrides, flags); each thread adds its own.
    pub fn config_load(&self) -> ConfigLoadOptions {
        self.inner.options.config_load()
    }

    /// The directory the server started in.
    pub fn cwd(&self) -> &PathBuf {
        &self.inner.cwd
    }

    /// Serves one connection over `reader`/`writer` until its input ends or `stop` fires.
    /// The engine keeps running: other connections may still use its threads (this
    /// connection's own cleanup is its services' business, from
    /// [`Connection::shutdown`]). Returns 0.
    pub async fn serve<R, W>(
        &self,
        reader: R,
        writer: W,
        stop: CancellationToken,
        services: &Services,
    ) -> i32
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_then(reader, writer, stop, services, false).await
    }

    /// Serves one connection. With `shutdown_on_close` the engine is shut down after the
    /// connection's requests end and before its output is flushed and closed, so what that
    /// causes (a turn's abort) still reaches the client.
    async fn serve_then<R, W>(
        &self,
        reader: R,
        writer: W,
        stop: CancellationToken,
        services: &Services,
        shutdown_on_close: bool,
    ) -> i32
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let host = self.clone();
        serve_connection(
            reader,
            writer,
            stop,
            |connection| services.table(self, connection, &Principal::local()),
            move || {
                Box::pin(async move {
                    if shutdown_on_close {
                        host.shutdown().await;
                    }
                })
            },
        )
        .await;
        0
    }

    /// Interrupts running turns, kills their commands and flushes every thread; gives up
    /// (with a warning) after [`ENGINE_GRACE`].
    pub async fn shutdown(&self) {
        if tokio::time::timeout(ENGINE_GRACE, self.inner.manager.shutdown_all())
            .await
            .is_err()
        {
            tracing::warn!("engine shutdown did not finish within {ENGINE_GRACE:?}");
        }
    }
}

/// Who a transport lets in, as far as it can tell: what a front end binds the handles it
/// gives clients to (MCP request states and task ids), so a handle one client got is
/// refused when another presents it. The token itself is never kept: a bearer is known by
/// the SHA-256 of its token, so every server of a fleet given the same token knows its
/// clients as the same principal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// Stdio: the user who started the server (only the process that spawned it can write
    /// to its pipe). The uid, so a server restarted by the same user knows them again.
    Local {
        /// The numeric user id of the server's process.
        uid: u32,
    },
    /// The holders of a listener's bearer token: the token's SHA-256, hex.
    Bearer {
        /// The token's SHA-256, hex.
        digest: String,
    },
    /// Anyone who can reach a listener that takes no token (`--no-auth-on-loopback`).
    Anonymous,
}

impl Principal {
    /// The user running this process (a stdio server's only client).
    pub fn local() -> Self {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        Principal::Local { uid }
    }

    /// The clients of a listener that requires `token` (`None`: it requires none).
    pub fn of_listener(token: Option<&str>) -> Self {
        use sha2::Digest;
        match token {
            Some(t) => Principal::Bearer {
                digest: hex::encode(sha2::Sha256::digest(t.as_bytes())),
            },
            None => Principal::Anonymous,
        }
    }

    /// A stable name for binding handles: `local:UID`, `bearer:SHA256`, `anonymous`.
    pub fn name(&self) -> String {
        match self {
            Principal::Local { uid } => format!("local:{uid}"),
            Principal::Bearer { digest } => format!("bearer:{digest}"),
            Principal::Anonymous => "anonymous".to_string(),
        }
    }
}

/// What a front end's method table is built from, once per connection (per HTTP or
/// WebSocket session).
#[derive(Clone)]
pub struct ServiceContext {
    /// The engine, shared with every other connection.
    pub host: Host,
    /// This connection: its sender and its closing signal.
    pub connection: Connection,
    /// Who the transport let in on this connection (the same for all of a listener's).
    pub principal: Principal,
}

type TableFn = Arc<dyn Fn(&ServiceContext) -> MethodTable + Send + Sync>;

/// Builds the method table of one connection. The CLI composes the front ends' tables
/// here (on a name clash the later table wins, so the v2 `initialize` can take over MCP's).
///
/// A listener may also serve requests that belong to no connection (MCP 2026-07-28 over
/// HTTP): [`Services::with_stateless`] says which table answers them; it is built once per
/// listener, and its context's connection sends nowhere (each request answers on its own
/// stream).
#[derive(Clone)]
pub struct Services {
    connection: TableFn,
    stateless: Option<TableFn>,
}

impl Services {
    /// Serves each connection the method table `f` builds for it; no stateless table.
    pub fn new(f: impl Fn(&ServiceContext) -> MethodTable + Send + Sync + 'static) -> Self {
        Self {
            connection: Arc::new(f),
            stateless: None,
        }
    }

    /// The same services, with `f` building the table of stateless requests.
    pub fn with_stateless(
        mut self,
        f: impl Fn(&ServiceContext) -> MethodTable + Send + Sync + 'static,
    ) -> Self {
        self.stateless = Some(Arc::new(f));
        self
    }

    /// The method table for `connection` on `host`, whose client is `principal`.
    pub fn table(
        &self,
        host: &Host,
        connection: &Connection,
        principal: &Principal,
    ) -> MethodTable {
        (self.connection)(&ServiceContext {
            host: host.clone(),
            connection: connection.clone(),
            principal: principal.clone(),
        })
    }

    /// The table of stateless requests on `host`, if these services have one; `stop` is
    /// its context's closing signal (the listener's), `principal` its clients.
    pub fn stateless_table(
        &self,
        host: &Host,
        stop: &CancellationToken,
        principal: &Principal,
    ) -> Option<MethodTable> {
        let build = self.stateless.as_ref()?;
        let (tx, mut rx) = tokio::sync::mpsc::channel(oi_jsonrpc::connection::OUTGOING_QUEUE);
        // Stateless requests answer on their own streams; nothing is sent to the table's
        // connection, and whatever is, has nobody to go to.
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                tracing::debug!("dropping a message sent outside any stateless request: {msg:?}");
            }
        });
        let connection = Connection {
            outgoing: oi_jsonrpc::OutgoingSender::new(tx),
            shutdown: stop.clone(),
        };
        Some(build(&ServiceContext {
            host: host.clone(),
            connection,
            principal: principal.clone(),
        }))
    }
}

/// Serves one connection over `reader`/`writer` with a new engine, and shuts the engine
/// down when the connection ends (input closed or `stop`): what stdio is.
pub async fn serve_stream<R, W>(
    options: HostOptions,
    reader: R,
    writer: W,
    stop: CancellationToken,
    services: Services,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let host = Host::new(options);
    host.serve_then(reader, writer, stop, &services, true).await
}

/// Serves streamable HTTP (or WebSocket, per `http.protocol`) on `listener` with `host`
/// until `stop` fires; then ends every session and shuts the engine down.
pub async fn serve_listener(
    host: Host,
    listener: tokio::net::TcpListener,
    http: HttpOptions,
    stop: CancellationToken,
    services: Services,
) -> std::io::Result<()> {
    let principal = Principal::of_listener(http.auth_token.as_deref());
    let stateless = services.stateless_table(&host, &stop, &principal);
    let factory: MethodsFactory = {
        let host = host.clone();
        Arc::new(move |connection: &Connection| services.table(&host, connection, &principal))
    };
    let tables = Tables {
        sessions: factory,
        stateless,
    };
    let served = oi_jsonrpc::http::serve_http(listener, http, tables, stop).await;
    host.shutdown().await;
    served
}

/// Serves stdin/stdout until stdin closes; logs go to stderr (`RUST_LOG`). Returns the
/// process exit code: 0 after a clean shutdown.
///
/// SIGINT, SIGTERM and SIGHUP end the server like the end of input does (running turns are
/// interrupted, their commands killed, threads flushed), then the code is 130 / 143 / 129.
pub async fn run_stdio(options: HostOptions, services: Services) -> i32 {
    init_stderr_logging();
    let stop = CancellationToken::new();
    let serve = serve_stream(
        options,
        ThreadStdin::spawn(),
        tokio::io::stdout(),
        stop.clone(),
        services,
    );
    until_signal(serve, stop, |code| code).await
}

/// Serves at `http.addr` (streamable HTTP at `/mcp`, or WebSocket) until a termination
/// signal; returns the exit code. One engine serves every session.
pub async fn run_http(options: HostOptions, http: HttpOptions, services: Services) -> i32 {
    init_stderr_logging();
    // Every connection is a file descriptor: let the administrator's hard limit, not the
    // soft default (often 1024), decide how many clients fit.
    match oi_process::raise_open_file_limit() {
        Ok((before, after)) if after > before => {
            tracing::info!("raised the open-file limit from {before} to {after}")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("cannot raise the open-file limit: {e}"),
    }
    let listener = match tokio::net::TcpListener::bind(http.addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", http.addr);
            return 1;
        }
    };
    match listener.local_addr() {
        // Tests and scripts read this line to learn the port of `--listen 127.0.0.1:0`.
        Ok(addr) => eprintln!("listening on {}", http.url(addr)),
        Err(e) => tracing::warn!("cannot read the listening address: {e}"),
    }
    let stop = CancellationToken::new();
    let serve = serve_listener(Host::new(options), listener, http, stop.clone(), services);
    until_signal(serve, stop, |served| match served {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: the server failed: {e}");
            1
        }
    })
    .await
}

/// Runs `serve` until it ends (its own exit code) or a termination signal arrives; then
/// fires `stop`, lets `serve` shut down cleanly unless a second signal comes, and returns
/// the signal's exit code.
async fn until_signal<T>(
    serve: impl Future<Output = T>,
    stop: CancellationToken,
    exit_code: impl FnOnce(T) -> i32,
) -> i32 {
    let mut signals = oi_process::TerminationSignals::listen();
    tokio::pin!(serve);
    let sig = tokio::select! {
        done = &mut serve => return exit_code(done),
        sig = signals.recv() => sig,
    };
    tracing::info!("{}: shutting down", sig.name());
    stop.cancel();
    tokio::select! {
        _ = &mut serve => {}
        again = signals.recv() => tracing::warn!("{} again: exiting without a clean shutdown", again.name()),
    }
    sig.exit_code()
}

fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Fails only when the binary already installed a subscriber; keep that one.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
