//! The module graph inside each crate: files that import each other in a circle only where
//! a module and its submodules belong together.

use std::collections::{BTreeMap, BTreeSet};

use super::scan::{Source, is_ident};
use super::{Failure, Workspace, report};

/// A module: its path inside its crate (`["turn", "steps"]`; empty for the crate root).
type Module = Vec<String>;

/// **Modules form no circles outside a parent and its children**: within a crate, a set of
/// files that reach each other through their imports has one member that is the ancestor
/// of all the others (`turn` and `turn::steps`, `turn::calls`). A circle between siblings
/// or cousins (`session` ↔ `skills`) means one of them holds what the other needs: move it
/// to a leaf. Read from `crate::`, `super::`, `self::` paths and paths into a child module
/// (`steps::run`), outside comments, literals and test code. The crate root (`lib.rs`,
/// `main.rs`) is its façade and is left out, and a `crate::Name` that it re-exports is not
/// followed to where `Name` is defined: this check sees the paths as written.
pub(super) fn modules_form_no_circles_outside_a_parent_and_its_children(
    ws: &Workspace,
) -> Result<(), Failure> {
    let mut crates: BTreeMap<&str, Vec<(&Source, Module)>> = BTreeMap::new();
    for s in &ws.sources {
        if let Some((krate, module)) = module_of(&s.path) {
            crates.entry(krate).or_default().push((s, module));
        }
    }
    let mut problems = Vec::new();
    for (krate, files) in crates {
        let graph = imports(&files);
        for circle in circles(&graph) {
            if !one_parent(&circle) {
                let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
                problems.push(format!("{krate}: {}", names.join(" ↔ ")));
            }
        }
    }
    report(
        "modules import each other in a circle outside a parent and its children",
        problems,
        Vec::new(),
    )
}

/// `crates/core/src/turn/steps.rs` → (`crates/core`, `turn::steps`); `None` for a crate
/// root or a file outside a crate's `src/`.
fn module_of(path: &str) -> Option<(&str, Module)> {
    let at = path.find("/src/")?;
    let (krate, rest) = (&path[..at], &path[at + "/src/".len()..]);
    let rest = rest.strip_suffix(".rs")?;
    let mut parts: Module = rest.split('/').map(str::to_string).collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.is_empty() || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")) {
        return None;
    }
    Some((krate, parts))
}

/// Each module's imports of the crate's other modules (the root left out).
fn imports(files: &[(&Source, Module)]) -> BTreeMap<Module, BTreeSet<Module>> {
    let known: BTreeSet<&Module> = files.iter().map(|(_, m)| m).collect();
    // The longest known module a path names (`turn::steps::LoopState` → `turn::steps`).
    let resolve = |path: &[String]| -> Option<Module> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| known.contains(p))
    };
    let mut graph = BTreeMap::new();
    for (source, module) in files {
        let mut out = BTreeSet::new();
        for path in paths(&source.code) {
            let (head, tail) = (path[0].as_str(), &path[1..]);
            let mut base: Module = match head {
                "crate" => Vec::new(),
                "self" => module.clone(),
                "super" => module[..module.len() - 1].to_vec(),
                // A path into a child module: `steps::run` inside `turn`.
                child => {
                    let mut c = module.clone();
                    c.push(child.to_string());
                    if !known.contains(&c) {
                        continue;
                    }
                    c
                }
            };
            let mut tail = tail;
            while head == "super" && tail.first().is_some_and(|t| t == "super") {
                base.pop();
                tail = &tail[1..];
            }
            base.extend(tail.iter().cloned());
            if let Some(target) = resolve(&base)
                && &target != module
            {
                out.insert(target);
            }
        }
        graph.insert(module.clone(), out);
    }
    graph
}

/// Every path of two or more segments in `code` (`crate::a::b`, `super::x`, `steps::run`),
/// with `crate::{a, b::c}` groups expanded one level.
fn paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = is_ident(b[i])
            && !b[i].is_ascii_digit()
            && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        let mut j = i;
        loop {
            let from = j;
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            segments.push(code[from..j].to_string());
            if code[j..].starts_with("::") && b.get(j + 2).is_some_and(|c| is_ident(*c)) {
                j += 2;
            } else {
                break;
            }
        }
        if code[j..].starts_with("::{")
            && let Some(close) = code[j..].find('}')
        {
            for item in code[j + 3..j + close].split(',') {
                let item: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                if !item.is_empty() {
                    let mut p = segments.clone();
                    p.extend(item);
                    out.push(p);
                }
            }
        }
        if segments.len() >= 2 {
            out.push(segments);
        }
        i = j.max(i + 1);
    }
    out
}

/// The strongly connected sets of more than one module.
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let reach = |from: &Module| -> BTreeSet<Module> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) {
            continue;
        }
        let circle: Vec<Module> = graph
            .keys()
            .filter(|n| *n == m || (reached[m].contains(*n) && reached[*n].contains(m)))
            .cloned()
            .collect();
        done.extend(circle.iter().cloned());
        if circle.len() > 1 {
            out.push(circle);
        }
    }
    out
}

/// One member is an ancestor of every other: a module and its submodules.
fn one_parent(circle: &[Module]) -> bool {
    circle
        .iter()
        .any(|a| circle.iter().all(|b| b.starts_with(a.as_slice())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tidy::scan::source;

    fn check(files: &[(&str, &str)]) -> Vec<String> {
        let sources: Vec<Source> = files.iter().map(|(p, s)| source(p, s)).collect();
        let files: Vec<(&Source, Module)> = sources
            .iter()
            .filter_map(|s| module_of(&s.path).map(|(_, m)| (s, m)))
            .collect();
        circles(&imports(&files))
            .into_iter()
            .filter(|c| !one_parent(c))
            .map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" "))
            .collect()
    }

    #[test]
    fn siblings_in_a_circle_are_found_and_a_family_is_not() {
        let siblings = [
            ("crates/x/src/a.rs", "use crate::b::B;\npub struct A;"),
            ("crates/x/src/b.rs", "use crate::a::A;\npub struct B;"),
        ];
        assert_eq!(check(&siblings), vec!["a b"]);
        let family = [
            ("crates/x/src/turn/mod.rs", "use steps::run;\npub struct S;"),
            (
                "crates/x/src/turn/steps.rs",
                "use super::S;\npub fn run() {}",
            ),
            ("crates/x/src/turn/calls.rs", "use super::steps::run;"),
        ];
        assert!(check(&family).is_empty());
        // Through a group import, and through `super::super`.
        let grouped = [
            ("crates/x/src/a/inner.rs", "use super::super::b::B;"),
            ("crates/x/src/b.rs", "use crate::{a::inner::I, c};"),
            ("crates/x/src/a/mod.rs", "mod inner;"),
        ];
        assert_eq!(check(&grouped), vec!["a::inner b"]);
    }

    #[test]
    fn comments_and_test_code_are_not_imports() {
        let files = [
            (
                "crates/x/src/a.rs",
                "// crate::b::B\nuse crate::b::B;\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n",
            ),
            (
                "crates/x/src/b.rs",
                "/// [`crate::a::A`]\npub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
            ),
        ];
        assert!(check(&files).is_empty());
    }
}
