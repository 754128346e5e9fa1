//! Errors do not flatten to strings at the seams: each crate's count of `Result<_, String>`
//! stays at or below its ceiling.

use std::collections::BTreeMap;

use super::scan::find_all;
use super::{Failure, Workspace, report};

/// The most `Result<_, String>` each crate's product code may write (see
/// [`errors_do_not_flatten_to_strings`]). Lower an entry when a seam gets a typed error;
/// never raise one: give the new seam an error type instead.
const STRING_ERROR_CEILING: &[(&str, usize)] = &[
    ("cli", 5),
    ("core", 4),
    ("protocol", 1),
    // The test-database helper's thread (`test_db.rs`).
    ("thread-store", 1),
    ("tui", 7),
];

/// The `Result<…, String>` types written in `code`: each `Result<` whose last generic
/// argument, at its own nesting level, is `String`.
fn string_results(code: &str) -> Vec<usize> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for at in find_all(code, "Result<") {
        let open = at + "Result".len();
        // `io::Result<String>` has one argument: no error type written.
        let (mut depth, mut i, mut last_arg) = (0usize, open, None);
        while i < b.len() {
            match b[i] {
                b'<' | b'(' | b'[' => depth += 1,
                // `->` inside `Fn(…) -> T` is not a closing bracket.
                b'>' if i > 0 && b[i - 1] == b'-' => {}
                b'>' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => last_arg = Some(i + 1),
                b';' | b'{' => break,
                _ => {}
            }
            i += 1;
        }
        if i < b.len() && b[i] == b'>' && last_arg.is_some_and(|a| code[a..i].trim() == "String") {
            out.push(at);
        }
    }
    out
}

/// **Errors do not flatten to strings at the seams** (`errors_do_not_flatten_to_strings`):
/// the number of `Result<…, String>` types in each crate's product code stays at or below
/// its entry in [`STRING_ERROR_CEILING`]. A seam that can fail
/// in ways its callers tell apart gets a `thiserror` enum (`StoreError`, `RecordError`,
/// `CoreError`, `OAuthError`, `McpRequestError`). Limits: a textual count per crate, not per seam; an alias of
/// `Result<T, String>` counts once where it is written; `Box<dyn Error>` is not counted.
pub(super) fn errors_do_not_flatten_to_strings(ws: &Workspace) -> Result<(), Failure> {
    let mut counts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for src in &ws.sources {
        let krate = src
            .path
            .trim_start_matches("crates/")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        for at in string_results(&src.code) {
            let line = src.line_of(at);
            counts
                .entry(krate.clone())
                .or_default()
                .push(format!("{}:{line}", src.path));
        }
    }
    let mut problems = Vec::new();
    for (krate, sites) in &counts {
        let ceiling = STRING_ERROR_CEILING
            .iter()
            .find(|(k, _)| k == krate)
            .map_or(0, |(_, n)| *n);
        if sites.len() > ceiling {
            problems.push(format!(
                "{krate} has {} `Result<_, String>` (at most {ceiling}): give the new seam a \
                 typed error (thiserror) instead; they are at {}",
                sites.len(),
                sites.join(", ")
            ));
        }
    }
    for (krate, ceiling) in STRING_ERROR_CEILING {
        let n = counts.get(*krate).map_or(0, Vec::len);
        if n < *ceiling {
            problems.push(format!(
                "{krate} has {n} `Result<_, String>`, below its ceiling {ceiling}: lower \
                 STRING_ERROR_CEILING to {n} so it cannot grow back"
            ));
        }
    }
    report("errors flattened to strings", problems, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Result<…, String>` at any nesting, not `Result<String, E>` nor a closure's arrow.
    #[test]
    fn string_results_are_seen_at_any_nesting() {
        let code = "fn a() -> Result<(), String> {}\nfn b() -> Result<String, E> {}\nfn c() -> Result<Box<dyn Fn(u8) -> u8>, String>;\nfn d() -> Option<Result<Vec<Action>, String>> {}";
        let found: Vec<&str> = string_results(code)
            .into_iter()
            .map(|at| &code[at..at + 9])
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(string_results("fn b() -> io::Result<String> {}").is_empty());
    }
}
