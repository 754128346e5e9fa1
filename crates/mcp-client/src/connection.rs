//! One live session with one server: spawn/connect, the handshake (`server/discover`,
//! `initialize`, or the probe of both, as its `protocol_version` says), the first
//! `tools/list`, and teardown. Startup is bounded by `startup_timeout_sec` across all steps.

use crate::connect_error::ConnectError;
use crate::handler::{Handler, ProgressRouter, Responder};
use crate::http::{header_map, http_client, http_spec};
use crate::protocol::{Era, Negotiated, Opening, Prior};
use crate::stdio::{ChildProcess, KILL_GRACE, describe_exit, launch_spec, spawn};
use crate::wire_error::{self, WireFault};
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use rmcp::service::{ClientInitializeError, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) struct Connection {
    pub peer: rmcp::Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    pub child: Option<Arc<ChildProcess>>,
    /// Shared with the session's handler, which dispatches progress notifications through it.
    pub progress: ProgressRouter,
    /// Answers the server's questions (shared with the session's handler); the request loops
    /// hand it the questions of multi round-trip results and tasks.
    pub responder: Arc<Responder>,
    /// The protocol version and era this connection runs in.
    pub negotiated: Negotiated,
    /// Set when a call showed the session is unusable (e.g. the HTTP server went away); the
    /// next call then reconnects.
    broken: std::sync::atomic::AtomicBool,
}

/// A started session plus the raw tools it listed.
pub(crate) struct Established {
    pub conn: Arc<Connection>,
    pub tools: Vec<serde_json::Value>,
    /// The tool list's freshness hint (`ttlMs`, 2026-07-28), if the server gave one.
    pub tools_ttl: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Spawn,
    Connect,
    Handshake(Opening),
    ListTools,
}

impl Step {
    /// The step, for a message that says what happened during it.
    fn name(self) -> &'static str {
        match self {
            Step::Spawn => "spawning the server process",
            Step::Connect => "connecting",
            Step::Handshake(Opening::Initialize) => "the initialize handshake",
            Step::Handshake(Opening::Discover | Opening::Probe) => "server/discover",
            Step::ListTools => "the first tools/list",
        }
    }

    /// The step that ran out of time, with what may explain it.
    fn describe(self) -> &'static str {
        match self {
            // A server of the handshake era that does not answer unknown requests (as
            // JSON-RPC requires) needs `protocol_version = "2025-11-25"`.
            Step::Handshake(Opening::Probe) => {
                "server/discover (a server older than protocol 2026-07-28 that ignores it needs `protocol_version = \"2025-11-25\"`)"
            }
            other => other.name(),
        }
    }
}

impl Connection {
    /// Still usable: the session loop runs and (for stdio) the child has not exited.
    pub(crate) fn is_alive(&self) -> bool {
        !self.broken.load(std::sync::atomic::Ordering::SeqCst)
            && !self.peer.is_transport_closed()
            && self
                .child
                .as_ref()
                .is_none_or(|c| c.exit_status().is_none())
    }

    /// Give up on this session: the next call starts a new one.
    pub(crate) fn mark_broken(&self) {
        self.broken.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub(crate) fn is_http(&self) -> bool {
        self.child.is_none()
    }

    /// Resolves when a stdio server's process has exited (never for HTTP).
    pub(crate) async fn process_exited(&self) {
        match &self.child {
            Some(child) => child.exited().await,
            None => std::future::pending().await,
        }
    }

    /// Close the session, then TERM → KILL the child's process group.
    pub(crate) async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(service) = service {
            // Dropping the transport closes the child's stdin / ends the HTTP session.
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        if let Some(child) = &self.child {
            child.terminate(KILL_GRACE).await;
        }
    }

    /// Why the session ended, for error messages ("exit code 1; stderr: ...").
    pub(crate) async fn death_detail(&self) -> String {
        let Some(child) = &self.child else {
            return "the HTTP session was closed".to_string();
        };
        // The transport usually notices EOF a moment before the exit status is reaped, and
        // the stderr reader may still be behind.
        child.settle(Duration::from_millis(500)).await;
        let mut s = match child.exit_status() {
            Some(status) => format!("the server process exited ({})", describe_exit(status)),
            None => "the server closed its connection".to_string(),
        };
        let tail = child.stderr_tail();
        if !tail.is_empty() {
            s.push_str(&format!("; its last stderr output:\n{tail}"));
        }
        s
    }
}

type Service = RunningService<RoleClient, Handler>;

/// How far a startup got, kept outside the timed future so a timeout can still say which
/// step hung and show the child's stderr (dropping the child kills it).
#[derive(Default)]
struct StartupProgress {
    step: Mutex<Option<Step>>,
    child: Mutex<Option<Arc<ChildProcess>>>,
}

impl StartupProgress {
    fn set_step(&self, step: Step) {
        if let Ok(mut g) = self.step.lock() {
            *g = Some(step);
        }
    }

    fn describe_step(&self) -> &'static str {
        self.step
            .lock()
            .ok()
            .and_then(|s| *s)
            .unwrap_or(Step::Spawn)
            .describe()
    }

    fn set_child(&self, child: Arc<ChildProcess>) {
        if let Ok(mut slot) = self.child.lock() {
            *slot = Some(child);
        }
    }

    fn child(&self) -> Option<Arc<ChildProcess>> {
        self.child.lock().ok().and_then(|s| s.clone())
    }
}

/// Start a session. The error is the full user-facing message.
// The connection's inputs as the manager holds them; a struct would only repackage them.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn establish(
    server: &str,
    config: &McpServerConfig,
    session_cwd: &Path,
    home: &Path,
    oauth_browser: Option<Arc<dyn crate::oauth_session::OAuthBrowser>>,
    oauth_store: oi_config::OAuthCredentialsStoreMode,
    handler: Handler,
    task_required: crate::sniff::TaskRequiredTools,
    prior: Prior,
) -> Result<Established, ConnectError> {
    let timeout = config.startup_timeout_or_default();
    let progress_router = handler.progress.clone();
    let responder = handler.responder.clone();
    let progress = StartupProgress::default();
    let attempt = async {
        let mut opening = Opening::first(config.protocol_version, prior.era);
        // A probe, then initialize, then (for a remembered server gone modern) a probe again.
        let mut attempts_left = 3;
        let (service, child) = loop {
            attempts_left -= 1;
            let served = match &config.transport {
                McpServerTransportConfig::Stdio { .. } => serve_stdio(
                    server,
                    config,
                    session_cwd,
                    handler.clone(),
                    task_required.clone(),
                    opening,
                    &progress,
                )
                .await
                .map(|(service, child)| (service, Some(child))),
                McpServerTransportConfig::StreamableHttp { .. } => serve_http(
                    server,
                    config,
                    home,
                    oauth_browser.clone(),
                    oauth_store,
                    handler.clone(),
                    task_required.clone(),
                    opening,
                    &progress,
                )
                .await
                .map(|service| (service, None)),
            };
            match served {
                Ok(served) => break served,
                Err(StartError::Retry(next)) if attempts_left > 0 => {
                    tracing::info!(
                        "MCP server `{server}`: opening with {opening:?} failed; trying {next:?}"
                    );
                    if let Some(child) = progress.child() {
                        child.terminate(Duration::from_millis(200)).await;
                    }
                    opening = next;
                }
                Err(StartError::Connect(e)) => return Err(e),
                Err(StartError::Retry(_)) => {
                    return Err(ConnectError::Handshake(format!(
                        "MCP server `{server}` refused both protocol eras (server/discover and initialize)"
                    )));
                }
            }
        };
        // A catalog still fresh by its `ttlMs` is not listed again (2026-07-28 servers only:
        // a server of the handshake era gives no freshness hint).
        let modern = service
            .peer()
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        if let (true, Some((tools, fresh_for))) = (modern, prior.fresh_tools) {
            tracing::debug!("MCP server `{server}`: cached tool list still fresh, not listed");
            return Ok::<_, ConnectError>((service, child, tools, Some(fresh_for)));
        }
        progress.set_step(Step::ListTools);
        let listed = crate::tool_list::list_tools(service.peer())
            .await
            .map_err(|e| list_failure(server, config, &e))?;
        Ok::<_, ConnectError>((service, child, listed.tools, listed.ttl))
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok((service, child, tools, tools_ttl))) => {
            let negotiated = service
                .peer()
                .peer_info()
                .map(|info| Negotiated {
                    tasks: info.capabilities.supports_tasks(),
                    ..Negotiated::of(&info.protocol_version)
                })
                .unwrap_or_else(|| Negotiated::of(&crate::handler::LEGACY_PROTOCOL_VERSION));
            tracing::info!(
                "MCP server `{server}` speaks protocol {} ({})",
                negotiated.version,
                match negotiated.era {
                    Era::Discover => "server/discover",
                    Era::Initialize => "initialize",
                }
            );
            Ok(Established {
                conn: Arc::new(Connection {
                    peer: service.peer().clone(),
                    service: tokio::sync::Mutex::new(Some(service)),
                    child,
                    progress: progress_router,
                    responder,
                    negotiated,
                    broken: Default::default(),
                }),
                tools,
                tools_ttl,
            })
        }
        Ok(Err(err)) => Err(startup_failed(server, err, progress.child()).await),
        Err(_) => Err(startup_timed_out(server, timeout, &progress).await),
    }
}

/// Why one way of opening a server failed: for good, or in a way that another opening may
/// get past (a remembered handshake server that went modern-only).
enum StartError {
    Connect(ConnectError),
    Retry(Opening),
}

impl<E: Into<ConnectError>> From<E> for StartError {
    fn from(e: E) -> Self {
        StartError::Connect(e.into())
    }
}

/// A failed handshake that another opening may get past, or that the server's pinned
/// `protocol_version` explains; `None`: an ordinary failure.
fn protocol_failure(
    server: &str,
    config: &McpServerConfig,
    opening: Opening,
    error: &ClientInitializeError,
) -> Option<StartError> {
    if let Some(next) = opening.retry(config.protocol_version, error) {
        return Some(StartError::Retry(next));
    }
    crate::protocol::era_mismatch(server, config.protocol_version, error)
        .map(|line| StartError::Connect(ConnectError::Handshake(line)))
}

/// Spawns a stdio server (in its own process group, under the keeper) and opens the session
/// over its pipes (`server/discover`, `initialize`, or the probe of both).
async fn serve_stdio(
    server: &str,
    config: &McpServerConfig,
    session_cwd: &Path,
    handler: Handler,
    task_required: crate::sniff::TaskRequiredTools,
    opening: Opening,
    progress: &StartupProgress,
) -> Result<(Service, Arc<ChildProcess>), StartError> {
    progress.set_step(Step::Spawn);
    let lookup = |k: &str| std::env::var(k).ok();
    let spec = launch_spec(server, &config.transport, session_cwd, &lookup)?;
    if let Some(pins) = config.launch_pins.clone() {
        check_pins(pins, &spec).await?;
    }
    let (child, stdout, stdin) = spawn(server, &spec)?;
    let child = Arc::new(child);
    progress.set_child(child.clone());
    progress.set_step(Step::Handshake(opening));
    let stdout = crate::sniff::TaskSupportSniffer::new(stdout, task_required);
    match handler
        .serve_with_lifecycle((stdout, stdin), opening.lifecycle(false))
        .await
    {
        Ok(service) => Ok((service, child)),
        Err(e) => Err(protocol_failure(server, config, opening, &e)
            .unwrap_or_else(|| StartError::Connect(handshake_failure(server, None, opening, &e)))),
    }
}

/// A server an accepted project config adds runs only what was accepted: the files its
/// command line names are checked against their accepted content right before each launch
/// (a restart included), on the blocking pool since it reads them.
async fn check_pins(
    pins: oi_config::launch_pins::LaunchPins,
    spec: &crate::stdio::LaunchSpec,
) -> Result<(), ConnectError> {
    let mut argv = vec![spec.program.clone()];
    argv.extend(spec.args.iter().cloned());
    let cwd = spec.cwd.clone();
    tokio::task::spawn_blocking(move || pins.verify(&argv, &cwd))
        .await
        .map_err(|e| ConnectError::Spawn(format!("could not check the server's files: {e}")))?
        .map_err(|e| ConnectError::Config(e.to_string()))
}

/// Connects to a streamable HTTP server with the credentials the config names, or through
/// OAuth (stored tokens, refreshed; a new authorization when the server challenges), and runs
/// opens the session (`server/discover`, `initialize`, or the probe of both). A 401/403 gets
/// a message saying which credentials were sent and how to fix them.
#[allow(clippy::too_many_arguments)]
async fn serve_http(
    server: &str,
    config: &McpServerConfig,
    home: &Path,
    oauth_browser: Option<Arc<dyn crate::oauth_session::OAuthBrowser>>,
    oauth_store: oi_config::OAuthCredentialsStoreMode,
    handler: Handler,
    task_required: crate::sniff::TaskRequiredTools,
    opening: Opening,
    progress: &StartupProgress,
) -> Result<Service, StartError> {
    use crate::oauth_session::{Authorizer, OAuthHttpClient, OAuthSettings};
    use crate::sniff::SniffingHttpClient;
    progress.set_step(Step::Connect);
    let lookup = |k: &str| std::env::var(k).ok();
    let spec = http_spec(server, &config.transport, &lookup)?;
    for w in &spec.warnings {
        tracing::warn!("{w}");
    }
    let headers = header_map(server, &spec.headers);
    let has_auth_header = headers.contains_key(&reqwest::header::AUTHORIZATION);
    let mut cfg = StreamableHttpClientTransportConfig::with_uri(spec.url.clone())
        .custom_headers(headers)
        .reinit_on_expired_session(true);
    // Auth precedence: bearer_token_env_var, an Authorization header, OAuth (stored tokens,
    // or whatever the server's challenge asks for).
    let auth = if spec.bearer_token.is_some() {
        AuthUsed::BearerEnv
    } else if has_auth_header {
        AuthUsed::Header
    } else {
        AuthUsed::OAuth
    };
    if let Some(token) = &spec.bearer_token {
        cfg = cfg.auth_header(token.clone());
    }
    let served = match (auth, &config.transport) {
        (
            AuthUsed::OAuth,
            McpServerTransportConfig::StreamableHttp {
                oauth,
                scopes,
                oauth_resource,
                ..
            },
        ) => {
            let stored =
                crate::oauth_session::stored_manager(home, server, &spec.url, oauth_store).await?;
            let authorizer = Authorizer::new(
                OAuthSettings {
                    server: server.to_string(),
                    url: spec.url.clone(),
                    home: home.to_path_buf(),
                    config: oauth.clone(),
                    scopes: scopes.clone().unwrap_or_default(),
                    resource: oauth_resource.clone(),
                    browser: oauth_browser,
                    store: oauth_store,
                },
                stored,
            );
            progress.set_step(Step::Handshake(opening));
            handler
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::with_client(
                        SniffingHttpClient::new(
                            OAuthHttpClient::new(http_client()?, authorizer),
                            task_required,
                        ),
                        cfg,
                    ),
                    opening.lifecycle(true),
                )
                .await
        }
        _ => {
            progress.set_step(Step::Handshake(opening));
            handler
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::with_client(
                        SniffingHttpClient::new(http_client()?, task_required),
                        cfg,
                    ),
                    opening.lifecycle(true),
                )
                .await
        }
    };
    served.map_err(|e| {
        if let Some(failure) = protocol_failure(server, config, opening, &e) {
            return failure;
        }
        if let Some(ours) = crate::oauth_session::user_message(&e.to_string()) {
            return StartError::Connect(ConnectError::OAuthLine(ours));
        }
        StartError::Connect(match wire_error::handshake_fault(&e) {
            Some(WireFault::Status(status @ (401 | 403))) => {
                ConnectError::Refused(auth_message(server, status, auth, &config.transport))
            }
            _ => handshake_failure(server, Some(&spec.url), opening, &e),
        })
    })
}

/// A failed handshake in our words: the connection or HTTP failure, or the server's answer.
/// A stdio server whose pipe closed under it is `Lost`, which the startup message turns into
/// how its process exited.
fn handshake_failure(
    server: &str,
    url: Option<&str>,
    opening: Opening,
    e: &ClientInitializeError,
) -> ConnectError {
    let step = Step::Handshake(opening);
    match wire_error::handshake_fault(e) {
        Some(fault) if fault.is_lost() && url.is_none() => ConnectError::Lost {
            during: step.name(),
        },
        Some(fault) => ConnectError::Handshake(fault.describe(server, url)),
        None => ConnectError::Handshake(wire_error::handshake_answer(e, step.name())),
    }
}

/// The first `tools/list` failed: the server's error, or the connection's.
fn list_failure(server: &str, config: &McpServerConfig, e: &rmcp::ServiceError) -> ConnectError {
    let url = server_url(config);
    if let Some(ours) = crate::oauth_session::user_message(&e.to_string()) {
        return ConnectError::OAuthLine(ours);
    }
    match (e, wire_error::service_fault(e)) {
        (_, Some(fault)) if fault.is_lost() && url.is_none() => ConnectError::Lost {
            during: Step::ListTools.describe(),
        },
        (_, Some(fault)) => ConnectError::Handshake(format!(
            "tools/list failed: {}",
            fault.describe(server, url)
        )),
        (rmcp::ServiceError::McpError(data), None) => ConnectError::Handshake(format!(
            "the server answered tools/list with error {}: {}",
            data.code.0, data.message
        )),
        (_, None) => ConnectError::Handshake(
            "the server answered tools/list with something other than a tool list".to_string(),
        ),
    }
}

/// The URL of a streamable HTTP server (`None` for stdio), for messages.
pub(crate) fn server_url(config: &McpServerConfig) -> Option<&str> {
    match &config.transport {
        McpServerTransportConfig::StreamableHttp { url, .. } => Some(url.as_str()),
        McpServerTransportConfig::Stdio { .. } => None,
    }
}

/// An rmcp service error as a user reads it: our OAuth line alone if it is one, else the
/// connection or HTTP failure in our words, else the text without Rust type names.
pub(crate) fn describe_service_error(
    server: &str,
    url: Option<&str>,
    e: &rmcp::ServiceError,
) -> String {
    let text = e.to_string();
    if let Some(ours) = crate::oauth_session::user_message(&text) {
        return ours;
    }
    match wire_error::service_fault(e) {
        Some(fault) => fault.describe(server, url),
        None => wire_error::without_type_names(&text),
    }
}

/// How long a stdio server whose connection ended gets to be reaped and to have its stderr
/// read to the end, so the message can say how it exited and quote it.
const EXIT_SETTLE: Duration = Duration::from_secs(2);

/// The message for a startup that failed: the error and the tail of the process's stderr.
/// When the connection ended under us, the process's exit is the cause ("exited during the
/// initialize handshake (exit code 7)"); when the server answered wrongly it was alive, and
/// the exit that follows our closing it is not mentioned. Stops the process.
async fn startup_failed(
    server: &str,
    mut cause: ConnectError,
    child: Option<Arc<ChildProcess>>,
) -> ConnectError {
    let mut stderr = String::new();
    if let Some(child) = child {
        if let ConnectError::Lost { during } = cause {
            child.settle(EXIT_SETTLE).await;
            if let Some(status) = child.exit_status() {
                cause = ConnectError::Exited {
                    during,
                    exit: describe_exit(status),
                };
            }
        }
        stderr = child.stderr_tail();
        child.terminate(Duration::from_millis(200)).await;
    }
    ConnectError::Failed {
        server: server.to_string(),
        cause: Box::new(cause),
        stderr,
    }
}

/// The message for a startup that ran out of time: the step that hung and the config line
/// that gives it more. Stops the process.
async fn startup_timed_out(
    server: &str,
    timeout: Duration,
    progress: &StartupProgress,
) -> ConnectError {
    let mut stderr = String::new();
    if let Some(child) = progress.child() {
        stderr = child.stderr_tail();
        child.terminate(Duration::from_millis(200)).await;
    }
    ConnectError::TimedOut {
        server: server.to_string(),
        timeout,
        during: progress.describe_step().to_string(),
        stderr,
    }
}

/// Which credentials an HTTP connection sent, to say what a 401 means.
#[derive(Clone, Copy)]
enum AuthUsed {
    BearerEnv,
    Header,
    OAuth,
}

/// One line: the server, the status, and what to do.
fn auth_message(
    server: &str,
    status: u16,
    auth: AuthUsed,
    transport: &oi_config::mcp::McpServerTransportConfig,
) -> String {
    let var = match transport {
        McpServerTransportConfig::StreamableHttp {
            bearer_token_env_var: Some(v),
            ..
        } => v.as_str(),
        _ => "the bearer_token_env_var variable",
    };
    if status == 403 {
        return format!(
            "MCP server `{server}` refused access (HTTP 403): the credentials were accepted but do not allow this; check the token's permissions or the OAuth `scopes` in [mcp_servers.{server}], then run `interpreter mcp login {server}` again if you use OAuth"
        );
    }
    match auth {
        AuthUsed::BearerEnv => format!(
            "MCP server `{server}` rejected the bearer token from ${var} (HTTP 401): check or renew the token in that environment variable"
        ),
        AuthUsed::Header => format!(
            "MCP server `{server}` rejected the Authorization header (HTTP 401): check `http_headers`/`env_http_headers` in [mcp_servers.{server}]"
        ),
        AuthUsed::OAuth => format!(
            "MCP server `{server}` needs authorization (HTTP 401): run `interpreter mcp login {server}`, or set `bearer_token_env_var` in [mcp_servers.{server}]"
        ),
    }
}
