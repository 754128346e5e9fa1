//! The PostgreSQL store when its server misbehaves: hung (SIGSTOP), stopped, restarted, or
//! refusing a password. Each test runs a private server (`test_db::PrivateServer`), since
//! it stops or hangs it; dropping the server always resumes and removes it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use oi_thread_store::test_db::PrivateServer;
use oi_thread_store::{
    ListQuery, RolloutItem, SessionMeta, SessionSource, StoreError, StoreLocation, StoreTimeouts,
    ThreadStore,
};
use std::time::Duration;

/// Short enough for a test, long enough for a loaded CI machine to answer a live server.
fn short() -> StoreTimeouts {
    StoreTimeouts {
        connect: Duration::from_secs(3),
        statement: Duration::from_secs(3),
    }
}

fn open(home: &std::path::Path, url: &str) -> Result<ThreadStore, StoreError> {
    ThreadStore::open_with(home, &StoreLocation::Postgres(url.into()), short())
}

/// Runs `f` on its own thread and gives its result, or fails the test if it has not
/// returned after `WATCHDOG` (a hang, the bug these tests catch, must not hang the suite).
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    const WATCHDOG: Duration = Duration::from_secs(120);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(WATCHDOG)
        .unwrap_or_else(|_| panic!("{what} still hangs after {} s", WATCHDOG.as_secs()))
}

fn new_thread(store: &ThreadStore) -> (oi_thread_store::RolloutWriter, oi_protocol::ThreadId) {
    let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
    let id = meta.id;
    let mut w = store.create(meta).unwrap();
    w.append_all(&[task_started("t1"), user_message("hello")])
        .unwrap();
    (w, id)
}

#[test]
fn a_hung_server_gives_a_timeout_error_and_the_store_recovers_when_it_answers_again() {
    let Some(pg) = PrivateServer::start("a_hung_server_gives_a_timeout_error") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let store = open(home.path(), &pg.url(None)).unwrap();
    let (mut writer, id) = new_thread(&store);

    pg.pause().unwrap();
    let s = store.clone();
    let listed = within("sessions list on a hung server", move || {
        s.list(&ListQuery::default())
    });
    let err = listed.unwrap_err();
    assert!(matches!(err, StoreError::Timeout(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("did not answer within"), "{text}");
    assert!(
        text.contains("statement_timeout_sec"),
        "names the setting: {text}"
    );

    let appended = within("an append on a hung server", move || {
        let r = writer.append(&agent_message("lost?"));
        (writer, r)
    });
    let (mut writer, r) = appended;
    assert!(
        r.as_ref().is_err_and(StoreError::is_transient),
        "an append that cannot reach the server fails, retryably: {r:?}"
    );

    // A new store (a new process) cannot even connect: the handshake is bounded too, by
    // its own setting: an operation's statement clock stops while it connects, so even with
    // a statement bound shorter than the connect bound the error says what failed.
    let home2 = tempfile::tempdir().unwrap();
    let url = pg.url(None);
    let path = home2.path().to_path_buf();
    let opened = within("opening a store on a hung server", move || {
        let timeouts = StoreTimeouts {
            connect: Duration::from_secs(4),
            statement: Duration::from_secs(2),
        };
        ThreadStore::open_with(&path, &StoreLocation::Postgres(url), timeouts)
    });
    let err = opened.unwrap_err().to_string();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(
        err.contains("connect_timeout_sec"),
        "names the setting: {err}"
    );

    // Once the server answers again the same store works: the stuck connections were
    // dropped, not reused.
    pg.resume();
    // A server just woken from SIGSTOP first works through what queued up meanwhile (the
    // clients that gave up, their backends' exits), which on a loaded machine can take
    // longer than the 3 s statement bound: the first tries may fail, retryably. A store
    // that reused a stuck connection would never get through.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match writer.append(&agent_message("back")) {
            Ok(()) => break,
            Err(e) if e.is_transient() && std::time::Instant::now() < deadline => continue,
            Err(e) => panic!("the store did not recover once the server answered: {e:?}"),
        }
    }
    writer.append(&task_complete("t1")).unwrap();
    drop(writer);
    let loaded = store.load(&id).unwrap();
    let texts: Vec<String> = loaded.items.iter().map(|i| format!("{i:?}")).collect();
    assert!(texts.iter().any(|t| t.contains("back")), "{texts:?}");
    assert_eq!(store.list(&ListQuery::default()).unwrap().data.len(), 1);
}

#[test]
fn after_a_restart_a_writer_keeps_its_thread_when_nobody_took_it() {
    let Some(pg) = PrivateServer::start("after_a_restart_a_writer_keeps_its_thread") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let store = open(home.path(), &pg.url(None)).unwrap();
    let (mut writer, id) = new_thread(&store);
    pg.restart().unwrap();
    // The first try may meet the broken pooled connection; the next one reconnects.
    let first = writer.append(&agent_message("after restart"));
    if let Err(e) = &first {
        assert!(e.is_transient(), "{e:?}");
        writer.append(&agent_message("after restart")).unwrap();
    }
    writer.append(&task_complete("t1")).unwrap();

    // The lease was taken back: another process is refused.
    let other = open(tempfile::tempdir().unwrap().path(), &pg.url(None)).unwrap();
    let busy = other.resume(&id).unwrap_err();
    assert!(matches!(busy, StoreError::Busy { .. }), "{busy:?}");
    drop(writer);
    let (_w, loaded) = other.resume(&id).unwrap();
    let n = loaded
        .items
        .iter()
        .filter(|i| format!("{i:?}").contains("after restart"))
        .count();
    assert_eq!(n, 1, "the record is stored once: {:?}", loaded.items);
}

#[test]
fn a_writer_whose_lease_was_taken_over_after_a_restart_is_refused_not_interleaved() {
    let Some(pg) = PrivateServer::start("a_writer_whose_lease_was_taken_over") else {
        return;
    };
    let home_a = tempfile::tempdir().unwrap();
    let home_b = tempfile::tempdir().unwrap();
    let a = open(home_a.path(), &pg.url(None)).unwrap();
    let (mut writer_a, id) = new_thread(&a);

    pg.restart().unwrap();
    // Server B resumes the thread before A writes again: the advisory lock died with the
    // old server, so B gets it, and writes its turn.
    let b = open(home_b.path(), &pg.url(None)).unwrap();
    let (mut writer_b, _) = b.resume(&id).expect("the lease died with the old server");
    writer_b
        .append_all(&[task_started("t2"), agent_message("from B")])
        .unwrap();

    // A's next records are refused as a lost lease (never a success, never a duplicate
    // key): on every try.
    for _ in 0..3 {
        let err = writer_a.append(&agent_message("from A")).unwrap_err();
        if err.is_transient() {
            continue; // the broken pooled connection; the next try reconnects
        }
        assert!(matches!(err, StoreError::LeaseLost { .. }), "{err:?}");
        assert!(err.to_string().contains("lost its writer lease"), "{err}");
    }
    let err = writer_a.append(&task_complete("t1")).unwrap_err();
    assert!(matches!(err, StoreError::LeaseLost { .. }), "{err:?}");

    writer_b.append(&task_complete("t2")).unwrap();
    drop(writer_b);
    drop(writer_a);
    let loaded = b.load(&id).unwrap();
    let texts: Vec<String> = loaded.items.iter().map(|i| format!("{i:?}")).collect();
    assert!(texts.iter().any(|t| t.contains("from B")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("from A")), "{texts:?}");
}

#[test]
fn a_wrong_password_says_so_and_no_message_shows_the_password() {
    let Some(pg) = PrivateServer::start_with("a_wrong_password_says_so", Some("right-horse"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let err = open(home.path(), &pg.url(Some("wrong-battery")))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("password authentication failed for user \"oi\"")
            || err.contains("password authentication failed for user oi"),
        "{err}"
    );
    assert!(!err.contains("wrong-battery"), "{err}");
    assert!(!err.contains("db error"), "{err}");
    // And the right one works, with the URL shown without it.
    let store = open(home.path(), &pg.url(Some("right-horse"))).unwrap();
    assert!(!format!("{store:?}").contains("right-horse"));
    let _ = RolloutItem::EventMsg;
}
