//! `mock-model --script script.json [--port 0] [--ignore-stdin]`
//!
//! Serves the scripted mock model on 127.0.0.1 for non-Rust tests and bench scripts. Prints
//! exactly one line, `listening http://127.0.0.1:PORT/v1`, then serves until stdin closes
//! (so a parent that dies takes it along) or SIGTERM/SIGINT. With `--ignore-stdin` only the
//! signals stop it (for `mock-model ... &` in shell scripts, where stdin is /dev/null).
//! `GET /__mock/requests` returns the recorded requests.

use std::io::Write;
use std::process::ExitCode;

use oi_test_support::{MockModelServer, MockScript};
use tokio::io::AsyncReadExt;

const USAGE: &str = "usage: mock-model --script SCRIPT.json [--port PORT] [--ignore-stdin]";

struct Args {
    script: String,
    port: u16,
    ignore_stdin: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut script = None;
    let mut port = 0u16;
    let mut ignore_stdin = false;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--script" => script = Some(it.next().ok_or("--script needs a file path")?),
            "--port" => {
                let v = it.next().ok_or("--port needs a number")?;
                port = v
                    .parse()
                    .map_err(|_| format!("--port: `{v}` is not a port number (0-65535)"))?;
            }
            "--ignore-stdin" => ignore_stdin = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let script = script.ok_or("missing --script")?;
    Ok(Args {
        script,
        port,
        ignore_stdin,
    })
}

fn load_script(path: &str) -> Result<MockScript, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read script `{path}`: {e}"))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "script `{path}` is not a valid mock script: {e}. Expected e.g. \
             {{\"responses\":[{{\"type\":\"turn\",\"text\":\"hi\"}}]}}"
        )
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            if msg.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("mock-model: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let script = match load_script(&args.script) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("mock-model: {msg}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mock-model: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(serve(script, args.port, args.ignore_stdin));
    // A blocking stdin read may still be pending; do not wait for it.
    runtime.shutdown_background();
    code
}

async fn serve(script: MockScript, port: u16, ignore_stdin: bool) -> ExitCode {
    let server = match MockModelServer::bind(script, port).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mock-model: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "listening {}", server.base_url())
            .and_then(|_| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    let stdin_closed = async {
        if ignore_stdin {
            return futures::future::pending::<()>().await;
        }
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 1024];
        while let Ok(n) = stdin.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = stdin_closed => {}
        _ = terminated() => {}
    }
    drop(server);
    ExitCode::SUCCESS
}

async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => futures::future::pending::<()>().await,
    }
}
