//! The scanner the tidy checks stand on: product source files read as text, with comments,
//! the contents of literals and test-only items blanked out, and the few shapes of Rust the
//! checks ask about (bracket spans, `async` bodies, plain functions, calls).

use std::path::{Path, PathBuf};

/// One product source file, as the tidy checks see it.
pub(super) struct Source {
    /// Relative to the workspace root, `/`-separated: `crates/core/src/exec.rs`.
    pub(super) path: String,
    /// The text with comments, the contents of string and char literals, and test-only
    /// items blanked to spaces; byte offsets and line breaks are kept.
    pub(super) code: String,
    /// The string literals outside test code: byte offset and contents as written.
    pub(super) literals: Vec<(usize, String)>,
}

impl Source {
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.code.as_bytes()[..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("read a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

pub(super) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Blanks comments and literal contents (keeping the quotes), and returns the string
/// literals found. Knows Rust's lexical forms: nested block comments, escapes, raw strings
/// with any number of `#`, byte strings, char literals versus lifetimes.
fn mask(src: &str) -> (Vec<u8>, Vec<(usize, String)>) {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut literals = Vec::new();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && is_ident(b[i - 1]);
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|c| *c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' | b'b' if !prev_ident => {
                // r"…", r#"…"#, br"…", b"…", b'…'
                let mut j = i + 1;
                if b[i] == b'b' && b.get(j) == Some(&b'r') {
                    j += 1;
                }
                let raw = b[i] == b'r' || j == i + 2;
                if raw {
                    let hashes = b[j..].iter().take_while(|c| **c == b'#').count();
                    if b.get(j + hashes) == Some(&b'"') {
                        let open = j + hashes + 1;
                        let close_pat: Vec<u8> = std::iter::once(b'"')
                            .chain(std::iter::repeat_n(b'#', hashes))
                            .collect();
                        let close = b[open..]
                            .windows(close_pat.len())
                            .position(|w| w == close_pat.as_slice())
                            .map_or(b.len(), |p| open + p);
                        literals.push((open - 1, src[open..close].to_string()));
                        blank(&mut out, open, close);
                        i = close + close_pat.len();
                        continue;
                    }
                    i += 1;
                } else {
                    // `b"` and `b'` continue as a plain string or char literal.
                    i += 1;
                }
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                literals.push((i, src[i + 1..end].to_string()));
                blank(&mut out, i + 1, end);
                i = end + 1;
            }
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    let mut j = i + 3;
                    while j < b.len() && b[j] != b'\'' {
                        j += 1;
                    }
                    blank(&mut out, i + 1, j);
                    i = j + 1;
                } else {
                    let n = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + n) == Some(&b'\'') {
                        blank(&mut out, i + 1, i + 1 + n);
                        i += n + 2;
                    } else {
                        i += 1; // a lifetime
                    }
                }
            }
            _ => i += 1,
        }
    }
    (out, literals)
}

/// The offset just past the bracket that closes the one at `open` (`(`, `[` or `{`), in
/// masked code.
pub(super) fn matching(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, c) in code.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Blanks every `#[cfg(test)]` item in masked `code` and returns the files of the test
/// modules it declares (`#[cfg(test)] mod x;`, `#[path = "…"]` honoured).
fn blank_test_items(code: &mut [u8], src: &str, file: &Path) -> Vec<PathBuf> {
    const ATTR: &[u8] = b"#[cfg(test)]";
    let mut test_files = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].windows(ATTR.len()).position(|w| w == ATTR) {
        let start = from + p;
        let mut j = start + ATTR.len();
        let mut path_attr = None;
        loop {
            while j < code.len() && code[j].is_ascii_whitespace() {
                j += 1;
            }
            if code[j..].starts_with(b"#[") {
                let end = matching(code, j + 1);
                let attr = &src[j..end];
                if let Some(rest) = attr.strip_prefix("#[path = \"") {
                    path_attr = rest.split('"').next().map(str::to_string);
                }
                j = end;
            } else {
                break;
            }
        }
        // The item runs to its `;` or to the end of its `{ … }` body.
        let mut k = j;
        let end = loop {
            match code.get(k) {
                None => break code.len(),
                Some(b';') => break k + 1,
                Some(b'{') => break matching(code, k),
                Some(b'(' | b'[') => k = matching(code, k),
                Some(_) => k += 1,
            }
        };
        let item = String::from_utf8_lossy(&code[j..end]).to_string();
        let words: Vec<&str> = item.split_whitespace().collect();
        if let Some(pos) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(pos + 1).and_then(|n| n.strip_suffix(';'))
        {
            let parent = file.parent().expect("a file has a folder");
            match path_attr {
                Some(p) => test_files.push(parent.join(p)),
                None => {
                    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                    let dir = if matches!(stem, "lib" | "main" | "mod") {
                        parent.to_path_buf()
                    } else {
                        parent.join(stem)
                    };
                    test_files.push(dir.join(format!("{name}.rs")));
                    test_files.push(dir.join(name));
                }
            }
        }
        for c in &mut code[start..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = end;
    }
    test_files
}

/// A source file as [`product_sources`] reads it, from its text: for the checks' own tests.
#[cfg(test)]
pub(super) fn source(path: &str, src: &str) -> Source {
    let (mut code, literals) = mask(src);
    blank_test_items(&mut code, src, Path::new(path));
    let literals = literals
        .into_iter()
        .filter(|(at, _)| code[*at] == b'"')
        .collect();
    Source {
        path: path.to_string(),
        code: String::from_utf8(code).expect("masking keeps UTF-8"),
        literals,
    }
}

/// Every product source file of the workspace, masked.
pub(super) fn product_sources(root: &Path) -> Vec<Source> {
    sources(root, |krate| krate != TEST_SUPPORT)
}

/// The library sources of `oi-test-support` (the mock model server), masked: test code to
/// the rules about the product, but a library that must stay readable all the same.
pub(super) fn test_support_sources(root: &Path) -> Vec<Source> {
    sources(root, |krate| krate == TEST_SUPPORT)
}

/// The folder of `oi-test-support` under `crates/`.
const TEST_SUPPORT: &str = "test-support";

/// The `src/` files of the crates (by folder name) that `include` picks, masked, without
/// test code.
fn sources(root: &Path, include: impl Fn(&str) -> bool) -> Vec<Source> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        let krate = krate.expect("read crates/").path();
        if !krate
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(&include)
        {
            continue;
        }
        rust_files(&krate.join("src"), &mut files);
    }
    files.sort();
    let mut parsed = Vec::new();
    let mut test_files: Vec<PathBuf> = Vec::new();
    for file in &files {
        let src = std::fs::read_to_string(file).expect("read a source file");
        let (mut code, literals) = mask(&src);
        test_files.extend(blank_test_items(&mut code, &src, file));
        let literals = literals
            .into_iter()
            .filter(|(at, _)| code[*at] == b'"')
            .collect();
        let code = String::from_utf8(code).expect("masking keeps UTF-8");
        parsed.push((file, code, literals));
    }
    parsed
        .into_iter()
        .filter(|(file, _, _)| !test_files.iter().any(|t| file.starts_with(t)))
        .map(|(file, code, literals)| Source {
            path: file
                .strip_prefix(root)
                .expect("inside the workspace")
                .to_string_lossy()
                .replace('\\', "/"),
            code,
            literals,
        })
        .collect()
}

/// Offsets of `pat` in `code`, where it does not continue an identifier.
pub(super) fn find_all(code: &str, pat: &str) -> Vec<usize> {
    let b = code.as_bytes();
    let starts_ident = pat.as_bytes().first().copied().is_some_and(is_ident);
    code.match_indices(pat)
        .map(|(at, _)| at)
        .filter(|at| !(starts_ident && *at > 0 && is_ident(b[at - 1])))
        .collect()
}

/// The bodies of `async fn`s and `async` blocks in `code`.
pub(super) fn async_bodies(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    let mut bodies = Vec::new();
    for at in find_all(code, "async") {
        let mut j = at + "async".len();
        if b.get(j).is_some_and(|c| is_ident(*c)) {
            continue;
        }
        let rest = code[j..].trim_start();
        j = code.len() - rest.len();
        if rest.starts_with("fn")
            && !rest[2..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        {
            // The body is the first `{` outside the signature's parentheses; a `;` first
            // means a declaration without one.
            let mut k = j;
            while let Some(c) = b.get(k) {
                match c {
                    b'(' | b'[' => k = matching(b, k),
                    b';' => break,
                    b'{' => {
                        bodies.push((k, matching(b, k)));
                        break;
                    }
                    _ => k += 1,
                }
            }
        } else {
            let rest = rest.strip_prefix("move").map_or(rest, str::trim_start);
            if rest.starts_with('{') {
                let open = code.len() - rest.len();
                bodies.push((open, matching(b, open)));
            }
        }
    }
    bodies
}

/// The functions in `code` that have a body (`async` or not, free or in an `impl` or trait):
/// name, the offset of its `fn`, and its body's span (from `{` to just past `}`).
pub(super) fn functions(code: &str) -> Vec<(String, usize, usize, usize)> {
    let b = code.as_bytes();
    let mut fns = Vec::new();
    for at in find_all(code, "fn ") {
        let rest = &code[at + 3..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let mut k = at + 3;
        while let Some(c) = b.get(k) {
            match c {
                b'(' | b'[' => k = matching(b, k),
                b';' => break,
                b'{' => {
                    fns.push((name, at, k, matching(b, k)));
                    break;
                }
                _ => k += 1,
            }
        }
    }
    fns
}

/// The plain (not `async`) functions in `code`: name and body.
pub(super) fn sync_fns(code: &str) -> Vec<(String, usize, usize)> {
    functions(code)
        .into_iter()
        .filter(|(_, at, _, _)| !code[..*at].trim_end().ends_with("async"))
        .map(|(name, _, open, close)| (name, open, close))
        .collect()
}

/// Calls of `pat` in `code` that are not its definition (`fn pat`).
pub(super) fn calls_of(code: &str, pat: &str) -> Vec<usize> {
    find_all(code, pat)
        .into_iter()
        .filter(|at| !code[..*at].ends_with("fn "))
        .collect()
}

/// Whether the call starting at `at` is awaited right away (so it is an `async fn`, not a
/// blocking one of the same name).
pub(super) fn awaited(code: &str, at: usize) -> bool {
    let b = code.as_bytes();
    let Some(open) = code[at..].find('(').map(|p| at + p) else {
        return false;
    };
    code[matching(b, open)..].trim_start().starts_with(".await")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lexer and the test-code filter, on small sources: a check whose scanner went blind
    /// would pass on anything.
    #[test]
    fn the_scanner_blanks_comments_literals_and_test_code() {
        // Comments and literal contents are blanked; literals are kept; offsets do not move.
        let src = "let a = \"x.toml\"; // Command::new(\nlet c = '\"'; let r = r#\"a\"b\"#; /* /* */ */ f('a);";
        let (code, literals) = mask(src);
        let code = String::from_utf8(code).unwrap();
        assert_eq!(code.len(), src.len());
        assert!(
            !code.contains("Command::new(") && !code.contains("x.toml"),
            "{code}"
        );
        assert!(code.contains("f('a)"), "a lifetime is code: {code}");
        let texts: Vec<&str> = literals.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["x.toml", "a\"b"]);

        // Test items go, with the files of test modules.
        let src = "fn keep() {}\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = \"t.rs\"]\nmod t;\n#[cfg(test)]\nmod inline { fn gone() { std::fs::read(\"p\"); } }\n";
        let (mut code, _) = mask(src);
        let files = blank_test_items(&mut code, src, Path::new("crates/x/src/a.rs"));
        let code = String::from_utf8(code).unwrap();
        assert!(code.contains("fn keep()") && !code.contains("gone") && !code.contains("std::fs"));
        assert!(
            files.contains(&Path::new("crates/x/src/a/tests.rs").to_path_buf()),
            "{files:?}"
        );
        assert!(
            files.contains(&Path::new("crates/x/src/t.rs").to_path_buf()),
            "{files:?}"
        );
    }
}
