//! What one `@` picker keystroke costs (`cargo bench -p oi-file-search --bench picker`):
//! walking the tree per keystroke (`search`, what the picker did before) against matching a
//! session's [`FileIndex`], on generated trees of 10k and 100k files.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_file_search::{FileIndex, MATCH_LIMIT, search};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// `n` files in 100-file directories, named like a source tree.
fn tree(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join(format!("pkg{:03}/src/mod{:02}", i / 1000, (i / 100) % 10));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("file_{i:06}_handler.rs")), "").unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // Keystrokes of someone typing `@42handler`.
    let queries: Vec<String> = (1..="42handler".len())
        .map(|n| "42handler"[..n].to_string())
        .collect();
    for n in [10_000, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        tree(&root, n);
        let roots = vec![root.clone()];

        let never = AtomicBool::new(false);
        let walks: Vec<Duration> = queries
            .iter()
            .take(3)
            .map(|q| {
                let t = Instant::now();
                let _ = search(q, &roots, MATCH_LIMIT, &never);
                t.elapsed()
            })
            .collect();

        // The first `@` of a session: how long the caller is held, then how long until the
        // first matches show (among what the first walk found so far) and the whole list.
        let built = Instant::now();
        let index = FileIndex::start(roots.clone());
        let held = built.elapsed();
        let ticket = index.ticket();
        let first = loop {
            let found = index.search_as(ticket, "42handler", MATCH_LIMIT).unwrap();
            if !found.matches.is_empty() || found.complete {
                break built.elapsed();
            }
            index.wait_for_complete(Duration::from_millis(5));
        };
        index.wait_for_generation(0, Duration::from_secs(600));
        let build = built.elapsed();
        println!(
            "{n:>6} files: first `@` holds the caller {:.2} ms · first matches after {:.0} ms · whole tree indexed after {:.0} ms",
            held.as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3,
            build.as_secs_f64() * 1e3,
        );
        let mut keys = Vec::new();
        for _ in 0..5 {
            for q in &queries {
                let t = Instant::now();
                let found = index.search(q, MATCH_LIMIT).unwrap();
                keys.push(t.elapsed());
                assert!(!found.is_empty(), "{q}");
            }
        }
        println!(
            "{n:>6} files: walk per keystroke {:.1} ms (median of 3) · index built in {:.0} ms, then {:.2} ms per keystroke (median of {}, max {:.2} ms)",
            median(walks).as_secs_f64() * 1e3,
            build.as_secs_f64() * 1e3,
            median(keys.clone()).as_secs_f64() * 1e3,
            keys.len(),
            keys.iter().max().unwrap().as_secs_f64() * 1e3,
        );
    }
}
