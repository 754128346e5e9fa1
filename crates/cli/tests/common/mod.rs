//! Shared harness for end-to-end tests: a temp home with a config pointing at the mock
//! model, a temp workspace, and a way to run the real `interpreter` binary.
#![allow(dead_code)]
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use oi_protocol::config_types::WireApi;
use oi_test_support::{MockModelServer, MockScript};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

pub struct TestEnv {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub mock: MockModelServer,
}

impl TestEnv {
    pub async fn new(script: MockScript, wire: WireApi) -> Self {
        Self::with_config(script, wire, "").await
    }

    /// `extra` is appended to the generated config.toml (top-level keys must come first,
    /// so it is inserted before the provider table).
    pub async fn with_config(script: MockScript, wire: WireApi, extra: &str) -> Self {
        let mock = MockModelServer::start(script).await.expect("mock model");
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let config = format!("{extra}\n{}", mock.config_toml("mock", wire));
        std::fs::write(home.path().join("config.toml"), config).expect("config");
        Self { home, work, mock }
    }

    pub fn work(&self) -> PathBuf {
        self.work.path().canonicalize().expect("work dir")
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"));
        cmd.args(args)
            .current_dir(self.work.path())
            .env("OPENINTERPRETER_HOME", self.home.path())
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        let fut = self.command(args).output();
        tokio::time::timeout(Duration::from_secs(60), fut)
            .await
            .expect("interpreter did not finish within 60s")
            .expect("spawn interpreter")
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parse `--json` output into events.
pub fn events(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

pub fn event_types(evs: &[serde_json::Value]) -> Vec<String> {
    evs.iter()
        .map(|e| e["msg"]["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// A directory outside every root the sandbox makes writable (not under /tmp, $TMPDIR or
/// the workspace): under $HOME, else /var/tmp.
pub fn outside_dir() -> tempfile::TempDir {
    let base = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_dir() && !h.starts_with("/tmp"))
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    tempfile::Builder::new()
        .prefix("oi-outside-")
        .tempdir_in(base)
        .expect("outside dir")
}

/// Codex 0.171's own binary, for the tests that drive it or drive us with its clients:
/// `CODEX_BIN`, else the one `tools/peers/install.sh` installs. Missing, the tests that need
/// it skip, except under `scripts/test.sh` (`OI_REQUIRE_PEERS`) or CI, where that is a
/// failure: a peer test that silently skips proves nothing.
pub fn codex_bin() -> Option<std::path::PathBuf> {
    if let Ok(bin) = std::env::var("CODEX_BIN") {
        return Some(bin.into());
    }
    let peer = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../tools/peers/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/bin/codex",
    );
    if peer.exists() {
        return Some(peer);
    }
    let required =
        std::env::var_os("OI_REQUIRE_PEERS").is_some() || std::env::var_os("CI").is_some();
    assert!(
        !required,
        "no codex binary at {}: run tools/peers/install.sh (or set CODEX_BIN)",
        peer.display()
    );
    eprintln!("no codex binary (CODEX_BIN, or tools/peers/install.sh); skipping");
    None
}

/// `interpreter app-server --listen ws://127.0.0.1:0`, started and listening.
pub struct Server {
    pub _child: tokio::process::Child,
    /// `ws://127.0.0.1:PORT`.
    pub url: String,
    /// The bearer token clients must send (the one kept in the home directory).
    pub token: String,
}

/// Starts the app server on a WebSocket with global `flags` (the agent is configured on the
/// server, not by remote clients) and waits for its `listening on` line.
pub async fn start_ws_server(env: &TestEnv, flags: &[&str]) -> Server {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut args = flags.to_vec();
    args.extend(["app-server", "--listen", "ws://127.0.0.1:0"]);
    let mut cmd = env.command(&args);
    cmd.stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn the app server");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.trim().strip_prefix("listening on ") {
                return url.to_string();
            }
        }
        panic!("the server ended without listening");
    })
    .await
    .expect("no `listening on` line");
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    // Keep draining stderr so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let token = std::fs::read_to_string(env.home.path().join("listen-token")).expect("token");
    Server {
        _child: child,
        url,
        token: token.trim().to_string(),
    }
}

/// An OAuth-protected HTTP MCP server on the peers' Python, on 127.0.0.1; killed on drop:
/// fastmcp behind its in-memory OAuth provider (`tests/fixtures/mcp/fastmcp_oauth_server.py`),
/// or the scriptable fixture. `None` (with a note) when the peers are not installed, unless
/// `OI_REQUIRE_PEERS`/CI make that a failure.
pub struct OAuthPeer {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl OAuthPeer {
    pub fn start() -> Option<Self> {
        Self::spawn("fastmcp_oauth_server.py", &[])
    }

    /// The scriptable OAuth fixture (`tests/fixtures/mcp/oauth_fixture_server.py`): an MCP
    /// server and two authorization servers (`<base>/as1`, `<base>/as2`), as `flags` say.
    pub fn fixture(flags: &[&str]) -> Option<Self> {
        Self::spawn("oauth_fixture_server.py", flags)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// The fixture's log of what the client did (`GET /__log`).
    pub fn log(&self) -> Vec<serde_json::Value> {
        let out = std::process::Command::new("curl")
            .args(["-s", &format!("{}/__log", self.base())])
            .output()
            .expect("curl");
        serde_json::from_slice(&out.stdout).expect("the fixture's log")
    }

    fn spawn(script: &str, flags: &[&str]) -> Option<Self> {
        use std::io::BufRead;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let python = root.join("tools/peers/venv/bin/python");
        if !python.exists() {
            let required =
                std::env::var_os("OI_REQUIRE_PEERS").is_some() || std::env::var_os("CI").is_some();
            assert!(!required, "no peers venv: run tools/peers/install.sh");
            eprintln!("no peers venv (tools/peers/install.sh); skipping");
            return None;
        }
        let mut child = std::process::Command::new(python)
            .arg(root.join("tests/fixtures/mcp").join(script))
            .args(flags)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start the OAuth peer");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(port) = line.strip_prefix("OI_LISTENING ") {
                    let _ = tx.send(port.trim().to_string());
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the OAuth peer did not say where it listens");
        Some(Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}

impl Drop for OAuthPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
