//! Sizes a reader can hold: no product file over [`MAX_FILE_LINES`] lines and no product
//! function over [`MAX_FUNCTION_LINES`]. Past those, a file wants to split into modules by
//! what each part does, and a function into named helpers that read top to bottom. Unlike
//! the other rules, these also read `oi-test-support`'s library (the mock model server):
//! every test leans on it, so it is held to the product's sizes.

use super::scan::{Source, functions};
use super::{Failure, Workspace, report};

/// The most lines a product file may have, counted to its last line of product code.
pub(super) const MAX_FILE_LINES: usize = 800;

/// The most lines a product function may have, from its `fn` to its closing brace.
pub(super) const MAX_FUNCTION_LINES: usize = 120;

/// **No product file over 800 lines** (`product_files_stay_under_800_lines`; the mock model
/// server's library too). A file's
/// length is the line of its last product code: comments after it and test code (a
/// `#[cfg(test)]` module at the end, `tests.rs`, `tests/`) are not counted. Limits: a test
/// module in the middle of a file counts toward it; a file is not judged by what it holds,
/// only by its length.
pub(super) fn product_files_stay_under_800_lines(ws: &Workspace) -> Result<(), Failure> {
    report(
        "product files over 800 lines",
        long_files(ws.sources.iter().chain(&ws.test_support)),
        Vec::new(),
    )
}

/// **No product function over 120 lines** (`product_functions_stay_under_120_lines`; the
/// mock model server's library too): every `fn` with a body (free, method or nested, `async` or not), from the line of its
/// `fn` to the line of its closing brace, blank and comment lines included (they are what
/// a reader scrolls through). Limits: a closure is measured as part of its function, not on
/// its own; a function in test code is not measured.
pub(super) fn product_functions_stay_under_120_lines(ws: &Workspace) -> Result<(), Failure> {
    report(
        "product functions over 120 lines",
        long_functions(ws.sources.iter().chain(&ws.test_support)),
        Vec::new(),
    )
}

fn long_files<'a>(sources: impl IntoIterator<Item = &'a Source>) -> Vec<String> {
    sources
        .into_iter()
        .filter_map(|s| {
            let end = s.code.trim_end().len();
            let lines = if end == 0 { 0 } else { s.line_of(end - 1) };
            (lines > MAX_FILE_LINES).then(|| {
                format!(
                    "{}:{}: {lines} lines of product code (at most {MAX_FILE_LINES}): split it \
                     into modules by what each part does",
                    s.path,
                    MAX_FILE_LINES + 1
                )
            })
        })
        .collect()
}

fn long_functions<'a>(sources: impl IntoIterator<Item = &'a Source>) -> Vec<String> {
    let mut problems = Vec::new();
    for s in sources {
        for (name, at, _, close) in functions(&s.code) {
            let first = s.line_of(at);
            let lines = s.line_of(close - 1) - first + 1;
            if lines > MAX_FUNCTION_LINES {
                problems.push(format!(
                    "{}:{first}: `fn {name}` is {lines} lines (at most {MAX_FUNCTION_LINES}): \
                     split it into named helpers that read top to bottom",
                    s.path
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::super::scan::source;
    use super::*;

    /// A file `n` lines long: one `fn` per line, so no function is long.
    fn file_of(n: usize) -> String {
        (0..n).map(|i| format!("fn f{i}() {{}}\n")).collect()
    }

    /// A function whose `fn` and closing brace are `n` lines apart (inclusive).
    fn function_of(name: &str, n: usize) -> String {
        let body: String = (0..n - 2)
            .map(|i| format!("    let x{i} = {i};\n"))
            .collect();
        format!("fn {name}() {{\n{body}}}\n")
    }

    #[test]
    fn a_file_over_the_limit_fails_with_its_path_and_what_to_do() {
        let at_limit = source("crates/x/src/ok.rs", &file_of(MAX_FILE_LINES));
        let over = source("crates/x/src/long.rs", &file_of(MAX_FILE_LINES + 1));
        let problems = long_files(&[at_limit, over]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("crates/x/src/long.rs:801: 801 lines")
                && problems[0].contains("split it into modules"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn test_code_and_trailing_comments_do_not_count_toward_a_file() {
        let tests: String = (0..MAX_FILE_LINES).map(|_| "    // a test\n").collect();
        let src = format!(
            "{}#[cfg(test)]\nmod tests {{\n{tests}}}\n// trailing words\n",
            file_of(10)
        );
        assert!(long_files(&[source("crates/x/src/a.rs", &src)]).is_empty());
    }

    #[test]
    fn a_function_over_the_limit_fails_with_its_line_and_what_to_do() {
        let src = format!(
            "// header\n{}impl A {{\n    {}}}\n{}",
            function_of("short", MAX_FUNCTION_LINES),
            function_of("method", MAX_FUNCTION_LINES + 1).replace('\n', "\n    "),
            function_of("long", MAX_FUNCTION_LINES + 5).replace("fn ", "pub async fn "),
        );
        let problems = long_functions(&[source("crates/x/src/a.rs", &src)]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("crates/x/src/a.rs:123: `fn method` is 121 lines")
                && problems[0].contains("split it into named helpers"),
            "{}",
            problems[0]
        );
        assert!(
            problems[1].contains("`fn long` is 125 lines"),
            "{}",
            problems[1]
        );
    }

    #[test]
    fn functions_in_test_code_are_not_measured() {
        let src = format!(
            "#[cfg(test)]\nmod tests {{\n{}}}\n",
            function_of("long_test", MAX_FUNCTION_LINES + 10)
        );
        assert!(long_functions(&[source("crates/x/src/a.rs", &src)]).is_empty());
    }
}
