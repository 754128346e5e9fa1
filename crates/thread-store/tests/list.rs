//! The index: listing, filters, pagination, archive/name, and rebuilding.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::ThreadId;
use oi_thread_store::{
    ListQuery, SessionMeta, SessionSource, SortKey, StoreError, ThreadStore, ThreadSummary,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A home with 12 threads: distinct created times (i * 100 s) and updated times
/// (mtime = 10_000 - i * 37 s, so the two orders differ), three cwds, two providers,
/// two sources, names/archive on some.
fn fixture() -> (tempfile::TempDir, ThreadStore, Vec<ThreadId>) {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    let prompts = [
        "Fix the flaky test",
        "refactor the parser",
        "Write docs for sessions",
        "add a CLI flag",
        "Explain 100% CPU usage",
        "rename module_a",
        "fix typo in README",
        "Port to Windows",
        "profile the build",
        "FIX memory leak",
        "bump the example deps",
        "plan the release",
    ];
    let mut ids = Vec::new();
    for (i, prompt) in prompts.iter().enumerate() {
        let id = make_thread(
            &store,
            Spec {
                cwd: ["/work/a", "/work/b", "/work/c"][i % 3],
                provider: ["ollama", "openrouter"][i % 2],
                source: [SessionSource::Cli, SessionSource::Exec, SessionSource::Mcp][i % 3],
                prompt,
                created_secs: i as i64 * 100,
            },
        );
        let path = store.get(&id).unwrap().unwrap().path;
        set_mtime(
            &path,
            10_000 - i as i64 * 37 + if i == 5 { 5_000 } else { 0 },
        );
        ids.push(id);
    }
    store.rebuild_index().unwrap();
    store.set_name(&ids[3], Some("Flag work".into())).unwrap();
    store.set_archived(&ids[7], true).unwrap();
    store.set_archived(&ids[8], true).unwrap();
    store.set_archived(&ids[8], false).unwrap();
    (dir, store, ids)
}

fn all(store: &ThreadStore, q: &ListQuery) -> Vec<ThreadSummary> {
    let mut out = Vec::new();
    let mut q = q.clone();
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
fn sorts_by_both_keys_in_both_directions() {
    let (_dir, store, ids_in_order) = fixture();
    let visible: Vec<ThreadId> = ids_in_order
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 7)
        .map(|(_, id)| *id)
        .collect();

    let q = |sort_key, descending| ListQuery {
        sort_key,
        descending,
        limit: 100,
        ..ListQuery::default()
    };
    let created_asc = store.list(&q(SortKey::CreatedAt, false)).unwrap().data;
    assert_eq!(ids(&created_asc), visible);
    assert!(
        created_asc
            .windows(2)
            .all(|w| w[0].created_at < w[1].created_at)
    );
    let created_desc = store.list(&q(SortKey::CreatedAt, true)).unwrap().data;
    let mut rev = visible.clone();
    rev.reverse();
    assert_eq!(ids(&created_desc), rev);

    let updated_desc = store.list(&q(SortKey::UpdatedAt, true)).unwrap().data;
    assert!(
        updated_desc
            .windows(2)
            .all(|w| w[0].updated_at > w[1].updated_at)
    );
    // Thread 5 was touched last, so it leads although it was created in the middle.
    assert_eq!(updated_desc[0].id, ids_in_order[5]);
    let updated_asc = store.list(&q(SortKey::UpdatedAt, false)).unwrap().data;
    let mut back = ids(&updated_asc);
    back.reverse();
    assert_eq!(back, ids(&updated_desc));
    // The default is most recently updated first, 25 per page.
    assert_eq!(
        ids(&store.list(&ListQuery::default()).unwrap().data),
        ids(&updated_desc)
    );
}

#[test]
fn filters_by_cwd_provider_source_archived_and_search() {
    let (_dir, store, t) = fixture();
    let base = ListQuery {
        sort_key: SortKey::CreatedAt,
        descending: false,
        limit: 100,
        ..ListQuery::default()
    };
    let pick = |idx: &[usize]| idx.iter().map(|i| t[*i]).collect::<Vec<_>>();

    let by_cwd = ListQuery {
        cwd: Some(vec![PathBuf::from("/work/b"), PathBuf::from("/work/c")]),
        ..base.clone()
    };
    assert_eq!(ids(&all(&store, &by_cwd)), pick(&[1, 2, 4, 5, 8, 10, 11]));

    let by_provider = ListQuery {
        model_providers: Some(vec!["openrouter".into()]),
        ..base.clone()
    };
    assert_eq!(ids(&all(&store, &by_provider)), pick(&[1, 3, 5, 9, 11]));

    let by_source = ListQuery {
        sources: Some(vec![SessionSource::Mcp]),
        ..base.clone()
    };
    let mcp = all(&store, &by_source);
    assert_eq!(ids(&mcp), pick(&[2, 5, 8, 11]));
    assert!(mcp.iter().all(|s| s.source == SessionSource::Mcp));

    let archived = ListQuery {
        archived: Some(true),
        ..base.clone()
    };
    let arch = all(&store, &archived);
    assert_eq!(ids(&arch), pick(&[7]));
    assert!(arch[0].archived);
    let not_archived = ListQuery {
        archived: Some(false),
        ..base.clone()
    };
    assert_eq!(all(&store, &not_archived).len(), 11);

    // Case-insensitive substring of preview or name; LIKE wildcards are literal.
    let search = |term: &str| {
        ids(&all(
            &store,
            &ListQuery {
                search: Some(term.into()),
                ..base.clone()
            },
        ))
    };
    assert_eq!(search("fix"), pick(&[0, 6, 9]));
    assert_eq!(search("FLAG"), pick(&[3]));
    assert_eq!(search("flag work"), pick(&[3]), "names are searched");
    assert_eq!(search("100%"), pick(&[4]));
    assert_eq!(search("e_a"), pick(&[5]));
    assert_eq!(search("%"), pick(&[4]));
    assert!(search("no such words").is_empty());
    assert_eq!(search("   ").len(), 11, "a blank term does not filter");

    // Filters combine.
    let combined = ListQuery {
        search: Some("fix".into()),
        model_providers: Some(vec!["ollama".into()]),
        cwd: Some(vec![PathBuf::from("/work/a")]),
        ..base.clone()
    };
    assert_eq!(ids(&all(&store, &combined)), pick(&[0, 6]));
}

#[test]
fn pagination_is_stable_while_threads_are_added() {
    for (sort_key, descending) in [
        (SortKey::CreatedAt, true),
        (SortKey::CreatedAt, false),
        (SortKey::UpdatedAt, true),
        (SortKey::UpdatedAt, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = ThreadStore::open(dir.path()).unwrap();
        let mut old = HashSet::new();
        for i in 0..23 {
            let id = make_thread(
                &store,
                Spec {
                    created_secs: i,
                    ..Spec::default()
                },
            );
            let path = store.get(&id).unwrap().unwrap().path;
            set_mtime(&path, 1_000 + i);
            old.insert(id);
        }
        store.rebuild_index().unwrap();

        let mut q = ListQuery {
            limit: 5,
            sort_key,
            descending,
            ..ListQuery::default()
        };
        let mut seen = Vec::new();
        let mut n = 0;
        loop {
            let page = store.list(&q).unwrap();
            assert!(page.data.len() <= 5);
            seen.extend(ids(&page.data));
            // New threads arrive between pages (newer created and updated times).
            for _ in 0..3 {
                n += 1;
                make_thread(
                    &store,
                    Spec {
                        created_secs: 10_000 + n,
                        ..Spec::default()
                    },
                );
            }
            match page.next_cursor {
                Some(c) => q.cursor = Some(c),
                None => break,
            }
        }
        let unique: HashSet<_> = seen.iter().copied().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "duplicates for {sort_key:?}/{descending}"
        );
        assert!(
            old.is_subset(&unique),
            "old threads missing for {sort_key:?}/{descending}"
        );
        if descending {
            assert_eq!(seen.len(), old.len(), "new threads never shift later pages");
        }
    }
}

#[test]
fn limit_is_clamped_and_bad_cursors_are_rejected_clearly() {
    let (_dir, store, _) = fixture();
    let one = store
        .list(&ListQuery {
            limit: 0,
            ..ListQuery::default()
        })
        .unwrap();
    assert_eq!(one.data.len(), 1);
    let many = store
        .list(&ListQuery {
            limit: 10_000,
            ..ListQuery::default()
        })
        .unwrap();
    assert_eq!(many.data.len(), 11);
    assert_eq!(many.next_cursor, None);

    for bad in [
        "garbage",
        "ud:12:not-a-uuid",
        "ud:x:0190e3f0-0000-7000-8000-000000000000",
    ] {
        let err = store
            .list(&ListQuery {
                cursor: Some(bad.into()),
                ..ListQuery::default()
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::BadCursor(_)));
        assert_eq!(
            err.to_string(),
            format!("invalid cursor `{bad}`: pass back the nextCursor from a previous page")
        );
    }
    // A cursor is only valid with the sort it was made for.
    let page = store
        .list(&ListQuery {
            limit: 2,
            ..ListQuery::default()
        })
        .unwrap();
    let err = store
        .list(&ListQuery {
            limit: 2,
            cursor: page.next_cursor,
            sort_key: SortKey::CreatedAt,
            ..ListQuery::default()
        })
        .unwrap_err();
    assert!(matches!(err, StoreError::BadCursor(_)));
}

#[test]
fn archive_and_name_show_in_list_and_search() {
    let (_dir, store, t) = fixture();
    let row = store.get(&t[3]).unwrap().unwrap();
    assert_eq!(row.name.as_deref(), Some("Flag work"));
    assert_eq!(row.title(), "Flag work");
    assert_eq!(row.preview, "add a CLI flag");

    store.set_archived(&t[0], true).unwrap();
    let visible = ids(&all(&store, &ListQuery::default()));
    assert!(!visible.contains(&t[0]) && !visible.contains(&t[7]));
    store.set_archived(&t[0], false).unwrap();
    assert!(ids(&all(&store, &ListQuery::default())).contains(&t[0]));

    store.set_name(&t[3], Some("  ".into())).unwrap();
    assert_eq!(store.get(&t[3]).unwrap().unwrap().name, None);
    store
        .set_name(&t[1], Some("Parser rewrite".into()))
        .unwrap();
    let found = all(
        &store,
        &ListQuery {
            search: Some("REWRITE".into()),
            ..ListQuery::default()
        },
    );
    assert_eq!(ids(&found), vec![t[1]]);
    assert_eq!(found[0].name.as_deref(), Some("Parser rewrite"));
}

fn snapshot(store: &ThreadStore) -> Vec<Vec<ThreadSummary>> {
    let queries = [
        ListQuery {
            limit: 4,
            ..ListQuery::default()
        },
        ListQuery {
            sort_key: SortKey::CreatedAt,
            descending: false,
            limit: 3,
            ..ListQuery::default()
        },
        ListQuery {
            archived: Some(true),
            ..ListQuery::default()
        },
        ListQuery {
            search: Some("flag".into()),
            ..ListQuery::default()
        },
        ListQuery {
            sources: Some(vec![SessionSource::Exec]),
            ..ListQuery::default()
        },
    ];
    queries.iter().map(|q| all(store, q)).collect()
}

#[test]
fn deleted_index_is_rebuilt_with_the_same_results() {
    let (dir, store, _) = fixture();
    // Plus a thread written normally (index kept current by its writer, not by rebuild).
    make_thread(
        &store,
        Spec {
            prompt: "late flag",
            created_secs: 99_999,
            ..Spec::default()
        },
    );
    let before = snapshot(&store);
    assert_eq!(before[0].len(), 12);
    drop(store);
    remove_index(dir.path());
    let store = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(snapshot(&store), before);
    assert_eq!(store.rebuild_index().unwrap(), 13);
    assert_eq!(snapshot(&store), before);
}

#[test]
fn corrupt_index_file_is_rebuilt() {
    let (dir, store, _) = fixture();
    let before = snapshot(&store);
    drop(store);
    remove_index(dir.path());
    std::fs::write(
        dir.path().join("state.sqlite"),
        b"this is not a database, just garbage bytes \x00\x01\x02".repeat(200),
    )
    .unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(snapshot(&store), before);
}

#[test]
fn index_of_another_schema_version_is_rebuilt() {
    let (dir, store, _) = fixture();
    let before = snapshot(&store);
    drop(store);
    let conn = rusqlite::Connection::open(dir.path().join("state.sqlite")).unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    conn.execute("DELETE FROM threads", []).unwrap();
    drop(conn);
    let store = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(snapshot(&store), before);
}

fn copy_thread(from: &Path, to_home: &Path) -> PathBuf {
    let sessions = from.ancestors().nth(4).unwrap();
    let rel = from.strip_prefix(sessions).unwrap();
    let dest = to_home.join("sessions").join(rel);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(from, &dest).unwrap();
    dest
}

#[test]
fn open_indexes_rollouts_that_appeared_since_the_last_run() {
    let other = tempfile::tempdir().unwrap();
    let other_store = ThreadStore::open(other.path()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    make_thread(&store, Spec::default());
    drop(store);

    // A thread written by another machine, copied in (newer than the index's mark) ...
    let mut meta = SessionMeta::new("/elsewhere", "ollama", "qwen3", SessionSource::Exec);
    meta.cli_version = "0.1.0".into();
    let new_id = meta.id;
    let mut w = other_store.create(meta).unwrap();
    w.append(&user_message("from the laptop")).unwrap();
    let src = w.path().to_path_buf();
    drop(w);
    copy_thread(&src, dir.path());
    // ... and one copied with an old mtime (`cp -p`) into today's directory.
    let old_id = make_thread(&other_store, Spec::default());
    let old_src = other_store.get(&old_id).unwrap().unwrap().path;
    let dest = copy_thread(&old_src, dir.path());
    set_mtime(&dest, -86_400 * 30);

    let store = ThreadStore::open(dir.path()).unwrap();
    let row = store.get(&new_id).unwrap().expect("indexed at open");
    assert_eq!(row.preview, "from the laptop");
    assert_eq!(row.source, SessionSource::Exec);
    assert!(store.get(&old_id).unwrap().is_some());
}

#[test]
fn load_finds_an_unindexed_rollout_by_the_time_in_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    let mut w = store
        .create(SessionMeta::new(
            "/now",
            "ollama",
            "qwen3",
            SessionSource::Cli,
        ))
        .unwrap();
    w.append(&user_message("today")).unwrap();
    drop(w);

    // A rollout from 40 days ago, dropped into its day directory with an old mtime while the
    // store is open: the index has not seen it (the next open would).
    let past_ms = chrono::Utc::now().timestamp_millis() as u64 - 40 * 86_400_000;
    let ts = uuid::Timestamp::from_unix(uuid::NoContext, past_ms / 1000, 0);
    let id = ThreadId::from(uuid::Uuid::new_v7(ts));
    let other = tempfile::tempdir().unwrap();
    let other_store = ThreadStore::open(other.path()).unwrap();
    let mut meta = SessionMeta::new("/old", "ollama", "qwen3", SessionSource::Cli);
    meta.id = id;
    meta.timestamp = chrono::DateTime::from_timestamp_millis(past_ms as i64)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let mut w = other_store.create(meta).unwrap();
    w.append(&user_message("ancient")).unwrap();
    let src = w.path().to_path_buf();
    drop(w);
    let dest = copy_thread(&src, dir.path());
    set_mtime(&dest, -86_400 * 400);

    assert!(store.get(&id).unwrap().is_none());
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.summary.preview, "ancient");
    assert_eq!(store.get(&id).unwrap().unwrap().path, dest);
}

#[test]
fn a_deleted_rollout_drops_out_of_the_index_on_load() {
    let (_dir, store, t) = fixture();
    let path = store.get(&t[2]).unwrap().unwrap().path;
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(store.load(&t[2]), Err(StoreError::NotFound(_))));
    assert!(store.get(&t[2]).unwrap().is_none());
}

#[test]
fn unusable_rollouts_are_skipped_by_rebuild() {
    let (dir, store, _) = fixture();
    let day = store
        .get(&store.list(&ListQuery::default()).unwrap().data[0].id)
        .unwrap()
        .unwrap()
        .path
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(day.join("rollout-junk.jsonl"), "not json\n").unwrap();
    std::fs::write(day.join("empty.jsonl"), "").unwrap();
    assert_eq!(store.rebuild_index().unwrap(), 12);
    drop(store);
    assert!(dir.path().join("state.sqlite").exists());
}

#[test]
fn two_stores_on_one_home_share_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let a = ThreadStore::open(dir.path()).unwrap();
    let b = ThreadStore::open(dir.path()).unwrap();
    let id = make_thread(&a, Spec::default());
    assert_eq!(b.get(&id).unwrap().unwrap().preview, "hello");
    b.set_name(&id, Some("shared".into())).unwrap();
    assert_eq!(a.get(&id).unwrap().unwrap().name.as_deref(), Some("shared"));
    let latest = a.latest(Some(Path::new("/work/a"))).unwrap().unwrap();
    assert_eq!(latest.id, id);
    assert!(a.latest(Some(Path::new("/nowhere"))).unwrap().is_none());
}

#[test]
fn listing_drops_threads_whose_rollout_was_deleted() {
    let (_dir, store, ids) = fixture();
    let newest_first = |store: &ThreadStore| {
        store
            .list(&ListQuery {
                limit: 3,
                ..ListQuery::default()
            })
            .unwrap()
            .data
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>()
    };
    let before = newest_first(&store);
    assert_eq!(before.len(), 3);
    // Delete the first two rollouts of the first page: the page is refilled from the next rows.
    for id in &before[..2] {
        std::fs::remove_file(store.get(id).unwrap().unwrap().path).unwrap();
    }
    let after = newest_first(&store);
    assert_eq!(after.len(), 3, "the page is refilled: {after:?}");
    assert_eq!(after[0], before[2]);
    assert!(!after.contains(&before[0]) && !after.contains(&before[1]));
    // The rows are gone from the index, not just hidden from one page.
    assert!(store.get(&before[0]).unwrap().is_none());
    assert!(ids.contains(&after[1]));
}
