//! A real `kill -9` of a process that is appending: every line it reported as written is
//! intact afterwards, and the thread opens (a torn last line is skipped with a warning).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::{RolloutItem, SessionMeta, SessionSource, ThreadStore};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "OI_THREAD_STORE_KILL_CHILD_HOME";
const TEST_NAME: &str = "kill_9_while_appending_keeps_every_complete_line";

/// The child: appends numbered agent messages (big ones, so a kill can land mid-write)
/// in turns of 10, reporting each line after `append` returns. Runs until killed; the cap
/// only matters if the parent died first.
fn child(home: &str) {
    let store = ThreadStore::open(std::path::Path::new(home)).unwrap();
    let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Exec);
    // The harness may print "test … ... " on the same line first: markers are searched for.
    println!("@@thread {}", meta.id);
    let mut w = store.create(meta).unwrap();
    w.append(&user_message("count for me")).unwrap();
    let filler = "x".repeat(200_000);
    for i in 0..200_000u64 {
        if i % 10 == 0 {
            w.append(&task_started(&format!("t{i}"))).unwrap();
        }
        w.append(&agent_message(&format!("{i} {filler}"))).unwrap();
        if i % 10 == 9 {
            w.append(&task_complete(&format!("t{}", i - 9))).unwrap();
        }
        println!("@@appended {i}");
    }
}

fn marker<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    line.find(tag).map(|i| line[i + tag.len()..].trim())
}

#[test]
fn kill_9_while_appending_keeps_every_complete_line() {
    if let Ok(home) = std::env::var(CHILD_ENV) {
        child(&home);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut proc = Command::new(exe)
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(proc.stdout.take().unwrap()).lines();
    let mut thread_id = None;
    let mut last_reported = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(id) = marker(&line, "@@thread ") {
            thread_id = Some(id.parse().unwrap());
        } else if let Some(n) = marker(&line, "@@appended ") {
            let n: u64 = n.parse().unwrap();
            last_reported = Some(n);
            if n >= 60 {
                break;
            }
        }
    }
    // Child::kill is SIGKILL on Unix: no destructors, no flushing.
    proc.kill().unwrap();
    proc.wait().unwrap();
    // Lines the child printed after we stopped reading were written too.
    for line in lines {
        if let Some(n) = line
            .ok()
            .and_then(|l| marker(&l, "@@appended ")?.parse().ok())
        {
            last_reported = Some(n);
        }
    }
    let thread_id = thread_id.expect("child announced its thread");
    let last_reported = last_reported.expect("child appended lines");

    let store = ThreadStore::open(dir.path()).unwrap();
    let loaded = store.load(&thread_id).unwrap();
    assert!(loaded.warnings.len() <= 1, "{:?}", loaded.warnings);
    if let Some(w) = loaded.warnings.first() {
        assert!(w.contains("incomplete last line"), "{w}");
    }
    let numbers: Vec<u64> = loaded
        .items
        .iter()
        .filter_map(|i| match i {
            RolloutItem::EventMsg(EventMsg::AgentMessage(m)) => {
                m.message.split(' ').next()?.parse().ok()
            }
            _ => None,
        })
        .collect();
    assert!(
        numbers.len() as u64 > last_reported,
        "every reported line survives: {} lines, last reported {last_reported}",
        numbers.len()
    );
    assert_eq!(
        numbers,
        (0..numbers.len() as u64).collect::<Vec<_>>(),
        "in order, no gaps"
    );
    assert_eq!(loaded.summary.preview, "count for me");

    // The killed thread resumes: its dead turn is closed and appending continues cleanly.
    let (mut w, resumed) = store.resume(&thread_id).unwrap();
    w.append(&agent_message("after the crash")).unwrap();
    drop(w);
    let again = store.load(&thread_id).unwrap();
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(again.items.len(), resumed.items.len() + 1);
}
