//! `interpreter mcp-server --listen` and `app-server --listen` as other people on the machine
//! meet them (issue 29, items 3 and 4): a loopback listener needs a token too (generated,
//! kept in a 0600 file, never printed), another local user is refused with 401, the opt-out
//! is explicit, a short token is refused off loopback, and slow connections do not shut a
//! client out even when the soft open-file limit is low.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Generous: only reached when the behaviour under test is missing.
const DEADLINE: Duration = Duration::from_secs(30);

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

struct Server {
    child: Child,
    addr: SocketAddr,
    /// Everything the server wrote on stderr so far.
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

fn command(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interpreter"));
    cmd.args(args)
        .env("OPENINTERPRETER_HOME", home)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Starts the server and waits for its `listening on` line.
fn start(mut cmd: Command) -> Server {
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut addr = None;
    let mut line = String::new();
    while lines.read_line(&mut line).unwrap() > 0 {
        stderr.lock().unwrap().push_str(&line);
        if let Some(url) = line.trim().strip_prefix("listening on http://") {
            addr = Some(url.trim_end_matches("/mcp").parse().unwrap());
            break;
        }
        line.clear();
    }
    let addr = addr.unwrap_or_else(|| panic!("no address; stderr: {}", stderr.lock().unwrap()));
    let sink = stderr.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        while lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            sink.lock().unwrap().push_str(&line);
            line.clear();
        }
    });
    Server {
        child,
        addr,
        stderr,
    }
}

fn post(addr: SocketAddr, token: Option<&str>) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    stream.write_all(request(addr, token).as_bytes()).unwrap();
    let mut reply = String::new();
    stream
        .read_to_string(&mut reply)
        .unwrap_or_else(|e| panic!("no reply within {DEADLINE:?}: {e}"));
    reply
}

fn request(addr: SocketAddr, token: Option<&str>) -> String {
    let auth = token
        .map(|t| format!("authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: application/json\r\ncontent-type: application/json\r\nconnection: close\r\n{auth}content-length: {}\r\n\r\n{INIT}",
        INIT.len()
    )
}

/// Runs `script` with bash as a real second local user (uid 65534) with `env`, if this
/// test may become one (it runs as root and `setpriv` exists).
fn as_nobody(script: &str, env: &[(&str, &str)]) -> Option<std::process::Output> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        eprintln!("skipping the second-user part: needs root and setpriv");
        return None;
    }
    let out = Command::new("/usr/bin/setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "--",
        ])
        .args(["bash", "-c", script])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Some(out)
}

fn world_readable_home() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // Only the token file's own mode is to protect it: everyone may enter the folders.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, home)
}

#[test]
fn a_loopback_listener_requires_the_generated_token_from_another_local_user() {
    for command_name in ["mcp-server", "app-server"] {
        let (_dir, home) = world_readable_home();
        let server = start(command(&home, &[command_name, "--listen", "127.0.0.1:0"]));
        let token_file = home.join("listen-token");
        let token = std::fs::read_to_string(&token_file)
            .unwrap()
            .trim()
            .to_string();
        assert!(token.len() >= 32, "{token:?}");
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file is the owner's only");
        assert!(
            server
                .stderr()
                .contains(&format!("the token is in {}", token_file.display())),
            "{}",
            server.stderr()
        );

        // Without the token: refused, whoever asks.
        let reply = post(server.addr, None);
        assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
        // Another local user can neither read the token nor do without it.
        let script = format!(
            "cat {file} >/dev/null 2>&1 && echo READ-THE-TOKEN; \
             exec 3<>/dev/tcp/127.0.0.1/{port}; printf '%s' \"$REQ\" >&3; head -c 12 <&3",
            file = token_file.display(),
            port = server.addr.port(),
        );
        if let Some(out) = as_nobody(&script, &[("REQ", &request(server.addr, None))]) {
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(
                !said.contains("READ-THE-TOKEN"),
                "nobody read the token: {said}"
            );
            assert_eq!(
                said,
                "HTTP/1.1 401",
                "{said} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }

        // With it: served.
        let reply = post(server.addr, Some(&token));
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        // The next start keeps the same token (configured clients keep working).
        drop(server);
        let again = start(command(&home, &[command_name, "--listen", "127.0.0.1:0"]));
        assert!(post(again.addr, Some(&token)).starts_with("HTTP/1.1 200"));
        assert!(
            !again.stderr().contains(&token),
            "the token was printed: {}",
            again.stderr()
        );
    }
}

#[test]
fn the_opt_out_serves_loopback_without_a_token_and_only_loopback() {
    let home = tempfile::tempdir().unwrap();
    let server = start(command(
        home.path(),
        &[
            "mcp-server",
            "--listen",
            "127.0.0.1:0",
            "--no-auth-on-loopback",
        ],
    ));
    let reply = post(server.addr, None);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        server
            .stderr()
            .contains("any local user can use this server")
    );
    assert!(!home.path().join("listen-token").exists());

    let out = command(
        home.path(),
        &[
            "mcp-server",
            "--listen",
            "0.0.0.0:0",
            "--no-auth-on-loopback",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--no-auth-on-loopback applies only to a loopback address"),
        "{err}"
    );
}

#[test]
fn an_explicit_token_is_used_and_a_short_one_is_refused_off_loopback() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = command(
        home.path(),
        &[
            "app-server",
            "--listen",
            "127.0.0.1:0",
            "--auth-token-env",
            "OI_T",
        ],
    );
    cmd.env("OI_T", "short-but-loopback");
    let server = start(cmd);
    assert!(post(server.addr, None).starts_with("HTTP/1.1 401"));
    assert!(post(server.addr, Some("short-but-loopback")).starts_with("HTTP/1.1 200"));
    assert!(!home.path().join("listen-token").exists());

    let mut cmd = command(
        home.path(),
        &[
            "mcp-server",
            "--listen",
            "0.0.0.0:0",
            "--auth-token-env",
            "OI_T",
        ],
    );
    cmd.env("OI_T", "0123456789abcdef0123456789abcde");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the token is 31 characters") && err.contains("at least 32"),
        "{err}"
    );
    assert!(err.contains("openssl rand -hex 32"), "{err}");
}

#[test]
fn slow_connections_do_not_shut_out_a_client_under_a_low_open_file_limit() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = command(home.path(), &["mcp-server", "--listen", "127.0.0.1:0"]);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // A soft limit of 64 (the hard one stays): 150 slow clients would use it up.
            lim.rlim_cur = 64.min(lim.rlim_max);
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let server = start(cmd);
    let token = std::fs::read_to_string(home.path().join("listen-token")).unwrap();
    // Slowloris from another address: each sends part of a request head and waits.
    let mut slow = Vec::new();
    for _ in 0..150 {
        let mut s = connect_from([127, 0, 0, 2], server.addr);
        let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: a");
        slow.push(s);
    }
    let reply = post(server.addr, Some(token.trim()));
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    drop(slow);
}

/// A connection to `to` from the local address `from` (any 127.x.y.z works on Linux), to
/// play a second peer.
fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::from((from, 0))).unwrap();
        let stream = socket.connect(to).await.unwrap().into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// How many of `streams` the server still keeps open.
fn still_open(streams: &[TcpStream]) -> usize {
    let mut buf = [0u8; 64];
    streams
        .iter()
        .filter(|s| {
            s.set_nonblocking(true).unwrap();
            let open = matches!((&**s).read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
            s.set_nonblocking(false).unwrap();
            open
        })
        .count()
}

#[test]
fn a_local_process_holding_half_open_requests_does_not_shut_out_the_token_holder() {
    for command_name in ["mcp-server", "app-server"] {
        let home = tempfile::tempdir().unwrap();
        let server = start(command(
            home.path(),
            &[command_name, "--listen", "127.0.0.1:0"],
        ));
        let token = std::fs::read_to_string(home.path().join("listen-token")).unwrap();
        // A local process without the token holds 256 requests whose head never ends, from
        // the address legitimate local clients use too.
        let mut held = Vec::new();
        for _ in 0..256 {
            let mut s = TcpStream::connect(server.addr).unwrap();
            let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: a");
            held.push(s);
        }
        for probe in 0..5 {
            let reply = post(server.addr, Some(token.trim()));
            assert!(
                reply.starts_with("HTTP/1.1 200"),
                "{command_name}, probe {probe}: {reply}"
            );
        }
        // Without the token: still refused, and the held requests were pushed out.
        assert!(post(server.addr, None).starts_with("HTTP/1.1 401"));
        let deadline = std::time::Instant::now() + DEADLINE;
        while still_open(&held) > 32 {
            assert!(
                std::time::Instant::now() < deadline,
                "{command_name}: {} half-open requests still held",
                still_open(&held)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
