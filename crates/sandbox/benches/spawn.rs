//! Added latency of starting a sandboxed command versus an unsandboxed one.
//! `cargo bench -p oi-sandbox` — spawns `true` N times each way and prints median / p90.
//! "supervised" is how the engine runs an unsandboxed command (`oi_process::supervise`: own
//! group, watched so it dies with the agent); "plain" is a bare spawn, for reference. The
//! sandboxed timings include `confine` (building the ruleset and filters), as the engine
//! pays that for every command.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::path::Path;
use std::time::{Duration, Instant};

use oi_protocol::config_types::SandboxPolicy;
use oi_sandbox::{SandboxRequest, confine};

const N: usize = 200;
const WARMUP: usize = 10;

/// How a case starts its command.
enum Mode<'a> {
    Plain,
    Supervised,
    Sandboxed(SandboxRequest<'a>),
}

async fn spawn_true(mode: &Mode<'_>, cwd: &Path) -> Duration {
    let start = Instant::now();
    let mut cmd = tokio::process::Command::new("true");
    cmd.current_dir(cwd);
    match mode {
        Mode::Plain => {}
        Mode::Supervised => oi_process::supervise(&mut cmd),
        Mode::Sandboxed(req) => confine(&mut cmd, req).expect("this kernel supports the sandbox"),
    }
    let status = cmd.status().await.expect("spawn true");
    assert!(status.success());
    start.elapsed()
}

struct Stats {
    median: Duration,
    p90: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let n = samples.len();
    Stats {
        median: samples[n / 2],
        p90: samples[n * 9 / 10],
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let workspace = tempfile::tempdir().expect("tempdir");
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(repo.path().join(".git")).expect("mkdir .git");
        let ww = SandboxPolicy::workspace_write();

        let cases: Vec<(&str, Mode<'_>, &Path)> = vec![
            ("plain", Mode::Plain, workspace.path()),
            ("supervised", Mode::Supervised, workspace.path()),
            (
                "read-only",
                Mode::Sandboxed(SandboxRequest {
                    policy: &SandboxPolicy::ReadOnly,
                    sandbox_cwd: workspace.path(),
                    allow_git_writes: false,
                    read_only: &[],
                }),
                workspace.path(),
            ),
            (
                "workspace-write",
                Mode::Sandboxed(SandboxRequest {
                    policy: &ww,
                    sandbox_cwd: workspace.path(),
                    allow_git_writes: false,
                    read_only: &[],
                }),
                workspace.path(),
            ),
            (
                "workspace-write + .git",
                Mode::Sandboxed(SandboxRequest {
                    policy: &ww,
                    sandbox_cwd: repo.path(),
                    allow_git_writes: false,
                    read_only: &[],
                }),
                repo.path(),
            ),
        ];

        println!(
            "spawning `true` {N} times per case, cases interleaved (after {WARMUP} warm-up rounds)"
        );
        for _ in 0..WARMUP {
            for (_, mode, cwd) in &cases {
                spawn_true(mode, cwd).await;
            }
        }
        // Interleaved so background load on the machine hits every case alike.
        let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(N); cases.len()];
        for _ in 0..N {
            for (i, (_, mode, cwd)) in cases.iter().enumerate() {
                samples[i].push(spawn_true(mode, cwd).await);
            }
        }
        println!(
            "{:<24} {:>10} {:>10} {:>14}",
            "case", "median", "p90", "added median"
        );
        let mut base = None;
        for ((name, _, _), s) in cases.iter().zip(samples) {
            let s = stats(s);
            let base_median = *base.get_or_insert(s.median);
            println!(
                "{:<24} {:>8.3}ms {:>8.3}ms {:>12.3}ms",
                name,
                ms(s.median),
                ms(s.p90),
                ms(s.median) - ms(base_median)
            );
        }
    });
}
