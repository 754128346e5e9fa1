//! Opening a store whose rollouts changed behind its back: what the index picks up at open
//! (files added or removed: their directory's mtime moves) and when listing (appends: only
//! the file's mtime moves), and that a known, unchanged file is not read again.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::ThreadId;
use oi_thread_store::{
    ListQuery, RolloutItem, RolloutLine, SessionMeta, SessionSource, ThreadStore,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const DAY: i64 = 86_400;

fn spec(prompt: &str, created_secs: i64) -> Spec<'_> {
    Spec {
        prompt,
        created_secs,
        ..Spec::default()
    }
}

fn path_of(store: &ThreadStore, id: &ThreadId) -> PathBuf {
    store.get(id).unwrap().unwrap().path
}

/// Copies a rollout into `to_home`'s sessions under the same `YYYY/MM/DD/name`.
fn copy_into(from: &Path, to_home: &Path) -> PathBuf {
    let sessions = from.ancestors().nth(4).unwrap();
    let dest = to_home
        .join("sessions")
        .join(from.strip_prefix(sessions).unwrap());
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(from, &dest).unwrap();
    dest
}

fn set_mtime_to(path: &Path, t: SystemTime) {
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

fn listed(store: &ThreadStore) -> Vec<oi_thread_store::ThreadSummary> {
    store
        .list(&ListQuery {
            limit: 100,
            ..ListQuery::default()
        })
        .unwrap()
        .data
}

#[test]
fn open_indexes_a_rollout_copied_into_an_older_day_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    make_thread(&store, spec("old day", 0));
    make_thread(&store, spec("newest day", 30 * DAY));
    drop(store);

    // Created elsewhere on the old day, copied with its old mtime (`cp -p`) while a newer
    // day directory exists: only the old day's directory changed.
    let other = tempfile::tempdir().unwrap();
    let other_store = ThreadStore::open(other.path()).unwrap();
    let copied = make_thread(&other_store, spec("from the laptop", 60));
    let dest = copy_into(&path_of(&other_store, &copied), dir.path());
    set_mtime(&dest, 120);

    let store = ThreadStore::open(dir.path()).unwrap();
    let row = store.get(&copied).unwrap().expect("indexed at open");
    assert_eq!(row.preview, "from the laptop");
    assert_eq!(row.path, dest);
    assert_eq!(listed(&store).len(), 3);
}

#[test]
fn open_drops_a_rollout_removed_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    let kept = make_thread(&store, spec("kept", 0));
    let removed = make_thread(&store, spec("removed", 60));
    let emptied_day = make_thread(&store, spec("whole day removed", 5 * DAY));
    let removed_path = path_of(&store, &removed);
    let day_dir = path_of(&store, &emptied_day)
        .parent()
        .unwrap()
        .to_path_buf();
    drop(store);

    std::fs::remove_file(&removed_path).unwrap();
    std::fs::remove_dir_all(&day_dir).unwrap();

    let store = ThreadStore::open(dir.path()).unwrap();
    assert!(
        store.get(&removed).unwrap().is_none(),
        "row of a deleted file"
    );
    assert!(
        store.get(&emptied_day).unwrap().is_none(),
        "row of a deleted day"
    );
    let ids: Vec<ThreadId> = listed(&store).iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![kept]);
}

#[test]
fn a_rollout_appended_behind_its_back_is_re_read_when_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    // A thread with no user message yet (no preview), in an older day directory.
    let mut meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Exec);
    meta.timestamp = ts(0);
    meta.cli_version = "0.1.0".into();
    let quiet = meta.id;
    drop(store.create(meta).unwrap());
    let newer = make_thread(&store, spec("newer thread", 30 * DAY));
    let path = path_of(&store, &quiet);
    assert_eq!(store.get(&quiet).unwrap().unwrap().preview, "");
    drop(store);

    // Another program appends a user message: no directory changes, only the file.
    let line = RolloutLine {
        timestamp: ts(10),
        item: user_message("appended by another program"),
    };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{}", serde_json::to_string(&line).unwrap()).unwrap();
    drop(f);
    let later = SystemTime::now() + Duration::from_secs(3600);
    set_mtime_to(&path, later);

    let store = ThreadStore::open(dir.path()).unwrap();
    let page = listed(&store);
    let ids: Vec<ThreadId> = page.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![quiet, newer], "the appended thread is the newest");
    assert_eq!(page[0].preview, "appended by another program");
    let secs = later
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert_eq!(page[0].updated_at, secs);
    // The refreshed row is stored, not only shown.
    let row = store.get(&quiet).unwrap().unwrap();
    assert_eq!(row.preview, "appended by another program");
    assert!(matches!(
        store.load(&quiet).unwrap().items.last(),
        Some(RolloutItem::EventMsg(_))
    ));
}

#[test]
fn a_known_rollout_is_not_re_read_unless_its_mtime_changes() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    let id = make_thread(&store, spec("original prompt", 0));
    let path = path_of(&store, &id);
    drop(store);
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();

    // Same length, same mtime: an open that re-read the file would see the new text.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("original prompt", "ORIGINAL PROMPT")).unwrap();
    set_mtime_to(&path, mtime);
    // A new thread in the same day directory, so the directory is listed again.
    let store = ThreadStore::open(dir.path()).unwrap();
    let other = make_thread(&store, spec("second", 60));
    drop(store);

    let store = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(store.get(&id).unwrap().unwrap().preview, "original prompt");
    assert!(store.get(&other).unwrap().is_some());
    let page = listed(&store);
    assert_eq!(page.len(), 2);
    let row = page.iter().find(|s| s.id == id).unwrap();
    assert_eq!(
        row.preview, "original prompt",
        "unchanged mtime: not re-read"
    );

    // Its mtime moves: the next page re-reads it.
    set_mtime_to(&path, mtime + Duration::from_secs(90));
    let page = listed(&store);
    let row = page.iter().find(|s| s.id == id).unwrap();
    assert_eq!(row.preview, "ORIGINAL PROMPT");
}

#[test]
fn a_rebuilt_index_then_opens_with_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    for i in 0..5 {
        make_thread(&store, spec("thread", i * DAY / 2));
    }
    let before = listed(&store);
    drop(store);
    remove_index(dir.path());
    let rebuilt = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(listed(&rebuilt), before);
    drop(rebuilt);
    let reopened = ThreadStore::open(dir.path()).unwrap();
    assert_eq!(listed(&reopened), before);
}
