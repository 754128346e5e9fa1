//! The servers never block an async worker: blocking calls inside their async bodies run in
//! `spawn_blocking` (or a thread of their own), found through the crate's own helpers.

use std::collections::BTreeSet;

use super::scan::{Source, async_bodies, awaited, calls_of, find_all, matching, sync_fns};
use super::{Failure, Workspace, report};

/// Calls that block the thread they run on. Each is a text the scan looks for.
const BLOCKING_CALLS: &[&str] = &[
    "std::fs::",
    "File::open(",
    "File::create(",
    "std::thread::sleep(",
    // Config loads read the user's and the project's files.
    "load_config(",
    "load_session_config(",
    "thread_store_settings(",
    "mcp_state_key_file(",
    // `ThreadManager::store(&home)` / `Conn::store()`: the first open checks the index or
    // connects to PostgreSQL (up to 10 s).
    ".store(&",
    ".store()",
    // `.credentials.json`
    "credentials::",
    ".blocking_lock(",
    ".blocking_recv(",
    ".blocking_send(",
];

/// Blocking calls the servers still make on an async worker, each with its reason.
const BLOCKING_EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// The spans of `code` that run off the async workers: the arguments of `spawn_blocking(`,
/// the app-server's `blocking(`, `block_in_place(` and a thread's `spawn(`.
fn off_worker_spans(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    // A closure handed to a `spawn` is a thread's (std's, or a `thread::Builder`'s): tokio's
    // `spawn` takes a future.
    [
        "spawn_blocking(",
        "blocking(",
        "block_in_place(",
        "spawn(move ||",
        "spawn(||",
    ]
    .iter()
    .flat_map(|pat| {
        let open = pat.find('(').unwrap_or(0);
        find_all(code, pat).into_iter().map(move |at| at + open)
    })
    .map(|open| (open, matching(b, open)))
    .collect()
}

/// **No blocking calls inside `async fn` bodies of the servers** (`oi-mcp-server`,
/// `oi-app-server`, `oi-acp`, `oi-jsonrpc`): a call from [`BLOCKING_CALLS`] inside an `async fn` or
/// `async` block must sit in the argument of `spawn_blocking(`/`blocking(` (or a thread of
/// its own), or be awaited (an async function of the same name, like `Conn::load_config`).
/// A plain `fn` of the same crate that makes such a call outside those spans is itself a
/// blocking call, found to a fixed point, so `self.load(…)` that loads config is seen.
/// Limits: helpers are matched by name within their crate, so a helper with a common name
/// (`load`) also flags unrelated calls of that name; calls into other crates are only the
/// ones [`BLOCKING_CALLS`] names, not every blocking function there is; a closure built in
/// an async body and run elsewhere is judged as if run in place.
pub(super) fn servers_do_not_block_async_workers(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for krate in [
        "crates/host/",
        "crates/mcp-server/",
        "crates/app-server/",
        "crates/acp/",
        "crates/jsonrpc/",
    ] {
        let files: Vec<&Source> = sources
            .iter()
            .filter(|s| s.path.starts_with(krate))
            .collect();
        // Blocking calls of this crate: the listed ones, plus its plain functions that make
        // one on the calling thread (to a fixed point).
        let mut calls: Vec<String> = BLOCKING_CALLS.iter().map(|c| c.to_string()).collect();
        loop {
            let mut found: Vec<String> = Vec::new();
            for s in &files {
                let off = off_worker_spans(&s.code);
                let bodies = async_bodies(&s.code);
                for (name, open, close) in sync_fns(&s.code) {
                    let call = format!("{name}(");
                    if calls.contains(&call) || found.contains(&call) {
                        continue;
                    }
                    let blocks = calls.iter().any(|c| {
                        calls_of(&s.code, c).into_iter().any(|at| {
                            // A call in an async block the function returns is the
                            // block's, checked as such.
                            open < at
                                && at < close
                                && !off.iter().any(|(a, z)| *a < at && at < *z)
                                && !bodies.iter().any(|(a, z)| open < *a && *a < at && at < *z)
                                && !awaited(&s.code, at)
                        })
                    });
                    if blocks {
                        found.push(call);
                    }
                }
            }
            if found.is_empty() {
                break;
            }
            calls.extend(found);
        }
        problems.extend(blocking_in_async(&files, &calls, &mut used));
    }
    let unused = BLOCKING_EXCEPTIONS
        .iter()
        .filter(|(p, c, _)| !used.contains(&(p.to_string(), c.to_string())))
        .map(|(p, c, _)| format!("({p}, {c})"))
        .collect();
    report("blocking calls on async workers", problems, unused)
}

/// The calls from `calls` inside async bodies of `files` that run on the worker.
fn blocking_in_async(
    files: &[&Source],
    calls: &[String],
    used: &mut BTreeSet<(String, String)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for s in files {
        let bodies = async_bodies(&s.code);
        let off = off_worker_spans(&s.code);
        let mut seen = BTreeSet::new();
        for call in calls {
            for at in calls_of(&s.code, call) {
                let inside =
                    |spans: &[(usize, usize)]| spans.iter().any(|(a, z)| *a < at && at < *z);
                if !inside(&bodies) || inside(&off) || awaited(&s.code, at) {
                    continue;
                }
                if s.code[..at].ends_with("tokio::fs::") {
                    continue;
                }
                if BLOCKING_EXCEPTIONS
                    .iter()
                    .any(|(p, c, _)| *p == s.path && c == call)
                {
                    used.insert((s.path.clone(), call.clone()));
                    continue;
                }
                if seen.insert(at) {
                    problems.push(format!(
                        "{}:{}: `{call}` blocks an async worker: run it in \
                         tokio::task::spawn_blocking (app-server: `blocking`)",
                        s.path,
                        s.line_of(at)
                    ));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spans the check tells apart, on a small source: a scanner gone blind would pass
    /// on anything.
    #[test]
    fn async_bodies_and_the_spans_that_run_elsewhere_are_seen() {
        let code = "async fn f(x: impl Fn()) { a(); blocking(move || b()).await; }\nfn g() -> F { Box::pin(async move { c() }) }\nfn h() { d() }";
        let bodies = async_bodies(code);
        let off = off_worker_spans(code);
        let inside = |spans: &[(usize, usize)], pat: &str| {
            let at = code.find(pat).unwrap();
            spans.iter().any(|(a, z)| *a < at && at < *z)
        };
        assert!(inside(&bodies, "a()") && inside(&bodies, "c()") && !inside(&bodies, "d()"));
        assert!(inside(&off, "b()") && !inside(&off, "a()"));
        assert!(awaited(code, code.find("blocking(").unwrap()));
        let names: Vec<String> = sync_fns(code).into_iter().map(|(n, _, _)| n).collect();
        assert_eq!(names, ["g", "h"]);
    }
}
