//! Who owns a name: each user file is named by one module, and the PostgreSQL backend of the
//! thread store does not import the local one.

use std::collections::{BTreeMap, BTreeSet};

use super::scan::{Source, find_all, is_ident, matching};
use super::{Failure, Workspace, report};

/// The files (and folders) of the user's home, each with the one module that names it.
/// Everyone else reaches them through that module (a constant or a `…_path` function), so
/// a file's name, location and format change in one place.
const USER_FILES: &[(&str, &str)] = &[
    ("config.toml", "crates/config/src/load.rs"),
    (".credentials.json", "crates/config/src/credentials.rs"),
    (".credentials.locks", "crates/config/src/credentials.rs"),
    (
        "accepted-project-configs.toml",
        "crates/config/src/project_consent.rs",
    ),
    ("history.jsonl", "crates/config/src/history.rs"),
    ("model-windows.json", "crates/core/src/window.rs"),
    ("listen-token", "crates/cli/src/listen_token.rs"),
    ("sessions", "crates/thread-store/src/store.rs"),
    ("state.sqlite", "crates/thread-store/src/store.rs"),
    ("session_index.jsonl", "crates/thread-store/src/store.rs"),
];

/// Folders of the user's home whose names are common words (`git log`): a naming is a
/// `.join("<name>")` of the literal.
const USER_FOLDERS: &[(&str, &str)] = &[
    ("log", "crates/config/src/owner_only.rs"),
    ("cache", "crates/mcp-client/src/cache.rs"),
];

/// **Each user file is named by one module**: the string literal of its name (exactly,
/// e.g. `"config.toml"`) appears in product code in its owner's file and nowhere else; for
/// the folders of [`USER_FOLDERS`], a `.join("<name>")` of it. Limits: a name inside a longer literal (a message, a format string like
/// `"{dir}/config.toml"`) is not a naming and is not seen; a name built from parts is not
/// seen either.
pub(super) fn each_user_file_is_named_by_one_module(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    for (name, owner) in USER_FILES.iter().chain(USER_FOLDERS) {
        let folder = USER_FOLDERS.iter().any(|(n, _)| n == name);
        let naming: Vec<(&Source, usize)> = sources
            .iter()
            .flat_map(|s| {
                s.literals
                    .iter()
                    .filter(|(_, text)| text == name)
                    .filter(move |(at, _)| !folder || s.code[..*at].ends_with(".join("))
                    .map(move |(at, _)| (s, *at))
            })
            .collect();
        if !naming.iter().any(|(s, _)| s.path == *owner) {
            problems.push(format!(
                "`{name}` is not named by its owner {owner} any more: update USER_FILES"
            ));
        }
        for (s, at) in naming.iter().filter(|(s, _)| s.path != *owner) {
            problems.push(format!(
                "{}:{}: names the user file `{name}`, which {owner} owns: use its constant \
                 or path function",
                s.path,
                s.line_of(*at)
            ));
        }
    }
    report("user files named twice", problems, Vec::new())
}

/// The local backend's modules in `oi-thread-store`: rollout files, the SQLite index,
/// the file scan, the names log, owner-only modes, the local store itself.
const LOCAL_BACKEND: &[&str] = &["store", "rollout", "index", "scan", "sidecar", "private"];

/// The modules of `oi-thread-store` that a module's code reaches by `crate::<module>` (in
/// paths and in `use crate::{…}` groups).
fn crate_modules_used(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let b = code.as_bytes();
    let mut used = BTreeSet::new();
    for at in find_all(code, "crate::") {
        let rest = &code[at + "crate::".len()..];
        let names: Vec<&str> = if rest.starts_with('{') {
            let open = at + "crate::".len();
            code[open + 1..matching(b, open) - 1]
                .split(|c: char| !is_ident(c as u8) && c != ':')
                .filter_map(|p| p.split("::").next())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        used.extend(
            names
                .into_iter()
                .filter(|n| modules.contains(*n))
                .map(str::to_string),
        );
    }
    used
}

/// **The PostgreSQL backend does not import the local backend**: no module reachable from
/// `thread-store/src/postgres/` through `crate::…` paths is one of [`LOCAL_BACKEND`]; what
/// both backends need lives in neutral modules (`record`, `paging`, `outline`, `loaded`,
/// `types`, `error`). Limits: an item re-exported at the crate root (`crate::Item`) is
/// not traced to its module.
pub(super) fn the_postgres_backend_does_not_import_the_local_one(
    ws: &Workspace,
) -> Result<(), Failure> {
    let sources = &ws.sources;
    let prefix = "crates/thread-store/src/";
    let module_of = |path: &str| -> String {
        let rel = &path[prefix.len()..];
        rel.split('/')
            .next()
            .unwrap_or(rel)
            .trim_end_matches(".rs")
            .to_string()
    };
    let store_files: Vec<&Source> = sources
        .iter()
        .filter(|s| s.path.starts_with(prefix))
        .collect();
    let modules: BTreeSet<String> = store_files.iter().map(|s| module_of(&s.path)).collect();
    if !(LOCAL_BACKEND.iter().all(|m| modules.contains(*m)) && modules.contains("postgres")) {
        let problem =
            format!("oi-thread-store's modules changed ({modules:?}): update LOCAL_BACKEND");
        return report("the thread store's modules", vec![problem], Vec::new());
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &store_files {
        edges
            .entry(module_of(&s.path))
            .or_default()
            .extend(crate_modules_used(&s.code, &modules));
    }
    // Walk from `postgres`, remembering how each module was reached.
    let mut via: BTreeMap<String, String> = BTreeMap::new();
    let mut todo = vec!["postgres".to_string()];
    while let Some(m) = todo.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if next != "postgres" && !via.contains_key(next) {
                via.insert(next.clone(), m.clone());
                todo.push(next.clone());
            }
        }
    }
    let mut problems = Vec::new();
    for local in LOCAL_BACKEND {
        if via.contains_key(*local) {
            let mut chain = vec![local.to_string()];
            while let Some(prev) = via.get(chain.last().expect("non-empty")) {
                chain.push(prev.clone());
            }
            chain.reverse();
            problems.push(format!(
                "the PostgreSQL backend reaches the local backend's `{local}`: {}; move what \
                 both need to a neutral module",
                chain.join(" -> ")
            ));
        }
    }
    report(
        "PostgreSQL backend importing the local one",
        problems,
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Module references, in paths and in `use` groups.
    #[test]
    fn crate_module_references_are_seen_in_paths_and_groups() {
        let modules: BTreeSet<String> = ["store", "record", "types"].map(String::from).into();
        let used = crate_modules_used(
            "use crate::{record::x, types::{A, B}};\nlet s = crate::store::open();",
            &modules,
        );
        assert_eq!(used, modules);
    }
}
