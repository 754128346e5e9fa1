//! The store's behaviour, run against every backend: local files and PostgreSQL (a private
//! test server, see `scripts/test-postgres.sh`). Whatever a front end can observe through
//! `ThreadStore` must be the same whichever backend holds the threads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::{
    ListQuery, ParkedCall, RolloutItem, SessionMeta, SessionSource, SortKey, StoreError,
    StoreLocation, ThreadStore, ThreadSummary, TurnParkedItem, TurnStatus, TurnUnparkedItem,
    Unparked,
};

/// A store per backend; `_home` keeps the temporary home alive.
struct Backend {
    name: &'static str,
    _home: tempfile::TempDir,
    location: StoreLocation,
    store: ThreadStore,
}

impl Backend {
    /// Another handle on the same threads, as a second process would open it.
    fn second_process(&self) -> ThreadStore {
        ThreadStore::open_at(self._home.path(), &self.location).unwrap()
    }
}

fn backends(test: &str) -> Vec<Backend> {
    let mut out = Vec::new();
    let home = tempfile::tempdir().unwrap();
    out.push(Backend {
        name: "local",
        store: ThreadStore::open(home.path()).unwrap(),
        _home: home,
        location: StoreLocation::Local,
    });
    if let Some(url) = oi_thread_store::test_db::fresh_database(test) {
        let home = tempfile::tempdir().unwrap();
        let location = StoreLocation::Postgres(url);
        out.push(Backend {
            name: "postgres",
            store: ThreadStore::open_at(home.path(), &location).unwrap(),
            _home: home,
            location,
        });
    }
    out
}

fn all(store: &ThreadStore, q: &ListQuery) -> Vec<ThreadSummary> {
    let mut q = q.clone();
    let mut out = Vec::new();
    loop {
        let page = store.list(&q).unwrap();
        out.extend(page.data);
        match page.next_cursor {
            Some(c) => q.cursor = Some(c),
            None => return out,
        }
    }
}

fn ids(v: &[ThreadSummary]) -> Vec<ThreadId> {
    v.iter().map(|s| s.id).collect()
}

#[test]
fn records_round_trip_and_resume_continues_the_thread() {
    for b in backends("records_round_trip_and_resume_continues_the_thread") {
        let id = make_thread(
            &b.store,
            Spec {
                prompt: "Fix the build",
                ..Spec::default()
            },
        );
        let loaded = b.store.load(&id).unwrap();
        assert_eq!(loaded.meta.id, id, "{}", b.name);
        assert_eq!(loaded.items.len(), 6, "{}", b.name);
        assert_eq!(loaded.timestamps.len(), 6, "{}", b.name);
        assert_eq!(loaded.summary.preview, "Fix the build", "{}", b.name);
        assert_eq!(loaded.history().len(), 2, "{}", b.name);
        let turns = loaded.turns();
        assert_eq!(turns.len(), 1, "{}", b.name);
        assert_eq!(turns[0].status, TurnStatus::Completed, "{}", b.name);

        let (mut w, resumed) = b.store.resume(&id).unwrap();
        assert_eq!(
            resumed.items.len(),
            6,
            "{}: nothing added on resume",
            b.name
        );
        w.append_all(&[task_started("t2"), user_message("and the tests")])
            .unwrap();
        w.append(&task_complete("t2")).unwrap();
        w.flush_index().unwrap();
        drop(w);
        let again = b.second_process().load(&id).unwrap();
        assert_eq!(again.items.len(), 9, "{}", b.name);
        assert_eq!(again.turns().len(), 2, "{}", b.name);
        assert_eq!(
            again.summary.preview, "Fix the build",
            "{}: the first prompt stays the preview",
            b.name
        );
        assert!(
            again.warnings.is_empty(),
            "{}: {:?}",
            b.name,
            again.warnings
        );
    }
}

#[test]
fn resume_closes_a_turn_left_open_as_interrupted() {
    for b in backends("resume_closes_a_turn_left_open_as_interrupted") {
        let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Exec);
        let id = meta.id;
        let mut w = b.store.create(meta).unwrap();
        w.append_all(&[task_started("t1"), user_message("run it"), call("c1")])
            .unwrap();
        drop(w);
        let (_w, loaded) = b.store.resume(&id).unwrap();
        let last = loaded.items.last().unwrap();
        assert!(
            matches!(last, RolloutItem::EventMsg(EventMsg::TurnAborted(e)) if e.turn_id.as_deref() == Some("t1")),
            "{}: {last:?}",
            b.name
        );
        assert_eq!(
            loaded.turns()[0].status,
            TurnStatus::Interrupted,
            "{}",
            b.name
        );
        // The dangling call gets a synthetic output, so the history is valid for a model.
        assert_eq!(loaded.history().len(), 2, "{}", b.name);
    }
}

/// A `turn_parked` record of turn `turn` waiting on call `call_id`.
fn parked(turn: &str, call_id: &str) -> RolloutItem {
    use oi_protocol::protocol::{ExecApprovalRequestEvent, ParkedRequest};
    RolloutItem::TurnParked(TurnParkedItem {
        turn_id: turn.into(),
        park_id: "park-1".into(),
        parked_at: 1_767_225_600,
        expires_at: 1_767_312_000,
        requests: vec![ParkedRequest::Exec(ExecApprovalRequestEvent {
            call_id: call_id.into(),
            approval_id: None,
            turn_id: turn.into(),
            command: vec!["ls".into()],
            cwd: "/work/a".into(),
            reason: None,
            parsed_cmd: Vec::new(),
        })],
        calls: vec![ParkedCall {
            call_id: call_id.into(),
            name: "shell".into(),
            arguments: r#"{"command":["ls"]}"#.into(),
        }],
        settings: None,
        engine: serde_json::json!({"loop": {"steps": 1}}),
    })
}

#[test]
fn a_parked_turn_stays_parked_through_resume_and_a_fork_closes_it() {
    for b in backends("a_parked_turn_stays_parked_through_resume") {
        let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Exec);
        let id = meta.id;
        let mut w = b.store.create(meta).unwrap();
        w.append_all(&[
            task_started("t1"),
            user_message("run it"),
            call("c1"),
            parked("t1", "c1"),
        ])
        .unwrap();
        drop(w);
        assert!(!b.store.is_held(&id).unwrap(), "{}", b.name);

        // Resume (another process taking the thread) leaves the park alone: no interrupted
        // marker, and the waiting call gets no repair output.
        let (w, loaded) = b.store.resume(&id).unwrap();
        assert!(b.second_process().is_held(&id).unwrap(), "{}", b.name);
        assert_eq!(loaded.items.len(), 4, "{}", b.name);
        assert_eq!(loaded.turns()[0].status, TurnStatus::Parked, "{}", b.name);
        let park = loaded.parked_turn().unwrap();
        assert_eq!(park.park_id, "park-1", "{}", b.name);
        assert_eq!(park.engine["loop"]["steps"], 1, "{}", b.name);
        let history = loaded.history();
        assert_eq!(history.len(), 1, "{}: {history:?}", b.name);
        // The outline (what state reads use) agrees, and finds the park record.
        let outline = b.store.outline(&id).unwrap();
        let span = &outline.turns()[0];
        assert_eq!(span.status, TurnStatus::Parked, "{}", b.name);
        assert_eq!(
            outline.park_record(span).map(|p| p.park_id),
            Some("park-1".into()),
            "{}",
            b.name
        );
        assert!(outline.unpark_record(span).is_none(), "{}", b.name);

        // A fork closes its copy of the park: an approved command must not run twice.
        let fork_meta = SessionMeta::new("/work/b", "ollama", "qwen3", SessionSource::Exec);
        let (_fw, forked) = b.store.fork(&id, fork_meta).unwrap();
        assert_eq!(
            forked.turns()[0].status,
            TurnStatus::Interrupted,
            "{}",
            b.name
        );
        assert!(forked.parked_turn().is_none(), "{}", b.name);
        assert_eq!(forked.history().len(), 2, "{}: repaired", b.name);

        // Answered, then ended: the turn is completed and the park is over.
        let mut w = w;
        w.append_all(&[
            RolloutItem::TurnUnparked(TurnUnparkedItem {
                turn_id: "t1".into(),
                park_id: "park-1".into(),
                outcome: Unparked::Answered { answers: vec![] },
            }),
            output("c1", "ok"),
            task_complete("t1"),
        ])
        .unwrap();
        drop(w);
        let loaded = b.store.load(&id).unwrap();
        assert_eq!(
            loaded.turns()[0].status,
            TurnStatus::Completed,
            "{}",
            b.name
        );
        assert!(loaded.parked_turn().is_none(), "{}", b.name);
        let outline = b.store.outline(&id).unwrap();
        let span = &outline.turns()[0];
        assert_eq!(span.status, TurnStatus::Completed, "{}", b.name);
        assert!(
            matches!(
                outline.unpark_record(span).map(|u| u.outcome),
                Some(Unparked::Answered { .. })
            ),
            "{}",
            b.name
        );
    }
}

#[test]
fn a_second_writer_is_refused_until_the_first_is_dropped() {
    for b in backends("a_second_writer_is_refused_until_the_first_is_dropped") {
        let id = make_thread(&b.store, Spec::default());
        let (w, _) = b.store.resume(&id).unwrap();
        let other = b.second_process();
        for store in [&b.store, &other] {
            let err = store.resume(&id).unwrap_err();
            assert!(matches!(err, StoreError::Busy { .. }), "{}: {err}", b.name);
            assert!(
                err.to_string()
                    .contains("open for writing by another session"),
                "{}: {err}",
                b.name
            );
        }
        // Reading is always allowed.
        assert_eq!(other.load(&id).unwrap().items.len(), 6, "{}", b.name);
        drop(w);
        let (_w, _) = other.resume(&id).unwrap();
    }
}

#[test]
fn fork_copies_the_records_into_an_independent_thread() {
    for b in backends("fork_copies_the_records_into_an_independent_thread") {
        let src = make_thread(&b.store, Spec::default());
        let meta = SessionMeta::new("/work/b", "ollama", "qwen3", SessionSource::Exec);
        let fork_id = meta.id;
        let (mut w, loaded) = b.store.fork(&src, meta).unwrap();
        assert_eq!(loaded.meta.forked_from_id, Some(src), "{}", b.name);
        assert_eq!(loaded.items.len(), 6, "{}", b.name);
        w.append(&agent_message("only in the fork")).unwrap();
        drop(w);
        assert_eq!(b.store.load(&fork_id).unwrap().items.len(), 7, "{}", b.name);
        assert_eq!(b.store.load(&src).unwrap().items.len(), 6, "{}", b.name);
        let summary = b.store.get(&fork_id).unwrap().unwrap();
        assert_eq!(summary.forked_from_id, Some(src), "{}", b.name);
        assert_eq!(summary.preview, "hello", "{}", b.name);
        let err = b.store.fork(&src, {
            let mut m = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
            m.id = src;
            m
        });
        assert!(matches!(err, Err(StoreError::Invalid(_))), "{}", b.name);
    }
}

#[test]
fn list_sorts_pages_and_filters_alike() {
    for b in backends("list_sorts_pages_and_filters_alike") {
        let s = &b.store;
        let a1 = make_thread(
            s,
            Spec {
                created_secs: 10,
                prompt: "Refactor the Parser",
                ..Spec::default()
            },
        );
        let a2 = make_thread(
            s,
            Spec {
                created_secs: 20,
                provider: "vllm",
                source: SessionSource::Exec,
                ..Spec::default()
            },
        );
        let b1 = make_thread(
            s,
            Spec {
                created_secs: 30,
                cwd: "/work/b",
                prompt: "100% done_ok",
                ..Spec::default()
            },
        );
        let c1 = make_thread(
            s,
            Spec {
                created_secs: 40,
                ..Spec::default()
            },
        );
        let by_created = ListQuery {
            sort_key: SortKey::CreatedAt,
            limit: 1,
            ..ListQuery::default()
        };
        assert_eq!(
            ids(&all(s, &by_created)),
            vec![c1, b1, a2, a1],
            "{}",
            b.name
        );
        let asc = ListQuery {
            descending: false,
            ..by_created.clone()
        };
        assert_eq!(ids(&all(s, &asc)), vec![a1, a2, b1, c1], "{}", b.name);
        let first = s.list(&by_created).unwrap();
        assert_eq!(first.data.len(), 1, "{}", b.name);
        assert!(first.next_cursor.is_some(), "{}", b.name);

        // Updated order: each page is in non-increasing updated_at order and complete.
        let updated = all(
            s,
            &ListQuery {
                limit: 3,
                ..ListQuery::default()
            },
        );
        assert_eq!(updated.len(), 4, "{}", b.name);
        assert!(
            updated
                .windows(2)
                .all(|w| w[0].updated_at >= w[1].updated_at)
        );

        let q = |f: fn(&mut ListQuery)| {
            let mut q = ListQuery {
                sort_key: SortKey::CreatedAt,
                ..ListQuery::default()
            };
            f(&mut q);
            ids(&all(s, &q))
        };
        assert_eq!(
            q(|q| q.cwd = Some(vec!["/work/b".into()])),
            vec![b1],
            "{}",
            b.name
        );
        assert_eq!(
            q(|q| q.model_providers = Some(vec!["vllm".into()])),
            vec![a2]
        );
        assert_eq!(q(|q| q.sources = Some(vec![SessionSource::Exec])), vec![a2]);
        assert_eq!(
            q(|q| q.search = Some("parser".into())),
            vec![a1],
            "{}",
            b.name
        );
        // LIKE wildcards in the term are literal.
        assert_eq!(
            q(|q| q.search = Some("0% done_".into())),
            vec![b1],
            "{}",
            b.name
        );
        assert_eq!(q(|q| q.search = Some("_".into())), vec![b1], "{}", b.name);

        s.set_name(&c1, Some("  Release notes ".into())).unwrap();
        assert_eq!(
            q(|q| q.search = Some("release".into())),
            vec![c1],
            "{}",
            b.name
        );
        assert_eq!(
            s.get(&c1).unwrap().unwrap().name.as_deref(),
            Some("Release notes")
        );
        s.set_name(&c1, None).unwrap();
        assert_eq!(s.get(&c1).unwrap().unwrap().name, None, "{}", b.name);

        s.set_archived(&a1, true).unwrap();
        assert_eq!(q(|_| {}), vec![c1, b1, a2], "{}", b.name);
        assert_eq!(q(|q| q.archived = Some(true)), vec![a1], "{}", b.name);
        s.set_archived(&a1, false).unwrap();
        assert_eq!(q(|_| {}), vec![c1, b1, a2, a1], "{}", b.name);
        assert_eq!(
            s.latest(Some(std::path::Path::new("/work/b")))
                .unwrap()
                .unwrap()
                .id,
            b1
        );
    }
}

#[test]
fn bad_input_gets_clear_errors() {
    for b in backends("bad_input_gets_clear_errors") {
        let s = &b.store;
        make_thread(s, Spec::default());
        make_thread(s, Spec::default());
        let page = s
            .list(&ListQuery {
                limit: 1,
                ..ListQuery::default()
            })
            .unwrap();
        // A cursor only works with the sort it came from.
        let err = s
            .list(&ListQuery {
                cursor: page.next_cursor,
                sort_key: SortKey::CreatedAt,
                ..ListQuery::default()
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::BadCursor(_)), "{}: {err}", b.name);
        let unknown = ThreadId::new();
        for err in [
            s.load(&unknown).unwrap_err(),
            s.resume(&unknown).unwrap_err(),
            s.set_archived(&unknown, true).unwrap_err(),
            s.set_name(&unknown, Some("x".into())).unwrap_err(),
        ] {
            assert!(
                matches!(err, StoreError::NotFound(id) if id == unknown),
                "{}: {err}",
                b.name
            );
        }
        assert!(s.get(&unknown).unwrap().is_none());
        let existing = make_thread(s, Spec::default());
        let mut meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
        meta.id = existing;
        let err = s.create(meta).unwrap_err();
        assert!(
            err.to_string().contains("already exists"),
            "{}: {err}",
            b.name
        );
        let mut meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
        meta.timestamp = "yesterday".into();
        let err = s.create(meta).unwrap_err();
        assert!(err.to_string().contains("RFC 3339"), "{}: {err}", b.name);
    }
}

#[test]
fn store_urls_are_checked_before_use() {
    assert_eq!(StoreLocation::from_url(None).unwrap(), StoreLocation::Local);
    assert_eq!(
        StoreLocation::from_url(Some("  ")).unwrap(),
        StoreLocation::Local
    );
    let err = StoreLocation::from_url(Some("mysql://root:hunter2@db/x")).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("postgresql://"), "{msg}");
    assert!(!msg.contains("hunter2"), "a password is never shown: {msg}");
    // Nothing listens on port 1: the error names the server (without the password) and the fix.
    let home = tempfile::tempdir().unwrap();
    let err = ThreadStore::open_at(
        home.path(),
        &StoreLocation::Postgres(
            "postgresql://oi:hunter2@127.0.0.1:1/oi?sslmode=disable&connect_timeout=5".into(),
        ),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("127.0.0.1:1/oi"), "{msg}");
    assert!(msg.contains("OI_THREAD_STORE_URL"), "{msg}");
    assert!(!msg.contains("hunter2"), "{msg}");
    let err = ThreadStore::open_at(
        home.path(),
        &StoreLocation::Postgres("postgresql://oi@127.0.0.1:1/oi?sslmode=require".into()),
    )
    .unwrap_err();
    assert!(err.to_string().contains("sslmode=disable"), "{err}");
}

#[test]
fn two_stores_migrate_one_database_once() {
    let Some(url) =
        oi_thread_store::test_db::fresh_database("two_stores_migrate_one_database_once")
    else {
        return;
    };
    let location = StoreLocation::Postgres(url);
    let homes: Vec<_> = (0..4).map(|_| tempfile::tempdir().unwrap()).collect();
    // Servers starting together: the migration lock makes every open succeed.
    let stores: Vec<ThreadStore> = std::thread::scope(|s| {
        let handles: Vec<_> = homes
            .iter()
            .map(|h| {
                let location = &location;
                s.spawn(move || ThreadStore::open_at(h.path(), location).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let id = make_thread(&stores[0], Spec::default());
    for s in &stores {
        assert_eq!(s.get(&id).unwrap().unwrap().id, id);
        assert!(s.is_shared());
        assert_eq!(s.rebuild_index().unwrap(), 1);
    }
}

/// The async variants answer as the blocking calls do, on a single-threaded runtime (a
/// server's worker): nothing they wait for needs the caller's thread.
#[test]
fn async_variants_match_the_blocking_calls() {
    for b in backends("async_variants_match_the_blocking_calls") {
        let id = make_thread(
            &b.store,
            Spec {
                prompt: "async reads",
                ..Spec::default()
            },
        );
        let other = make_thread(&b.store, Spec::default());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let store = b.store.clone();
        let (name, q) = (b.name, ListQuery::default());
        rt.block_on(async move {
            let listed = store.list_async(&q).await.unwrap();
            assert_eq!(
                ids(&listed.data),
                ids(&store.list(&q).unwrap().data),
                "{name}"
            );
            assert_eq!(store.get_async(&id).await.unwrap(), store.get(&id).unwrap());
            let loaded = store.load_async(&id).await.unwrap();
            let json = |items: &[RolloutItem]| serde_json::to_string(items).unwrap();
            assert_eq!(
                json(&loaded.items),
                json(&store.load(&id).unwrap().items),
                "{name}"
            );
            assert_eq!(loaded.items.len(), 6, "{name}");
            let outline = store.outline_async(&id).await.unwrap();
            assert_eq!(outline.turns().len(), 1, "{name}");
            assert!(
                store
                    .outline_update_async(&outline)
                    .await
                    .unwrap()
                    .is_none()
            );

            store
                .set_name_async(&id, Some("  named  ".into()))
                .await
                .unwrap();
            let got = store.get_async(&id).await.unwrap().unwrap();
            assert_eq!(got.name.as_deref(), Some("named"), "{name}");
            store.set_archived_async(&id, true).await.unwrap();
            let shown = store.list_async(&q).await.unwrap();
            assert_eq!(
                ids(&shown.data),
                [other],
                "{name}: archived threads are hidden"
            );

            store.delete_async(&id).await.unwrap();
            assert_eq!(store.get_async(&id).await.unwrap(), None, "{name}");
            assert!(
                matches!(
                    store.delete_async(&id).await,
                    Err(StoreError::NotFound(gone)) if gone == id
                ),
                "{name}"
            );
            assert!(matches!(
                store.load_async(&id).await,
                Err(StoreError::NotFound(_))
            ));
        });
    }
}

/// The whole seam is async and runs on the caller's runtime: a store opened from a
/// single-threaded runtime (a `#[tokio::test]`, a server's worker) creates, appends, closes,
/// resumes and forks there, with no runtime of its own; a closed writer frees its thread at
/// once for another process, and while one writes, another process is refused.
#[tokio::test(flavor = "current_thread")]
async fn the_async_seam_runs_on_the_callers_runtime() {
    let mut locations = vec![("local", StoreLocation::Local)];
    if let Some(url) =
        oi_thread_store::test_db::fresh_database("the_async_seam_runs_on_the_callers_runtime")
    {
        locations.push(("postgres", StoreLocation::Postgres(url)));
    }
    for (name, location) in locations {
        let home = tempfile::tempdir().unwrap();
        let timeouts = oi_thread_store::StoreTimeouts::default();
        let open = || ThreadStore::open_with_async(home.path(), &location, timeouts);
        let (store, other_process) = (open().await.unwrap(), open().await.unwrap());

        let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Cli);
        let id = meta.id;
        let mut w = store.create_async(meta).await.unwrap();
        w.append_all_async(&[task_started("t1"), user_message("async hello")])
            .await
            .unwrap();
        // A turn left open: resume closes it as interrupted.
        w.flush_index_async().await.unwrap();
        assert!(
            matches!(
                other_process.resume_async(&id).await,
                Err(StoreError::Busy { id: busy, .. }) if busy == id
            ),
            "{name}: a thread being written is refused to another process"
        );
        w.close_async().await.unwrap();

        let (mut again, loaded) = other_process.resume_async(&id).await.unwrap();
        assert_eq!(loaded.summary.preview, "async hello", "{name}");
        assert_eq!(
            loaded.turns().last().map(|t| t.status),
            Some(TurnStatus::Interrupted),
            "{name}: the open turn is closed on resume"
        );
        again
            .append_all_async(&[
                task_started("t2"),
                agent_message("more"),
                task_complete("t2"),
            ])
            .await
            .unwrap();
        again.close_async().await.unwrap();

        let stored = store.load_async(&id).await.unwrap();
        let kinds: Vec<String> = stored
            .items
            .iter()
            .map(|i| serde_json::to_value(i).unwrap()["type"].to_string())
            .collect();
        assert_eq!(stored.items.len(), 6, "{name}: {kinds:?}");

        let fork_meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Cli);
        let fork_id = fork_meta.id;
        let (fork_writer, forked) = store.fork_async(&id, fork_meta).await.unwrap();
        assert_eq!(forked.summary.forked_from_id, Some(id), "{name}");
        assert_eq!(forked.items.len(), stored.items.len(), "{name}");
        fork_writer.close_async().await.unwrap();
        let latest = store.latest_async(None).await.unwrap().unwrap();
        assert!([id, fork_id].contains(&latest.id), "{name}");
        assert_eq!(store.rebuild_index_async().await.unwrap(), 2, "{name}");
    }
}

/// The engine's writer thread uses the sync forms on a store its runtime opened: they park
/// that thread, never the runtime's, and dropping the writer there frees the thread before
/// the drop returns (a multi-thread runtime, as the CLI and the servers run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_writers_on_a_store_opened_by_async_code() {
    let mut locations = vec![("local", StoreLocation::Local)];
    if let Some(url) =
        oi_thread_store::test_db::fresh_database("sync_writers_on_a_store_opened_by_async_code")
    {
        locations.push(("postgres", StoreLocation::Postgres(url)));
    }
    for (name, location) in locations {
        let home = tempfile::tempdir().unwrap();
        let timeouts = oi_thread_store::StoreTimeouts::default();
        let store = ThreadStore::open_with_async(home.path(), &location, timeouts)
            .await
            .unwrap();
        let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Exec);
        let id = meta.id;
        let w = store.create_async(meta).await.unwrap();
        let writer_thread = std::thread::spawn(move || {
            let mut w = w;
            w.append_all(&[task_started("t1"), user_message("from a thread")])
                .unwrap();
            w.append(&task_complete("t1")).unwrap();
            w.flush_index().unwrap();
            drop(w);
        });
        tokio::task::spawn_blocking(move || writer_thread.join().unwrap())
            .await
            .unwrap();
        let (w, loaded) = store.resume_async(&id).await.unwrap();
        assert_eq!(loaded.items.len(), 3, "{name}");
        assert_eq!(loaded.summary.preview, "from a thread", "{name}");
        w.close_async().await.unwrap();
    }
}
