//! The writer's rules, against real stores: order, durability, a store that goes away or
//! freezes, and the cost of a loaded thread (no OS thread).

use super::*;
use crate::recorder::{FlushWait, RecordError};
use oi_protocol::protocol::{AgentMessageEvent, TaskCompleteEvent};
use oi_thread_store::test_db::PrivateServer;
use oi_thread_store::{SessionMeta, SessionSource, StoreLocation, StoreTimeouts, ThreadStore};

fn agent(text: &str) -> EventMsg {
    EventMsg::AgentMessage(AgentMessageEvent {
        message: text.into(),
        phase: None,
        memory_citation: None,
    })
}

#[test]
fn a_turn_end_is_on_disk_when_record_event_returns_and_order_is_kept() {
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
    let id = meta.id;
    let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
    let path = rec.path().unwrap();
    for i in 0..200 {
        rec.record_event(&agent(&format!("line {i}"))).unwrap();
    }
    rec.record_event(&EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: "t1".into(),
        last_agent_message: None,
        completed_at: None,
        duration_ms: None,
    }))
    .unwrap();
    // No flush, no drop: the turn's end (and all before it) is already in the file.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        202,
        "session_meta + 200 messages + task_complete"
    );
    assert!(lines[201].contains("\"task_complete\""), "{}", lines[201]);
    for (i, line) in lines[1..201].iter().enumerate() {
        assert!(line.contains(&format!("\"line {i}\"")), "{line}");
    }
    // While the recorder lives, the thread is busy for everyone else.
    assert!(store.resume(&id).is_err());
    drop(rec);
    // Dropping it wrote everything and released the thread.
    let (_w, loaded) = store.resume(&id).unwrap();
    assert_eq!(loaded.items.len(), 201);
}

#[test]
fn records_the_database_missed_are_kept_and_written_when_it_is_back() {
    use std::time::Instant;
    let Some(pg) = PrivateServer::start("records_the_database_missed_are_kept") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let timeouts = StoreTimeouts {
        connect: Duration::from_secs(3),
        statement: Duration::from_secs(3),
    };
    let location = StoreLocation::Postgres(pg.url(None));
    let store = ThreadStore::open_with(home.path(), &location, timeouts).unwrap();
    let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
    let id = meta.id;
    let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
    let state = rec.save_state();
    rec.record_event(&agent("before")).unwrap();
    rec.flush().unwrap();

    // The database goes away mid-turn: the answer and the turn's end are not saved, and
    // the turn's end says so.
    pg.stop().unwrap();
    let _ = rec.record_event(&agent("the answer"));
    let end = rec.record_event(&EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: "t1".into(),
        last_agent_message: None,
        completed_at: None,
        duration_ms: None,
    }));
    let err = end.unwrap_err();
    assert!(
        matches!(&err, RecordError::Unsaved(text) if text.contains("not saved yet")),
        "{err}"
    );
    let unsaved = state.unsaved().unwrap();
    assert_eq!((unsaved.pending, unsaved.lost), (2, 0), "{unsaved:?}");

    // Back: the writer retries on its own, nothing newer needed.
    pg.start_again().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while state.unsaved().is_some() {
        assert!(
            Instant::now() < deadline,
            "never retried: {:?}",
            state.unsaved()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    rec.flush().unwrap();
    drop(rec);
    let loaded = store.load(&id).unwrap();
    let texts: Vec<String> = loaded.items.iter().map(|i| format!("{i:?}")).collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(texts[0].contains("before"), "{texts:?}");
    assert!(texts[1].contains("the answer"), "{texts:?}");
    assert!(texts[2].contains("TaskComplete"), "{texts:?}");
}

/// A frozen database (SIGSTOP): the first wait ends after one bound with the store
/// marked as not answering; from then on nothing waits for it, and once it answers the
/// records kept meanwhile are written and the mark is gone.
#[test]
fn waits_do_not_stack_on_a_frozen_database() {
    let Some(pg) = PrivateServer::start("waits_do_not_stack_on_a_frozen_database") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let timeouts = StoreTimeouts {
        connect: Duration::from_secs(2),
        statement: Duration::from_secs(2),
    };
    let location = StoreLocation::Postgres(pg.url(None));
    let store = ThreadStore::open_with(home.path(), &location, timeouts).unwrap();
    let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
    let id = meta.id;
    let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
    let state = rec.save_state();
    rec.record_event(&agent("before")).unwrap();
    rec.flush().unwrap();

    pg.pause().unwrap();
    rec.record_event_unflushed(&agent("during")).unwrap();
    let first = rt.block_on(rec.start_flush().wait());
    assert!(first.is_err(), "{first:?}");
    let why = state.stalled().expect("marked as not answering");
    assert!(why.contains("did not answer within"), "{why}");
    // Nothing waits any more: the waits answer at once. (Queuing reports the failure
    // not reported yet, once.)
    let _ = rec.record_event_unflushed(&agent("after"));
    assert!(matches!(
        rec.start_written(),
        FlushWait::Done(Err(RecordError::NotAnswering(_)))
    ));
    assert!(matches!(rec.flush(), Err(RecordError::Unsaved(_))));
    // Both records are kept, counted as the writer takes them off the queue.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while state.unsaved().map(|u| u.pending) != Some(2) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            state.unsaved()
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    pg.resume();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while state.unsaved().is_some() || state.stalled().is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "never written: {:?}",
            state.unsaved()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    rec.flush().unwrap();
    drop(rec);
    let texts: Vec<String> = store
        .load(&id)
        .unwrap()
        .items
        .iter()
        .map(|i| format!("{i:?}"))
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert!(
        texts[1].contains("during") && texts[2].contains("after"),
        "{texts:?}"
    );
}

/// The records of a rollout after its `session_meta`, as written.
fn records(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().skip(1).map(str::to_string).collect()
}

/// `lines` are exactly the first `n` records of thread `t`, in order.
fn assert_prefix(lines: &[String], t: usize, n: usize) {
    assert_eq!(
        lines.len(),
        n,
        "thread {t}: {} records on disk, {n} expected",
        lines.len()
    );
    for (k, line) in lines.iter().enumerate() {
        assert!(
            line.contains(&format!("\"thread {t} record {k}\"")),
            "thread {t}: record {k} is out of place: {line}"
        );
    }
}

/// Forty threads write at once, each mixing queued events, history items awaited as
/// written and awaited flushes: after every wait the thread's rollout holds exactly what
/// was recorded so far, in order, and after close the whole thread is there and free.
/// Fails if the writer loses, duplicates or reorders a record, or answers a wait early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_writers_lose_nothing_and_keep_order() {
    const THREADS: usize = 40;
    const RECORDS: usize = 250;
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..THREADS {
        let store = store.clone();
        tasks.spawn(async move {
            let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
            let id = meta.id;
            let mut rec = StoreRecorder::new(store.create_async(meta).await.unwrap()).unwrap();
            let path = rec.path().unwrap();
            for k in 0..RECORDS {
                let text = format!("thread {t} record {k}");
                match (k + t) % 7 {
                    0 => {
                        rec.record_item_unwaited(&ResponseItem::user_text(text))
                            .unwrap();
                        rec.start_written().wait().await.unwrap();
                        assert_prefix(&records(&path), t, k + 1);
                    }
                    3 => {
                        rec.record_event_unflushed(&agent(&text)).unwrap();
                        rec.start_flush().wait().await.unwrap();
                        assert_prefix(&records(&path), t, k + 1);
                    }
                    _ => rec.record_event_unflushed(&agent(&text)).unwrap(),
                }
                if k % 5 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            rec.close().wait().await;
            assert!(rec.save_state().unsaved().is_none());
            drop(rec);
            (t, id, path)
        });
    }
    while let Some(done) = tasks.join_next().await {
        let (t, id, path) = done.unwrap();
        assert_prefix(&records(&path), t, RECORDS);
        // Closed: the thread's lock is free.
        let (_w, loaded) = store.resume_async(&id).await.unwrap();
        assert_eq!(loaded.items.len(), RECORDS);
    }
}

/// A flush that returned is on disk even if the process dies right after (no destructor
/// runs): a child process records, flushes and aborts; every record it flushed is in its
/// rollout, in order.
#[test]
fn what_a_flush_answered_survives_an_abort() {
    const CHILD: &str = "OI_TEST_WRITER_ABORT_HOME";
    const NAME: &str = "store_writer::tests::what_a_flush_answered_survives_an_abort";
    if let Some(home) = std::env::var_os(CHILD) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let store = ThreadStore::open(Path::new(&home)).unwrap();
            let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
            let mut rec = StoreRecorder::new(store.create_async(meta).await.unwrap()).unwrap();
            std::fs::write(
                Path::new(&home).join("path"),
                rec.path().unwrap().to_str().unwrap(),
            )
            .unwrap();
            for k in 0..500 {
                rec.record_event_unflushed(&agent(&format!("thread 0 record {k}")))
                    .unwrap();
                if k % 50 == 49 {
                    rec.start_flush().wait().await.unwrap();
                }
            }
            // 500 records flushed; one more only queued, then the process dies.
            rec.record_event_unflushed(&agent("queued, never waited for"))
                .unwrap();
            std::process::abort();
        });
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
        .env(CHILD, home.path())
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the child was meant to abort: {out:?}"
    );
    let path = std::fs::read_to_string(home.path().join("path")).unwrap();
    let lines = records(Path::new(&path));
    // The unwaited last record may or may not have made it; everything flushed did.
    let flushed = lines.len().min(500);
    assert_prefix(&lines[..flushed], 0, 500);
    assert!(lines.len() <= 501, "{} records", lines.len());
}

/// Loaded threads cost no OS thread each: two hundred recorders add no thread to the
/// process, and writing to all of them at once adds at most the writers' bounded pool.
/// Counted in a child process running only this test, so no other test's threads come and
/// go meanwhile.
#[test]
fn writers_are_tasks_not_threads() {
    const CHILD: &str = "OI_TEST_WRITER_THREADS_CHILD";
    const NAME: &str = "store_writer::tests::writers_are_tasks_not_threads";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "the child ran no test: {text}");
        return;
    }
    let os_threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let home = tempfile::tempdir().unwrap();
        let store = ThreadStore::open(home.path()).unwrap();
        let mut writers = Vec::new();
        for _ in 0..201 {
            let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
            writers.push(store.create(meta).unwrap());
        }
        // The first recorder starts the writers' runtime.
        let mut recorders = vec![StoreRecorder::new(writers.pop().unwrap()).unwrap()];
        let before = os_threads();
        recorders.extend(writers.into_iter().map(|w| StoreRecorder::new(w).unwrap()));
        tokio::task::yield_now().await;
        assert_eq!(os_threads(), before, "200 idle writers started OS threads");
        for rec in &mut recorders {
            rec.record_event_unflushed(&agent("hello")).unwrap();
        }
        let waits: Vec<_> = recorders.iter_mut().map(|r| r.start_flush()).collect();
        for w in waits {
            w.wait().await.unwrap();
        }
        let busy = os_threads();
        assert!(
            busy <= before + MAX_WRITING_THREADS,
            "{busy} OS threads while 201 writers flushed, {before} before"
        );
        for rec in &mut recorders {
            rec.close().wait().await;
        }
        println!("OS threads: {before} with 1 writer, {busy} while 201 flushed");
    });
}
