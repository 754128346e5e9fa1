//! Streaming benchmark: the TUI's frame loop (the same pacing and `draw` as `run`) over an
//! inline live area whose bytes go nowhere, fed by a producer task the way the engine
//! feeds it.
//!
//! Reports: time from the first delta to the frame that shows it; frames per second and
//! catch-up time while a 2,000-delta answer streams (in a burst and paced at 1 ms/delta);
//! and CPU time spent while idle for 2 s. `cargo bench -p oi-tui --bench stream`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_protocol::protocol::EventMsg;
use oi_tui::app::App;
use oi_tui::composer::Composer;
use oi_tui::run::{draw, next_frame_due, sleep_until};
use oi_tui::theme::Theme;
use oi_tui::viewport::{LiveTerminal, LiveViewport};
use ratatui::layout::Size;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

const DELTAS: usize = 2000;

fn ev(v: serde_json::Value) -> EventMsg {
    serde_json::from_value(v).expect("event json")
}

/// A 100×40 terminal that counts what it is sent.
struct Sink {
    bytes: usize,
}

impl LiveTerminal for Sink {
    fn size(&self) -> std::io::Result<Size> {
        Ok(Size::new(100, 40))
    }
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.bytes += bytes.len();
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn setup() -> (App, LiveViewport<Sink>) {
    let mut app = App::new(Composer::default());
    app.on_event(&ev(json!({
        "type": "session_configured",
        "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "model": "bench", "model_provider_id": "mock", "approval_policy": "never",
        "approvals_reviewer": "user", "sandbox_policy": {"type": "read-only"},
        "cwd": "/bench", "history_log_id": 0, "history_entry_count": 0
    })));
    app.on_event(&ev(json!({"type": "task_started", "turn_id": "t", "model_context_window": null, "collaboration_mode_kind": "default"})));
    let term = LiveViewport::new(Sink { bytes: 0 }, 39);
    (app, term)
}

struct Report {
    first_frame: Duration,
    frames: usize,
    stream_time: Duration,
    catch_up: Duration,
    /// Bytes written to the terminal (every frame repaints the live area whole).
    bytes: usize,
}

/// Streams `DELTAS` deltas with `pace` between them and runs the frame loop until the
/// answer is complete and drawn.
async fn stream(pace: Option<Duration>) -> Report {
    let (mut app, mut term) = setup();
    let theme = Theme::dark();
    let (tx, mut rx) = mpsc::unbounded_channel::<EventMsg>();
    let start = Instant::now();
    let producer = tokio::spawn(async move {
        for i in 0..DELTAS {
            let delta = if i % 40 == 39 {
                "word.\n\n".to_string()
            } else {
                format!("w{i} ")
            };
            let _ = tx.send(ev(json!({"type": "agent_message_delta", "delta": delta})));
            if let Some(p) = pace {
                tokio::time::sleep(p).await;
            }
        }
        let last_sent = Instant::now();
        let _ = tx.send(ev(
            json!({"type": "task_complete", "turn_id": "t", "last_agent_message": null}),
        ));
        last_sent
    });
    let mut first_frame = None;
    let mut frames = 0usize;
    let mut dirty = false;
    let mut done = false;
    let mut last_draw = Instant::now() - oi_tui::run::FRAME_INTERVAL;
    loop {
        let due = next_frame_due(last_draw, dirty, app.is_running());
        tokio::select! {
            Some(msg) = rx.recv() => {
                app.on_event(&msg);
                while let Ok(msg) = rx.try_recv() {
                    app.on_event(&msg);
                }
                dirty = true;
                done = !app.is_running();
            }
            _ = sleep_until(due), if due.is_some() => {
                draw(&mut term, &mut app, &theme).expect("draw");
                frames += 1;
                last_draw = Instant::now();
                dirty = false;
                if first_frame.is_none() {
                    first_frame = Some(start.elapsed());
                }
                if done {
                    break;
                }
            }
        }
    }
    let end = Instant::now();
    let last_sent = producer.await.expect("producer");
    Report {
        first_frame: first_frame.unwrap_or_default(),
        frames,
        stream_time: end - start,
        catch_up: end.saturating_duration_since(last_sent),
        bytes: term.terminal().bytes,
    }
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call's duration.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The loop with nothing happening: how many frames and how much CPU in `secs`.
async fn idle(secs: u64) -> (usize, Duration) {
    let (mut app, mut term) = setup();
    app.on_event(&ev(
        json!({"type": "task_complete", "turn_id": "t", "last_agent_message": null}),
    ));
    let theme = Theme::dark();
    draw(&mut term, &mut app, &theme).expect("draw");
    let (_tx, mut rx) = mpsc::unbounded_channel::<EventMsg>();
    let before = cpu_time();
    let mut frames = 0;
    let mut last_draw = Instant::now();
    let stop = tokio::time::sleep(Duration::from_secs(secs));
    tokio::pin!(stop);
    loop {
        let due = next_frame_due(last_draw, false, app.is_running());
        tokio::select! {
            _ = &mut stop => break,
            Some(_) = rx.recv() => {}
            _ = sleep_until(due), if due.is_some() => {
                draw(&mut term, &mut app, &theme).expect("draw");
                frames += 1;
                last_draw = Instant::now();
            }
        }
    }
    (frames, cpu_time() - before)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (name, pace) in [
        ("burst", None),
        ("paced 1ms/delta", Some(Duration::from_millis(1))),
    ] {
        let r = rt.block_on(stream(pace));
        let fps = r.frames as f64 / r.stream_time.as_secs_f64();
        println!(
            "{name:>16}: {DELTAS} deltas, first delta -> frame {:.1} ms, {} frames in {:.0} ms ({fps:.0} fps), last delta -> final frame {:.1} ms, {} bytes a frame",
            r.first_frame.as_secs_f64() * 1000.0,
            r.frames,
            r.stream_time.as_secs_f64() * 1000.0,
            r.catch_up.as_secs_f64() * 1000.0,
            r.bytes / r.frames.max(1),
        );
    }
    let (frames, cpu) = rt.block_on(idle(2));
    println!(
        "{:>16}: {frames} frames and {:.1} ms CPU in 2 s",
        "idle",
        cpu.as_secs_f64() * 1000.0
    );
}
